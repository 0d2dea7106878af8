/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * serve.c -- a node's side of the job queue: claims paced by the engine's
 * credit, heartbeats, results written back (serve.h).
 *
 * One loop thread owns the queue handle; the engine's threads only append
 * outcomes to the outbox and poke a pipe, under the mutex.  The loop's turn:
 * write the outbox; on a cancel give back what is held; return once stopped
 * and nothing is held or waiting; beat if a third of the lease has passed;
 * claim within the credit; sleep on the queue's notifications, the pipe and
 * the poll interval.  A claim that took jobs is followed at once by another
 * turn, so that a node drawing a large credit takes it in one go of rounds.
 *
 * Outcomes wait in the outbox while the database is down and are written,
 * in order, once it is back; the leases they end may have lapsed meanwhile:
 * then the write is refused (lease lost) and the job's other run, elsewhere,
 * records it.
 */
#include "config.h"
#include "serve.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "grow.h"

struct outcome {
    int64_t id;
    int32_t attempts;
    int ok;
    char *text;
};

struct cupace_serve {
    struct cupace_queue *q;
    struct cupace_serve_engine eng;
    uint64_t lease_ns, poll_ns;
    int wake[2];                     /* a byte in wake[1] ends the loop's sleep */

    pthread_mutex_t lock;            /* guards what follows */
    struct outcome *outbox;
    size_t nout, capout;
    enum cupace_serve_stop how;
    int stopping;
    struct cupace_serve_stats st;
    struct cupace_err last;          /* the last database error */
};

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void poke(struct cupace_serve *s)
{
    ssize_t r = write(s->wake[1], "", 1);

    (void)r;                         /* a full pipe has a wake-up pending already */
}

static void unpoke(struct cupace_serve *s)
{
    char buf[64];

    while (read(s->wake[0], buf, sizeof buf) > 0)
        ;
}

struct cupace_serve *cupace_serve_create(const struct cupace_queue_settings *qs,
                                         const char *owner, const struct cupace_serve_engine *eng,
                                         struct cupace_err *err)
{
    struct cupace_serve *s = calloc(1, sizeof *s);

    if (!s) {
        cupace_err_set(err, "out of memory");
        return NULL;
    }
    s->wake[0] = s->wake[1] = -1;
    if (pipe(s->wake) < 0 || fcntl(s->wake[0], F_SETFL, O_NONBLOCK) < 0 ||
        fcntl(s->wake[1], F_SETFL, O_NONBLOCK) < 0) {
        cupace_err_set(err, "serve: a wake-up pipe: %s", strerror(errno));
        cupace_serve_destroy(s);
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    s->eng = *eng;
    s->lease_ns = qs->lease_ns;
    s->poll_ns = qs->poll_ns;
    s->q = cupace_queue_open(qs, owner, err);
    if (!s->q) {
        cupace_serve_destroy(s);
        return NULL;
    }
    return s;
}

void cupace_serve_destroy(struct cupace_serve *s)
{
    if (!s)
        return;
    cupace_queue_close(s->q);
    for (size_t i = 0; i < s->nout; i++)
        free(s->outbox[i].text);
    free(s->outbox);
    if (s->wake[0] >= 0) {
        close(s->wake[0]);
        close(s->wake[1]);
        pthread_mutex_destroy(&s->lock);
    }
    free(s);
}

void cupace_serve_finished(struct cupace_serve *s, int64_t id, int32_t attempts,
                           uint32_t partitions, int ok, const char *text)
{
    struct outcome o = { id, attempts, ok, text ? strdup(text) : NULL };

    pthread_mutex_lock(&s->lock);
    if (s->nout == s->capout) {
        struct outcome *more = cupace_grow(s->outbox, &s->capout, sizeof *s->outbox, 64);

        if (more)
            s->outbox = more;
    }
    if (s->nout < s->capout)
        s->outbox[s->nout++] = o;
    else
        free(o.text);                /* no memory: the lease lapses, the job runs again */
    s->st.held--;
    s->st.held_partitions -= partitions;
    s->st.outbox = s->nout;
    pthread_mutex_unlock(&s->lock);
    poke(s);
}

void cupace_serve_stop(struct cupace_serve *s, enum cupace_serve_stop how)
{
    pthread_mutex_lock(&s->lock);
    if (!s->stopping || how == CUPACE_SERVE_CANCEL)
        s->how = how;
    s->stopping = 1;
    pthread_mutex_unlock(&s->lock);
    poke(s);
}

void cupace_serve_stats(struct cupace_serve *s, struct cupace_serve_stats *out)
{
    pthread_mutex_lock(&s->lock);
    *out = s->st;
    pthread_mutex_unlock(&s->lock);
}

void cupace_serve_last_error(struct cupace_serve *s, struct cupace_err *err)
{
    pthread_mutex_lock(&s->lock);
    *err = s->last;
    pthread_mutex_unlock(&s->lock);
}

/* The counters as Prometheus metrics: one table gives names, kinds and help. */
void cupace_serve_metrics(struct cupace_serve *s, FILE *out)
{
#define M(f, kind, name, help) { offsetof(struct cupace_serve_stats, f), kind, name, help }
    static const struct {
        size_t off;
        const char *kind, *name, *help;
    } m[] = {
        M(claim_rounds, "counter", "claim_rounds_total", "Claims that took at least one job."),
        M(jobs_claimed, "counter", "jobs_claimed_total", "Jobs claimed."),
        M(partitions_claimed, "counter", "partitions_claimed_total", "Partitions of the jobs claimed."),
        M(completed, "counter", "jobs_completed_total", "Results written as done."),
        M(failed, "counter", "jobs_failed_total", "Jobs that ended failed on their last attempt."),
        M(retried, "counter", "jobs_retried_total", "Failed jobs put back for another attempt."),
        M(leases_lost, "counter", "leases_lost_total", "Outcomes refused: the lease was lost."),
        M(given_back, "counter", "jobs_given_back_total",
          "Jobs given back unrun: on a cancel, or where the engine stopped first."),
        M(db_errors, "counter", "db_errors_total", "Database calls that failed."),
        M(held, "gauge", "jobs_held", "Jobs started and not yet ended."),
        M(held_partitions, "gauge", "partitions_held", "Partitions of the jobs held."),
        M(max_held_partitions, "gauge", "partitions_held_max", "The most partitions held at once."),
        M(outbox, "gauge", "outcomes_unwritten", "Outcomes waiting for the database."),
        M(connected, "gauge", "connected", "1 while the database connection is up."),
    };
#undef M
    struct cupace_serve_stats st;

    cupace_serve_stats(s, &st);
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        uint64_t v;

        memcpy(&v, (const char *)&st + m[i].off, sizeof v);
        fprintf(out, "# HELP cupace_queue_%s %s\n# TYPE cupace_queue_%s %s\ncupace_queue_%s %" PRIu64
                "\n", m[i].name, m[i].help, m[i].name, m[i].kind, m[i].name, v);
    }
}

/* Counts a failed call and keeps its message. */
static void db_error(struct cupace_serve *s, const struct cupace_err *err)
{
    pthread_mutex_lock(&s->lock);
    s->st.db_errors++;
    s->st.answering = 0;
    s->last = *err;
    pthread_mutex_unlock(&s->lock);
}

/* A queue statement went through: the database answers. */
static void db_answered(struct cupace_serve *s)
{
    pthread_mutex_lock(&s->lock);
    s->st.answering = 1;
    pthread_mutex_unlock(&s->lock);
}

/* ---- the loop's steps -------------------------------------------------- */

/* Writes the outbox in order; stops at the first call that does not go
 * through (the rest waits for the next turn).  0 when it is empty. */
static int write_outbox(struct cupace_serve *s)
{
    for (;;) {
        struct outcome o;
        struct cupace_err err;
        uint64_t back = 0;
        int rc;

        pthread_mutex_lock(&s->lock);
        if (s->nout == 0) {
            pthread_mutex_unlock(&s->lock);
            return 0;
        }
        o = s->outbox[0];
        pthread_mutex_unlock(&s->lock);
        rc = o.ok == CUPACE_SERVE_NOT_RUN
                 ? cupace_queue_give_back_job(s->q, o.id, o.attempts, &back, &err)
             : o.ok ? cupace_queue_complete(s->q, o.id, o.attempts, o.text, &err)
                    : cupace_queue_fail(s->q, o.id, o.attempts, o.text, &err);
        if (rc == CUPACE_QUEUE_DOWN || rc == CUPACE_QUEUE_ERROR) {
            db_error(s, &err);
            return -1;
        }
        pthread_mutex_lock(&s->lock);
        s->st.answering = 1;
        if (o.ok == CUPACE_SERVE_NOT_RUN)
            s->st.given_back += back;   /* 0: given back with all held already */
        else if (rc == CUPACE_QUEUE_LEASE_LOST)
            s->st.leases_lost++;
        else if (rc == CUPACE_QUEUE_RETRY)
            s->st.retried++;
        else if (o.ok)
            s->st.completed++;
        else
            s->st.failed++;
        memmove(s->outbox, s->outbox + 1, (s->nout - 1) * sizeof *s->outbox);
        s->nout--;
        s->st.outbox = s->nout;
        pthread_mutex_unlock(&s->lock);
        free(o.text);
    }
}

/* Claims within the engine's credit and starts what came: the number of jobs. */
static size_t claim_round(struct cupace_serve *s)
{
    struct cupace_queue_batch b;
    struct cupace_err err;
    int idle = 0;
    uint64_t credit = s->eng.credit(s->eng.ctx, &idle);
    size_t max_jobs = credit > 1024 ? 1024 : (size_t)credit;
    int rc;

    /* no credit, no claim, even when nothing is held undispatched: the
     * controller may be holding back because memory is full of work already
     * dispatched; with some credit, an idle node takes a first job larger
     * than it, or such a job would wait for ever */
    if (max_jobs == 0)
        return 0;
    rc = cupace_queue_claim(s->q, max_jobs, credit, idle, &b, &err);
    if (rc != CUPACE_QUEUE_OK) {
        db_error(s, &err);
        return 0;
    }
    pthread_mutex_lock(&s->lock);
    s->st.answering = 1;
    s->st.claim_rounds += b.n > 0;
    s->st.jobs_claimed += b.n;
    for (size_t i = 0; i < b.n; i++) {
        s->st.partitions_claimed += (uint64_t)b.jobs[i].partitions;
        s->st.held++;
        s->st.held_partitions += (uint64_t)b.jobs[i].partitions;
    }
    if (s->st.held_partitions > s->st.max_held_partitions)
        s->st.max_held_partitions = s->st.held_partitions;
    pthread_mutex_unlock(&s->lock);
    for (size_t i = 0; i < b.n; i++) {
        char why[1024] = "";

        if (s->eng.start(s->eng.ctx, &b.jobs[i], why, sizeof why) < 0)
            cupace_serve_finished(s, b.jobs[i].id, b.jobs[i].attempts,
                                  (uint32_t)b.jobs[i].partitions, 0,
                                  why[0] ? why : "the engine refused the job");
    }
    cupace_queue_batch_free(&b);
    return b.n;
}

int cupace_serve_run(struct cupace_serve *s, struct cupace_err *err)
{
    uint64_t next_beat = now_ns() + s->lease_ns / 3;

    for (;;) {
        struct cupace_err e;
        uint64_t now, wait, held, nout;
        enum cupace_serve_stop how;
        int stopping, outbox_left, rc;

        outbox_left = write_outbox(s);
        pthread_mutex_lock(&s->lock);
        stopping = s->stopping;
        how = s->how;
        held = s->st.held;
        nout = s->nout;
        pthread_mutex_unlock(&s->lock);
        if (stopping && how == CUPACE_SERVE_CANCEL) {
            uint64_t n = 0;

            /* one try: if the database is down the leases lapse instead */
            if (cupace_queue_give_back(s->q, &n, &e) != CUPACE_QUEUE_OK)
                db_error(s, &e);
            pthread_mutex_lock(&s->lock);
            s->st.given_back += n;
            pthread_mutex_unlock(&s->lock);
            return 0;
        }
        if (stopping && held == 0 && nout == 0)
            return 0;
        now = now_ns();
        if (now >= next_beat) {
            /* outcomes not yet written still need their leases */
            if (held > 0 || nout > 0) {
                if (cupace_queue_heartbeat(s->q, NULL, &e) != CUPACE_QUEUE_OK)
                    db_error(s, &e);
                else
                    db_answered(s);
            }
            next_beat = now + s->lease_ns / 3;
        }
        if (!stopping && claim_round(s) > 0)
            continue;
        now = now_ns();
        wait = next_beat > now ? next_beat - now : 0;
        if (wait > s->poll_ns)
            wait = s->poll_ns;
        if (outbox_left && wait > 100000000ULL)
            wait = 100000000ULL;     /* the connection's backoff paces the retries */
        rc = cupace_queue_wait(s->q, wait, s->wake[0], &e);
        if (rc == CUPACE_QUEUE_ERROR)
            return cupace_err_set(err, "%s", e.msg);
        if (rc == CUPACE_QUEUE_DOWN)
            db_error(s, &e);
        unpoke(s);
        pthread_mutex_lock(&s->lock);
        s->st.connected = (uint64_t)cupace_queue_connected(s->q);
        pthread_mutex_unlock(&s->lock);
    }
}
