/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* check_arith.c -- time and size arithmetic (issue 8, bug 1): the checked
 * helpers at their edges, each reproduction of the wrapped-time bugs, and a
 * property test: random workloads with extreme durations, speeds, sizes and
 * controller intervals are either refused at load or give a report that is
 * self-consistent (time monotone, means within their maxima, the run ending
 * after its last arrival, every partition accounted for), under wild,
 * fixed, window, proctime and lead, and none but wild and fixed stall. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "pacer_host.h"
#include "result.h"
#include "sim.h"
#include "testutil.h"

#define HORIZON_S ((double)CUPACE_HORIZON_NS / 1e9)

START_TEST(checked_helpers_at_their_edges)
{
    uint64_t r;

    ck_assert_uint_eq(cupace_sat_add(UINT64_MAX - 1, 1), UINT64_MAX);
    ck_assert_uint_eq(cupace_sat_add(UINT64_MAX - 1, 2), UINT64_MAX);
    ck_assert_uint_eq(cupace_sat_add(1ULL << 63, 1ULL << 63), UINT64_MAX);
    ck_assert_uint_eq(cupace_sat_mul(1ULL << 32, 1ULL << 32), UINT64_MAX);
    ck_assert_uint_eq(cupace_sat_mul(1ULL << 31, 1ULL << 32), 1ULL << 63);
    ck_assert(cupace_add_overflows(UINT64_MAX, 1, &r));
    ck_assert(!cupace_add_overflows(UINT64_MAX - 1, 1, &r) && r == UINT64_MAX);
    ck_assert(cupace_mul_overflows(3, 1ULL << 63, &r));
    ck_assert_uint_eq(cupace_ns_from_double(-1), 0);
    ck_assert_uint_eq(cupace_ns_from_double(NAN), 0);
    ck_assert_uint_eq(cupace_ns_from_double(2.5), 3);
    ck_assert_uint_eq(cupace_ns_from_double(1e18), 1000000000000000000ULL);
    ck_assert_uint_eq(cupace_ns_from_double((double)CUPACE_HORIZON_NS), CUPACE_HORIZON_NS);
    ck_assert_uint_eq(cupace_ns_from_double(1e19), CUPACE_BEYOND_NS);
    ck_assert_uint_eq(cupace_ns_from_double(INFINITY), CUPACE_BEYOND_NS);
    ck_assert_uint_eq(cupace_time_after(CUPACE_HORIZON_NS, 0), CUPACE_HORIZON_NS);
    ck_assert_uint_eq(cupace_time_after(CUPACE_HORIZON_NS, 1), CUPACE_BEYOND_NS);
    ck_assert_uint_eq(cupace_time_after(1, UINT64_MAX), CUPACE_BEYOND_NS);
}
END_TEST

static void expect_refused(const char *ini, const char *n1, const char *n2)
{
    struct cupace_err err = { "" };
    struct cupace_config *cfg = tu_config(ini, &err);

    ck_assert_msg(cfg == NULL, "accepted: %s", ini);
    ck_assert_msg(strstr(err.msg, n1) && (!n2 || strstr(err.msg, n2)), "'%s'/'%s' not in '%s'",
                  n1, n2 ? n2 : "", err.msg);
}

/* The reproductions of bug 1: each is refused, naming file, line and key. */
START_TEST(wrapping_workloads_are_refused_at_load)
{
    expect_refused("[workload]\njobs = 1\npartitions_per_job = 1\nsynth_time = 5000000h\n",
                   "test.ini:4:", "synth_time");
    expect_refused("[workload]\njobs = 100000\npartitions_per_job = 1000\ngpu_kernel = 1000h\n",
                   "gpu_kernel", "horizon");
    expect_refused("[engine]\ndevices = 2\n[workload]\ngpu_kernel = 100000h\n"
                   "device_speed = 1, 1e-6\n", "gpu_kernel", "horizon");
    expect_refused("[workload]\ndevice_speed = 1e-300\n", "test.ini:2:", "device_speed");
    expect_refused("[workload]\narrival = poisson\njobs = 10000000\npartitions_per_job = 1\n"
                   "interarrival = 100000h\n", "test.ini:5:", "interarrival");
    tu_write("far.csv", "arrival,partitions\n0,1\n1.8e10,2\n");
    expect_refused("[workload]\narrival = trace\ntrace = far.csv\n", "far.csv:3:", "arrival");
    tu_write("far2.csv", "arrival,partitions\n0,1\n5000000h,2\n");
    expect_refused("[workload]\narrival = trace\ntrace = far2.csv\n", "far2.csv:3:", "horizon");
    /* a row's own synth_time past it: the trace is named, not the config's synth_time */
    tu_write("far3.csv", "arrival,partitions,synth_time\n0,2,1s\n5,1,600000h\n");
    expect_refused("[workload]\nsynth_time = 1s\narrival = trace\ntrace = far3.csv\n",
                   "test.ini:4: [workload] trace:", "a row's synth_time of far3.csv");
}
END_TEST

/* A workload that only a change entry takes past the horizon is refused
 * at change, where it was set (its line, or the --set text), quoting the
 * entry: the key it changes may not be set anywhere (it once named
 * gpu_kernel with no line, or a line of the other's). */
START_TEST(a_change_past_the_horizon_names_the_change_entry)
{
    const char *file = tu_write("two.ini", "[workload]\njobs = 2\n");
    const char *sets[] = { "workload.change=10s:gpu_prep=1s, 0s:synth_time=1000000h" };
    struct cupace_err err = { "" };

    expect_refused("[workload]\njobs = 2\nchange = 10s:contention=2, 20s:gpu_kernel=1000000h\n",
                   "test.ini:3: [workload] change: entry 2, '20s:gpu_kernel=1000000h': ", "horizon");
    expect_refused("[workload]\njobs = 2\nchange = 10s:device_speed=1e-6\ngpu_kernel = 1000h\n",
                   "test.ini:3: [workload] change: entry 1, '10s:device_speed=1e-6': ", "horizon");
    /* past it without the change: the key itself is at fault */
    expect_refused("[workload]\njobs = 2\ngpu_kernel = 1000000h\nchange = 10s:contention=2\n",
                   "test.ini:3: [workload] gpu_kernel: ", "horizon");
    ck_assert_ptr_null(cupace_config_load(file, sets, 1, &err));
    ck_assert_msg(strstr(err.msg, "--set 'workload.change=10s:gpu_prep=1s, 0s:synth_time=1000000h': "
                                  "[workload] change: entry 2, '0s:synth_time=1000000h': ") &&
                  strstr(err.msg, "horizon"), "%s", err.msg);
}
END_TEST

/* Poisson arrivals: the load check bounds the last arrival by a tail of
 * its gamma, not by its mean, which a long stream passes on about one
 * seed in two.  1280 jobs 1000 h apart end just short of the horizon on
 * average and were accepted, then stopped at the horizon, partitions never
 * dispatched; now refused at interarrival.  What is accepted runs whole. */
START_TEST(poisson_arrivals_accepted_stay_within_the_horizon)
{
    static const char body[] = "[engine]\nseed = %u\n[workload]\narrival = poisson\n"
                               "interarrival = 1000h\njobs = %u\npartitions_per_job = 2\n"
                               "synth_time = 30s\nsynth_cv = 0\ngpu_cv = 0\n";
    char ini[512];

    snprintf(ini, sizeof ini, body, 1u, 1280u);
    expect_refused(ini, "test.ini:5: [workload] interarrival: ", "once in 10^12");
    for (unsigned seed = 1; seed <= 6; seed++) {
        struct cupace_config *cfg;
        struct cupace_result r;

        snprintf(ini, sizeof ini, body, seed, 1000u);
        cfg = tu_config_with_plugins(ini);
        tu_run_cfg(cfg, "proctime", &r);
        ck_assert_msg(r.invariants_ok && r.completed == r.partitions, "seed %u: %s, %llu of %llu",
                      seed, r.broken ? r.broken : "ok", (unsigned long long)r.completed,
                      (unsigned long long)r.partitions);
        cupace_result_free(&r);
        cupace_config_free(cfg);
    }
}
END_TEST

/* Runs cfg under LABEL with a sample at every event. */
static void run_sampled(struct cupace_config *cfg, const char *label, struct cupace_result *res)
{
    struct cupace_run_opts opts = { .record_series = 1 };

    tu_run_cfg_opts(cfg, label, &opts, res);
}

static int above(double mean, double max)
{
    return mean > max * (1 + 1e-9) + 1e-9;
}

/* What every report must satisfy, checked here without the engine's own
 * checker; `what` names the workload in a failure. */
static void assert_self_consistent(const struct cupace_result *r, const char *what)
{
    ck_assert_msg(r->invariants_ok || (r->broken && strstr(r->broken, "horizon")),
                  "%s: %s", what, r->broken ? r->broken : "invariants broke");
    ck_assert_msg(r->completed + r->failed + r->never_dispatched <= r->partitions, "%s", what);
    ck_assert_msg(r->dispatched + r->never_dispatched == r->partitions, "%s", what);
    if (r->invariants_ok && !r->stalled)
        ck_assert_msg(r->completed + r->failed == r->partitions, "%s: %llu + %llu of %llu", what,
                      (unsigned long long)r->completed, (unsigned long long)r->failed,
                      (unsigned long long)r->partitions);
    ck_assert_msg(isfinite(r->makespan_s) && r->makespan_s >= 0 && r->makespan_s <= HORIZON_S,
                  "%s: makespan %g", what, r->makespan_s);
    ck_assert_msg(!above(r->waiting_mean, (double)r->waiting_max), "%s: waiting %g > %llu", what,
                  r->waiting_mean, (unsigned long long)r->waiting_max);
    ck_assert_msg(!above(r->in_synthesis_mean, (double)r->in_synthesis_max) || r->stalled ||
                  !r->invariants_ok, "%s: in synthesis %g > %llu", what, r->in_synthesis_mean,
                  (unsigned long long)r->in_synthesis_max);
    ck_assert_msg(!above(r->mem_mean, (double)r->mem_peak) || r->stalled || !r->invariants_ok,
                  "%s: memory %g > %llu", what, r->mem_mean, (unsigned long long)r->mem_peak);
    ck_assert_msg(r->mem_peak <= r->mem_budget, "%s", what);
    if (r->invariants_ok && !r->stalled)
        ck_assert_msg(!above(r->job_latency.max, r->makespan_s), "%s: a job took %g s of a %g s "
                      "run", what, r->job_latency.max, r->makespan_s);
    for (size_t i = 1; i < r->nseries; i++)
        ck_assert_msg(r->series[i].t_s >= r->series[i - 1].t_s, "%s: time went back at sample "
                      "%zu: %.17g after %.17g", what, i, r->series[i].t_s, r->series[i - 1].t_s);
    for (size_t i = 0; i < r->nseries; i++)
        ck_assert_msg(r->series[i].t_s <= HORIZON_S && r->series[i].mem_reserved <= r->mem_budget,
                      "%s: sample %zu out of bounds", what, i);
}

/* A controller's interval of 2^63 ns gave a mean above its maximum; now it
 * can never come due, which is a hold: the run stalls, and says so. */
START_TEST(a_huge_interval_is_a_hold)
{
    static const char *const intervals[] = { "2562047h", "5124094h", "1281023h" };

    for (unsigned i = 0; i < 3; i++) {
        char body[512];
        struct cupace_config *cfg;
        struct cupace_result r;

        snprintf(body, sizeof body, "[pacer.f]\nplugin = fixed\ninterval = %s\n"
                 "[workload]\njobs = 2\npartitions_per_job = 3\n", intervals[i]);
        cfg = tu_config_with_plugins(body);
        run_sampled(cfg, "f", &r);
        assert_self_consistent(&r, intervals[i]);
        ck_assert_msg(r.stalled || (r.completed == 6), "%s", intervals[i]);
        ck_assert_uint_ge(r.dispatched, 1);
        cupace_result_free(&r);
        cupace_config_free(cfg);
    }
}
END_TEST

/* An interval that comes due just short of the horizon, with work still to
 * do: the partition it dispatched there ran past the horizon, was lost
 * from the report (dispatched 2, completed 1, failed 0, never dispatched
 * 0), and the report blamed a duration's tail at cv 0.  Now it is a hold:
 * a stall, every partition accounted for. */
START_TEST(an_interval_due_just_short_of_the_horizon_is_a_hold)
{
    static const char *const pacers[][2] = {
        { "fixed", "interval = 4611686000s\n" },
        { "proctime", "min_interval = 4611686000s\nmax_interval = 4611686000s\n" },
    };

    for (unsigned i = 0; i < 2; i++) {
        char body[1024];
        struct cupace_config *cfg;
        struct cupace_result r;

        snprintf(body, sizeof body, "[engine]\nworkers_per_device = 1\nsynth_workers = 1\n"
                 "memory_budget = 100GiB\n[pacer.p]\nplugin = %s\n%s"
                 "[workload]\njobs = 1\npartitions_per_job = 2\npartition_memory = 10GiB\n"
                 "synth_time = 30s\nsynth_cv = 0\ngpu_cv = 0\ngpu_prep = 1s\ngpu_kernel = 2s\n"
                 "gpu_epilogue = 3s\ncpu_slots = 1\n", pacers[i][0], pacers[i][1]);
        cfg = tu_config_with_plugins(body);
        run_sampled(cfg, "p", &r);
        assert_self_consistent(&r, pacers[i][0]);
        ck_assert_msg(r.invariants_ok, "%s: %s", pacers[i][0], r.broken ? r.broken : "");
        ck_assert_msg(r.stalled, "%s did not stall", pacers[i][0]);
        ck_assert_uint_eq(r.dispatched, 1);
        ck_assert_uint_eq(r.completed, 1);
        ck_assert_uint_eq(r.never_dispatched, 1);
        ck_assert_msg(r.makespan_s == 36, "%s: makespan %g", pacers[i][0], r.makespan_s);
        cupace_result_free(&r);
        cupace_config_free(cfg);
    }
}
END_TEST

static uint64_t next(uint64_t *x)
{
    *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
    return *x >> 33;
}

#define PICK(x, a) (a[next(x) % (sizeof a / sizeof a[0])])

/* A duration: one in eight from the extremes, the rest ordinary, so that
 * about as many workloads run as are refused. */
static const char *duration(uint64_t *x)
{
    static const char *const ordinary[] = { "0", "1ns", "1ms", "1s", "30s", "1h" };
    static const char *const extreme[] = { "100000h", "1000000h", "1281023h", "2562047h",
                                           "5000000h" };

    return next(x) % 8 ? PICK(x, ordinary) : PICK(x, extreme);
}

START_TEST(extreme_workloads_are_refused_or_consistent)
{
    static const char *const sizes[] = { "1B", "1KiB", "14GiB", "14GiB", "1000000TiB",
                                         "16000000TiB", "16000000TiB" };
    static const char *const speeds[] = { "1e-6", "0.001", "1", "1e6" };
    static const char *const contention[] = { "0.001", "1", "1000" };
    static const char *const cvs[] = { "0", "0.15", "10" };
    static const char *const dists[] = { "fixed", "lognormal", "gamma", "exponential" };
    static const char *const arrivals[] = { "backlog", "poisson", "burst", "trace" };
    static const char *const rows[] = { "0", "1s", "1000000h", "1.4e9", "4.6e9", "1e-9" };
    static const char *const pacers[] = { "wild", "wild", "fixed", "window", "proctime", "lead" };
    uint64_t x = 2026;
    unsigned refused = 0, ran = 0, beyond = 0, stalled = 0;

    for (int i = 0; i < 400; i++) {
        char body[4096], csv[256], what[64];
        const char *pacer = PICK(&x, pacers);
        struct cupace_err err;
        struct cupace_config *cfg;
        struct cupace_result r;

        /* one draw per statement: the order in which a call's arguments
         * are evaluated is unspecified (gcc and clang differ), and the
         * draws must be the same under any compiler */
        const char *row0 = PICK(&x, rows);
        const char *row1 = PICK(&x, rows);
        const char *row1_synth = duration(&x);
        const char *row2 = PICK(&x, rows);
        unsigned devices = 1 + (unsigned)(next(&x) % 2);
        unsigned workers = 1 + (unsigned)(next(&x) % 2);
        unsigned synth_workers = 1 + (unsigned)(next(&x) % 4);
        const char *budget = PICK(&x, sizes);
        const char *interval = duration(&x);
        unsigned jobs = 1 + (unsigned)(next(&x) % 4);
        unsigned per_job = 1 + (unsigned)(next(&x) % 3);
        const char *arrival = PICK(&x, arrivals);
        const char *interarrival = duration(&x);
        const char *burst_every = duration(&x);
        const char *memory = PICK(&x, sizes);
        const char *synth = duration(&x);
        const char *prep = duration(&x);
        const char *kernel = duration(&x);
        const char *epilogue = duration(&x);
        const char *synth_cv = PICK(&x, cvs);
        const char *gpu_cv = PICK(&x, cvs);
        const char *synth_dist = PICK(&x, dists);
        const char *gpu_dist = PICK(&x, dists);
        unsigned cpu_slots = 1 + (unsigned)(next(&x) % 3);
        const char *speed = PICK(&x, speeds);
        const char *contend = PICK(&x, contention);
        const char *fail_rate = next(&x) % 3 ? "0" : "0.3";
        const char *change_at = duration(&x);
        const char *change_kernel = duration(&x);

        snprintf(csv, sizeof csv, "arrival,partitions,synth_time\n%s,2,\n%s,1,%s\n%s,3,\n", row0,
                 row1, row1_synth, row2);
        tu_write("p.csv", csv);
        snprintf(body, sizeof body,
                 "[engine]\ndevices = %u\nworkers_per_device = %u\nsynth_workers = %u\n"
                 "memory_budget = %s\nseed = %d\n"
                 "[pacer.wild]\nseed = %d\n[pacer.fixed]\ninterval = %s\n"
                 "[workload]\njobs = %u\npartitions_per_job = %u\narrival = %s\ntrace = p.csv\n"
                 "interarrival = %s\nburst_jobs = 2\nburst_every = %s\npartition_memory = %s\n"
                 "synth_time = %s\ngpu_prep = %s\ngpu_kernel = %s\ngpu_epilogue = %s\n"
                 "synth_cv = %s\ngpu_cv = %s\nsynth_dist = %s\ngpu_dist = %s\ncpu_slots = %u\n"
                 "device_speed = %s\ncontention = %s\nfail_rate = %s\nchange = %s:gpu_kernel=%s\n",
                 devices, workers, synth_workers, budget, i, i, interval, jobs, per_job, arrival,
                 interarrival, burst_every, memory, synth, prep, kernel, epilogue, synth_cv, gpu_cv,
                 synth_dist, gpu_dist, cpu_slots, speed, contend, fail_rate, change_at,
                 change_kernel);
        cfg = tu_config(body, &err);
        if (!cfg) {
            ck_assert_msg(strstr(err.msg, "test.ini") || strstr(err.msg, "p.csv"),
                          "run %d refused without naming its file: %s", i, err.msg);
            refused++;
            continue;
        }
        free(cfg->pacer_path);
        cfg->pacer_path = NULL;
        {
            struct cupace_config *with = tu_config_with_plugins(body);
            cupace_config_free(cfg);
            cfg = with;
        }
        snprintf(what, sizeof what, "run %d (%s)", i, pacer);
        run_sampled(cfg, pacer, &r);
        assert_self_consistent(&r, what);
        ran++;
        beyond += !r.invariants_ok;
        stalled += r.stalled;
        /* wild holds at random and fixed for as long as it is told to; the
         * controllers that pace by the signals never leave work pending
         * with nothing in flight */
        ck_assert_msg(!r.stalled || !strcmp(pacer, "wild") || !strcmp(pacer, "fixed"),
                      "%s stalled", what);
        cupace_result_free(&r);
        cupace_config_free(cfg);
    }
    /* the draws must exercise both outcomes, or the test proves nothing */
    ck_assert_msg(refused >= 40 && ran >= 40, "refused %u, ran %u", refused, ran);
    fprintf(stderr, "check_arith: %u refused at load, %u ran (%u stopped at the horizon, "
            "%u stalled)\n", refused, ran, beyond, stalled);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("arith");
    TCase *t = tcase_create("arith");

    tcase_set_timeout(t, 120);
    tcase_add_test(t, checked_helpers_at_their_edges);
    tcase_add_test(t, wrapping_workloads_are_refused_at_load);
    tcase_add_test(t, a_change_past_the_horizon_names_the_change_entry);
    tcase_add_test(t, poisson_arrivals_accepted_stay_within_the_horizon);
    tcase_add_test(t, a_huge_interval_is_a_hold);
    tcase_add_test(t, an_interval_due_just_short_of_the_horizon_is_a_hold);
    tcase_add_test(t, extreme_workloads_are_refused_or_consistent);
    suite_add_tcase(s, t);
    return tu_run(s);
}
