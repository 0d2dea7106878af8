/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * intercompletion -- the baseline: pace by the interval between GPU
 * completions.
 *
 * Kept to show and measure the failure that started cupace: the interval
 * between completions measures the *arrival* rate at the GPU, not its
 * capacity.  When the pipeline drains (an idle gap, a slow bootstrap) the
 * intervals stretch, the controller slows down, and the pipeline drains
 * further.  With `require_waiting = yes` it only samples while the GPU
 * queue is non-empty, which with two workers per device is almost never,
 * so its estimate stays stale.  Bootstrap as in the seed: `target`
 * partitions in flight until the first sample.
 */
#include <stdio.h>

#include "pace_util.h"

struct ic_state {
    struct pace_pi pi;
    double alpha;
    int require_waiting;
    double gap_ns;              /* EMA of the time between completions */
    int have_gap;
    uint64_t last_done;
    uint64_t last_ns;           /* time of the previous completion */
    int have_last;
    uint64_t samples, skipped;
    uint64_t last_interval;
};

static int ic_init(void *state, const struct cupace_params *p, char *err, size_t errlen)
{
    struct ic_state *st = state;

    if (pace_pi_init(&st->pi, p, 3.0, 0.5, 0.005, err, errlen) < 0 ||
        pace_alpha_init(p, 0.2, &st->alpha, err, errlen) < 0 ||
        p->get_bool(p->ctx, "require_waiting", 0, &st->require_waiting) < 0)
        return -1;
    return 0;
}

static void ic_update(void *state, const struct cupace_signals *s)
{
    struct ic_state *st = state;
    uint64_t n = s->gpu_done - st->last_done;

    if (n > 0) {
        if (st->have_last && s->now_ns >= st->last_ns) {
            if (!st->require_waiting || s->waiting > 0) {
                st->gap_ns = pace_ema(st->gap_ns, (double)(s->now_ns - st->last_ns) / (double)n,
                                      st->alpha, !st->have_gap);
                st->have_gap = 1;
                st->samples++;
            } else {
                st->skipped++;
            }
        }
        st->last_ns = s->now_ns;
        st->have_last = 1;
        st->last_done = s->gpu_done;
    }
    pace_pi_advance(&st->pi, s->now_ns, pace_pi_error(&st->pi, (double)s->waiting),
                    st->have_gap && s->pending > 0);
}

static uint64_t ic_interval(void *state, const struct cupace_signals *s)
{
    struct ic_state *st = state;

    if (!st->have_gap)
        return st->last_interval = (double)in_flight(s) < st->pi.target ? 0 : CUPACE_PACE_HOLD;
    return st->last_interval = pace_clamp_ns(pace_pi_apply(&st->pi, pace_pi_error(&st->pi, (double)s->waiting),
                                                          st->gap_ns), 0,
                                             3600000000000ULL);
}

static int ic_describe(void *state, char *buf, size_t len)
{
    struct ic_state *st = state;

    return snprintf(buf, len, "gap_s=%.4g samples=%llu skipped=%llu integral=%.4g", st->gap_ns / 1e9,
                    (unsigned long long)st->samples, (unsigned long long)st->skipped,
                    st->pi.integral);
}

const struct cupace_pacer cupace_pacer_entry = {
    .abi = CUPACE_PACER_ABI,
    .size = sizeof(struct cupace_pacer),
    .name = "intercompletion",
    .summary = "baseline: EMA of the time between GPU completions, PI on the queue depth",
    .state_size = sizeof(struct ic_state),
    .init = ic_init,
    .update = ic_update,
    .interval_ns = ic_interval,
    .describe = ic_describe,
};
