/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* check_units.c -- the parsers of durations, sizes, numbers and booleans. */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "units.h"
#include "error.h"
#include "grow.h"
#include "stats.h"

#include <math.h>

START_TEST(durations_take_every_unit)
{
    uint64_t v;
    const char *why;

    ck_assert_int_eq(cupace_parse_duration("250ms", &v, &why), 0);
    ck_assert_uint_eq(v, 250000000ULL);
    ck_assert_int_eq(cupace_parse_duration("3s", &v, &why), 0);
    ck_assert_uint_eq(v, 3000000000ULL);
    ck_assert_int_eq(cupace_parse_duration("0.8s", &v, &why), 0);
    ck_assert_uint_eq(v, 800000000ULL);
    ck_assert_int_eq(cupace_parse_duration("15m", &v, &why), 0);
    ck_assert_uint_eq(v, 900000000000ULL);
    ck_assert_int_eq(cupace_parse_duration("2h", &v, &why), 0);
    ck_assert_uint_eq(v, 7200000000000ULL);
    ck_assert_int_eq(cupace_parse_duration("7us", &v, &why), 0);
    ck_assert_uint_eq(v, 7000ULL);
    ck_assert_int_eq(cupace_parse_duration(" 12 ns ", &v, &why), 0);
    ck_assert_uint_eq(v, 12ULL);
}
END_TEST

START_TEST(durations_need_a_unit_except_zero)
{
    uint64_t v = 99;
    const char *why = NULL;

    ck_assert_int_eq(cupace_parse_duration("30", &v, &why), -1);
    ck_assert_ptr_nonnull(why);
    ck_assert_uint_eq(v, 99);
    ck_assert_int_eq(cupace_parse_duration("0", &v, &why), 0);
    ck_assert_uint_eq(v, 0);
    ck_assert_int_eq(cupace_parse_duration("-1s", &v, &why), -1);
    ck_assert_int_eq(cupace_parse_duration("1x", &v, &why), -1);
    ck_assert_int_eq(cupace_parse_duration("1s2", &v, &why), -1);
    ck_assert_int_eq(cupace_parse_duration("0x10s", &v, &why), -1);
    ck_assert_int_eq(cupace_parse_duration("1e3s", &v, &why), -1);
    ck_assert_int_eq(cupace_parse_duration("", &v, &why), -1);
}
END_TEST

START_TEST(overflow_is_refused)
{
    uint64_t v;
    const char *why;

    ck_assert_int_eq(cupace_parse_duration("20000000000h", &v, &why), -1);
    ck_assert_msg(cupace_too_large(why) && strstr(why, "2^64 ns"), "%s", why);
    ck_assert_int_eq(cupace_parse_size("99999999TiB", &v, &why), -1);
    ck_assert_msg(cupace_too_large(why) && strstr(why, "16777216TiB"), "%s", why);
    /* too large is told apart from malformed */
    ck_assert_int_eq(cupace_parse_size("99999999TB", &v, &why), -1);
    ck_assert(!cupace_too_large(why));
    ck_assert_int_eq(cupace_parse_u64("18446744073709551616", &v, &why), -1);
    /* found by fuzz_units: large odd integers came out one too high */
    ck_assert_int_eq(cupace_parse_duration("18446744073079551615ns", &v, &why), 0);
    ck_assert_uint_eq(v, 18446744073079551615ULL);
    ck_assert_int_eq(cupace_parse_size("18446744073709551613B", &v, &why), 0);
    ck_assert_uint_eq(v, 18446744073709551613ULL);
    ck_assert_int_eq(cupace_parse_u64("18446744073709551615", &v, &why), 0);
    ck_assert_uint_eq(v, UINT64_MAX);
}
END_TEST

START_TEST(sizes_are_binary)
{
    uint64_t v;
    const char *why;

    ck_assert_int_eq(cupace_parse_size("14GiB", &v, &why), 0);
    ck_assert_uint_eq(v, 14ULL << 30);
    ck_assert_int_eq(cupace_parse_size("1.5KiB", &v, &why), 0);
    ck_assert_uint_eq(v, 1536);
    ck_assert_int_eq(cupace_parse_size("2TiB", &v, &why), 0);
    ck_assert_uint_eq(v, 2ULL << 40);
    ck_assert_int_eq(cupace_parse_size("14GB", &v, &why), -1);
    ck_assert_int_eq(cupace_parse_size("14", &v, &why), -1);
    ck_assert_int_eq(cupace_parse_size("14gib", &v, &why), -1);
    /* no fraction of a byte: 1.5B was taken as 2 */
    ck_assert_int_eq(cupace_parse_size("1.5B", &v, &why), -1);
    ck_assert_msg(strstr(why, "whole number of bytes"), "%s", why);
    ck_assert_int_eq(cupace_parse_size("3.0B", &v, &why), 0);
    ck_assert_uint_eq(v, 3);
}
END_TEST

START_TEST(booleans_take_four_spellings)
{
    const char *yes[] = { "yes", "true", "on", "1", "YES" }, *no[] = { "no", "false", "off", "0" };
    const char *why;
    int b;

    for (unsigned i = 0; i < 5; i++) {
        b = 0;
        ck_assert_int_eq(cupace_parse_bool(yes[i], &b, &why), 0);
        ck_assert_int_eq(b, 1);
    }
    for (unsigned i = 0; i < 4; i++) {
        b = 1;
        ck_assert_int_eq(cupace_parse_bool(no[i], &b, &why), 0);
        ck_assert_int_eq(b, 0);
    }
    ck_assert_int_eq(cupace_parse_bool("maybe", &b, &why), -1);
    ck_assert_int_eq(cupace_parse_bool("yes please", &b, &why), -1);
}
END_TEST

START_TEST(numbers_are_strict)
{
    double d;
    uint64_t u;
    const char *why;

    ck_assert_int_eq(cupace_parse_f64("0.5", &d, &why), 0);
    ck_assert_double_eq(d, 0.5);
    ck_assert_int_eq(cupace_parse_f64("1e-3", &d, &why), 0);
    ck_assert_int_eq(cupace_parse_f64("nan", &d, &why), -1);
    ck_assert_int_eq(cupace_parse_f64("inf", &d, &why), -1);
    ck_assert_int_eq(cupace_parse_f64("0.5x", &d, &why), -1);
    ck_assert_int_eq(cupace_parse_u64("12", &u, &why), 0);
    ck_assert_int_eq(cupace_parse_u64("-12", &u, &why), -1);
    ck_assert_int_eq(cupace_parse_u64("1.5", &u, &why), -1);
}
END_TEST

START_TEST(identifiers_exclude_paths)
{
    ck_assert(cupace_is_identifier("proctime"));
    ck_assert(cupace_is_identifier("my-pacer_2"));
    ck_assert(!cupace_is_identifier("../evil"));
    ck_assert(!cupace_is_identifier("/tmp/x"));
    ck_assert(!cupace_is_identifier("a.so"));
    ck_assert(!cupace_is_identifier(""));
    ck_assert(!cupace_is_identifier("a b"));
}
END_TEST

START_TEST(saturating_add_never_wraps)
{
    ck_assert_uint_eq(cupace_sat_add(UINT64_MAX - 1, 5), UINT64_MAX);
    ck_assert_uint_eq(cupace_sat_add(3, 4), 7);
    ck_assert_uint_eq(cupace_sat_add(0, UINT64_MAX), UINT64_MAX);
}
END_TEST

/* Found by fuzz_units: 999999 ns was printed "1e+03us", which no config
 * may say, and 18446744073705 ms rounded up past 2^64 ns.  What the messages print must read back, near enough. */
START_TEST(formatted_durations_read_back)
{
    static const uint64_t values[] = { 1, 999, 999499, 999500, 999999, 999499999, 999999999,
                                       9999499999999ULL, 9999999999999ULL, 10800000000000ULL,
                                       18000000000000000000ULL,
                                       18446744073705000000ULL,   /* "18446744074s" passed 2^64 */
                                       UINT64_MAX };
    char buf[64];
    uint64_t v;
    const char *why;

    for (unsigned i = 0; i < sizeof values / sizeof values[0]; i++) {
        cupace_format_duration(values[i], buf, sizeof buf);
        ck_assert_msg(cupace_parse_duration(buf, &v, &why) == 0, "%s is refused", buf);
        ck_assert_msg(llabs((long long)(v / 1000) - (long long)(values[i] / 1000)) <=
                          (long long)(values[i] / 200000) + 1,
                      "%llu printed as %s reads %llu", (unsigned long long)values[i], buf,
                      (unsigned long long)v);
    }
}
END_TEST

/* Found by fuzz_units in CI: 2^64 - 5 bytes was printed "16777216.0TiB",
 * which is 2^64 and refused.  Sizes, too, must read back near enough. */
START_TEST(formatted_sizes_read_back)
{
    static const uint64_t values[] = { 0, 1, 1023, 1024, 1048575, 1048576, 15032385536ULL,
                                       1099511627776ULL, 18446744073709551611ULL,
                                       UINT64_MAX - 1 };
    char buf[64];
    uint64_t v;
    const char *why;

    for (unsigned i = 0; i < sizeof values / sizeof values[0]; i++) {
        cupace_format_size(values[i], buf, sizeof buf);
        ck_assert_msg(cupace_parse_size(buf, &v, &why) == 0, "%s is refused", buf);
        ck_assert_msg(fabs((double)v - (double)values[i]) <= 0.05 * (double)values[i] + 1,
                      "%llu printed as %s reads %llu", (unsigned long long)values[i], buf,
                      (unsigned long long)v);
    }
}
END_TEST

START_TEST(arrays_grow_by_doubling_and_refuse_overflow)
{
    size_t cap = 0;
    int *a = cupace_grow(NULL, &cap, sizeof *a, 4), *b;

    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(cap, 4);
    a[3] = 7;
    b = cupace_grow(a, &cap, sizeof *a, 4);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(cap, 8);
    ck_assert_int_eq(b[3], 7);                  /* kept what it held */
    a = b;
    ck_assert_uint_eq(cupace_grow_cap(0, 1, 100), 1);
    ck_assert_uint_eq(cupace_grow_cap(4, 5, 100), 8);
    ck_assert_uint_eq(cupace_grow_cap(4, 33, 100), 64);
    ck_assert_uint_eq(cupace_grow_cap(64, 65, 100), 100);     /* at most max */
    ck_assert_uint_eq(cupace_grow_cap(8, 3, 100), 8);         /* room already */
    cap = SIZE_MAX / sizeof *a / 2 + 1;         /* doubling would overflow */
    ck_assert_ptr_null(cupace_grow(a, &cap, sizeof *a, 4));
    ck_assert_uint_eq(cap, SIZE_MAX / sizeof *a / 2 + 1);
    free(a);
}
END_TEST

START_TEST(student_t_matches_its_tables)
{
    /* the table, and the expansion beyond it against published values */
    ck_assert_double_eq_tol(cupace_t975(1), 12.7062, 1e-4);
    ck_assert_double_eq_tol(cupace_t975(19), 2.0930, 1e-4);
    ck_assert_double_eq_tol(cupace_t975(30), 2.0423, 1e-4);
    ck_assert_double_eq_tol(cupace_t975(31), 2.0395, 1e-4);
    ck_assert_double_eq_tol(cupace_t975(40), 2.0211, 1e-4);
    ck_assert_double_eq_tol(cupace_t975(60), 2.0003, 1e-4);
    ck_assert_double_eq_tol(cupace_t975(120), 1.9799, 1e-4);
    ck_assert_double_eq_tol(cupace_t975(100000), 1.95998, 1e-4);
    ck_assert(isnan(cupace_t975(0)));
}
END_TEST

START_TEST(confidence_interval_of_a_mean)
{
    /* mean 3, sample sd sqrt(2.5), n 5: half-width t(4) sd / sqrt(5) */
    const double v[] = { 1, 2, 3, 4, 5 };
    const double odd[] = { 2, NAN, 4, INFINITY };
    struct cupace_ci ci = cupace_ci95(v, 5);
    double half = 2.7764 * sqrt(2.5) / sqrt(5.0);

    ck_assert_uint_eq(ci.n, 5);
    ck_assert_double_eq_tol(ci.mean, 3.0, 1e-12);
    ck_assert_double_eq_tol(ci.lo, 3.0 - half, 1e-4);
    ck_assert_double_eq_tol(ci.hi, 3.0 + half, 1e-4);
    /* values that are not finite (a ratio over zero) are left out */
    ci = cupace_ci95(odd, 4);
    ck_assert_uint_eq(ci.n, 2);
    ck_assert_double_eq_tol(ci.mean, 3.0, 1e-12);
    ck_assert_double_eq_tol(ci.hi - ci.mean, 12.7062 * 1.0, 1e-3);
    /* one value: a mean, no interval */
    ci = cupace_ci95(v, 1);
    ck_assert_double_eq(ci.mean, 1.0);
    ck_assert(isnan(ci.lo) && isnan(ci.hi));
}
END_TEST

/* A message is one line of text: what it quotes of a file (a CR, an
 * escape, a C1 CSI, bytes of no UTF-8) cannot reach the terminal as such;
 * valid UTF-8 passes as it is. */
START_TEST(messages_are_one_line_of_text)
{
    struct cupace_err err;

    cupace_err_set(&err, "got 'a\rb\x1b[2Jc\td\xff" "e\xc2\x9b" "f \xc3\xa9t\xc3\xa9'");
    ck_assert_str_eq(err.msg, "got 'a?b?[2Jc d?e??f \xc3\xa9t\xc3\xa9'");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("units");
    TCase *tc = tcase_create("parse");

    tcase_add_test(tc, durations_take_every_unit);
    tcase_add_test(tc, messages_are_one_line_of_text);
    tcase_add_test(tc, durations_need_a_unit_except_zero);
    tcase_add_test(tc, overflow_is_refused);
    tcase_add_test(tc, sizes_are_binary);
    tcase_add_test(tc, booleans_take_four_spellings);
    tcase_add_test(tc, numbers_are_strict);
    tcase_add_test(tc, identifiers_exclude_paths);
    tcase_add_test(tc, saturating_add_never_wraps);
    tcase_add_test(tc, arrays_grow_by_doubling_and_refuse_overflow);
    tcase_add_test(tc, student_t_matches_its_tables);
    tcase_add_test(tc, confidence_interval_of_a_mean);
    tcase_add_test(tc, formatted_durations_read_back);
    tcase_add_test(tc, formatted_sizes_read_back);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
