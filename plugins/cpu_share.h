/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * cpu_share.h -- how many syntheses the CPU runs at full speed, inferred
 * from how their times stretch with the number in synthesis.
 *
 * No signal says how many CPUs synthesis has.  But syntheses share them:
 * with c slots and n in synthesis each one advances at min(1, c / n) of its
 * full speed (processor sharing), so a synthesis that lived through a
 * history n(t) and took d seconds did the work
 *
 *     w(c) = integral over its life of min(1, c / n(t)) dt.
 *
 * The works of successive syntheses are independent draws of one law; only
 * the true c makes them so.  So every candidate c from 1 to the most ever
 * seen in synthesis is scored by the likelihood of the observed durations
 * under it, with log w taken as normal (its mean and spread profiled out):
 *
 *     l(c) = E[log r_end(c)] - E[log w(c)] - log sd(log w(c))
 *
 * where r_end = min(1, c / n) when it ended is the Jacobian dw/dd.  The
 * expectations are averages over the syntheses counted so far.
 *
 * A synthesis is counted only once every synthesis that started before it
 * has ended.  The first of a batch to end are its short ones: counted as
 * they end, a batch that started together looks less spread than it is
 * until its long ones end, and the long ones are those that lived through
 * its crowded start, which is the very pattern that stretching leaves.
 *
 * What the data can tell depends on how n varied.  While n stayed above c
 * all the time, every c up to the least n seen explains the data exactly as
 * well (their works differ by a constant factor): the data say "at most
 * that many", not which.  While n stayed below c, every c above the most
 * seen does: "at least that many".  Two tests in likelihood units (nats,
 * over the syntheses counted) say which is known:
 *  - `over`:  "no limit" (c at the most seen) is refuted: syntheses stretched;
 *  - `under`: "one slot" is refuted: some ran without stretching.
 * With both, the limit lies between and `slots` is where the likelihood
 * peaks.  With `over` alone, `slots` is the least that explains the data as
 * well as any, an upper bound; the controller learns more only by letting n
 * fall.
 *
 * When the controller lets n fall on purpose, it asks a narrower question
 * of the same model: did the syntheses speed up?  cpu_share_llr weighs
 * two candidates, the n it drained from and the n it drained to, on every
 * synthesis that ran since, each for the part of its life spent after the
 * drain began, with the law of log w the cohort's under each.  Those still
 * running count by their survival: the first to end after a drain are the
 * short ones, and counted alone they read as sped up.
 *
 * Header-only, like pace_util.h: controllers never link the engine.
 */
#ifndef CUPACE_CPU_SHARE_H
#define CUPACE_CPU_SHARE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pace_util.h"

#define CPU_SHARE_MAX 256           /* candidates: 1 .. 256 slots */
#define CPU_SHARE_HIST 2048         /* changes of in_synthesis remembered: 8 per candidate */
#define CPU_SHARE_STARTS 1024       /* syntheses started, oldest unfinished first */
#define CPU_SHARE_PENDING 256       /* ended, waiting for the older ones to end */
#define CPU_SHARE_RECENT 512        /* the latest ended, for cpu_share_llr */
/* The evidence spans about 512 syntheses: held at a limit it showed, n
 * shows nothing more, and the limit is forgotten after about 2700 (its
 * way back from a cap set too low).  Spanning 256 (about 1200), 5 of 20
 * poisson-near-capacity.ini seeds forgot 12 CPUs before the end and let n
 * pass them in a bunch of arrivals (0 of 20 now).  The mean work is
 * no evidence but a level the lead follows, as fast as the lead's own
 * synthesis mean: spanning 256, it held L 7% short 300 s after synthesis
 * got a fifth slower. */
#define CPU_SHARE_SPAN 512
#define CPU_SHARE_WORK_SPAN 32
#define CPU_SHARE_OVER 6.0          /* nats: a ratio of e^6 before a limit is believed */
#define CPU_SHARE_UNDER 2.0         /* nats: e^2 before "ran unstretched" is */
#define CPU_SHARE_PICK 0.25         /* nats: within this of the peak, take the most slots */
#define CPU_SHARE_FEW 8             /* slots so few that one is at least 1/8 of the CPU */
/* The work itself shifting (a new kind of partition, a slower prover) is
 * told from a change in n by a CUSUM on each candidate's log work, in its
 * own standard deviations: a one-sided sum of what exceeds K per group,
 * believed at H.  Started only once SHIFT_MIN syntheses have set the mean:
 * at 16, a jittery start on synth-bound.ini (seed 69) read as a shift. */
#define CPU_SHARE_SHIFT_MIN 32
#define CPU_SHARE_SHIFT_K 0.5
#define CPU_SHARE_SHIFT_H 8.0
#define CPU_SHARE_SHIFT_SD 0.05     /* the least spread a step is measured in */

struct cpu_share_ended { uint64_t start, end; };

/* Per candidate c: the averages of log w, (log w)^2, log r_end, and w. */
struct cpu_share_fit {
    uint64_t samples;
    double lw[CPU_SHARE_MAX + 1], lw2[CPU_SHARE_MAX + 1];
    double lr[CPU_SHARE_MAX + 1], w[CPU_SHARE_MAX + 1];
};

struct cpu_share {
    /* in_synthesis as a step function: seg_n[i] from seg_t[i] on */
    uint64_t seg_t[CPU_SHARE_HIST];
    uint32_t seg_n[CPU_SHARE_HIST];
    unsigned seg_head, seg_count;   /* the newest step is seg_head - 1 */
    /* start times of syntheses in order; done[] once ended */
    uint64_t start_t[CPU_SHARE_STARTS];
    uint8_t start_done[CPU_SHARE_STARTS];
    unsigned start_first, start_count;
    struct cpu_share_ended pending[CPU_SHARE_PENDING];
    unsigned npending;
    uint64_t last_dispatched, last_done, last_ns_total, last_in_synthesis;
    unsigned most;                  /* the most ever in synthesis, at most CPU_SHARE_MAX */
    double log_c[CPU_SHARE_MAX + 1];/* log c, for c up to most */
    struct cpu_share_fit cohort;    /* counted once the older ones ended: unbiased */
    struct cpu_share_fit prompt;    /* counted as they end: sooner, biased to the short */
    unsigned slots;                 /* the estimate; 0 while `over` is not known */
    unsigned least;                 /* the fewest slots the data leave plausible */
    unsigned most_plausible;        /* the most they do not refute (CPU_SHARE_UNDER) */
    int over, under;
    /* the latest to end, a ring (cpu_share_llr) */
    struct cpu_share_ended recent[CPU_SHARE_RECENT];
    unsigned recent_head, recent_count;
    /* the work's shifts (cpu_share_shift): this group's sums of standard
     * scores, and the CUSUMs up and down, per candidate */
    double shift_z[CPU_SHARE_MAX + 1];
    unsigned shift_k;
    double shift_up[CPU_SHARE_MAX + 1], shift_down[CPU_SHARE_MAX + 1];
    unsigned shifts;                /* how many were found: the fit restarted each time */
};

static inline void cpu_share_step(struct cpu_share *cs, uint64_t now, uint64_t in_synthesis)
{
    unsigned last = (cs->seg_head + CPU_SHARE_HIST - 1) % CPU_SHARE_HIST;
    uint32_t n = in_synthesis > UINT32_MAX ? UINT32_MAX : (uint32_t)in_synthesis;

    if (cs->seg_count > 0 && cs->seg_n[last] == n)
        return;
    if (cs->seg_count > 0 && cs->seg_t[last] == now) {
        cs->seg_n[last] = n;        /* several events at one instant: the last counts */
    } else {
        cs->seg_t[cs->seg_head] = now;
        cs->seg_n[cs->seg_head] = n;
        cs->seg_head = (cs->seg_head + 1) % CPU_SHARE_HIST;
        if (cs->seg_count < CPU_SHARE_HIST)
            cs->seg_count++;
    }
    /* a candidate above every n seen reads as "no limit"; the range grows
     * with copies of that one, which every synthesis so far fits as well */
    while (cs->most < n && cs->most < CPU_SHARE_MAX) {
        unsigned c = cs->most++;
        cs->log_c[c + 1] = log((double)(c + 1));
        for (struct cpu_share_fit *f = &cs->cohort; c > 0 && f; f = f == &cs->cohort ? &cs->prompt : NULL) {
            f->lw[c + 1] = f->lw[c];
            f->lw2[c + 1] = f->lw2[c];
            f->lr[c + 1] = f->lr[c];
            f->w[c + 1] = f->w[c];
        }
        if (c > 0) {
            cs->shift_up[c + 1] = cs->shift_up[c];
            cs->shift_down[c + 1] = cs->shift_down[c];
        }
    }
}

/* How many syntheses an average of SPAN weighs after SAMPLES: a plain mean
 * of the first, then an EMA of gain 1 / SPAN. */
static inline double cpu_share_weight(uint64_t samples, unsigned span)
{
    return samples < span ? (double)samples : (double)span;
}

/* The profile log-likelihood of c, per synthesis counted. */
static inline double cpu_share_score(const struct cpu_share_fit *f, unsigned c)
{
    double var = f->lw2[c] - f->lw[c] * f->lw[c];

    return f->lr[c] - f->lw[c] - 0.5 * log(var > 1e-12 ? var : 1e-12);
}

/* How much less likely than the best each c is, in nats over what is
 * averaged: shortfall[c] for c = 1 .. most (0 for the best). */
static inline void cpu_share_shortfall(const struct cpu_share_fit *f, unsigned most, double *shortfall)
{
    double weight = cpu_share_weight(f->samples, CPU_SHARE_SPAN);
    double best = -INFINITY;
    unsigned c;

    for (c = 1; c <= most; c++) {
        shortfall[c] = cpu_share_score(f, c);
        if (shortfall[c] > best)
            best = shortfall[c];
    }
    for (c = 1; c <= most; c++)
        shortfall[c] = weight * (best - shortfall[c]);
}

/* The fewest slots the syntheses counted as they ended leave plausible:
 * where the controller may let n fall to while it learns. */
static inline void cpu_share_decide_least(struct cpu_share *cs)
{
    double shortfall[CPU_SHARE_MAX + 1];
    unsigned c;

    if (cs->most < 2 || cs->prompt.samples < 8)
        return;
    cpu_share_shortfall(&cs->prompt, cs->most, shortfall);
    for (c = 1; c < cs->most; c++)
        if (shortfall[c] <= CPU_SHARE_UNDER)
            break;
    cs->least = c;
}

static inline void cpu_share_decide(struct cpu_share *cs)
{
    double shortfall[CPU_SHARE_MAX + 1];
    unsigned c;

    if (cs->most < 2 || cs->cohort.samples < 8)
        return;
    cpu_share_shortfall(&cs->cohort, cs->most, shortfall);
    /* once shown, a finding stands until most of its evidence is gone: a
     * cap that came and went with each synthesis would let n jump back */
    cs->over = shortfall[cs->most] > (cs->over ? CPU_SHARE_OVER / 4 : CPU_SHARE_OVER);
    cs->under = shortfall[1] > (cs->under ? CPU_SHARE_UNDER / 4 : CPU_SHARE_UNDER);
    if (!cs->over) {
        cs->slots = 0;
        return;
    }
    /* too few slots starve the GPUs, one too many only costs a partition's
     * memory: of the candidates about as likely as the best, the most.
     * Where they are few and only bounded from above, of those not refuted:
     * one slot is then a large share of the CPU, and a bound taken from a
     * burst or two of jittery syntheses is a cap that n, held under it,
     * shows nothing against (one slot of 3 on held-out bursts of 25 at cv
     * 0.5, 1.24 of greedy's makespan on one seed, 1.028 over 20; 1.005 so) */
    for (c = cs->most; c > 1; c--)
        if (shortfall[c] <= (!cs->under && c <= CPU_SHARE_FEW ? CPU_SHARE_UNDER : CPU_SHARE_PICK))
            break;
    cs->slots = c;
    /* the pick is a point estimate, and n held under it shows nothing
     * against it: the controller may look above it, as far as the data
     * leave plausible */
    for (c = cs->most; c > cs->slots; c--)
        if (shortfall[c] <= CPU_SHARE_UNDER)
            break;
    cs->most_plausible = c;
}

/* Counts one synthesis that lived from start to end. */
static inline void cpu_share_count(struct cpu_share *cs, struct cpu_share_fit *f,
                                   const struct cpu_share_ended *e)
{
    double at[CPU_SHARE_MAX + 1] = { 0 }, per_n = 0, below = 0, g, gw, log_n_end;
    double t0 = (double)e->start, end = (double)e->end;
    /* the rate it ended at (the Jacobian) is the one of the last thousandth
     * of its life, not of its last instant: syntheses of equal work end in
     * a cascade of events a few ns apart, each seeing one fewer, which reads
     * as the rate collapsing at the very end */
    double late = end - (end - t0) / 1024;
    uint32_t n_end = 0;
    unsigned k, c;

    /* its life, newest step first: the time at each n (above the
     * candidates, only time / n matters) */
    for (k = 0; k < cs->seg_count; k++) {
        unsigned i = (cs->seg_head + CPU_SHARE_HIST - 1 - k) % CPU_SHARE_HIST;
        double from = (double)cs->seg_t[i], a = from > t0 ? from : t0, dt = end - a;
        uint32_t n = cs->seg_n[i] ? cs->seg_n[i] : 1;

        if (from >= end)
            continue;               /* after it ended */
        if (!n_end && from <= late)
            n_end = n;
        if (dt > 0) {
            if (n <= CPU_SHARE_MAX)
                at[n] += dt;
            per_n += dt / n;
        }
        end = from;
        if (from <= t0)
            break;
    }
    if (k == cs->seg_count || !(e->end > e->start))
        return;                     /* it began before the history: skip it */
    log_n_end = log((double)n_end);
    f->samples++;
    g = 1.0 / cpu_share_weight(f->samples, CPU_SHARE_SPAN);
    gw = 1.0 / cpu_share_weight(f->samples, CPU_SHARE_WORK_SPAN);
    /* w(c) = time at n <= c, plus c x (time / n) at n > c */
    for (c = 1; c <= cs->most; c++) {
        double w, l;

        below += at[c];
        per_n -= at[c] / c;
        w = below + (double)c * (per_n > 0 ? per_n : 0);
        l = log(w > 1 ? w : 1);
        if (f == &cs->cohort && f->samples > CPU_SHARE_SHIFT_MIN) {
            double var = f->lw2[c] - f->lw[c] * f->lw[c], sd = sqrt(var > 0 ? var : 0);

            cs->shift_z[c] += (l - f->lw[c]) / (sd > CPU_SHARE_SHIFT_SD ? sd : CPU_SHARE_SHIFT_SD);
            if (c == 1)
                cs->shift_k++;
        }
        f->lw[c] = pace_ema(f->lw[c], l, g, 0);
        f->lw2[c] = pace_ema(f->lw2[c], l * l, g, 0);
        f->lr[c] = pace_ema(f->lr[c], c < n_end ? cs->log_c[c] - log_n_end : 0, g, 0);
        f->w[c] = pace_ema(f->w[c], w, gw, 0);
    }
}

/* Marks the start at t (or the nearest unfinished one before it) ended;
 * `oldest` marks the oldest unfinished one instead (a failed synthesis). */
static inline void cpu_share_start_ends(struct cpu_share *cs, uint64_t t, int oldest)
{
    unsigned k, hit = CPU_SHARE_STARTS;

    for (k = 0; k < cs->start_count; k++) {
        unsigned i = (cs->start_first + k) % CPU_SHARE_STARTS;

        if (cs->start_done[i])
            continue;
        if (oldest || cs->start_t[i] <= t)
            hit = i;
        if (oldest || cs->start_t[i] >= t)
            break;
    }
    if (hit == CPU_SHARE_STARTS && cs->start_count > 0)
        hit = cs->start_first;      /* none before it: the oldest */
    if (hit != CPU_SHARE_STARTS)
        cs->start_done[hit] = 1;
    while (cs->start_count > 0 && cs->start_done[cs->start_first]) {
        cs->start_first = (cs->start_first + 1) % CPU_SHARE_STARTS;
        cs->start_count--;
    }
}

static inline void cpu_share_started(struct cpu_share *cs, uint64_t now)
{
    if (cs->start_count == CPU_SHARE_STARTS)
        cpu_share_start_ends(cs, 0, 1);     /* full: the oldest counts as ended */
    unsigned i = (cs->start_first + cs->start_count) % CPU_SHARE_STARTS;
    cs->start_t[i] = now;
    cs->start_done[i] = 0;
    cs->start_count++;
}

/* Whether the work itself shifted, on the group just counted; if so the
 * fit starts over.  A group counted together is one in order of end, its
 * short ones first, so it is scored as one: its sum of standard scores
 * over the root of its size.  A change in n moves the work read at one
 * slot and at the most slots in opposite ways (more time at n, or less
 * share of the CPU); a change in the work moves them all.  So the shift
 * must show at 1, at the most and at the best fit alike: tested at the
 * best alone, a burst of arrivals on bursts.ini read as one (p50 0.940 ->
 * 0.992 of greedy's). */
static inline int cpu_share_shift_past(const double *cusum, unsigned most, unsigned best)
{
    return cusum[1] > CPU_SHARE_SHIFT_H && cusum[most] > CPU_SHARE_SHIFT_H &&
           cusum[best] > CPU_SHARE_SHIFT_H;
}

static inline void cpu_share_shift(struct cpu_share *cs)
{
    double shortfall[CPU_SHARE_MAX + 1], root;
    unsigned c, best = 1;

    if (!cs->shift_k)
        return;
    root = sqrt((double)cs->shift_k);
    for (c = 1; c <= cs->most; c++) {
        double z = cs->shift_z[c] / root;

        cs->shift_up[c] = fmax(0, cs->shift_up[c] + z - CPU_SHARE_SHIFT_K);
        cs->shift_down[c] = fmax(0, cs->shift_down[c] - z - CPU_SHARE_SHIFT_K);
        cs->shift_z[c] = 0;
    }
    cs->shift_k = 0;
    if (cs->most < 2)
        return;
    cpu_share_shortfall(&cs->cohort, cs->most, shortfall);
    while (best < cs->most && shortfall[best] > 1e-9)
        best++;
    if (!cpu_share_shift_past(cs->shift_up, cs->most, best) &&
        !cpu_share_shift_past(cs->shift_down, cs->most, best))
        return;
    /* what was learnt of the old work says nothing of the new: every
     * average and finding goes.  n's history stays, and so do the ended
     * ones still pending and those running: they are counted with the
     * new work as they come, though the oldest of them are of the old */
    memset(&cs->cohort, 0, sizeof cs->cohort);
    memset(&cs->prompt, 0, sizeof cs->prompt);
    memset(cs->shift_up, 0, sizeof cs->shift_up);
    memset(cs->shift_down, 0, sizeof cs->shift_down);
    cs->slots = cs->least = cs->most_plausible = 0;
    cs->over = cs->under = 0;
    cs->recent_count = 0;
    cs->shifts++;
}

/* Counts the ended syntheses that no older one is still running before. */
static inline void cpu_share_flush(struct cpu_share *cs)
{
    uint64_t oldest = cs->start_count > 0 ? cs->start_t[cs->start_first] : UINT64_MAX;
    unsigned i = 0, counted = 0;

    while (i < cs->npending) {
        if (cs->pending[i].start < oldest) {
            cpu_share_count(cs, &cs->cohort, &cs->pending[i]);
            cs->pending[i] = cs->pending[--cs->npending];
            counted++;
        } else {
            i++;
        }
    }
    if (counted) {
        cpu_share_shift(cs);
        cpu_share_decide(cs);
    }
}

/* Makes room for one more that ended: counts the one that started first,
 * which is the least biased to count early. */
static inline void cpu_share_make_room(struct cpu_share *cs)
{
    unsigned first = 0;

    for (unsigned i = 1; i < cs->npending; i++)
        if (cs->pending[i].start < cs->pending[first].start)
            first = i;
    cpu_share_count(cs, &cs->cohort, &cs->pending[first]);
    cs->pending[first] = cs->pending[--cs->npending];
    cpu_share_shift(cs);
    cpu_share_decide(cs);
}

/* After every event: what started, what ended (each that ended together
 * took the mean), what failed, and n. */
static inline void cpu_share_update(struct cpu_share *cs, const struct cupace_signals *s)
{
    uint64_t started = s->dispatched - cs->last_dispatched;
    uint64_t ended = s->synth_done - cs->last_done;
    uint64_t expect;

    if (s->dispatched < cs->last_dispatched || s->synth_done < cs->last_done ||
        s->synth_ns_total < cs->last_ns_total)
        started = ended = 0;        /* counters went back: not ours to read */
    for (uint64_t i = 0; i < started && i < CPU_SHARE_STARTS; i++)
        cpu_share_started(cs, s->now_ns);
    if (ended > 0) {
        uint64_t d = (s->synth_ns_total - cs->last_ns_total) / ended;
        for (uint64_t i = 0; i < ended && i < CPU_SHARE_PENDING; i++) {
            struct cpu_share_ended e = { s->now_ns > d ? s->now_ns - d : 0, s->now_ns };
            cpu_share_start_ends(cs, e.start, 0);
            cpu_share_count(cs, &cs->prompt, &e);
            if (cs->npending == CPU_SHARE_PENDING)
                cpu_share_make_room(cs);
            cs->pending[cs->npending++] = e;
            cs->recent[cs->recent_head] = e;
            cs->recent_head = (cs->recent_head + 1) % CPU_SHARE_RECENT;
            if (cs->recent_count < CPU_SHARE_RECENT)
                cs->recent_count++;
        }
    }
    /* in synthesis fell by more than what ended: syntheses failed */
    expect = cs->last_in_synthesis + started;
    expect = expect > ended ? expect - ended : 0;
    for (uint64_t i = s->in_synthesis; i < expect && i - s->in_synthesis < CPU_SHARE_STARTS; i++)
        cpu_share_start_ends(cs, 0, 1);
    cs->last_dispatched = s->dispatched;
    cs->last_done = s->synth_done;
    cs->last_ns_total = s->synth_ns_total;
    cs->last_in_synthesis = s->in_synthesis;
    if (ended > 0) {
        cpu_share_decide_least(cs);
        cpu_share_flush(cs);
    }
    cpu_share_step(cs, s->now_ns, s->in_synthesis);
}

/* The work a synthesis did from t0 to t1 with c slots, in ns at full
 * speed; in *before, the part of it done before t_d; and the log of the
 * rate it ran at as t1 neared (over the last thousandth, as in
 * cpu_share_count).  -1 where the history of n does not reach back to t0. */
static inline double cpu_share_work(const struct cpu_share *cs, unsigned c, uint64_t t0,
                                    uint64_t t1, uint64_t t_d, double *before, double *log_rate)
{
    double w = 0, end = (double)t1, start = (double)t0, late = end - (end - start) / 1024;
    double split = (double)t_d;
    int rated = 0;

    *before = 0;

    for (unsigned k = 0; k < cs->seg_count; k++) {
        unsigned i = (cs->seg_head + CPU_SHARE_HIST - 1 - k) % CPU_SHARE_HIST;
        double from = (double)cs->seg_t[i], a = from > start ? from : start;
        uint32_t n = cs->seg_n[i] ? cs->seg_n[i] : 1;
        double r = n > c ? (double)c / n : 1;

        if (from >= end)
            continue;
        if (!rated && from <= late) {
            *log_rate = log(r);
            rated = 1;
        }
        if (end > a)
            w += (end - a) * r;
        if (split > a)
            *before += ((split < end ? split : end) - a) * r;
        end = from;
        if (from <= start)
            return w;
    }
    return -1;
}

/* log P(Z > a) for a standard normal Z; its tail where erfc underflows */
static inline double cpu_share_log_sf(double a)
{
    if (a < 8)
        return log(0.5 * erfc(a / 1.4142135623730951));
    return -0.5 * a * a - log(a * 2.5066282746310002);
}

/* The log-likelihood of one synthesis that started at `from` under c
 * slots, its log work normal with the cohort's mean and spread under c: if
 * it ended at `to`, the density of its duration; if it still runs at `to`,
 * the chance that it runs so long; either given that it was running at
 * t_d, where it started before.  NAN where the history does not reach. */
static inline double cpu_share_loglik(const struct cpu_share *cs, unsigned c, uint64_t from,
                                      uint64_t to, int ended, uint64_t t_d)
{
    double mu = cs->cohort.lw[c], var = cs->cohort.lw2[c] - mu * mu;
    double sd = sqrt(var > 1e-4 ? var : 1e-4), lr = 0, w0;
    double w = cpu_share_work(cs, c, from, to, t_d, &w0, &lr);
    double a, l;

    if (!(w > 0))
        return NAN;
    a = (log(w) - mu) / sd;
    l = ended ? -0.5 * a * a - log(sd) + lr - log(w) : cpu_share_log_sf(a);
    if (w0 > 0)
        l -= cpu_share_log_sf((log(w0) - mu) / sd);
    return l;
}

/* How much likelier c1 slots are than c0 (in nats), on every synthesis
 * that ran at or after t_d: a test of whether letting n fall at t_d sped
 * them up.  Each synthesis counts for as much of its life as it spent
 * after t_d, which weighs far more of them than those that lived all at
 * the new level.  One that still runs counts by its having run so long:
 * counted only once they end, the first to end are the short ones, which
 * reads as sped up.  NAN while the cohort knows too little, or where the
 * ring has lost some that ended since t_d. */
static inline double cpu_share_llr(const struct cpu_share *cs, uint64_t t_d, uint64_t now,
                                   unsigned c0, unsigned c1)
{
    double sum = 0;

    if (cs->cohort.samples < 8 || c0 < 1 || c1 < 1 || c0 > cs->most || c1 > cs->most ||
        (cs->recent_count == CPU_SHARE_RECENT && cs->recent[cs->recent_head].end > t_d))
        return NAN;
    for (unsigned k = 0; k < cs->recent_count + cs->start_count; k++) {
        uint64_t from, to;
        int ended = k < cs->recent_count;
        double l0, l1;

        if (ended) {
            const struct cpu_share_ended *e =
                &cs->recent[(cs->recent_head + CPU_SHARE_RECENT - 1 - k) % CPU_SHARE_RECENT];

            from = e->start;
            to = e->end;
        } else {
            unsigned i = (cs->start_first + k - cs->recent_count) % CPU_SHARE_STARTS;

            if (cs->start_done[i])
                continue;
            from = cs->start_t[i];
            to = now;
        }
        if (to <= t_d || to <= from)
            continue;
        l0 = cpu_share_loglik(cs, c0, from, to, ended, t_d);
        l1 = cpu_share_loglik(cs, c1, from, to, ended, t_d);
        if (isfinite(l0) && isfinite(l1))
            sum += l1 - l0;
    }
    return sum;
}

/* The mean synthesis time unstretched, once the limit is located; 0 if not. */
static inline double cpu_share_work_ns(const struct cpu_share *cs)
{
    return cs->over && cs->under ? cs->cohort.w[cs->slots] : 0;
}

#endif
