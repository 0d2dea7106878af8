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
    if (!(pi->kp >= 0 && pi->kp <= 100) || !(pi->ki >= 0 && pi->ki <= 100)) {
        snprintf(err, errlen, "kp and ki must be from 0 to 100");
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

#endif
