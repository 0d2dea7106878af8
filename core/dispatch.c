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
    };
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
    if (*due > CUPACE_HORIZON_NS) {
        d->held = 1;                /* it could never come due (checked.h): a hold */
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

void cupace_dispatcher_observe(struct cupace_dispatcher *d, uint64_t now)
{
    /* several events at one instant show as the state after the last of
     * them (the result keeps one sample per instant): sampled at the first
     * of them only, the fill at t = 0 on conf/cupace.ini read as nothing in
     * synthesis and no memory until the first synthesis ended, 35 s on */
    int same_instant = d->sampled && now == d->last_sample;

    if (!d->record_series || (now < d->next_sample && !same_instant))
        return;
    if (cupace_result_sample_pipeline(d->res, d->pl, now, d->last_interval) < 0)
        d->oom = 1;
    if (!same_instant)
        d->next_sample = cupace_sat_add(now, d->series_step_ns);
    d->sampled = 1;
    d->last_sample = now;
}

int cupace_dispatcher_stalled(const struct cupace_dispatcher *d)
{
    const struct cupace_pipeline *pl = d->pl;

    return d->held && cupace_pipeline_pending(pl) > 0 &&
           pl->dispatched == cupace_pipeline_finished(pl) &&
           cupace_pipeline_next_arrival(pl) == UINT64_MAX;
}
