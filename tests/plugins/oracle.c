/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Test-only controller: the oracle that measures a scenario's physical
 * floor for doc/floor.sh.  It is told what no signal says, the CPU's
 * synthesis slots (`slots`), and keeps exactly that many partitions in
 * synthesis, so that the CPU never idles and is never oversubscribed
 * (processor sharing: a synthesis beyond the slots only stretches every
 * synthesis and adds memory).  `stock` caps what is synthesized and
 * waiting for a GPU on top; sweeping it finds the least memory at which
 * the GPUs are still kept as busy as greedy keeps them.
 *
 * `blind = 1` starts it as blind as any controller starts: until the first
 * synthesis ends, no signal carries the CPU's slots, so until then it
 * dispatches like greedy; the floor it gives is the one a controller that
 * learns the slots could reach at best.
 */
#include "cupace/pacer.h"

struct oracle { uint64_t slots, stock, blind; };

static int oracle_init(void *state, const struct cupace_params *p, char *err, size_t errlen)
{
    struct oracle *o = state;

    (void)err;
    (void)errlen;
    if (p->get_u64(p->ctx, "slots", 1, &o->slots) < 0 ||
        p->get_u64(p->ctx, "stock", UINT64_MAX, &o->stock) < 0 ||
        p->get_u64(p->ctx, "blind", 0, &o->blind) < 0)
        return -1;
    return 0;
}

static void oracle_update(void *state, const struct cupace_signals *s)
{
    (void)state;
    (void)s;
}

static uint64_t oracle_interval(void *state, const struct cupace_signals *s)
{
    const struct oracle *o = state;

    if (o->blind && s->synth_done == 0)
        return 0;
    return s->in_synthesis < o->slots && s->waiting < o->stock ? 0 : CUPACE_PACE_HOLD;
}

const struct cupace_pacer cupace_pacer_entry = {
    .abi = CUPACE_PACER_ABI, .size = sizeof(struct cupace_pacer), .name = "oracle",
    .summary = "test-only: keeps `slots` in synthesis and at most `stock` waiting",
    .state_size = sizeof(struct oracle),
    .init = oracle_init, .update = oracle_update, .interval_ns = oracle_interval,
};
