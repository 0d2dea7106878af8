/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * dispatch.h -- the dispatcher's rules, written once for either clock.
 *
 * The simulator (virtual time) and the real-time engine (the monotonic
 * clock) both dispatch by these rules; they differ only in how they wait
 * for the next instant.  This module holds:
 *   - the gates (DESIGN §2): memory and a synthesis slot first, then the
 *     controller's interval: a dispatch is due at last_dispatch + interval
 *     (saturating), the first one at once.  A dispatch due so late that the
 *     work not yet finished, done one partition after another at its
 *     configured worst, could pass the horizon (checked.h) is a hold: the
 *     clock would run out before the run could end;
 *   - the stall rule: the run is stalled when the controller holds
 *     (CUPACE_PACE_HOLD) with partitions pending, nothing in flight and no
 *     arrival to come, since no event will ever call it again;
 *   - the sampler of the time series: one row per step of the engine's
 *     clock, the means over that step (counts and memory are a step
 *     function of time, integrated between events), and a last row with
 *     the state at the end.
 * It has no clock, no threads and no lock of its own: the driver calls it
 * with `now` and, in real time, with the engine's lock held.
 */
#ifndef CUPACE_DISPATCH_H
#define CUPACE_DISPATCH_H

#include <stdint.h>

#include "pacer_host.h"
#include "pipeline.h"
#include "result.h"

enum cupace_gate {
    CUPACE_GATE_CLOSED,             /* nothing pending, or no memory or slot: wait for an event */
    CUPACE_GATE_HOLD,               /* the controller holds: wait for an event */
    CUPACE_GATE_DUE,                /* a dispatch is due at *due (now or later) */
};

struct cupace_dispatcher {
    struct cupace_pipeline *pl;
    struct cupace_pacer_instance *pacer;
    struct cupace_result *res;      /* where the series goes */
    int record_series;
    uint64_t series_step_ns;        /* on the engine's clock */
    /* the step being integrated: from bin_start to last_t, the state
     * after the event at last_t holding since, area the integrals */
    uint64_t bin_start, last_t;
    double state[5], area[4];       /* waiting, in synthesis, on a GPU, memory; devices busy */
    double busy, bin_busy;          /* device-busy ns up to last_t, and up to bin_start */
    int any_dispatch;
    uint64_t last_dispatch;
    uint64_t last_interval;         /* the controller's last answer (for the series, the status) */
    int held;                       /* the last question was answered CUPACE_PACE_HOLD */
    double part_worst_ns;           /* cupace_workload_partition_worst_ns of the run's config */
    int oom;                        /* a sample could not be stored */
};

void cupace_dispatcher_init(struct cupace_dispatcher *d, struct cupace_pipeline *pl,
                            struct cupace_pacer_instance *pacer, struct cupace_result *res,
                            int record_series, uint64_t series_step_ns);

/* The gates at now: asks the controller (with the signals at now) only
 * when memory, a slot and a pending partition are there. */
enum cupace_gate cupace_dispatcher_gate(struct cupace_dispatcher *d, uint64_t now, uint64_t *due);

/* Dispatches the head of the job queue at now (the gates said it is due);
 * returns the partition. */
uint32_t cupace_dispatcher_dispatch(struct cupace_dispatcher *d, uint64_t now);

/* After every event: integrates the series up to now, writing a row for
 * each step it completes, then takes the state after the event. */
void cupace_dispatcher_observe(struct cupace_dispatcher *d, uint64_t now);

/* At the end of the run: the row of the step it ends in, and one of the
 * state at the end. */
void cupace_dispatcher_finish(struct cupace_dispatcher *d);

/* The stall rule (see above), as of the last question to the controller. */
int cupace_dispatcher_stalled(const struct cupace_dispatcher *d);

#endif
