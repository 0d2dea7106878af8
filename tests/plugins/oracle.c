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
 *
 * `probe = K` makes it learn them as a controller must, by letting n fall:
 * blind until the first synthesis ends, it then holds K in synthesis, and
 * knows the slots only once `learn` (3) syntheses started at K have ended
 * (with K of them in synthesis when n came down to K, those that end
 * first are the older ones).  Until n falls no signal tells synth-bound
 * from its twins (as many syntheses each on a CPU of its own, with as
 * much more work as they shared CPUs), so one K is for all of them:
 * doc/twins-floor.sh sweeps it, the least memory a probe can buy on
 * synth-bound against what it costs the twins.  One level teaches this
 * oracle the slots, which no learner can know from it: a level still
 * above them shows only that they are fewer.  With `step = D` it
 * searches as a learner must, each level 1/D below the one before while
 * the level is still above the slots, with a perfect verdict at each.
 */
#include "cupace/pacer.h"

struct oracle {
    uint64_t slots, stock, blind, probe, learn, step;
    int at_level;               /* n has come down to the probe's level */
    uint64_t done_at_level;     /* syntheses that had ended then */
    int learned;
};

static int oracle_init(void *state, const struct cupace_params *p, char *err, size_t errlen)
{
    struct oracle *o = state;

    (void)err;
    (void)errlen;
    if (p->get_u64(p->ctx, "slots", 1, &o->slots) < 0 ||
        p->get_u64(p->ctx, "stock", UINT64_MAX, &o->stock) < 0 ||
        p->get_u64(p->ctx, "blind", 0, &o->blind) < 0 ||
        p->get_u64(p->ctx, "probe", 0, &o->probe) < 0 ||
        p->get_u64(p->ctx, "learn", 3, &o->learn) < 0 ||
        p->get_u64(p->ctx, "step", 0, &o->step) < 0)
        return -1;
    if (o->probe)
        o->blind = 1;
    o->learned = !o->probe;
    return 0;
}

static void oracle_update(void *state, const struct cupace_signals *s)
{
    struct oracle *o = state;

    if (o->learned || s->synth_done == 0)
        return;
    if (!o->at_level && s->in_synthesis <= o->probe) {
        o->at_level = 1;
        o->done_at_level = s->synth_done;
    }
    if (!o->at_level || s->synth_done < o->done_at_level + o->probe + o->learn)
        return;
    if (o->step && o->probe > o->slots) {
        uint64_t down = o->probe / o->step;
        uint64_t next = o->probe - (down > 0 ? down : 1);

        o->probe = next > o->slots ? next : o->slots;
        o->at_level = 0;
    } else {
        o->learned = 1;
    }
}

static uint64_t oracle_interval(void *state, const struct cupace_signals *s)
{
    const struct oracle *o = state;

    uint64_t n = o->learned ? o->slots : o->probe;

    if (o->blind && s->synth_done == 0)
        return 0;
    return s->in_synthesis < n && s->waiting < o->stock ? 0 : CUPACE_PACE_HOLD;
}

const struct cupace_pacer cupace_pacer_entry = {
    .abi = CUPACE_PACER_ABI, .size = sizeof(struct cupace_pacer), .name = "oracle",
    .summary = "test-only: keeps `slots` in synthesis and at most `stock` waiting",
    .state_size = sizeof(struct oracle),
    .init = oracle_init, .update = oracle_update, .interval_ns = oracle_interval,
};
