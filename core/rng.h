/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * rng.h -- deterministic random streams and the duration distributions.
 *
 * Every partition draws from its own stream keyed by (seed, job, partition),
 * and job arrivals from one stream keyed by the seed alone (DESIGN §4), so
 * every controller in an A/B run sees the same work.  xoshiro256** seeded by
 * splitmix64; no global state.
 */
#ifndef CUPACE_RNG_H
#define CUPACE_RNG_H

#include <stdint.h>

#include "conf.h"

struct cupace_rng {
    uint64_t s[4];
    double spare;           /* Box-Muller's second normal, if has_spare */
    int has_spare;
};

/* A stream keyed by (seed, a, b). */
void cupace_rng_seed(struct cupace_rng *r, uint64_t seed, uint64_t a, uint64_t b);
uint64_t cupace_rng_next(struct cupace_rng *r);
/* Uniform in [0, 1), 53 bits. */
double cupace_rng_uniform(struct cupace_rng *r);
/* Standard normal (Box-Muller: one log and one sincos per two draws). */
double cupace_rng_normal(struct cupace_rng *r);
/* Gamma with the given shape and scale 1 (Marsaglia-Tsang). */
double cupace_rng_gamma(struct cupace_rng *r, double shape);

/* A duration multiplier with mean 1 and coefficient of variation cv for the
 * distribution d: lognormal sigma^2 = ln(1+cv^2), mu = -sigma^2/2; gamma of
 * shape 1/cv^2 scaled by cv^2; exponential ignores cv; fixed (or cv = 0) is 1.
 * The parameters are worked out once (cupace_mult_init), not per draw. */
struct cupace_mult {
    enum cupace_dist dist;
    double cv, sigma, half_s2, shape;
};

void cupace_mult_init(struct cupace_mult *m, enum cupace_dist d, double cv);
double cupace_mult_draw(const struct cupace_mult *m, struct cupace_rng *r);

#endif
