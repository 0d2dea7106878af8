/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stats.h -- the statistics of a many-seed A/B: Student's t quantile and the
 * mean of a sample with its 95% confidence interval.
 *
 * A/B runs pair seeds across controllers (common random numbers), so the
 * per-seed ratio controller/baseline removes most of the seed-to-seed
 * spread, and the interval over those ratios is narrow where a difference
 * is real.  Pure functions, no state.
 */
#ifndef CUPACE_STATS_H
#define CUPACE_STATS_H

#include <stddef.h>

/* A sample's mean with its two-sided 95% interval; lo and hi are NAN when
 * fewer than two finite values were given (no spread to measure). */
struct cupace_ci {
    double mean, lo, hi;
    size_t n;                        /* finite values used */
};

/* The 0.975 quantile of Student's t with df degrees of freedom (df >= 1):
 * a table to 30, a Cornish-Fisher expansion beyond (error < 1e-4). */
double cupace_t975(size_t df);

/* Mean and 95% interval of the finite values among v[0..n) (NANs and
 * infinities, e.g. a ratio over a zero, are left out). */
struct cupace_ci cupace_ci95(const double *v, size_t n);

#endif
