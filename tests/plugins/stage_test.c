/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Test-only stage plugins, one source for all of them: STAGE_FAULT picks
 * the fault each library is built with (none: the good one).
 *   stage_good        acts out the model; keys: fail_index (a partition
 *                     index whose synthesis fails), sleep_scale (f64)
 *   stage_bad_abi     built for a future ABI
 *   stage_short       a struct shorter than this engine's
 *   stage_missing_op  no kernel
 *   stage_misnamed    its file is not NAME.so for its name
 *   stage_init_fails  init refuses */
#include <stdio.h>

#include "cupace/stage.h"

#ifndef STAGE_FAULT
#define STAGE_FAULT 0
#endif
#if STAGE_FAULT == 0
#define STAGE_NAME "stage_good"
#elif STAGE_FAULT == 1
#define STAGE_NAME "stage_bad_abi"
#elif STAGE_FAULT == 2
#define STAGE_NAME "stage_short"
#elif STAGE_FAULT == 3
#define STAGE_NAME "stage_missing_op"
#elif STAGE_FAULT == 4
#define STAGE_NAME "other_name"
#else
#define STAGE_NAME "stage_init_fails"
#endif

struct state {
    uint64_t fail_index;
    double sleep_scale;
};

static int init(void *s, const struct cupace_params *p, const struct cupace_stage_host *host,
                struct cupace_stage_info *info, char *err, size_t len)
{
    struct state *st = s;

    (void)host, (void)info;
    if (STAGE_FAULT == 5) {
        snprintf(err, len, "no accelerator here");
        return -1;
    }
    if (p->get_u64(p->ctx, "fail_index", UINT64_MAX, &st->fail_index) < 0 ||
        p->get_f64(p->ctx, "sleep_scale", 1.0, &st->sleep_scale) < 0)
        return -1;
    return 0;
}

static int synthesize(void *s, const struct cupace_part_view *v, char *err, size_t len)
{
    const struct state *st = s;

    if (v->index == st->fail_index) {
        snprintf(err, len, "index %u is cursed", v->index);
        return -1;
    }
    return v->host->cpu_work_ns(v->host->ctx, v, (uint64_t)((double)v->model_ns * st->sleep_scale));
}

static int phase(void *s, const struct cupace_part_view *v, char *err, size_t len)
{
    const struct state *st = s;

    (void)err, (void)len;
    return v->host->sleep_ns(v->host->ctx, (uint64_t)((double)v->model_ns * st->sleep_scale));
}

const struct cupace_stages cupace_stages_entry = {
    .abi = STAGE_FAULT == 1 ? CUPACE_STAGE_ABI + 1 : CUPACE_STAGE_ABI,
    .size = STAGE_FAULT == 2 ? 16 : sizeof(struct cupace_stages),
    .name = STAGE_NAME,
    .summary = "a test-only stage plugin",
    .state_size = sizeof(struct state),
    .init = init,
    .synthesize = synthesize,
    .prep = phase,
    .kernel = STAGE_FAULT == 3 ? NULL : phase,
    .epilogue = phase,
};
