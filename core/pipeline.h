/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pipeline.h -- the pipeline's state machine, its accounting and its metrics.
 *
 * One piece of code for both worlds: it has no clock and no threads.  The
 * simulator drives it from its event queue; the real-time engine drives it
 * from its threads under one mutex.  Each transition takes `now`, advances
 * the time-weighted metrics, changes the state, and calls the observer, which
 * is where the driver calls the controller's update (DESIGN §3: once after
 * every event that changes a signal).
 *
 * Invariants (cupace_pipeline_sane() checks the O(1) ones under assert after
 * every transition; cupace_pipeline_sane_full() all of them at the end of
 * every run):
 *   dispatched == in_synthesis + waiting + gpu_busy + gpu_done + failed
 *   mem_reserved <= mem_budget, and mem_reserved is the sum of what the
 *     partitions in synthesis, waiting and on the GPU hold
 *   in_synthesis <= synth slots, gpu_busy <= GPU workers
 *   every partition is in exactly one state; finished = gpu_done + failed
 *   time never goes back (checked at the end: time_went_back)
 * The cumulative totals of the signals (synth_ns_total, gpu_ns_total,
 * gpu_device_ns_total) saturate at UINT64_MAX, over 584 years of work.
 *
 * Partitions are stored in job order, and jobs in arrival order, so the job
 * queue (oldest job first, then lowest partition) is the index range
 * [next_dispatch, arrived_end): no list, no allocation per partition.
 */
#ifndef CUPACE_PIPELINE_H
#define CUPACE_PIPELINE_H

#include <stdint.h>

#include "conf.h"
#include "cupace/pacer.h"
#include "error.h"
#include "ps.h"
#include "workload.h"

enum cupace_part_state {
    CUPACE_PART_PENDING, CUPACE_PART_SYNTH, CUPACE_PART_WAITING, CUPACE_PART_GPU,
    CUPACE_PART_DONE, CUPACE_PART_FAILED
};

/* One partition's record: 64 bytes, one per partition of the run, so kept
 * small (a large run's records are tens of MiB, and on a virtual machine
 * the kernel's zeroing of fresh pages is a good part of a simulation's
 * time).  What it holds follows from its state: memory held is the whole
 * partition from dispatch on, less release_at_kernel once the kernel has
 * started (`released`), nothing once finished. */
struct cupace_part {
    uint32_t job;
    uint8_t state;
    uint8_t in_kernel;              /* between kernel start and kernel end */
    uint8_t released;               /* release_at_kernel given back */
    uint8_t fail;                   /* enum cupace_fail_stage, drawn at dispatch */
    double prep_draw, kernel_draw, epilogue_draw;   /* mean-1 multipliers, drawn at dispatch */
    uint64_t t_stage;               /* dispatch time until the synthesis ends, then take time */
    uint64_t synth_drawn_ns, prep_ns, kernel_ns;
};

struct cupace_job {
    uint64_t arrival_ns;
    uint64_t synth_ns, kernel_ns;   /* trace overrides, 0 for none */
    uint64_t part_mem;              /* bytes each partition holds from dispatch */
    uint64_t release;               /* of which given back when its kernel starts */
    uint32_t first, count, left;
    uint32_t failed;                /* partitions failed */
};

/* An accumulator of products such as bytes x ns, which overflow 64 bits in
 * an hour of a large budget.  Exact integers where the compiler has them
 * (and they are far cheaper than x87 long double, once per event); long
 * double elsewhere.  Read it through (double). */
#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 cupace_acc;
#else
typedef long double cupace_acc;
#endif

/* A time-weighted quantity: its integral over time and its maximum over
 * states that lasted longer than zero; and its maximum over every state,
 * for a run that took no time, where no state lasted (result.c). */
struct cupace_tw {
    cupace_acc integral;
    uint64_t max;
    uint64_t max_any;
};

typedef void (*cupace_pipeline_observer)(void *ctx, uint64_t now);
/* A job's last partition finished (completed or failed). */
typedef void (*cupace_pipeline_job_observer)(void *ctx, uint32_t job);

struct cupace_pipeline {
    const struct cupace_config *cfg;
    struct cupace_draw_plan draw_plan;
    uint32_t ndevices, workers_per_device, nworkers;
    uint64_t synth_slots, mem_budget, part_mem, release_at_kernel;

    struct cupace_job *jobs;
    size_t njobs, jobs_arrived, cap_jobs;
    struct cupace_part *parts;
    uint32_t nparts, arrived_end, next_dispatch, cap_parts;
    uint32_t *gpuq;                 /* FIFO of waiting partitions */
    uint32_t q_head, q_tail;

    /* the signals */
    uint64_t dispatched, in_synthesis, synth_done, synth_ns_total, waiting, gpu_busy;
    uint64_t gpu_done, gpu_ns_total, gpu_device_ns_total, failed, mem_reserved;
    uint64_t jobs_completed, jobs_failed;

    uint32_t *device_kernels;       /* workers in their kernel phase, per device */
    uint32_t *device_holders;       /* workers holding a partition, per device */
    uint32_t busy_devices;

    /* metrics */
    int started;
    int time_went_back;             /* a transition came with an earlier now */
    uint64_t t_first, t_last, t_end;
    struct cupace_tw tw_waiting, tw_synth, tw_mem;
    cupace_acc busy_ns, starved_ns, bound_byte_ns;
    double *latency;
    size_t nlatency;

    cupace_pipeline_observer observer;
    void *observer_ctx;
    cupace_pipeline_job_observer job_observer;     /* NULL: none */
    void *job_observer_ctx;
};

int cupace_pipeline_init(struct cupace_pipeline *pl, const struct cupace_config *cfg,
                         struct cupace_err *err);
/* The same with no job of the workload's: jobs come by add_job (libcupace). */
int cupace_pipeline_init_open(struct cupace_pipeline *pl, const struct cupace_config *cfg,
                              struct cupace_err *err);
void cupace_pipeline_free(struct cupace_pipeline *pl);

/* A job of COUNT partitions of PART_MEM bytes each (RELEASE of them given
 * back when a kernel starts) arrives now, after every other.  Returns its
 * index, or -1 with err set: no partitions, more than a partition's share
 * of the budget can ever hold, release above part_mem, or out of memory.
 * The arrays grow: pointers into parts or jobs do not outlive a call. */
int64_t cupace_pipeline_add_job(struct cupace_pipeline *pl, uint64_t now, uint32_t count,
                                uint64_t part_mem, uint64_t release, struct cupace_err *err);

/* The next job to arrive: its time, or UINT64_MAX when all have arrived. */
uint64_t cupace_pipeline_next_arrival(const struct cupace_pipeline *pl);
void cupace_pipeline_arrive(struct cupace_pipeline *pl, uint64_t now);

/* Gates 2 and 3 (memory, a synthesis slot) and something pending. */
int cupace_pipeline_can_dispatch(const struct cupace_pipeline *pl);
/* Dispatches the head of the job queue; returns the partition. */
uint32_t cupace_pipeline_dispatch(struct cupace_pipeline *pl, uint64_t now);
/* Synthesis ended (failed if its draw says so). Returns 0, or -1 if it failed. */
int cupace_pipeline_synth_end(struct cupace_pipeline *pl, uint64_t now, uint32_t part);
/* A worker of `device` takes the head of the GPU queue (waiting > 0). */
uint32_t cupace_pipeline_take(struct cupace_pipeline *pl, uint64_t now, unsigned device);
/* Whether a worker of `device` other than the caller holds a partition. */
int cupace_pipeline_contended(const struct cupace_pipeline *pl, unsigned device);
/* The prep ended; returns -1 if the partition failed there (fail_at ...:prep:
 * it is then accounted as failed, its worker is free and no kernel runs),
 * else 0. */
int cupace_pipeline_prep_end(struct cupace_pipeline *pl, uint64_t now, uint32_t part,
                             unsigned device);
void cupace_pipeline_kernel_start(struct cupace_pipeline *pl, uint64_t now, uint32_t part,
                                  unsigned device, uint64_t prep_ns, uint64_t kernel_ns);
/* The kernel ended; returns -1 if the partition failed on the GPU (it is then
 * accounted as failed and its worker is free), else 0. */
int cupace_pipeline_kernel_end(struct cupace_pipeline *pl, uint64_t now, uint32_t part,
                               unsigned device);
/* The epilogue ended: the partition completed (0), or failed there (-1;
 * fail_at ...:epilogue).  Either way its worker is free. */
int cupace_pipeline_gpu_done(struct cupace_pipeline *pl, uint64_t now, uint32_t part,
                             unsigned device, uint64_t epilogue_ns);

/* The durations of a partition's GPU phases starting at now, by the model
 * (change points, trace overrides, device speed, and for the kernel the
 * contention on `device` at that moment). */
uint64_t cupace_pipeline_prep_ns(const struct cupace_pipeline *pl, uint64_t now, uint32_t part);
uint64_t cupace_pipeline_kernel_ns(const struct cupace_pipeline *pl, uint64_t now, uint32_t part,
                                   unsigned device);
uint64_t cupace_pipeline_epilogue_ns(const struct cupace_pipeline *pl, uint64_t now, uint32_t part);

/* Ends, by cupace_pipeline_synth_end, every synthesis of ps finished at
 * now, ties included, calling each(ctx, id, rc) after each end (rc: 0, or
 * -1 when it failed; each may be NULL).  `scheduled`: the earliest one is
 * finished whatever the rounding of ps says, because its finish event fired
 * at now (the simulator); otherwise what ps says (real time).  Returns how
 * many ended. */
size_t cupace_pipeline_synth_collect(struct cupace_pipeline *pl, struct cupace_ps *ps, uint64_t now,
                                     int scheduled, void (*each)(void *ctx, uint32_t id, int rc),
                                     void *ctx);

/* GPU workers are numbered device-major: worker w belongs to device w / W. */
static inline unsigned cupace_pipeline_worker_device(const struct cupace_pipeline *pl, uint32_t w)
{
    return w / pl->workers_per_device;
}

/* Cancels a partition wherever it is (synthesis, or on a worker of
 * `device`): it is accounted as failed.  For a cancelled real-time run. */
void cupace_pipeline_abort(struct cupace_pipeline *pl, uint64_t now, uint32_t part, unsigned device);
/* Cancels every waiting partition; returns how many. */
uint64_t cupace_pipeline_abort_waiting(struct cupace_pipeline *pl, uint64_t now);

/* The snapshot given to the controller. */
void cupace_pipeline_signals(const struct cupace_pipeline *pl, uint64_t now,
                             struct cupace_signals *s);

static inline uint64_t cupace_pipeline_pending(const struct cupace_pipeline *pl)
{
    return pl->arrived_end - pl->next_dispatch;
}

static inline uint64_t cupace_pipeline_finished(const struct cupace_pipeline *pl)
{
    return pl->gpu_done + pl->failed;
}

/* The O(1) invariants (after every transition, under assert). */
int cupace_pipeline_sane(const struct cupace_pipeline *pl);
/* All of them, O(partitions): every partition's state against the
 * counters, and the memory held against mem_reserved (end of a run). */
int cupace_pipeline_sane_full(const struct cupace_pipeline *pl);

#endif
