/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * ps.h -- processor sharing over a number of CPU slots.
 *
 * n syntheses on `slots` slots each progress at min(1, slots/n) of full
 * speed.  Kept as virtual time: V advances at that rate, and a synthesis
 * added at V with `work` ns of full-speed work finishes when V reaches
 * V + work (its tag).  The earliest tag finishes first whatever n does, so
 * a min-heap of tags gives the next completion.  No clock: the caller passes
 * `now`, so the simulator and the real-time engine share this code.
 */
#ifndef CUPACE_PS_H
#define CUPACE_PS_H

#include <stddef.h>
#include <stdint.h>

struct cupace_ps_item {
    double tag;
    uint32_t id;
};

struct cupace_ps {
    double vtime;
    uint64_t last_ns;
    uint32_t slots;
    struct cupace_ps_item *heap;
    size_t n, cap;
};

int cupace_ps_init(struct cupace_ps *ps, uint32_t slots, size_t capacity);
void cupace_ps_free(struct cupace_ps *ps);
/* Starts `id` with `work_ns` of full-speed work at now.  0, or -1 when full. */
int cupace_ps_add(struct cupace_ps *ps, uint64_t now, uint32_t id, uint64_t work_ns);
/* When the earliest synthesis finishes if nothing changes (UINT64_MAX: none). */
uint64_t cupace_ps_next(struct cupace_ps *ps, uint64_t now);
/* Removes the earliest synthesis (the one cupace_ps_next named) at now. */
uint32_t cupace_ps_pop(struct cupace_ps *ps, uint64_t now);
/* Another synthesis whose tag is reached at now, for ties: 0 and *id, or -1. */
int cupace_ps_pop_due(struct cupace_ps *ps, uint64_t now, uint32_t *id);

#endif
