/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* check_cpu_share.c -- lead's estimate of the CPU's synthesis slots
 * (plugins/cpu_share.h), driven by an exact processor-sharing model: c
 * slots (ps_model.h).  The estimator sees only the signals a controller sees. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../plugins/cpu_share.h"
#include "ps_model.h"

static void observe(void *ctx, struct cupace_signals *s)
{
    cpu_share_update(ctx, s);
}

START_TEST(finds_the_slots_where_n_crosses_them)
{
    static const unsigned levels[] = { 8, 16, 10, 14, 9, 15 };
    struct ps_model m;
    struct cpu_share *cs = calloc(1, sizeof *cs);

    ps_init(&m, 12, 30, 0.15, (uint64_t)_i + 1, observe, cs);
    ps_schedule(&m, 4000, 45, levels, 6);
    ck_assert_msg(cs->over && cs->under, "over %d under %d after %llu", cs->over, cs->under,
                  (unsigned long long)cs->cohort.samples);
    ck_assert_msg(cs->slots >= 12 && cs->slots <= 13, "slots %u, the CPU has 12", cs->slots);
    /* the unstretched synthesis time, not the stretched one (up to 40 s) */
    ck_assert_msg(fabs(cpu_share_work_ns(cs) / 30e9 - 1) < 0.06, "work %.2f s",
                  cpu_share_work_ns(cs) / 1e9);
    free(cs);
}
END_TEST

START_TEST(never_sees_a_limit_that_is_not_there)
{
    static const unsigned levels[] = { 50, 55, 45, 60, 48 };
    struct ps_model m;
    struct cpu_share *cs = calloc(1, sizeof *cs);
    double most_evidence = 0;

    /* 64 start at once, as a fill does, then drain and refill as the GPUs
     * catch up: the first to end are the short ones, and the long ones
     * lived through the crowded start.  Counted as they end, that reads as
     * stretching (up to 4.6 nats here); counted once the older ones ended,
     * it does not */
    ps_init(&m, 64, 30, 0.15, (uint64_t)_i + 1, observe, cs);
    ps_run(&m, 0, 64);
    ps_run(&m, 22, 0);
    ps_run(&m, 26, 60);
    ps_run(&m, 32, 0);
    ps_run(&m, 40, 55);
    for (unsigned k = 0; m.now < 3000; k++) {
        ps_run(&m, m.now + 5, levels[k % 5]);
        if (cs->cohort.samples >= 8) {
            double shortfall[CPU_SHARE_MAX + 1];

            cpu_share_shortfall(&cs->cohort, cs->most, shortfall);
            if (shortfall[cs->most] > most_evidence)
                most_evidence = shortfall[cs->most];
        }
        ck_assert_msg(!cs->over, "a limit of %u seen at %.0f s with 64 CPUs", cs->slots, m.now);
    }
    ck_assert_msg(most_evidence < CPU_SHARE_OVER / 2, "%.2f nats for a limit with 64 CPUs",
                  most_evidence);
    ck_assert_uint_eq(cs->slots, 0);
    free(cs);
}
END_TEST

START_TEST(always_oversubscribed_gives_only_an_upper_bound)
{
    static const unsigned levels[] = { 10, 18, 14, 12 };
    struct ps_model m;
    struct cpu_share *cs = calloc(1, sizeof *cs);

    /* 6 CPUs, never fewer than 10 in synthesis: every c up to 10 explains the
     * durations equally, so the data say "at most 10", and not which */
    ps_init(&m, 6, 30, 0.15, (uint64_t)_i + 1, observe, cs);
    ps_schedule(&m, 4000, 60, levels, 4);
    ck_assert(cs->over);
    ck_assert(!cs->under);
    ck_assert_msg(cs->slots >= 6 && cs->slots <= 10, "slots %u", cs->slots);
    ck_assert_uint_eq(cs->least, 1);
    free(cs);
}
END_TEST

START_TEST(constant_n_says_nothing)
{
    struct ps_model m;
    struct cpu_share *cs = calloc(1, sizeof *cs);

    ps_init(&m, 6, 30, 0.15, 7, observe, cs);
    ps_run(&m, 3000, 18);
    ck_assert(!cs->over);
    ck_assert(!cs->under);
    ck_assert_uint_eq(cs->slots, 0);
    free(cs);
}
END_TEST

START_TEST(failed_syntheses_do_not_hold_the_count_back)
{
    static const unsigned levels[] = { 8, 16, 10, 14 };
    struct ps_model m;
    struct cpu_share *cs = calloc(1, sizeof *cs);
    uint64_t before;

    /* a synthesis that fails never ends: were it waited for, nothing that
     * started after it would ever be counted */
    ps_init(&m, 12, 30, 0.15, 3, observe, cs);
    ps_run(&m, 10, 12);
    ps_fail(&m);
    ps_fail(&m);
    before = cs->cohort.samples;
    for (int k = 0; m.now < 3000; k++) {
        ps_schedule(&m, m.now + 180, 45, levels, 4);
        /* all that ended is counted but the few younger than one still
         * running: the failed ones are not waited for */
        ck_assert_msg(cs->npending <= 16, "%u ended and not counted at %.0f s", cs->npending,
                      m.now);
        ck_assert_uint_eq(cs->cohort.samples + cs->npending, m.sig.synth_done);
    }
    ck_assert_msg(cs->cohort.samples > before + 100, "%llu counted",
                  (unsigned long long)(cs->cohort.samples - before));
    ck_assert(cs->over && cs->under);
    ck_assert_msg(cs->slots >= 12 && cs->slots <= 13, "slots %u", cs->slots);
    free(cs);
}
END_TEST

START_TEST(a_limit_once_shown_stands_until_its_evidence_is_mostly_gone)
{
    static const unsigned levels[] = { 8, 16, 10, 14 };
    struct ps_model m;
    struct cpu_share *cs = calloc(1, sizeof *cs);
    double shortfall[CPU_SHARE_MAX + 1];
    int dropped = 0;

    /* shown on 12 CPUs, then 8 in synthesis for good: nothing stretches any
     * more, the old evidence is forgotten, and the limit goes only once less
     * than a quarter of the evidence that showed it is left */
    ps_init(&m, 12, 30, 0.15, 5, observe, cs);
    ps_schedule(&m, 2000, 45, levels, 4);
    ck_assert(cs->over);
    while (m.now < 40000 && !dropped) {
        ps_run(&m, m.now + 30, 8);
        cpu_share_shortfall(&cs->cohort, cs->most, shortfall);
        if (shortfall[cs->most] > CPU_SHARE_OVER / 4)
            ck_assert_msg(cs->over, "dropped with %.2f nats left", shortfall[cs->most]);
        dropped = !cs->over;
    }
    ck_assert_msg(dropped, "a limit with nothing stretched for 38000 s");
    free(cs);
}
END_TEST

START_TEST(a_limit_shown_outlasts_a_long_run_capped_at_it)
{
    static const unsigned levels[] = { 8, 16, 10, 14 };
    struct ps_model m;
    struct cpu_share *cs = calloc(1, sizeof *cs);
    uint64_t counted;

    /* shown, then n held at the slots, as lead holds it once capped:
     * nothing stretches, yet the cap must outlast a long run or n passes
     * the CPUs again in the next bunch of arrivals (an evidence span of 256
     * forgot after about 1200 syntheses, 512 after about 2700) */
    ps_init(&m, 12, 30, 0.15, (uint64_t)_i + 1, observe, cs);
    ps_schedule(&m, 2000, 45, levels, 4);
    ck_assert(cs->over);
    counted = cs->cohort.samples;
    while (cs->cohort.samples < counted + 2000)
        ps_run(&m, m.now + 30, 12);
    ck_assert_msg(cs->over && cs->slots >= 12 && cs->slots <= 13, "over %d slots %u", cs->over,
                  cs->slots);
    free(cs);
}
END_TEST

START_TEST(equal_works_ending_together_are_no_evidence)
{
    struct cpu_share *cs = calloc(1, sizeof *cs);
    struct cupace_signals sig;

    /* no jitter at all: batches of 18 syntheses of one work end in a
     * cascade of events a few ns apart, each seeing one fewer in synthesis.
     * Read at its last instant, the rate they end at says "one slot"; but
     * n never varied, so nothing is known */
    memset(&sig, 0, sizeof sig);
    for (int batch = 0; batch < 8; batch++) {
        uint64_t t0 = sig.now_ns;

        sig.dispatched += 18;
        sig.in_synthesis = 18;
        cpu_share_update(cs, &sig);
        for (uint64_t k = 0; k < 18; k++) {
            sig.now_ns = t0 + 45000000000ull + k;
            sig.synth_done++;
            sig.synth_ns_total += 45000000000ull + k;
            sig.in_synthesis = 17 - k;
            cpu_share_update(cs, &sig);
            ck_assert_msg(!cs->over, "a limit of %u seen in batch %d", cs->slots, batch);
        }
    }
    ck_assert_uint_gt(cs->cohort.samples, 100);
    free(cs);
}
END_TEST

/* synth-bound and its twin with 18 CPUs: 18 in synthesis for 200 s, each
 * 90 s (6 CPUs shared, or 18 each with three times the work), then a
 * level of 14 for `hold` s.  The likelihood ratio of 14 slots over 18 */
static double level_llr(unsigned cpus, double work_s, uint64_t seed, double hold)
{
    struct ps_model m;
    struct cpu_share *cs = calloc(1, sizeof *cs);
    uint64_t t_d;
    double llr;

    ps_init(&m, cpus, work_s, 0.15, seed, observe, cs);
    ps_run(&m, 200, 18);
    t_d = (uint64_t)llround(m.now * 1e9);
    ps_run(&m, m.now + hold, 14);
    llr = cpu_share_llr(cs, t_d, (uint64_t)llround(m.now * 1e9), 18, 14);
    free(cs);
    return llr;
}

START_TEST(a_level_that_ran_faster_is_told_from_one_that_did_not)
{
    /* the two give the same signals until n falls: only the level tells */
    double sped = level_llr(6, 30, (uint64_t)_i + 1, 150);
    double not_sped = level_llr(18, 90, (uint64_t)_i + 1, 150);

    ck_assert_msg(sped > 2, "%.2f nats for a level that ran 18/14 faster", sped);
    ck_assert_msg(not_sped < -1, "%.2f nats for a level that ran no faster", not_sped);
}
END_TEST

START_TEST(syntheses_still_running_are_evidence)
{
    double sum = 0;

    /* 60 s into the level none that started at it has ended; those that
     * started before it and still run are slower than a faster level
     * would have made them, which says "no faster" already */
    for (uint64_t seed = 1; seed <= 8; seed++)
        sum += level_llr(18, 90, seed, 60);
    ck_assert_msg(sum < -8, "%.2f nats over 8 seeds", sum);
}
END_TEST

START_TEST(the_test_says_nothing_without_a_cohort)
{
    struct ps_model m;
    struct cpu_share *cs = calloc(1, sizeof *cs);

    ps_init(&m, 6, 30, 0.15, 5, observe, cs);
    ps_run(&m, 20, 18);     /* none ended yet */
    ck_assert(isnan(cpu_share_llr(cs, 0, (uint64_t)20e9, 18, 14)));
    ps_run(&m, 400, 18);
    ck_assert(isfinite(cpu_share_llr(cs, (uint64_t)200e9, (uint64_t)400e9, 18, 14)));
    ck_assert(isnan(cpu_share_llr(cs, (uint64_t)200e9, (uint64_t)400e9, 19, 14)));
    ck_assert(isnan(cpu_share_llr(cs, (uint64_t)200e9, (uint64_t)400e9, 18, 0)));
    /* the ring has lost some that ended since t_d: not all the evidence */
    ps_run(&m, 4000, 18);
    ck_assert_uint_eq(cs->recent_count, CPU_SHARE_RECENT);
    ck_assert(isnan(cpu_share_llr(cs, (uint64_t)200e9, (uint64_t)4000e9, 18, 14)));
    free(cs);
}
END_TEST

START_TEST(a_shift_in_the_work_starts_the_fit_over)
{
    static const unsigned levels[] = { 8, 16, 10, 14 };
    static const double factor[] = { 2, 0.5, 1.5, 0.67 };
    struct ps_model m;
    struct cpu_share *cs = calloc(1, sizeof *cs);
    double shifted_at = 0;

    /* 12 CPUs located on 30 s syntheses, then the work steps: counted with
     * the old, the new read as a wandering number of slots (5 to 16 on 12
     * CPUs in the simulator), and lead's probe read faster work as a level
     * that ran faster */
    ps_init(&m, 12, 30, 0.15, (uint64_t)_i + 1, observe, cs);
    ps_schedule(&m, 2000, 45, levels, 4);
    ck_assert(cs->over && cs->under);
    ck_assert_uint_eq(cs->shifts, 0);
    m.work_s *= factor[_i % 4];
    for (unsigned k = 0; m.now < 5000; k++) {
        ps_run(&m, m.now + 45, levels[k % 4]);
        if (cs->shifts && !shifted_at)
            shifted_at = m.now;
    }
    ck_assert_msg(shifted_at > 0 && shifted_at < 2000 + 20 * m.work_s,
                  "work x%.2f: the shift seen at %.0f s", factor[_i % 4], shifted_at);
    ck_assert_msg(cs->shifts == 1, "%u shifts for one", cs->shifts);
    /* and learnt anew on the new work alone */
    ck_assert_msg(cs->over && cs->under && cs->slots >= 12 && cs->slots <= 13, "slots %u",
                  cs->slots);
    ck_assert_msg(fabs(cpu_share_work_ns(cs) / (m.work_s * 1e9) - 1) < 0.1, "work %.2f s of %.2f",
                  cpu_share_work_ns(cs) / 1e9, m.work_s);
    free(cs);
}
END_TEST

START_TEST(changes_in_n_are_no_shift_in_the_work)
{
    static const unsigned levels[] = { 8, 16, 10, 14, 9, 15 };
    static const unsigned drains[] = { 18, 14, 11, 9, 12, 18 };
    struct ps_model m;
    struct cpu_share *cs = calloc(1, sizeof *cs);

    /* what n does moves the work read under each c, one way at one slot and
     * the other at the most: levels crossing the slots, the fills and
     * drains of lead's probe, a long stretch at one level */
    ps_init(&m, 12, 30, _i < 3 ? 0.15 : 0.4, (uint64_t)_i + 1, observe, cs);
    ps_schedule(&m, 3000, 45, levels, 6);
    ps_schedule(&m, 6000, 200, drains, 6);
    ps_run(&m, 9000, 12);
    ps_schedule(&m, 12000, 20, levels, 6);
    ck_assert_msg(cs->shifts == 0, "%u shifts where the work never changed", cs->shifts);
    ck_assert(cs->over && cs->under);
    free(cs);
}
END_TEST

START_TEST(any_signals_at_all_are_survived)
{
    struct cpu_share *cs = calloc(1, sizeof *cs);
    struct cupace_signals sig;
    uint64_t x = 0x2545F4914F6CDD1Dull + (uint64_t)_i;

    /* counters that jump, stall, go back; clocks that stand or go back;
     * far more in synthesis than any candidate: an engine's bug must not
     * be the plugin's crash (the sanitized runs check the arithmetic) */
    memset(&sig, 0, sizeof sig);
    for (int k = 0; k < 50000; k++) {
        uint64_t r = ps_xorshift(&x);

        switch (r % 8) {
        case 0: sig.now_ns += r >> 40; break;
        case 1: sig.now_ns = r % 3 ? sig.now_ns : r >> 8; break;
        case 2: sig.dispatched += (r >> 8) % 5; sig.in_synthesis += (r >> 8) % 5; break;
        case 3: sig.synth_done += (r >> 8) % 3; sig.synth_ns_total += r >> 20; break;
        case 4: sig.in_synthesis = (r >> 8) % 4 ? sig.in_synthesis / 2 : r >> 8; break;
        case 5: sig.synth_ns_total = r % 5 ? sig.synth_ns_total : r; break;
        case 6: sig.dispatched = r % 7 ? sig.dispatched : r >> 3; break;
        default: sig.synth_done = r % 11 ? sig.synth_done + 1 : 0; break;
        }
        cpu_share_update(cs, &sig);
        ck_assert_uint_le(cs->most, CPU_SHARE_MAX);
        ck_assert_uint_le(cs->slots, cs->most);
        ck_assert_uint_le(cs->npending, CPU_SHARE_PENDING);
        ck_assert_uint_le(cs->start_count, CPU_SHARE_STARTS);
        if (k % 97 == 0) {
            unsigned c0 = 1 + (unsigned)(r >> 16) % (cs->most + 1);
            unsigned c1 = 1 + (unsigned)(r >> 24) % (cs->most + 1);

            ck_assert(!isinf(cpu_share_llr(cs, r >> 30, sig.now_ns, c0, c1)));
        }
    }
    free(cs);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cpu_share");
    TCase *tc = tcase_create("estimate");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, finds_the_slots_where_n_crosses_them, 0, 5);
    tcase_add_loop_test(tc, never_sees_a_limit_that_is_not_there, 0, 8);
    tcase_add_loop_test(tc, always_oversubscribed_gives_only_an_upper_bound, 0, 3);
    tcase_add_test(tc, constant_n_says_nothing);
    tcase_add_test(tc, failed_syntheses_do_not_hold_the_count_back);
    tcase_add_test(tc, a_limit_once_shown_stands_until_its_evidence_is_mostly_gone);
    tcase_add_loop_test(tc, a_limit_shown_outlasts_a_long_run_capped_at_it, 0, 3);
    tcase_add_test(tc, equal_works_ending_together_are_no_evidence);
    tcase_add_loop_test(tc, a_level_that_ran_faster_is_told_from_one_that_did_not, 0, 6);
    tcase_add_test(tc, syntheses_still_running_are_evidence);
    tcase_add_test(tc, the_test_says_nothing_without_a_cohort);
    tcase_add_loop_test(tc, a_shift_in_the_work_starts_the_fit_over, 0, 8);
    tcase_add_loop_test(tc, changes_in_n_are_no_shift_in_the_work, 0, 6);
    tcase_add_loop_test(tc, any_signals_at_all_are_survived, 0, 4);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
