/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * mont.h -- Montgomery multiplication over the 64-bit prime field
 * p = 2^64 - 2^32 + 1, shared by the device kernel (cuda_runtime.cu) and
 * its CPU reference (cuda_stages.c, the test double): one definition, so
 * that the reference is the kernel's own arithmetic, not a second copy.
 *
 * The work unit is one "step" of an element: x <- mont(x, x) + c mod p.
 * A chain of steps cannot be shortened by a compiler or a cache, so a
 * kernel's time grows linearly with its steps, which the calibration
 * measures per device.
 */
#ifndef CUPACE_MONT_H
#define CUPACE_MONT_H

#include <stdint.h>

#ifdef __CUDACC__
#define CUPACE_HD __host__ __device__ static inline
#else
#define CUPACE_HD static inline
#endif

#define CUPACE_MONT_P 0xffffffff00000001ULL
/* -p^-1 mod 2^64 */
#define CUPACE_MONT_PINV 0xfffffffeffffffffULL

CUPACE_HD uint64_t cupace_mulhi(uint64_t a, uint64_t b)
{
#ifdef __CUDA_ARCH__
    return __umul64hi(a, b);
#else
    __extension__ typedef unsigned __int128 u128;
    return (uint64_t)(((u128)a * b) >> 64);
#endif
}

/* a*b*2^-64 mod p, for a, b < p. */
CUPACE_HD uint64_t cupace_mont_mul(uint64_t a, uint64_t b)
{
    uint64_t tlo = a * b, thi = cupace_mulhi(a, b);
    uint64_t m = tlo * CUPACE_MONT_PINV;
    uint64_t mlo = m * CUPACE_MONT_P, mhi = cupace_mulhi(m, CUPACE_MONT_P);
    uint64_t lo = tlo + mlo;
    uint64_t carry = lo < tlo;          /* lo is 0 by construction; only its carry matters */
    uint64_t hi = thi + mhi;
    uint64_t over = hi < thi;
    uint64_t r = hi + carry;

    over |= r < hi;
    if (over || r >= CUPACE_MONT_P)
        r -= CUPACE_MONT_P;
    return r;
}

/* One element's chain of `steps` from x (x < p), with constant c < p. */
CUPACE_HD uint64_t cupace_mont_chain(uint64_t x, uint64_t c, uint64_t steps)
{
    for (uint64_t s = 0; s < steps; s++) {
        x = cupace_mont_mul(x, x) + c;
        if (x < c || x >= CUPACE_MONT_P)
            x -= CUPACE_MONT_P;
    }
    return x;
}

/* The input of element i of a partition (job, index): a field element. */
CUPACE_HD uint64_t cupace_mont_input(uint64_t seed, uint64_t i)
{
    uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ULL;

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return z % CUPACE_MONT_P;
}

/* The constant of element i. */
CUPACE_HD uint64_t cupace_mont_const(uint64_t i)
{
    return (i * 2 + 1) % CUPACE_MONT_P;
}

#endif
