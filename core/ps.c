/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * ps.c -- processor sharing as virtual time and a min-heap of finish tags.
 */
#include "config.h"
#include "ps.h"
#include "checked.h"

#include <math.h>
#include <stdlib.h>

static double rate(const struct cupace_ps *ps)
{
    return ps->n <= ps->slots ? 1.0 : (double)ps->slots / (double)ps->n;
}

static void advance(struct cupace_ps *ps, uint64_t now)
{
    if (now > ps->last_ns) {
        ps->vtime += (double)(now - ps->last_ns) * rate(ps);
        ps->last_ns = now;
    }
}

int cupace_ps_init(struct cupace_ps *ps, uint32_t slots, size_t capacity)
{
    ps->vtime = 0;
    ps->last_ns = 0;
    ps->slots = slots ? slots : 1;
    ps->n = 0;
    ps->cap = capacity ? capacity : 1;
    ps->heap = malloc(ps->cap * sizeof *ps->heap);
    return ps->heap ? 0 : -1;
}

void cupace_ps_free(struct cupace_ps *ps)
{
    free(ps->heap);
    ps->heap = NULL;
    ps->n = ps->cap = 0;
}

int cupace_ps_add(struct cupace_ps *ps, uint64_t now, uint32_t id, uint64_t work_ns)
{
    struct cupace_ps_item it;
    size_t i;

    if (ps->n == ps->cap)
        return -1;
    advance(ps, now);
    it.tag = ps->vtime + (double)work_ns;
    it.id = id;
    i = ps->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (ps->heap[parent].tag <= it.tag)
            break;
        ps->heap[i] = ps->heap[parent];
        i = parent;
    }
    ps->heap[i] = it;
    return 0;
}

uint64_t cupace_ps_next(struct cupace_ps *ps, uint64_t now)
{
    double left;

    if (ps->n == 0)
        return UINT64_MAX;
    advance(ps, now);
    left = ps->heap[0].tag - ps->vtime;
    if (left <= 0)
        return now;
    return cupace_time_after(now, cupace_ns_from_double(ceil(left / rate(ps))));
}

static uint32_t pop_min(struct cupace_ps *ps)
{
    uint32_t id = ps->heap[0].id;
    struct cupace_ps_item last = ps->heap[--ps->n];
    size_t i = 0;

    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= ps->n)
            break;
        if (child + 1 < ps->n && ps->heap[child + 1].tag < ps->heap[child].tag)
            child++;
        if (ps->heap[child].tag >= last.tag)
            break;
        ps->heap[i] = ps->heap[child];
        i = child;
    }
    if (ps->n)
        ps->heap[i] = last;
    return id;
}

uint32_t cupace_ps_pop(struct cupace_ps *ps, uint64_t now)
{
    double tag;

    advance(ps, now);
    tag = ps->heap[0].tag;
    if (ps->vtime < tag)        /* rounding: the scheduled finish is the truth */
        ps->vtime = tag;
    return pop_min(ps);
}

int cupace_ps_pop_due(struct cupace_ps *ps, uint64_t now, uint32_t *id)
{
    advance(ps, now);
    if (ps->n == 0 || ps->heap[0].tag > ps->vtime + 0.5)
        return -1;
    *id = pop_min(ps);
    return 0;
}
