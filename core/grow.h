/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * grow.h -- arrays that grow by doubling.
 *
 * The event heap, the report's time series and the real-time event log all
 * append to an array whose capacity doubles when it is full; this is the
 * one place that does the arithmetic, overflow included.
 */
#ifndef CUPACE_GROW_H
#define CUPACE_GROW_H

#include <stddef.h>

/* Reallocates `items` (of *cap elements of `elem` bytes, all in use) to
 * twice its capacity, or to `first` elements when it has none, and updates
 * *cap.  Returns the new array, or NULL when out of memory or when the size
 * would overflow; then `items` and *cap are unchanged. */
void *cupace_grow(void *items, size_t *cap, size_t elem, size_t first);

/* For arrays that grow together to one capacity (a pipeline's per-job and
 * per-partition arrays): CAP (1 when 0) doubled until it holds WANT, at
 * most MAX; WANT itself when doubling would pass MAX.  WANT <= MAX. */
size_t cupace_grow_cap(size_t cap, size_t want, size_t max);

#endif
