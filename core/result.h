/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * result.h -- what one run of one controller measured (DESIGN §5), whether
 * simulated or real, and its time series.
 */
#ifndef CUPACE_RESULT_H
#define CUPACE_RESULT_H

#include <stddef.h>
#include <stdint.h>

struct cupace_pipeline;
struct cupace_pacer_instance;

/* One row of the series: the means over the step from t_s (dispatch.h),
 * or the state at t_s for the last row. */
struct cupace_sample {
    double t_s;
    double waiting, in_synthesis, on_gpu;
    double mem_reserved;            /* bytes */
    double interval_s;              /* NAN while the controller holds */
    double busy_s;                  /* device-busy time so far, summed over devices */
};

struct cupace_quantiles {
    double p50, p99, max;
};

struct cupace_result {
    char label[128];
    char plugin[128];
    double makespan_s;
    uint64_t partitions, dispatched, completed, failed, never_dispatched;
    uint64_t jobs_completed, jobs_failed;
    uint64_t jobs_hit;              /* jobs with a failed partition, ended or not */
    double throughput_pps;          /* NAN when partitions completed in a run of no time */
    double gpu_busy_fraction, gpu_starved_s;
    double waiting_mean, in_synthesis_mean;
    uint64_t waiting_max, in_synthesis_max;
    double mem_mean;
    uint64_t mem_peak, mem_budget;
    double mem_bound;
    struct cupace_quantiles job_latency;
    char pacer_state[512];
    int invariants_ok;
    const char *broken;             /* when !invariants_ok: which check failed (static text) */
    int stalled;
    char stall_reason[512];
    int interrupted;
    uint64_t stage_failures;        /* partitions failed by a stage op's error (real time) */
    char stage_failure[512];        /* the first of them: partition, op, reason */
    int has_lateness;
    struct cupace_quantiles lateness;
    /* real time: device time (the kernels' time in the device lock, by the
     * device's clock where the stages read it) against the workers' wall
     * time per partition; the busy fraction by the host's timeline */
    int has_gpu_time, device_clock;
    double gpu_device_s, gpu_worker_s, gpu_busy_fraction_host;
    char devices_lost[512];         /* the first device lost and why, or "" */
    char backend_json[2048];        /* the stages' own report (a JSON value), or "" */
    uint64_t events;
    uint32_t ndevices;
    struct cupace_sample *series;
    size_t nseries, cap_series;
};

/* Names the run after its controller instance: the first thing each
 * driver does with its result. */
void cupace_result_begin(struct cupace_result *res, const struct cupace_pacer_instance *pacer);

/* The last: the metrics from the pipeline at the end of the run, and the
 * controller's own description of its state. */
void cupace_result_end(struct cupace_result *res, const struct cupace_pipeline *pl,
                       struct cupace_pacer_instance *pacer);

/* Fills the metrics of res from a pipeline at the end of its run. */
void cupace_result_from_pipeline(struct cupace_result *res, const struct cupace_pipeline *pl);

/* Appends a sample (growing the series), or replaces the latest where it
 * is of the same instant; -1 when out of memory. */
int cupace_result_add_sample(struct cupace_result *res, const struct cupace_sample *s);


/* Marks the run as stopped at the horizon of virtual time (checked.h):
 * a drawn duration, an arrival or a controller's interval passed it. */
void cupace_result_beyond_horizon(struct cupace_result *res);

/* Marks the run stalled by controller LABEL (PLUGIN) at now. */
void cupace_result_stalled(struct cupace_result *res, const char *label, const char *plugin,
                           uint64_t now, const struct cupace_pipeline *pl);

/* p50, p99 and max of v[0..n) (sorted in place), interpolating linearly
 * between closest ranks; zeros when n = 0. */
struct cupace_quantiles cupace_quantiles(double *v, size_t n);

void cupace_result_free(struct cupace_result *res);

#endif
