/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * checked.h -- time and size arithmetic that cannot wrap.
 *
 * Every time in cupace is nanoseconds in a uint64_t and every size is bytes.
 * A wrapped sum is the worst kind of bug here: the report looks valid and
 * is wrong (a 5000000h synthesis once reported a makespan of 3.8 s).  So:
 *
 *  - the horizon: virtual time runs from 0 to CUPACE_HORIZON_NS (2^62 ns,
 *    about 146 years).  The loader refuses a workload whose worst case, by
 *    its configured durations, could pass it (conf.c), so that a time below
 *    the horizon plus a duration below it never leaves int64_t;
 *  - durations computed from doubles (draws, speeds, contention, time_scale)
 *    go through cupace_ns_from_double, which is exact below the horizon and
 *    says "beyond" (CUPACE_BEYOND_NS) above it, never wrapping and never
 *    converting an out-of-range double (undefined behaviour in C);
 *  - sums and products use the compiler's overflow builtins: saturating
 *    where saturation is the meaning (a deadline of "never", as with
 *    CUPACE_PACE_HOLD), checked where the caller must refuse.
 */
#ifndef CUPACE_CHECKED_H
#define CUPACE_CHECKED_H

#include <math.h>
#include <stdint.h>

#define CUPACE_HORIZON_NS (UINT64_C(1) << 62)
/* A duration or time past the horizon: the run cannot reach it. */
#define CUPACE_BEYOND_NS (CUPACE_HORIZON_NS + 1)

/* a + b, or UINT64_MAX ("never") instead of wrapping. */
static inline uint64_t cupace_sat_add(uint64_t a, uint64_t b)
{
    uint64_t r;

    return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* a * b, or UINT64_MAX instead of wrapping. */
static inline uint64_t cupace_sat_mul(uint64_t a, uint64_t b)
{
    uint64_t r;

    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* *out = a + b; returns nonzero (and leaves *out unspecified) on overflow. */
static inline int cupace_add_overflows(uint64_t a, uint64_t b, uint64_t *out)
{
    return __builtin_add_overflow(a, b, out);
}

static inline int cupace_mul_overflows(uint64_t a, uint64_t b, uint64_t *out)
{
    return __builtin_mul_overflow(a, b, out);
}

/* Nanoseconds from a double: rounded; 0 for a negative or NaN; exact up
 * to the horizon, CUPACE_BEYOND_NS above it. */
static inline uint64_t cupace_ns_from_double(double v)
{
    if (!(v > 0))
        return 0;
    if (v >= (double)CUPACE_HORIZON_NS)
        return v == (double)CUPACE_HORIZON_NS ? CUPACE_HORIZON_NS : CUPACE_BEYOND_NS;
    return (uint64_t)llround(v);
}

/* A time after a duration, where both may be past the horizon: the sum,
 * or CUPACE_BEYOND_NS once it passes the horizon.  Never wraps. */
static inline uint64_t cupace_time_after(uint64_t now, uint64_t d)
{
    uint64_t t;

    if (__builtin_add_overflow(now, d, &t) || t > CUPACE_HORIZON_NS)
        return CUPACE_BEYOND_NS;
    return t;
}

#endif
