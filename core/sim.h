/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * sim.h -- the discrete-event simulator (mode = sim): virtual time,
 * deterministic, the pipeline state machine driven from an event queue.
 */
#ifndef CUPACE_SIM_H
#define CUPACE_SIM_H

#include "conf.h"
#include "error.h"
#include "pacer_host.h"
#include "result.h"
#include "cupace/stage.h"

/* What the real-time engine tells of its progress, every
 * progress_interval_ns and once at the end (final).  Pointers are valid
 * during the call only. */
struct cupace_rt_progress {
    uint64_t now_ns;                /* since the run's start */
    const char *label;              /* the controller instance */
    uint64_t finished, partitions;
    uint64_t waiting, in_synthesis, gpu_busy;
    uint32_t gpu_workers;
    uint64_t mem_reserved;
    uint64_t interval_ns;           /* the controller's last answer (CUPACE_PACE_HOLD: held) */
    const char *pacer_state;        /* its describe() */
    int final;
};

/* How an open run's job ended (cupace_run_opts.job_done). */
struct cupace_rt_job_end {
    uint64_t job;                   /* its index, in submission order */
    void *data, *tag;               /* what the submitter gave */
    uint32_t partitions, failed;    /* failed: failed, cancelled or never started */
    double latency_s;               /* from its submission to its end */
    const char *reason;             /* the first failure's, NULL when none failed */
};

struct cupace_run_opts {
    int record_series;              /* keep a time series in the result */
    uint64_t series_step_ns;        /* at most one sample per step of model time */
    /* real time only: called from the dispatcher with the engine's lock
     * held, so it must be quick and must not call the engine; NULL: none */
    void (*progress)(void *ctx, const struct cupace_rt_progress *p);
    void *progress_ctx;
    uint64_t progress_interval_ns;
    /* real time only: the stages to run instead of those [engine] backend
     * names (NULL: those), and the keys they read (NULL: none) */
    const struct cupace_stages *stages;
    const struct cupace_params *stage_params;
    /* the simulator only: NULL, or a flag the caller raises from any thread
     * (cupace_stop_request; async-signal-safe) to end the run at the next
     * event with its report, marked interrupted.  The engine handles no
     * signal itself; real time is stopped with cupace_rt_stop. */
    int *stop;
    /* real time only: an open run (libcupace) takes its jobs from
     * cupace_rt_submit instead of the workload's, and ends only once it is
     * closed and every job has ended, or stopped. */
    int open;
    /* open runs: called for every job once it has ended, in the order they
     * end, from the run's thread with no lock held (it may submit); NULL:
     * none.  Jobs the run never started are reported at its end, failed;
     * a job the watchdog left in a stage op is never reported (its data may
     * still be in use). */
    void (*job_done)(void *ctx, const struct cupace_rt_job_end *end);
    void *job_done_ctx;
};

static inline void cupace_stop_request(int *stop)
{
    __atomic_store_n(stop, 1, __ATOMIC_RELEASE);
}

static inline int cupace_stop_requested(const struct cupace_run_opts *opts)
{
    return opts->stop && __atomic_load_n(opts->stop, __ATOMIC_ACQUIRE);
}

/* Runs the workload of cfg under the controller instance.  Returns 0 with
 * res filled (a stalled run is a result: res->stalled), or -1 with err set
 * when the run could not be made (out of memory). */
int cupace_simulate(const struct cupace_config *cfg, struct cupace_pacer_instance *pacer,
                    const struct cupace_run_opts *opts, struct cupace_result *res,
                    struct cupace_err *err);

#endif
