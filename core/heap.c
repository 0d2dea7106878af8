/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * heap.c -- binary min-heap on (time, seq).  See heap.h.
 */
#include "config.h"
#include "heap.h"
#include "grow.h"

#include <stdlib.h>

static inline int before(const struct cupace_event *a, const struct cupace_event *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

void cupace_heap_init(struct cupace_heap *h)
{
    h->ev = NULL;
    h->n = h->cap = 0;
    h->next_seq = 0;
}

void cupace_heap_free(struct cupace_heap *h)
{
    free(h->ev);
    cupace_heap_init(h);
}

int cupace_heap_push(struct cupace_heap *h, uint64_t time, uint32_t type, uint32_t arg, uint64_t gen)
{
    struct cupace_event e = { time, h->next_seq, type, arg, gen };
    size_t i;

    if (h->n == h->cap) {
        struct cupace_event *ev = cupace_grow(h->ev, &h->cap, sizeof *ev, 256);
        if (!ev)
            return -1;
        h->ev = ev;
    }
    h->next_seq++;
    i = h->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before(&e, &h->ev[parent]))
            break;
        h->ev[i] = h->ev[parent];
        i = parent;
    }
    h->ev[i] = e;
    return 0;
}

int cupace_heap_pop(struct cupace_heap *h, struct cupace_event *out)
{
    struct cupace_event last;
    size_t i = 0;

    if (h->n == 0)
        return -1;
    *out = h->ev[0];
    last = h->ev[--h->n];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= h->n)
            break;
        if (child + 1 < h->n && before(&h->ev[child + 1], &h->ev[child]))
            child++;
        if (!before(&h->ev[child], &last))
            break;
        h->ev[i] = h->ev[child];
        i = child;
    }
    if (h->n)
        h->ev[i] = last;
    return 0;
}
