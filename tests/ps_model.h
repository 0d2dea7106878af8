/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* ps_model.h -- an exact processor-sharing model of synthesis for the
 * suites: `slots` CPUs shared by the n in synthesis (each advances at
 * min(1, slots / n)), lognormal work, and a schedule of how many are kept
 * in synthesis.  It tells an observer the signals a controller sees after
 * every start and end. */
#ifndef CUPACE_TEST_PS_MODEL_H
#define CUPACE_TEST_PS_MODEL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cupace/pacer.h"

#define MAXJOBS 256

struct ps_model {
    unsigned slots;
    double work_s, cv;
    uint64_t rng;
    double now;                     /* s */
    unsigned n;
    double left[MAXJOBS], start[MAXJOBS];   /* work left (s), start (s) */
    struct cupace_signals sig;
    uint64_t ns_total;
    /* told of the signals after every event */
    void (*observe)(void *ctx, struct cupace_signals *s);
    /* if set, asked before each start up to the level: a controller */
    int (*may_start)(void *ctx, const struct cupace_signals *s);
    void *ctx;
};

/* xorshift64: the model's draws, and the suites' random signals */
static inline uint64_t ps_xorshift(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static inline double uniform(struct ps_model *m)
{
    return ((double)(ps_xorshift(&m->rng) >> 11) + 0.5) / 9007199254740992.0;
}

static inline double lognormal(struct ps_model *m)
{
    double s2 = log1p(m->cv * m->cv);
    double z = sqrt(-2 * log(uniform(m))) * cos(2 * M_PI * uniform(m));

    return m->work_s * exp(z * sqrt(s2) - s2 / 2);
}

static inline void ps_init(struct ps_model *m, unsigned slots, double work_s, double cv, uint64_t seed,
                    void (*observe)(void *ctx, struct cupace_signals *s), void *ctx)
{
    memset(m, 0, sizeof *m);
    m->observe = observe;
    m->ctx = ctx;
    m->slots = slots;
    m->work_s = work_s;
    m->cv = cv;
    m->rng = seed * 0x9E3779B97F4A7C15ull + 1;
    m->sig.num_devices = 1;
    m->sig.num_gpu_workers = 2;
}

static inline void ps_signal(struct ps_model *m)
{
    m->sig.now_ns = (uint64_t)llround(m->now * 1e9);
    m->sig.in_synthesis = m->n;
    m->sig.synth_ns_total = m->ns_total;
    m->observe(m->ctx, &m->sig);
}

static inline void ps_start(struct ps_model *m)
{
    m->left[m->n] = lognormal(m);
    m->start[m->n] = m->now;
    m->n++;
    m->sig.dispatched++;
    ps_signal(m);
}

/* Fails the youngest synthesis: it leaves without ending. */
static inline void ps_fail(struct ps_model *m)
{
    if (m->n == 0)
        return;
    m->n--;
    m->sig.failed++;
    ps_signal(m);
}

/* Runs to time `until` s, refilling to `level` after each end (never
 * beyond: a lower level lets n fall as syntheses end). */
static inline void ps_run(struct ps_model *m, double until, unsigned level)
{
    if (level > MAXJOBS)
        level = MAXJOBS;
    while (m->n < level && (!m->may_start || m->may_start(m->ctx, &m->sig)))
        ps_start(m);
    while (m->now < until) {
        double rate = m->n <= m->slots ? 1.0 : (double)m->slots / m->n, dt = INFINITY;
        unsigned first = 0;

        for (unsigned i = 0; i < m->n; i++)
            if (m->left[i] / rate < dt) {
                dt = m->left[i] / rate;
                first = i;
            }
        if (m->n == 0 || m->now + dt > until) {
            for (unsigned i = 0; m->n > 0 && i < m->n; i++)
                m->left[i] -= (until - m->now) * rate;
            m->now = until;
            return;
        }
        for (unsigned i = 0; i < m->n; i++)
            m->left[i] -= dt * rate;
        m->now += dt;
        /* in whole ns, as the engine counts: the end's stamp less the start's */
        m->ns_total += (uint64_t)(llround(m->now * 1e9) - llround(m->start[first] * 1e9));
        m->sig.synth_done++;
        m->n--;
        m->left[first] = m->left[m->n];
        m->start[first] = m->start[m->n];
        ps_signal(m);
        while (m->n < level && (!m->may_start || m->may_start(m->ctx, &m->sig)))
            ps_start(m);
    }
}

/* Levels changing every `period` s, cycling through `levels`. */
static inline void ps_schedule(struct ps_model *m, double until, double period,
                        const unsigned *levels, unsigned nlevels)
{
    for (unsigned k = 0; m->now < until; k++)
        ps_run(m, m->now + period, levels[k % nlevels]);
}

#endif
