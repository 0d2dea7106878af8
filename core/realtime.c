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
 *    dispatch, the next arrival, the status line) and is woken early by an
 *    event, once per sleep;
 *  - `synth_workers` synthesis threads sharing `cpu_slots` by processor
 *    sharing (the same ps.c tracker as the simulator);
 *  - `workers_per_device` GPU workers per device, taking waiting partitions
 *    longest idle first; the device lock is a ticket lock, granted in
 *    request order.  Both pools are crews (struct rt_crew): a thread is
 *    woken only when no awake one will see the work;
 *  - a signal thread: the first SIGINT/SIGTERM stops dispatching, the
 *    second cancels what is in flight.
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

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "grow.h"
#include "pipeline.h"
#include "ps.h"
#include "units.h"
#ifdef HAVE_CUDA
#include "cuda_backend.h"
#endif

struct rt_device {
    pthread_cond_t cv;
    uint64_t next_ticket, serving;
};

/* A synthesis thread or a GPU worker. */
struct rt_worker {
    struct cupace_rt *rt;
    unsigned index;                     /* in its crew */
    unsigned device;                    /* GPU workers only */
    pthread_t thread;
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
    struct cupace_config cfg;           /* scaled copy */
    struct cupace_pipeline pl;
    struct cupace_pacer_instance *pacer;
    const struct cupace_backend_ops *backend;
    const struct cupace_run_opts *opts;
    struct cupace_result *res;
    int quiet, tty;

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
    uint64_t last_interval;
    uint64_t next_sample;

    struct rt_worker *synth_workers, *gpu_workers;
    size_t nsynth_started, ngpu_started;
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

int cupace_rt_sleep(struct cupace_rt *rt, uint64_t ns)
{
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

static int emulated_phase(struct cupace_rt *rt, unsigned device, enum cupace_phase phase,
                          uint32_t part, uint64_t ns)
{
    (void)device;
    (void)phase;
    (void)part;
    return cupace_rt_sleep(rt, ns);
}

const struct cupace_backend_ops cupace_backend_emulated = {
    .name = "emulated",
    .run_phase = emulated_phase,
};

static uint64_t scale_ns(uint64_t ns, double f);

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
 * cancelled; with the engine's lock.  Returns at once if it was handed work
 * already. */
static void crew_wait(struct cupace_rt *rt, struct rt_crew *c, unsigned i)
{
    struct rt_member *m = &c->members[i];

    while (m->asleep && !rt->done && !rt->cancelled)
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
static void crew_sleep(struct cupace_rt *rt, struct rt_crew *c, unsigned i)
{
    c->free--;
    c->members[i].asleep = 1;
    c->idle[(c->idle_head + c->idle_count++) % c->n] = i;
    crew_wait(rt, c, i);
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
    if (rt->opts->record_series && now >= rt->next_sample) {
        if (cupace_result_sample_pipeline(rt->res, &rt->pl, now, rt->last_interval) < 0)
            rt->oom = 1;
        /* one sample per step of model time */
        rt->next_sample = cupace_sat_add(now, scale_ns(rt->opts->series_step_ns,
                                                       rt->cfg.workload.time_scale));
    }
}

/* ---- synthesis --------------------------------------------------------- */

/* Ends every synthesis whose work is done by now; called with the lock. */
static void synth_collect(struct cupace_rt *rt, uint64_t now)
{
    uint32_t id;
    int any = 0;

    while (rt->ps.n && cupace_ps_next(&rt->ps, now) <= now) {
        id = cupace_ps_pop(&rt->ps, now);
        rt->synth_finished[id] = 1;
        if (cupace_pipeline_synth_end(&rt->pl, now, id) == 0)
            crew_hand_on(&rt->gpu_crew);
        any = 1;
    }
    while (cupace_ps_pop_due(&rt->ps, now, &id) == 0) {
        rt->synth_finished[id] = 1;
        if (cupace_pipeline_synth_end(&rt->pl, now, id) == 0)
            crew_hand_on(&rt->gpu_crew);
        any = 1;
    }
    if (any && rt->ps_waiters)
        pthread_cond_broadcast(&rt->synth_cv);
}

/* One synthesis, from its thread's start to its end; with the lock held. */
static void synth_run(struct cupace_rt *rt, uint32_t id)
{
    if (rt->cancelled) {
        cupace_pipeline_abort(&rt->pl, rt_now(rt), id, 0);
        return;
    }
    if (cupace_ps_add(&rt->ps, rt_now(rt), id, rt->pl.parts[id].synth_drawn_ns) < 0) {
        cupace_pipeline_abort(&rt->pl, rt_now(rt), id, 0);   /* cannot happen: slots bound it */
        return;
    }
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
    if (!rt->synth_finished[id])
        cupace_pipeline_abort(&rt->pl, rt_now(rt), id, 0);
}

static void *synth_thread(void *arg)
{
    struct rt_worker *wk = arg;
    struct cupace_rt *rt = wk->rt;
    struct rt_crew *crew = &rt->synth_crew;

    pthread_mutex_lock(&rt->lock);
    crew_wait(rt, crew, wk->index);    /* idle from the start */
    for (;;) {
        uint32_t id;

        if (rt->sq_head == rt->sq_tail) {
            if (rt->done || rt->cancelled)
                break;
            crew_sleep(rt, crew, wk->index);
            continue;
        }
        id = rt->synth_q[rt->sq_head++];
        crew_busy(crew);
        if (rt->sq_head != rt->sq_tail)
            crew_hand_on(crew);         /* more left behind: the next member */
        synth_run(rt, id);
        crew_done(crew);
    }
    pthread_mutex_unlock(&rt->lock);
    return NULL;
}

/* ---- GPU workers ------------------------------------------------------- */

/* Runs a phase without the lock; returns -1 if cancelled. */
static int phase(struct cupace_rt *rt, unsigned device, enum cupace_phase ph, uint32_t id,
                 uint64_t ns)
{
    int rc;

    if (ns == 0 && rt->backend == &cupace_backend_emulated)
        return rt->cancelled ? -1 : 0;  /* nothing to act out: keep the lock */
    pthread_mutex_unlock(&rt->lock);
    rc = rt->backend->run_phase(rt, device, ph, id, ns);
    pthread_mutex_lock(&rt->lock);
    return rc < 0 || rt->cancelled ? -1 : 0;
}

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

/* One partition through prep, kernel and epilogue; with the lock held. */
static void gpu_process(struct cupace_rt *rt, unsigned dev, uint32_t id)
{
    const struct cupace_workload *w = &rt->cfg.workload;
    struct cupace_part *p = &rt->pl.parts[id];
    struct rt_device *d = &rt->devices[dev];
    uint64_t prep = cupace_workload_prep_ns(w, rt_now(rt), p->prep_draw), k, e;
    int failed;

    if (phase(rt, dev, CUPACE_PHASE_PREP, id, prep) < 0)
        goto cancel;
    if (w->gpu_exclusive && lock_device(rt, d) < 0)
        goto cancel;
    k = cupace_workload_kernel_ns(w, rt_now(rt), rt->pl.jobs[p->job].kernel_ns, p->kernel_draw,
                                  dev, cupace_pipeline_contended(&rt->pl, dev));
    cupace_pipeline_kernel_start(&rt->pl, rt_now(rt), id, dev, prep, k);
    if (phase(rt, dev, CUPACE_PHASE_KERNEL, id, k) < 0) {
        if (w->gpu_exclusive)
            unlock_device(d);
        goto cancel;
    }
    failed = cupace_pipeline_kernel_end(&rt->pl, rt_now(rt), id, dev);
    if (w->gpu_exclusive)
        unlock_device(d);
    if (failed)
        return;
    e = cupace_workload_epilogue_ns(w, rt_now(rt), p->epilogue_draw);
    if (phase(rt, dev, CUPACE_PHASE_EPILOGUE, id, e) < 0)
        goto cancel;
    /* the finalizer: time before the completion, inside the lock */
    cupace_pipeline_gpu_done(&rt->pl, rt_now(rt), id, dev, e);
    return;
cancel:
    cupace_pipeline_abort(&rt->pl, rt_now(rt), id, dev);
}

static void *gpu_thread(void *arg)
{
    struct rt_worker *wk = arg;
    struct cupace_rt *rt = wk->rt;
    struct rt_crew *crew = &rt->gpu_crew;

    pthread_mutex_lock(&rt->lock);
    crew_wait(rt, crew, wk->index);    /* idle from the start */
    for (;;) {
        uint32_t id;

        if (rt->cancelled)
            break;
        if (rt->pl.waiting == 0) {
            if (rt->done)
                break;
            crew_sleep(rt, crew, wk->index);
            continue;
        }
        id = cupace_pipeline_take(&rt->pl, rt_now(rt), wk->device);
        crew_busy(crew);
        if (rt->pl.waiting > 0)
            crew_hand_on(crew);         /* more left behind: the next member */
        gpu_process(rt, wk->device, id);
        crew_done(crew);
    }
    pthread_mutex_unlock(&rt->lock);
    return NULL;
}

/* ---- signals ----------------------------------------------------------- */

struct sig_ctx {
    struct cupace_rt *rt;
    sigset_t set;
};

static void *signal_thread(void *arg)
{
    struct sig_ctx *sc = arg;
    struct cupace_rt *rt = sc->rt;
    int sig, count = 0;

    while (sigwait(&sc->set, &sig) == 0) {
        if (sig == SIGUSR2)
            break;                      /* the run is over */
        pthread_mutex_lock(&rt->lock);
        if (++count == 1) {
            rt->stopping = 1;
            if (!rt->quiet)
                fprintf(stderr, "\ncupace: %s: stopping dispatch, letting %llu partitions in "
                        "flight finish (again to cancel them)\n", strsignal(sig),
                        (unsigned long long)(rt->pl.dispatched - cupace_pipeline_finished(&rt->pl)));
        } else {
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
            if (!rt->quiet)
                fprintf(stderr, "cupace: %s again: cancelling what is in flight\n", strsignal(sig));
        }
        pthread_cond_broadcast(&rt->dispatcher_cv);
        pthread_mutex_unlock(&rt->lock);
    }
    return NULL;
}

/* ---- the status line --------------------------------------------------- */

static void status_line(struct cupace_rt *rt, uint64_t now, int final)
{
    char mem[32], iv[32], state[256];
    const struct cupace_pipeline *pl = &rt->pl;

    if (rt->quiet)
        return;
    cupace_format_size(pl->mem_reserved, mem, sizeof mem);
    if (rt->last_interval == CUPACE_PACE_HOLD)
        snprintf(iv, sizeof iv, "hold");
    else
        cupace_format_duration(rt->last_interval, iv, sizeof iv);
    cupace_pacer_instance_describe(rt->pacer, state, sizeof state);
    fprintf(stderr, "%s[%s] %7.1fs %llu/%u done  waiting %llu  synth %llu  gpu %llu/%u  mem %s  "
            "interval %s  %s%s", rt->tty ? "\r\033[K" : "cupace: ", rt->pacer->label,
            (double)now / 1e9, (unsigned long long)cupace_pipeline_finished(pl), pl->nparts,
            (unsigned long long)pl->waiting, (unsigned long long)pl->in_synthesis,
            (unsigned long long)pl->gpu_busy, pl->nworkers, mem, iv, state,
            rt->tty && !final ? "" : "\n");
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

static void dispatch_loop(struct cupace_rt *rt)
{
    uint64_t last_dispatch = 0, next_status;
    int any_dispatch = 0;

    next_status = rt->tty ? 1000000000ULL : rt->cfg.engine.status_interval_ns;
    for (;;) {
        uint64_t now = rt_now(rt), deadline, in_flight;
        struct cupace_signals sig;

        while (cupace_pipeline_next_arrival(&rt->pl) <= now)
            cupace_pipeline_arrive(&rt->pl, now);
        if (rt->nlog) {
            replay_events(rt);
            continue;
        }
        if (now >= next_status) {
            status_line(rt, now, 0);
            next_status = now + (rt->tty ? 1000000000ULL : rt->cfg.engine.status_interval_ns);
        }
        in_flight = rt->pl.dispatched - cupace_pipeline_finished(&rt->pl);
        if (cupace_pipeline_finished(&rt->pl) == rt->pl.nparts || rt->oom ||
            ((rt->stopping || rt->cancelled) && in_flight == 0))
            break;
        if (rt->cancelled)
            cupace_pipeline_abort_waiting(&rt->pl, now);
        deadline = rt->stopping ? UINT64_MAX : cupace_pipeline_next_arrival(&rt->pl);
        if (next_status < deadline)
            deadline = next_status;
        if (!rt->stopping && cupace_pipeline_can_dispatch(&rt->pl)) {
            uint64_t iv, due;

            cupace_pipeline_signals(&rt->pl, now, &sig);
            iv = rt->pacer->ops->interval_ns(rt->pacer->state, &sig);
            rt->last_interval = iv;
            if (iv != CUPACE_PACE_HOLD) {
                due = any_dispatch ? cupace_sat_add(last_dispatch, iv) : 0;
                now = rt_now(rt);
                if (now >= due) {
                    uint32_t id = cupace_pipeline_dispatch(&rt->pl, now);
                    record_lateness(rt, now, due);
                    last_dispatch = now;
                    any_dispatch = 1;
                    rt->synth_q[rt->sq_tail++] = id;
                    crew_hand_on(&rt->synth_crew);
                    continue;
                }
                if (due < deadline)
                    deadline = due;
            } else if (in_flight == 0 &&
                       cupace_pipeline_next_arrival(&rt->pl) == UINT64_MAX && rt->nlog == 0) {
                /* nothing in flight, nothing to come: no event will ever wake us */
                cupace_result_stalled(rt->res, rt->pacer->label, rt->pacer->plugin, now, &rt->pl);
                break;
            }
        }
        if (rt->nlog == 0) {
            rt->dispatcher_waiting = 1;
            wait_until(rt, &rt->dispatcher_cv, &rt->lock, deadline);
            rt->dispatcher_waiting = 0;
        }
    }
    status_line(rt, rt_now(rt), 1);
}

/* ---- set-up ------------------------------------------------------------ */

static uint64_t scale_ns(uint64_t ns, double f)
{
    double v = (double)ns * f;

    return v >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(v);
}

/* A copy of cfg whose durations are multiplied by time_scale. */
static int scale_config(struct cupace_config *dst, const struct cupace_config *src)
{
    struct cupace_workload *w = &dst->workload;
    double f = src->workload.time_scale;

    *dst = *src;
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
    w->interarrival_ns = scale_ns(w->interarrival_ns, f);
    w->burst_every_ns = scale_ns(w->burst_every_ns, f);
    w->synth_ns = scale_ns(w->synth_ns, f);
    w->gpu_prep_ns = scale_ns(w->gpu_prep_ns, f);
    w->gpu_kernel_ns = scale_ns(w->gpu_kernel_ns, f);
    w->gpu_epilogue_ns = scale_ns(w->gpu_epilogue_ns, f);
    for (size_t i = 0; i < w->nchanges; i++) {
        w->changes[i].at_ns = scale_ns(w->changes[i].at_ns, f);
        w->changes[i].ns = scale_ns(w->changes[i].ns, f);
    }
    for (size_t i = 0; i < w->ntrace_jobs; i++) {
        w->trace_jobs[i].arrival_ns = scale_ns(w->trace_jobs[i].arrival_ns, f);
        w->trace_jobs[i].synth_ns = scale_ns(w->trace_jobs[i].synth_ns, f);
        w->trace_jobs[i].kernel_ns = scale_ns(w->trace_jobs[i].kernel_ns, f);
    }
    return 0;
}

/* backend = auto | cuda | emulated, said on stderr. */
static int choose_backend(struct cupace_rt *rt, const struct cupace_config *cfg, int quiet,
                          struct cupace_err *err)
{
    char why[256] = "this cupace was built without CUDA";
    int n = -1;

#ifdef HAVE_CUDA
    n = cupace_cuda_probe(why, sizeof why);
#endif
    if (cfg->engine.backend == CUPACE_BACKEND_CUDA) {
        if (n <= 0)
            return cupace_err_set(err, "%s: [engine] backend = cuda: %s", cfg->path, why);
        return cupace_err_set(err, "%s: [engine] backend = cuda: %d device%s answer, but the CUDA "
                              "workers are not built yet; use backend = emulated", cfg->path, n,
                              n == 1 ? "" : "s");
    }
    rt->backend = &cupace_backend_emulated;
    if (!quiet && cfg->engine.backend == CUPACE_BACKEND_AUTO)
        fprintf(stderr, "cupace: backend: emulated (%s)\n",
                n > 0 ? "the CUDA workers are not built yet" : why);
    return 0;
}

static int rt_init(struct cupace_rt *rt, const struct cupace_config *cfg, struct cupace_err *err)
{
    uint32_t n;

    if (scale_config(&rt->cfg, cfg) < 0 || cupace_pipeline_init(&rt->pl, &rt->cfg, err) < 0)
        return cupace_err_set(err, "%s: out of memory", cfg->path);
    n = rt->pl.nparts ? rt->pl.nparts : 1;
    rt->pl.observer = on_event;
    rt->pl.observer_ctx = rt;
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
    pthread_mutex_init(&rt->lock, NULL);
    pthread_mutex_init(&rt->sleep_lock, NULL);
    cond_init_monotonic(&rt->dispatcher_cv);
    cond_init_monotonic(&rt->synth_cv);
    cond_init_monotonic(&rt->sleep_cv);
    for (uint32_t d = 0; d < rt->pl.ndevices; d++)
        cond_init_monotonic(&rt->devices[d].cv);
    return 0;
}

static void rt_free(struct cupace_rt *rt)
{
    if (rt->devices) {
        for (uint32_t d = 0; d < rt->pl.ndevices; d++)
            pthread_cond_destroy(&rt->devices[d].cv);
        pthread_mutex_destroy(&rt->lock);
        pthread_mutex_destroy(&rt->sleep_lock);
        pthread_cond_destroy(&rt->dispatcher_cv);
        pthread_cond_destroy(&rt->synth_cv);
        pthread_cond_destroy(&rt->sleep_cv);
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
    cupace_pipeline_free(&rt->pl);
    free(rt->cfg.workload.changes);
    free(rt->cfg.workload.trace_jobs);
}

static int start_threads(struct cupace_rt *rt, struct cupace_err *err)
{
    for (uint64_t i = 0; i < rt->cfg.engine.synth_workers; i++) {
        rt->synth_workers[i].rt = rt;
        rt->synth_workers[i].index = (unsigned)i;
        if (pthread_create(&rt->synth_workers[i].thread, NULL, synth_thread,
                           &rt->synth_workers[i]) != 0)
            return cupace_err_set(err, "cannot start synthesis thread %llu: %s",
                                  (unsigned long long)i, strerror(errno));
        rt->nsynth_started++;
    }
    for (uint32_t w = 0; w < rt->pl.nworkers; w++) {
        rt->gpu_workers[w].rt = rt;
        rt->gpu_workers[w].device = w / rt->pl.workers_per_device;
        rt->gpu_workers[w].index = w;
        if (pthread_create(&rt->gpu_workers[w].thread, NULL, gpu_thread, &rt->gpu_workers[w]) != 0)
            return cupace_err_set(err, "cannot start GPU worker %u: %s", w, strerror(errno));
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
    pthread_mutex_unlock(&rt->lock);
    for (size_t i = 0; i < rt->nsynth_started; i++)
        pthread_join(rt->synth_workers[i].thread, NULL);
    for (size_t i = 0; i < rt->ngpu_started; i++)
        pthread_join(rt->gpu_workers[i].thread, NULL);
}

int cupace_realtime(const struct cupace_config *cfg, struct cupace_pacer_instance *pacer,
                    const struct cupace_run_opts *opts, int quiet, struct cupace_result *res,
                    struct cupace_err *err)
{
    struct cupace_rt *rt = calloc(1, sizeof *rt);
    struct sig_ctx sc;
    sigset_t old;
    pthread_t sigthread;
    int rc = -1, have_sigthread = 0;

    if (!rt)
        return cupace_err_set(err, "out of memory");
    rt->pacer = pacer;
    rt->opts = opts;
    rt->res = res;
    rt->quiet = quiet;
    rt->tty = isatty(STDERR_FILENO);
    snprintf(res->label, sizeof res->label, "%s", pacer->label);
    snprintf(res->plugin, sizeof res->plugin, "%s", pacer->plugin);
    if (choose_backend(rt, cfg, quiet, err) < 0 || rt_init(rt, cfg, err) < 0)
        goto out;

    sc.rt = rt;
    sigemptyset(&sc.set);
    sigaddset(&sc.set, SIGINT);
    sigaddset(&sc.set, SIGTERM);
    sigaddset(&sc.set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &sc.set, &old);     /* every thread inherits it */
    have_sigthread = pthread_create(&sigthread, NULL, signal_thread, &sc) == 0;

    pthread_mutex_lock(&rt->lock);
    if (start_threads(rt, err) == 0) {
        rt->t0 = mono_ns();         /* the threads read it only under the lock */
        dispatch_loop(rt);
        rc = 0;
    }
    pthread_mutex_unlock(&rt->lock);
    join_threads(rt);
    if (have_sigthread) {
        pthread_kill(sigthread, SIGUSR2);
        pthread_join(sigthread, NULL);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0 && rt->oom)
        rc = cupace_err_set(err, "%s: out of memory during the run", cfg->path);
    if (rc == 0) {
        /* replay what the last events told, so describe() is current */
        pthread_mutex_lock(&rt->lock);
        replay_events(rt);
        pthread_mutex_unlock(&rt->lock);
        cupace_result_from_pipeline(res, &rt->pl);
        res->interrupted = rt->stopping || rt->cancelled;
        res->has_lateness = 1;
        res->lateness = cupace_quantiles(rt->lateness, rt->nlateness);
        cupace_pacer_instance_describe(pacer, res->pacer_state, sizeof res->pacer_state);
    }
out:
    rt_free(rt);
    free(rt);
    return rc;
}
