/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * rng.c -- xoshiro256** streams and the distributions of durations.
 */
#include "config.h"
#include "rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void cupace_rng_seed(struct cupace_rng *r, uint64_t seed, uint64_t a, uint64_t b)
{
    uint64_t x = seed;
    uint64_t k = splitmix64(&x);

    x = k ^ (a * 0xD1B54A32D192ED03ULL);
    k = splitmix64(&x);
    x = k ^ (b * 0xAEF17502108EF2D9ULL);
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
    if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3]))
        r->s[0] = 1;
    r->has_spare = 0;
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t cupace_rng_next(struct cupace_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double cupace_rng_uniform(struct cupace_rng *r)
{
    return (double)(cupace_rng_next(r) >> 11) * 0x1.0p-53;
}

double cupace_rng_normal(struct cupace_rng *r)
{
    double u1, u2, radius, angle;

    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    u1 = 1.0 - cupace_rng_uniform(r);     /* (0, 1]: log is finite */
    u2 = cupace_rng_uniform(r);
    radius = sqrt(-2.0 * log(u1));
    /* the pair's two normals are independent: keep the second for the next
     * draw of this stream (a partition draws up to four) */
    angle = 2.0 * M_PI * u2;
    r->spare = radius * sin(angle);     /* compilers fuse sin and cos into sincos */
    r->has_spare = 1;
    return radius * cos(angle);
}

double cupace_rng_gamma(struct cupace_rng *r, double shape)
{
    double d, c;

    if (shape < 1.0) {
        /* boost: Gamma(a) = Gamma(a + 1) * U^(1/a) */
        double u = 1.0 - cupace_rng_uniform(r);
        return cupace_rng_gamma(r, shape + 1.0) * pow(u, 1.0 / shape);
    }
    d = shape - 1.0 / 3.0;
    c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x, v, u;
        do {
            x = cupace_rng_normal(r);
            v = 1.0 + c * x;
        } while (v <= 0);
        v = v * v * v;
        u = cupace_rng_uniform(r);
        if (u < 1.0 - 0.0331 * x * x * x * x)
            return d * v;
        if (log(u) < 0.5 * x * x + d * (1.0 - v + log(v)))
            return d * v;
    }
}

void cupace_mult_init(struct cupace_mult *m, enum cupace_dist d, double cv)
{
    double s2 = cv > 0 ? log(1.0 + cv * cv) : 0.0;

    m->dist = d;
    m->cv = cv;
    m->sigma = sqrt(s2);
    m->half_s2 = s2 / 2.0;
    m->shape = cv > 0 ? 1.0 / (cv * cv) : 0.0;
}

double cupace_mult_draw(const struct cupace_mult *m, struct cupace_rng *r)
{
    switch (m->dist) {
    case CUPACE_DIST_EXPONENTIAL:
        return -log(1.0 - cupace_rng_uniform(r));
    case CUPACE_DIST_LOGNORMAL:
        if (m->cv > 0)
            return exp(m->sigma * cupace_rng_normal(r) - m->half_s2);
        return 1.0;
    case CUPACE_DIST_GAMMA:
        if (m->cv > 0)
            return cupace_rng_gamma(r, m->shape) * m->cv * m->cv;
        return 1.0;
    case CUPACE_DIST_FIXED:
        break;
    }
    return 1.0;
}
