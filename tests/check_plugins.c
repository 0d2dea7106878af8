/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* check_plugins.c -- the shipped controllers' math, driven by synthetic
 * signal sequences through the real .so files and the real loader. */
#include "config.h"

#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pacer_host.h"
#include "ps_model.h"
#include "testutil.h"

struct ctl {
    struct cupace_config *cfg;
    struct cupace_pacer_instance inst;
};

static void ctl_open(struct ctl *c, const char *label, const char *body)
{
    struct cupace_pacer_path path;
    struct cupace_err err;

    c->cfg = tu_config_with_plugins(body);
    cupace_pacer_path_init(&path, c->cfg);
    ck_assert_msg(cupace_pacer_instance_create(&c->inst, c->cfg, &path, label, &err) == 0, "%s",
                  err.msg);
    cupace_pacer_path_free(&path);
}

static int ctl_refused(const char *label, const char *body, const char *needle)
{
    struct cupace_pacer_path path;
    struct cupace_pacer_instance inst;
    struct cupace_err err;
    struct cupace_config *cfg = tu_config_with_plugins(body);
    int rc;

    cupace_pacer_path_init(&path, cfg);
    rc = cupace_pacer_instance_create(&inst, cfg, &path, label, &err);
    cupace_pacer_path_free(&path);
    cupace_config_free(cfg);
    ck_assert_msg(rc < 0 && strstr(err.msg, needle), "rc %d, '%s' not in '%s'", rc, needle, err.msg);
    return 1;
}

static void ctl_close(struct ctl *c)
{
    cupace_pacer_instance_destroy(&c->inst);
    cupace_config_free(c->cfg);
}

static void update(struct ctl *c, const struct cupace_signals *s)
{
    c->inst.ops->update(c->inst.state, s);
}

static uint64_t interval(struct ctl *c, const struct cupace_signals *s)
{
    return c->inst.ops->interval_ns(c->inst.state, s);
}

/* The value of KEY in the controller's describe() string. */
static double described(struct ctl *c, const char *key)
{
    char buf[512], pat[64];
    const char *p;

    cupace_pacer_instance_describe(&c->inst, buf, sizeof buf);
    snprintf(pat, sizeof pat, "%s=", key);
    p = strstr(buf, pat);
    ck_assert_msg(p != NULL, "no %s in '%s'", key, buf);
    return atof(p + strlen(pat));
}

/* A steady pipeline: two workers each taking PROC ns, synthesis SYNTH ns,
 * the queue held at WAITING; one completion every PROC/2. */
static void steady(struct ctl *c, struct cupace_signals *s, unsigned steps, double proc,
                   double synth, uint64_t waiting)
{
    for (unsigned i = 0; i < steps; i++) {
        s->now_ns += (uint64_t)(proc / 2);
        s->gpu_done++;
        s->gpu_ns_total += (uint64_t)proc;
        s->synth_done++;
        s->synth_ns_total += (uint64_t)synth;
        s->waiting = waiting;
        s->dispatched = s->gpu_done + s->in_synthesis + s->waiting + s->gpu_busy_workers;
        update(c, s);
    }
}

static void init_signals(struct cupace_signals *s, unsigned workers)
{
    memset(s, 0, sizeof *s);
    s->num_devices = 1;
    s->num_gpu_workers = workers;
    s->pending = 1000;
    s->mem_budget = 1ULL << 40;
}

START_TEST(proctime_two_workers_converge_to_half_the_processing_time)
{
    struct ctl c;
    struct cupace_signals s;

    ctl_open(&c, "proctime", "[pacer.proctime]\ntarget = 3\n");
    init_signals(&s, 2);
    s.in_synthesis = 50;        /* 30 s of synthesis / 0.6 s: the pipeline is full */
    s.gpu_busy_workers = 2;
    steady(&c, &s, 200, 1.2e9, 30e9, 3);
    ck_assert_msg(fabs((double)interval(&c, &s) - 0.6e9) < 0.006e9, "interval %llu",
                  (unsigned long long)interval(&c, &s));
    ck_assert_double_eq_tol(described(&c, "proc_s"), 1.2, 1e-6);
    ctl_close(&c);
}
END_TEST

START_TEST(proctime_idle_gap_keeps_the_estimate)
{
    struct ctl c;
    struct cupace_signals s;
    double before;
    uint64_t iv;

    ctl_open(&c, "proctime", "");
    init_signals(&s, 2);
    s.in_synthesis = 50;
    steady(&c, &s, 100, 1.2e9, 30e9, 3);
    before = described(&c, "proc_s");
    iv = interval(&c, &s);
    /* ten idle minutes: nothing pending, nothing completes */
    s.pending = 0;
    s.waiting = 0;
    for (int i = 0; i < 10; i++) {
        s.now_ns += 60000000000ULL;
        update(&c, &s);
    }
    ck_assert_double_eq(described(&c, "proc_s"), before);
    s.pending = 100;
    s.waiting = 3;
    ck_assert_uint_eq(interval(&c, &s), iv);
    ctl_close(&c);
}
END_TEST

START_TEST(proctime_failures_do_not_feed_the_estimate)
{
    struct ctl c;
    struct cupace_signals s;

    ctl_open(&c, "proctime", "");
    init_signals(&s, 2);
    s.in_synthesis = 50;
    steady(&c, &s, 50, 1.2e9, 30e9, 3);
    for (int i = 0; i < 20; i++) {      /* failures: no ns, no completions */
        s.now_ns += 100000000ULL;
        s.failed++;
        update(&c, &s);
    }
    ck_assert_double_eq_tol(described(&c, "proc_s"), 1.2, 1e-6);
    ctl_close(&c);
}
END_TEST

START_TEST(proctime_bootstrap_fills_until_a_completion)
{
    struct ctl c;
    struct cupace_signals s;

    ctl_open(&c, "proctime", "");
    init_signals(&s, 8);
    for (int i = 0; i < 40; i++) {
        s.dispatched++;
        s.in_synthesis++;
        s.now_ns += 1000;
        update(&c, &s);
        ck_assert_uint_eq(interval(&c, &s), 0);
    }
    ctl_close(&c);
}
END_TEST

START_TEST(proctime_pi_speeds_up_on_an_empty_queue_and_slows_on_a_deep_one)
{
    struct ctl c;
    struct cupace_signals s;
    uint64_t empty, deep;

    ctl_open(&c, "proctime", "[pacer.proctime]\nki = 0\n");
    init_signals(&s, 2);
    s.in_synthesis = 50;        /* exactly what one synthesis time of GPU work needs */
    steady(&c, &s, 50, 1.2e9, 30e9, 3);
    s.waiting = 0;
    empty = interval(&c, &s);
    s.waiting = 12;
    deep = interval(&c, &s);
    ck_assert_msg(empty < 600000000ULL && deep > 600000000ULL, "empty %llu deep %llu",
                  (unsigned long long)empty, (unsigned long long)deep);
    /* kp = 0.5, e = 1: 0.6 / 1.5 = 0.4 s */
    ck_assert_msg(llabs((long long)empty - 400000000LL) < 5000000, "%llu", (unsigned long long)empty);
    ctl_close(&c);
}
END_TEST

START_TEST(proctime_integral_is_frozen_while_nothing_is_pending)
{
    struct ctl c;
    struct cupace_signals s;
    double before;

    ctl_open(&c, "proctime", "");
    init_signals(&s, 2);
    s.in_synthesis = 50;
    steady(&c, &s, 20, 1.2e9, 30e9, 3);
    before = described(&c, "integral");
    s.pending = 0;
    s.waiting = 0;
    s.now_ns += 3600000000000ULL;
    update(&c, &s);
    ck_assert_double_eq(described(&c, "integral"), before);
    ctl_close(&c);
}
END_TEST

START_TEST(proctime_fills_a_drained_pipeline_faster_than_the_gpu_rate)
{
    struct ctl c;
    struct cupace_signals s;
    uint64_t full, drained;

    ctl_open(&c, "proctime", "[pacer.proctime]\nki = 0\n");
    init_signals(&s, 2);
    s.in_synthesis = 50;
    steady(&c, &s, 50, 1.2e9, 30e9, 3);
    full = interval(&c, &s);
    s.in_synthesis = 0;         /* after an idle gap: nothing in flight */
    s.waiting = 3;
    drained = interval(&c, &s);
    ck_assert_msg(drained * 2 <= full + 1000, "drained %llu full %llu", (unsigned long long)drained,
                  (unsigned long long)full);
    ctl_close(&c);
}
END_TEST

START_TEST(proctime_clamps_to_min_and_max)
{
    struct ctl c;
    struct cupace_signals s;

    ctl_open(&c, "proctime", "[pacer.proctime]\nmin_interval = 1s\nmax_interval = 2s\n");
    init_signals(&s, 2);
    ck_assert_uint_eq(interval(&c, &s), 1000000000ULL);    /* bootstrap: min_interval */
    s.in_synthesis = 50;
    steady(&c, &s, 50, 1.2e9, 30e9, 3);
    ck_assert_uint_eq(interval(&c, &s), 1000000000ULL);
    steady(&c, &s, 100, 10e9, 30e9, 30);
    ck_assert_uint_eq(interval(&c, &s), 2000000000ULL);
    ctl_close(&c);
}
END_TEST

/* A CPU-bound pipeline under processor sharing: `cpus` CPUs, syntheses of
 * 30 s alone, the GPU (two workers of 1 s) always starved.  The controller
 * decides each second whether in_synthesis may grow (up to 18, the slots). */
static double cpu_bound_run(struct ctl *c, unsigned cpus)
{
    struct cupace_signals s;
    double owed = 0;

    init_signals(&s, 2);
    s.gpu_done = 1;                     /* past the bootstrap */
    s.gpu_ns_total = 1000000000ULL;
    s.synth_done = 1;
    s.synth_ns_total = 30000000000ULL;
    update(c, &s);
    for (int t = 0; t < 3000; t++) {
        double n, S;

        s.now_ns += 1000000000ULL;
        while (s.in_synthesis < 18 && interval(c, &s) != CUPACE_PACE_HOLD) {
            s.in_synthesis++;
            s.dispatched++;
            update(c, &s);
        }
        n = (double)s.in_synthesis;
        S = 30.0 * (n > cpus ? n / cpus : 1.0);
        owed += (n < cpus ? n : cpus) / 30.0;        /* completions this second */
        while (owed >= 1 && s.in_synthesis > 0) {
            owed -= 1;
            s.in_synthesis--;
            s.synth_done++;
            s.synth_ns_total += (uint64_t)(S * 1e9);
            s.gpu_done++;                   /* the GPU takes it at once: waiting stays 0 */
            s.gpu_ns_total += 1000000000ULL;
            update(c, &s);
        }
        update(c, &s);
    }
    return described(c, "cpu_cap");
}

START_TEST(proctime_probes_down_to_the_cpus_it_has)
{
    struct ctl c;
    double cap;

    ctl_open(&c, "proctime", "");
    cap = cpu_bound_run(&c, 6);
    ck_assert_msg(cap >= 4 && cap <= 9, "cap %.2f for 6 CPUs", cap);
    ctl_close(&c);
    ctl_open(&c, "proctime", "");
    cap = cpu_bound_run(&c, 40);    /* never oversubscribed: one probe, then back */
    ck_assert_msg(cap >= 17, "cap %.2f with CPUs to spare", cap);
    ctl_close(&c);
}
END_TEST

START_TEST(intercompletion_require_waiting_never_samples_an_empty_queue)
{
    struct ctl c;
    struct cupace_signals s;

    ctl_open(&c, "stale", "[pacer.stale]\nplugin = intercompletion\nrequire_waiting = yes\n"
                          "target = 4\n");
    init_signals(&s, 2);
    s.gpu_busy_workers = 2;
    for (int i = 0; i < 100; i++) {
        s.now_ns += 600000000ULL;
        s.gpu_done++;
        s.dispatched = s.gpu_done + 2;
        s.waiting = 0;
        update(&c, &s);
    }
    ck_assert_double_eq(described(&c, "samples"), 0);
    ck_assert_double_eq(described(&c, "skipped"), 99);
    /* still bootstrapping: `target` in flight, then hold */
    ck_assert_uint_eq(interval(&c, &s), 0);
    s.dispatched = s.gpu_done + 4;
    ck_assert_uint_eq(interval(&c, &s), CUPACE_PACE_HOLD);
    ctl_close(&c);
}
END_TEST

START_TEST(intercompletion_learns_the_gap_between_completions)
{
    struct ctl c;
    struct cupace_signals s;

    ctl_open(&c, "intercompletion", "[pacer.intercompletion]\ntarget = 2\n");
    init_signals(&s, 2);
    for (int i = 0; i < 100; i++) {
        s.now_ns += 500000000ULL;
        s.gpu_done++;
        s.waiting = 2;
        update(&c, &s);
    }
    ck_assert_double_eq_tol(described(&c, "gap_s"), 0.5, 1e-9);
    ck_assert_msg(llabs((long long)interval(&c, &s) - 500000000LL) < 1000000, "%llu",
                  (unsigned long long)interval(&c, &s));
    /* and an idle gap is taken for a slow GPU: the baseline's flaw */
    s.now_ns += 300000000000ULL;
    s.gpu_done++;
    update(&c, &s);
    ck_assert_msg(described(&c, "gap_s") > 50, "%f", described(&c, "gap_s"));
    ctl_close(&c);
}
END_TEST

START_TEST(window_holds_exactly_window_in_flight)
{
    struct ctl c;
    struct cupace_signals s;

    ctl_open(&c, "window", "[pacer.window]\nwindow = 4\n");
    init_signals(&s, 2);
    for (uint64_t d = 0; d < 4; d++) {
        s.dispatched = d;
        ck_assert_uint_eq(interval(&c, &s), 0);
    }
    s.dispatched = 4;
    ck_assert_uint_eq(interval(&c, &s), CUPACE_PACE_HOLD);
    s.gpu_done = 1;
    ck_assert_uint_eq(interval(&c, &s), 0);
    s.dispatched = 5;
    ck_assert_uint_eq(interval(&c, &s), CUPACE_PACE_HOLD);
    s.failed = 1;               /* a failure frees its place too */
    ck_assert_uint_eq(interval(&c, &s), 0);
    ctl_close(&c);
}
END_TEST

START_TEST(fixed_returns_its_interval)
{
    struct ctl c;
    struct cupace_signals s;

    ctl_open(&c, "slow", "[pacer.slow]\nplugin = fixed\ninterval = 250ms\n");
    init_signals(&s, 2);
    ck_assert_uint_eq(interval(&c, &s), 250000000ULL);
    ctl_close(&c);
    ctl_open(&c, "fixed", "");
    ck_assert_uint_eq(interval(&c, &s), 0);
    ctl_close(&c);
}
END_TEST

START_TEST(controllers_refuse_bad_parameters)
{
    ctl_refused("proctime", "[pacer.proctime]\nalpha = 2\n", "alpha");
    ctl_refused("proctime", "[pacer.proctime]\ntarget = 0\n", "target");
    ctl_refused("proctime", "[pacer.proctime]\nmin_interval = 5s\nmax_interval = 1s\n",
                "min_interval");
    ctl_refused("window", "[pacer.window]\nwindow = 0\n", "window");
    ctl_refused("intercompletion", "[pacer.intercompletion]\nrequire_waiting = sometimes\n",
                "require_waiting");
    ctl_refused("window", "[pacer.window]\nwindow = 4\ntarget = 3\n", "target");
}
END_TEST

START_TEST(proctime_seed_keys_reproduce_the_seed)
{
    struct ctl c;
    struct cupace_signals s;
    uint64_t iv;

    /* bootstrap = seed: `target` partitions, then nothing until a completion */
    ctl_open(&c, "seed", "[pacer.seed]\nplugin = proctime\nbootstrap = seed\nprojection = no\n"
                         "cpu_probe = no\ntarget = 4\n");
    init_signals(&s, 2);
    for (int i = 0; i < 4; i++) {
        ck_assert_uint_eq(interval(&c, &s), 0);
        s.dispatched++;
        s.in_synthesis++;
        update(&c, &s);
    }
    ck_assert_uint_eq(interval(&c, &s), CUPACE_PACE_HOLD);
    /* projection = no: the PI sees today's queue: 50 in synthesis and an
     * empty queue is "starving", whatever is on its way */
    s.in_synthesis = 50;
    s.gpu_busy_workers = 2;
    steady(&c, &s, 50, 1.2e9, 30e9, 0);
    iv = interval(&c, &s);
    ck_assert_msg(iv < 0.6e9 * 0.8, "interval %.3f s on an empty queue", (double)iv / 1e9);
    ck_assert_double_eq_tol(described(&c, "projected"), 0, 1e-9);
    ctl_close(&c);
    ck_assert(ctl_refused("proctime", "[pacer.proctime]\nbootstrap = later\n", "fill or seed"));
}
END_TEST

/* ---- lead --------------------------------------------------------------- */

/* STEPS completions, one every GAP ns, each with worker time PROC, kernel
 * KERNEL and synthesis SYNTH; WAITING waiting and BUSY workers busy. */
static void lead_steady(struct ctl *c, struct cupace_signals *s, unsigned steps, double gap,
                        double proc, double kernel, double synth, uint64_t waiting, uint64_t busy)
{
    for (unsigned i = 0; i < steps; i++) {
        s->waiting = waiting;
        s->gpu_busy_workers = busy;
        s->now_ns += (uint64_t)gap;
        s->gpu_done++;
        s->gpu_ns_total += (uint64_t)proc;
        s->gpu_device_ns_total += (uint64_t)kernel;
        s->synth_done++;
        s->synth_ns_total += (uint64_t)synth;
        s->dispatched = s->gpu_done + s->in_synthesis + s->waiting + s->gpu_busy_workers;
        update(c, s);
    }
}

/* The first partitions reach the workers at time 0. */
static void lead_start(struct ctl *c, struct cupace_signals *s)
{
    s->gpu_busy_workers = s->num_gpu_workers;
    update(c, s);
}

/* lead, with two workers and N in synthesis, at its first dispatch. */
static void lead_open(struct ctl *c, struct cupace_signals *s, uint64_t n)
{
    ctl_open(c, "lead", "");
    init_signals(s, 2);
    s->in_synthesis = n;
    lead_start(c, s);
}

/* Puts the position (waiting + in synthesis) at POS and returns the interval. */
static uint64_t lead_at(struct ctl *c, struct cupace_signals *s, double pos)
{
    s->in_synthesis = (uint64_t)pos - s->waiting;
    return interval(c, s);
}

START_TEST(lead_target_is_rate_times_lead)
{
    struct ctl c;
    struct cupace_signals s;
    double target;

    /* one exclusive device, kernels 2.5 s, each worker 5 s (prep, lock wait,
     * kernel, epilogue): 0.4/s; synthesis 30 s without jitter */
    lead_open(&c, &s, 12);
    lead_steady(&c, &s, 200, 2.5e9, 5e9, 2.5e9, 30e9, 1, 2);
    interval(&c, &s);
    ck_assert_double_eq_tol(described(&c, "rate_per_s"), 0.4, 1e-6);
    ck_assert_double_eq_tol(described(&c, "lead_s"), 30, 1e-6);
    ck_assert_int_eq((int)described(&c, "overlap"), 0);
    target = described(&c, "target");
    ck_assert_double_eq_tol(target, 12, 0.05);        /* no jitter, no safety stock */
    /* below the target by more than one: fill at once; within one: pace at
     * the GPU's rate; at or above it: one out, one in */
    ck_assert_uint_eq(lead_at(&c, &s, target - 3), 0);
    ck_assert_uint_eq(lead_at(&c, &s, ceil(target) - 1) / 1000000, 2500);
    ck_assert_uint_eq(lead_at(&c, &s, target + 2), CUPACE_PACE_HOLD);
    ctl_close(&c);
}
END_TEST

START_TEST(lead_is_not_fooled_by_the_first_fills_short_syntheses)
{
    struct ctl c;
    struct cupace_signals s;

    /* the first fill (16) starts together, so its short syntheses end
     * first: 12 of 15 s, then 45 s; an epoch of them is no fair sample of
     * the lead, which is 30 s from then on */
    lead_open(&c, &s, 12);
    lead_steady(&c, &s, 12, 2.5e9, 5e9, 2.5e9, 15e9, 1, 2);
    lead_steady(&c, &s, 6, 2.5e9, 5e9, 2.5e9, 45e9, 1, 2);
    lead_steady(&c, &s, 30, 2.5e9, 5e9, 2.5e9, 30e9, 1, 2);
    interval(&c, &s);
    ck_assert_msg(described(&c, "lead_s") > 27, "lead %.1f s", described(&c, "lead_s"));
    ctl_close(&c);
}
END_TEST

START_TEST(lead_sees_overlapping_kernels)
{
    struct ctl c;
    struct cupace_signals s;

    /* the seed's case: two workers, 1.2 s kernels that overlap; device
     * time grows twice as fast as the clock, so the rate is W/P, not D/K */
    lead_open(&c, &s, 50);
    lead_steady(&c, &s, 100, 0.6e9, 1.2e9, 1.2e9, 30e9, 3, 2);
    interval(&c, &s);
    ck_assert_int_eq((int)described(&c, "overlap"), 1);
    ck_assert_double_eq_tol(described(&c, "rate_per_s"), 2 / 1.2, 1e-3);
    ctl_close(&c);
}
END_TEST

START_TEST(lead_app_limited_samples_only_raise)
{
    struct ctl c;
    struct cupace_signals s;

    lead_open(&c, &s, 50);
    lead_steady(&c, &s, 100, 0.6e9, 1.2e9, 1.2e9, 30e9, 3, 2);
    /* a worker idles with nothing waiting: slower samples are refused... */
    s.waiting = 0;
    s.gpu_busy_workers = 1;
    update(&c, &s);
    lead_steady(&c, &s, 20, 1.2e9, 2.4e9, 1.2e9, 30e9, 0, 1);
    interval(&c, &s);
    ck_assert_double_eq_tol(described(&c, "rate_per_s"), 2 / 1.2, 1e-3);
    /* ...faster ones are taken */
    lead_steady(&c, &s, 20, 1.2e9, 1.0e9, 1.0e9, 30e9, 0, 1);
    interval(&c, &s);
    ck_assert_double_eq_tol(described(&c, "rate_per_s"), 2 / 1.0, 1e-2);
    /* and with the GPU busy, slower samples count again */
    lead_steady(&c, &s, 20, 1.2e9, 2.4e9, 1.2e9, 30e9, 3, 2);
    interval(&c, &s);
    ck_assert_double_eq_tol(described(&c, "rate_per_s"), 2 / 2.4, 1e-2);
    ctl_close(&c);
}
END_TEST

START_TEST(lead_safety_stock_follows_jitter)
{
    struct ctl c;
    struct cupace_signals s;
    double calm, jittery, want;

    lead_open(&c, &s, 12);
    lead_steady(&c, &s, 400, 2.5e9, 5e9, 2.5e9, 30e9, 1, 2);
    interval(&c, &s);
    calm = described(&c, "safety");
    /* synthesis alternating 25 s and 35 s: a spread of 5 s */
    for (int i = 0; i < 200; i++)
        lead_steady(&c, &s, 1, 2.5e9, 5e9, 2.5e9, i % 2 ? 25e9 : 35e9, 1, 2);
    interval(&c, &s);
    jittery = described(&c, "safety");
    /* 3 sd of what arrives in a lead: 3 sqrt(0.4/s x 5 s / sqrt(pi)) */
    want = 3 * sqrt(0.4 * 5 * 0.5641895835);
    ck_assert_msg(calm < 0.05, "safety %.3f without jitter", calm);
    ck_assert_msg(jittery > 0.7 * want && jittery < 1.3 * want, "safety %.3f, want about %.3f",
                  jittery, want);
    ctl_close(&c);
}
END_TEST

START_TEST(lead_fills_at_once_after_an_idle_gap)
{
    struct ctl c;
    struct cupace_signals s;
    double rate;

    lead_open(&c, &s, 12);
    lead_steady(&c, &s, 200, 2.5e9, 5e9, 2.5e9, 30e9, 1, 2);
    interval(&c, &s);
    rate = described(&c, "rate_per_s");
    /* an hour with nothing to do: the pipeline drains, no completion */
    s.pending = 0;
    s.waiting = s.in_synthesis = s.gpu_busy_workers = 0;
    s.now_ns += 3600e9;
    update(&c, &s);
    /* work arrives: the whole lead is dispatched at once, at the old rate */
    s.pending = 100;
    update(&c, &s);
    for (int i = 0; i < 10; i++) {
        ck_assert_uint_eq(interval(&c, &s), 0);
        s.in_synthesis++;
        s.dispatched++;
        update(&c, &s);
    }
    ck_assert_double_eq_tol(described(&c, "rate_per_s"), rate, 1e-9);
    ctl_close(&c);
}
END_TEST

/* Before the first GPU completion the rate is unknown, but the first
 * partition has been on its worker for a while: a queue that lasts a
 * synthesis at that rate is held, a shorter one is not. */
START_TEST(lead_holds_a_queue_that_outlasts_a_synthesis_before_any_completion)
{
    struct ctl c;
    struct cupace_signals s;
    uint64_t waiting[] = { 47, 2 };

    for (int i = 0; i < 2; i++) {
        ctl_open(&c, "lead", "");
        init_signals(&s, 1);
        s.in_synthesis = 48;
        s.dispatched = 48;
        update(&c, &s);
        ck_assert_uint_eq(interval(&c, &s), 0);     /* nothing known: fill */
        /* the fill ends at 10 s: one on the GPU, the rest waiting */
        s.now_ns = 10000000000ULL;
        s.synth_done = 48;
        s.synth_ns_total = 48 * s.now_ns;
        s.in_synthesis = 48 - 1 - waiting[i];
        s.waiting = waiting[i];
        s.gpu_busy_workers = 1;
        update(&c, &s);
        ck_assert_uint_eq(interval(&c, &s), 0);     /* the GPU only began */
        /* 0.5 s on: 47 waiting last 23.5 s at most, 2 only 1 s */
        s.now_ns += 500000000ULL;
        update(&c, &s);
        if (i == 0)
            ck_assert_uint_eq(interval(&c, &s), CUPACE_PACE_HOLD);
        else
            ck_assert_uint_eq(interval(&c, &s), 0);
        ctl_close(&c);
    }
}
END_TEST

/* Synthesis alternating 25 s and 35 s (a spread of 5 s) for STEPS
 * completions.  In a backlog all the work arrived at the start, so what
 * is pending falls with each dispatch; in a stream it keeps arriving. */
static void lead_jittery(struct ctl *c, struct cupace_signals *s, int steps, int backlog)
{
    uint64_t work = s->pending + s->dispatched;

    for (int i = 0; i < steps; i++) {
        lead_steady(c, s, 1, 2.5e9, 5e9, 2.5e9, i % 2 ? 25e9 : 35e9, 1, 2);
        if (backlog)
            s->pending = work - s->dispatched;
    }
}

/* The last partitions have none behind them to cover a late synthesis:
 * once what is left of a backlog is needed within a synthesis and three
 * of its spreads (lognormal: 30 s x 1.62, 19 partitions at 0.4/s), all
 * of it goes at once.  In a stream more will come, and it paces as ever. */
START_TEST(lead_sends_the_last_of_a_backlog_at_once)
{
    struct ctl c;
    struct cupace_signals s;
    double target;

    for (int backlog = 0; backlog <= 1; backlog++) {
        uint64_t near_end = backlog ? 0 : CUPACE_PACE_HOLD;

        ctl_open(&c, "lead", "");
        init_signals(&s, 2);
        s.in_synthesis = 12;
        lead_start(&c, &s);
        lead_jittery(&c, &s, 300, backlog);
        interval(&c, &s);
        target = described(&c, "target");
        ck_assert_msg(target > 14 && target < 17, "target %.2f", target);
        /* far from the end: one out, one in */
        ck_assert_uint_eq(lead_at(&c, &s, ceil(target)), CUPACE_PACE_HOLD);
        /* near it, whatever has arrived so far */
        s.dispatched += s.pending - 2;
        s.pending = 2;
        ck_assert_uint_eq(lead_at(&c, &s, ceil(target)), near_end);
        s.dispatched -= 9;
        s.pending = 11;                 /* 16 + 11 is later than 19 */
        ck_assert_uint_eq(lead_at(&c, &s, ceil(target)), CUPACE_PACE_HOLD);
        ctl_close(&c);
    }
}
END_TEST

/* lead after a backlog of 315, all of it there at the start, went
 * through (a synthesis of 25 or 35 s, a take and a completion every
 * 2.5 s), and ten minutes with nothing to do. */
static void lead_after_a_backlog(struct ctl *c, struct cupace_signals *s)
{
    ctl_open(c, "lead", "");
    init_signals(s, 2);
    s->pending = 315;
    s->in_synthesis = 12;
    lead_start(c, s);
    lead_jittery(c, s, 300, 1);
    while (s->in_synthesis + s->waiting + s->gpu_busy_workers > 0) {
        s->now_ns += (uint64_t)2.5e9;
        if (s->gpu_busy_workers) {
            s->gpu_busy_workers--;
            s->gpu_done++;
            s->gpu_ns_total += (uint64_t)5e9;
            s->gpu_device_ns_total += (uint64_t)2.5e9;
        }
        if (s->waiting) {
            s->waiting--;
            s->gpu_busy_workers++;
        }
        if (s->in_synthesis) {
            s->in_synthesis--;
            s->synth_done++;
            s->synth_ns_total += (uint64_t)(s->in_synthesis % 2 ? 25e9 : 35e9);
            s->waiting++;
        }
        update(c, s);
    }
    s->now_ns += (uint64_t)600e9;
    update(c, s);
}

/* Dispatches what lead sends at once; returns how many. */
static uint64_t lead_sends_at_once(struct ctl *c, struct cupace_signals *s)
{
    uint64_t sent = 0;

    while (s->pending > 0 && interval(c, s) == 0) {
        s->pending--;
        s->dispatched++;
        s->in_synthesis++;
        sent++;
        update(c, s);
    }
    return sent;
}

/* Work comes as whole jobs: a burst of 60 partitions (here a millisecond
 * apart, as a client submits them one by one) is one arrival in 1400 s,
 * and no more is expected within a synthesis (48.6 s at its 3-sd
 * quantile, 19 partitions at 0.4/s), so once what is left of it is needed
 * within that, the burst's tail leaves at once.  Counted in partitions,
 * 60 in 1400 s were 2 expected, and it waited on the takes; counted as
 * 60 instants, the latest 32 came within 31 ms.
 * Right after the pipeline was empty nothing is taken before the first
 * synthesis ends, 18 s on at its low quantile: a burst of 17 fills the
 * lead (14) at once, not all of it, and the rest leaves once that time
 * has passed with none ended. */
START_TEST(lead_sends_the_tail_of_a_burst_at_once)
{
    struct ctl c;
    struct cupace_signals s;
    uint64_t filled;

    lead_after_a_backlog(&c, &s);
    s.pending = 17;
    update(&c, &s);
    filled = lead_sends_at_once(&c, &s);
    ck_assert_msg(filled >= 13 && filled < 17, "%llu of 17 sent at once", (unsigned long long)filled);
    s.now_ns += (uint64_t)20e9;
    update(&c, &s);
    ck_assert_uint_eq(lead_sends_at_once(&c, &s), 17 - filled);
    ctl_close(&c);

    lead_after_a_backlog(&c, &s);
    for (int i = 0; i < 60; i++) {      /* a client submits them one by one */
        s.now_ns += (uint64_t)1e6;
        s.pending++;
        update(&c, &s);
    }
    filled = lead_sends_at_once(&c, &s);
    ck_assert_msg(filled >= 14 && filled < 18, "%llu of 60 sent at once", (unsigned long long)filled);
    /* the GPUs take one every 2.5 s, each replaced: one out, one in */
    while (s.pending > 2) {
        lead_steady(&c, &s, 1, 2.5e9, 5e9, 2.5e9, s.pending % 2 ? 25e9 : 35e9, 1, 2);
        s.pending--;
    }
    ck_assert_uint_eq(lead_sends_at_once(&c, &s), 2);
    ctl_close(&c);
}
END_TEST

/* A daemon idle for a night: ten hours without work between two streams.
 * Once the stream is back, more is expected within a synthesis again, at
 * the rate of the latest arrivals, and it paces; averaged since the first
 * arrival, the night read every arrival after it as the last of the work,
 * sent at once. */
START_TEST(lead_paces_a_stream_again_after_a_night_idle)
{
    struct ctl c;
    struct cupace_signals s;
    double target;

    lead_open(&c, &s, 12);
    lead_jittery(&c, &s, 300, 0);
    s.pending = 0;
    s.in_synthesis = s.waiting = s.gpu_busy_workers = 0;
    update(&c, &s);
    s.now_ns += (uint64_t)36000e9;
    update(&c, &s);
    s.pending = 2;
    s.in_synthesis = 12;
    lead_start(&c, &s);
    lead_jittery(&c, &s, 40, 0);       /* a partition arrives every 2.5 s */
    interval(&c, &s);
    target = described(&c, "target");
    ck_assert_msg(target > 14 && target < 17, "target %.2f", target);
    ck_assert_uint_eq(lead_at(&c, &s, ceil(target)), CUPACE_PACE_HOLD);
    ctl_close(&c);
}
END_TEST

START_TEST(lead_follows_a_2x_slowdown_within_5_completions)
{
    struct ctl c;
    struct cupace_signals s;
    double target;
    uint64_t iv;

    lead_open(&c, &s, 12);
    lead_steady(&c, &s, 200, 2.5e9, 5e9, 2.5e9, 30e9, 1, 2);
    /* kernels take twice as long: 0.2/s */
    lead_steady(&c, &s, 5, 5e9, 10e9, 5e9, 30e9, 1, 2);
    interval(&c, &s);
    ck_assert_msg(fabs(described(&c, "rate_per_s") / 0.2 - 1) < 0.05, "rate %.4f/s",
                  described(&c, "rate_per_s"));
    target = described(&c, "target");
    iv = lead_at(&c, &s, ceil(target) - 1);
    ck_assert_msg(fabs((double)iv / 5e9 - 1) < 0.05, "interval %.3f s", (double)iv / 1e9);
    ctl_close(&c);
}
END_TEST

/* lead on the processor-sharing model: every synthesis that ends goes to
 * the GPU at once (kernels 2.5 s, workers 5 s: 0.4/s); `fed`: the GPU queue
 * holds one and both workers are busy, else both idle with nothing waiting. */
/* WORK: all there is, arrived at the start (0: always more pending) */
struct lead_ps { struct ctl c; int fed; uint64_t last_done, work; };

static uint64_t lead_ps_pending(const struct lead_ps *l, const struct cupace_signals *s)
{
    return !l->work ? 1000 : l->work > s->dispatched ? l->work - s->dispatched : 0;
}

static void lead_ps_observe(void *ctx, struct cupace_signals *s)
{
    struct lead_ps *l = ctx;

    s->pending = lead_ps_pending(l, s);
    s->waiting = l->fed ? 1 : 0;
    s->gpu_busy_workers = l->fed ? 2 : 0;
    s->gpu_done += s->synth_done - l->last_done;
    s->gpu_ns_total = s->gpu_done * 5000000000ull;
    s->gpu_device_ns_total = s->gpu_done * 2500000000ull;
    l->last_done = s->synth_done;
    update(&l->c, s);
}

static int lead_ps_may_start(void *ctx, const struct cupace_signals *s)
{
    struct lead_ps *l = ctx;

    return lead_ps_pending(l, s) > 0 && interval(&l->c, s) == 0;
}

/* lead dispatching to the processor-sharing model: CPUS, works of
 * WORK_S seconds and spread CV, drawn from SEED. */
static void lead_ps_open(struct lead_ps *l, struct ps_model *m, unsigned cpus, double work_s, double cv,
                         uint64_t seed)
{
    ctl_open(&l->c, "lead", "");
    ps_init(m, cpus, work_s, cv, seed, lead_ps_observe, l);
    m->may_start = lead_ps_may_start;
}

START_TEST(lead_caps_synthesis_at_the_cpus_slots)
{
    static const unsigned levels[] = { 8, 16, 10, 14, 9, 15 };
    struct lead_ps l = { .fed = 1 };
    struct ps_model m;

    /* 12 CPUs; n varied around them (by the schedule, not by lead) */
    ctl_open(&l.c, "lead", "");
    ps_init(&m, 12, 30, 0.15, 5, lead_ps_observe, &l);
    ps_schedule(&m, 3000, 45, levels, 6);
    interval(&l.c, &m.sig);
    ck_assert_int_eq((int)described(&l.c, "slots_known"), 1);
    ck_assert_msg(described(&l.c, "slots") >= 12 && described(&l.c, "slots") <= 13, "slots %g",
                  described(&l.c, "slots"));
    /* the lead is the synthesis time unstretched: 0.4/s x 30 s + safety */
    ck_assert_msg(fabs(described(&l.c, "lead_s") / 30 - 1) < 0.06, "lead %.2f s",
                  described(&l.c, "lead_s"));
    /* far below the target but at the slots: no more */
    m.sig.waiting = 0;
    m.sig.in_synthesis = (uint64_t)described(&l.c, "slots");
    ck_assert_uint_eq(interval(&l.c, &m.sig), CUPACE_PACE_HOLD);
    m.sig.in_synthesis = 8;
    ck_assert_uint_eq(interval(&l.c, &m.sig), 0);
    ctl_close(&l.c);
}
END_TEST

/* lead's L once the slots are placed (12 CPUs, 30 s syntheses, as above)
 * and synthesis then takes WORK_S, run for RUN_S below the slots
 * (unstretched). */
static double lead_after_synthesis_changes(double work_s, double run_s)
{
    static const unsigned levels[] = { 8, 16, 10, 14, 9, 15 };
    struct lead_ps l = { .fed = 1 };
    struct ps_model m;
    double lead_s;

    ctl_open(&l.c, "lead", "");
    ps_init(&m, 12, 30, 0.15, 5, lead_ps_observe, &l);
    ps_schedule(&m, 3000, 45, levels, 6);
    interval(&l.c, &m.sig);
    ck_assert_int_eq((int)described(&l.c, "slots_known"), 1);
    m.work_s = work_s;
    ps_run(&m, m.now + run_s, 8);
    interval(&l.c, &m.sig);
    ck_assert_int_eq((int)described(&l.c, "slots_known"), 1);
    lead_s = described(&l.c, "lead_s");
    ctl_close(&l.c);
    return lead_s;
}

START_TEST(lead_follows_faster_synthesis_with_the_slots_known)
{
    /* a fifth faster: the epochs' min sees it first, and the lead follows
     * within a few epochs */
    double lead_s = lead_after_synthesis_changes(24, 200);

    ck_assert_msg(lead_s < 26.5 && lead_s > 21, "lead %.2f s", lead_s);
}
END_TEST

START_TEST(lead_follows_slower_synthesis_with_the_slots_known)
{
    /* a fifth slower: the epochs see it at once, but L is the lower of
     * their min and the slots' mean work, so that mean must follow too, or
     * the target stays short and the GPUs starve (it did, while the mean
     * spanned the fit's 256 syntheses: 33.4 s here) */
    double lead_s = lead_after_synthesis_changes(36, 300);

    ck_assert_msg(lead_s > 0.95 * 36 && lead_s < 1.08 * 36, "lead %.2f s", lead_s);
}
END_TEST

START_TEST(lead_probes_a_cpu_bound_pipeline_down_to_its_slots)
{
    struct lead_ps l = { .fed = 0 };
    struct ps_model m;
    unsigned least_n = 18, least_ever = 18;

    /* 6 CPUs under 18 in synthesis, the GPUs starved: lead, which dispatches
     * here, first keeps 18 (nothing says the CPU is shared), then lets n
     * fall a quarter at a time until the syntheses that speed up say how
     * many slots there are */
    lead_ps_open(&l, &m, 6, 30, 0.15, 9);
    while (m.now < 1500) {
        ps_run(&m, m.now + 10, 18);
        if (m.now > 400 && m.n < least_n)
            least_n = m.n;
        if (m.now > 100 && m.n < least_ever)
            least_ever = m.n;
    }
    /* a quarter below the limit at most, never drained all the way */
    ck_assert_msg(least_ever >= 4, "n fell to %u while probing 6 CPUs", least_ever);
    interval(&l.c, &m.sig);
    ck_assert_int_eq((int)described(&l.c, "slots_known"), 1);
    ck_assert_msg(described(&l.c, "slots") >= 6 && described(&l.c, "slots") <= 7, "slots %g",
                  described(&l.c, "slots"));
    /* and once it knows, it keeps the CPU full */
    ck_assert_msg(least_n >= 5, "n fell to %u after the probe, with 6 CPUs", least_n);
    ck_assert_msg(m.n >= 5 && m.n <= 7, "n %u at the end", m.n);
    ctl_close(&l.c);
}
END_TEST

START_TEST(lead_drains_the_level_not_a_batch_end)
{
    struct ctl c;
    struct cupace_signals s;
    uint64_t n;

    /* 18 in synthesis, stretched to 90 s, the GPUs starved: a drain is
     * under way when 16 of a batch end at one instant.  It takes down the
     * level n was at, a quarter (to 14), not what the instant left (2),
     * which would hold n near none for a whole synthesis */
    lead_open(&c, &s, 18);
    for (int i = 0; i < 300; i++) {
        lead_steady(&c, &s, 1, 5e9, 5e9, 2.5e9, 90e9, 0, 0);
        interval(&c, &s);
    }
    s.synth_done += 16;
    s.synth_ns_total += 16 * (uint64_t)90e9;
    s.in_synthesis = 2;
    update(&c, &s);
    for (n = 2; n < 18 && interval(&c, &s) == 0; n++) {
        s.in_synthesis = n + 1;
        s.dispatched++;
        update(&c, &s);
    }
    ck_assert_msg(n >= 13, "held at %llu in synthesis after a batch end", (unsigned long long)n);
    ctl_close(&c);
}
END_TEST

/* The time a backlog of WORK syntheses takes on CPUS, 18 at a time, with
 * lead dispatching (configured by LEAD_CONF), or without it (NULL) as
 * many as there are workers. */
static double lead_ps_backlog(const char *lead_conf, unsigned cpus, uint64_t work)
{
    struct lead_ps l = { .fed = 0, .work = work };
    struct ps_model m;

    ctl_open(&l.c, lead_conf ? "lead" : "fixed", lead_conf ? lead_conf : "[pacer.fixed]\ninterval = 0\n");
    ps_init(&m, cpus, 30, 0.15, 4, lead_ps_observe, &l);
    m.may_start = lead_ps_may_start;
    while (m.sig.synth_done < work && m.now < 10000)
        ps_run(&m, m.now + 1, 18);
    ctl_close(&l.c);
    return m.now;
}

START_TEST(lead_never_probes_the_last_of_the_work)
{
    /* 16 CPUs under 18, the GPUs starved, and fewer left to dispatch than
     * are in synthesis: a drain would idle CPUs for good, since no work is
     * left to gain from what it shows; the backlog ends as soon as with
     * no pacing at all */
    double paced = lead_ps_backlog("", 16, 35), unpaced = lead_ps_backlog(NULL, 16, 35);

    ck_assert_msg(paced <= unpaced + 1, "the last of the work took %.0f s, %.0f s unpaced", paced,
                  unpaced);
}
END_TEST

START_TEST(lead_ends_a_cpu_bound_backlog_together)
{
    /* 6 CPUs under 18, learnt: capped at 6, the last one to start would
     * run alone to the end while the other CPUs idle; the last six go at
     * once, and ending together under processor sharing they keep every
     * CPU busy to the end, as unpaced.  Told the slots, lead keeps them:
     * the operator's limit is a limit */
    double paced = lead_ps_backlog("", 6, 200);
    double unpaced = lead_ps_backlog(NULL, 6, 200);

    /* the probe's drains cost about 8 s of the 1000; capped to the end, 18 */
    ck_assert_msg(paced <= 1.01 * unpaced, "the backlog took %.0f s, %.0f s unpaced", paced, unpaced);
}
END_TEST

START_TEST(lead_drains_again_only_where_the_cpu_showed_oversubscribed)
{
    struct lead_ps l = { .fed = 0 };
    struct ps_model m;
    unsigned least = 12;

    /* as many CPUs as syntheses (12), jittery (cv 0.5), the GPUs starved:
     * a first drain finds nothing stretched; another would only idle
     * CPUs, since a drain shows what runs faster at fewer, and nothing
     * did (it once went on, a quarter at a time, down to 6) */
    lead_ps_open(&l, &m, 12, 45, 0.5, 8);
    while (m.now < 2000) {
        ps_run(&m, m.now + 1, 12);
        if (m.n < least)
            least = m.n;
    }
    ck_assert_msg(least >= 9, "n fell to %u with 12 CPUs", least);
    ctl_close(&l.c);
}
END_TEST

START_TEST(lead_drains_on_where_the_last_level_sped_up)
{
    struct lead_ps l = { .fed = 0 };
    struct ps_model m;

    /* 6 CPUs under 18: the first level's syntheses run faster than those
     * before it, which shows the CPU oversubscribed before the data say
     * so with confidence; the probe drains on to the slots rather than
     * stopping at the first level (on this seed it stopped at 12) */
    lead_ps_open(&l, &m, 6, 30, 0.15, 15);
    while (m.now < 1500)
        ps_run(&m, m.now + 10, 18);
    interval(&l.c, &m.sig);
    ck_assert_int_eq((int)described(&l.c, "slots_known"), 1);
    ck_assert_msg(described(&l.c, "slots") >= 6 && described(&l.c, "slots") <= 7, "slots %g",
                  described(&l.c, "slots"));
    ctl_close(&l.c);
}
END_TEST

START_TEST(lead_never_holds_with_nothing_in_synthesis)
{
    struct lead_ps l = { .fed = 0 };
    struct ps_model m;
    unsigned cpus = 1 + (unsigned)_i % 2, level = 1 + (unsigned)_i / 2;

    /* one to three syntheses at a time on one or two CPUs, the GPUs starved:
     * the probe lets n fall, but not to none, where no synthesis would end
     * and its level would hold for good */
    lead_ps_open(&l, &m, cpus, 30, 0.15, 11 + (uint64_t)_i);
    ps_run(&m, 3000, level);
    ck_assert_msg(m.sig.synth_done >= 3000 / 30 * (level < cpus ? level : cpus) * 8 / 10,
                  "%llu syntheses in 3000 s, %u at a time on %u CPUs",
                  (unsigned long long)m.sig.synth_done, level, cpus);
    ctl_close(&l.c);
}
END_TEST

/* A host that calls update less often than ours, on a clock that counts
 * from boot: the first update comes once a synthesis of the fill has
 * ended, so when the fill left is not known.  Read as at 0, the fill's
 * age was eleven days, and the whole backlog looked due at once. */
START_TEST(lead_does_not_age_a_fill_it_never_saw_leave)
{
    struct ctl c;
    struct cupace_signals s;

    ctl_open(&c, "lead", "");
    init_signals(&s, 2);
    s.now_ns = (uint64_t)1e15;
    s.pending = 1000;
    s.dispatched = 36;
    s.in_synthesis = 35;
    s.synth_done = 1;
    s.synth_ns_total = (uint64_t)10e9;
    s.waiting = 1;
    update(&c, &s);
    /* the fill ends one synthesis and one completion at a time */
    for (int i = 0; i < 10; i++) {
        s.now_ns += (uint64_t)1e9;
        s.in_synthesis--;
        s.synth_done++;
        s.synth_ns_total += (uint64_t)10e9;
        s.gpu_busy_workers = 2;
        s.gpu_done++;
        s.gpu_ns_total += (uint64_t)5e9;
        s.gpu_device_ns_total += (uint64_t)2.5e9;
        update(&c, &s);
    }
    /* 25 in synthesis, a target of about 0.4/s x 10 s, 1000 to come */
    ck_assert_uint_eq(interval(&c, &s), CUPACE_PACE_HOLD);
    ctl_close(&c);
}
END_TEST

START_TEST(lead_survives_any_signals)
{
    struct ctl c;
    struct cupace_signals s;
    uint64_t x = 0x9E3779B97F4A7C15ull + (uint64_t)_i;

    /* whatever an engine's bug feeds it: counters that jump, stall and go
     * back, a clock that stands or goes back; the sanitized runs check the
     * arithmetic, this that it neither crashes nor hangs */
    ctl_open(&c, "lead", "");
    init_signals(&s, 2);
    for (int k = 0; k < 50000; k++) {
        uint64_t r = ps_xorshift(&x);

        switch (r % 8) {
        case 0: s.now_ns += r >> 36; break;
        case 1: s.now_ns = r % 3 ? s.now_ns : r >> 8; break;
        case 2: s.dispatched += (r >> 8) % 5; s.in_synthesis += (r >> 8) % 5; break;
        case 3: s.synth_done += (r >> 8) % 3; s.synth_ns_total += r >> 24; break;
        case 4: s.gpu_done += (r >> 8) % 3; s.gpu_ns_total += r >> 28; s.gpu_device_ns_total += r >> 29; break;
        case 5: s.waiting = (r >> 8) % 4; s.gpu_busy_workers = (r >> 10) % 3; break;
        case 6: s.in_synthesis = (r >> 8) % 3 ? s.in_synthesis / 2 : r >> 8; break;
        default: s.synth_ns_total = r % 5 ? s.synth_ns_total : r; break;
        }
        update(&c, &s);
        (void)interval(&c, &s);
    }
    ctl_close(&c);
}
END_TEST

START_TEST(lead_told_the_slots_caps_from_the_start)
{
    struct ctl c;
    struct cupace_signals s;

    /* nothing has ended yet: unset, lead fills; told 6, it starts 6 */
    ctl_open(&c, "lead", "[pacer.lead]\nslots = 6\n");
    init_signals(&s, 2);
    s.in_synthesis = 5;
    ck_assert_uint_eq(interval(&c, &s), 0);
    s.in_synthesis = 6;
    ck_assert_uint_eq(interval(&c, &s), CUPACE_PACE_HOLD);
    ck_assert_double_eq(described(&c, "slots"), 6);
    ctl_close(&c);
    ctl_open(&c, "lead", "");
    ck_assert_uint_eq(interval(&c, &s), 0);
    ctl_close(&c);
    ck_assert(ctl_refused("lead", "[pacer.lead]\nslots = 2000000\n", "slots must"));
    ck_assert(ctl_refused("lead", "[pacer.lead]\nsafety = 11\n", "safety must"));
}
END_TEST

START_TEST(lead_keeps_one_in_the_pipe_when_synthesis_takes_no_time)
{
    struct ctl c;
    struct cupace_signals s;

    /* synthesis of no length: lead (0) and safety (0) make a target of 0,
     * and an empty pipeline is not below it; work pending with none in the
     * pipe must still be dispatched, or the run stalls */
    lead_open(&c, &s, 0);
    lead_steady(&c, &s, 50, 2.5e9, 5e9, 2.5e9, 0, 0, 0);
    s.waiting = s.in_synthesis = s.gpu_busy_workers = 0;
    ck_assert_uint_ne(interval(&c, &s), CUPACE_PACE_HOLD);
    ctl_close(&c);
}
END_TEST

START_TEST(lead_told_the_slots_never_probes_below_them)
{
    struct lead_ps l = { .fed = 0 };
    struct ps_model m;
    unsigned least = 99, most = 0;

    /* 12 CPUs, told so, the GPUs starved: it keeps 12 in synthesis, where
     * unknown slots would have it let n fall to learn them */
    ctl_open(&l.c, "lead", "[pacer.lead]\nslots = 12\n");
    ps_init(&m, 12, 30, 0.15, 13, lead_ps_observe, &l);
    m.may_start = lead_ps_may_start;
    while (m.now < 1500) {
        ps_run(&m, m.now + 5, 18);
        if (m.now > 120 && m.n < least)   /* past the first syntheses' short ends */
            least = m.n;
        if (m.n > most)
            most = m.n;
    }
    ck_assert_uint_eq(most, 12);
    ck_assert_msg(least >= 11, "n fell to %u, told 12 slots", least);
    interval(&l.c, &m.sig);
    ck_assert_int_eq((int)described(&l.c, "slots_known"), 1);
    ctl_close(&l.c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("plugins");
    TCase *tc = tcase_create("math");

    tcase_add_test(tc, proctime_two_workers_converge_to_half_the_processing_time);
    tcase_add_test(tc, proctime_idle_gap_keeps_the_estimate);
    tcase_add_test(tc, proctime_failures_do_not_feed_the_estimate);
    tcase_add_test(tc, proctime_bootstrap_fills_until_a_completion);
    tcase_add_test(tc, proctime_pi_speeds_up_on_an_empty_queue_and_slows_on_a_deep_one);
    tcase_add_test(tc, proctime_integral_is_frozen_while_nothing_is_pending);
    tcase_add_test(tc, proctime_fills_a_drained_pipeline_faster_than_the_gpu_rate);
    tcase_add_test(tc, proctime_clamps_to_min_and_max);
    tcase_add_test(tc, proctime_probes_down_to_the_cpus_it_has);
    tcase_add_test(tc, intercompletion_require_waiting_never_samples_an_empty_queue);
    tcase_add_test(tc, intercompletion_learns_the_gap_between_completions);
    tcase_add_test(tc, window_holds_exactly_window_in_flight);
    tcase_add_test(tc, fixed_returns_its_interval);
    tcase_add_test(tc, controllers_refuse_bad_parameters);
    tcase_add_test(tc, proctime_seed_keys_reproduce_the_seed);
    tcase_add_test(tc, lead_target_is_rate_times_lead);
    tcase_add_test(tc, lead_sees_overlapping_kernels);
    tcase_add_test(tc, lead_is_not_fooled_by_the_first_fills_short_syntheses);
    tcase_add_test(tc, lead_app_limited_samples_only_raise);
    tcase_add_test(tc, lead_safety_stock_follows_jitter);
    tcase_add_test(tc, lead_fills_at_once_after_an_idle_gap);
    tcase_add_test(tc, lead_holds_a_queue_that_outlasts_a_synthesis_before_any_completion);
    tcase_add_test(tc, lead_sends_the_last_of_a_backlog_at_once);
    tcase_add_test(tc, lead_sends_the_tail_of_a_burst_at_once);
    tcase_add_test(tc, lead_paces_a_stream_again_after_a_night_idle);
    tcase_add_test(tc, lead_follows_a_2x_slowdown_within_5_completions);
    tcase_add_test(tc, lead_caps_synthesis_at_the_cpus_slots);
    tcase_add_test(tc, lead_follows_faster_synthesis_with_the_slots_known);
    tcase_add_test(tc, lead_follows_slower_synthesis_with_the_slots_known);
    tcase_add_test(tc, lead_probes_a_cpu_bound_pipeline_down_to_its_slots);
    tcase_add_test(tc, lead_drains_the_level_not_a_batch_end);
    tcase_add_test(tc, lead_never_probes_the_last_of_the_work);
    tcase_add_test(tc, lead_ends_a_cpu_bound_backlog_together);
    tcase_add_test(tc, lead_drains_again_only_where_the_cpu_showed_oversubscribed);
    tcase_add_test(tc, lead_drains_on_where_the_last_level_sped_up);
    tcase_add_loop_test(tc, lead_never_holds_with_nothing_in_synthesis, 0, 6);
    tcase_add_test(tc, lead_does_not_age_a_fill_it_never_saw_leave);
    tcase_add_loop_test(tc, lead_survives_any_signals, 0, 4);
    tcase_add_test(tc, lead_told_the_slots_caps_from_the_start);
    tcase_add_test(tc, lead_keeps_one_in_the_pipe_when_synthesis_takes_no_time);
    tcase_add_test(tc, lead_told_the_slots_never_probes_below_them);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
