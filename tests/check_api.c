/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * check_api.c -- libcupace through its public header alone, linked against
 * the shared library as a program outside the tree would be: the life
 * cycle, stopping while busy (drain and cancel), concurrent submitters, a
 * failing op, a blocked op caught by the watchdog, bad settings and stages.
 */
#include "config.h"

#include <check.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupace/cupace.h>

#include "testutil.h"

/* ---- stages in code -------------------------------------------------------- */

/* A job whose data is this marker fails in its kernel; one with BLOCK never
 * leaves synthesize until release_blocked is raised. */
static int fail_marker, block_marker;
static int release_blocked;
static int views_ok = 1;            /* every view carried its job's data and sizes */

static int st_init(void *state, const struct cupace_params *p, const struct cupace_stage_host *host,
                   struct cupace_stage_info *info, char *err, size_t errlen)
{
    uint64_t *op_ns = state;

    (void)host;                     /* each view carries it */
    (void)info;
    (void)err;
    (void)errlen;
    return p->get_ns(p->ctx, "op_time", 2000000, op_ns);
}

static int st_sleep(void *state, const struct cupace_part_view *v)
{
    const uint64_t *op_ns = state;

    return v->host->sleep_ns(v->host->ctx, *op_ns);
}

static int st_synth(void *state, const struct cupace_part_view *v, char *err, size_t len)
{
    if (v->size < sizeof *v || v->index >= v->partitions || !v->job_data)
        __atomic_store_n(&views_ok, 0, __ATOMIC_RELAXED);
    if (v->job_data == &block_marker) {
        while (!__atomic_load_n(&release_blocked, __ATOMIC_ACQUIRE))
            v->host->sleep_ns(v->host->ctx, 1000000);     /* deaf to the cancel, on purpose */
        snprintf(err, len, "released");
        return -1;
    }
    return st_sleep(state, v);
}

static int st_kernel(void *state, const struct cupace_part_view *v, char *err, size_t len)
{
    if (v->job_data == &fail_marker && v->index == 1) {
        snprintf(err, len, "the prover said no");
        return -1;
    }
    return st_sleep(state, v);
}

static const struct cupace_stages test_stages = {
    .abi = CUPACE_STAGE_ABI, .size = sizeof(struct cupace_stages), .name = "apitest",
    .summary = "sleeps op_time per phase", .state_size = sizeof(uint64_t),
    .init = st_init, .synthesize = st_synth, .kernel = st_kernel,
};

/* An engine over the stages above, the shipped controllers' folder,
 * settings small enough for a test and EXTRA; not started. */
static struct cupace_engine *engine_set_up(const char *const *extra)
{
    static const char *const base[] = {
        "engine.devices", "1", "engine.workers_per_device", "2", "engine.synth_workers", "4",
        "engine.memory_budget", "64MiB", "workload.partition_memory", "1MiB",
        "workload.release_at_kernel", "0", "workload.cpu_slots", "4", "pacer.name", "fixed",
        NULL,
    };
    struct cupace_error *err = NULL;
    struct cupace_engine *e = cupace_engine_new(NULL, &err);

    ck_assert_msg(e != NULL, "%s", cupace_error_message(err));
    ck_assert_int_eq(cupace_engine_set(e, "pacer.path", tu_plugins_dir(), &err), 0);
    for (const char *const *kv = base; *kv; kv += 2)
        ck_assert_msg(cupace_engine_set(e, kv[0], kv[1], &err) == 0, "%s: %s", kv[0],
                      cupace_error_message(err));
    for (const char *const *kv = extra; kv && *kv; kv += 2)
        ck_assert_msg(cupace_engine_set(e, kv[0], kv[1], &err) == 0, "%s: %s", kv[0],
                      cupace_error_message(err));
    ck_assert_int_eq(cupace_engine_set_stages(e, &test_stages, &err), 0);
    cupace_error_free(err);
    return e;
}

/* The same, started. */
static struct cupace_engine *engine(const char *const *extra)
{
    struct cupace_engine *e = engine_set_up(extra);
    struct cupace_error *err = NULL;

    ck_assert_msg(cupace_engine_start(e, &err) == 0, "%s", cupace_error_message(err));
    cupace_error_free(err);
    return e;
}

static uint64_t submit(struct cupace_engine *e, uint32_t partitions, void *data,
                       void (*done)(void *, const struct cupace_job_outcome *))
{
    struct cupace_job_spec spec = { .size = sizeof spec, .partitions = partitions, .data = data,
                                    .done = done };
    struct cupace_error *err = NULL;
    uint64_t id = UINT64_MAX;

    ck_assert_msg(cupace_engine_submit(e, &spec, &id, &err) == 0, "%s", cupace_error_message(err));
    return id;
}

static int dummy;

START_TEST(life_cycle)
{
    struct cupace_engine *e = engine(NULL);
    struct cupace_job_outcome o = { .size = sizeof o };
    struct cupace_metrics m = { .size = sizeof m };
    struct cupace_error *err = NULL;
    uint64_t ids[5];

    ck_assert_uint_eq(cupace_api_version(), CUPACE_API_VERSION);
    ck_assert_int_eq(cupace_engine_free(e), -1);      /* running: refused, nothing freed */
    for (int i = 0; i < 5; i++) {
        ids[i] = submit(e, 3, &dummy, NULL);
        ck_assert_uint_eq(ids[i], (uint64_t)i);
    }
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(cupace_engine_wait(e, ids[i], &o, &err), 0);
        ck_assert_uint_eq(o.ok, 1);
        ck_assert_uint_eq(o.partitions, 3);
        ck_assert_uint_eq(o.failed, 0);
        ck_assert_ptr_eq(o.data, &dummy);
        ck_assert_ptr_null(o.reason);
        ck_assert(o.latency_s > 0.0);
    }
    ck_assert_int_eq(cupace_engine_metrics(e, &m), 0);
    ck_assert_uint_eq(m.running, 1);
    ck_assert_uint_eq(m.jobs_submitted, 5);
    ck_assert_uint_eq(m.jobs_completed, 5);
    ck_assert_uint_eq(m.signals.gpu_done, 15);
    ck_assert_uint_eq(m.signals.mem_reserved, 0);
    ck_assert(m.signals.synth_ns_total >= 15 * 2000000ULL);    /* the stages' own sleeps */
    ck_assert_int_eq(cupace_engine_wait(e, 99, &o, &err), -1);
    ck_assert_ptr_nonnull(strstr(cupace_error_message(err), "no job 99"));
    cupace_engine_stop(e, CUPACE_STOP_DRAIN);
    ck_assert_int_eq(cupace_engine_join(e, &err), 0);
    ck_assert_int_eq(cupace_engine_submit(e, &(struct cupace_job_spec){ .size = sizeof(struct cupace_job_spec), .partitions = 1 }, NULL, &err), -1);
    ck_assert(views_ok);
    cupace_error_free(err);
    ck_assert_int_eq(cupace_engine_free(e), 0);
}
END_TEST

/* ---- stopping while busy ------------------------------------------------------- */

struct tally {
    pthread_mutex_t lock;
    unsigned ended[256];            /* per job: how many outcomes */
    unsigned ok, failed, failed_parts;
    int reasons_ok;                 /* every failed job said why */
};

static struct tally tally;

static void count_done(void *data, const struct cupace_job_outcome *o)
{
    (void)data;
    pthread_mutex_lock(&tally.lock);
    if (o->job < 256)
        tally.ended[o->job]++;
    if (o->ok) {
        tally.ok++;
    } else {
        tally.failed++;
        tally.failed_parts += o->failed;
        if (!o->reason || !*o->reason)
            tally.reasons_ok = 0;
    }
    pthread_mutex_unlock(&tally.lock);
}

static void tally_reset(void)
{
    memset(&tally, 0, sizeof tally);
    pthread_mutex_init(&tally.lock, NULL);
    tally.reasons_ok = 1;
}

START_TEST(drain_while_busy_runs_every_job)
{
    static const char *const slow[] = { "stages.apitest.op_time", "20ms", NULL };
    struct cupace_engine *e;
    struct cupace_error *err = NULL;

    tally_reset();
    e = engine(slow);
    for (int i = 0; i < 20; i++)
        submit(e, 4, &dummy, count_done);
    cupace_engine_stop(e, CUPACE_STOP_DRAIN);           /* 80 partitions of 60 ms: still busy */
    ck_assert_int_eq(cupace_engine_submit(e, &(struct cupace_job_spec){ .size = sizeof(struct cupace_job_spec), .partitions = 1 }, NULL, &err), -1);
    ck_assert_ptr_nonnull(strstr(cupace_error_message(err), "takes no more jobs"));
    ck_assert_int_eq(cupace_engine_join(e, &err), 0);
    ck_assert_uint_eq(tally.ok, 20);
    ck_assert_uint_eq(tally.failed, 0);
    for (int i = 0; i < 20; i++)
        ck_assert_uint_eq(tally.ended[i], 1);
    cupace_error_free(err);
    ck_assert_int_eq(cupace_engine_free(e), 0);
}
END_TEST

START_TEST(cancel_while_busy_ends_every_job_once)
{
    static const char *const slow[] = { "stages.apitest.op_time", "20ms", NULL };
    struct cupace_engine *e;
    struct cupace_metrics m = { .size = sizeof m };
    struct cupace_error *err = NULL;
    struct timespec ts = { 0, 100000000 };

    tally_reset();
    e = engine(slow);
    for (int i = 0; i < 40; i++)
        submit(e, 4, &dummy, count_done);
    nanosleep(&ts, NULL);
    cupace_engine_stop(e, CUPACE_STOP_CANCEL);
    ck_assert_int_eq(cupace_engine_join(e, &err), 0);
    for (int i = 0; i < 40; i++)
        ck_assert_uint_eq(tally.ended[i], 1);       /* none lost, none twice */
    ck_assert_uint_eq(tally.ok + tally.failed, 40);
    ck_assert_uint_gt(tally.failed, 0);             /* 160 partitions of 60 ms cannot be done */
    ck_assert(tally.reasons_ok);
    ck_assert_int_eq(cupace_engine_metrics(e, &m), 0);
    ck_assert_uint_eq(m.running, 0);
    ck_assert_uint_eq(m.jobs_completed + m.jobs_failed, 40);
    cupace_error_free(err);
    ck_assert_int_eq(cupace_engine_free(e), 0);
}
END_TEST

/* Found in review: the outcomes being reported lived in a buffer that a
 * job ending meanwhile could move.  Slow callbacks while jobs keep ending. */
static void slow_done(void *data, const struct cupace_job_outcome *o)
{
    struct timespec ts = { 0, 200000 };

    count_done(data, o);
    nanosleep(&ts, NULL);
}

START_TEST(slow_callbacks_while_jobs_keep_ending)
{
    static const char *const fast[] = { "stages.apitest.op_time", "0", "engine.memory_budget",
                                        "1TiB", "engine.synth_workers", "8", NULL };
    struct cupace_engine *e;
    struct cupace_error *err = NULL;

    tally_reset();
    e = engine(fast);
    for (int i = 0; i < 3000; i++)
        submit(e, 1, &dummy, slow_done);
    cupace_engine_stop(e, CUPACE_STOP_DRAIN);
    ck_assert_int_eq(cupace_engine_join(e, &err), 0);
    ck_assert_uint_eq(tally.ok, 3000);
    for (int i = 0; i < 256; i++)
        ck_assert_uint_eq(tally.ended[i], 1);
    cupace_error_free(err);
    ck_assert_int_eq(cupace_engine_free(e), 0);
}
END_TEST

/* ---- submitters on four threads --------------------------------------------------- */

struct submitter {
    struct cupace_engine *e;
    uint64_t ids[50];
};

static void *submit_many(void *arg)
{
    struct submitter *s = arg;

    for (int i = 0; i < 50; i++) {
        struct cupace_job_spec spec = { .size = sizeof spec, .partitions = 1 + (uint32_t)(i % 3),
                                        .partition_bytes = (uint64_t)(1 + i % 4) << 20,
                                        .data = s, .done = count_done };
        if (cupace_engine_submit(s->e, &spec, &s->ids[i], NULL) < 0)
            s->ids[i] = UINT64_MAX;
    }
    return NULL;
}

START_TEST(concurrent_submitters)
{
    static const char *const quick[] = { "stages.apitest.op_time", "100us", NULL };
    struct submitter subs[4];
    pthread_t th[4];
    struct cupace_engine *e;
    struct cupace_error *err = NULL;
    uint8_t seen[200] = { 0 };

    tally_reset();
    e = engine(quick);
    for (int t = 0; t < 4; t++) {
        subs[t].e = e;
        ck_assert_int_eq(pthread_create(&th[t], NULL, submit_many, &subs[t]), 0);
    }
    for (int t = 0; t < 4; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < 4; t++)
        for (int i = 0; i < 50; i++) {
            struct cupace_job_outcome o = { .size = sizeof o };
            ck_assert_uint_lt(subs[t].ids[i], 200);
            ck_assert_uint_eq(seen[subs[t].ids[i]]++, 0);   /* ids are unique */
            ck_assert_int_eq(cupace_engine_wait(e, subs[t].ids[i], &o, &err), 0);
            ck_assert_uint_eq(o.ok, 1);
            ck_assert_ptr_eq(o.data, &subs[t]);
            ck_assert_uint_eq(o.partitions, 1 + (uint32_t)(i % 3));
        }
    cupace_engine_stop(e, CUPACE_STOP_DRAIN);
    ck_assert_int_eq(cupace_engine_join(e, &err), 0);
    ck_assert_uint_eq(tally.ok, 200);
    cupace_error_free(err);
    ck_assert_int_eq(cupace_engine_free(e), 0);
}
END_TEST

/* ---- failures ---------------------------------------------------------------------- */

START_TEST(a_failing_op_fails_its_job_alone)
{
    struct cupace_engine *e = engine(NULL);
    struct cupace_job_outcome o = { .size = sizeof o };
    struct cupace_error *err = NULL;
    uint64_t good = submit(e, 3, &dummy, NULL), bad = submit(e, 3, &fail_marker, NULL);
    uint64_t after = submit(e, 2, &dummy, NULL);

    ck_assert_int_eq(cupace_engine_wait(e, bad, &o, &err), 0);
    ck_assert_uint_eq(o.ok, 0);
    ck_assert_uint_eq(o.failed, 1);
    ck_assert_ptr_nonnull(o.reason);
    ck_assert_msg(strstr(o.reason, "partition 1") && strstr(o.reason, "kernel") &&
                      strstr(o.reason, "the prover said no"), "%s", o.reason);
    ck_assert_int_eq(cupace_engine_wait(e, good, &o, &err), 0);
    ck_assert_uint_eq(o.ok, 1);
    ck_assert_int_eq(cupace_engine_wait(e, after, &o, &err), 0);
    ck_assert_uint_eq(o.ok, 1);
    cupace_engine_stop(e, CUPACE_STOP_DRAIN);
    ck_assert_int_eq(cupace_engine_join(e, &err), 0);
    cupace_error_free(err);
    ck_assert_int_eq(cupace_engine_free(e), 0);
}
END_TEST

START_TEST(a_blocked_op_is_caught_by_the_watchdog)
{
    static const char *const watch[] = { "engine.stall_timeout", "200ms", NULL };
    struct cupace_engine *e = engine(watch);
    struct cupace_job_outcome o = { .size = sizeof o };
    struct cupace_error *err = NULL;
    uint64_t stuck = submit(e, 1, &block_marker, NULL);

    ck_assert_int_eq(cupace_engine_join(e, &err), -1);
    ck_assert_msg(strstr(cupace_error_message(err), "synthesize") &&
                      strstr(cupace_error_message(err), "job 0 partition 0") &&
                      strstr(cupace_error_message(err), "stall_timeout"),
                  "%s", cupace_error_message(err));
    ck_assert_int_eq(cupace_engine_wait(e, stuck, &o, NULL), 0);     /* told, not lost */
    ck_assert_uint_eq(o.ok, 0);
    ck_assert_uint_eq(o.partitions, 1);     /* once 0 of 0, beside ok = 0 */
    ck_assert_uint_eq(o.failed, 1);
    __atomic_store_n(&release_blocked, 1, __ATOMIC_RELEASE);
    cupace_error_free(err);
    ck_assert_int_eq(cupace_engine_free(e), 0);  /* the run's memory stays for the thread left */
}
END_TEST

/* ---- calls the contract forbids, refused rather than left to hang ---------- */

static struct cupace_engine *cb_engine;
static int cb_join_rc = 1, cb_wait_rc = 1, cb_metrics_rc = 1;
static char cb_join_msg[256];

static void join_from_done(void *data, const struct cupace_job_outcome *o)
{
    struct cupace_error *err = NULL;
    struct cupace_job_outcome out = { .size = sizeof out };

    int rc = cupace_engine_join(cb_engine, &err);

    snprintf(cb_join_msg, sizeof cb_join_msg, "%s", cupace_error_message(err));
    cb_wait_rc = cupace_engine_wait(cb_engine, o->job, &out, NULL);
    cupace_error_free(err);
    __atomic_store_n(&cb_join_rc, rc, __ATOMIC_RELEASE);    /* the last: the test reads on */
}

static void metrics_from_progress(void *data, const struct cupace_progress *p)
{
    struct cupace_metrics m = { .size = sizeof m };

    if (!p->final)
        __atomic_store_n(&cb_metrics_rc, cupace_engine_metrics(cb_engine, &m), __ATOMIC_RELEASE);
}

static void *join_thread(void *arg)
{
    struct cupace_error *err = NULL;
    intptr_t rc = cupace_engine_join(arg, &err);

    cupace_error_free(err);
    return (void *)rc;
}

/* A join or wait from a done callback would wait for the thread it runs
 * on: join once said 0 there, and the engine could no longer be stopped
 * or freed; wait hung.  An engine call from the progress callback took the
 * lock it is called with.  Two joins at once joined one thread twice. */
START_TEST(calls_that_would_wait_for_themselves_are_refused)
{
    struct cupace_error *err = NULL;
    struct cupace_engine *e;
    pthread_t t[2];
    void *rc[2];

    cb_engine = e = engine(NULL);
    submit(e, 1, &dummy, join_from_done);
    for (int i = 0; i < 500 && __atomic_load_n(&cb_join_rc, __ATOMIC_ACQUIRE) == 1; i++)
        nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
    ck_assert_int_eq(cb_join_rc, -1);
    ck_assert_msg(strstr(cb_join_msg, "engine's own thread"), "%s", cb_join_msg);
    ck_assert_int_eq(cb_wait_rc, -1);
    /* the engine runs on, and two joins at once both return */
    submit(e, 2, &dummy, NULL);
    cupace_engine_stop(e, CUPACE_STOP_DRAIN);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, join_thread, e), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], &rc[i]);
    ck_assert_msg((rc[0] == 0) != (rc[1] == 0), "joins returned %ld and %ld", (long)(intptr_t)rc[0],
                  (long)(intptr_t)rc[1]);
    ck_assert_int_eq(cupace_engine_free(e), 0);

    e = cupace_engine_new(NULL, &err);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(cupace_engine_set(e, "pacer.path", tu_plugins_dir(), &err), 0);
    ck_assert_int_eq(cupace_engine_set(e, "pacer.name", "fixed", &err), 0);
    ck_assert_int_eq(cupace_engine_set(e, "engine.memory_budget", "64MiB", &err), 0);
    ck_assert_int_eq(cupace_engine_set(e, "workload.partition_memory", "1MiB", &err), 0);
    ck_assert_int_eq(cupace_engine_set(e, "workload.release_at_kernel", "0", &err), 0);
    ck_assert_int_eq(cupace_engine_set_stages(e, &test_stages, &err), 0);
    ck_assert_int_eq(cupace_engine_on_progress(e, metrics_from_progress, NULL, 1000000, &err), 0);
    cb_engine = e;
    ck_assert_int_eq(cupace_engine_start(e, &err), 0);
    submit(e, 4, &dummy, NULL);
    cupace_engine_stop(e, CUPACE_STOP_DRAIN);
    ck_assert_int_eq(cupace_engine_join(e, &err), 0);
    ck_assert_int_eq(cb_metrics_rc, -1);
    ck_assert_int_eq(cupace_engine_free(e), 0);
    cupace_error_free(err);
}
END_TEST

/* No engine: an error, not a crash. */
START_TEST(a_null_engine_is_refused)
{
    struct cupace_error *err = NULL;
    struct cupace_metrics m = { .size = sizeof m };
    struct cupace_job_spec spec = { .size = sizeof spec, .partitions = 1 };

    ck_assert_int_eq(cupace_engine_set(NULL, "engine.seed", "1", &err), -1);
    ck_assert_ptr_nonnull(strstr(cupace_error_message(err), "no engine"));
    ck_assert_int_eq(cupace_engine_start(NULL, &err), -1);
    ck_assert_int_eq(cupace_engine_submit(NULL, &spec, NULL, &err), -1);
    ck_assert_int_eq(cupace_engine_wait(NULL, 0, NULL, &err), -1);
    ck_assert_int_eq(cupace_engine_reload(NULL, &err), -1);
    ck_assert_int_eq(cupace_engine_join(NULL, &err), -1);
    ck_assert_int_eq(cupace_engine_metrics(NULL, &m), -1);
    ck_assert_uint_eq(cupace_engine_credit(NULL, 1000000000ULL, NULL), 0);
    cupace_engine_stop(NULL, CUPACE_STOP_CANCEL);
    ck_assert_int_eq(cupace_engine_free(NULL), 0);
    cupace_error_free(err);
}
END_TEST

/* The credit (what cupace serve claims by): the budget's room at the size
 * of the jobs coming, none once stopping. */
START_TEST(credit_follows_the_room_at_the_jobs_size)
{
    static const char *const slow[] = { "stages.apitest.op_time", "300ms", NULL };
    struct cupace_engine *e = engine(slow);
    struct cupace_job_spec big = { .size = sizeof big, .partitions = 1,
                                   .partition_bytes = 8ULL << 20 };
    struct cupace_metrics m = { .size = sizeof m };
    struct cupace_error *err = NULL;
    struct timespec ts = { 0, 5000000 };
    int idle = 0;

    ck_assert_uint_eq(cupace_engine_credit(e, 100000000, &idle), 64);   /* 64 MiB / 1 MiB */
    ck_assert_int_eq(idle, 1);
    ck_assert_int_eq(cupace_engine_submit(e, &big, NULL, &err), 0);
    for (int i = 0; i < 400 && (cupace_engine_metrics(e, &m), m.signals.dispatched == 0); i++)
        nanosleep(&ts, NULL);
    ck_assert_uint_eq(m.signals.dispatched, 1);
    ck_assert_uint_eq(cupace_engine_credit(e, 100000000, &idle), 7);    /* 56 MiB / 8 MiB */
    cupace_engine_stop(e, CUPACE_STOP_DRAIN);
    ck_assert_uint_eq(cupace_engine_credit(e, 100000000, &idle), 0);
    ck_assert_int_eq(cupace_engine_join(e, &err), 0);
    cupace_error_free(err);
    ck_assert_int_eq(cupace_engine_free(e), 0);
}
END_TEST

static int metrics_told_to_stop, metrics_refused;

static void *metrics_until_told(void *arg)
{
    while (!__atomic_load_n(&metrics_told_to_stop, __ATOMIC_ACQUIRE)) {
        struct cupace_metrics m = { .size = sizeof m };

        if (cupace_engine_metrics(arg, &m) < 0)
            __atomic_store_n(&metrics_refused, 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

/* Metrics are asked of any thread, also while another starts the engine,
 * and while a start fails after its run was set up (a key the stages never
 * ask for is found only then) and tears it down: the run is read as the
 * state publishes it, never before, never after it is gone (TSan and ASan
 * runs check). */
START_TEST(metrics_from_another_thread_while_it_starts)
{
    static const char *const typo[] = { "stages.apitest.op_tme", "1ms", NULL };
    struct cupace_engine *e = engine_set_up(_i ? typo : NULL);
    struct cupace_error *err = NULL;
    pthread_t reader;

    __atomic_store_n(&metrics_told_to_stop, 0, __ATOMIC_RELEASE);
    ck_assert_int_eq(pthread_create(&reader, NULL, metrics_until_told, e), 0);
    ck_assert_int_eq(cupace_engine_start(e, &err), _i ? -1 : 0);
    if (!_i)
        submit(e, 4, NULL, NULL);
    __atomic_store_n(&metrics_told_to_stop, 1, __ATOMIC_RELEASE);
    pthread_join(reader, NULL);
    ck_assert_int_eq(__atomic_load_n(&metrics_refused, __ATOMIC_ACQUIRE), 0);
    if (!_i) {
        cupace_engine_stop(e, CUPACE_STOP_DRAIN);
        ck_assert_msg(cupace_engine_join(e, &err) == 0, "%s", cupace_error_message(err));
    }
    cupace_error_free(err);
    ck_assert_int_eq(cupace_engine_free(e), 0);
}
END_TEST

static int starts_won;
static int sets_taken;

static void *start_racer(void *arg)
{
    struct cupace_error *err = NULL;

    if (cupace_engine_start(arg, &err) == 0)
        __atomic_add_fetch(&starts_won, 1, __ATOMIC_ACQ_REL);
    else
        ck_assert_msg(strstr(cupace_error_message(err), "once per engine") ||
                      strstr(cupace_error_message(err), "cupace_engine_start"), "%s",
                      cupace_error_message(err));
    cupace_error_free(err);
    return NULL;
}

/* Two starts at once make one run: both passed a check that let go of the
 * lock, and two runs of one engine overran its thread table.  A set (which
 * frees the config) while start sets up waits for it, and is refused. */
START_TEST(one_start_wins_and_nothing_changes_under_it)
{
    struct cupace_engine *e = engine_set_up(NULL);
    struct cupace_error *err = NULL;
    pthread_t a, b;

    __atomic_store_n(&starts_won, 0, __ATOMIC_RELEASE);
    sets_taken = 0;
    ck_assert_int_eq(pthread_create(&a, NULL, start_racer, e), 0);
    ck_assert_int_eq(pthread_create(&b, NULL, start_racer, e), 0);
    while (__atomic_load_n(&starts_won, __ATOMIC_ACQUIRE) == 0) {
        /* before the first start claims the engine a set is fine; after,
         * each waits for it and is refused, and none frees the config */
        if (cupace_engine_set(e, "engine.synth_workers", "3", &err) == 0)
            sets_taken++;
    }
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    ck_assert_int_eq(starts_won, 1);
    ck_assert_int_eq(cupace_engine_set(e, "engine.synth_workers", "3", &err), -1);
    submit(e, 3, NULL, NULL);
    cupace_engine_stop(e, CUPACE_STOP_DRAIN);
    ck_assert_msg(cupace_engine_join(e, &err) == 0, "%s", cupace_error_message(err));
    cupace_error_free(err);
    ck_assert_int_eq(cupace_engine_free(e), 0);
}
END_TEST

/* ---- refusals ----------------------------------------------------------------------- */

START_TEST(bad_settings_and_stages_are_refused)
{
    struct cupace_error *err = NULL;
    struct cupace_engine *e = cupace_engine_new(NULL, &err);
    struct cupace_stages bad_abi = test_stages, no_kernel = test_stages;
    struct cupace_job_spec spec = { .size = sizeof spec, .partitions = 1 };

    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(cupace_engine_set(e, "engine.synth_wokers", "4", &err), -1);
    ck_assert_msg(strstr(cupace_error_message(err), "synth_wokers"), "%s", cupace_error_message(err));
    ck_assert_int_eq(cupace_engine_set(e, "engine.memory_budget", "lots", &err), -1);
    ck_assert_msg(strstr(cupace_error_message(err), "memory_budget"), "%s", cupace_error_message(err));
    ck_assert_int_eq(cupace_engine_set(e, "nodot", "1", &err), -1);
    bad_abi.abi = 99;
    ck_assert_int_eq(cupace_engine_set_stages(e, &bad_abi, &err), -1);
    ck_assert_msg(strstr(cupace_error_message(err), "apitest"), "%s", cupace_error_message(err));
    no_kernel.kernel = NULL;
    ck_assert_int_eq(cupace_engine_set_stages(e, &no_kernel, &err), -1);
    ck_assert_int_eq(cupace_engine_submit(e, &spec, NULL, &err), -1);      /* not started */
    ck_assert_int_eq(cupace_engine_join(e, &err), -1);
    ck_assert_int_eq(cupace_engine_free(e), 0);

    /* a key the stages never ask for, a controller that is not there */
    e = cupace_engine_new(NULL, &err);
    ck_assert_int_eq(cupace_engine_set(e, "pacer.path", tu_plugins_dir(), &err), 0);
    ck_assert_int_eq(cupace_engine_set(e, "pacer.name", "fixed", &err), 0);
    ck_assert_int_eq(cupace_engine_set(e, "stages.apitest.op_tme", "1ms", &err), 0);
    ck_assert_int_eq(cupace_engine_set_stages(e, &test_stages, &err), 0);
    ck_assert_int_eq(cupace_engine_start(e, &err), -1);
    ck_assert_msg(strstr(cupace_error_message(err), "op_tme"), "%s", cupace_error_message(err));
    ck_assert_int_eq(cupace_engine_free(e), 0);
    e = cupace_engine_new(NULL, &err);
    ck_assert_int_eq(cupace_engine_set(e, "pacer.path", tu_plugins_dir(), &err), 0);
    ck_assert_int_eq(cupace_engine_set(e, "pacer.name", "nosuchpacer", &err), 0);
    ck_assert_int_eq(cupace_engine_start(e, &err), -1);
    ck_assert_msg(strstr(cupace_error_message(err), "nosuchpacer"), "%s", cupace_error_message(err));
    ck_assert_int_eq(cupace_engine_free(e), 0);
    ck_assert_ptr_null(cupace_engine_new("/nonexistent/cupace.ini", &err));
    ck_assert_msg(strstr(cupace_error_message(err), "/nonexistent/cupace.ini"), "%s",
                  cupace_error_message(err));
    cupace_error_free(err);
}
END_TEST

/* Keys that disagree are left for start, whatever the order they come in:
 * a partition larger than the budget, then a budget that holds it, is a
 * config start takes; left disagreeing, start refuses it, naming the key.
 * (Told apart by the text of the message, a cross-check on a key set
 * earlier was refused at once once messages named --set by its text.) */
START_TEST(settings_that_disagree_wait_for_start)
{
    struct cupace_error *err = NULL;
    struct cupace_engine *e = cupace_engine_new(NULL, &err);

    ck_assert_int_eq(cupace_engine_set(e, "pacer.path", tu_plugins_dir(), &err), 0);
    ck_assert_int_eq(cupace_engine_set(e, "pacer.name", "fixed", &err), 0);
    ck_assert_msg(cupace_engine_set(e, "workload.partition_memory", "2TiB", &err) == 0, "%s",
                  cupace_error_message(err));
    ck_assert_msg(cupace_engine_set(e, "engine.memory_budget", "4TiB", &err) == 0, "%s",
                  cupace_error_message(err));
    ck_assert_int_eq(cupace_engine_set_stages(e, &test_stages, &err), 0);
    ck_assert_msg(cupace_engine_start(e, &err) == 0, "%s", cupace_error_message(err));
    cupace_engine_stop(e, CUPACE_STOP_DRAIN);
    ck_assert_int_eq(cupace_engine_join(e, &err), 0);
    ck_assert_int_eq(cupace_engine_free(e), 0);

    e = cupace_engine_new(NULL, &err);
    ck_assert_int_eq(cupace_engine_set(e, "pacer.path", tu_plugins_dir(), &err), 0);
    ck_assert_int_eq(cupace_engine_set(e, "pacer.name", "fixed", &err), 0);
    ck_assert_int_eq(cupace_engine_set(e, "workload.partition_memory", "2TiB", &err), 0);
    ck_assert_int_eq(cupace_engine_set_stages(e, &test_stages, &err), 0);
    ck_assert_int_eq(cupace_engine_start(e, &err), -1);
    ck_assert_msg(strstr(cupace_error_message(err), "partition_memory"), "%s",
                  cupace_error_message(err));
    ck_assert_int_eq(cupace_engine_free(e), 0);
    cupace_error_free(err);
}
END_TEST

START_TEST(a_job_the_budget_cannot_hold_is_refused)
{
    struct cupace_engine *e = engine(NULL);
    struct cupace_error *err = NULL;
    struct cupace_job_spec big = { .size = sizeof big, .partitions = 1,
                                   .partition_bytes = 65ULL << 20 };
    struct cupace_job_spec none = { .size = sizeof none, .partitions = 0 };
    struct cupace_job_spec old = { .size = 4, .partitions = 1 };
    /* 10^8 + 1 partitions took 6 GiB of bookkeeping before a word */
    struct cupace_job_spec huge = { .size = sizeof huge, .partitions = 100000001 };

    ck_assert_int_eq(cupace_engine_submit(e, &huge, NULL, &err), -1);
    ck_assert_msg(strstr(cupace_error_message(err), "at most 100000000"), "%s",
                  cupace_error_message(err));
    ck_assert_int_eq(cupace_engine_submit(e, &big, NULL, &err), -1);
    ck_assert_msg(strstr(cupace_error_message(err), "memory budget"), "%s", cupace_error_message(err));
    ck_assert_int_eq(cupace_engine_submit(e, &none, NULL, &err), -1);
    ck_assert_int_eq(cupace_engine_submit(e, &old, NULL, &err), -1);
    ck_assert_msg(strstr(cupace_error_message(err), "size"), "%s", cupace_error_message(err));
    cupace_engine_stop(e, CUPACE_STOP_DRAIN);
    ck_assert_int_eq(cupace_engine_join(e, &err), 0);
    cupace_error_free(err);
    ck_assert_int_eq(cupace_engine_free(e), 0);
}
END_TEST

/* The layout of every struct of cupace/cupace.h: what a program built
 * against this header expects, byte for byte (x86-64 and other LP64). */
START_TEST(the_abi_layout_is_pinned)
{
    ck_assert_uint_eq(offsetof(struct cupace_job_spec, size), 0);
    ck_assert_uint_eq(offsetof(struct cupace_job_spec, partitions), 4);
    ck_assert_uint_eq(offsetof(struct cupace_job_spec, partition_bytes), 8);
    ck_assert_uint_eq(offsetof(struct cupace_job_spec, release_at_kernel), 16);
    ck_assert_uint_eq(offsetof(struct cupace_job_spec, data), 24);
    ck_assert_uint_eq(offsetof(struct cupace_job_spec, done), 32);
    ck_assert_uint_eq(sizeof(struct cupace_job_spec), 40);
    ck_assert_uint_eq(offsetof(struct cupace_job_outcome, ok), 4);
    ck_assert_uint_eq(offsetof(struct cupace_job_outcome, job), 8);
    ck_assert_uint_eq(offsetof(struct cupace_job_outcome, data), 16);
    ck_assert_uint_eq(offsetof(struct cupace_job_outcome, partitions), 24);
    ck_assert_uint_eq(offsetof(struct cupace_job_outcome, failed), 28);
    ck_assert_uint_eq(offsetof(struct cupace_job_outcome, latency_s), 32);
    ck_assert_uint_eq(offsetof(struct cupace_job_outcome, reason), 40);
    ck_assert_uint_eq(sizeof(struct cupace_job_outcome), 48);
    ck_assert_uint_eq(offsetof(struct cupace_metrics, running), 4);
    ck_assert_uint_eq(offsetof(struct cupace_metrics, jobs_submitted), 8);
    ck_assert_uint_eq(offsetof(struct cupace_metrics, signals), 32);
    ck_assert_uint_eq(offsetof(struct cupace_progress, final), 4);
    ck_assert_uint_eq(offsetof(struct cupace_progress, now_ns), 8);
    ck_assert_uint_eq(offsetof(struct cupace_progress, interval_ns), 64);
    ck_assert_uint_eq(offsetof(struct cupace_progress, pacer), 72);
    ck_assert_uint_eq(offsetof(struct cupace_progress, pacer_state), 80);
    ck_assert_uint_eq(sizeof(struct cupace_progress), 88);
}
END_TEST

/* A struct from an older, shorter header is read and written no further
 * than its size. */
START_TEST(short_structs_are_filled_to_their_size)
{
    struct cupace_engine *e = engine(NULL);
    struct cupace_error *err = NULL;
    struct {
        struct cupace_metrics m;
        uint64_t canary;
    } box;

    memset(&box, 0xab, sizeof box);
    box.m.size = offsetof(struct cupace_metrics, jobs_completed);
    ck_assert_int_eq(cupace_engine_metrics(e, &box.m), 0);
    ck_assert_uint_eq(box.m.size, offsetof(struct cupace_metrics, jobs_completed));
    ck_assert_uint_eq(box.m.running, 1);
    ck_assert_uint_eq(box.m.jobs_completed, 0xababababababababULL);   /* not written */
    ck_assert_uint_eq(box.canary, 0xababababababababULL);
    cupace_engine_stop(e, CUPACE_STOP_DRAIN);
    ck_assert_int_eq(cupace_engine_join(e, &err), 0);
    ck_assert_int_eq(cupace_engine_free(e), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("engine");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, the_abi_layout_is_pinned);
    tcase_add_test(tc, short_structs_are_filled_to_their_size);
    tcase_add_test(tc, life_cycle);
    tcase_add_test(tc, drain_while_busy_runs_every_job);
    tcase_add_test(tc, cancel_while_busy_ends_every_job_once);
    tcase_add_test(tc, concurrent_submitters);
    tcase_add_test(tc, slow_callbacks_while_jobs_keep_ending);
    tcase_add_test(tc, a_failing_op_fails_its_job_alone);
    tcase_add_test(tc, a_job_the_budget_cannot_hold_is_refused);
    tcase_add_test(tc, credit_follows_the_room_at_the_jobs_size);
    tcase_add_loop_test(tc, metrics_from_another_thread_while_it_starts, 0, 2);
    tcase_add_loop_test(tc, one_start_wins_and_nothing_changes_under_it, 0, 8);
    tcase_add_test(tc, bad_settings_and_stages_are_refused);
    tcase_add_test(tc, settings_that_disagree_wait_for_start);
    tcase_add_test(tc, a_blocked_op_is_caught_by_the_watchdog);
    tcase_add_test(tc, calls_that_would_wait_for_themselves_are_refused);
    tcase_add_test(tc, a_null_engine_is_refused);     /* last: it leaves a thread */
    suite_add_tcase(s, tc);
    return tu_run(s);
}
