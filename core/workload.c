/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * workload.c -- arrivals, per-partition draws and phase durations.
 */
#include "config.h"
#include "workload.h"
#include "units.h"
#include "checked.h"
#include "rng.h"

#include <math.h>
#include <stdlib.h>

size_t cupace_workload_njobs(const struct cupace_config *cfg)
{
    const struct cupace_workload *w = &cfg->workload;

    return w->arrival == CUPACE_ARRIVAL_TRACE ? w->ntrace_jobs : (size_t)w->jobs;
}

void cupace_workload_arrivals(const struct cupace_config *cfg, struct cupace_trace_job *jobs)
{
    const struct cupace_workload *w = &cfg->workload;
    struct cupace_rng rng;
    double t = 0;

    if (w->arrival == CUPACE_ARRIVAL_TRACE) {
        for (size_t i = 0; i < w->ntrace_jobs; i++)
            jobs[i] = w->trace_jobs[i];
        return;
    }
    /* one stream keyed by the seed alone: (seed, -1, -1) cannot be a partition's key */
    cupace_rng_seed(&rng, cfg->engine.seed, UINT64_MAX, UINT64_MAX);
    for (uint64_t i = 0; i < w->jobs; i++) {
        struct cupace_trace_job *j = &jobs[i];

        j->partitions = (uint32_t)w->partitions_per_job;
        j->synth_ns = 0;
        j->kernel_ns = 0;
        switch (w->arrival) {
        case CUPACE_ARRIVAL_POISSON:
            if (i > 0)
                t += -log(1.0 - cupace_rng_uniform(&rng)) * (double)w->interarrival_ns;
            j->arrival_ns = cupace_ns_from_double(t);
            break;
        case CUPACE_ARRIVAL_BURST:
            j->arrival_ns = cupace_time_after(0, cupace_sat_mul(i / w->burst_jobs,
                                                                w->burst_every_ns));
            break;
        default:
            j->arrival_ns = 0;
        }
    }
}

void cupace_draw_plan_init(struct cupace_draw_plan *plan, const struct cupace_config *cfg)
{
    const struct cupace_workload *w = &cfg->workload;

    plan->seed = cfg->engine.seed;
    cupace_mult_init(&plan->synth, w->synth_dist, w->synth_cv);
    cupace_mult_init(&plan->gpu, w->gpu_dist, w->gpu_cv);
    plan->fail_rate = w->fail_rate;
    plan->fail_at = w->fail_at;
    plan->nfail_at = w->nfail_at;
}

static int cmp_fail_at(const void *a, const void *b)
{
    const struct cupace_fail_at *x = a, *y = b;

    if (x->job != y->job)
        return x->job < y->job ? -1 : 1;
    return x->part < y->part ? -1 : x->part > y->part;
}

void cupace_workload_draw(const struct cupace_draw_plan *plan, uint32_t job, uint32_t part,
                          struct cupace_draws *d)
{
    struct cupace_rng rng;
    double u;

    cupace_rng_seed(&rng, plan->seed, job, part);
    d->synth = cupace_mult_draw(&plan->synth, &rng);
    d->prep = cupace_mult_draw(&plan->gpu, &rng);
    d->kernel = cupace_mult_draw(&plan->gpu, &rng);
    d->epilogue = cupace_mult_draw(&plan->gpu, &rng);
    u = cupace_rng_uniform(&rng);
    d->fail = u >= plan->fail_rate ? CUPACE_FAIL_NONE
            : u < plan->fail_rate / 2 ? CUPACE_FAIL_SYNTH : CUPACE_FAIL_KERNEL;
    if (plan->nfail_at) {
        struct cupace_fail_at key = { job, part, CUPACE_FAIL_NONE };
        const struct cupace_fail_at *at = bsearch(&key, plan->fail_at, plan->nfail_at,
                                                  sizeof key, cmp_fail_at);
        if (at)
            d->fail = (uint8_t)at->stage;
    }
}

/* The last change of KEY at or before now, or NULL. */
static const struct cupace_change *change_at(const struct cupace_workload *w, uint64_t now,
                                             enum cupace_change_key key)
{
    const struct cupace_change *c = NULL;

    for (size_t i = 0; i < w->nchanges && w->changes[i].at_ns <= now; i++)
        if (w->changes[i].key == key)
            c = &w->changes[i];
    return c;
}

uint64_t cupace_workload_synth_ns(const struct cupace_workload *w, uint64_t now, uint64_t job_synth,
                                  double mult)
{
    const struct cupace_change *c = change_at(w, now, CUPACE_CHANGE_SYNTH_TIME);

    return cupace_scale_ns(job_synth ? job_synth : c ? c->ns : w->synth_ns, mult);
}

uint64_t cupace_workload_prep_ns(const struct cupace_workload *w, uint64_t now, double mult)
{
    const struct cupace_change *c = change_at(w, now, CUPACE_CHANGE_GPU_PREP);

    return cupace_scale_ns(c ? c->ns : w->gpu_prep_ns, mult);
}

uint64_t cupace_workload_epilogue_ns(const struct cupace_workload *w, uint64_t now, double mult)
{
    const struct cupace_change *c = change_at(w, now, CUPACE_CHANGE_GPU_EPILOGUE);

    return cupace_scale_ns(c ? c->ns : w->gpu_epilogue_ns, mult);
}

uint64_t cupace_workload_kernel_ns(const struct cupace_workload *w, uint64_t now, uint64_t job_kernel,
                                   double mult, unsigned device, int contended)
{
    const struct cupace_change *k = change_at(w, now, CUPACE_CHANGE_GPU_KERNEL);
    const struct cupace_change *sp = change_at(w, now, CUPACE_CHANGE_DEVICE_SPEED);
    const struct cupace_change *ct = change_at(w, now, CUPACE_CHANGE_CONTENTION);
    double speed = sp ? sp->speed[device] : w->device_speed[device];
    double contention = contended ? (ct ? ct->value : w->contention) : 1.0;

    return cupace_scale_ns(job_kernel ? job_kernel : k ? k->ns : w->gpu_kernel_ns, mult * contention / speed);
}
