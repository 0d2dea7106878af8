/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * serve.h -- a node's side of the job queue (DESIGN §10): when to claim and
 * how much, when to beat, and writing results back, whatever the engine.
 *
 * The loop (cupace_serve_run) runs in one thread: it claims jobs only as far
 * as the engine grants credit, hands each to the engine, extends the leases
 * of what it holds every third of a lease, and writes back each outcome the
 * engine reports (cupace_serve_finished, from any thread).  An outcome is
 * kept until the database has it: a lost connection delays results, it does
 * not lose them, and the engine keeps running what it holds.  When idle it
 * sleeps until new work is announced (LISTEN/NOTIFY), an outcome arrives, or
 * [queue] poll passes.
 *
 * Stopping (cupace_serve_stop, from any thread, e.g. the command's signal
 * thread): DRAIN claims nothing more and returns once every held job has
 * ended and its outcome is written; CANCEL writes what has ended, gives the
 * rest back to the queue (their attempt not counted) and returns.  Telling
 * the engine to cancel its work is the caller's part.
 *
 * This is not the daemon: it prints nothing, handles no signal, and knows of
 * the engine only the two calls of struct cupace_serve_engine.
 */
#ifndef CUPACE_SERVE_H
#define CUPACE_SERVE_H

#include <stdint.h>
#include <stdio.h>

#include "conf.h"
#include "error.h"
#include "queue.h"

struct cupace_serve_engine {
    void *ctx;
    /* Required.  The partitions the node may claim now: what its controller
     * will dispatch before the next claim round, less what it already holds
     * undispatched.  *idle is set when it holds nothing undispatched: then
     * a first job larger than a credit above 0 is still taken.  Loop thread. */
    uint64_t (*credit)(void *ctx, int *idle);
    /* Required.  Takes a claimed job (the payload is only valid during the
     * call): 0, or -1 if it cannot, with why in WHY (LEN bytes), and the
     * job is failed back at once with that reason.  The engine later
     * reports the job's end with cupace_serve_finished.  Loop thread. */
    int (*start)(void *ctx, const struct cupace_queue_job *job, char *why, size_t len);
};

enum cupace_serve_stop { CUPACE_SERVE_DRAIN, CUPACE_SERVE_CANCEL };

/* What the loop did, for metrics.  Counters only grow. */
struct cupace_serve_stats {
    uint64_t claim_rounds;           /* claims that took at least one job */
    uint64_t jobs_claimed;
    uint64_t partitions_claimed;
    uint64_t completed;              /* results written as done */
    uint64_t failed;                 /* jobs that ended failed (last attempt) */
    uint64_t retried;                /* failures put back for another attempt */
    uint64_t leases_lost;            /* outcomes refused: the lease was someone else's */
    uint64_t given_back;
    uint64_t db_errors;              /* calls that found the database down or refusing */
    uint64_t held;                   /* jobs started and not yet ended, now */
    uint64_t held_partitions;        /* their partitions, now */
    uint64_t max_held_partitions;
    uint64_t outbox;                 /* outcomes waiting to be written, now */
    uint64_t connected;              /* 1 while the database connection is up */
    uint64_t answering;              /* 1 once a claim, heartbeat or result went through since
                                        the last failed call (a connection may be up while
                                        every statement fails: a table nobody made) */
};

struct cupace_serve;

/* A node on the queue of QS, as OWNER (NULL: host:pid:start).  NULL with
 * err on a bad configuration or no memory; the database need not be up. */
struct cupace_serve *cupace_serve_create(const struct cupace_queue_settings *qs,
                                         const char *owner, const struct cupace_serve_engine *eng,
                                         struct cupace_err *err);
void cupace_serve_destroy(struct cupace_serve *s);

/* The loop, until a stop is done: 0 after a drain or a cancel, -1 with err
 * if it cannot go on (no memory, a wake-up pipe failing). */
int cupace_serve_run(struct cupace_serve *s, struct cupace_err *err);

/* OK for a job that never ran through no fault of its own (the engine
 * stopped first): it goes back to the queue, its attempt unspent. */
#define CUPACE_SERVE_NOT_RUN (-1)

/* From any thread: job (ID, ATTEMPTS) ended, OK (1), failed (0) or not run
 * (CUPACE_SERVE_NOT_RUN), with TEXT (the result, or why it failed; may be
 * NULL), copied. */
void cupace_serve_finished(struct cupace_serve *s, int64_t id, int32_t attempts,
                           uint32_t partitions, int ok, const char *text);

/* From any thread: stop by draining, or (also after a drain began) cancel. */
void cupace_serve_stop(struct cupace_serve *s, enum cupace_serve_stop how);

/* From any thread: a copy of the counters. */
void cupace_serve_stats(struct cupace_serve *s, struct cupace_serve_stats *out);

/* From any thread: the counters in the Prometheus text format, named
 * cupace_queue_*, for a metrics endpoint (metrics_http.h). */
void cupace_serve_metrics(struct cupace_serve *s, FILE *out);

/* The last database error the loop met ("" if none), copied into err. */
void cupace_serve_last_error(struct cupace_serve *s, struct cupace_err *err);

#endif
