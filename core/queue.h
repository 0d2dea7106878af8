/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * queue.h -- the job queue in PostgreSQL (DESIGN §10): a libpq client.
 *
 * A node claims jobs, holds them under a lease that a heartbeat extends, and
 * ends each one by writing its result (or its failure) in the transaction
 * that ends the lease.  The schema is conf/queue.sql, built into the program
 * as cupace_queue_sql; its comments say what each column means.
 *
 * Every statement runs on its own and commits at once: no transaction, row
 * lock or advisory lock is held while a job runs, so a connection lost in
 * the middle of a job loses nothing but the connection.  A lease is named by
 * (owner, attempts): a node whose lease lapsed and was taken by another node,
 * or by itself in a later claim, can no longer end that claim.
 *
 * This is not the daemon: nothing here sleeps (except cupace_queue_wait, for
 * as long as it is told), prints, or looks at signals.  A lost connection is
 * closed and tried again on the next call, no sooner than a backoff that
 * doubles from 100 ms to 10 s; the calls in between fail at once with
 * CUPACE_QUEUE_DOWN.  A handle is used by one thread at a time.
 */
#ifndef CUPACE_QUEUE_H
#define CUPACE_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "error.h"

/* What a call returns (negative: the job or the call did not go through). */
enum cupace_queue_rc {
    CUPACE_QUEUE_OK = 0,
    CUPACE_QUEUE_RETRY = 1,          /* fail: the job went back to the queue for another attempt */
    CUPACE_QUEUE_ERROR = -1,         /* the database refused the statement; err says why */
    CUPACE_QUEUE_DOWN = -2,          /* no connection now; err says why; try again later */
    CUPACE_QUEUE_LEASE_LOST = -3,    /* the lease is no longer ours: nothing was written */
};

/* One claimed job.  `payload` is owned by the batch it came in. */
struct cupace_queue_job {
    int64_t id;
    int32_t attempts;                /* this claim's number: with the owner, the lease's name */
    int32_t partitions;
    uint64_t partition_bytes;
    const char *payload;
};

struct cupace_queue_batch {
    struct cupace_queue_job *jobs;
    size_t n;
    char *text;                      /* the payloads, back to back */
};

/* Counts by state for `cupace queue status`. */
struct cupace_queue_counts {
    uint64_t queued;                 /* waiting for a claim */
    uint64_t claimed;                /* held under a live lease */
    uint64_t expired;                /* held under a lapsed lease: claimable again */
    uint64_t done;
    uint64_t failed;
};

struct cupace_queue;

/* The schema, conf/queue.sql as built in (generated: queue_sql.c). */
extern const char cupace_queue_sql[];

/* Checks, without connecting, that libpq can use URL ([queue] url): its
 * syntax and option names, and the values libpq would refuse only once it
 * connects (port, sslmode, gssencmode), which no retry could cure.  Empty
 * and a bare database name pass.  0, or -1 with the reason in err. */
int cupace_queue_check_url(const char *url, struct cupace_err *err);

/* A handle on the queue of QC ([queue]: url, table, lease, max_attempts for
 * submit; poll is the caller's) for node OWNER (a name unique to this process, e.g. host:pid;
 * NULL: one is made up).  Connects at once; a failure to connect is not an
 * error here (the first call reports it), so that a node can start while
 * the database is down.  NULL (with err) only for a bad conf (a url
 * cupace_queue_check_url refuses, say) or no memory. */
struct cupace_queue *cupace_queue_open(const struct cupace_queue_settings *qc, const char *owner,
                                       struct cupace_err *err);
void cupace_queue_close(struct cupace_queue *q);
const char *cupace_queue_owner(const struct cupace_queue *q);
int cupace_queue_connected(const struct cupace_queue *q);

/* Connects now if not connected (the backoff still applies): OK or DOWN. */
int cupace_queue_connect(struct cupace_queue *q, struct cupace_err *err);

/* Creates the schema (cupace_queue_sql with the table's name); idempotent. */
int cupace_queue_init(struct cupace_queue *q, struct cupace_err *err);

/* Adds COUNT jobs of PARTITIONS partitions of BYTES each, with PAYLOAD
 * (NULL: ""), in one transaction; *first_id (may be NULL) is the first id. */
int cupace_queue_submit(struct cupace_queue *q, uint64_t count, uint32_t partitions,
                        uint64_t bytes, int32_t priority, const char *payload, int64_t *first_id,
                        struct cupace_err *err);

/* Claims the oldest claimable jobs (highest priority first): waiting ones
 * and those whose lease lapsed with attempts to spare, at most MAX_JOBS of
 * them and no more than MAX_PARTITIONS partitions in all, except that when
 * FIRST_MAY_EXCEED is set the first job is taken whatever its size (so that
 * a job larger than any credit still runs on a node that holds nothing).
 * The claim commits before this returns.  Jobs whose lease lapsed with no
 * attempts left end failed in the same statement.  On success *out holds
 * the jobs (possibly none); free it with cupace_queue_batch_free. */
int cupace_queue_claim(struct cupace_queue *q, size_t max_jobs, uint64_t max_partitions,
                       int first_may_exceed, struct cupace_queue_batch *out,
                       struct cupace_err *err);
void cupace_queue_batch_free(struct cupace_queue_batch *b);

/* Extends the lease of every job this owner holds to now + lease; *held (may
 * be NULL) is how many that is.  A job missing from it was lost. */
int cupace_queue_heartbeat(struct cupace_queue *q, uint64_t *held, struct cupace_err *err);

/* Ends the claim (ID, ATTEMPTS): the job moves to the results as done with
 * RESULT (NULL allowed), in one transaction, only if the lease is still
 * ours: LEASE_LOST otherwise.  Ending a claim that this owner already ended
 * (a retry after the connection dropped before the reply) is OK, and
 * writes nothing twice.  A lapsed lease that nobody took since is still
 * ours: the row lock orders this against any claim. */
int cupace_queue_complete(struct cupace_queue *q, int64_t id, int32_t attempts, const char *result,
                          struct cupace_err *err);

/* The claim (ID, ATTEMPTS) failed with ERROR: RETRY if the job went back to
 * the queue, OK if that was its last attempt and it ended failed in the
 * results, LEASE_LOST if the lease was no longer ours. */
int cupace_queue_fail(struct cupace_queue *q, int64_t id, int32_t attempts, const char *error,
                      struct cupace_err *err);

/* Puts back every job this owner holds, without counting the attempt (a
 * cancel is not the job's fault); *n (may be NULL) is how many. */
int cupace_queue_give_back(struct cupace_queue *q, uint64_t *n, struct cupace_err *err);
/* The same for job ID of attempt ATTEMPTS alone (it never ran: the engine
 * stopped first); *n is 0 where it is not ours (given back already, or
 * its lease lapsed). */
int cupace_queue_give_back_job(struct cupace_queue *q, int64_t id, int32_t attempts,
                               uint64_t *n, struct cupace_err *err);

/* Waits up to TIMEOUT_NS for new work to be announced (LISTEN/NOTIFY), or for
 * EXTRA_FD (-1: none) to become readable: 1 announced, 2 extra_fd readable,
 * 0 timed out, DOWN if the connection was lost (after waiting out the
 * timeout when there was none to begin with, so that a caller's loop does
 * not spin).  Announcements are hints: a caller claims after any return. */
int cupace_queue_wait(struct cupace_queue *q, uint64_t timeout_ns, int extra_fd,
                      struct cupace_err *err);

int cupace_queue_counts(struct cupace_queue *q, struct cupace_queue_counts *c,
                        struct cupace_err *err);

#endif
