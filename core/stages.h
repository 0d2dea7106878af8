/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stages.h -- the engine's side of cupace/stage.h: the built-in emulated
 * stages, the one check every stage table passes before use, and a stage
 * set's life in a run (state, init, fini).
 *
 * Where a table comes from (built in, given in code, a plugin) is not this
 * module's business; what it checks is the same for all.
 */
#ifndef CUPACE_STAGES_H
#define CUPACE_STAGES_H

#include <stddef.h>
#include <stdint.h>

#include "cupace/stage.h"
#include "error.h"

/* The workload model acted out: synthesis as CPU work shared by cpu_slots
 * (host->cpu_work_ns), the GPU phases as sleeps of the model's durations. */
extern const struct cupace_stages cupace_stages_emulated;

/* Checks a stage table: ABI first, then size (`symsize`: the exported
 * object's size when the loader knows it, else 0), name, required ops,
 * state size.  Returns 0, or -1 with the reason in why. */
int cupace_stages_validate(const struct cupace_stages *s, size_t symsize, char *why, size_t len);

/* One run's use of a stage table. */
struct cupace_stage_run {
    const struct cupace_stages *ops;
    void *state;
    struct cupace_stage_info info;
    int inited;
};

/* Allocates the state and calls init with the keys of p (NULL: none) and
 * the engine's host services.  A buffer larger than partition_memory is
 * refused: the budget would no longer account for what is really held.
 * WHO names the stages in messages ("stages 'NAME' (FILE)"). */
int cupace_stage_run_init(struct cupace_stage_run *sr, const struct cupace_stages *ops,
                          const struct cupace_params *p, const struct cupace_stage_host *host,
                          uint64_t partition_memory, const char *who, struct cupace_err *err);
/* fini (when init was called) and the state freed. */
void cupace_stage_run_fini(struct cupace_stage_run *sr);

#endif
