/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * grow.c -- arrays that grow by doubling.  See grow.h.
 */
#include "config.h"
#include "grow.h"

#include <stdint.h>
#include <stdlib.h>

size_t cupace_grow_cap(size_t cap, size_t want, size_t max)
{
    if (cap == 0)
        cap = 1;
    while (cap < want)
        cap = cap > max / 2 ? max : cap * 2;
    return cap;
}

void *cupace_grow(void *items, size_t *cap, size_t elem, size_t first)
{
    size_t n = *cap ? *cap : first / 2;
    void *more;

    if (elem == 0 || n > SIZE_MAX / 2 / elem)
        return NULL;
    more = realloc(items, 2 * n * elem);
    if (more)
        *cap = 2 * n;
    return more;
}
