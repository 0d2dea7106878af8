/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * check_serve.c -- nodes on one queue (core/serve.c) against a real
 * PostgreSQL, each with a stand-in engine: CAPACITY worker threads that each
 * take a started job, sleep WORK_MS and report it done, and that grant as
 * credit the partitions they could start now.  Run by queue.test, which
 * starts the server (CUPACE_TEST_PG) and says how to restart it
 * (CUPACE_TEST_PG_RESTART); without them the suite skips (77).
 *
 * A node killed with SIGKILL is a forked process: its connection drops and
 * its leases stay behind, as when a real node dies.
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pthread.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "metrics_http.h"
#include "serve.h"
#include "testutil.h"

static const char *url;

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

/* The one integer that SQL returns, with every @T in it replaced by TABLE,
 * read on a connection of our own. */
static long long sql_int(const char *sql, const char *table)
{
    char text[512], *o = text;
    PGconn *c = PQconnectdb(url);
    PGresult *r;
    long long v;

    for (const char *p = sql; *p && o < text + sizeof text - 64; p++) {
        if (p[0] == '@' && p[1] == 'T') {
            o += snprintf(o, 60, "%s", table);
            p++;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
    ck_assert_msg(PQstatus(c) == CONNECTION_OK, "%s", PQerrorMessage(c));
    r = PQexec(c, text);
    ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK, "%s: %s", text, PQresultErrorMessage(r));
    v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    PQfinish(c);
    return v;
}

static struct cupace_queue_settings settings(const char *table, unsigned lease_ms, unsigned poll_ms)
{
    struct cupace_queue_settings s = { (char *)url, (char *)table, (uint64_t)lease_ms * 1000000ULL,
                                       (uint64_t)poll_ms * 1000000ULL, 3 };
    return s;
}

static void fresh(const char *table, uint64_t jobs, uint32_t parts)
{
    struct cupace_queue_settings s = settings(table, 1000, 100);
    struct cupace_err err;
    struct cupace_queue *q = cupace_queue_open(&s, "setup", &err);

    ck_assert_msg(q != NULL, "%s", err.msg);
    ck_assert_msg(cupace_queue_init(q, &err) == CUPACE_QUEUE_OK, "%s", err.msg);
    ck_assert_msg(cupace_queue_submit(q, jobs, parts, 0, 0, NULL, NULL, &err) == CUPACE_QUEUE_OK,
                  "%s", err.msg);
    cupace_queue_close(q);
}

/* ---- the stand-in engine ------------------------------------------------ */

#define MAXW 8

struct fake {
    pthread_mutex_t m;
    pthread_cond_t c;
    struct cupace_queue_job waiting[256];
    size_t nwaiting;
    uint64_t capacity, held, max_held;    /* partitions */
    uint64_t started;
    unsigned work_ms;
    int frozen, quit;
    pthread_t workers[MAXW];
    unsigned nworkers;
    struct cupace_serve *s;
    const char *owner;
    pthread_t loop;
    int loop_rc;
};

static uint64_t fake_credit(void *ctx, int *idle)
{
    struct fake *f = ctx;
    uint64_t c;

    pthread_mutex_lock(&f->m);
    c = f->capacity > f->held ? f->capacity - f->held : 0;
    *idle = f->held == 0;
    pthread_mutex_unlock(&f->m);
    return c;
}

static int fake_start(void *ctx, const struct cupace_queue_job *job, char *why, size_t len)
{
    struct fake *f = ctx;

    (void)why, (void)len;
    pthread_mutex_lock(&f->m);
    ck_assert(f->nwaiting < 256);
    f->waiting[f->nwaiting] = *job;
    f->waiting[f->nwaiting++].payload = NULL;
    f->held += (uint64_t)job->partitions;
    if (f->held > f->max_held)
        f->max_held = f->held;
    f->started++;
    pthread_cond_signal(&f->c);
    pthread_mutex_unlock(&f->m);
    return 0;
}

static void *fake_worker(void *arg)
{
    struct fake *f = arg;

    pthread_mutex_lock(&f->m);
    for (;;) {
        struct cupace_queue_job j;

        while (!f->quit && (f->frozen || f->nwaiting == 0))
            pthread_cond_wait(&f->c, &f->m);
        if (f->quit)
            break;
        j = f->waiting[0];
        memmove(f->waiting, f->waiting + 1, --f->nwaiting * sizeof *f->waiting);
        pthread_mutex_unlock(&f->m);
        sleep_ms(f->work_ms);
        cupace_serve_finished(f->s, j.id, j.attempts, (uint32_t)j.partitions, 1, f->owner);
        pthread_mutex_lock(&f->m);
        f->held -= (uint64_t)j.partitions;
    }
    pthread_mutex_unlock(&f->m);
    return NULL;
}

static void *loop_main(void *arg)
{
    struct fake *f = arg;
    struct cupace_err err;

    f->loop_rc = cupace_serve_run(f->s, &err);
    return NULL;
}

/* A node OWNER on TABLE whose engine runs CAPACITY partitions at a time. */
static void node_start(struct fake *f, const char *table, const char *owner, uint64_t capacity,
                       unsigned work_ms, unsigned lease_ms, int frozen)
{
    struct cupace_queue_settings qs = settings(table, lease_ms, 100);
    struct cupace_serve_engine eng;
    struct cupace_err err;

    memset(f, 0, sizeof *f);
    eng.ctx = f;
    eng.credit = fake_credit;
    eng.start = fake_start;
    pthread_mutex_init(&f->m, NULL);
    pthread_cond_init(&f->c, NULL);
    f->capacity = capacity;
    f->work_ms = work_ms;
    f->owner = owner;
    f->frozen = frozen;                /* its workers never take a job */
    f->s = cupace_serve_create(&qs, owner, &eng, &err);
    ck_assert_msg(f->s != NULL, "%s", err.msg);
    f->nworkers = capacity < MAXW ? (unsigned)capacity : MAXW;
    for (unsigned i = 0; i < f->nworkers; i++)
        ck_assert_int_eq(pthread_create(&f->workers[i], NULL, fake_worker, f), 0);
    ck_assert_int_eq(pthread_create(&f->loop, NULL, loop_main, f), 0);
}

/* After its loop returned: stops the engine's threads, frees the node. */
static void node_end(struct fake *f)
{
    pthread_mutex_lock(&f->m);
    f->quit = 1;
    pthread_cond_broadcast(&f->c);
    pthread_mutex_unlock(&f->m);
    for (unsigned i = 0; i < f->nworkers; i++)
        pthread_join(f->workers[i], NULL);
    cupace_serve_destroy(f->s);
}

/* Stops the node HOW and waits for its loop.  Its stats are final only
 * then: a result is written to the database before it is counted. */
static void node_halt(struct fake *f, enum cupace_serve_stop how)
{
    cupace_serve_stop(f->s, how);
    pthread_join(f->loop, NULL);
    ck_assert_int_eq(f->loop_rc, 0);
}

/* Stops the node HOW and waits for its loop, then ends it. */
static void node_stop(struct fake *f, enum cupace_serve_stop how)
{
    node_halt(f, how);
    node_end(f);
}

static int wait_for(const char *sql, const char *table, long long want, double timeout_s)
{
    double end = now_s() + timeout_s;

    while (sql_int(sql, table) != want) {
        if (now_s() > end)
            return 0;
        sleep_ms(20);
    }
    return 1;
}

static void assert_recorded_once(const char *table, long long jobs)
{
    ck_assert_int_eq(sql_int("SELECT count(*) FROM @T_done WHERE state = 'done'", table), jobs);
    ck_assert_int_eq(sql_int("SELECT count(DISTINCT id) FROM @T_done", table), jobs);
    ck_assert_int_eq(sql_int("SELECT count(*) FROM @T", table), 0);
}

/* ---- the tests ---------------------------------------------------------- */

#define LEASE_MS 1000
#define POLL_MS 100

START_TEST(three_nodes_one_killed_every_job_recorded_once)
{
    const char *t = "s_kill";
    struct fake a, b;
    pid_t dead;
    double killed, reclaimed;
    long long held_by_dead;
    int status;

    fresh(t, 150, 1);
    dead = fork();
    ck_assert_int_ge(dead, 0);
    if (dead == 0) {
        /* the node that dies: it claims, then its engine never finishes */
        struct fake c;

        node_start(&c, t, "dead", 4, 0, LEASE_MS, 1);
        for (;;)
            pause();
    }
    ck_assert_msg(wait_for("SELECT count(*) FROM @T WHERE owner = 'dead'", t, 4, 10),
                  "the doomed node never claimed its 4");
    node_start(&a, t, "a", 3, 5, LEASE_MS, 0);
    node_start(&b, t, "b", 3, 5, LEASE_MS, 0);
    sleep_ms(100);
    held_by_dead = sql_int("SELECT count(*) FROM @T WHERE owner = 'dead'", t);
    ck_assert_int_eq(held_by_dead, 4);
    kill(dead, SIGKILL);
    waitpid(dead, &status, 0);
    killed = now_s();
    ck_assert_msg(wait_for("SELECT count(*) FROM @T WHERE owner = 'dead'", t, 0, 10),
                  "the dead node's leases were never taken");
    reclaimed = now_s() - killed;
    ck_assert_msg(wait_for("SELECT count(*) FROM @T_done", t, 150, 30), "not all jobs ended");
    node_stop(&a, CUPACE_SERVE_DRAIN);
    node_stop(&b, CUPACE_SERVE_DRAIN);
    assert_recorded_once(t, 150);
    /* what the dead node held ran again elsewhere: at least once, recorded once */
    ck_assert_int_eq(sql_int("SELECT count(*) FROM @T_done WHERE attempts = 2 AND owner <> 'dead' "
                             "AND result = owner", t), 4);
    ck_assert_int_eq(sql_int("SELECT count(*) FROM @T_done WHERE owner = 'dead'", t), 0);
    /* within a lease and a poll, with room for a loaded machine */
    ck_assert_msg(reclaimed < (LEASE_MS + POLL_MS) / 1e3 + 0.5,
                  "leases reclaimed %.3fs after the kill", reclaimed);
    fprintf(stderr, "check_serve: the dead node's leases were reclaimed %.3fs after SIGKILL "
                    "(lease %.1fs, poll %.1fs)\n", reclaimed, LEASE_MS / 1e3, POLL_MS / 1e3);
}
END_TEST

START_TEST(claims_follow_capacity_and_never_exceed_it)
{
    const char *t = "s_back";
    struct fake big, small;
    struct cupace_serve_stats sb, ss;

    fresh(t, 120, 1);
    node_start(&big, t, "big", 4, 20, 30000, 0);
    node_start(&small, t, "small", 2, 20, 30000, 0);
    ck_assert_msg(wait_for("SELECT count(*) FROM @T_done", t, 120, 30), "not all jobs ended");
    node_halt(&big, CUPACE_SERVE_DRAIN);
    node_halt(&small, CUPACE_SERVE_DRAIN);
    cupace_serve_stats(big.s, &sb);
    cupace_serve_stats(small.s, &ss);
    node_end(&big);
    node_end(&small);
    assert_recorded_once(t, 120);
    ck_assert_uint_le(big.max_held, 4);
    ck_assert_uint_le(small.max_held, 2);
    ck_assert_uint_le(sb.max_held_partitions, 4);
    ck_assert_uint_le(ss.max_held_partitions, 2);
    ck_assert_uint_eq(sb.completed + ss.completed, 120);
    /* twice the capacity, about twice the jobs */
    ck_assert_msg(sb.completed > ss.completed * 13 / 10, "big took %llu, small %llu",
                  (unsigned long long)sb.completed, (unsigned long long)ss.completed);
}
END_TEST

START_TEST(drain_finishes_what_is_held_and_claims_no_more)
{
    const char *t = "s_drain";
    struct fake f;
    struct cupace_serve_stats st;

    fresh(t, 40, 1);
    node_start(&f, t, "n", 4, 150, 30000, 0);
    ck_assert(wait_for("SELECT count(*) FROM @T WHERE owner = 'n'", t, 4, 10));
    node_halt(&f, CUPACE_SERVE_DRAIN);
    cupace_serve_stats(f.s, &st);
    ck_assert_uint_eq(st.held, 0);
    ck_assert_uint_eq(st.outbox, 0);
    ck_assert_uint_eq(st.completed, f.started);
    ck_assert_int_eq(sql_int("SELECT count(*) FROM @T_done", t), (long long)f.started);
    ck_assert_int_eq(sql_int("SELECT count(*) FROM @T WHERE state = 'queued'", t),
                     40 - (long long)f.started);
    node_end(&f);
}
END_TEST

START_TEST(cancel_gives_back_what_is_held)
{
    const char *t = "s_cancel";
    struct fake f;
    struct cupace_serve_stats st;

    fresh(t, 10, 1);
    node_start(&f, t, "n", 3, 0, 30000, 1);
    ck_assert(wait_for("SELECT count(*) FROM @T WHERE owner = 'n'", t, 3, 10));
    cupace_serve_stop(f.s, CUPACE_SERVE_DRAIN);
    node_halt(&f, CUPACE_SERVE_CANCEL);                 /* the second signal */
    cupace_serve_stats(f.s, &st);
    ck_assert_uint_eq(st.given_back, 3);
    ck_assert_int_eq(sql_int("SELECT count(*) FROM @T WHERE state = 'queued' AND attempts = 0", t), 10);
    node_end(&f);
}
END_TEST

START_TEST(a_database_restart_mid_run_loses_nothing)
{
    const char *t = "s_restart";
    const char *restart = getenv("CUPACE_TEST_PG_RESTART");
    struct fake a, b;
    struct cupace_serve_stats sa, sb;

    if (!restart)
        return;
    fresh(t, 200, 1);
    node_start(&a, t, "a", 3, 10, 10000, 0);
    node_start(&b, t, "b", 3, 10, 10000, 0);
    ck_assert(wait_for("SELECT (count(*) >= 40)::int FROM @T_done", t, 1, 30));
    ck_assert_int_eq(system(restart), 0);
    ck_assert_msg(wait_for("SELECT count(*) FROM @T_done", t, 200, 60), "not all jobs ended");
    node_halt(&a, CUPACE_SERVE_DRAIN);
    node_halt(&b, CUPACE_SERVE_DRAIN);
    cupace_serve_stats(a.s, &sa);
    cupace_serve_stats(b.s, &sb);
    node_end(&a);
    node_end(&b);
    assert_recorded_once(t, 200);
    ck_assert_msg(sa.db_errors + sb.db_errors > 0, "the restart went unnoticed");
    ck_assert_uint_eq(sa.completed + sb.completed + sa.leases_lost + sb.leases_lost, 200);
}
END_TEST

/* GET PATH from 127.0.0.1:PORT over HTTP/1.0: the whole answer, malloc'd. */
static char *http_get(unsigned port, const char *path)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    char req[256], *buf = malloc(65536);
    size_t n = 0;
    ssize_t r;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    ck_assert(fd >= 0 && buf);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n", path);
    ck_assert_int_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
    while ((r = read(fd, buf + n, 65535 - n)) > 0)
        n += (size_t)r;
    buf[n] = '\0';
    close(fd);
    return buf;
}

static void render(void *ctx, FILE *out)
{
    cupace_serve_metrics(ctx, out);
}

START_TEST(metrics_parse_as_prometheus_text)
{
    const char *t = "s_metrics";
    struct fake f;
    struct cupace_metrics_http *h;
    struct cupace_err err;
    regex_t help, type, sample;
    char *answer, *body, *line, *save = NULL;
    int samples = 0, completed = -1;

    fresh(t, 10, 1);
    node_start(&f, t, "n", 2, 1, 30000, 0);
    ck_assert(wait_for("SELECT count(*) FROM @T_done", t, 10, 20));
    /* a result is written to the database before the node counts it (a
     * loaded CI run read 9 of 10 here): wait for the count too */
    for (int i = 0; i < 500; i++) {
        struct cupace_serve_stats st;

        cupace_serve_stats(f.s, &st);
        if (st.completed >= 10)
            break;
        sleep_ms(10);
    }
    h = cupace_metrics_http_start("127.0.0.1:0", render, f.s, &err);
    ck_assert_msg(h != NULL, "%s", err.msg);
    ck_assert_uint_gt(cupace_metrics_http_port(h), 0);
    answer = http_get(cupace_metrics_http_port(h), "/metrics");
    ck_assert_msg(strncmp(answer, "HTTP/1.0 200", 12) == 0 || strncmp(answer, "HTTP/1.1 200", 12) == 0,
                  "%.80s", answer);
    ck_assert_msg(strstr(answer, "text/plain; version=0.0.4"), "%s", answer);
    body = strstr(answer, "\r\n\r\n");
    ck_assert_ptr_nonnull(body);
    /* the text format: HELP and TYPE comments, then samples "name value" */
    ck_assert_int_eq(regcomp(&help, "^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .+$", REG_EXTENDED | REG_NOSUB), 0);
    ck_assert_int_eq(regcomp(&type, "^# TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge)$",
                             REG_EXTENDED | REG_NOSUB), 0);
    ck_assert_int_eq(regcomp(&sample, "^[a-zA-Z_:][a-zA-Z0-9_:]* [0-9]+$", REG_EXTENDED | REG_NOSUB), 0);
    for (line = strtok_r(body + 4, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        int ok = regexec(line[0] == '#' ? (line[2] == 'H' ? &help : &type) : &sample, line, 0,
                         NULL, 0) == 0;

        ck_assert_msg(ok, "not Prometheus text: '%s'", line);
        samples += line[0] != '#';
        if (strncmp(line, "cupace_queue_jobs_completed_total ", 34) == 0)
            completed = atoi(line + 34);
    }
    ck_assert_int_ge(samples, 10);
    ck_assert_int_eq(completed, 10);
    free(answer);
    answer = http_get(cupace_metrics_http_port(h), "/other");
    ck_assert_msg(strstr(answer, " 404 "), "%.80s", answer);
    free(answer);
    regfree(&help);
    regfree(&type);
    regfree(&sample);
    cupace_metrics_http_stop(h);
    node_stop(&f, CUPACE_SERVE_DRAIN);
    ck_assert_ptr_null(cupace_metrics_http_start("localhost:99999", render, NULL, &err));
    ck_assert_msg(strstr(err.msg, "HOST:PORT"), "%s", err.msg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve");
    TCase *tc = tcase_create("nodes");

    url = getenv("CUPACE_TEST_PG");
    if (!url || !*url) {
        fputs("check_serve: CUPACE_TEST_PG is not set (run queue.test): skipped\n", stderr);
        return 77;
    }
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, three_nodes_one_killed_every_job_recorded_once);
    tcase_add_test(tc, claims_follow_capacity_and_never_exceed_it);
    tcase_add_test(tc, drain_finishes_what_is_held_and_claims_no_more);
    tcase_add_test(tc, cancel_gives_back_what_is_held);
    tcase_add_test(tc, a_database_restart_mid_run_loses_nothing);
    tcase_add_test(tc, metrics_parse_as_prometheus_text);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
