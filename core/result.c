/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * result.c -- metrics of a finished run, by the definitions of DESIGN §5.
 */
#include "config.h"
#include "result.h"
#include "grow.h"
#include "pacer_host.h"
#include "pipeline.h"
#include "checked.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double rank(const double *v, size_t n, double p)
{
    double pos = p * (double)(n - 1);
    size_t lo = (size_t)pos;
    double frac = pos - (double)lo;

    if (lo + 1 >= n)
        return v[n - 1];
    return v[lo] + (v[lo + 1] - v[lo]) * frac;
}

struct cupace_quantiles cupace_quantiles(double *v, size_t n)
{
    struct cupace_quantiles q = { 0, 0, 0 };

    if (n == 0)
        return q;
    qsort(v, n, sizeof *v, cmp_double);
    q.p50 = rank(v, n, 0.50);
    q.p99 = rank(v, n, 0.99);
    q.max = v[n - 1];
    return q;
}

static const char *report_check(const struct cupace_result *res,
                                const struct cupace_pipeline *pl);

void cupace_result_from_pipeline(struct cupace_result *res, const struct cupace_pipeline *pl)
{
    uint64_t span_ns = pl->t_end - pl->t_first;
    double span = (double)span_ns;

    res->partitions = pl->nparts;
    res->dispatched = pl->dispatched;
    res->completed = pl->gpu_done;
    res->failed = pl->failed;
    res->never_dispatched = pl->nparts - pl->dispatched;
    res->jobs_completed = pl->jobs_completed;
    res->jobs_failed = pl->jobs_failed;
    res->jobs_hit = 0;
    for (uint64_t j = 0; j < pl->jobs_arrived; j++)
        res->jobs_hit += pl->jobs[j].failed > 0;
    res->makespan_s = span / 1e9;
    res->mem_budget = pl->mem_budget;
    res->ndevices = pl->ndevices;
    /* a maximum counts the states that lasted longer than zero (DESIGN §4);
     * in a run that took no time none did, and a peak of 0 beside 6
     * partitions of 10 GiB was false: there it is every state's */
    res->waiting_max = span_ns ? pl->tw_waiting.max : pl->tw_waiting.max_any;
    res->in_synthesis_max = span_ns ? pl->tw_synth.max : pl->tw_synth.max_any;
    res->mem_peak = span_ns ? pl->tw_mem.max : pl->tw_mem.max_any;
    if (span_ns == 0 && pl->gpu_done > 0)
        res->throughput_pps = NAN;  /* partitions in no time: no rate (null in the JSON) */
    if (span_ns > 0) {
        res->throughput_pps = (double)pl->gpu_done / (span / 1e9);
        res->gpu_busy_fraction = (double)pl->busy_ns / ((double)pl->ndevices * span);
        res->waiting_mean = (double)pl->tw_waiting.integral / span;
        res->in_synthesis_mean = (double)pl->tw_synth.integral / span;
        res->mem_mean = (double)pl->tw_mem.integral / span;
    }
    res->gpu_starved_s = (double)pl->starved_ns / 1e9;
    if (pl->gpu_done > 0 && span_ns > 0)
        res->mem_bound = res->throughput_pps *
                         ((double)pl->bound_byte_ns / (double)pl->gpu_done / 1e9);
    {
        double *lat = malloc((pl->nlatency ? pl->nlatency : 1) * sizeof *lat);
        if (lat) {
            memcpy(lat, pl->latency, pl->nlatency * sizeof *lat);
            res->job_latency = cupace_quantiles(lat, pl->nlatency);
            free(lat);
        }
    }
    res->broken = report_check(res, pl);
    res->invariants_ok = res->broken == NULL;
}

/* Whether a mean exceeds its maximum beyond the rounding of the division. */
static int above(double mean, double max)
{
    return mean > max * (1 + 1e-9) + 1e-9;
}

/* The end-of-run checks: the accounting (cupace_pipeline_sane_full) and
 * what a report must satisfy to be true at all.  A wrapped time or a
 * driver's slip shows as one of these.  Returns NULL, or what failed. */
static const char *report_check(const struct cupace_result *res, const struct cupace_pipeline *pl)
{
    if (!cupace_pipeline_sane_full(pl))
        return "partitions or memory do not add up";
    if (pl->time_went_back)
        return "time went backwards";
    if (pl->t_end < pl->t_first || pl->t_end > CUPACE_HORIZON_NS)
        return "the makespan is not a time of this run";
    if (cupace_pipeline_finished(pl) < pl->nparts)
        return NULL;                /* stalled or interrupted: the rest need an ended run */
    if (pl->mem_reserved != 0 || pl->jobs_completed + pl->jobs_failed != pl->njobs)
        return "memory or jobs left over at the end";
    if (pl->jobs_arrived && pl->t_end < pl->jobs[pl->jobs_arrived - 1].arrival_ns)
        return "the run ended before its last arrival";
    if (above(res->waiting_mean, (double)res->waiting_max) ||
        above(res->in_synthesis_mean, (double)res->in_synthesis_max) ||
        above(res->mem_mean, (double)res->mem_peak))
        return "a mean is above its maximum";
    if (res->mem_peak > res->mem_budget)
        return "the memory peak is above the budget";
    return NULL;
}

void cupace_result_begin(struct cupace_result *res, const struct cupace_pacer_instance *pacer)
{
    snprintf(res->label, sizeof res->label, "%s", pacer->label);
    snprintf(res->plugin, sizeof res->plugin, "%s", pacer->plugin);
}

void cupace_result_end(struct cupace_result *res, const struct cupace_pipeline *pl,
                       struct cupace_pacer_instance *pacer)
{
    cupace_result_from_pipeline(res, pl);
    cupace_pacer_instance_describe(pacer, res->pacer_state, sizeof res->pacer_state);
}

int cupace_result_add_sample(struct cupace_result *res, const struct cupace_sample *s)
{
    /* a step function: a later sample at the same instant replaces it */
    if (res->nseries > 0 && res->series[res->nseries - 1].t_s == s->t_s) {
        res->series[res->nseries - 1] = *s;
        return 0;
    }
    if (res->nseries == res->cap_series) {
        struct cupace_sample *more = cupace_grow(res->series, &res->cap_series, sizeof *more, 1024);
        if (!more)
            return -1;
        res->series = more;
    }
    res->series[res->nseries++] = *s;
    return 0;
}

void cupace_result_beyond_horizon(struct cupace_result *res)
{
    res->invariants_ok = 0;
    res->broken = "virtual time passed cupace's horizon of 2^62 ns (146 years), by a duration "
                  "drawn far in its tail; the run was stopped there";
}

void cupace_result_stalled(struct cupace_result *res, const char *label, const char *plugin,
                           uint64_t now, const struct cupace_pipeline *pl)
{
    res->stalled = 1;
    snprintf(res->stall_reason, sizeof res->stall_reason,
             "controller '%s' (%s) stalled the run at %.3fs: %llu partitions never dispatched, "
             "%llu in flight; it held (CUPACE_PACE_HOLD, or an interval too long for the run to "
             "end within cupace's horizon of 146 years) with nothing left to wait for",
             label, plugin, (double)now / 1e9,
             (unsigned long long)(pl->nparts - pl->dispatched),
             (unsigned long long)(pl->dispatched - cupace_pipeline_finished(pl)));
}

void cupace_result_free(struct cupace_result *res)
{
    free(res->series);
    res->series = NULL;
    res->nseries = res->cap_series = 0;
}
