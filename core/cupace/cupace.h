/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * cupace/cupace.h -- libcupace: the paced engine, embedded in a program.
 *
 * A program that has its own synthesis and GPU code (a prover) runs it as
 * stages (cupace/stage.h) inside cupace's threads, paced by a controller
 * (cupace/pacer.h) loaded by name as `cupace run` loads it, and feeds the
 * engine jobs from its own threads:
 *
 *     struct cupace_error *err = NULL;
 *     struct cupace_engine *e = cupace_engine_new("node.ini", &err);
 *     cupace_engine_set(e, "engine.synth_workers", "16", &err);
 *     cupace_engine_set_stages(e, &my_stages, &err);
 *     cupace_engine_start(e, &err);
 *     struct cupace_job_spec job = { .size = sizeof job, .partitions = 10,
 *                                    .partition_bytes = 14ULL << 30, .data = proof };
 *     cupace_engine_submit(e, &job, &id, &err);          from any thread
 *     cupace_engine_wait(e, id, &outcome, &err);          or a done callback
 *     cupace_engine_stop(e, CUPACE_STOP_DRAIN);
 *     cupace_engine_join(e, &err);
 *     cupace_engine_free(e);
 *
 * Rules:
 *  - The library owns no part of the process: it prints nothing, installs no
 *    signal handler, reads no terminal and never exits.  It starts threads
 *    of its own (a dispatcher, synthesis threads, GPU workers) and joins
 *    every one of them in cupace_engine_join.
 *  - Every function that can fail returns -1 (or NULL) and, when err is not
 *    NULL, sets *err to an error the caller owns and frees with
 *    cupace_error_free.  An error already in *err is freed first.
 *  - Structs the caller fills or receives start with their `size`, so that
 *    they can grow: set it to sizeof the struct you were compiled with.
 *  - The engine always runs on the real clock (`[engine] mode` is the
 *    command's choice, not the library's); the workload model's jobs are
 *    not generated: the jobs are the ones submitted.
 *
 * Which thread calls what is written beside each function and callback.
 */
#ifndef CUPACE_CUPACE_H
#define CUPACE_CUPACE_H

#include <stddef.h>
#include <stdint.h>

#include <cupace/stage.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this API, checked at run time by cupace_api_version(): a
 * program built against version N works with a library whose version is N
 * or later within the same soname. */
#define CUPACE_API_VERSION 1

/* The library's API version and its package version ("0.1.0").  Any thread. */
unsigned cupace_api_version(void);
const char *cupace_library_version(void);

/* ---- errors ------------------------------------------------------------ */

struct cupace_error;

/* The message: "FILE:LINE: [section] key: reason", "controller 'NAME'
 * (FILE): reason", ...  Valid until the error is freed. */
const char *cupace_error_message(const struct cupace_error *err);
void cupace_error_free(struct cupace_error *err);

/* ---- the engine ---------------------------------------------------------- */

struct cupace_engine;

/* A new engine, not started, over the configuration file PATH, or with
 * every setting at its default when PATH is NULL.  Any thread. */
struct cupace_engine *cupace_engine_new(const char *path, struct cupace_error **err);

/* Sets SECTION.KEY to VALUE as `--set SECTION.KEY=VALUE` would
 * ("engine.synth_workers", "pacer.greedy.interval", "stages.NAME.key").
 * An unknown key or a malformed value is refused at once; keys that
 * disagree with each other (a partition larger than the budget) are
 * refused by start, so that the order of the settings does not matter.
 * Before start only. */
int cupace_engine_set(struct cupace_engine *e, const char *key, const char *value,
                      struct cupace_error **err);

/* The stages to run (checked like a plugin's: abi, size, name, required
 * ops), instead of those `[engine] backend` names.  They read their keys
 * from [stages.NAME] of the configuration; a key they never ask for is an
 * error at start.  OPS must outlive the engine.  Before start only. */
int cupace_engine_set_stages(struct cupace_engine *e, const struct cupace_stages *ops,
                             struct cupace_error **err);

/* What the engine is doing, for a status line or a log.  `size` first. */
struct cupace_progress {
    uint32_t size;                  /* sizeof(struct cupace_progress) as the library knows it */
    uint32_t final;                 /* 1 on the last call, as the run ends */
    uint64_t now_ns;                /* since start */
    uint64_t partitions;            /* submitted */
    uint64_t finished;              /* of them, completed or failed */
    uint64_t waiting, in_synthesis, gpu_busy;
    uint64_t mem_reserved;
    uint64_t interval_ns;           /* the controller's last answer (CUPACE_PACE_HOLD: held) */
    const char *pacer;              /* the controller instance's label */
    const char *pacer_state;        /* its describe(), valid during the call */
};

/* Called every INTERVAL_NS while the engine runs, and once at its end, on
 * the dispatcher thread with the engine's lock held: it must be quick and
 * must not call the engine (such calls are refused).  Before start only. */
int cupace_engine_on_progress(struct cupace_engine *e,
                              void (*fn)(void *data, const struct cupace_progress *p),
                              void *data, uint64_t interval_ns, struct cupace_error **err);

/* Loads the controller, initializes the stages and starts the threads;
 * returns once the engine takes jobs.  Once per engine: of starts on two
 * threads at once one runs it, and the other is refused; a set, set_stages
 * or on_progress meanwhile waits for it and is refused, and free is. */
int cupace_engine_start(struct cupace_engine *e, struct cupace_error **err);

/* ---- jobs ---------------------------------------------------------------- */

/* How a job ended.  Valid during the callback; copied by wait. */
struct cupace_job_outcome {
    uint32_t size;                  /* sizeof(struct cupace_job_outcome) as the library knows it */
    uint32_t ok;                    /* 1 when every partition completed */
    uint64_t job;                   /* the id submit gave */
    void *data;                     /* the job's pointer */
    uint32_t partitions;
    uint32_t failed;                /* failed, cancelled, or never started */
    double latency_s;               /* from submission to the end */
    const char *reason;             /* the first failure ("partition 3: kernel: ..."), or NULL */
};

struct cupace_job_spec {
    uint32_t size;                  /* sizeof(struct cupace_job_spec) */
    uint32_t partitions;            /* at least 1 */
    uint64_t partition_bytes;       /* what each partition holds of the memory budget from its
                                       dispatch to its end; 0: [workload] partition_memory */
    uint64_t release_at_kernel;     /* of which given back when its kernel starts */
    void *data;                     /* the job's pointer: in every view (job_data) and its outcome */
    /* Called once when the job has ended, on the engine's dispatcher thread
     * with no lock held (it may submit; while it runs, nothing is
     * dispatched).  NULL: none (use cupace_engine_wait). */
    void (*done)(void *data, const struct cupace_job_outcome *outcome);
};

/* Submits a job, from any thread, after start and before stop.  Its id
 * (0, 1, ... in submission order) in *job.  Refused: a job of no
 * partitions, or whose partitions the budget could never hold. */
int cupace_engine_submit(struct cupace_engine *e, const struct cupace_job_spec *spec,
                         uint64_t *job, struct cupace_error **err);

/* Waits until job JOB has ended and copies its outcome (out->size set by
 * the caller; reason then points into the engine, valid until free).  From
 * any thread but a done callback's (refused there). */
int cupace_engine_wait(struct cupace_engine *e, uint64_t job, struct cupace_job_outcome *out,
                       struct cupace_error **err);

/* ---- metrics and stopping ------------------------------------------------- */

/* The controller's signals now (cupace/pacer.h; once the run is over, as it
 * ended), and the jobs. */
struct cupace_metrics {
    uint32_t size;                  /* set by the caller: sizeof(struct cupace_metrics) */
    uint32_t running;               /* 1 between start and the end of the run */
    uint64_t jobs_submitted, jobs_completed, jobs_failed;
    struct cupace_signals signals;
};

/* Fills the first out->size bytes that both sides know.  Any thread. */
int cupace_engine_metrics(struct cupace_engine *e, struct cupace_metrics *out);

/* How many partitions the engine could take in the next HORIZON_NS beyond
 * those it holds not yet dispatched: what the controller's last interval
 * dispatches in that time (none while it holds), at most what the free
 * memory budget admits at the partition size of the last job submitted
 * ([workload] partition_memory before the first).  *idle (may be
 * NULL) is set when nothing undispatched is held.  What `cupace serve`
 * claims from its queue by; any thread. */
uint64_t cupace_engine_credit(struct cupace_engine *e, uint64_t horizon_ns, int *idle);

/* Reads the configuration again (the file and the settings made in code)
 * and swaps in the controller its [pacer] name gives, fresh, with nothing
 * dropped: it starts from the signals now.  Other changed keys take effect
 * with the next engine.  Any thread, while the engine runs. */
int cupace_engine_reload(struct cupace_engine *e, struct cupace_error **err);

enum cupace_stop_how {
    CUPACE_STOP_DRAIN,              /* take no more jobs; every job submitted runs to its end */
    CUPACE_STOP_CANCEL,             /* and what has not ended is cancelled: it ends failed */
};

/* Any thread, any number of times (a cancel after a drain cuts it short). */
void cupace_engine_stop(struct cupace_engine *e, enum cupace_stop_how how);

/* Waits for the run to end and joins every thread the engine started:
 * every job's outcome has been given by then.  0, or -1 with the reason
 * when the run broke (a stage's worker_setup failed, out of memory, a
 * stage op caught by the watchdog, the controller stalled).  Any thread
 * but the engine's own (refused there); a second join at once returns
 * -1 once the first has joined. */
int cupace_engine_join(struct cupace_engine *e, struct cupace_error **err);

/* Frees a new or joined engine.  A started engine not yet joined is left
 * as it is: -1 (libuv's rule: no close while work is live). */
int cupace_engine_free(struct cupace_engine *e);

#ifdef __cplusplus
}
#endif

#endif
