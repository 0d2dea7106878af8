/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stats.c -- Student's t and the 95% interval of a mean (see stats.h).
 */
#include "config.h"
#include "stats.h"

#include <math.h>

/* t(0.975, df) for df = 1..30, to four decimals. */
static const double t_table[30] = {
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
    2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
    2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
};

double cupace_t975(size_t df)
{
    const double z = 1.959963985;    /* the normal's 0.975 quantile */
    double z2 = z * z, d = (double)df;
    double g1, g2, g3, g4;

    if (df == 0)
        return NAN;
    if (df <= 30)
        return t_table[df - 1];
    /* Cornish-Fisher expansion of t in powers of 1/df (Abramowitz & Stegun 26.7.5) */
    g1 = z * (z2 + 1) / 4;
    g2 = z * ((5 * z2 + 16) * z2 + 3) / 96;
    g3 = z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / 384;
    g4 = z * ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) / 92160;
    return z + g1 / d + g2 / (d * d) + g3 / (d * d * d) + g4 / (d * d * d * d);
}

struct cupace_ci cupace_ci95(const double *v, size_t n)
{
    struct cupace_ci ci = { NAN, NAN, NAN, 0 };
    double sum = 0, ss = 0, half;

    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i])) {
            sum += v[i];
            ci.n++;
        }
    if (ci.n == 0)
        return ci;
    ci.mean = sum / (double)ci.n;
    if (ci.n < 2)
        return ci;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            ss += (v[i] - ci.mean) * (v[i] - ci.mean);
    half = cupace_t975(ci.n - 1) * sqrt(ss / (double)(ci.n - 1) / (double)ci.n);
    ci.lo = ci.mean - half;
    ci.hi = ci.mean + half;
    return ci;
}
