/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * proctime -- pace by the GPU's measured processing time.
 *
 * The seed's method: the GPU serves one partition every P/W seconds, where P
 * is the worker processing time of a partition (an EMA of
 * Δgpu_ns_total/Δgpu_done, sampled only when completions happened, so an idle
 * gap cannot move it) and W the number of GPU workers.  Dispatching at that
 * rate, corrected by a PI controller on the GPU queue depth, keeps the queue
 * near `target`.
 *
 * Where this departs from the seed (README, "proctime"):
 *  - Bootstrap.  The seed dispatched `target` partitions, then waited for the
 *    first completion.  Keeping the GPUs fed takes about (GPU rate x
 *    synthesis time) partitions in flight, far more than `target` on a
 *    multi-GPU node, so the seed starved the GPUs while the pipeline filled.
 *    Until a GPU completion is known this controller dispatches as fast as
 *    the memory budget and the synthesis slots allow (min_interval).
 *  - The PI acts on the *projected* queue depth, not today's: what waits now,
 *    plus what is in synthesis, minus what the GPUs will consume while one
 *    synthesis runs (S / (P/W), S the measured synthesis time), minus a
 *    safety margin of one standard deviation of S in GPU slots.  A partition
 *    dispatched now reaches the GPU queue S seconds later, so the queue
 *    depth alone is a signal S seconds late: a controller acting on it
 *    overshoots after a fill and starves the GPU after a drain.  The
 *    projection is the inventory position of stock control (on hand + on
 *    order - demand over the lead time).
 *  - The integral is frozen while nothing is pending (pace_util.h).
 *  - A CPU probe (pace_util.h).  When the pipeline stays short of what
 *    feeds the GPUs although work is pending, the CPU may be the bottleneck;
 *    syntheses beyond its capacity only slow each other down and hold
 *    memory.  The signals carry no CPU count, so it lowers a cap on the
 *    partitions in synthesis step by step while the synthesis time falls
 *    with it, and stops where it no longer does.
 *
 * Each departure has its key, so that the seed's controller is one config
 * away and the README can show what each one buys: `bootstrap = seed`
 * (dispatch `target`, then wait for the first completion), `projection =
 * no` (the PI on today's queue depth) and `cpu_probe = no`.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pace_util.h"

/* The safety margin, in standard deviations of the synthesis time.  Half a
 * deviation kept makespans within 1% of greedy's on every shipped scenario
 * (README, "Scenarios"); a whole one cost 4-5% more memory for nothing. */
#define SAFETY_SD 0.5


struct proctime_state {
    struct pace_pi pi;
    double alpha;
    uint64_t min_ns, max_ns;
    double proc_ns;             /* EMA of worker processing ns per completion */
    double synth_ns;            /* EMA of synthesis ns per successful synthesis */
    double synth_var;           /* EMA of its squared deviation, ns^2 */
    double synth_lead_ns;       /* synth_ns + SAFETY_SD sd: what one synthesis must cover */
    int have_proc, have_synth;
    uint64_t last_done, last_gpu_ns;
    uint64_t last_synth_done, last_synth_ns;
    double projected;           /* the projected queue depth, partitions */
    uint64_t last_interval;
    struct pace_cpu_probe probe;
    int seed_bootstrap, projection, use_probe;  /* the departures' keys */
};

static int proctime_init(void *state, const struct cupace_params *p, char *err, size_t errlen)
{
    struct proctime_state *st = state;

    if (pace_pi_init(&st->pi, p, 3.0, 0.5, 0.005, err, errlen) < 0 ||
        pace_alpha_init(p, 0.2, &st->alpha, err, errlen) < 0 ||
        p->get_ns(p->ctx, "min_interval", 0, &st->min_ns) < 0 ||
        p->get_ns(p->ctx, "max_interval", 600000000000ULL, &st->max_ns) < 0)
        return -1;
    {
        const char *b = p->get(p->ctx, "bootstrap");
        if (b && strcmp(b, "fill") != 0 && strcmp(b, "seed") != 0) {
            snprintf(err, errlen, "bootstrap must be fill or seed");
            return -1;
        }
        st->seed_bootstrap = b && strcmp(b, "seed") == 0;
    }
    if (p->get_bool(p->ctx, "projection", 1, &st->projection) < 0 ||
        p->get_bool(p->ctx, "cpu_probe", 1, &st->use_probe) < 0)
        return -1;
    if (st->min_ns > st->max_ns) {
        snprintf(err, errlen, "min_interval exceeds max_interval");
        return -1;
    }
    return 0;
}

/* Takes one sample of P from the completions since the last one. */
static void sample_processing(struct proctime_state *st, const struct cupace_signals *s)
{
    uint64_t n = s->gpu_done - st->last_done;

    if (n == 0 || s->gpu_ns_total < st->last_gpu_ns)
        return;
    st->proc_ns = pace_ema(st->proc_ns, (double)(s->gpu_ns_total - st->last_gpu_ns) / (double)n,
                           st->alpha, !st->have_proc);
    st->have_proc = 1;
    st->last_done = s->gpu_done;
    st->last_gpu_ns = s->gpu_ns_total;
}

/* Takes one sample of S, and of its spread, from the syntheses since the last. */
static void sample_synthesis(struct proctime_state *st, const struct cupace_signals *s)
{
    uint64_t n = s->synth_done - st->last_synth_done;
    double x, d;

    if (n == 0 || s->synth_ns_total < st->last_synth_ns)
        return;
    x = (double)(s->synth_ns_total - st->last_synth_ns) / (double)n;
    d = st->have_synth ? x - st->synth_ns : 0;
    st->synth_ns = pace_ema(st->synth_ns, x, st->alpha, !st->have_synth);
    st->synth_var = pace_ema(st->synth_var, d * d, st->alpha / 4, !st->have_synth);
    /* kept here, once per synthesis, not per event */
    st->synth_lead_ns = st->synth_ns + SAFETY_SD * sqrt(st->synth_var);
    st->have_synth = 1;
    st->last_synth_done = s->synth_done;
    st->last_synth_ns = s->synth_ns_total;
}

static double base_interval(const struct proctime_state *st, const struct cupace_signals *s)
{
    double base = st->proc_ns / (s->num_gpu_workers ? s->num_gpu_workers : 1);

    return base < 1.0 ? 1.0 : base;
}

/* waiting + in synthesis - GPU demand over one synthesis - its spread; with
 * projection = no, the seed's signal: the queue depth of today */
static double projected_depth(const struct proctime_state *st, const struct cupace_signals *s)
{
    double lead = st->have_synth ? st->synth_lead_ns / base_interval(st, s) : 0;

    if (!st->projection)
        return (double)s->waiting;
    return (double)s->waiting + (double)s->in_synthesis - lead;
}

/* The CPU probe (pace_util.h): short of what feeds the GPUs while work
 * is pending. */
static void cpu_probe_update(struct proctime_state *st, const struct cupace_signals *s)
{
    pace_cpu_probe(&st->probe, s, st->have_synth && st->have_proc, st->synth_ns,
                   s->pending > 0 && projected_depth(st, s) < 0);
}

static void proctime_update(void *state, const struct cupace_signals *s)
{
    struct proctime_state *st = state;

    sample_processing(st, s);
    sample_synthesis(st, s);
    cpu_probe_update(st, s);
    if (st->have_proc)
        st->projected = projected_depth(st, s);
    pace_pi_advance(&st->pi, s->now_ns, pace_pi_error(&st->pi, st->projected),
                    st->have_proc && s->pending > 0);
}

static uint64_t proctime_interval(void *state, const struct cupace_signals *s)
{
    struct proctime_state *st = state;
    double e;

    if (!st->have_proc && st->seed_bootstrap)      /* the seed: `target`, then wait */
        return st->last_interval = (double)s->dispatched < st->pi.target || in_flight(s) == 0
                                       ? st->min_ns : CUPACE_PACE_HOLD;
    if (!st->have_proc)
        return st->last_interval = st->min_ns;     /* bootstrap: fill (see above) */
    if (st->use_probe && pace_cpu_full(&st->probe, s))
        return st->last_interval = CUPACE_PACE_HOLD;   /* the CPU is full (pace_util.h) */
    st->projected = projected_depth(st, s);
    e = pace_pi_error(&st->pi, st->projected);
    return st->last_interval = pace_clamp_ns(pace_pi_apply(&st->pi, e, base_interval(st, s)),
                                             st->min_ns, st->max_ns);
}

static int proctime_describe(void *state, char *buf, size_t len)
{
    struct proctime_state *st = state;

    return snprintf(buf, len, "proc_s=%.4g synth_s=%.4g synth_sd_s=%.3g projected=%.3g "
                    "integral=%.4g cpu_cap=%.3g interval_s=%.4g", st->proc_ns / 1e9,
                    st->synth_ns / 1e9, sqrt(st->synth_var) / 1e9, st->projected,
                    st->pi.integral, st->probe.cap,
                    st->last_interval == CUPACE_PACE_HOLD ? -1.0 : (double)st->last_interval / 1e9);
}

const struct cupace_pacer cupace_pacer_entry = {
    .abi = CUPACE_PACER_ABI,
    .size = sizeof(struct cupace_pacer),
    .name = "proctime",
    .summary = "GPU processing time / workers, PI on the projected GPU queue depth",
    .state_size = sizeof(struct proctime_state),
    .init = proctime_init,
    .update = proctime_update,
    .interval_ns = proctime_interval,
    .describe = proctime_describe,
};
