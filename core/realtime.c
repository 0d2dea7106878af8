/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * realtime.c -- the real-time engine: the pipeline of pipeline.h driven by
 * threads on the monotonic clock.
 *
 * Threads:
 *  - the dispatcher (the calling thread): the only caller of the controller.
 *    It handles arrivals, feeds the controller one update per event (the
 *    pipeline's observer logs a snapshot per transition; the dispatcher
 *    replays them in order, with the lock held), and dispatches when the
 *    gates pass and now >= last_dispatch + interval.  It sleeps on a
 *    condition variable until an absolute CLOCK_MONOTONIC deadline (the due
 *    dispatch, the next arrival, the next progress report) and is woken
 *    early by an event, once per sleep.  Its gates, stall rule and sampler
 *    are the simulator's (dispatch.h);
 *  - `synth_workers` synthesis threads sharing `cpu_slots` by processor
 *    sharing (the same ps.c tracker as the simulator);
 *  - `workers_per_device` GPU workers per device, taking waiting partitions
 *    longest idle first; the device lock is a ticket lock, granted in
 *    request order.  Both pools are crews (struct rt_crew): a thread is
 *    woken only when no awake one will see the work.
 * It owns no part of the process: no signal, no terminal, no output.  A
 * caller stops a run with cupace_rt_stop() from any thread (drain, then
 * cancel: the command does so on SIGINT) and learns of its progress through
 * a callback.
 *
 * All pipeline state is under one mutex.  The GPU completion ("finalizer")
 * adds the worker's processing time to gpu_ns_total before it increments
 * gpu_done, inside that mutex, whose unlock/lock pairs are the
 * release/acquire edges: the dispatcher never sees a completion without its
 * time.  Durations come from the same per-partition streams as the
 * simulator, scaled by time_scale; reports are in real seconds.
 */
#define _GNU_SOURCE 1
#include "config.h"
#include "realtime.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dispatch.h"
#include "grow.h"
#include "pipeline.h"
#include "ps.h"
#include "stages.h"
#include "units.h"
#include "cuda_stages.h"
#ifdef HAVE_CUDA
#include "cuda_backend.h"
#endif

struct rt_device {
    pthread_cond_t cv;
    uint64_t next_ticket, serving;
    int retired;                        /* lost (a sticky error): its workers take no work */
};

/* A synthesis thread or a GPU worker. */
struct rt_worker {
    struct cupace_rt *rt;
    unsigned index;                     /* in its crew */
    unsigned device;                    /* GPU workers only */
    void *stage_state;                  /* GPU workers: what the stages' worker_setup gave */
    const char *op;                     /* the stage op it is in, NULL if none (the watchdog's) */
    uint32_t op_part;
    uint64_t op_since;
    pthread_t thread;
};

/* The view a stage op gets, the partition behind it (for cpu_work_ns),
 * and the device time the op reported (device_time_ns), if any. */
struct rt_view {
    struct cupace_part_view v;
    uint32_t id;
    int has_device_ns;
    uint64_t device_ns;
};

/*
 * A crew: threads that take work from one queue (the synthesis threads from
 * the dispatched partitions, the GPU workers from the waiting ones).
 *
 * Each member sleeps on its own condition variable, and an idle member
 * waits in a FIFO ring, so a waker wakes exactly the member that has been
 * idle longest (DESIGN §4's order for GPU workers) and knows it did: a
 * spurious wake-up cannot be mistaken for a hand-off.  `free` counts the
 * members awake and bound to look at the queue before they sleep again,
 * including those woken and not yet running.  Members start idle.  Work is handed on with
 * one wake-up only where no free member will see it anyway, and a member
 * that takes work and leaves more behind wakes the next one (a chain).
 * When work flows faster than threads wake, one member takes a batch and
 * the others are never woken: on a virtual machine a futex hand-off costs
 * tens of microseconds.
 */
struct rt_member {
    pthread_cond_t cv;
    int asleep;
};

struct rt_crew {
    struct rt_member *members;
    uint32_t *idle;                     /* ring of member indices, longest idle first */
    unsigned n, idle_head, idle_count;
    unsigned free;
};

struct cupace_rt {
    struct cupace_config cfg;           /* the caller's engine and workload, time-scaled (scale_config) */
    struct cupace_pipeline pl;
    struct cupace_dispatcher disp;
    struct cupace_pacer_instance *pacer;
    const struct cupace_stages *stage_ops;
    char backend_why[4200];             /* why `auto` chose the stages it chose (or their file) */
    struct cupace_stage_run stages;
    struct cupace_stage_plugin plugin;  /* backend = NAME: the plugin's file, opened */
    struct cupace_pacer_section *stage_section;     /* its [stages.NAME] */
    struct cupace_stage_host host;
    int emulated;                       /* the built-in stages: a zero-length phase needs no call */
    void **bufs;                        /* per partition, when the stages declared a buffer */
    uint64_t stage_failures;            /* partitions failed by an op's error */
    char stage_failure[512];            /* the first of them, with its reason */
    unsigned gpu_ready;                 /* GPU workers past worker_setup */
    int abandoned;                      /* the watchdog left a thread in an op: keep everything */
    char setup_error[512];              /* a worker_setup's failure: the run ends */
    int device_clock;                   /* the stages time kernels by the device's clock */
    unsigned nretired;                  /* devices lost */
    char lost[512];                     /* the first device lost, and why; the run's end
                                           when every device is lost */
    const struct cupace_params *stage_params;   /* the params the stages' init is given */
    struct cupace_params cuda_params;   /* backend = cuda: over cfg's [cuda] and [engine] */
    const struct cupace_config *cuda_cfg;
    char cuda_ids[CUPACE_MAX_DEVICES * 8];
    struct cupace_run_opts opts;
    struct cupace_result *res;

    pthread_mutex_t lock;
    pthread_cond_t dispatcher_cv;
    struct rt_crew synth_crew, gpu_crew;
    pthread_cond_t synth_cv;            /* the set of syntheses changed: deadlines move */
    struct rt_device *devices;
    uint32_t *synth_q;                  /* dispatched, not yet picked by a thread */
    uint32_t sq_head, sq_tail;
    uint8_t *synth_finished;
    struct cupace_ps ps;
    struct cupace_signals *log;         /* events not yet fed to the controller */
    size_t nlog, caplog;
    int stopping, cancelled, done, oom;
    int stop_called;                    /* cupace_rt_stop was: the run is interrupted; the
                                         * watchdog and a lost device stop it too, but the
                                         * run then stalled or failed, it was not interrupted */
    int synced;                         /* the mutexes and condition variables exist */
    /* threads asleep on each condition: a signal nobody waits for is skipped
     * (on a virtual machine every futex call is a trip to the kernel) */
    unsigned dispatcher_waiting, ps_waiters;

    pthread_mutex_t sleep_lock;
    pthread_cond_t sleep_cv;
    int sleep_cancel;

    uint64_t t0;
    uint64_t last_event_ns;
    double *lateness;
    size_t nlateness;

    struct rt_worker *synth_workers, *gpu_workers;
    size_t nsynth_started, ngpu_started;

    /* open runs (opts.open): jobs come by cupace_rt_submit */
    void **job_data;                    /* per job: the submitter's pointer, for the views */
    void **job_tag;                     /* per job: the submitter's pointer, for its end */
    char **job_reason;                  /* per job: its first failure, or NULL */
    size_t cap_jobs;                    /* of job_data and job_reason */
    uint32_t cap_parts;                 /* of synth_q, synth_finished, lateness and bufs */
    uint32_t *ended;                    /* jobs ended, [ended_head, nended) not yet reported;
                                           room for every job, grown by submit */
    size_t ended_head, nended, capended;
    uint64_t unreported_parts;          /* partitions of the jobs ended and not yet reported */
    int accepting;                      /* past set-up: submissions are taken */
    int closed;                         /* cupace_rt_close: no more */
    int over;                           /* the dispatcher left its loop */
    pthread_cond_t ready_cv;            /* accepting or over changed */
};

/* ---- clock and waiting ------------------------------------------------- */

static uint64_t mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t rt_now(const struct cupace_rt *rt)
{
    return mono_ns() - rt->t0;
}

static void cond_init_monotonic(pthread_cond_t *cv)
{
    pthread_condattr_t a;

    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &a);
    pthread_condattr_destroy(&a);
}

/* Waits on cv until the engine time `deadline` (UINT64_MAX: no deadline). */
static void wait_until(struct cupace_rt *rt, pthread_cond_t *cv, pthread_mutex_t *m,
                       uint64_t deadline)
{
    struct timespec ts;
    uint64_t abs;

    if (deadline == UINT64_MAX) {
        pthread_cond_wait(cv, m);
        return;
    }
    abs = cupace_sat_add(rt->t0, deadline);
    ts.tv_sec = (time_t)(abs / 1000000000ULL);
    ts.tv_nsec = (long)(abs % 1000000000ULL);
    pthread_cond_timedwait(cv, m, &ts);
}

/* ---- what the engine offers the stages (struct cupace_stage_host) ------- */

static int host_sleep(void *ctx, uint64_t ns)
{
    struct cupace_rt *rt = ctx;
    uint64_t deadline;
    int rc = 0;

    if (ns == 0)
        return __atomic_load_n(&rt->sleep_cancel, __ATOMIC_ACQUIRE) ? -1 : 0;
    deadline = cupace_sat_add(rt_now(rt), ns);
    pthread_mutex_lock(&rt->sleep_lock);
    while (!rt->sleep_cancel && rt_now(rt) < deadline)
        wait_until(rt, &rt->sleep_cv, &rt->sleep_lock, deadline);
    rc = rt->sleep_cancel ? -1 : 0;
    pthread_mutex_unlock(&rt->sleep_lock);
    return rc;
}

static int host_cancelled(void *ctx)
{
    struct cupace_rt *rt = ctx;

    return __atomic_load_n(&rt->sleep_cancel, __ATOMIC_ACQUIRE);
}

static int synth_work(struct cupace_rt *rt, uint32_t id, uint64_t ns);

static int host_cpu_work(void *ctx, const struct cupace_part_view *v, uint64_t ns)
{
    struct cupace_rt *rt = ctx;
    int rc;

    pthread_mutex_lock(&rt->lock);
    rc = synth_work(rt, ((const struct rt_view *)v)->id, ns);
    pthread_mutex_unlock(&rt->lock);
    return rc;
}

static void host_device_time(void *ctx, const struct cupace_part_view *v, uint64_t ns)
{
    struct rt_view *rv = (struct rt_view *)v;  /* the view is ours, the op's thread's alone */

    (void)ctx;
    rv->has_device_ns = 1;
    rv->device_ns = ns;
}

static void cancel_locked(struct cupace_rt *rt);
static void crew_wake_all(struct rt_crew *c);

/* A device is lost: its workers leave their crew; when it was the last,
 * the run ends with the reason. */
static void host_retire_device(void *ctx, const struct cupace_part_view *v, const char *why)
{
    struct cupace_rt *rt = ctx;
    struct rt_device *d = &rt->devices[v->device];

    pthread_mutex_lock(&rt->lock);
    if (!d->retired) {
        d->retired = 1;
        if (rt->nretired++ == 0) {
            snprintf(rt->lost, sizeof rt->lost, "GPU device %u lost: %s", v->device,
                     why && why[0] ? why : "no reason given");
            cupace_one_line(rt->lost);  /* the stage's text, shown on a terminal */
        }
        crew_wake_all(&rt->gpu_crew);   /* its idle workers leave; the others sleep again */
        if (rt->nretired == rt->pl.ndevices) {
            char first[sizeof rt->lost];

            snprintf(first, sizeof first, "%s", rt->lost);
            snprintf(rt->lost, sizeof rt->lost, "every GPU device was lost, the first: %.400s", first);
            rt->stopping = 1;           /* nothing more is dispatched... */
            cancel_locked(rt);          /* ...and what is in flight is let go */
        }
        pthread_cond_broadcast(&rt->dispatcher_cv);
    }
    pthread_mutex_unlock(&rt->lock);
}

/* ---- crews (see struct rt_crew) ------------------------------------------ */

/* Every member starts idle, in index order (device-major for the GPU
 * workers, as in the simulator), before its thread even runs. */
static int crew_init(struct rt_crew *c, unsigned n)
{
    c->members = calloc(n ? n : 1, sizeof *c->members);
    c->idle = calloc(n ? n : 1, sizeof *c->idle);
    if (!c->members || !c->idle)
        return -1;
    c->n = n;
    for (unsigned i = 0; i < n; i++) {
        cond_init_monotonic(&c->members[i].cv);
        c->members[i].asleep = 1;
        c->idle[i] = i;
    }
    c->idle_count = n;
    c->free = 0;
    return 0;
}

static void crew_free(struct rt_crew *c)
{
    if (c->members)
        for (unsigned i = 0; i < c->n; i++)
            pthread_cond_destroy(&c->members[i].cv);
    free(c->members);
    free(c->idle);
}

/* Wakes the member idle longest, if none is free to see the work anyway. */
static void crew_hand_on(struct rt_crew *c)
{
    struct rt_member *m;

    if (c->free > 0 || c->idle_count == 0)
        return;
    m = &c->members[c->idle[c->idle_head]];
    c->idle_head = (c->idle_head + 1) % c->n;
    c->idle_count--;
    m->asleep = 0;
    c->free++;
    pthread_cond_signal(&m->cv);
}

static void crew_wake_all(struct rt_crew *c)
{
    for (unsigned i = 0; i < c->n; i++)
        pthread_cond_broadcast(&c->members[i].cv);
}

/* A free member took work: it will not look at the queue until it is done. */
static void crew_busy(struct rt_crew *c)
{
    c->free--;
}

static void crew_done(struct rt_crew *c)
{
    c->free++;
}

/* Member i, idle, waits until handed work or until the run is done or
 * cancelled or *gone (NULL: never) is set; with the engine's lock.
 * Returns at once if it was handed work already. */
static void crew_wait(struct cupace_rt *rt, struct rt_crew *c, unsigned i, const int *gone)
{
    struct rt_member *m = &c->members[i];

    while (m->asleep && !rt->done && !rt->cancelled && !(gone && *gone))
        pthread_cond_wait(&m->cv, &rt->lock);
    if (m->asleep) {                    /* stopped, not handed anything: leave the ring */
        for (unsigned k = 0; k < c->idle_count; k++) {
            unsigned at = (c->idle_head + k) % c->n;
            if (c->idle[at] == i) {
                for (; k + 1 < c->idle_count; k++)
                    c->idle[(c->idle_head + k) % c->n] = c->idle[(c->idle_head + k + 1) % c->n];
                break;
            }
        }
        c->idle_count--;
        m->asleep = 0;
        c->free++;
    }
}

/* Member i, free and finding nothing, goes idle and waits. */
static void crew_sleep(struct cupace_rt *rt, struct rt_crew *c, unsigned i, const int *gone)
{
    c->free--;
    c->members[i].asleep = 1;
    c->idle[(c->idle_head + c->idle_count++) % c->n] = i;
    crew_wait(rt, c, i, gone);
}

/* A free member leaves for good (its device was lost); work it would have
 * seen is handed on. */
static void crew_leave(struct rt_crew *c, int work_left)
{
    c->free--;
    if (work_left)
        crew_hand_on(c);
}

/* ---- the observer: one snapshot per event, replayed by the dispatcher -- */

static void on_event(void *ctx, uint64_t now)
{
    struct cupace_rt *rt = ctx;

    if (rt->nlog == rt->caplog) {
        struct cupace_signals *more = cupace_grow(rt->log, &rt->caplog, sizeof *more, 256);
        if (!more) {
            rt->oom = 1;
            return;
        }
        rt->log = more;
    }
    cupace_pipeline_signals(&rt->pl, now, &rt->log[rt->nlog++]);
    if (rt->dispatcher_waiting) {
        rt->dispatcher_waiting = 0;     /* one signal per sleep */
        pthread_cond_signal(&rt->dispatcher_cv);
    }
    cupace_dispatcher_observe(&rt->disp, now);
}

/* A job ended (open runs): the dispatcher reports it, lock let go. */
static void on_job_end(void *ctx, uint32_t job)
{
    struct cupace_rt *rt = ctx;

    if (rt->nended == rt->capended) {   /* cannot be: submit made room for every job */
        rt->oom = 1;
        return;
    }
    rt->ended[rt->nended++] = job;
    rt->unreported_parts += rt->pl.jobs[job].count;
    if (rt->dispatcher_waiting) {
        rt->dispatcher_waiting = 0;
        pthread_cond_signal(&rt->dispatcher_cv);
    }
}

/* How job j stands, for its report: the partitions not finished count as
 * failed (the run ended before they were started, or left them). */
static struct cupace_rt_job_end job_end(const struct cupace_rt *rt, uint32_t j, uint64_t now)
{
    const struct cupace_job *job = &rt->pl.jobs[j];
    const char *reason = rt->job_reason[j];

    if (!reason && job->failed + job->left)
        reason = job->left ? CUPACE_RT_NOT_RUN
                 : rt->cancelled ? "cancelled: the engine was stopped"
                 : "failed by the workload model (fail_rate, fail_at)";
    return (struct cupace_rt_job_end){
        .job = j, .data = rt->job_data[j], .tag = rt->job_tag[j], .partitions = job->count,
        .failed = job->failed + job->left,
        .latency_s = now > job->arrival_ns ? (double)(now - job->arrival_ns) / 1e9 : 0.0,
        .reason = reason,
    };
}

/* Reports the jobs that ended to opts.job_done with the lock let go; with
 * the lock held before and after.  Only the run's thread calls it. */
static void report_ended(struct cupace_rt *rt)
{
    /* a batch at a time in a box of this thread's own: while the lock is let
     * go, other threads append to `ended`, and nothing they touch is read */
    struct cupace_rt_job_end box[64];

    while (rt->ended_head < rt->nended) {
        size_t n = rt->nended - rt->ended_head;
        uint64_t now = rt_now(rt);

        if (n > sizeof box / sizeof *box)
            n = sizeof box / sizeof *box;
        uint64_t parts = 0;

        for (size_t i = 0; i < n; i++) {
            box[i] = job_end(rt, rt->ended[rt->ended_head + i], now);
            parts += rt->pl.jobs[rt->ended[rt->ended_head + i]].count;
        }
        rt->ended_head += n;
        if (rt->ended_head == rt->nended)
            rt->ended_head = rt->nended = 0;
        if (rt->opts.job_done) {
            pthread_mutex_unlock(&rt->lock);
            for (size_t i = 0; i < n; i++)
                rt->opts.job_done(rt->opts.job_done_ctx, &box[i]);
            pthread_mutex_lock(&rt->lock);
        }
        /* only now are they off the submitter's books (cupace_rt_credit) */
        rt->unreported_parts -= parts < rt->unreported_parts ? parts : rt->unreported_parts;
    }
}

static int in_an_op(const struct cupace_rt *rt, uint32_t job)
{
    for (size_t i = 0; i < rt->nsynth_started + rt->ngpu_started; i++) {
        const struct rt_worker *w = i < rt->nsynth_started ? &rt->synth_workers[i]
                                                           : &rt->gpu_workers[i - rt->nsynth_started];
        if (w->op && rt->pl.parts[w->op_part].job == job)
            return 1;
    }
    return 0;
}

/* At the run's end, once every thread is joined: every job not ended is
 * reported, failed, as ended ones are; but not one the watchdog left in an
 * op, whose data that op may still be using: it is never reported.
 * `ended` has room for every job. */
static void report_unfinished(struct cupace_rt *rt)
{
    report_ended(rt);
    for (uint32_t j = 0; j < rt->pl.njobs; j++)
        if (rt->pl.jobs[j].left > 0 && !(rt->abandoned && in_an_op(rt, j)))
            rt->ended[rt->nended++] = j;
    report_ended(rt);
}

/* ---- synthesis --------------------------------------------------------- */

/* Marks every synthesis whose CPU work is done by now; with the lock. */
static void synth_collect(struct cupace_rt *rt, uint64_t now)
{
    uint32_t id;
    int any = 0;

    while (cupace_ps_pop_due(&rt->ps, now, &id) == 0) {
        rt->synth_finished[id] = 1;
        any = 1;
    }
    if (any && rt->ps_waiters)
        pthread_cond_broadcast(&rt->synth_cv);
}

/* ns of full-speed CPU work of synthesis id, sharing cpu_slots with the
 * others (ps.h); with the lock.  0, or -1 if the run was cancelled. */
static int synth_work(struct cupace_rt *rt, uint32_t id, uint64_t ns)
{
    if (rt->cancelled)
        return -1;
    rt->synth_finished[id] = 0;
    if (cupace_ps_add(&rt->ps, rt_now(rt), id, ns) < 0)
        return -1;                      /* cannot happen: the slots bound it */
    if (rt->ps_waiters)
        pthread_cond_broadcast(&rt->synth_cv);     /* the others' deadlines moved */
    while (!rt->synth_finished[id] && !rt->cancelled) {
        synth_collect(rt, rt_now(rt));
        if (!rt->synth_finished[id]) {
            rt->ps_waiters++;
            wait_until(rt, &rt->synth_cv, &rt->lock, cupace_ps_next(&rt->ps, rt_now(rt)));
            rt->ps_waiters--;
        }
    }
    return rt->synth_finished[id] ? 0 : -1;
}

/* ---- calling the stages ------------------------------------------------- */

static void free_buf(struct cupace_rt *rt, uint32_t id)
{
    if (rt->bufs) {
        free(rt->bufs[id]);
        rt->bufs[id] = NULL;
    }
}

/* The partition failed or was cancelled where it is: accounted failed. */
static void fail_part(struct cupace_rt *rt, struct rt_worker *wk, uint32_t id)
{
    cupace_pipeline_abort(&rt->pl, rt_now(rt), id, wk->device);
    free_buf(rt, id);
}

static void record_failure(struct cupace_rt *rt, uint32_t id, const char *op, const char *why)
{
    const struct cupace_part *p = &rt->pl.parts[id];

    if (rt->stage_failures++ == 0) {
        snprintf(rt->stage_failure, sizeof rt->stage_failure, "job %u partition %u: %s: %s",
                 p->job, id - rt->pl.jobs[p->job].first, op, why[0] ? why : "no reason given");
        cupace_one_line(rt->stage_failure); /* the stage's text, shown on a terminal */
    }
    if (rt->job_reason && !rt->job_reason[p->job]) {
        char text[512];

        snprintf(text, sizeof text, "partition %u: %s: %s", id - rt->pl.jobs[p->job].first, op,
                 why[0] ? why : "no reason given");
        cupace_one_line(text);
        rt->job_reason[p->job] = strdup(text);  /* NULL on no memory: the job still fails */
    }
}

/* Runs op (NULL: an optional op the stages lack) on partition id with the
 * lock let go; with the lock held before and after.  0, or -1 when the op
 * failed or the run was cancelled: the partition is then accounted failed. */
static int call_op(struct cupace_rt *rt, struct rt_worker *wk, cupace_stage_op op,
                   const char *name, uint32_t id, uint64_t model_ns, uint64_t *device_ns)
{
    const struct cupace_part *p = &rt->pl.parts[id];
    struct rt_view rv;
    char why[256] = "";
    int rc = 0;

    if (op && !rt->cancelled && !(rt->emulated && model_ns == 0)) {  /* nothing to act out: keep the lock */
        rv.id = id;
        rv.has_device_ns = 0;
        rv.v = (struct cupace_part_view){
            .size = sizeof rv.v, .index = id - rt->pl.jobs[p->job].first, .job = p->job,
            .partitions = rt->pl.jobs[p->job].count, .worker = wk->index, .device = wk->device,
            .buf = rt->bufs ? rt->bufs[id] : NULL,
            .job_data = rt->job_data ? rt->job_data[p->job] : NULL,
            .buf_bytes = rt->bufs ? rt->stages.info.buffer_bytes : 0,
            .worker_state = wk->stage_state, .model_ns = model_ns, .host = &rt->host,
        };
        wk->op = name;
        wk->op_part = id;
        wk->op_since = rt_now(rt);
        pthread_mutex_unlock(&rt->lock);
        rc = op(rt->stages.state, &rv.v, why, sizeof why);
        pthread_mutex_lock(&rt->lock);
        wk->op = NULL;
        why[sizeof why - 1] = '\0';
        if (rc != 0 && !rt->cancelled)
            record_failure(rt, id, name, why);
        if (rc == 0 && device_ns && rv.has_device_ns) {
            *device_ns = rv.device_ns;
            rt->device_clock = 1;
        }
    }
    if (rc != 0 || rt->cancelled) {
        fail_part(rt, wk, id);
        return -1;
    }
    return 0;
}

/* ---- synthesis --------------------------------------------------------- */

/* One synthesis, from its thread's start to its end; with the lock held. */
static void synth_part(struct cupace_rt *rt, struct rt_worker *wk, uint32_t id)
{
    if (rt->bufs && !(rt->bufs[id] = malloc(rt->stages.info.buffer_bytes))) {
        record_failure(rt, id, "synthesize", "out of memory for its buffer");
        fail_part(rt, wk, id);
        return;
    }
    if (call_op(rt, wk, rt->stages.ops->synthesize, "synthesize", id,
                rt->pl.parts[id].synth_drawn_ns, NULL) < 0)
        return;
    /* real stages: bound_bytes from the synthesis as measured (as the
     * signals have it), not from the model's draw they never slept */
    if (!rt->emulated)
        rt->pl.parts[id].synth_drawn_ns = rt_now(rt) - rt->pl.parts[id].t_stage;
    if (cupace_pipeline_synth_end(&rt->pl, rt_now(rt), id) == 0)
        crew_hand_on(&rt->gpu_crew);
    else
        free_buf(rt, id);               /* the model's failure draw */
}

static void *synth_thread(void *arg)
{
    struct rt_worker *wk = arg;
    struct cupace_rt *rt = wk->rt;
    struct rt_crew *crew = &rt->synth_crew;

    pthread_mutex_lock(&rt->lock);
    crew_wait(rt, crew, wk->index, NULL);  /* idle from the start */
    for (;;) {
        uint32_t id;

        if (rt->sq_head == rt->sq_tail) {
            if (rt->done || rt->cancelled)
                break;
            crew_sleep(rt, crew, wk->index, NULL);
            continue;
        }
        id = rt->synth_q[rt->sq_head++];
        crew_busy(crew);
        if (rt->sq_head != rt->sq_tail)
            crew_hand_on(crew);         /* more left behind: the next member */
        synth_part(rt, wk, id);
        crew_done(crew);
    }
    pthread_mutex_unlock(&rt->lock);
    return NULL;
}

/* ---- GPU workers ------------------------------------------------------- */

static int lock_device(struct cupace_rt *rt, struct rt_device *d)
{
    uint64_t ticket = d->next_ticket++;

    while (d->serving != ticket && !rt->cancelled)
        pthread_cond_wait(&d->cv, &rt->lock);
    return rt->cancelled ? -1 : 0;
}

static void unlock_device(struct rt_device *d)
{
    d->serving++;
    pthread_cond_broadcast(&d->cv);
}

/* One partition through prep, kernel and epilogue; with the lock held.
 * The kernel's time inside the device lock, measured, is what
 * gpu_device_ns_total counts. */
static void gpu_process(struct cupace_rt *rt, struct rt_worker *wk, uint32_t id)
{
    const struct cupace_stages *ops = rt->stages.ops;
    unsigned dev = wk->device;
    int exclusive = rt->cfg.workload.gpu_exclusive;
    struct rt_device *d = &rt->devices[dev];
    uint64_t prep = cupace_pipeline_prep_ns(&rt->pl, rt_now(rt), id), k, t, e;
    uint64_t device_ns = UINT64_MAX;
    int rc;

    t = rt_now(rt);
    if (call_op(rt, wk, ops->prep, "prep", id, prep, NULL) < 0)
        return;
    if (!rt->emulated)
        prep = rt_now(rt) - t;          /* as measured, for bound_bytes */
    if (cupace_pipeline_prep_end(&rt->pl, rt_now(rt), id, dev) < 0) {
        free_buf(rt, id);               /* fail_at ...:prep */
        return;
    }
    if (exclusive && lock_device(rt, d) < 0) {
        fail_part(rt, wk, id);
        return;
    }
    k = cupace_pipeline_kernel_ns(&rt->pl, rt_now(rt), id, dev);
    t = rt_now(rt);
    cupace_pipeline_kernel_start(&rt->pl, t, id, dev, prep, k);
    rc = call_op(rt, wk, ops->kernel, "kernel", id, k, &device_ns);
    if (rc == 0)        /* the device's own clock where the stages read it */
        rt->pl.parts[id].kernel_ns = device_ns != UINT64_MAX ? device_ns : rt_now(rt) - t;
    if (exclusive)
        unlock_device(d);
    if (rc < 0)
        return;
    if (cupace_pipeline_kernel_end(&rt->pl, rt_now(rt), id, dev) < 0) {
        free_buf(rt, id);               /* the model's failure draw */
        return;
    }
    e = cupace_pipeline_epilogue_ns(&rt->pl, rt_now(rt), id);
    t = rt_now(rt);
    if (call_op(rt, wk, ops->epilogue, "epilogue", id, e, NULL) < 0)
        return;
    if (!rt->emulated)
        e = rt_now(rt) - t;
    /* the finalizer: time before the completion, inside the lock */
    (void)cupace_pipeline_gpu_done(&rt->pl, rt_now(rt), id, dev, e);  /* or fail_at ...:epilogue */
    free_buf(rt, id);
}

/* The stages' worker_setup on this worker's thread; with the lock.  The
 * dispatcher waits for every worker to be past it. */
static void worker_setup(struct cupace_rt *rt, struct rt_worker *wk)
{
    char why[256] = "";
    int rc = 0;

    if (rt->stages.ops->worker_setup) {
        pthread_mutex_unlock(&rt->lock);
        rc = rt->stages.ops->worker_setup(rt->stages.state, wk->device, wk->index, &wk->stage_state,
                                          why, sizeof why);
        pthread_mutex_lock(&rt->lock);
        why[sizeof why - 1] = '\0';
    }
    if (rc != 0 && !rt->setup_error[0]) {
        snprintf(rt->setup_error, sizeof rt->setup_error, "stages '%s': worker_setup of GPU worker "
                 "%u (device %u) failed: %s", rt->stages.ops->name, wk->index, wk->device,
                 why[0] ? why : "no reason given");
        cancel_locked(rt);
    }
    rt->gpu_ready++;
    pthread_cond_broadcast(&rt->dispatcher_cv);
}

static void worker_teardown(struct cupace_rt *rt, struct rt_worker *wk)
{
    if (!rt->stages.ops->worker_teardown)
        return;
    pthread_mutex_unlock(&rt->lock);
    rt->stages.ops->worker_teardown(rt->stages.state, wk->stage_state);
    pthread_mutex_lock(&rt->lock);
}

static void *gpu_thread(void *arg)
{
    struct rt_worker *wk = arg;
    struct cupace_rt *rt = wk->rt;
    struct rt_crew *crew = &rt->gpu_crew;
    const int *gone = &rt->devices[wk->device].retired;

    pthread_mutex_lock(&rt->lock);
    worker_setup(rt, wk);
    crew_wait(rt, crew, wk->index, gone);  /* idle from the start */
    for (;;) {
        uint32_t id;

        if (rt->cancelled)
            break;
        if (*gone) {
            crew_leave(crew, rt->pl.waiting > 0);
            break;
        }
        if (rt->pl.waiting == 0) {
            if (rt->done)
                break;
            crew_sleep(rt, crew, wk->index, gone);
            continue;
        }
        id = cupace_pipeline_take(&rt->pl, rt_now(rt), wk->device);
        crew_busy(crew);
        if (rt->pl.waiting > 0)
            crew_hand_on(crew);         /* more left behind: the next member */
        gpu_process(rt, wk, id);
        crew_done(crew);
    }
    worker_teardown(rt, wk);
    pthread_mutex_unlock(&rt->lock);
    return NULL;
}

/* ---- stopping and progress ------------------------------------------- */

/* Cancels what is in flight: every sleeper is woken to see it. */
static void cancel_locked(struct cupace_rt *rt)
{
    rt->cancelled = 1;
    pthread_cond_broadcast(&rt->synth_cv);
    crew_wake_all(&rt->synth_crew);
    crew_wake_all(&rt->gpu_crew);
    for (uint32_t d = 0; d < rt->pl.ndevices; d++)
        pthread_cond_broadcast(&rt->devices[d].cv);
    pthread_mutex_lock(&rt->sleep_lock);
    __atomic_store_n(&rt->sleep_cancel, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&rt->sleep_cv);
    pthread_mutex_unlock(&rt->sleep_lock);
}

uint64_t cupace_rt_stop(struct cupace_rt *rt, enum cupace_rt_stop how)
{
    uint64_t in_flight;

    pthread_mutex_lock(&rt->lock);
    in_flight = rt->pl.dispatched - cupace_pipeline_finished(&rt->pl);
    rt->stop_called = 1;
    rt->stopping = 1;               /* a cancel, too, dispatches nothing more */
    if (how == CUPACE_RT_CANCEL)
        cancel_locked(rt);
    pthread_cond_broadcast(&rt->dispatcher_cv);
    pthread_mutex_unlock(&rt->lock);
    return in_flight;
}

static void progress(struct cupace_rt *rt, uint64_t now, int final)
{
    char state[256];
    const struct cupace_pipeline *pl = &rt->pl;
    struct cupace_rt_progress pr;

    if (!rt->opts.progress)
        return;
    cupace_pacer_instance_describe(rt->pacer, state, sizeof state);
    pr = (struct cupace_rt_progress){
        .now_ns = now, .label = rt->pacer->label,
        .finished = cupace_pipeline_finished(pl), .partitions = pl->nparts,
        .waiting = pl->waiting, .in_synthesis = pl->in_synthesis, .gpu_busy = pl->gpu_busy,
        .gpu_workers = pl->nworkers, .mem_reserved = pl->mem_reserved,
        .interval_ns = rt->disp.last_interval, .pacer_state = state, .final = final,
    };
    rt->opts.progress(rt->opts.progress_ctx, &pr);
}

/* ---- the dispatcher ---------------------------------------------------- */

/* Feeds the controller one update per logged event, in order.  With the
 * lock held, like every call of the controller here: the calls are short
 * (DESIGN §3), and letting go of the lock around them turned every
 * dispatch into a futex hand-off with the threads queued on it. */
static void replay_events(struct cupace_rt *rt)
{
    for (size_t i = 0; i < rt->nlog; i++)
        rt->pacer->ops->update(rt->pacer->state, &rt->log[i]);
    if (rt->nlog)
        rt->last_event_ns = rt->log[rt->nlog - 1].now_ns;
    rt->nlog = 0;
}

static void record_lateness(struct cupace_rt *rt, uint64_t now, uint64_t due)
{
    uint64_t from = due > rt->last_event_ns ? due : rt->last_event_ns;

    if (rt->nlateness < rt->pl.nparts)
        rt->lateness[rt->nlateness++] = now > from ? (double)(now - from) / 1e9 : 0.0;
}

/* ---- the watchdog --------------------------------------------------------- */

/* A stage op running past stall_timeout ends the run: stalled, with the
 * partition and the op named.  Its thread cannot be stopped, so the run's
 * memory, the stages' state and the plugin stay as they are (abandoned). */
static int watchdog(struct cupace_rt *rt, uint64_t now)
{
    uint64_t limit = rt->cfg.engine.stall_timeout_ns;
    struct rt_worker *w = NULL;

    if (limit == 0)
        return 0;
    for (size_t i = 0; i < rt->nsynth_started && !w; i++)
        if (rt->synth_workers[i].op && now - rt->synth_workers[i].op_since >= limit)
            w = &rt->synth_workers[i];
    for (size_t i = 0; i < rt->ngpu_started && !w; i++)
        if (rt->gpu_workers[i].op && now - rt->gpu_workers[i].op_since >= limit)
            w = &rt->gpu_workers[i];
    if (!w)
        return 0;
    {
        const struct cupace_part *p = &rt->pl.parts[w->op_part];
        rt->res->stalled = 1;
        snprintf(rt->res->stall_reason, sizeof rt->res->stall_reason,
                 "stages '%s': %s of job %u partition %u has not returned after %.3fs "
                 "([engine] stall_timeout): the run is ended and its thread left behind",
                 rt->stages.ops->name, w->op, p->job, w->op_part - rt->pl.jobs[p->job].first,
                 (double)(now - w->op_since) / 1e9);
    }
    rt->abandoned = 1;
    cancel_locked(rt);
    return 1;
}

/* When the watchdog looks next: a quarter of the timeout from now. */
static uint64_t next_watch(const struct cupace_rt *rt, uint64_t now)
{
    uint64_t t = rt->cfg.engine.stall_timeout_ns;

    return t ? cupace_sat_add(now, t / 4 ? t / 4 : 1) : UINT64_MAX;
}

/* When the next progress report is due after now. */
static uint64_t next_progress(const struct cupace_rt *rt, uint64_t now)
{
    return rt->opts.progress ? cupace_sat_add(now, rt->opts.progress_interval_ns) : UINT64_MAX;
}

static void dispatch_loop(struct cupace_rt *rt)
{
    uint64_t next_report = next_progress(rt, 0), next_check = next_watch(rt, 0);

    for (;;) {
        uint64_t now = rt_now(rt), deadline, in_flight, due;

        if (now >= next_check) {
            if (watchdog(rt, now))
                break;
            next_check = next_watch(rt, now);
        }

        while (cupace_pipeline_next_arrival(&rt->pl) <= now)
            cupace_pipeline_arrive(&rt->pl, now);
        if (rt->nlog) {
            replay_events(rt);
            continue;
        }
        if (now >= next_report) {
            progress(rt, now, 0);
            next_report = next_progress(rt, now);
        }
        if (rt->ended_head < rt->nended) {
            report_ended(rt);
            continue;
        }
        in_flight = rt->pl.dispatched - cupace_pipeline_finished(&rt->pl);
        if ((cupace_pipeline_finished(&rt->pl) == rt->pl.nparts &&
             (!rt->opts.open || rt->closed)) || rt->oom || rt->disp.oom ||
            ((rt->stopping || rt->cancelled) && in_flight == 0))
            break;
        if (rt->cancelled)
            cupace_pipeline_abort_waiting(&rt->pl, now);
        deadline = rt->stopping ? UINT64_MAX : cupace_pipeline_next_arrival(&rt->pl);
        if (next_report < deadline)
            deadline = next_report;
        if (next_check < deadline)
            deadline = next_check;
        if (!rt->stopping) {
            switch (cupace_dispatcher_gate(&rt->disp, now, &due)) {
            case CUPACE_GATE_DUE:
                now = rt_now(rt);
                if (now >= due) {
                    uint32_t id = cupace_dispatcher_dispatch(&rt->disp, now);
                    record_lateness(rt, now, due);
                    rt->synth_q[rt->sq_tail++] = id;
                    crew_hand_on(&rt->synth_crew);
                    continue;
                }
                if (due < deadline)
                    deadline = due;
                break;
            case CUPACE_GATE_HOLD:
                if (rt->nlog == 0 && cupace_dispatcher_stalled(&rt->disp)) {
                    cupace_result_stalled(rt->res, rt->pacer->label, rt->pacer->plugin, now, &rt->pl);
                    goto out;
                }
                break;
            case CUPACE_GATE_CLOSED:
                break;
            }
        }
        if (rt->nlog == 0) {
            rt->dispatcher_waiting = 1;
            wait_until(rt, &rt->dispatcher_cv, &rt->lock, deadline);
            rt->dispatcher_waiting = 0;
        }
    }
out:
    progress(rt, rt_now(rt), 1);
}

/* ---- set-up ------------------------------------------------------------ */

/* The engine's own config: the caller's [engine] and [workload] with every
 * duration multiplied by time_scale, the change points and trace jobs in
 * arrays of its own.  Nothing else of the caller's is kept: the owned
 * strings and sections stay the caller's, and the path is borrowed for
 * messages only (the caller's config outlives the run). */
static int scale_config(struct cupace_config *dst, const struct cupace_config *src)
{
    struct cupace_workload *w = &dst->workload;
    double f = src->workload.time_scale;

    memset(dst, 0, sizeof *dst);
    dst->path = src->path;
    dst->engine = src->engine;
    dst->workload = src->workload;
    w->trace = NULL;
    w->changes = NULL;
    w->trace_jobs = NULL;
    if (src->workload.nchanges) {
        w->changes = malloc(src->workload.nchanges * sizeof *w->changes);
        if (!w->changes)
            return -1;
        memcpy(w->changes, src->workload.changes, src->workload.nchanges * sizeof *w->changes);
    }
    if (src->workload.ntrace_jobs) {
        w->trace_jobs = malloc(src->workload.ntrace_jobs * sizeof *w->trace_jobs);
        if (!w->trace_jobs)
            return -1;
        memcpy(w->trace_jobs, src->workload.trace_jobs,
               src->workload.ntrace_jobs * sizeof *w->trace_jobs);
    }
    w->interarrival_ns = cupace_scale_ns(w->interarrival_ns, f);
    w->burst_every_ns = cupace_scale_ns(w->burst_every_ns, f);
    w->synth_ns = cupace_scale_ns(w->synth_ns, f);
    w->gpu_prep_ns = cupace_scale_ns(w->gpu_prep_ns, f);
    w->gpu_kernel_ns = cupace_scale_ns(w->gpu_kernel_ns, f);
    w->gpu_epilogue_ns = cupace_scale_ns(w->gpu_epilogue_ns, f);
    for (size_t i = 0; i < w->nchanges; i++) {
        w->changes[i].at_ns = cupace_scale_ns(w->changes[i].at_ns, f);
        w->changes[i].ns = cupace_scale_ns(w->changes[i].ns, f);
    }
    for (size_t i = 0; i < w->ntrace_jobs; i++) {
        w->trace_jobs[i].arrival_ns = cupace_scale_ns(w->trace_jobs[i].arrival_ns, f);
        w->trace_jobs[i].synth_ns = cupace_scale_ns(w->trace_jobs[i].synth_ns, f);
        w->trace_jobs[i].kernel_ns = cupace_scale_ns(w->trace_jobs[i].kernel_ns, f);
    }
    return 0;
}

/* ---- the CUDA stages' keys ------------------------------------------- */

/* What the CUDA stages read (cuda_stages.h): [cuda] transfer and verify,
 * and [engine] devices, device_ids and workers_per_device. */
static const char *cuda_get(void *ctx, const char *key)
{
    struct cupace_rt *rt = ctx;

    return strcmp(key, "device_ids") == 0 ? rt->cuda_ids : NULL;
}

static int cuda_f64(void *ctx, const char *key, double def, double *out)
{
    (void)ctx, (void)key;
    *out = def;
    return 0;
}

static int cuda_u64(void *ctx, const char *key, uint64_t def, uint64_t *out)
{
    const struct cupace_config *cfg = ((struct cupace_rt *)ctx)->cuda_cfg;

    *out = strcmp(key, "transfer") == 0 ? cfg->cuda.transfer :
           strcmp(key, "devices") == 0 ? cfg->engine.devices :
           strcmp(key, "workers_per_device") == 0 ? cfg->engine.workers_per_device : def;
    return 0;
}

static int cuda_bool(void *ctx, const char *key, int def, int *out)
{
    const struct cupace_config *cfg = ((struct cupace_rt *)ctx)->cuda_cfg;

    *out = strcmp(key, "verify") == 0 ? cfg->cuda.verify : def;
    return 0;
}

static void cuda_params_init(struct cupace_rt *rt, const struct cupace_config *cfg)
{
    size_t at = 0;

    rt->cuda_cfg = cfg;
    rt->cuda_ids[0] = '\0';
    for (unsigned i = 0; i < cfg->engine.ndevice_ids; i++)
        at += (size_t)snprintf(rt->cuda_ids + at, sizeof rt->cuda_ids - at, "%s%u", i ? "," : "",
                               cfg->engine.device_ids[i]);
    rt->cuda_params = (struct cupace_params){
        .ctx = rt, .get = cuda_get, .get_f64 = cuda_f64, .get_ns = cuda_u64, .get_u64 = cuda_u64,
        .get_bool = cuda_bool,
    };
    rt->stage_params = &rt->cuda_params;
}

/* backend = auto | cuda | emulated | NAME: the stages; why `auto` chose
 * what it chose is kept for the caller to tell. */
static int choose_backend(struct cupace_rt *rt, const struct cupace_config *cfg,
                          struct cupace_err *err)
{
    char why[256] = "this cupace was built without CUDA";
    int n = -1;

    if (rt->opts.stages) {
        if (cupace_stages_validate(rt->opts.stages, 0, why, sizeof why) < 0)
            return cupace_err_set(err, "stages '%s': %s", rt->opts.stages->name ?
                                  rt->opts.stages->name : "(unnamed)", why);
        rt->stage_ops = rt->opts.stages;
        snprintf(rt->backend_why, sizeof rt->backend_why, "given by the caller");
        return 0;
    }

    if (cfg->engine.backend == CUPACE_BACKEND_PLUGIN) {
        struct cupace_pacer_path path;
        int rc;

        cupace_pacer_path_init(&path, cfg);
        rc = cupace_stage_plugin_open(&rt->plugin, &path, cfg->engine.backend_plugin, err);
        cupace_pacer_path_free(&path);
        if (rc < 0) {
            cupace_err_at(err, cupace_config_origin(cfg, "engine", "backend"), "engine", "backend");
            return -1;
        }
        rt->stage_ops = rt->plugin.ops;
        /* the plugin's init marks the keys it asks for: bookkeeping, not a change */
        rt->stage_section = cupace_config_stage_section((struct cupace_config *)cfg,
                                                        cfg->engine.backend_plugin);
        snprintf(rt->backend_why, sizeof rt->backend_why, "%s", rt->plugin.file);
        return 0;
    }
    if (cfg->engine.backend == CUPACE_BACKEND_EMULATED) {
        rt->stage_ops = &cupace_stages_emulated;
        snprintf(rt->backend_why, sizeof rt->backend_why, "asked for");
        return 0;
    }
#ifdef HAVE_CUDA
    n = cupace_cuda_probe(why, sizeof why);
#endif
    if (cfg->engine.backend == CUPACE_BACKEND_CUDA && n <= 0) {
        const struct cupace_origin *at = cupace_config_origin(cfg, "engine", "backend");

        cupace_err_set(err, "cuda, but no CUDA device answers: %s", why);
        if (at)
            cupace_err_at(err, at, "engine", "backend");    /* its file and line */
        else
            cupace_err_prefix(err, "%s: [engine] backend", cfg->path);
        return -1;
    }
    if (n > 0) {
        rt->stage_ops = &cupace_cuda_stages;
        cuda_params_init(rt, cfg);
        snprintf(rt->backend_why, sizeof rt->backend_why, "%d CUDA device%s answer%s", n,
                 n == 1 ? "" : "s", n == 1 ? "s" : "");
        return 0;
    }
    rt->stage_ops = &cupace_stages_emulated;
    snprintf(rt->backend_why, sizeof rt->backend_why, "no CUDA device answers: %s", why);
    return 0;
}

/* A [stages.NAME] section gives keys to the stages called NAME, which only
 * a stage plugin or the caller's stages read: one for stages that do not
 * run here (a typo in NAME, or backend = emulated left in place) would have
 * its keys ignored without a word. */
static int stray_stage_section(const struct cupace_rt *rt, const struct cupace_config *cfg,
                               struct cupace_err *err)
{
    int keyed = rt->plugin.ops || rt->opts.stages;

    for (size_t i = 0; i < cfg->nstage_sections; i++) {
        const struct cupace_pacer_section *s = &cfg->stage_sections[i];
        char section[160];

        if (keyed && strcmp(s->label, rt->stage_ops->name) == 0)
            continue;
        snprintf(section, sizeof section, "stages.%s", s->label);
        if (keyed)
            cupace_err_set(err, "no stages called '%s' run here: the stages are '%s'",
                           s->label, rt->stage_ops->name);
        else if (strcmp(s->label, rt->stage_ops->name) == 0)
            cupace_err_set(err, "the built-in stages '%s' (%s) take no keys", s->label,
                           rt->backend_why);
        else
            cupace_err_set(err, "no stages called '%s' run here: the stages are the built-in "
                           "'%s' (%s), which take no [stages.NAME] keys (a stage plugin runs "
                           "with [engine] backend = NAME)", s->label, rt->stage_ops->name,
                           rt->backend_why);
        cupace_err_at(err, &s->at, section, NULL);
        return -1;
    }
    return 0;
}

static int rt_init(struct cupace_rt *rt, const struct cupace_config *cfg, struct cupace_err *err)
{
    uint32_t n;

    if (scale_config(&rt->cfg, cfg) < 0 ||
        (rt->opts.open ? cupace_pipeline_init_open(&rt->pl, &rt->cfg, err)
                       : cupace_pipeline_init(&rt->pl, &rt->cfg, err)) < 0)
        return cupace_err_set(err, "%s: out of memory", cfg->path);
    n = rt->pl.cap_parts;
    rt->cap_parts = n;
    rt->pl.observer = on_event;
    rt->pl.observer_ctx = rt;
    if (rt->opts.open) {
        rt->pl.job_observer = on_job_end;
        rt->pl.job_observer_ctx = rt;
        rt->cap_jobs = rt->pl.cap_jobs;
        rt->job_data = calloc(rt->cap_jobs, sizeof *rt->job_data);
        rt->job_reason = calloc(rt->cap_jobs, sizeof *rt->job_reason);
        rt->job_tag = calloc(rt->cap_jobs, sizeof *rt->job_tag);
        rt->capended = rt->cap_jobs;
        rt->ended = calloc(rt->capended, sizeof *rt->ended);
        if (!rt->job_data || !rt->job_reason || !rt->job_tag || !rt->ended)
            return cupace_err_set(err, "%s: out of memory", cfg->path);
    }
    rt->synth_q = malloc(n * sizeof *rt->synth_q);
    rt->synth_finished = calloc(n, 1);
    rt->lateness = malloc(n * sizeof *rt->lateness);
    rt->devices = calloc(rt->pl.ndevices, sizeof *rt->devices);
    rt->synth_workers = calloc(cfg->engine.synth_workers, sizeof *rt->synth_workers);
    rt->gpu_workers = calloc(rt->pl.nworkers, sizeof *rt->gpu_workers);
    if (!rt->synth_q || !rt->synth_finished || !rt->lateness || !rt->devices ||
        !rt->synth_workers || !rt->gpu_workers ||
        crew_init(&rt->synth_crew, (unsigned)cfg->engine.synth_workers) < 0 ||
        crew_init(&rt->gpu_crew, rt->pl.nworkers) < 0 ||
        cupace_ps_init(&rt->ps, (uint32_t)cfg->workload.cpu_slots, cfg->engine.synth_workers) < 0)
        return cupace_err_set(err, "%s: out of memory", cfg->path);
    rt->caplog = 4096;
    rt->log = malloc(rt->caplog * sizeof *rt->log);
    if (!rt->log)
        return cupace_err_set(err, "%s: out of memory", cfg->path);
    rt->host = (struct cupace_stage_host){
        .size = sizeof rt->host, .ctx = rt, .sleep_ns = host_sleep, .cpu_work_ns = host_cpu_work,
        .cancelled = host_cancelled, .device_time_ns = host_device_time,
        .retire_device = host_retire_device,
    };
    pthread_mutex_init(&rt->lock, NULL);
    pthread_mutex_init(&rt->sleep_lock, NULL);
    cond_init_monotonic(&rt->dispatcher_cv);
    cond_init_monotonic(&rt->synth_cv);
    cond_init_monotonic(&rt->sleep_cv);
    cond_init_monotonic(&rt->ready_cv);
    for (uint32_t d = 0; d < rt->pl.ndevices; d++)
        cond_init_monotonic(&rt->devices[d].cv);
    rt->synced = 1;
    return 0;
}

static void rt_free(struct cupace_rt *rt)
{
    if (rt->synced) {
        for (uint32_t d = 0; d < rt->pl.ndevices; d++)
            pthread_cond_destroy(&rt->devices[d].cv);
        pthread_mutex_destroy(&rt->lock);
        pthread_mutex_destroy(&rt->sleep_lock);
        pthread_cond_destroy(&rt->dispatcher_cv);
        pthread_cond_destroy(&rt->synth_cv);
        pthread_cond_destroy(&rt->sleep_cv);
        pthread_cond_destroy(&rt->ready_cv);
    }
    free(rt->devices);
    free(rt->synth_q);
    free(rt->synth_finished);
    free(rt->lateness);
    free(rt->log);
    free(rt->synth_workers);
    crew_free(&rt->synth_crew);
    crew_free(&rt->gpu_crew);
    free(rt->gpu_workers);
    cupace_ps_free(&rt->ps);
    if (rt->bufs)
        for (uint32_t i = 0; i < rt->pl.nparts; i++)
            free(rt->bufs[i]);          /* those cancelled while waiting */
    free(rt->bufs);
    if (rt->job_reason)
        for (size_t j = 0; j < rt->pl.njobs; j++)
            free(rt->job_reason[j]);
    free(rt->job_reason);
    free(rt->job_data);
    free(rt->job_tag);
    free(rt->ended);
    cupace_pipeline_free(&rt->pl);
    free(rt->cfg.workload.changes);
    free(rt->cfg.workload.trace_jobs);
}

/* pthread_create returns its error; it does not set errno. */
static int start_threads(struct cupace_rt *rt, struct cupace_err *err)
{
    int e;

    for (uint64_t i = 0; i < rt->cfg.engine.synth_workers; i++) {
        rt->synth_workers[i].rt = rt;
        rt->synth_workers[i].index = (unsigned)i;
        e = pthread_create(&rt->synth_workers[i].thread, NULL, synth_thread, &rt->synth_workers[i]);
        if (e != 0)
            return cupace_err_set(err, "cannot start synthesis thread %llu: %s",
                                  (unsigned long long)i, strerror(e));
        rt->nsynth_started++;
    }
    for (uint32_t w = 0; w < rt->pl.nworkers; w++) {
        rt->gpu_workers[w].rt = rt;
        rt->gpu_workers[w].device = cupace_pipeline_worker_device(&rt->pl, w);
        rt->gpu_workers[w].index = w;
        e = pthread_create(&rt->gpu_workers[w].thread, NULL, gpu_thread, &rt->gpu_workers[w]);
        if (e != 0)
            return cupace_err_set(err, "cannot start GPU worker %u: %s", w, strerror(e));
        rt->ngpu_started++;
    }
    return 0;
}

static void join_threads(struct cupace_rt *rt)
{
    pthread_mutex_lock(&rt->lock);
    rt->done = 1;
    pthread_cond_broadcast(&rt->synth_cv);
    crew_wake_all(&rt->synth_crew);
    crew_wake_all(&rt->gpu_crew);
    for (size_t i = 0; i < rt->nsynth_started + rt->ngpu_started; i++) {
        struct rt_worker *w = i < rt->nsynth_started ? &rt->synth_workers[i]
                                                     : &rt->gpu_workers[i - rt->nsynth_started];
        if (rt->abandoned && w->op) {
            pthread_detach(w->thread);  /* in an op that may never return */
            continue;
        }
        pthread_mutex_unlock(&rt->lock);
        pthread_join(w->thread, NULL);
        pthread_mutex_lock(&rt->lock);
    }
    pthread_mutex_unlock(&rt->lock);
}

/* The stages' init, and the per-partition buffers they declare. */
static int init_stages(struct cupace_rt *rt, struct cupace_err *err)
{
    struct cupace_params params;
    struct cupace_params_ctx pc;
    char who[4400], section[160];

    rt->emulated = rt->stage_ops == &cupace_stages_emulated;
    if (rt->plugin.ops) {
        snprintf(who, sizeof who, "stage plugin '%s' (%s)", rt->stage_ops->name, rt->plugin.file);
        snprintf(section, sizeof section, "stages.%s", rt->stage_ops->name);
        cupace_params_bind(&params, &pc, rt->stage_section, section);
        if (cupace_stage_run_init(&rt->stages, rt->stage_ops, &params, &rt->host,
                                  rt->cfg.workload.partition_memory, who, err) < 0) {
            if (pc.has_bad)                 /* the malformed value is the cause */
                cupace_err_set(err, "%s", pc.bad.msg);
            return -1;
        }
        snprintf(who, sizeof who, "stage plugin '%s'", rt->stage_ops->name);
        if (cupace_params_check(&pc, who, err) < 0)
            return -1;
    } else {
        snprintf(who, sizeof who, "stages '%s'", rt->stage_ops->name);
        if (cupace_stage_run_init(&rt->stages, rt->stage_ops,
                                  rt->stage_params ? rt->stage_params : rt->opts.stage_params,
                                  &rt->host,
                                  rt->cfg.workload.partition_memory, who, err) < 0)
            return -1;
    }
    if (rt->stages.info.buffer_bytes && !(rt->bufs = calloc(rt->cap_parts, sizeof *rt->bufs)))
        return cupace_err_set(err, "%s: out of memory", rt->cfg.path);
    return 0;
}

/* ---- the run ------------------------------------------------------------- */

struct cupace_rt *cupace_rt_create(const struct cupace_config *cfg,
                                   struct cupace_pacer_instance *pacer,
                                   const struct cupace_run_opts *opts, struct cupace_err *err)
{
    struct cupace_rt *rt = calloc(1, sizeof *rt);

    if (!rt) {
        cupace_err_set(err, "out of memory");
        return NULL;
    }
    rt->pacer = pacer;
    rt->opts = *opts;
    if (choose_backend(rt, cfg, err) < 0 || stray_stage_section(rt, cfg, err) < 0 ||
        rt_init(rt, cfg, err) < 0 || init_stages(rt, err) < 0) {
        cupace_rt_destroy(rt);
        return NULL;
    }
    return rt;
}

const char *cupace_rt_backend(const struct cupace_rt *rt, const char **why)
{
    if (why)
        *why = rt->backend_why;
    return rt->stage_ops->name;
}

/* Device time against worker time, the busy fraction by the device's clock
 * where the stages read it, devices lost, the CUDA calibration. */
static void gpu_time(const struct cupace_rt *rt, struct cupace_result *res)
{
    res->has_gpu_time = 1;
    res->gpu_device_s = (double)rt->pl.gpu_device_ns_total / 1e9;
    res->gpu_worker_s = (double)rt->pl.gpu_ns_total / 1e9;
    res->device_clock = rt->device_clock;
    res->gpu_busy_fraction_host = res->gpu_busy_fraction;
    if (rt->device_clock && res->makespan_s > 0 && rt->pl.ndevices)
        res->gpu_busy_fraction = res->gpu_device_s / ((double)rt->pl.ndevices * res->makespan_s);
    snprintf(res->devices_lost, sizeof res->devices_lost, "%s", rt->lost);
    if (rt->stage_ops == &cupace_cuda_stages &&
        cupace_cuda_stages_report(rt->stages.state, res->backend_json, sizeof res->backend_json) < 0)
        res->backend_json[0] = '\0';
}

int cupace_rt_run(struct cupace_rt *rt, struct cupace_result *res, struct cupace_err *err)
{
    int rc = -1;

    rt->res = res;
    cupace_result_begin(res, rt->pacer);
    /* one sample per step of model time */
    cupace_dispatcher_init(&rt->disp, &rt->pl, rt->pacer, res, rt->opts.record_series,
                           cupace_scale_ns(rt->opts.series_step_ns, rt->cfg.workload.time_scale));
    pthread_mutex_lock(&rt->lock);
    rt->t0 = mono_ns();             /* the threads read it only under the lock */
    if (start_threads(rt, err) == 0) {
        while (rt->gpu_ready < rt->pl.nworkers)     /* past the stages' worker_setup */
            pthread_cond_wait(&rt->dispatcher_cv, &rt->lock);
        rt->t0 = mono_ns();
        rt->accepting = !rt->setup_error[0];
        pthread_cond_broadcast(&rt->ready_cv);
        if (!rt->setup_error[0])
            dispatch_loop(rt);
        rc = 0;
    }
    rt->accepting = 0;
    rt->over = 1;
    pthread_cond_broadcast(&rt->ready_cv);
    pthread_mutex_unlock(&rt->lock);
    join_threads(rt);
    if (rt->opts.open) {     /* also when abandoned: a thread left in an op holds no lock */
        pthread_mutex_lock(&rt->lock);
        report_unfinished(rt);
        pthread_mutex_unlock(&rt->lock);
    }
    if (rc == 0 && rt->setup_error[0])
        rc = cupace_err_set(err, "%s", rt->setup_error);
    if (rc == 0 && (rt->oom || rt->disp.oom))
        rc = cupace_err_set(err, "%s: out of memory during the run", rt->cfg.path);
    if (rc == 0) {
        /* replay what the last events told, so describe() is current */
        pthread_mutex_lock(&rt->lock);
        replay_events(rt);
        cupace_dispatcher_finish(&rt->disp);
        /* under the lock: a late stop call may still be setting these, an
         * op the watchdog left behind may still return into the pipeline,
         * and a reload may be swapping the controller */
        res->interrupted = rt->stop_called;
        cupace_result_end(res, &rt->pl, rt->pacer);
        res->has_lateness = 1;
        res->lateness = cupace_quantiles(rt->lateness, rt->nlateness);
        res->stage_failures = rt->stage_failures;
        snprintf(res->stage_failure, sizeof res->stage_failure, "%s", rt->stage_failure);
        gpu_time(rt, res);
        pthread_mutex_unlock(&rt->lock);
    }
    return rc;
}

/* Room in the engine's per-job arrays for JOBS jobs and in its
 * per-partition arrays for PARTS partitions, by doubling; with the lock,
 * before the pipeline takes the job, so that a failure changes nothing.
 * A capacity moves only once every array of its kind has it. */
static int rt_reserve(struct cupace_rt *rt, size_t jobs, uint32_t parts)
{
    if (jobs > rt->cap_jobs || jobs > rt->capended) {
        size_t old = rt->cap_jobs, cap = cupace_grow_cap(old, jobs, UINT32_MAX);
        void **d, **t;
        char **r;
        uint32_t *e;
        if (!(d = realloc(rt->job_data, cap * sizeof *d)))
            return -1;
        rt->job_data = d;
        if (!(t = realloc(rt->job_tag, cap * sizeof *t)))
            return -1;
        rt->job_tag = t;
        if (!(r = realloc(rt->job_reason, cap * sizeof *r)))
            return -1;
        rt->job_reason = r;
        if (!(e = realloc(rt->ended, cap * sizeof *e)))
            return -1;
        rt->ended = e;
        memset(d + old, 0, (cap - old) * sizeof *d);
        memset(t + old, 0, (cap - old) * sizeof *t);
        memset(r + old, 0, (cap - old) * sizeof *r);
        rt->cap_jobs = rt->capended = cap;
    }
    if (parts > rt->cap_parts) {
        uint32_t cap = (uint32_t)cupace_grow_cap(rt->cap_parts, parts, UINT32_MAX);
        uint32_t old = rt->cap_parts;
        uint32_t *q;
        uint8_t *f;
        double *l;
        if (!(q = realloc(rt->synth_q, cap * sizeof *q)))
            return -1;
        rt->synth_q = q;
        if (!(f = realloc(rt->synth_finished, cap)))
            return -1;
        rt->synth_finished = f;
        if (!(l = realloc(rt->lateness, cap * sizeof *l)))
            return -1;
        rt->lateness = l;
        if (rt->bufs) {
            void **b = realloc(rt->bufs, cap * sizeof *b);
            if (!b)
                return -1;
            rt->bufs = b;
            memset(b + old, 0, (cap - old) * sizeof *b);
        }
        memset(f + old, 0, cap - old);
        rt->cap_parts = cap;
    }
    return 0;
}

int64_t cupace_rt_submit(struct cupace_rt *rt, uint32_t partitions, uint64_t part_mem,
                         uint64_t release, void *data, void *tag, struct cupace_err *err)
{
    int64_t j = -1;

    pthread_mutex_lock(&rt->lock);
    while (!rt->accepting && !rt->over && rt->opts.open)
        pthread_cond_wait(&rt->ready_cv, &rt->lock);
    if (!rt->opts.open)
        cupace_err_set(err, "this run takes the workload's jobs, not submitted ones");
    else if (rt->over || rt->closed || rt->stopping || rt->cancelled)
        cupace_err_set(err, "the engine is %s: it takes no more jobs",
                       rt->over ? "stopped" : rt->closed ? "closed" : "stopping");
    else if (rt->bufs && part_mem < rt->stages.info.buffer_bytes)
        cupace_err_set(err, "%llu bytes per partition: less than the %llu-byte buffer its "
                       "stages hold for each", (unsigned long long)part_mem,
                       (unsigned long long)rt->stages.info.buffer_bytes);
    else if (partitions > CUPACE_MAX_PARTITIONS)
        /* the bound a workload has: past it, the bookkeeping alone is gigabytes */
        cupace_err_set(err, "a job of %u partitions: at most %llu", partitions,
                       (unsigned long long)CUPACE_MAX_PARTITIONS);
    else if (partitions > 0 && partitions < UINT32_MAX - rt->pl.nparts &&
             rt_reserve(rt, rt->pl.njobs + 1, rt->pl.nparts + partitions) < 0)
        cupace_err_set(err, "out of memory for %u partitions more", partitions);
    else if ((j = cupace_pipeline_add_job(&rt->pl, rt_now(rt), partitions, part_mem, release,
                                          err)) >= 0) {
        rt->job_data[j] = data;
        rt->job_tag[j] = tag;
    }
    pthread_mutex_unlock(&rt->lock);
    return j;
}

uint64_t cupace_rt_credit(struct cupace_rt *rt, uint64_t horizon_ns, int *idle)
{
    const struct cupace_pipeline *pl = &rt->pl;
    uint64_t pending, room, rate, per, in_flight, credit;

    pthread_mutex_lock(&rt->lock);
    pending = cupace_pipeline_pending(pl);
    in_flight = pl->dispatched - cupace_pipeline_finished(pl);
    /* at the size of the jobs coming: the last one taken, else the model's */
    per = pl->njobs ? pl->jobs[pl->njobs - 1].part_mem : rt->cfg.workload.partition_memory;
    if (per == 0)
        per = 1;
    room = (pl->mem_budget - pl->mem_reserved) / per;
    /* the memory of jobs that ended is free before their ends are reported,
     * and until then their submitter still holds them: credit for them now
     * would let it hold more than the budget admits */
    room = room > rt->unreported_parts ? room - rt->unreported_parts : 0;
    if (pending == 0 && in_flight == 0)
        rate = UINT64_MAX;          /* idle: the controller's last answer is of another time */
    else if (rt->disp.held || rt->disp.last_interval == CUPACE_PACE_HOLD)
        rate = 0;
    else if (rt->disp.last_interval == 0)
        rate = UINT64_MAX;
    else
        rate = horizon_ns / rt->disp.last_interval + 1;
    if (rate < room)
        room = rate;
    credit = room > pending ? room - pending : 0;
    if (rt->over || rt->closed || rt->stopping || rt->cancelled)
        credit = 0;
    *idle = pending == 0;
    pthread_mutex_unlock(&rt->lock);
    return credit;
}

void cupace_rt_set_pacer(struct cupace_rt *rt, struct cupace_pacer_instance *pacer)
{
    struct cupace_signals s;

    pthread_mutex_lock(&rt->lock);
    replay_events(rt);              /* what the old one was owed, it gets */
    rt->pacer = pacer;
    rt->disp.pacer = pacer;
    rt->disp.held = 0;
    cupace_pipeline_signals(&rt->pl, rt_now(rt), &s);
    pacer->ops->update(pacer->state, &s);       /* it starts from the signals now */
    pthread_cond_broadcast(&rt->dispatcher_cv);
    pthread_mutex_unlock(&rt->lock);
}

int cupace_rt_wait_ready(struct cupace_rt *rt)
{
    int ready;

    pthread_mutex_lock(&rt->lock);
    while (!rt->accepting && !rt->over)
        pthread_cond_wait(&rt->ready_cv, &rt->lock);
    ready = rt->accepting;
    pthread_mutex_unlock(&rt->lock);
    return ready;
}

void cupace_rt_close(struct cupace_rt *rt)
{
    pthread_mutex_lock(&rt->lock);
    rt->closed = 1;
    pthread_cond_broadcast(&rt->dispatcher_cv);
    pthread_mutex_unlock(&rt->lock);
}

int cupace_rt_signals(struct cupace_rt *rt, struct cupace_signals *s)
{
    int rc = -1;

    pthread_mutex_lock(&rt->lock);
    if (rt->accepting || rt->over) {
        cupace_pipeline_signals(&rt->pl, rt->over ? rt->pl.t_end : rt_now(rt), s);
        rc = 0;
    }
    pthread_mutex_unlock(&rt->lock);
    return rc;
}

/* Runs the watchdog abandoned, kept reachable: threads left in an op may
 * still touch them (and a leak checker would call them lost). */
static struct cupace_rt *abandoned_runs[16];
static unsigned nabandoned;

void cupace_rt_destroy(struct cupace_rt *rt)
{
    if (!rt)
        return;
    if (rt->abandoned) {
        unsigned i = __atomic_fetch_add(&nabandoned, 1, __ATOMIC_RELAXED);
        if (i < sizeof abandoned_runs / sizeof *abandoned_runs)
            abandoned_runs[i] = rt;
        return;
    }
    if (rt->stages.ops)
        cupace_stage_run_fini(&rt->stages);
    rt_free(rt);
    cupace_stage_plugin_close(&rt->plugin);     /* last: its code ran until here */
    free(rt);
}

int cupace_realtime(const struct cupace_config *cfg, struct cupace_pacer_instance *pacer,
                    const struct cupace_run_opts *opts, struct cupace_result *res,
                    struct cupace_err *err)
{
    struct cupace_rt *rt = cupace_rt_create(cfg, pacer, opts, err);
    int rc;

    if (!rt)
        return -1;
    rc = cupace_rt_run(rt, res, err);
    cupace_rt_destroy(rt);
    return rc;
}
