/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * window -- a closed window: at most `window` partitions dispatched and not
 * yet finished (completed or failed).  What most engineers write instead of a
 * pacer; it needs the right window for each workload.
 */
#include <stdio.h>

#include "pace_util.h"

struct window_state {
    uint64_t window;
};

static int window_init(void *state, const struct cupace_params *p, char *err, size_t errlen)
{
    struct window_state *st = state;

    if (p->get_u64(p->ctx, "window", 8, &st->window) < 0)
        return -1;
    if (st->window < 1) {
        snprintf(err, errlen, "window must be at least 1");
        return -1;
    }
    return 0;
}

static void window_update(void *state, const struct cupace_signals *s)
{
    (void)state;
    (void)s;
}

static uint64_t window_interval(void *state, const struct cupace_signals *s)
{
    return in_flight(s) < ((struct window_state *)state)->window ? 0 : CUPACE_PACE_HOLD;
}

static int window_describe(void *state, char *buf, size_t len)
{
    return snprintf(buf, len, "window=%llu",
                    (unsigned long long)((struct window_state *)state)->window);
}

const struct cupace_pacer cupace_pacer_entry = {
    .abi = CUPACE_PACER_ABI,
    .size = sizeof(struct cupace_pacer),
    .name = "window",
    .summary = "closed window: at most `window` partitions dispatched and not finished",
    .state_size = sizeof(struct window_state),
    .init = window_init,
    .update = window_update,
    .interval_ns = window_interval,
    .describe = window_describe,
};
