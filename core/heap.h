/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * heap.h -- the simulator's event queue: a binary min-heap of events keyed on
 * (time, sequence number).
 *
 * The sequence number is assigned at push, so events at the same instant
 * come out in the order they were scheduled (DESIGN §4).  Events are stored
 * by value in one array that grows by doubling: nothing allocates per event.
 * Cancelling is done by the caller with generation numbers (a stale event is
 * popped and ignored), which costs one extra pop instead of an O(log n)
 * removal with back-pointers.
 */
#ifndef CUPACE_HEAP_H
#define CUPACE_HEAP_H

#include <stddef.h>
#include <stdint.h>

struct cupace_event {
    uint64_t time;
    uint64_t seq;
    uint32_t type;
    uint32_t arg;
    uint64_t gen;
};

struct cupace_heap {
    struct cupace_event *ev;
    size_t n, cap;
    uint64_t next_seq;
};

void cupace_heap_init(struct cupace_heap *h);
void cupace_heap_free(struct cupace_heap *h);
/* Returns 0, or -1 when out of memory (nothing is changed). */
int cupace_heap_push(struct cupace_heap *h, uint64_t time, uint32_t type, uint32_t arg, uint64_t gen);
/* Pops the earliest event into *out; returns 0, or -1 when empty. */
int cupace_heap_pop(struct cupace_heap *h, struct cupace_event *out);

static inline size_t cupace_heap_size(const struct cupace_heap *h)
{
    return h->n;
}

#endif
