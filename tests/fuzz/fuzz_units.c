/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz_units.c -- libFuzzer harness: the value parsers of units.h.
 *
 * The input is one value as written in a config.  Every parser gets it, and
 * the answers are checked against each other:
 *   - a refusal leaves *out as it was and says what was expected;
 *   - an integer N that parses is the same N as a duration "Nns" and a
 *     size "NB", and the same number, to double precision, as a float;
 *   - a duration or size that parses can be printed by the report's
 *     formatters and read back, to the formatters' precision.
 */
#include "config.h"
#include "fuzz.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

#define SENTINEL 0x5eed5eed5eed5eedULL

typedef int (*parse_u64_fn)(const char *s, uint64_t *out, const char **why);

/* Parses s with f; checks the failure contract; returns 0 and *out, or -1. */
static int parse_checked(parse_u64_fn f, const char *s, uint64_t *out)
{
    const char *why = NULL;
    uint64_t v = SENTINEL;

    if (f(s, &v, &why) == 0) {
        *out = v;
        return 0;
    }
    FUZZ_REQUIRE(v == SENTINEL, "'%s': refused, but *out changed to %llu", s,
                 (unsigned long long)v);
    FUZZ_REQUIRE(why && *why, "'%s': refused without saying why", s);
    return -1;
}

/* The integer n, written with a unit suffix, reads back as n. */
static void check_suffixed(parse_u64_fn f, const char *digits, const char *unit, uint64_t n)
{
    char buf[128];
    uint64_t v;

    if (n == UINT64_MAX || strlen(digits) > 64)
        return;                          /* 2^64-1 is refused as a duration and a size */
    snprintf(buf, sizeof buf, "%s%s", digits, unit);
    FUZZ_REQUIRE(parse_checked(f, buf, &v) == 0 && v == n, "'%s' is not %llu", buf,
                 (unsigned long long)n);
}

static void check_integer(const char *s)
{
    uint64_t n;
    double d = 0;
    const char *why;

    if (parse_checked(cupace_parse_u64, s, &n) < 0)
        return;
    FUZZ_REQUIRE(cupace_parse_f64(s, &d, &why) == 0 && fabs(d - (double)n) <= (double)n * 0x1p-52,
                 "'%s': integer %llu, float %.17g", s, (unsigned long long)n, d);
    check_suffixed(cupace_parse_duration, s, "ns", n);
    check_suffixed(cupace_parse_size, s, "B", n);
}

/* What the report prints for v reads back as about v. */
static void check_formatted(parse_u64_fn f, void (*format)(uint64_t, char *, unsigned), uint64_t v,
                            double rel)
{
    char buf[64];
    uint64_t back;

    format(v, buf, sizeof buf);
    FUZZ_REQUIRE(parse_checked(f, buf, &back) == 0, "%llu is printed as '%s', which is refused",
                 (unsigned long long)v, buf);
    FUZZ_REQUIRE(fabs((double)back - (double)v) <= rel * (double)v + 1,
                 "%llu is printed as '%s', which reads as %llu", (unsigned long long)v, buf,
                 (unsigned long long)back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    uint64_t v;
    double d = 1.25;
    int b = 7;
    const char *why = NULL;

    check_integer(s);
    if (parse_checked(cupace_parse_duration, s, &v) == 0)
        check_formatted(cupace_parse_duration, cupace_format_duration, v, 5e-3);
    if (parse_checked(cupace_parse_size, s, &v) == 0)
        check_formatted(cupace_parse_size, cupace_format_size, v, 5e-2);
    if (cupace_parse_f64(s, &d, &why) == 0)
        FUZZ_REQUIRE(isfinite(d), "'%s' parses as %g", s, d);
    else
        FUZZ_REQUIRE(d == 1.25 && why, "'%s': refused, but *out changed", s);
    if (cupace_parse_bool(s, &b, &why) == 0)
        FUZZ_REQUIRE(b == 0 || b == 1, "'%s' is the boolean %d", s, b);
    else
        FUZZ_REQUIRE(b == 7 && why, "'%s': refused, but *out changed", s);
    (void)cupace_is_identifier(s);
    free(s);
    return 0;
}
