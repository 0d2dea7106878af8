/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * seeds.h -- the A/B over many seeds (`cupace ab --seeds N`): every
 * controller on seeds first, first+1, ..., run in parallel over threads, and
 * each controller's paired ratios to a baseline summarised with their 95%
 * confidence intervals (stats.h).
 *
 * The simulator is re-entrant (its state lives in one struct per run), so
 * the runs need no locks; only the creation of controller instances, which
 * marks the keys each one reads in the shared config, is serialised.  Each
 * result lands in its own slot, so what the caller reports does not depend
 * on how many threads ran it.
 */
#ifndef CUPACE_SEEDS_H
#define CUPACE_SEEDS_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "error.h"
#include "result.h"
#include "stats.h"

/* res[seed_index * npacers + pacer_index] */
#define CUPACE_SEED_RESULT(res, npacers, s, p) (&(res)[(s) * (npacers) + (p)])

/* Runs each of labels[0..npacers) on nseeds seeds from cfg's seed, with at
 * most `jobs` threads, in simulation.  res holds nseeds * npacers zeroed
 * results.  Returns 0, or -1 with err set when a run could not be made. */
int cupace_run_seeds(struct cupace_config *cfg, const char *const *labels, size_t npacers,
                     size_t nseeds, unsigned jobs, struct cupace_result *res,
                     struct cupace_err *err);

/* One controller over the seeds: its ratio to the baseline on the same seed
 * for makespan, job latency p50 and p99 and mean memory, and its own mean
 * memory over bound_bytes. */
struct cupace_seed_summary {
    struct cupace_ci makespan, p50, p99, mem;
    struct cupace_ci mem_over_bound;
    size_t left_out;        /* seeds where this run or the baseline's stalled or broke an
                             * invariant: their figures describe no whole run */
};

void cupace_seeds_summarize(const struct cupace_result *res, size_t nseeds, size_t npacers,
                            size_t baseline, struct cupace_seed_summary *out);

#endif
