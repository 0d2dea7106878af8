/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * units.c -- strict parsers for numbers with units.
 *
 * The mantissa is parsed as a decimal (digits, optional fraction); the unit
 * multiplies it.  Scaling is done in long double and range-checked before the
 * conversion, so "20000000000h" is refused instead of wrapping.
 */
#include "config.h"
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct unit {
    const char *name;
    long double scale;
};

static const struct unit duration_units[] = {
    { "ns", 1.0L }, { "us", 1e3L }, { "ms", 1e6L }, { "s", 1e9L },
    { "m", 60e9L }, { "h", 3600e9L }, { NULL, 0 }
};

static const struct unit size_units[] = {
    { "B", 1.0L }, { "KiB", 1024.0L }, { "MiB", 1048576.0L },
    { "GiB", 1073741824.0L }, { "TiB", 1099511627776.0L }, { NULL, 0 }
};

/* Splits "  12.5 ms " into 12.5 and "ms".  Returns -1 if there is no
 * non-negative decimal mantissa. */
static int split_number(const char *s, long double *num, const char **unit)
{
    const char *p = s;
    char *end;

    while (isspace((unsigned char)*p))
        p++;
    if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1])))
        return -1;
    errno = 0;
    *num = strtold(p, &end);
    if (errno || end == p || !isfinite(*num) || *num < 0)
        return -1;
    /* strtold would accept hex floats and exponents; we do not. */
    for (const char *q = p; q < end; q++)
        if (!isdigit((unsigned char)*q) && *q != '.')
            return -1;
    while (isspace((unsigned char)*end))
        end++;
    *unit = end;
    return 0;
}

static int trailing_blank(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    return *s == '\0';
}

/* What a well-formed duration or size past 64 bits is refused with: the
 * limit, which is what the user needs to know. */
static const char too_long[] = "a duration below 2^64 ns (about 5124095h)";
static const char too_big[] = "a size below 2^64 bytes (16777216TiB)";

int cupace_too_large(const char *why)
{
    return why == too_long || why == too_big;
}

static int parse_with_units(const char *s, const struct unit *units, uint64_t *out,
                            const char **why, const char *expected)
{
    long double num, v;
    const char *u;
    size_t ulen = 0;

    *why = expected;
    if (!s || split_number(s, &num, &u) < 0)
        return -1;
    while (u[ulen] && !isspace((unsigned char)u[ulen]))
        ulen++;
    if (!trailing_blank(u + ulen))
        return -1;
    if (ulen == 0) {
        if (num != 0)
            return -1;          /* a bare number: the unit is required */
        *out = 0;
        return 0;
    }
    for (const struct unit *x = units; x->name; x++) {
        if (strlen(x->name) != ulen || strncmp(u, x->name, ulen) != 0)
            continue;
        v = num * x->scale;
        /* a byte is the least there is: 1.5B is a typo, not 2 bytes */
        if (units == size_units && x->scale == 1.0L && v != floorl(v)) {
            *why = "a whole number of bytes (or a larger unit: 1.5KiB)";
            return -1;
        }
        if (v >= 18446744073709551615.0L) {
            *why = units == size_units ? too_big : too_long;
            return -1;
        }
        /* roundl, not v + 0.5: near 2^64 the sum needs a 65th bit and
         * rounds an odd integer up by one */
        *out = (uint64_t)roundl(v);
        return 0;
    }
    return -1;
}

int cupace_parse_duration(const char *s, uint64_t *out, const char **why)
{
    return parse_with_units(s, duration_units, out, why,
                            "a duration with a unit (ns us ms s m h), the number in plain "
                            "decimals (no exponent), e.g. 250ms");
}

int cupace_parse_size(const char *s, uint64_t *out, const char **why)
{
    return parse_with_units(s, size_units, out, why,
                            "a size with a unit (B KiB MiB GiB TiB), the number in plain "
                            "decimals (no exponent), e.g. 14GiB");
}

int cupace_parse_u64(const char *s, uint64_t *out, const char **why)
{
    const char *p = s;
    uint64_t v = 0;

    *why = "a non-negative integer";
    if (!s)
        return -1;
    while (isspace((unsigned char)*p))
        p++;
    if (!isdigit((unsigned char)*p))
        return -1;
    for (; isdigit((unsigned char)*p); p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) {
            *why = "an integer that fits in 64 bits";
            return -1;
        }
        v = v * 10 + d;
    }
    if (!trailing_blank(p))
        return -1;
    *out = v;
    return 0;
}

int cupace_parse_f64(const char *s, double *out, const char **why)
{
    char *end;
    double v;

    *why = "a finite number";
    if (!s)
        return -1;
    errno = 0;
    v = strtod(s, &end);
    if (end == s || errno || !isfinite(v) || !trailing_blank(end))
        return -1;
    for (const char *q = s; q < end; q++)      /* no hex, no inf/nan spelled out */
        if (isalpha((unsigned char)*q) && *q != 'e' && *q != 'E')
            return -1;
    *out = v;
    return 0;
}

int cupace_parse_bool(const char *s, int *out, const char **why)
{
    static const char *const yes[] = { "yes", "true", "on", "1" };
    static const char *const no[] = { "no", "false", "off", "0" };
    char word[8];
    size_t n = 0;

    *why = "yes/no, true/false, on/off or 1/0";
    if (!s)
        return -1;
    while (isspace((unsigned char)*s))
        s++;
    while (s[n] && !isspace((unsigned char)s[n]) && n < sizeof word - 1) {
        word[n] = s[n];
        n++;
    }
    word[n] = '\0';
    if (!trailing_blank(s + n))
        return -1;
    for (unsigned i = 0; i < 4; i++) {
        if (strcasecmp(word, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (strcasecmp(word, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    return -1;
}

int cupace_is_identifier(const char *s)
{
    size_t n = 0;

    if (!s || !*s)
        return 0;
    for (; *s; s++, n++)
        if (n >= CUPACE_NAME_MAX || (!isalnum((unsigned char)*s) && *s != '_' && *s != '-'))
            return 0;
    return 1;
}

int cupace_is_sql_name(const char *s, size_t max)
{
    size_t n = s ? strlen(s) : 0;

    if (n == 0 || n > max || isdigit((unsigned char)s[0]))
        return 0;
    for (; *s; s++)
        if (!(*s >= 'a' && *s <= 'z') && !isdigit((unsigned char)*s) && *s != '_')
            return 0;
    return 1;
}

int cupace_parse_hostport(const char *s, char *host, size_t hostlen, unsigned *port)
{
    const char *h = s, *he, *colon;
    char *end;
    unsigned long p;

    if (s[0] == '[') {                 /* [v6 address]:port */
        he = strchr(s, ']');
        if (!he || he[1] != ':')
            return -1;
        h = s + 1;
        colon = he + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon || memchr(s, ':', (size_t)(colon - s)))
            return -1;                 /* a bare v6 address needs its brackets */
        he = colon;
    }
    if (he == h || (size_t)(he - h) >= hostlen || colon[1] < '0' || colon[1] > '9')
        return -1;
    errno = 0;
    p = strtoul(colon + 1, &end, 10);
    if (*end || errno || p > 65535)
        return -1;
    memcpy(host, h, (size_t)(he - h));
    host[he - h] = '\0';
    *port = (unsigned)p;
    return 0;
}

/* The unit is chosen on the value as it will be rounded, so that %g never
 * writes an exponent ("1e+03us" for 999999 ns): the parser refuses those,
 * and what a message prints should read back in a config. */
void cupace_format_duration(uint64_t ns, char *buf, unsigned len)
{
    double s = (double)ns / 1e9;

    if (ns == 0)
        snprintf(buf, len, "0");
    else if (ns < 999500)
        snprintf(buf, len, "%.3gus", (double)ns / 1e3);
    else if (ns < 999500000)
        snprintf(buf, len, "%.3gms", (double)ns / 1e6);
    else if (s < 9999.5)
        snprintf(buf, len, "%.4gs", s);
    else {
        /* whole seconds, rounded down where rounding up would pass 2^64 ns
         * (18446744073.705 s would print as 18446744074s, which no parser
         * takes back) */
        double r = round(s);
        if (r * 1e9 >= 18446744073709551615.0)
            r = floor(s);
        snprintf(buf, len, "%.0fs", r);
    }
}

void cupace_format_size(uint64_t bytes, char *buf, unsigned len)
{
    static const char *const names[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    double v = (double)bytes;
    unsigned i = 0;

    while (v >= 1024.0 && i < 4) {
        v /= 1024.0;
        i++;
    }
    /* one decimal, rounded down where rounding up would reach 2^64 bytes
     * (2^64 - 5 B would print as 16777216.0TiB, which no parser takes
     * back); the double of a count that close to 2^64 is 2^64 itself */
    if (i && ldexp(round(v * 10) / 10, 10 * (int)i) >= 18446744073709551615.0) {
        v = floor(v * 10) / 10;
        if (ldexp(v, 10 * (int)i) >= 18446744073709551615.0)
            v -= 0.1;
    }
    snprintf(buf, len, i ? "%.1f%s" : "%.0f%s", v, names[i]);
}

uint64_t cupace_scale_ns(uint64_t ns, double f)
{
    return cupace_ns_from_double((double)ns * f);
}
