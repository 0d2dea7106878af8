/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* check_stages.c -- the stage interface: its layout pinned, the check every
 * table passes, and stages given in code running in real time: every op
 * called once per partition on the right thread kind, buffers, per-worker
 * state, failing ops failing their partition only, failing set-up. */
#include "config.h"

#include <check.h>
#include <pthread.h>
#include <time.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "pacer_host.h"
#include "realtime.h"
#include "stages.h"
#include "testutil.h"

#define P sizeof(void *)

/* A contract with code we do not build: pin its layout (LP64 and ILP32 alike). */
START_TEST(layout_is_pinned)
{
    ck_assert_uint_eq(offsetof(struct cupace_stages, abi), 0);
    ck_assert_uint_eq(offsetof(struct cupace_stages, size), 4);
    ck_assert_uint_eq(offsetof(struct cupace_stages, name), 8);
    ck_assert_uint_eq(offsetof(struct cupace_stages, summary), 8 + P);
    ck_assert_uint_eq(offsetof(struct cupace_stages, state_size), 8 + 2 * P);
    ck_assert_uint_eq(offsetof(struct cupace_stages, init), 8 + 3 * P);
    ck_assert_uint_eq(offsetof(struct cupace_stages, fini), 8 + 4 * P);
    ck_assert_uint_eq(offsetof(struct cupace_stages, worker_setup), 8 + 5 * P);
    ck_assert_uint_eq(offsetof(struct cupace_stages, worker_teardown), 8 + 6 * P);
    ck_assert_uint_eq(offsetof(struct cupace_stages, synthesize), 8 + 7 * P);
    ck_assert_uint_eq(offsetof(struct cupace_stages, prep), 8 + 8 * P);
    ck_assert_uint_eq(offsetof(struct cupace_stages, kernel), 8 + 9 * P);
    ck_assert_uint_eq(offsetof(struct cupace_stages, epilogue), 8 + 10 * P);
    ck_assert_uint_eq(sizeof(struct cupace_stages), 8 + 11 * P);

    ck_assert_uint_eq(offsetof(struct cupace_stage_host, size), 0);
    ck_assert_uint_eq(offsetof(struct cupace_stage_host, reserved), 4);
    ck_assert_uint_eq(offsetof(struct cupace_stage_host, ctx), 8);
    ck_assert_uint_eq(offsetof(struct cupace_stage_host, sleep_ns), 8 + P);
    ck_assert_uint_eq(offsetof(struct cupace_stage_host, cpu_work_ns), 8 + 2 * P);
    ck_assert_uint_eq(offsetof(struct cupace_stage_host, cancelled), 8 + 3 * P);
    ck_assert_uint_eq(offsetof(struct cupace_stage_host, device_time_ns), 8 + 4 * P);
    ck_assert_uint_eq(offsetof(struct cupace_stage_host, retire_device), 8 + 5 * P);
    ck_assert_uint_eq(sizeof(struct cupace_stage_host), 8 + 6 * P);

    ck_assert_uint_eq(offsetof(struct cupace_part_view, size), 0);
    ck_assert_uint_eq(offsetof(struct cupace_part_view, index), 4);
    ck_assert_uint_eq(offsetof(struct cupace_part_view, job), 8);
    ck_assert_uint_eq(offsetof(struct cupace_part_view, partitions), 16);
    ck_assert_uint_eq(offsetof(struct cupace_part_view, worker), 20);
    ck_assert_uint_eq(offsetof(struct cupace_part_view, device), 24);
    ck_assert_uint_eq(offsetof(struct cupace_part_view, reserved), 28);
    ck_assert_uint_eq(offsetof(struct cupace_part_view, job_data), 32);
    ck_assert_uint_eq(offsetof(struct cupace_part_view, buf), 32 + P);
    ck_assert_uint_eq(offsetof(struct cupace_part_view, buf_bytes), 32 + 2 * P);
    ck_assert_uint_eq(offsetof(struct cupace_part_view, worker_state), 32 + 3 * P);
    ck_assert_uint_eq(offsetof(struct cupace_part_view, model_ns), 32 + 4 * P + (P == 4 ? 4 : 0));

    ck_assert_uint_eq(offsetof(struct cupace_stage_info, size), 0);
    ck_assert_uint_eq(offsetof(struct cupace_stage_info, reserved), 4);
    ck_assert_uint_eq(offsetof(struct cupace_stage_info, buffer_bytes), 8);
}
END_TEST

/* ---- the check ------------------------------------------------------------ */

static int ok_init(void *s, const struct cupace_params *p, const struct cupace_stage_host *h,
                   struct cupace_stage_info *info, char *err, size_t len)
{
    (void)s, (void)p, (void)h, (void)info, (void)err, (void)len;
    return 0;
}

static int ok_op(void *s, const struct cupace_part_view *v, char *err, size_t len)
{
    (void)s, (void)v, (void)err, (void)len;
    return 0;
}

static void teardown_only(void *s, void *w)
{
    (void)s, (void)w;
}

static void refused(struct cupace_stages t, size_t symsize, const char *needle)
{
    char why[256] = "";

    ck_assert_int_eq(cupace_stages_validate(&t, symsize, why, sizeof why), -1);
    ck_assert_msg(strstr(why, needle), "'%s' lacks '%s'", why, needle);
}

START_TEST(the_check_refuses_each_fault)
{
    const struct cupace_stages good = {
        .abi = CUPACE_STAGE_ABI, .size = sizeof good, .name = "good", .init = ok_init,
        .synthesize = ok_op, .kernel = ok_op,
    };
    struct cupace_stages t;
    char why[256];

    ck_assert_int_eq(cupace_stages_validate(&good, sizeof good, why, sizeof why), 0);
    ck_assert_int_eq(cupace_stages_validate(&cupace_stages_emulated, 0, why, sizeof why), 0);
    t = good, t.abi = 99;
    refused(t, 0, "stage ABI 99");
    t = good, t.size = 8;
    refused(t, 0, "is 8 bytes");
    refused(good, 4, "too small to hold abi and size");
    t = good, t.name = "../x";
    refused(t, 0, "not a plain identifier");
    t = good, t.init = NULL;
    refused(t, 0, "required op init");
    t = good, t.synthesize = NULL;
    refused(t, 0, "required op synthesize");
    t = good, t.kernel = NULL;
    refused(t, 0, "required op kernel");
    t = good, t.worker_teardown = teardown_only;
    refused(t, 0, "worker_teardown without worker_setup");
}
END_TEST

/* ---- stages in code, in real time ------------------------------------------ */

#define JOBS 6
#define PARTS 5

struct probe {
    int calls[4][JOBS * PARTS];     /* synthesize, prep, kernel, epilogue */
    int bad_view, fini, setups, teardowns, fail_op;
    size_t buffer;
};

static struct probe probe;

static int probe_init(void *s, const struct cupace_params *p, const struct cupace_stage_host *h,
                      struct cupace_stage_info *info, char *err, size_t len)
{
    (void)s, (void)p, (void)err, (void)len;
    ck_assert_ptr_nonnull(h->sleep_ns);
    info->buffer_bytes = probe.buffer;
    return 0;
}

static void probe_fini(void *s)
{
    (void)s;
    __atomic_add_fetch(&probe.fini, 1, __ATOMIC_RELAXED);
}

static int probe_setup(void *s, uint32_t device, uint32_t worker, void **ws, char *err, size_t len)
{
    (void)s, (void)device, (void)err, (void)len;
    *ws = (void *)(uintptr_t)(worker + 100);
    __atomic_add_fetch(&probe.setups, 1, __ATOMIC_RELAXED);
    return 0;
}

static void probe_teardown(void *s, void *ws)
{
    (void)s;
    if ((uintptr_t)ws < 100)
        __atomic_add_fetch(&probe.bad_view, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&probe.teardowns, 1, __ATOMIC_RELAXED);
}

static int probe_op(int op, const struct cupace_part_view *v, char *err, size_t len)
{
    uint64_t id = v->job * PARTS + v->index;

    if (v->size != sizeof *v || v->index >= PARTS || v->job >= JOBS || v->partitions != PARTS ||
        (probe.buffer && (!v->buf || v->buf_bytes != probe.buffer)) ||
        (op > 0 && (uintptr_t)v->worker_state < 100))
        __atomic_add_fetch(&probe.bad_view, 1, __ATOMIC_RELAXED);
    if (probe.buffer && op == 0)
        memset(v->buf, (int)id, probe.buffer);     /* ASan: the buffer is really there */
    if (probe.buffer && op == 3 && ((unsigned char *)v->buf)[probe.buffer - 1] != (unsigned char)id)
        __atomic_add_fetch(&probe.bad_view, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&probe.calls[op][id], 1, __ATOMIC_RELAXED);
    if (op == probe.fail_op && v->index == 3) {
        snprintf(err, len, "index 3 is cursed");
        return -1;
    }
    return 0;
}

static int probe_synth(void *s, const struct cupace_part_view *v, char *e, size_t l)
{
    (void)s;
    return probe_op(0, v, e, l);
}

static int probe_prep(void *s, const struct cupace_part_view *v, char *e, size_t l)
{
    (void)s;
    return probe_op(1, v, e, l);
}

static int probe_kernel(void *s, const struct cupace_part_view *v, char *e, size_t l)
{
    (void)s;
    return probe_op(2, v, e, l);
}

static int probe_epilogue(void *s, const struct cupace_part_view *v, char *e, size_t l)
{
    (void)s;
    return probe_op(3, v, e, l);
}

static const struct cupace_stages probe_stages = {
    .abi = CUPACE_STAGE_ABI, .size = sizeof probe_stages, .name = "probe",
    .init = probe_init, .fini = probe_fini, .worker_setup = probe_setup,
    .worker_teardown = probe_teardown, .synthesize = probe_synth, .prep = probe_prep,
    .kernel = probe_kernel, .epilogue = probe_epilogue,
};

static int run_probe(const struct cupace_stages *stages, struct cupace_result *r,
                     struct cupace_err *err)
{
    struct cupace_config *cfg = tu_config_with_plugins(
        "[engine]\nmode = realtime\ndevices = 2\nworkers_per_device = 2\nsynth_workers = 3\n"
        "memory_budget = 1GiB\n[workload]\njobs = 6\npartitions_per_job = 5\n"
        "partition_memory = 64MiB\n");
    struct cupace_pacer_path path;
    struct cupace_pacer_instance inst;
    struct cupace_run_opts opts = { .stages = stages };
    int rc;

    memset(r, 0, sizeof *r);
    cupace_pacer_path_init(&path, cfg);
    ck_assert_msg(cupace_pacer_instance_create(&inst, cfg, &path, "fixed", err) == 0, "%s", err->msg);
    cupace_pacer_path_free(&path);
    rc = cupace_realtime(cfg, &inst, &opts, r, err);
    cupace_pacer_instance_destroy(&inst);
    cupace_config_free(cfg);
    return rc;
}

START_TEST(every_op_runs_once_per_partition)
{
    struct cupace_result r;
    struct cupace_err err;

    memset(&probe, 0, sizeof probe);
    probe.fail_op = -1;
    probe.buffer = 4096;
    ck_assert_msg(run_probe(&probe_stages, &r, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(r.completed, JOBS * PARTS);
    ck_assert(r.invariants_ok);
    for (int op = 0; op < 4; op++)
        for (int i = 0; i < JOBS * PARTS; i++)
            ck_assert_msg(probe.calls[op][i] == 1, "op %d partition %d: %d calls", op, i,
                          probe.calls[op][i]);
    ck_assert_int_eq(probe.bad_view, 0);
    ck_assert_int_eq(probe.setups, 4);
    ck_assert_int_eq(probe.teardowns, 4);
    ck_assert_int_eq(probe.fini, 1);
}
END_TEST

/* An op's error fails that partition (and its job) with the reason; the run goes on. */
START_TEST(a_failing_op_fails_its_partition_only)
{
    static const char *names[] = { "synthesize", "prep", "kernel", "epilogue" };

    for (int op = 0; op < 4; op++) {
        struct cupace_result r;
        struct cupace_err err;

        memset(&probe, 0, sizeof probe);
        probe.fail_op = op;
        ck_assert_msg(run_probe(&probe_stages, &r, &err) == 0, "%s", err.msg);
        ck_assert_uint_eq(r.failed, JOBS);
        ck_assert_uint_eq(r.completed, JOBS * (PARTS - 1));
        ck_assert_uint_eq(r.jobs_failed, JOBS);
        ck_assert_uint_eq(r.stage_failures, JOBS);
        ck_assert_msg(strstr(r.stage_failure, names[op]) && strstr(r.stage_failure, "partition 3") &&
                      strstr(r.stage_failure, "index 3 is cursed"), "%s", r.stage_failure);
        ck_assert(r.invariants_ok);
        for (int i = 0; i < JOBS * PARTS; i++)      /* nothing runs after a failure */
            for (int later = op + 1; later < 4; later++)
                ck_assert_int_eq(probe.calls[later][i], i % PARTS == 3 ? 0 : 1);
        ck_assert_int_eq(probe.fini, 1);
    }
}
END_TEST

static int failing_setup(void *s, uint32_t device, uint32_t worker, void **ws, char *err, size_t len)
{
    (void)s, (void)device, (void)ws;
    if (worker == 2) {
        snprintf(err, len, "no stream for you");
        return -1;
    }
    return 0;
}

START_TEST(a_failing_worker_setup_ends_the_run)
{
    struct cupace_stages t = probe_stages;
    struct cupace_result r;
    struct cupace_err err;

    memset(&probe, 0, sizeof probe);
    probe.fail_op = -1;
    t.worker_setup = failing_setup;
    t.worker_teardown = NULL;
    ck_assert_int_eq(run_probe(&t, &r, &err), -1);
    ck_assert_msg(strstr(err.msg, "worker_setup of GPU worker 2") && strstr(err.msg, "no stream"),
                  "%s", err.msg);
    ck_assert_int_eq(probe.calls[0][0], 0);        /* nothing was dispatched */
    ck_assert_int_eq(probe.fini, 1);
}
END_TEST

START_TEST(a_buffer_beyond_partition_memory_is_refused)
{
    struct cupace_result r;
    struct cupace_err err;

    memset(&probe, 0, sizeof probe);
    probe.fail_op = -1;
    probe.buffer = (size_t)65 << 20;
    ck_assert_int_eq(run_probe(&probe_stages, &r, &err), -1);
    ck_assert_msg(strstr(err.msg, "stages 'probe'") && strstr(err.msg, "partition_memory"),
                  "%s", err.msg);
    ck_assert_int_eq(probe.fini, 1);
}
END_TEST

/* ---- the watchdog --------------------------------------------------------- */

static pthread_mutex_t never_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never_cv = PTHREAD_COND_INITIALIZER;

static int stuck_kernel(void *s, const struct cupace_part_view *v, char *e, size_t l)
{
    (void)s, (void)e, (void)l;
    if (v->job == 1 && v->index == 2) {
        pthread_mutex_lock(&never_lock);
        for (;;)                    /* an op that never returns, as a hung driver call would */
            pthread_cond_wait(&never_cv, &never_lock);
    }
    return 0;
}

START_TEST(a_blocked_op_is_caught_by_the_watchdog)
{
    struct cupace_stages t = probe_stages;
    struct cupace_config *cfg = tu_config_with_plugins(
        "[engine]\nmode = realtime\nstall_timeout = 200ms\nmemory_budget = 1GiB\n"
        "[workload]\njobs = 3\npartitions_per_job = 5\npartition_memory = 64MiB\n");
    struct cupace_pacer_path path;
    struct cupace_pacer_instance inst;
    struct cupace_run_opts opts = { .stages = &t };
    struct cupace_result r;
    struct cupace_err err;
    struct timespec a, b;

    memset(&probe, 0, sizeof probe);
    probe.fail_op = -1;
    t.worker_setup = NULL;
    t.worker_teardown = NULL;
    t.kernel = stuck_kernel;
    memset(&r, 0, sizeof r);
    cupace_pacer_path_init(&path, cfg);
    ck_assert_msg(cupace_pacer_instance_create(&inst, cfg, &path, "fixed", &err) == 0, "%s", err.msg);
    cupace_pacer_path_free(&path);
    clock_gettime(CLOCK_MONOTONIC, &a);
    ck_assert_msg(cupace_realtime(cfg, &inst, &opts, &r, &err) == 0, "%s", err.msg);
    clock_gettime(CLOCK_MONOTONIC, &b);
    ck_assert(r.stalled);
    ck_assert_msg(strstr(r.stall_reason, "kernel of job 1 partition 2") &&
                  strstr(r.stall_reason, "stall_timeout"), "%s", r.stall_reason);
    ck_assert_msg(b.tv_sec - a.tv_sec < 10, "the watchdog took %ld s", (long)(b.tv_sec - a.tv_sec));
    /* no one stopped it: a stall, not an interrupt (its cancel once read as one, exit 130) */
    ck_assert(!r.interrupted);
    ck_assert(r.invariants_ok);
    ck_assert_uint_lt(r.completed, 15);
    cupace_pacer_instance_destroy(&inst);
    cupace_config_free(cfg);
}
END_TEST

/* ---- stage plugins: backend = NAME ---------------------------------------- */

static int run_backend(const char *backend, const char *extra, struct cupace_result *r,
                       struct cupace_err *err)
{
    char body[2048];
    struct cupace_config *cfg;
    struct cupace_pacer_path path;
    struct cupace_pacer_instance inst;
    struct cupace_run_opts opts = { 0 };
    int rc;

    snprintf(body, sizeof body,
             "[engine]\nmode = realtime\nbackend = %s\nsynth_workers = 4\nmemory_budget = 1GiB\n"
             "[workload]\njobs = 4\npartitions_per_job = 5\npartition_memory = 64MiB\n"
             "synth_time = 1ms\ngpu_prep = 0\ngpu_kernel = 1ms\ngpu_epilogue = 0\n%s",
             backend, extra);
    cfg = tu_config_with_plugins(body);
    memset(r, 0, sizeof *r);
    cupace_pacer_path_init(&path, cfg);
    ck_assert_msg(cupace_pacer_instance_create(&inst, cfg, &path, "fixed", err) == 0, "%s", err->msg);
    cupace_pacer_path_free(&path);
    rc = cupace_realtime(cfg, &inst, &opts, r, err);
    cupace_pacer_instance_destroy(&inst);
    cupace_config_free(cfg);
    return rc;
}

START_TEST(a_stage_plugin_runs_with_its_keys)
{
    struct cupace_result r;
    struct cupace_err err;

    ck_assert_msg(run_backend("stage_good", "[stages.stage_good]\nfail_index = 2\n"
                              "sleep_scale = 0.5\n", &r, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(r.failed, 4);                 /* index 2 of each job */
    ck_assert_uint_eq(r.completed, 16);
    ck_assert_uint_eq(r.stage_failures, 4);
    ck_assert_msg(strstr(r.stage_failure, "index 2 is cursed"), "%s", r.stage_failure);
    ck_assert(r.invariants_ok);
}
END_TEST

static void backend_refused(const char *backend, const char *extra, const char *n1, const char *n2)
{
    struct cupace_result r;
    struct cupace_err err;

    ck_assert_int_eq(run_backend(backend, extra, &r, &err), -1);
    ck_assert_msg(strstr(err.msg, n1) && strstr(err.msg, n2), "'%s' lacks '%s' or '%s'", err.msg,
                  n1, n2);
}

START_TEST(each_bad_stage_plugin_is_refused)
{
    backend_refused("stage_bad_abi", "", "stage_bad_abi.so", "stage ABI 2");
    backend_refused("stage_short", "", "stage_short.so", "is 16 bytes");
    backend_refused("stage_missing_op", "", "stage_missing_op", "required op kernel");
    backend_refused("stage_misnamed", "", "calls itself 'other_name'", "NAME.so");
    backend_refused("stage_init_fails", "", "init failed", "no accelerator here");
    backend_refused("no_symbol", "", "no symbol 'cupace_stages_entry'", "not a cupace stage plugin");
    backend_refused("fixed", "", "no symbol 'cupace_stages_entry'", "fixed.so");
    backend_refused("nowhere_to_be_found", "", "stage plugin 'nowhere_to_be_found'", "no nowhere");
    backend_refused("stage_good", "[stages.stage_good]\nfail_indx = 2\n", "[stages.stage_good] fail_indx",
                    "unknown key: stage plugin 'stage_good' never asked for it");
    backend_refused("stage_good", "[stages.stage_good]\nsleep_scale = lots\n",
                    "[stages.stage_good] sleep_scale", "expected");
    /* keys for stages that do not run would be ignored: refused, with where */
    backend_refused("stage_good", "[stages.stage_god]\nfail_index = 2\n", "test.ini:16: [stages.stage_god]",
                    "the stages are 'stage_good'");
    backend_refused("emulated", "[stages.prover]\nk = 1\n", "test.ini:16: [stages.prover]",
                    "the built-in 'emulated'");
    backend_refused("emulated", "[stages.emulated]\nk = 1\n", "test.ini:16: [stages.emulated]",
                    "the built-in stages 'emulated' (asked for) take no keys");
}
END_TEST

/* A name that is a path is refused by the configuration, before any file is opened. */
START_TEST(a_backend_that_is_a_path_is_refused)
{
    struct cupace_err err;

    ck_assert_ptr_null(tu_config("[engine]\nbackend = ../x/stage_good\n", &err));
    ck_assert_msg(strstr(err.msg, "backend") && strstr(err.msg, "stage plugin's name"), "%s",
                  err.msg);
    ck_assert_ptr_null(tu_config("[stages.a/b]\nk = 1\n", &err));
    ck_assert_msg(strstr(err.msg, "not a stage plugin name"), "%s", err.msg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("stages");
    TCase *tc = tcase_create("stages");

    tcase_add_test(tc, layout_is_pinned);
    tcase_add_test(tc, the_check_refuses_each_fault);
    tcase_add_test(tc, every_op_runs_once_per_partition);
    tcase_add_test(tc, a_failing_op_fails_its_partition_only);
    tcase_add_test(tc, a_failing_worker_setup_ends_the_run);
    tcase_add_test(tc, a_buffer_beyond_partition_memory_is_refused);
    tcase_add_test(tc, a_blocked_op_is_caught_by_the_watchdog);
    tcase_add_test(tc, a_stage_plugin_runs_with_its_keys);
    tcase_add_test(tc, each_bad_stage_plugin_is_refused);
    tcase_add_test(tc, a_backend_that_is_a_path_is_refused);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
