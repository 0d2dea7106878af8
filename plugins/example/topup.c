/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * topup -- an example controller, built outside cupace's own build.
 *
 * Keeps the pipeline in front of the GPU topped up to `depth` partitions
 * (in synthesis + waiting): dispatch at once below it, hold at it.  A
 * window that leaves what is on the GPU out of its count.  It needs the
 * right depth for each workload, which is what `cupace ab` shows.
 *
 *   cc -shared -fPIC $(pkg-config --cflags cupace-pacer) -o topup.so topup.c
 */
#include <stdio.h>

#include <cupace/pacer.h>

struct topup {
    uint64_t depth;
};

static int topup_init(void *state, const struct cupace_params *p, char *err, size_t errlen)
{
    struct topup *t = state;

    if (p->get_u64(p->ctx, "depth", 16, &t->depth) < 0)
        return -1;                      /* the engine names the key and the line */
    if (t->depth == 0) {
        snprintf(err, errlen, "depth must be at least 1");
        return -1;
    }
    return 0;
}

static void topup_update(void *state, const struct cupace_signals *s)
{
    (void)state;                        /* nothing to learn: it reads the signals directly */
    (void)s;
}

static uint64_t topup_interval(void *state, const struct cupace_signals *s)
{
    const struct topup *t = state;

    return s->in_synthesis + s->waiting < t->depth ? 0 : CUPACE_PACE_HOLD;
}

static int topup_describe(void *state, char *buf, size_t len)
{
    return snprintf(buf, len, "depth=%llu", (unsigned long long)((struct topup *)state)->depth);
}

const struct cupace_pacer cupace_pacer_entry = {
    .abi = CUPACE_PACER_ABI,
    .size = sizeof(struct cupace_pacer),
    .name = "topup",
    .summary = "example: keep `depth` partitions in synthesis or waiting",
    .state_size = sizeof(struct topup),
    .init = topup_init,
    .update = topup_update,
    .interval_ns = topup_interval,
    .describe = topup_describe,
};
