/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * workload.h -- the workload model of DESIGN §4, shared by the simulator and
 * the emulated backend: job arrivals, each partition's random draws, and the
 * durations in force when a phase starts (change points, trace overrides,
 * device speed, contention).
 *
 * Draws are mean-1 multipliers taken at the partition's creation from its
 * own stream (seed, job, partition) in the order synthesis, prep, kernel,
 * epilogue, failure.  A partition named by fail_at fails where it says,
 * whatever its failure draw (which is still taken, so that naming one
 * partition changes no other's work).  A phase's duration is the mean in force when it starts
 * times its multiplier, so a change point affects phases that start after it
 * and running work is never rescaled.
 */
#ifndef CUPACE_WORKLOAD_H
#define CUPACE_WORKLOAD_H

#include <stdint.h>

#include "conf.h"
#include "rng.h"

struct cupace_draws {
    double synth, prep, kernel, epilogue;   /* mean-1 multipliers */
    uint8_t fail;                           /* enum cupace_fail_stage */
};

/* Fills jobs[0..n) (n = cupace_workload_njobs) in arrival order. */
size_t cupace_workload_njobs(const struct cupace_config *cfg);
void cupace_workload_arrivals(const struct cupace_config *cfg, struct cupace_trace_job *jobs);

/* What a partition's draws need, worked out once per run. */
struct cupace_draw_plan {
    uint64_t seed;
    struct cupace_mult synth, gpu;
    double fail_rate;
    const struct cupace_fail_at *fail_at;   /* the workload's, sorted */
    size_t nfail_at;
};

void cupace_draw_plan_init(struct cupace_draw_plan *plan, const struct cupace_config *cfg);
void cupace_workload_draw(const struct cupace_draw_plan *plan, uint32_t job, uint32_t part,
                          struct cupace_draws *d);

/* Durations of a phase starting at now (ns). `job_synth`/`job_kernel`: the
 * job's trace overrides, 0 for none. */
uint64_t cupace_workload_synth_ns(const struct cupace_workload *w, uint64_t now, uint64_t job_synth,
                                  double mult);
uint64_t cupace_workload_prep_ns(const struct cupace_workload *w, uint64_t now, double mult);
uint64_t cupace_workload_epilogue_ns(const struct cupace_workload *w, uint64_t now, double mult);
/* contended: another worker of the device holds a partition at kernel start. */
uint64_t cupace_workload_kernel_ns(const struct cupace_workload *w, uint64_t now, uint64_t job_kernel,
                                   double mult, unsigned device, int contended);

#endif
