/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * cupace/stage.h -- the stage SDK: what runs on the engine's threads.
 *
 * The controllers decide *when* a partition starts; the stages are *what*
 * runs: its synthesis on a CPU thread, then its three GPU phases (prep,
 * kernel, epilogue) on a GPU worker.  A set of stages is a `struct
 * cupace_stages`: built into the engine (`emulated`, which acts out the
 * workload model's durations), given in code to libcupace, or a shared
 * object found by name (`[engine] backend = NAME`) that exports one symbol,
 * `cupace_stages_entry`, a `const struct cupace_stages`.  The engine loads
 * such a plugin with dlopen(RTLD_NOW|RTLD_LOCAL), checks `abi` first and
 * `size` next, checks that the required ops are there, allocates
 * `state_size` zeroed bytes and calls `init`, exactly as it does a
 * controller.  Plugins never link against the engine.
 *
 * Rules of the contract:
 *  - Every op returns 0, or -1 with a reason written into err (errlen bytes,
 *    NUL-terminated).  A failing op fails that partition (accounted failed,
 *    with its reason; its job fails) and never the engine: the run goes on.
 *  - An op that never returns is caught by the engine's watchdog (`[engine]
 *    stall_timeout`), which ends the run naming the partition and the op.
 *  - A stage that crashes takes the process down with it: the engine runs
 *    stages in its own threads, not in another process.
 *  - Ops of different partitions run at the same time on different threads:
 *    `synthesize` on up to `synth_workers` threads at once, the GPU phases on
 *    up to devices x workers_per_device.  State shared between them (the
 *    `state` the engine allocated) is the stage's to protect.
 *  - `kernel` runs inside the device lock when `gpu_exclusive = yes`: one
 *    kernel per device at a time, and the time it holds the lock is what the
 *    controllers see as gpu_device_ns_total.
 *  - The memory budget is an account of the bytes each partition declares
 *    (`partition_memory`): the engine allocates nothing on the model's say.
 *    A stage allocates what it really uses, or declares a per-partition host
 *    buffer (`buffer_bytes` in init) that the engine allocates for it.
 *  - In `mode = sim` stages never run: the model's durations stand in.
 */
#ifndef CUPACE_STAGE_H
#define CUPACE_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include <cupace/pacer.h>   /* struct cupace_params */

#ifdef __cplusplus
extern "C" {
#endif

#define CUPACE_STAGE_ABI 1

struct cupace_part_view;

/* What the engine offers a stage while it runs.  Valid from init until
 * fini returns; its functions may be called from any op's thread. */
struct cupace_stage_host {
    uint32_t size;                  /* sizeof(struct cupace_stage_host) as the engine knows it */
    uint32_t reserved;              /* zero */
    void *ctx;                      /* the engine's: pass it back */
    /* Sleeps ns of the engine's clock; returns -1 early once the run is
     * cancelled (the op should then return -1). */
    int (*sleep_ns)(void *ctx, uint64_t ns);
    /* Acts out ns of full-speed CPU work of a synthesis: with more
     * syntheses running than `cpu_slots`, they share the slots and each
     * takes longer (the workload model's processor sharing).  From
     * synthesize only; returns -1 early once the run is cancelled. */
    int (*cpu_work_ns)(void *ctx, const struct cupace_part_view *part, uint64_t ns);
    /* 1 once the run is cancelled: a long op should look now and then and
     * return -1 when it is. */
    int (*cancelled)(void *ctx);
    /* The members below came later: look at `size` before calling one
     * (CUPACE_STAGE_HOST_HAS). */
    /* From kernel only: the device time of this partition's kernel by the
     * device's own clock (e.g. CUDA events around the exclusive region).
     * The engine then counts it as the partition's device time
     * (gpu_device_ns_total) instead of its wall clock around the op. */
    void (*device_time_ns)(void *ctx, const struct cupace_part_view *part, uint64_t ns);
    /* From a GPU phase: the partition's device is lost (a sticky error).
     * The op should then fail; the device's workers take no more work,
     * and the run goes on with the other devices, or ends failed, with
     * why, when none is left. */
    void (*retire_device)(void *ctx, const struct cupace_part_view *part, const char *why);
};

/* Whether the engine's host struct h has member m. */
#define CUPACE_STAGE_HOST_HAS(h, m) \
    ((h)->size >= offsetof(struct cupace_stage_host, m) + sizeof((h)->m) && (h)->m)

/* One partition as a stage sees it, passed to every per-partition op.  The
 * view and everything it points to are valid during the call only, except
 * `buf`, which lives from synthesize until the partition finishes. */
struct cupace_part_view {
    uint32_t size;                  /* sizeof(struct cupace_part_view) as the engine knows it */
    uint32_t index;                 /* the partition's index within its job */
    uint64_t job;                   /* the job, in arrival order */
    uint32_t partitions;            /* partitions of that job */
    uint32_t worker;                /* the synthesis thread's or the GPU worker's index */
    uint32_t device;                /* GPU phases: the device's index; synthesis: 0 */
    uint32_t reserved;              /* zero */
    void *job_data;                 /* the job's user pointer (libcupace), NULL for model jobs */
    void *buf;                      /* the host buffer the stage declared (buffer_bytes), or NULL */
    size_t buf_bytes;               /* its size */
    void *worker_state;             /* GPU phases: what worker_setup gave, else NULL */
    uint64_t model_ns;              /* the workload model's duration of this phase (time-scaled):
                                       what an emulating stage acts out; others may ignore it */
    const struct cupace_stage_host *host;
};

/* What init tells the engine. */
struct cupace_stage_info {
    uint32_t size;                  /* sizeof(struct cupace_stage_info) as the engine knows it */
    uint32_t reserved;              /* zero */
    size_t buffer_bytes;            /* per-partition host buffer to allocate, 0 for none; at most
                                       partition_memory, the bytes each partition declares */
};

typedef int (*cupace_stage_op)(void *state, const struct cupace_part_view *part, char *err,
                               size_t errlen);

struct cupace_stages {
    uint32_t abi;                   /* CUPACE_STAGE_ABI */
    uint32_t size;                  /* sizeof(struct cupace_stages) */
    const char *name;               /* the NAME of backend = NAME: [A-Za-z0-9_-]+ */
    const char *summary;            /* one line, shown by `cupace plugins` */
    size_t state_size;              /* private state the engine allocates, zeroed, per run */

    /* Required.  Once per run, on the thread that starts it, before any
     * other op.  Reads its keys through p (a key never asked for is a
     * configuration error), keeps host for later, fills info. */
    int (*init)(void *state, const struct cupace_params *p, const struct cupace_stage_host *host,
                struct cupace_stage_info *info, char *err, size_t errlen);
    /* Optional.  Once, after every thread of the run has been joined (and
     * also when init failed). */
    void (*fini)(void *state);

    /* Optional.  On each GPU worker's own thread before it takes work
     * (where a CUDA stream and pinned buffers belong); *worker_state is
     * passed back in every view of that worker.  A failure ends the run
     * before any partition starts. */
    int (*worker_setup)(void *state, uint32_t device, uint32_t worker, void **worker_state,
                        char *err, size_t errlen);
    /* Optional.  On the same thread, when the run is over. */
    void (*worker_teardown)(void *state, void *worker_state);

    /* Required.  On a synthesis thread: builds the partition's work (fills
     * part->buf when the stage declared one). */
    cupace_stage_op synthesize;
    /* Optional.  On a GPU worker, outside the device lock: host-side
     * preparation (copies, staging). */
    cupace_stage_op prep;
    /* Required.  On a GPU worker, inside the device lock when
     * gpu_exclusive: the device work. */
    cupace_stage_op kernel;
    /* Optional.  On a GPU worker, after the lock is released: the result's
     * host side.  The partition is complete when it returns 0. */
    cupace_stage_op epilogue;
};

#ifdef __cplusplus
}
#endif

#endif
