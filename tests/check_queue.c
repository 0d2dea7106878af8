/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * check_queue.c -- the job queue (core/queue.c) against a real PostgreSQL.
 *
 * Run by queue.test, which starts a throwaway server (pg-harness.sh) and
 * passes its connection string in CUPACE_TEST_PG; without it the suite
 * skips (77).  Each test works on a table of its own, created by
 * cupace_queue_init, and reads the tables back with plain SQL to check what
 * the queue wrote.
 */
#include "config.h"

#include <check.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "queue.h"
#include "testutil.h"

static const char *url;
static pthread_barrier_t start_line;

static void sleep_ms(unsigned ms)
{
    struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

    nanosleep(&ts, NULL);
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct cupace_queue_settings settings(const char *table, unsigned lease_ms,
                                             unsigned max_attempts)
{
    struct cupace_queue_settings s = { (char *)url, (char *)table,
                                       (uint64_t)lease_ms * 1000000ULL, 1000000000ULL,
                                       max_attempts };
    return s;
}

static struct cupace_queue *open_q(const char *table, unsigned lease_ms, unsigned max_attempts,
                                   const char *owner)
{
    struct cupace_queue_settings s = settings(table, lease_ms, max_attempts);
    struct cupace_err err;
    struct cupace_queue *q = cupace_queue_open(&s, owner, &err);

    ck_assert_msg(q != NULL, "%s", err.msg);
    ck_assert_msg(cupace_queue_connected(q), "not connected to %s", url);
    return q;
}

/* A fresh queue TABLE holding COUNT jobs of PARTS partitions; the handle is A's. */
static struct cupace_queue *fresh(const char *table, unsigned lease_ms, unsigned max_attempts,
                                  uint64_t count, uint32_t parts)
{
    struct cupace_queue *q = open_q(table, lease_ms, max_attempts, "A");
    struct cupace_err err;
    int64_t first;

    ck_assert_msg(cupace_queue_init(q, &err) == CUPACE_QUEUE_OK, "%s", err.msg);
    if (count)
        ck_assert_msg(cupace_queue_submit(q, count, parts, 1024, 0, "p", &first, &err) ==
                      CUPACE_QUEUE_OK, "%s", err.msg);
    return q;
}

/* The one integer SQL returns, read on a connection of our own. */
static long long sql_int(const char *sql)
{
    PGconn *c = PQconnectdb(url);
    PGresult *r;
    long long v;

    ck_assert_msg(PQstatus(c) == CONNECTION_OK, "%s", PQerrorMessage(c));
    r = PQexec(c, sql);
    ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK, "%s: %s", sql, PQresultErrorMessage(r));
    v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    PQfinish(c);
    return v;
}

static struct cupace_queue_counts counts(struct cupace_queue *q)
{
    struct cupace_queue_counts c;
    struct cupace_err err;

    ck_assert_msg(cupace_queue_counts(q, &c, &err) == CUPACE_QUEUE_OK, "%s", err.msg);
    return c;
}

static void claim(struct cupace_queue *q, size_t jobs, uint64_t parts, int exceed,
                  struct cupace_queue_batch *b)
{
    struct cupace_err err;

    ck_assert_msg(cupace_queue_claim(q, jobs, parts, exceed, b, &err) == CUPACE_QUEUE_OK, "%s",
                  err.msg);
}

START_TEST(init_is_idempotent_and_submit_counts)
{
    struct cupace_queue *q = fresh("t_init", 30000, 3, 7, 4);
    struct cupace_queue_counts c;
    struct cupace_err err;
    int64_t first = 0;

    ck_assert_msg(cupace_queue_init(q, &err) == CUPACE_QUEUE_OK, "%s", err.msg);
    ck_assert_msg(cupace_queue_submit(q, 3, 2, 5, 1, NULL, &first, &err) == CUPACE_QUEUE_OK, "%s",
                  err.msg);
    ck_assert_int_eq(first, 8);
    c = counts(q);
    ck_assert_uint_eq(c.queued, 10);
    ck_assert_uint_eq(c.claimed + c.expired + c.done + c.failed, 0);
    ck_assert_int_eq(sql_int("SELECT sum(partitions) FROM t_init"), 7 * 4 + 3 * 2);
    ck_assert_int_eq(sql_int("SELECT max_attempts FROM t_init WHERE id = 1"), 3);
    cupace_queue_close(q);
}
END_TEST

START_TEST(claims_stay_within_the_credit)
{
    struct cupace_queue *q = fresh("t_credit", 30000, 3, 0, 0);
    struct cupace_queue_batch b;
    struct cupace_err err;

    /* jobs of 3, 3, 5 and 2 partitions, in that order */
    ck_assert_int_eq(cupace_queue_submit(q, 2, 3, 0, 0, NULL, NULL, &err), CUPACE_QUEUE_OK);
    ck_assert_int_eq(cupace_queue_submit(q, 1, 5, 0, 0, NULL, NULL, &err), CUPACE_QUEUE_OK);
    ck_assert_int_eq(cupace_queue_submit(q, 1, 2, 0, 0, NULL, NULL, &err), CUPACE_QUEUE_OK);
    claim(q, 10, 7, 0, &b);                 /* 3 + 3 fit, 5 would not */
    ck_assert_uint_eq(b.n, 2);
    ck_assert_int_eq(b.jobs[0].id, 1);
    ck_assert_int_eq(b.jobs[1].id, 2);
    ck_assert_int_eq(b.jobs[0].attempts, 1);
    ck_assert_int_eq(b.jobs[0].partitions, 3);
    cupace_queue_batch_free(&b);
    claim(q, 10, 4, 0, &b);                 /* the 5 does not fit and is not skipped */
    ck_assert_uint_eq(b.n, 0);
    claim(q, 10, 4, 1, &b);                 /* a node holding nothing takes it anyway */
    ck_assert_uint_eq(b.n, 1);
    ck_assert_int_eq(b.jobs[0].partitions, 5);
    cupace_queue_batch_free(&b);
    claim(q, 10, 0, 0, &b);                 /* no credit, no claim */
    ck_assert_uint_eq(b.n, 0);
    claim(q, 1, 100, 0, &b);                /* the job limit */
    ck_assert_uint_eq(b.n, 1);
    cupace_queue_batch_free(&b);
    ck_assert_uint_eq(counts(q).claimed, 4);
    ck_assert_uint_eq(counts(q).queued, 0);
    cupace_queue_close(q);
}
END_TEST

START_TEST(priority_first_then_oldest)
{
    struct cupace_queue *q = fresh("t_prio", 30000, 3, 3, 1);
    struct cupace_queue_batch b;
    struct cupace_err err;

    ck_assert_int_eq(cupace_queue_submit(q, 1, 1, 0, 5, "urgent", NULL, &err), CUPACE_QUEUE_OK);
    claim(q, 2, 10, 0, &b);
    ck_assert_uint_eq(b.n, 2);
    ck_assert_int_eq(b.jobs[1].id, 4);      /* in id order within the batch */
    ck_assert_str_eq(b.jobs[1].payload, "urgent");
    ck_assert_int_eq(b.jobs[0].id, 1);
    ck_assert_str_eq(b.jobs[0].payload, "p");
    cupace_queue_batch_free(&b);
    cupace_queue_close(q);
}
END_TEST

/* ---- concurrent claimers ------------------------------------------------ */

#define NCLAIMERS 4
#define NJOBS 240

struct claimer {
    char owner[8];
    int64_t got[NJOBS];
    size_t ngot;
    int errors;
    struct cupace_err last;
};

static void *claimer_main(void *arg)
{
    struct claimer *c = arg;
    struct cupace_queue_settings s = settings("t_race", 60000, 3);
    struct cupace_err err;
    struct cupace_queue *q = cupace_queue_open(&s, c->owner, &err);

    if (!q) {
        c->errors++;
        c->last = err;
    }
    /* all connected before any claims, so that the claims do race */
    pthread_barrier_wait(&start_line);
    if (!q)
        return NULL;
    for (;;) {
        struct cupace_queue_batch b;

        if (cupace_queue_claim(q, 3, 3, 0, &b, &err) != CUPACE_QUEUE_OK) {
            c->errors++;
            c->last = err;
            break;
        }
        if (b.n == 0)
            break;
        for (size_t i = 0; i < b.n; i++) {
            if (c->ngot < NJOBS)
                c->got[c->ngot++] = b.jobs[i].id;
            if (cupace_queue_complete(q, b.jobs[i].id, b.jobs[i].attempts, c->owner, &err) !=
                CUPACE_QUEUE_OK) {
                c->errors++;
                c->last = err;
            }
        }
        cupace_queue_batch_free(&b);
    }
    cupace_queue_close(q);
    return NULL;
}

START_TEST(concurrent_claimers_never_share_a_job)
{
    struct cupace_queue *q = fresh("t_race", 60000, 3, NJOBS, 1);
    static struct claimer c[NCLAIMERS];
    pthread_t t[NCLAIMERS];
    int seen[NJOBS + 1] = { 0 };
    size_t total = 0, busy = 0;

    ck_assert_int_eq(pthread_barrier_init(&start_line, NULL, NCLAIMERS), 0);
    for (int i = 0; i < NCLAIMERS; i++) {
        memset(&c[i], 0, sizeof c[i]);
        snprintf(c[i].owner, sizeof c[i].owner, "n%d", i);
        ck_assert_int_eq(pthread_create(&t[i], NULL, claimer_main, &c[i]), 0);
    }
    for (int i = 0; i < NCLAIMERS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start_line);
    for (int i = 0; i < NCLAIMERS; i++) {
        ck_assert_msg(c[i].errors == 0, "%s: %s", c[i].owner, c[i].last.msg);
        for (size_t k = 0; k < c[i].ngot; k++) {
            ck_assert(c[i].got[k] >= 1 && c[i].got[k] <= NJOBS);
            ck_assert_msg(seen[c[i].got[k]]++ == 0, "job %" PRId64 " claimed twice",
                          c[i].got[k]);
        }
        total += c[i].ngot;
        busy += c[i].ngot > 0;
    }
    ck_assert_uint_eq(total, NJOBS);
    ck_assert_msg(busy >= 2, "only %zu claimer got work", busy);
    ck_assert_int_eq(sql_int("SELECT count(*) FROM t_race_done WHERE state = 'done'"), NJOBS);
    ck_assert_int_eq(sql_int("SELECT count(*) FROM t_race"), 0);
    /* each recorded by the node that claimed it, on its first attempt */
    ck_assert_int_eq(sql_int("SELECT count(*) FROM t_race_done WHERE result = owner AND attempts = 1"),
                     NJOBS);
    cupace_queue_close(q);
}
END_TEST

/* ---- leases ------------------------------------------------------------ */

START_TEST(a_lapsed_lease_is_claimed_again_and_the_old_holder_cannot_complete)
{
    struct cupace_queue *a = fresh("t_lease", 300, 3, 1, 2);
    struct cupace_queue *b = open_q("t_lease", 300, 3, "B");
    struct cupace_queue_batch ja, jb;
    struct cupace_err err;
    uint64_t held = 9;

    claim(a, 5, 10, 0, &ja);
    ck_assert_uint_eq(ja.n, 1);
    claim(b, 5, 10, 0, &jb);
    ck_assert_uint_eq(jb.n, 0);             /* A's lease is live */
    ck_assert_uint_eq(counts(a).claimed, 1);
    sleep_ms(450);
    ck_assert_uint_eq(counts(a).expired, 1);
    claim(b, 5, 10, 0, &jb);
    ck_assert_uint_eq(jb.n, 1);
    ck_assert_int_eq(jb.jobs[0].id, ja.jobs[0].id);
    ck_assert_int_eq(jb.jobs[0].attempts, 2);
    ck_assert_int_eq(cupace_queue_complete(a, ja.jobs[0].id, ja.jobs[0].attempts, "A", &err),
                     CUPACE_QUEUE_LEASE_LOST);
    ck_assert_msg(strstr(err.msg, "lease was lost"), "%s", err.msg);
    ck_assert_int_eq(cupace_queue_fail(a, ja.jobs[0].id, ja.jobs[0].attempts, "x", &err),
                     CUPACE_QUEUE_LEASE_LOST);
    ck_assert_int_eq(cupace_queue_heartbeat(a, &held, &err), CUPACE_QUEUE_OK);
    ck_assert_uint_eq(held, 0);
    ck_assert_int_eq(cupace_queue_complete(b, jb.jobs[0].id, jb.jobs[0].attempts, "B", &err),
                     CUPACE_QUEUE_OK);
    ck_assert_int_eq(sql_int("SELECT count(*) FROM t_lease_done WHERE result = 'B' AND owner = 'B'"), 1);
    ck_assert_int_eq(sql_int("SELECT count(*) FROM t_lease_done"), 1);
    cupace_queue_batch_free(&ja);
    cupace_queue_batch_free(&jb);
    cupace_queue_close(a);
    cupace_queue_close(b);
}
END_TEST

START_TEST(a_heartbeat_keeps_the_lease)
{
    struct cupace_queue *a = fresh("t_beat", 600, 3, 2, 1);
    struct cupace_queue *b = open_q("t_beat", 600, 3, "B");
    struct cupace_queue_batch ja, jb;
    struct cupace_err err;
    uint64_t held = 0;

    claim(a, 5, 10, 0, &ja);
    ck_assert_uint_eq(ja.n, 2);
    for (int i = 0; i < 6; i++) {
        sleep_ms(150);
        ck_assert_int_eq(cupace_queue_heartbeat(a, &held, &err), CUPACE_QUEUE_OK);
        ck_assert_uint_eq(held, 2);
    }
    claim(b, 5, 10, 0, &jb);
    ck_assert_uint_eq(jb.n, 0);
    ck_assert_uint_eq(counts(a).claimed, 2);
    cupace_queue_batch_free(&ja);
    cupace_queue_close(a);
    cupace_queue_close(b);
}
END_TEST

/* A connection dropped between a commit and its reply makes the node try
 * again: the second completion must succeed and record nothing twice. */
START_TEST(completing_twice_records_once)
{
    struct cupace_queue *q = fresh("t_twice", 30000, 3, 1, 1);
    struct cupace_queue_batch b;
    struct cupace_err err;

    claim(q, 1, 1, 0, &b);
    ck_assert_uint_eq(b.n, 1);
    ck_assert_int_eq(cupace_queue_complete(q, b.jobs[0].id, 1, "r1", &err), CUPACE_QUEUE_OK);
    ck_assert_int_eq(cupace_queue_complete(q, b.jobs[0].id, 1, "r2", &err), CUPACE_QUEUE_OK);
    ck_assert_int_eq(cupace_queue_complete(q, b.jobs[0].id, 2, "r3", &err),
                     CUPACE_QUEUE_LEASE_LOST);
    ck_assert_int_eq(sql_int("SELECT count(*) FROM t_twice_done"), 1);
    ck_assert_int_eq(sql_int("SELECT count(*) FROM t_twice_done WHERE result = 'r1'"), 1);
    ck_assert_uint_eq(counts(q).done, 1);
    cupace_queue_batch_free(&b);
    cupace_queue_close(q);
}
END_TEST

/* ---- failures and retries ------------------------------------------------ */

START_TEST(failures_are_retried_until_max_attempts)
{
    struct cupace_queue *q = fresh("t_retry", 30000, 2, 1, 1);
    struct cupace_queue_batch b;
    struct cupace_queue_counts c;
    struct cupace_err err;

    claim(q, 1, 1, 0, &b);
    ck_assert_int_eq(b.jobs[0].attempts, 1);
    ck_assert_int_eq(cupace_queue_fail(q, b.jobs[0].id, 1, "boom 1", &err), CUPACE_QUEUE_RETRY);
    cupace_queue_batch_free(&b);
    ck_assert_uint_eq(counts(q).queued, 1);
    ck_assert_int_eq(sql_int("SELECT count(*) FROM t_retry WHERE last_error = 'boom 1'"), 1);
    claim(q, 1, 1, 0, &b);
    ck_assert_uint_eq(b.n, 1);
    ck_assert_int_eq(b.jobs[0].attempts, 2);
    ck_assert_int_eq(cupace_queue_fail(q, b.jobs[0].id, 2, "boom 2", &err), CUPACE_QUEUE_OK);
    ck_assert_int_eq(cupace_queue_fail(q, b.jobs[0].id, 2, "boom 2", &err), CUPACE_QUEUE_OK);
    cupace_queue_batch_free(&b);
    c = counts(q);
    ck_assert_uint_eq(c.failed, 1);
    ck_assert_uint_eq(c.queued + c.claimed + c.expired + c.done, 0);
    ck_assert_int_eq(sql_int("SELECT count(*) FROM t_retry_done WHERE state = 'failed' "
                             "AND error = 'boom 2' AND attempts = 2"), 1);
    claim(q, 1, 1, 0, &b);
    ck_assert_uint_eq(b.n, 0);
    cupace_queue_close(q);
}
END_TEST

START_TEST(a_lease_lapsing_on_the_last_attempt_ends_failed)
{
    struct cupace_queue *a = fresh("t_reap", 200, 1, 2, 1);
    struct cupace_queue *b = open_q("t_reap", 200, 1, "B");
    struct cupace_queue_batch ja, jb;
    struct cupace_queue_counts c;

    claim(a, 1, 1, 0, &ja);
    ck_assert_uint_eq(ja.n, 1);
    sleep_ms(350);
    claim(b, 5, 5, 0, &jb);                 /* takes the other job, ends the lapsed one */
    ck_assert_uint_eq(jb.n, 1);
    ck_assert_int_ne(jb.jobs[0].id, ja.jobs[0].id);
    c = counts(a);
    ck_assert_uint_eq(c.failed, 1);
    ck_assert_uint_eq(c.claimed, 1);
    ck_assert_uint_eq(c.expired + c.queued, 0);
    ck_assert_int_eq(sql_int("SELECT count(*) FROM t_reap_done WHERE error LIKE 'the lease lapsed%'"), 1);
    cupace_queue_batch_free(&ja);
    cupace_queue_batch_free(&jb);
    cupace_queue_close(a);
    cupace_queue_close(b);
}
END_TEST

START_TEST(giving_back_does_not_count_the_attempt)
{
    struct cupace_queue *q = fresh("t_back", 30000, 3, 3, 1);
    struct cupace_queue *b = open_q("t_back", 30000, 3, "B");
    struct cupace_queue_batch jq, jb;
    struct cupace_err err;
    uint64_t n = 0;

    claim(q, 2, 5, 0, &jq);
    claim(b, 1, 5, 0, &jb);
    ck_assert_int_eq(cupace_queue_give_back(q, &n, &err), CUPACE_QUEUE_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(counts(q).queued, 2);
    ck_assert_uint_eq(counts(q).claimed, 1);   /* B's */
    ck_assert_int_eq(sql_int("SELECT max(attempts) FROM t_back WHERE state = 'queued'"), 0);
    cupace_queue_batch_free(&jq);
    cupace_queue_batch_free(&jb);
    cupace_queue_close(q);
    cupace_queue_close(b);
}
END_TEST

/* ---- waking and losing the database --------------------------------------- */

static void *submit_later(void *arg)
{
    struct cupace_queue *q = arg;
    struct cupace_err err;

    sleep_ms(150);
    cupace_queue_submit(q, 1, 1, 0, 0, NULL, NULL, &err);
    return NULL;
}

START_TEST(notify_wakes_a_waiting_node)
{
    struct cupace_queue *a = fresh("t_wake", 30000, 3, 0, 0);
    struct cupace_queue *b = open_q("t_wake", 30000, 3, "B");
    struct cupace_err err;
    pthread_t t;
    double t0;
    int fds[2];

    t0 = now_s();
    ck_assert_int_eq(cupace_queue_wait(a, 100000000ULL, -1, &err), 0);   /* nothing: times out */
    ck_assert(now_s() - t0 >= 0.09);
    ck_assert_int_eq(pthread_create(&t, NULL, submit_later, b), 0);
    t0 = now_s();
    ck_assert_int_eq(cupace_queue_wait(a, 5000000000ULL, -1, &err), 1);
    ck_assert_msg(now_s() - t0 < 2.0, "woken after %.3fs", now_s() - t0);
    pthread_join(t, NULL);
    ck_assert_int_eq(pipe(fds), 0);
    ck_assert_int_eq(write(fds[1], "x", 1), 1);
    ck_assert_int_eq(cupace_queue_wait(a, 5000000000ULL, fds[0], &err), 2);
    close(fds[0]);
    close(fds[1]);
    cupace_queue_close(a);
    cupace_queue_close(b);
}
END_TEST

START_TEST(an_unreachable_database_is_down_and_backs_off)
{
    struct cupace_queue_settings s = settings("t_down", 1000, 3);
    struct cupace_queue_batch b;
    struct cupace_err err;
    struct cupace_queue *q;
    char bad[512];

    snprintf(bad, sizeof bad, "%s port=1", url);    /* no server listens there */
    s.url = bad;
    q = cupace_queue_open(&s, "A", &err);
    ck_assert_ptr_nonnull(q);
    ck_assert(!cupace_queue_connected(q));
    ck_assert_int_eq(cupace_queue_claim(q, 1, 1, 0, &b, &err), CUPACE_QUEUE_DOWN);
    ck_assert_msg(strstr(err.msg, "next attempt in"), "%s", err.msg);
    ck_assert_int_eq(cupace_queue_heartbeat(q, NULL, &err), CUPACE_QUEUE_DOWN);
    cupace_queue_close(q);
}
END_TEST

START_TEST(a_missing_table_says_init)
{
    struct cupace_queue *q = open_q("t_never", 1000, 3, "A");
    struct cupace_queue_batch b;
    struct cupace_err err;

    ck_assert_int_eq(cupace_queue_claim(q, 1, 1, 0, &b, &err), CUPACE_QUEUE_ERROR);
    ck_assert_msg(strstr(err.msg, "cupace queue init"), "%s", err.msg);
    ck_assert(cupace_queue_connected(q));
    cupace_queue_close(q);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("queue");
    TCase *claims = tcase_create("claims"), *leases = tcase_create("leases");
    TCase *ends = tcase_create("ends"), *conn = tcase_create("connection");

    url = getenv("CUPACE_TEST_PG");
    if (!url || !*url) {
        fputs("check_queue: CUPACE_TEST_PG is not set (run queue.test): skipped\n", stderr);
        return 77;
    }
    tcase_add_test(claims, init_is_idempotent_and_submit_counts);
    tcase_add_test(claims, claims_stay_within_the_credit);
    tcase_add_test(claims, priority_first_then_oldest);
    tcase_add_test(claims, concurrent_claimers_never_share_a_job);
    tcase_add_test(leases, a_lapsed_lease_is_claimed_again_and_the_old_holder_cannot_complete);
    tcase_add_test(leases, a_heartbeat_keeps_the_lease);
    tcase_add_test(ends, completing_twice_records_once);
    tcase_add_test(ends, failures_are_retried_until_max_attempts);
    tcase_add_test(ends, a_lease_lapsing_on_the_last_attempt_ends_failed);
    tcase_add_test(ends, giving_back_does_not_count_the_attempt);
    tcase_add_test(conn, notify_wakes_a_waiting_node);
    tcase_add_test(conn, an_unreachable_database_is_down_and_backs_off);
    tcase_add_test(conn, a_missing_table_says_init);
    suite_add_tcase(s, claims);
    suite_add_tcase(s, leases);
    suite_add_tcase(s, ends);
    suite_add_tcase(s, conn);
    return tu_run(s);
}
