/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pace_util.h -- pieces shared by the shipped controllers: an EMA and the PI
 * correction on the GPU queue depth.
 *
 * Header-only on purpose: controllers never link against the engine, and
 * each .so carries its own copy of these few lines.
 *
 * The PI controller works on the normalised error e = (target - waiting) /
 * target, so kp and ki mean the same thing whatever the target: e = 1 when
 * the GPU queue is empty, 0 on target, negative when it is too deep.  Its
 * output u turns a base interval into base / (1 + u): u > 0 dispatches
 * faster.  The integral is in error-seconds and is clamped asymmetrically
 * (anti-windup): it may grow to ask for at most double speed from the
 * integral alone, but slow down to a tenth, because an empty queue costs GPU
 * time while a deep one only costs memory.  It is frozen while there is
 * nothing to dispatch, so an idle gap does not wind it up.
 *
 * The CPU probe (pace_cpu_probe) is shared by proctime and lead: both need
 * to know when syntheses beyond the CPU's capacity only slow each other
 * down, and no signal says how many CPUs there are.
 */
#ifndef CUPACE_PACE_UTIL_H
#define CUPACE_PACE_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdint.h>

#include "cupace/pacer.h"

struct pace_pi {
    double target;          /* wanted GPU queue depth, partitions */
    double kp, ki;          /* gains on the normalised error; ki per second */
    double integral;        /* error-seconds */
    uint64_t last_ns;       /* when the integral was last advanced */
    int started;
};

static inline double pace_ema(double old, double sample, double alpha, int first)
{
    return first ? sample : alpha * sample + (1.0 - alpha) * old;
}

/* The normalised error of a queue depth (or a projected one) against target. */
static inline double pace_pi_error(const struct pace_pi *pi, double depth)
{
    return (pi->target - depth) / pi->target;
}

/* Advances the integral to now with error e; `active` is 0 while nothing can
 * be dispatched (the integral is then frozen: no wind-up in idle gaps). */
static inline void pace_pi_advance(struct pace_pi *pi, uint64_t now, double e, int active)
{
    double dt, hi, lo;

    if (!pi->started || now < pi->last_ns) {
        pi->started = 1;
        pi->last_ns = now;
        return;
    }
    dt = (double)(now - pi->last_ns) / 1e9;
    pi->last_ns = now;
    if (!active || pi->ki <= 0)
        return;
    pi->integral += e * dt;
    hi = 1.0 / pi->ki;      /* ki * integral <= +1: at most 2x from the integral */
    lo = -0.9 / pi->ki;     /* ki * integral >= -0.9: at most 10x slower */
    if (pi->integral > hi)
        pi->integral = hi;
    if (pi->integral < lo)
        pi->integral = lo;
}

/* base / (1 + u), u = kp e + ki integral kept in [-0.9, 4]: at most 10x
 * slower, 5x faster than the base interval. */
static inline double pace_pi_apply(const struct pace_pi *pi, double e, double base_ns)
{
    double u = pi->kp * e + pi->ki * pi->integral;

    if (u < -0.9)
        u = -0.9;
    if (u > 4.0)
        u = 4.0;
    return base_ns / (1.0 + u);
}

static inline uint64_t pace_clamp_ns(double ns, uint64_t lo, uint64_t hi)
{
    if (!(ns >= (double)lo))
        return lo;
    if (ns >= (double)hi)
        return hi;
    return (uint64_t)ns;
}

/* Reads the PI keys shared by proctime and intercompletion. */
static inline int pace_pi_init(struct pace_pi *pi, const struct cupace_params *p, double target,
                               double kp, double ki, char *err, size_t errlen)
{
    if (p->get_f64(p->ctx, "target", target, &pi->target) < 0 ||
        p->get_f64(p->ctx, "kp", kp, &pi->kp) < 0 ||
        p->get_f64(p->ctx, "ki", ki, &pi->ki) < 0)
        return -1;
    if (!(pi->target >= 0.5 && pi->target <= 1e6)) {
        snprintf(err, errlen, "target must be from 0.5 to 1000000 partitions");
        return -1;
    }
    /* one key per reason, named first: the host gives the line of the key
     * a reason begins with, so "kp and ki ..." blamed kp for a bad ki */
    if (!(pi->kp >= 0 && pi->kp <= 100)) {
        snprintf(err, errlen, "kp must be from 0 to 100");
        return -1;
    }
    if (!(pi->ki >= 0 && pi->ki <= 100)) {
        snprintf(err, errlen, "ki must be from 0 to 100");
        return -1;
    }
    return 0;
}

static inline int pace_alpha_init(const struct cupace_params *p, double def, double *alpha,
                                  char *err, size_t errlen)
{
    if (p->get_f64(p->ctx, "alpha", def, alpha) < 0)
        return -1;
    if (!(*alpha > 0 && *alpha <= 1)) {
        snprintf(err, errlen, "alpha must be in (0, 1]");
        return -1;
    }
    return 0;
}

static inline uint64_t in_flight(const struct cupace_signals *s)
{
    return s->dispatched - s->gpu_done - s->failed;
}

/* ---- the CPU probe ------------------------------------------------------
 *
 * When the pipeline stays short of what feeds the GPUs although work is
 * pending, the CPU may be the bottleneck, and syntheses sharing too few
 * CPUs all slow down (processor sharing): past the CPU's capacity a
 * dispatch adds memory and no throughput.  So the probe caps the
 * partitions in synthesis at PROBE_STEP of what they were; if the
 * synthesis time fell with them (at least half as much), they were
 * oversubscribed and it probes lower; if not, it goes back to the last
 * level that was, and stays there while the CPU is the bottleneck.  An
 * epoch lasts PROBE_EPOCH synthesis times, and the epoch after a change of
 * the cap is not judged: the syntheses ending in it started before. */
#define PROBE_EPOCH 1.5
#define PROBE_STEP 0.75

struct pace_cpu_probe {
    uint64_t epoch_start, last_ns;
    uint64_t synth_done0, synth_ns0;
    double starved_ns, busy_integral;     /* ns; partition-ns */
    uint64_t last_in_synthesis;
    int last_starved;
    double cap;                           /* at most this many in synthesis; 0: no cap */
    double prev_n, prev_s;                /* the epoch before the last probe */
    int probing;
    int settling;                         /* the cap just changed: skip an epoch */
};

static inline void pace_cpu_probe_epoch(struct pace_cpu_probe *pr, const struct cupace_signals *s)
{
    double span = (double)(s->now_ns - pr->epoch_start);
    uint64_t done = s->synth_done - pr->synth_done0;
    double n, sy;

    if (span <= 0 || done < 8) {
        if (span > 0 && done == 0 && pr->starved_ns < 0.8 * span)
            pr->cap = 0;                  /* nothing to learn; no longer CPU-bound */
        return;
    }
    n = pr->busy_integral / span;
    sy = (double)(s->synth_ns_total - pr->synth_ns0) / (double)done;
    if (pr->settling) {
        pr->settling = 0;
    } else if (pr->starved_ns < 0.8 * span) {    /* the GPU had work: not CPU-bound */
        pr->cap = 0;
        pr->probing = 0;
    } else if (!pr->probing) {
        if (pr->cap == 0) {               /* first CPU-bound epoch: probe */
            pr->prev_n = n;
            pr->prev_s = sy;
            pr->cap = n * PROBE_STEP;
            pr->probing = 1;
            pr->settling = 1;
        }
    } else if (n < pr->prev_n && sy <= pr->prev_s * (1.0 - 0.5 * (1.0 - n / pr->prev_n))) {
        pr->prev_n = n;                   /* S fell with n: oversubscribed, go lower */
        pr->prev_s = sy;
        pr->cap = n * PROBE_STEP;
        if (pr->cap < 1)
            pr->cap = 1;
        pr->settling = 1;
    } else if (n < pr->prev_n) {
        pr->cap = pr->prev_n;             /* S held: the CPUs were not full; stay */
        pr->probing = 0;
    }
    pr->epoch_start = s->now_ns;
    pr->synth_done0 = s->synth_done;
    pr->synth_ns0 = s->synth_ns_total;
    pr->starved_ns = pr->busy_integral = 0;
}

/* Advances the probe after an event.  `ready`: the controller has its
 * estimates; `synth_ns`: its mean synthesis time; `short_of_feed`: the
 * pipeline is short of what keeps the GPUs fed while work is pending. */
static inline void pace_cpu_probe(struct pace_cpu_probe *pr, const struct cupace_signals *s,
                                  int ready, double synth_ns, int short_of_feed)
{
    if (!ready) {
        pr->epoch_start = pr->last_ns = s->now_ns;
        pr->synth_done0 = s->synth_done;
        pr->synth_ns0 = s->synth_ns_total;
        pr->last_in_synthesis = s->in_synthesis;
        return;
    }
    if (s->now_ns > pr->last_ns) {
        double dt = (double)(s->now_ns - pr->last_ns);
        pr->busy_integral += dt * (double)pr->last_in_synthesis;
        if (pr->last_starved)
            pr->starved_ns += dt;
    }
    pr->last_ns = s->now_ns;
    pr->last_in_synthesis = s->in_synthesis;
    pr->last_starved = short_of_feed;
    if ((double)(s->now_ns - pr->epoch_start) >= PROBE_EPOCH * synth_ns)
        pace_cpu_probe_epoch(pr, s);
}

/* The probe's cap is reached: dispatch nothing more for now. */
static inline int pace_cpu_full(const struct pace_cpu_probe *pr, const struct cupace_signals *s)
{
    return pr->cap > 0 && (double)s->in_synthesis >= pr->cap;
}

#endif
