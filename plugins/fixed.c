/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fixed -- a fixed dispatch interval.  `interval = 0` is greedy: no pacing at
 * all, only the memory budget and the synthesis slots gate.  The reference
 * every other controller's makespan is measured against.
 */
#include <stdio.h>

#include "cupace/pacer.h"

struct fixed_state {
    uint64_t interval_ns;
};

static int fixed_init(void *state, const struct cupace_params *p, char *err, size_t errlen)
{
    struct fixed_state *st = state;

    (void)err;
    (void)errlen;
    return p->get_ns(p->ctx, "interval", 0, &st->interval_ns);
}

static void fixed_update(void *state, const struct cupace_signals *s)
{
    (void)state;
    (void)s;
}

static uint64_t fixed_interval(void *state, const struct cupace_signals *s)
{
    (void)s;
    return ((struct fixed_state *)state)->interval_ns;
}

static int fixed_describe(void *state, char *buf, size_t len)
{
    return snprintf(buf, len, "interval_s=%.6g", (double)((struct fixed_state *)state)->interval_ns / 1e9);
}

const struct cupace_pacer cupace_pacer_entry = {
    .abi = CUPACE_PACER_ABI,
    .size = sizeof(struct cupace_pacer),
    .name = "fixed",
    .summary = "a fixed dispatch interval; interval = 0 is greedy (memory and slots gate only)",
    .state_size = sizeof(struct fixed_state),
    .init = fixed_init,
    .update = fixed_update,
    .interval_ns = fixed_interval,
    .describe = fixed_describe,
};
