/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * realtime.h -- the real-time engine (mode = realtime): threads, a real
 * clock, real waiting; the pipeline state machine of pipeline.h driven from
 * a dispatcher thread, a synthesis pool and GPU workers.
 *
 * It owns no part of the process: it prints nothing, handles no signal and
 * reads no terminal.  Its caller stops it (cupace_rt_stop, from any thread)
 * and hears of its progress through opts->progress.
 */
#ifndef CUPACE_REALTIME_H
#define CUPACE_REALTIME_H

#include "conf.h"
#include "error.h"
#include "pacer_host.h"
#include "result.h"
#include "sim.h"

struct cupace_rt;

enum cupace_rt_stop {
    CUPACE_RT_DRAIN,                /* dispatch nothing more; what is in flight finishes */
    CUPACE_RT_CANCEL,               /* and what is in flight is cancelled (accounted failed) */
};

/* Sets up a run of cfg's workload under the controller instance (both
 * outlive the run).  NULL with err set on a bad backend or out of memory. */
struct cupace_rt *cupace_rt_create(const struct cupace_config *cfg,
                                   struct cupace_pacer_instance *pacer,
                                   const struct cupace_run_opts *opts, struct cupace_err *err);

/* The backend chosen, and in *why (if not NULL) why `auto` chose it. */
const char *cupace_rt_backend(const struct cupace_rt *rt, const char **why);

/* Runs to the end, in the calling thread (the dispatcher), joining every
 * thread it started.  0 with res filled (a stalled or stopped run is a
 * result), or -1 with err set.  Once per cupace_rt. */
int cupace_rt_run(struct cupace_rt *rt, struct cupace_result *res, struct cupace_err *err);

/* From any thread, between create and destroy: stops the run, the first
 * time by draining, or at once by cancelling.  Returns the partitions in
 * flight when it was called. */
uint64_t cupace_rt_stop(struct cupace_rt *rt, enum cupace_rt_stop how);

void cupace_rt_destroy(struct cupace_rt *rt);

/* The reason a job ends with where the run ended before some of its
 * partitions ran and none of them failed: no fault of the job's own (a
 * node gives such a job back to its queue, its attempt unspent). */
#define CUPACE_RT_NOT_RUN "not run: the engine stopped before it finished"

/* Open runs (opts->open), from any thread once cupace_rt_run has been
 * called: a job of PARTITIONS partitions of PART_MEM bytes each (RELEASE of
 * them given back at the kernel), with DATA for its stages' views and TAG
 * for its end (both in its struct cupace_rt_job_end).  Waits until the run
 * is past its set-up.  Its index, or -1 with err set: a job the budget
 * could never hold, a run closed, stopped or ended, no memory. */
int64_t cupace_rt_submit(struct cupace_rt *rt, uint32_t partitions, uint64_t part_mem,
                         uint64_t release, void *data, void *tag, struct cupace_err *err);
/* From any thread once cupace_rt_run has been called: waits until the run
 * is past its set-up (1) or over (0). */
int cupace_rt_wait_ready(struct cupace_rt *rt);
/* Open runs, from any thread: no more jobs; the run ends once every job
 * submitted has ended. */
void cupace_rt_close(struct cupace_rt *rt);
/* Open runs, from any thread: the partitions the run could take in the
 * next HORIZON_NS beyond those it holds undispatched (cupace serve's
 * claims): as many as the controller's last interval dispatches in that
 * time (none while it holds), at most what the free memory budget admits
 * at the size of the last job taken (partition_memory before the first).
 * *idle: nothing undispatched is held. */
uint64_t cupace_rt_credit(struct cupace_rt *rt, uint64_t horizon_ns, int *idle);
/* From any thread: the controller is PACER from now on (the caller keeps
 * the old one until this returns, then may destroy it).  PACER gets one
 * update with the signals now before it is asked anything. */
void cupace_rt_set_pacer(struct cupace_rt *rt, struct cupace_pacer_instance *pacer);
/* A copy of the controller's signals now (at its end once it is over),
 * from any thread; 0, or -1 before the run is past its set-up. */
int cupace_rt_signals(struct cupace_rt *rt, struct cupace_signals *s);

/* create, run, destroy. */
int cupace_realtime(const struct cupace_config *cfg, struct cupace_pacer_instance *pacer,
                    const struct cupace_run_opts *opts, struct cupace_result *res,
                    struct cupace_err *err);

#endif
