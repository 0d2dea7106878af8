/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * dispatch.c -- the gates, the stall rule and the sampler (see dispatch.h).
 */
#include "config.h"
#include "dispatch.h"

#include "units.h"

void cupace_dispatcher_init(struct cupace_dispatcher *d, struct cupace_pipeline *pl,
                            struct cupace_pacer_instance *pacer, struct cupace_result *res,
                            int record_series, uint64_t series_step_ns)
{
    *d = (struct cupace_dispatcher){
        .pl = pl, .pacer = pacer, .res = res,
        .record_series = record_series, .series_step_ns = series_step_ns,
        .part_worst_ns = cupace_workload_partition_worst_ns(pl->cfg),
    };
}

/* A dispatch due at due, later than now, could leave the run unable to end
 * before the horizon: the partitions not finished, run one after another at
 * their configured worst from due, would pass it.  The loader saw to it that
 * the whole workload fits from its last arrival; a controller's wait is not
 * in that bound (a fixed interval just short of the horizon dispatched a
 * partition there, whose 36 s of work then ran past it). */
static int too_late(const struct cupace_dispatcher *d, uint64_t now, uint64_t due)
{
    const struct cupace_pipeline *pl = d->pl;
    double left = (double)(pl->nparts - cupace_pipeline_finished(pl)) * d->part_worst_ns;

    return due > now && cupace_time_after(due, cupace_ns_from_double(left)) > CUPACE_HORIZON_NS;
}

enum cupace_gate cupace_dispatcher_gate(struct cupace_dispatcher *d, uint64_t now, uint64_t *due)
{
    struct cupace_signals sig;
    uint64_t iv;

    d->held = 0;
    if (!cupace_pipeline_can_dispatch(d->pl))
        return CUPACE_GATE_CLOSED;
    cupace_pipeline_signals(d->pl, now, &sig);
    iv = d->last_interval = d->pacer->ops->interval_ns(d->pacer->state, &sig);
    if (iv == CUPACE_PACE_HOLD) {
        d->held = 1;
        return CUPACE_GATE_HOLD;
    }
    *due = d->any_dispatch ? cupace_time_after(d->last_dispatch, iv) : 0;
    if (*due > CUPACE_HORIZON_NS || too_late(d, now, *due)) {
        d->held = 1;                /* it could never come due in time (checked.h): a hold */
        return CUPACE_GATE_HOLD;
    }
    return CUPACE_GATE_DUE;
}

uint32_t cupace_dispatcher_dispatch(struct cupace_dispatcher *d, uint64_t now)
{
    uint32_t id = cupace_pipeline_dispatch(d->pl, now);

    d->any_dispatch = 1;
    d->last_dispatch = now;
    return id;
}

/* One row at T: VALUES over the step from T, the controller's latest
 * interval and the device time so far. */
static void emit(struct cupace_dispatcher *d, uint64_t t, const double *values, double busy)
{
    struct cupace_sample smp = {
        .t_s = (double)t / 1e9,
        .waiting = values[0], .in_synthesis = values[1], .on_gpu = values[2],
        .mem_reserved = values[3],
        /* an interval that can never come due is a hold (the gate) */
        .interval_s = d->last_interval == CUPACE_PACE_HOLD || d->held
                          ? NAN
                          : (double)d->last_interval / 1e9,
        .busy_s = busy / 1e9,
    };

    if (cupace_result_add_sample(d->res, &smp) < 0)
        d->oom = 1;
}

static void accumulate(struct cupace_dispatcher *d, uint64_t to)
{
    for (int i = 0; i < 4; i++)
        d->area[i] += d->state[i] * (double)(to - d->last_t);
    d->busy += d->state[4] * (double)(to - d->last_t);
    d->last_t = to;
}

/* The row of the step from bin_start, SPAN long (a whole step, or the
 * last one's part): the means of what was integrated over it. */
static void close_bin(struct cupace_dispatcher *d, uint64_t span)
{
    double mean[4];

    for (int i = 0; i < 4; i++) {
        mean[i] = d->area[i] / (double)span;
        d->area[i] = 0;
    }
    emit(d, d->bin_start, mean, d->bin_busy);
}

/* Integrates the state up to NOW, a row for each step completed.  A
 * sample of the state once a step, at whichever event came first, read
 * the rhythm of the controller, not the run's: with a dispatch every
 * second and a synthesis of 50 ms, every row showed one in synthesis,
 * where the run held one for 5% of the time (19 times the report's mean
 * memory).  The means integrate to the report's.  A quiet stretch of
 * whole steps is one row: the state held all of it.  Each row carries the
 * device-busy time up to its own time (the GPU panel's differences): the
 * pipeline's total is as of the event that closes the step, and read there
 * charged a long kernel to the rows before it (5000% busy). */
static void integrate(struct cupace_dispatcher *d, uint64_t now)
{
    uint64_t step = d->series_step_ns ? d->series_step_ns : 1;

    while (now - d->bin_start >= step) {
        accumulate(d, d->bin_start + step);
        close_bin(d, step);
        d->bin_start += step;
        d->bin_busy = d->busy;
        if (now - d->bin_start >= step) {
            uint64_t whole = (now - d->bin_start) / step * step;

            emit(d, d->bin_start, d->state, d->bin_busy);
            d->busy += d->state[4] * (double)whole;
            d->bin_start += whole;
            d->last_t = d->bin_start;
            d->bin_busy = d->busy;
        }
    }
    accumulate(d, now);
}

static void take_state(struct cupace_dispatcher *d)
{
    d->state[0] = (double)d->pl->waiting;
    d->state[1] = (double)d->pl->in_synthesis;
    d->state[2] = (double)d->pl->gpu_busy;
    d->state[3] = (double)d->pl->mem_reserved;
    d->state[4] = (double)d->pl->busy_devices;
}

void cupace_dispatcher_observe(struct cupace_dispatcher *d, uint64_t now)
{
    if (!d->record_series)
        return;
    /* in real time an event's instant is read before the lock is taken:
     * one read a moment before the last is taken as at the last */
    integrate(d, now > d->last_t ? now : d->last_t);
    take_state(d);      /* several events at one instant: the last one's state holds */
}

void cupace_dispatcher_finish(struct cupace_dispatcher *d)
{
    uint64_t end = d->pl->t_end > d->last_t ? d->pl->t_end : d->last_t;

    if (!d->record_series)
        return;
    integrate(d, end);
    if (end > d->bin_start)
        close_bin(d, end - d->bin_start);
    take_state(d);
    emit(d, end, d->state, d->busy);
}

int cupace_dispatcher_stalled(const struct cupace_dispatcher *d)
{
    const struct cupace_pipeline *pl = d->pl;

    return d->held && cupace_pipeline_pending(pl) > 0 &&
           pl->dispatched == cupace_pipeline_finished(pl) &&
           cupace_pipeline_next_arrival(pl) == UINT64_MAX;
}
