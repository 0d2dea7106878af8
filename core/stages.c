/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stages.c -- the emulated stages, the stage-table check, and a stage
 * set's state and init/fini in a run (see stages.h).
 */
#include "config.h"
#include "stages.h"
#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

/* ---- the emulated stages ---------------------------------------------- */

static int emu_init(void *state, const struct cupace_params *p, const struct cupace_stage_host *host,
                    struct cupace_stage_info *info, char *err, size_t errlen)
{
    (void)state, (void)p, (void)host, (void)err, (void)errlen;
    info->buffer_bytes = 0;         /* the model's memory is an account, never allocated */
    return 0;
}

static int emu_cancelled(char *err, size_t errlen)
{
    snprintf(err, errlen, "cancelled");
    return -1;
}

static int emu_synthesize(void *state, const struct cupace_part_view *v, char *err, size_t errlen)
{
    (void)state;
    if (v->host->cpu_work_ns(v->host->ctx, v, v->model_ns) < 0)
        return emu_cancelled(err, errlen);
    return 0;
}

static int emu_phase(void *state, const struct cupace_part_view *v, char *err, size_t errlen)
{
    (void)state;
    if (v->host->sleep_ns(v->host->ctx, v->model_ns) < 0)
        return emu_cancelled(err, errlen);
    return 0;
}

const struct cupace_stages cupace_stages_emulated = {
    .abi = CUPACE_STAGE_ABI,
    .size = sizeof(struct cupace_stages),
    .name = "emulated",
    .summary = "the workload model acted out: shared CPU time, then sleeps of the GPU phases",
    .init = emu_init,
    .synthesize = emu_synthesize,
    .prep = emu_phase,
    .kernel = emu_phase,
    .epilogue = emu_phase,
};

/* ---- the check --------------------------------------------------------- */

int cupace_stages_validate(const struct cupace_stages *s, size_t symsize, char *why, size_t len)
{
    /* The first two fields are all we may read before knowing the size. */
    if (symsize && symsize < offsetof(struct cupace_stages, name)) {
        snprintf(why, len, "its cupace_stages_entry is %zu bytes, too small to hold abi and size",
                 symsize);
        return -1;
    }
    if (s->abi != CUPACE_STAGE_ABI) {
        snprintf(why, len, "it was built for stage ABI %u, this cupace speaks ABI %u: "
                 "rebuild it against this cupace's cupace/stage.h", s->abi, (unsigned)CUPACE_STAGE_ABI);
        return -1;
    }
    if (s->size < sizeof(struct cupace_stages) || (symsize && symsize < sizeof(struct cupace_stages))) {
        snprintf(why, len, "its struct cupace_stages is %u bytes, this cupace needs at least %zu: "
                 "rebuild it against this cupace's cupace/stage.h", s->size,
                 sizeof(struct cupace_stages));
        return -1;
    }
    if (!s->name || !cupace_is_identifier(s->name)) {
        snprintf(why, len, "its name is missing or not a plain identifier");
        return -1;
    }
    if (!s->init || !s->synthesize || !s->kernel) {
        snprintf(why, len, "the required op %s is NULL",
                 !s->init ? "init" : !s->synthesize ? "synthesize" : "kernel");
        return -1;
    }
    if (s->worker_teardown && !s->worker_setup) {
        snprintf(why, len, "it has worker_teardown without worker_setup");
        return -1;
    }
    if (s->state_size > ((size_t)1 << 30)) {
        snprintf(why, len, "it asks for %zu bytes of state per run (more than 1 GiB)", s->state_size);
        return -1;
    }
    return 0;
}

/* ---- a run's stages ------------------------------------------------------ */

static const char *no_get(void *ctx, const char *key)
{
    (void)ctx, (void)key;
    return NULL;
}

static int no_f64(void *ctx, const char *key, double def, double *out)
{
    (void)ctx, (void)key;
    *out = def;
    return 0;
}

static int no_u64(void *ctx, const char *key, uint64_t def, uint64_t *out)
{
    (void)ctx, (void)key;
    *out = def;
    return 0;
}

static int no_bool(void *ctx, const char *key, int def, int *out)
{
    (void)ctx, (void)key;
    *out = def;
    return 0;
}

/* Stages without a section of their own see every key absent. */
static const struct cupace_params no_params = {
    .get = no_get, .get_f64 = no_f64, .get_ns = no_u64, .get_u64 = no_u64, .get_bool = no_bool,
};

int cupace_stage_run_init(struct cupace_stage_run *sr, const struct cupace_stages *ops,
                          const struct cupace_params *p, const struct cupace_stage_host *host,
                          uint64_t partition_memory, const char *who, struct cupace_err *err)
{
    struct cupace_lent why;
    int rc;

    memset(sr, 0, sizeof *sr);
    sr->ops = ops;
    sr->info.size = sizeof sr->info;
    sr->state = calloc(1, ops->state_size ? ops->state_size : 1);
    if (!sr->state)
        return cupace_err_set(err, "%s: out of memory for its state", who);
    sr->inited = 1;                 /* fini is owed even when init fails */
    cupace_lend(&why, CUPACE_LENT_MAX);    /* a stage is a plugin too: text.h */
    rc = ops->init(sr->state, p ? p : &no_params, host, &sr->info, why.buf, CUPACE_LENT_MAX);
    if (cupace_take_back(&why, CUPACE_LENT_MAX) < 0)
        return cupace_err_set(err, "%s: init wrote past the %d bytes of its error buffer", who,
                              CUPACE_LENT_MAX);
    if (rc != 0)
        return cupace_err_set(err, "%s: init failed: %s", who,
                              why.buf[0] ? why.buf : "no reason given");
    if (sr->info.buffer_bytes > partition_memory)
        return cupace_err_set(err, "%s: it declares a buffer of %zu bytes per partition, more than "
                              "partition_memory (%llu bytes), which the memory budget accounts",
                              who, sr->info.buffer_bytes, (unsigned long long)partition_memory);
    return 0;
}

void cupace_stage_run_fini(struct cupace_stage_run *sr)
{
    if (sr->inited && sr->ops->fini)
        sr->ops->fini(sr->state);
    free(sr->state);
    sr->state = NULL;
    sr->inited = 0;
}
