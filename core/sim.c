/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * sim.c -- the discrete-event simulator.
 *
 * Events: a job arrival, the next synthesis completion (processor sharing,
 * see ps.h; rescheduled with a generation number whenever the set of
 * syntheses changes), a worker's prep, kernel and epilogue ends, and the
 * pacer's timer.  After every event the simulator lets idle workers take
 * waiting partitions (longest idle first) and then runs the dispatcher
 * (dispatch.h, shared with the real-time engine): it dispatches while the
 * gates say a dispatch is due by now, and otherwise arms the timer for the
 * instant it is due; a closed gate or CUPACE_PACE_HOLD arms nothing.  When
 * the event queue empties, the stall rule of dispatch.h says whether the
 * controller stalled the run.
 */
#include "config.h"
#include "sim.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "heap.h"
#include "pipeline.h"
#include "ps.h"
#include "units.h"

enum { EV_ARRIVAL, EV_SYNTH, EV_PREP, EV_KERNEL, EV_EPILOGUE, EV_PACER };

struct sim_worker {
    uint32_t device;
    uint32_t part;
    uint64_t prep_ns;
    uint64_t epilogue_ns;
};

/* One device's lock: who holds it and who waits, in request order. */
struct sim_device {
    int held;
    uint32_t *queue;                /* ring of worker ids, capacity workers_per_device */
    uint32_t head, count;
};

struct sim {
    const struct cupace_config *cfg;
    const struct cupace_workload *w;
    struct cupace_pipeline pl;
    struct cupace_heap heap;
    struct cupace_ps ps;
    struct cupace_pacer_instance *pacer;
    struct cupace_dispatcher disp;

    struct sim_worker *workers;
    uint32_t *idle;                 /* ring of idle workers, longest idle first */
    uint32_t idle_head, idle_count;
    struct sim_device *devices;

    uint64_t synth_gen;
    uint64_t synth_at;              /* when the pending EV_SYNTH fires, UINT64_MAX if none */
    int synth_dirty;
    uint64_t pacer_gen, pacer_due;
    int pacer_armed;
    int oom;
};

static void push(struct sim *s, uint64_t t, uint32_t type, uint32_t arg, uint64_t gen)
{
    if (cupace_heap_push(&s->heap, t, type, arg, gen) < 0)
        s->oom = 1;
}

/* The observer: the controller's update after every signal change. */
static void on_event(void *ctx, uint64_t now)
{
    struct sim *s = ctx;
    struct cupace_signals sig;

    cupace_pipeline_signals(&s->pl, now, &sig);
    s->pacer->ops->update(s->pacer->state, &sig);
    cupace_dispatcher_observe(&s->disp, now);
}

/* ---- GPU workers ------------------------------------------------------- */

static void idle_push(struct sim *s, uint32_t w)
{
    s->idle[(s->idle_head + s->idle_count++) % s->pl.nworkers] = w;
}

static uint32_t idle_pop(struct sim *s)
{
    uint32_t w = s->idle[s->idle_head];

    s->idle_head = (s->idle_head + 1) % s->pl.nworkers;
    s->idle_count--;
    return w;
}

static void assign_workers(struct sim *s, uint64_t now)
{
    while (s->idle_count > 0 && s->pl.waiting > 0) {
        uint32_t w = idle_pop(s);
        struct sim_worker *wk = &s->workers[w];

        wk->part = cupace_pipeline_take(&s->pl, now, wk->device);
        wk->prep_ns = cupace_pipeline_prep_ns(&s->pl, now, wk->part);
        push(s, cupace_sat_add(now, wk->prep_ns), EV_PREP, w, 0);
    }
}

static void start_kernel(struct sim *s, uint64_t now, uint32_t w)
{
    struct sim_worker *wk = &s->workers[w];
    uint64_t k = cupace_pipeline_kernel_ns(&s->pl, now, wk->part, wk->device);

    cupace_pipeline_kernel_start(&s->pl, now, wk->part, wk->device, wk->prep_ns, k);
    push(s, cupace_sat_add(now, k), EV_KERNEL, w, 0);
}

static void request_lock(struct sim *s, uint64_t now, uint32_t w)
{
    struct sim_device *d = &s->devices[s->workers[w].device];

    if (!s->w->gpu_exclusive) {
        start_kernel(s, now, w);
        return;
    }
    if (!d->held) {
        d->held = 1;
        start_kernel(s, now, w);
        return;
    }
    d->queue[(d->head + d->count++) % s->pl.workers_per_device] = w;
}

static void release_lock(struct sim *s, uint64_t now, uint32_t device)
{
    struct sim_device *d = &s->devices[device];
    uint32_t next;

    if (!s->w->gpu_exclusive)
        return;
    if (d->count == 0) {
        d->held = 0;
        return;
    }
    next = d->queue[d->head];
    d->head = (d->head + 1) % s->pl.workers_per_device;
    d->count--;
    start_kernel(s, now, next);     /* the lock passes on, still held */
}

static void kernel_done(struct sim *s, uint64_t now, uint32_t w)
{
    struct sim_worker *wk = &s->workers[w];

    if (cupace_pipeline_kernel_end(&s->pl, now, wk->part, wk->device) < 0) {
        idle_push(s, w);
    } else {
        wk->epilogue_ns = cupace_pipeline_epilogue_ns(&s->pl, now, wk->part);
        push(s, cupace_sat_add(now, wk->epilogue_ns), EV_EPILOGUE, w, 0);
    }
    release_lock(s, now, wk->device);
}

/* ---- synthesis and the dispatcher -------------------------------------- */

static void pump(struct sim *s, uint64_t now)
{
    uint64_t due;

    while (cupace_dispatcher_gate(&s->disp, now, &due) == CUPACE_GATE_DUE) {
        uint32_t id;

        if (now < due) {
            if (!s->pacer_armed || s->pacer_due != due) {
                s->pacer_armed = 1;
                s->pacer_due = due;
                push(s, due, EV_PACER, 0, ++s->pacer_gen);
            }
            return;
        }
        id = cupace_dispatcher_dispatch(&s->disp, now);
        if (cupace_ps_add(&s->ps, now, id, s->pl.parts[id].synth_drawn_ns) < 0)
            s->oom = 1;
        s->synth_dirty = 1;
    }
}

static void handle(struct sim *s, const struct cupace_event *ev)
{
    uint64_t now = ev->time;

    switch (ev->type) {
    case EV_ARRIVAL:
        cupace_pipeline_arrive(&s->pl, now);
        if (cupace_pipeline_next_arrival(&s->pl) != UINT64_MAX)
            push(s, cupace_pipeline_next_arrival(&s->pl), EV_ARRIVAL, 0, 0);
        break;
    case EV_SYNTH:
        if (ev->gen != s->synth_gen)
            return;                 /* superseded */
        s->synth_at = UINT64_MAX;
        cupace_pipeline_synth_collect(&s->pl, &s->ps, now, 1, NULL, NULL);
        s->synth_dirty = 1;
        break;
    case EV_PREP: {
        struct sim_worker *wk = &s->workers[ev->arg];
        if (cupace_pipeline_prep_end(&s->pl, now, wk->part, wk->device) < 0)
            idle_push(s, ev->arg);
        else
            request_lock(s, now, ev->arg);
        break;
    }
    case EV_KERNEL:
        kernel_done(s, now, ev->arg);
        break;
    case EV_EPILOGUE: {
        struct sim_worker *wk = &s->workers[ev->arg];
        (void)cupace_pipeline_gpu_done(&s->pl, now, wk->part, wk->device, wk->epilogue_ns);
        idle_push(s, ev->arg);      /* completed or failed, the worker is free */
        break;
    }
    case EV_PACER:
        if (ev->gen != s->pacer_gen)
            return;
        s->pacer_armed = 0;
        break;
    }
    assign_workers(s, now);
    pump(s, now);
    if (s->synth_dirty) {
        uint64_t t = cupace_ps_next(&s->ps, now);
        s->synth_dirty = 0;
        if (t != s->synth_at) {     /* an unchanged finish keeps its event */
            s->synth_gen++;
            s->synth_at = t;
            if (t != UINT64_MAX)
                push(s, t, EV_SYNTH, 0, s->synth_gen);
        }
    }
}

/* ---- set-up and the run ------------------------------------------------ */

static int sim_init(struct sim *s, const struct cupace_config *cfg, struct cupace_err *err)
{
    uint32_t W = (uint32_t)cfg->engine.workers_per_device;

    s->w = &cfg->workload;
    cupace_heap_init(&s->heap);
    if (cupace_pipeline_init(&s->pl, cfg, err) < 0)
        return -1;
    s->pl.observer = on_event;
    s->pl.observer_ctx = s;
    if (cupace_ps_init(&s->ps, (uint32_t)cfg->workload.cpu_slots, cfg->engine.synth_workers) < 0)
        return cupace_err_set(err, "out of memory");
    s->workers = calloc(s->pl.nworkers, sizeof *s->workers);
    s->idle = calloc(s->pl.nworkers, sizeof *s->idle);
    s->devices = calloc(s->pl.ndevices, sizeof *s->devices);
    if (!s->workers || !s->idle || !s->devices)
        return cupace_err_set(err, "out of memory");
    for (uint32_t d = 0; d < s->pl.ndevices; d++) {
        s->devices[d].queue = calloc(W, sizeof *s->devices[d].queue);
        if (!s->devices[d].queue)
            return cupace_err_set(err, "out of memory");
    }
    for (uint32_t w = 0; w < s->pl.nworkers; w++) {
        s->workers[w].device = cupace_pipeline_worker_device(&s->pl, w);
        idle_push(s, w);
    }
    return 0;
}

static void sim_free(struct sim *s)
{
    if (s->devices)
        for (uint32_t d = 0; d < s->pl.ndevices; d++)
            free(s->devices[d].queue);
    free(s->devices);
    free(s->idle);
    free(s->workers);
    cupace_ps_free(&s->ps);
    cupace_heap_free(&s->heap);
    cupace_pipeline_free(&s->pl);
}

int cupace_simulate(const struct cupace_config *cfg, struct cupace_pacer_instance *pacer,
                    const struct cupace_run_opts *opts, struct cupace_result *res,
                    struct cupace_err *err)
{
    struct sim s;
    struct cupace_event ev;
    uint64_t now = 0, events = 0;
    int rc = 0, beyond = 0;

    memset(&s, 0, sizeof s);
    s.cfg = cfg;
    s.pacer = pacer;
    s.synth_at = UINT64_MAX;
    cupace_result_begin(res, pacer);
    if (sim_init(&s, cfg, err) < 0) {
        sim_free(&s);
        return -1;
    }
    cupace_dispatcher_init(&s.disp, &s.pl, pacer, res, opts->record_series, opts->series_step_ns);
    if (cupace_pipeline_next_arrival(&s.pl) != UINT64_MAX)
        push(&s, cupace_pipeline_next_arrival(&s.pl), EV_ARRIVAL, 0, 0);
    while (!s.oom && !s.disp.oom && cupace_heap_pop(&s.heap, &ev) == 0) {
        if (cupace_stop_requested(opts)) {
            res->interrupted = 1;
            break;
        }
        if (ev.time > CUPACE_HORIZON_NS) {
            beyond = 1;             /* a duration drawn past the horizon (checked.h) */
            break;
        }
        now = ev.time;
        events++;
        handle(&s, &ev);
    }
    if (s.oom || s.disp.oom) {
        rc = cupace_err_set(err, "simulation of %s: out of memory", pacer->label);
    } else {
        /* the queue is empty: nothing in flight, nothing to arrive, no timer */
        assert(cupace_pipeline_finished(&s.pl) == s.pl.nparts || cupace_dispatcher_stalled(&s.disp) ||
               beyond || res->interrupted);
        if (cupace_dispatcher_stalled(&s.disp) && !res->interrupted)
            cupace_result_stalled(res, pacer->label, pacer->plugin, now, &s.pl);
        cupace_dispatcher_finish(&s.disp);
        cupace_result_end(res, &s.pl, pacer);
        if (beyond)
            cupace_result_beyond_horizon(res);
        res->events = events;
    }
    sim_free(&s);
    return rc;
}
