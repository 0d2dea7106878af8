/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* check_realtime.c -- the real-time engine with the emulated backend:
 * agreement with the simulator, fault accounting, interrupts, stalls. */
#include "config.h"

#include <check.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pacer_host.h"
#include "realtime.h"
#include "sim.h"
#include "testutil.h"

/* A PoRep-like workload at 1/100 of its real durations: long enough that
 * thread wake-ups (tens of us, ms on a loaded machine) stay small beside
 * 25 ms kernels. */
#define POREP_SCALED                                                                          \
    "[engine]\nmode = realtime\nbackend = emulated\nworkers_per_device = 2\nsynth_workers = 18\n" \
    "memory_budget = 314GiB\n"                                                                  \
    "[workload]\njobs = 12\npartitions_per_job = 10\nrelease_at_kernel = 13GiB\n"              \
    "time_scale = 0.01\n"

START_TEST(realtime_agrees_with_the_simulator)
{
    const char *labels[] = { "proctime", "fixed" };

    for (int i = 0; i < 2; i++) {
        struct cupace_config *cfg = tu_config_with_plugins(POREP_SCALED);
        struct cupace_result rt, sim;
        double predicted;

        tu_run_cfg(cfg, labels[i], &rt);
        cfg->engine.mode = CUPACE_MODE_SIM;
        tu_run_cfg(cfg, labels[i], &sim);
        predicted = sim.makespan_s * 0.01;
        ck_assert_msg(fabs(rt.makespan_s - predicted) <= 0.15 * predicted,
                      "%s: realtime %.3f s, simulator %.3f s", labels[i], rt.makespan_s, predicted);
        ck_assert_uint_eq(rt.completed, 120);
        ck_assert(rt.invariants_ok);
        ck_assert(rt.has_lateness);
        ck_assert_uint_le(rt.mem_peak, 314ULL << 30);
        cupace_config_free(cfg);
    }
}
END_TEST

START_TEST(faults_account_for_every_partition)
{
    struct cupace_config *cfg = tu_config_with_plugins(POREP_SCALED "fail_rate = 0.25\n");
    struct cupace_result r;

    tu_run_cfg(cfg, "recorder", &r);
    ck_assert_uint_gt(r.failed, 0);
    ck_assert_uint_eq(r.completed + r.failed, 120);
    ck_assert_uint_eq(r.jobs_completed + r.jobs_failed, 12);
    ck_assert(r.invariants_ok);
    ck_assert_msg(strstr(r.pacer_state, "broken=0"), "%s", r.pacer_state);
    cupace_config_free(cfg);
}
END_TEST

/* Zero-length stages: work comes faster than threads wake, so the crews
 * pass it on in batches (and the device lock is taken and given at once);
 * every partition must still be accounted for, and the controller must
 * see every completion with its time. */
START_TEST(zero_length_work_in_batches_is_all_accounted)
{
    static const char *exclusive[] = { "no", "yes" };

    for (int i = 0; i < 2; i++) {
        char body[640];
        struct cupace_config *cfg;
        struct cupace_result r;

        snprintf(body, sizeof body,
                 "[engine]\nmode = realtime\nbackend = emulated\ndevices = 2\n"
                 "workers_per_device = 2\nsynth_workers = 32\nmemory_budget = 1TiB\n"
                 "[workload]\njobs = 300\npartitions_per_job = 10\nsynth_time = 0\n"
                 "gpu_prep = 0\ngpu_kernel = 0\ngpu_epilogue = 0\ncpu_slots = 32\n"
                 "fail_rate = 0.05\ngpu_exclusive = %s\n", exclusive[i]);
        cfg = tu_config_with_plugins(body);
        tu_run_cfg(cfg, "recorder", &r);
        ck_assert_uint_eq(r.completed + r.failed, 3000);
        ck_assert_uint_gt(r.failed, 0);
        ck_assert_uint_eq(r.jobs_completed + r.jobs_failed, 300);
        ck_assert(r.invariants_ok);
        ck_assert_msg(strstr(r.pacer_state, "broken=0"), "%s", r.pacer_state);
        cupace_config_free(cfg);
    }
}
END_TEST

/* fail_at in real time: one partition, failing at the end of each stage in
 * turn (synthesis 100 ms, prep 50 ms, kernel 20 ms, epilogue 300 ms once
 * scaled).  Sleeps never end early, so each run lasts at least up to the
 * end of its stage; only a kernel that ran keeps the device busy. */
START_TEST(fail_at_fails_the_partition_at_its_stage)
{
    static const struct {
        const char *stage;
        double min_s;
        int kernel_ran;
    } cases[] = { { "synth", 0.10, 0 }, { "prep", 0.15, 0 }, { "kernel", 0.17, 1 },
                  { "epilogue", 0.47, 1 } };

    for (unsigned i = 0; i < 4; i++) {
        char body[512];
        struct cupace_config *cfg;
        struct cupace_result r;

        snprintf(body, sizeof body,
                 "[engine]\nmode = realtime\nbackend = emulated\nworkers_per_device = 1\n"
                 "[workload]\njobs = 1\npartitions_per_job = 1\nsynth_time = 10s\n"
                 "gpu_prep = 5s\ngpu_kernel = 2s\ngpu_epilogue = 30s\nsynth_cv = 0\ngpu_cv = 0\n"
                 "time_scale = 0.01\nfail_at = 0:0:%s\n", cases[i].stage);
        cfg = tu_config_with_plugins(body);
        tu_run_cfg(cfg, "recorder", &r);
        ck_assert_msg(r.failed == 1 && r.completed == 0 && r.jobs_failed == 1, "%s: %llu failed",
                      cases[i].stage, (unsigned long long)r.failed);
        ck_assert_msg(r.makespan_s >= cases[i].min_s, "%s: ended after %.3f s", cases[i].stage,
                      r.makespan_s);
        ck_assert_msg((r.gpu_busy_fraction > 0) == cases[i].kernel_ran, "%s: GPU busy %.3f",
                      cases[i].stage, r.gpu_busy_fraction);
        ck_assert(r.invariants_ok);
        ck_assert_msg(strstr(r.pacer_state, "broken=0"), "%s", r.pacer_state);
        cupace_config_free(cfg);
    }
}
END_TEST

/* Among 3000 zero-length partitions handed on in batches, exactly the four
 * named fail, one at each stage, and everything else completes. */
START_TEST(fail_at_accounts_for_every_partition)
{
    struct cupace_config *cfg = tu_config_with_plugins(
        "[engine]\nmode = realtime\nbackend = emulated\ndevices = 2\nsynth_workers = 32\n"
        "memory_budget = 1TiB\n"
        "[workload]\njobs = 300\npartitions_per_job = 10\nsynth_time = 0\ngpu_prep = 0\n"
        "gpu_kernel = 0\ngpu_epilogue = 0\ncpu_slots = 32\n"
        "fail_at = 0:0:synth, 7:3:prep, 150:9:kernel, 299:5:epilogue\n");
    struct cupace_result r;

    tu_run_cfg(cfg, "recorder", &r);
    ck_assert_uint_eq(r.failed, 4);
    ck_assert_uint_eq(r.completed, 2996);
    ck_assert_uint_eq(r.jobs_failed, 4);
    ck_assert_uint_eq(r.jobs_completed, 296);
    ck_assert(r.invariants_ok);
    ck_assert_msg(strstr(r.pacer_state, "broken=0"), "%s", r.pacer_state);
    cupace_config_free(cfg);
}
END_TEST

/* Stops the run `count` times after `delay_ms` from another thread, as the
 * command's signal watcher does on SIGINT: first draining, then cancelling. */
struct interrupter {
    struct cupace_rt *rt;
    int count;
    long delay_ms;
    uint64_t first_in_flight;   /* what the first (draining) stop found in flight */
};

static void *interrupt_later(void *arg)
{
    struct interrupter *it = arg;
    struct timespec ts = { it->delay_ms / 1000, (it->delay_ms % 1000) * 1000000L };

    for (int i = 0; i < it->count; i++) {
        nanosleep(&ts, NULL);
        uint64_t in_flight = cupace_rt_stop(it->rt, i == 0 ? CUPACE_RT_DRAIN : CUPACE_RT_CANCEL);
        if (i == 0)
            it->first_in_flight = in_flight;
    }
    return NULL;
}

static void interrupted_run(int stops, struct cupace_result *r, double *wall, uint64_t *first_in_flight)
{
    /* 4000 partitions at 30 ms of synthesis each: minutes if not stopped */
    struct cupace_config *cfg = tu_config_with_plugins(
        "[engine]\nmode = realtime\nbackend = emulated\nsynth_workers = 8\nmemory_budget = 1TiB\n"
        "[workload]\njobs = 400\npartitions_per_job = 10\nsynth_time = 30ms\ngpu_kernel = 20ms\n"
        "gpu_prep = 0\ngpu_epilogue = 0\nsynth_cv = 0\ngpu_cv = 0\n");
    struct interrupter it = { NULL, stops, 150, 0 };
    struct cupace_pacer_path path;
    struct cupace_pacer_instance inst;
    struct cupace_run_opts opts = { 0 };
    struct cupace_err err;
    pthread_t t;
    struct timespec a, b;

    memset(r, 0, sizeof *r);
    cupace_pacer_path_init(&path, cfg);
    ck_assert_msg(cupace_pacer_instance_create(&inst, cfg, &path, "fixed", &err) == 0, "%s", err.msg);
    cupace_pacer_path_free(&path);
    it.rt = cupace_rt_create(cfg, &inst, &opts, &err);
    ck_assert_msg(it.rt != NULL, "%s", err.msg);
    clock_gettime(CLOCK_MONOTONIC, &a);
    pthread_create(&t, NULL, interrupt_later, &it);
    ck_assert_msg(cupace_rt_run(it.rt, r, &err) == 0, "%s", err.msg);
    pthread_join(t, NULL);
    *first_in_flight = it.first_in_flight;
    clock_gettime(CLOCK_MONOTONIC, &b);
    *wall = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    cupace_rt_destroy(it.rt);
    cupace_pacer_instance_destroy(&inst);
    cupace_config_free(cfg);
}

START_TEST(first_interrupt_drains_what_is_in_flight)
{
    struct cupace_result r;
    double wall;
    uint64_t in_flight;

    interrupted_run(1, &r, &wall, &in_flight);
    ck_assert(r.interrupted);
    ck_assert_msg(wall < 5.0, "took %.2f s", wall);
    /* what was in flight at the stop finished (how much that was depends on
     * how far a loaded machine got in 150 ms) */
    ck_assert_uint_ge(r.completed, in_flight);
    ck_assert_uint_eq(r.completed, r.dispatched);
    ck_assert_uint_eq(r.failed, 0);
    ck_assert_uint_gt(r.never_dispatched, 0);
    ck_assert_uint_eq(r.completed + r.failed + r.never_dispatched, 4000);
    ck_assert(r.invariants_ok);
}
END_TEST

START_TEST(second_interrupt_cancels_in_flight_work)
{
    struct cupace_result r;
    double wall;
    uint64_t in_flight;

    interrupted_run(2, &r, &wall, &in_flight);
    ck_assert(r.interrupted);
    ck_assert_msg(wall < 5.0, "took %.2f s", wall);
    ck_assert_uint_eq(r.completed + r.failed + r.never_dispatched, 4000);
    ck_assert_uint_eq(r.dispatched, r.completed + r.failed);
    ck_assert(r.invariants_ok);
}
END_TEST

START_TEST(a_holding_controller_stalls_at_once)
{
    struct cupace_config *cfg = tu_config_with_plugins(
        "[engine]\nmode = realtime\n[pacer.holdall]\nburst = 2\n"
        "[workload]\njobs = 1\ntime_scale = 0.001\n");
    struct cupace_result r;

    tu_run_cfg(cfg, "holdall", &r);
    ck_assert(r.stalled);
    ck_assert_uint_eq(r.completed, 2);
    ck_assert_msg(strstr(r.stall_reason, "holdall") && strstr(r.stall_reason, "8 partitions never"),
                  "%s", r.stall_reason);
    cupace_config_free(cfg);
}
END_TEST

START_TEST(arrivals_and_change_points_are_scaled)
{
    struct cupace_config *cfg = tu_config_with_plugins(
        "[engine]\nmode = realtime\nworkers_per_device = 1\n"
        "[workload]\njobs = 3\npartitions_per_job = 1\narrival = burst\nburst_jobs = 1\n"
        "burst_every = 100s\nsynth_time = 10s\ngpu_prep = 0\ngpu_kernel = 10s\ngpu_epilogue = 0\n"
        "synth_cv = 0\ngpu_cv = 0\ntime_scale = 0.002\n");
    struct cupace_result r;

    /* arrivals at 0, 0.2, 0.4 s; the last done 40 ms later: 0.44 s */
    tu_run_cfg(cfg, "fixed", &r);
    ck_assert_msg(fabs(r.makespan_s - 0.44) < 0.06, "%.3f", r.makespan_s);
    ck_assert_msg(r.job_latency.max < 0.08, "%.3f", r.job_latency.max);
    cupace_config_free(cfg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("realtime");
    TCase *tc = tcase_create("emulated");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, realtime_agrees_with_the_simulator);
    tcase_add_test(tc, faults_account_for_every_partition);
    tcase_add_test(tc, zero_length_work_in_batches_is_all_accounted);
    tcase_add_test(tc, fail_at_fails_the_partition_at_its_stage);
    tcase_add_test(tc, fail_at_accounts_for_every_partition);
    tcase_add_test(tc, first_interrupt_drains_what_is_in_flight);
    tcase_add_test(tc, second_interrupt_cancels_in_flight_work);
    tcase_add_test(tc, a_holding_controller_stalls_at_once);
    tcase_add_test(tc, arrivals_and_change_points_are_scaled);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
