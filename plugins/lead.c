/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * lead -- pace to the limit of Little's law: keep exactly what the GPUs will
 * consume during one synthesis in the pipeline, plus a safety stock sized
 * from measured jitter, and nothing more.
 *
 * This is a base-stock policy from inventory control.  The inventory
 * position is what is synthesized and waiting plus what is in synthesis;
 * a partition dispatched now joins the GPU queue one synthesis time L
 * later, while the GPUs consume mu partitions per second.  So the position
 * that keeps them fed is B = mu x L + safety, and each partition the GPUs
 * take is replaced by one dispatch.  Memory above Little's-law floor is
 * then only the safety stock (and the device lock's own queue).
 *
 * The signals and what each one is for:
 *  - Consumption rate mu.  Where kernels are device-exclusive the device
 *    time per completion K (Δgpu_device_ns_total / Δgpu_done) gives the
 *    capacity D/K, without prep and epilogue (which overlap another
 *    worker's kernel) inflating it.  The worker processing time P
 *    (Δgpu_ns_total / Δgpu_done) gives the workers' own capacity W/P; mu is
 *    the smaller.  Kernels that overlap (gpu_exclusive = no) show as more
 *    device time than wall time per device; once seen, D/K is dropped.
 *  - App-limited samples (as in BBR).  A P sample taken while a worker sat
 *    idle with nothing waiting measured a GPU that was not kept busy: it
 *    lacks the queueing for the device lock, the contention of a busy
 *    neighbour.  Such a sample may raise the rate W/P, never lower it.
 *  - Synthesis lead L: Δsynth_ns_total / Δsynth_done.  Syntheses share the
 *    CPU (processor sharing), so oversubscribing it stretches L and with it
 *    B, which would hold the extra syntheses in place.  L is therefore the
 *    lowest per-epoch mean of the last few epochs (an epoch is about one
 *    synthesis), the lead an unstretched CPU gives, like BBR's min RTT.
 *    Epochs count only once the first fill has all ended: it started
 *    together, and its short syntheses end first.
 *  - The CPU's slots c (cpu_share.h): syntheses sharing too few CPUs all
 *    slow down, so past c a dispatch adds memory and no throughput.  How
 *    their times stretch with the number in synthesis says how many the CPU
 *    runs at full speed; once that is known, no more than c are started
 *    (while the GPUs starve at c, as many as the data leave plausible:
 *    n held under c would show nothing against it), and L is at most the
 *    mean synthesis time unstretched.  When the data
 *    only say "at most" (n never fell below the limit) and the GPUs idle
 *    with nothing waiting while work is pending, which is when the CPU is
 *    the bottleneck and a synthesis more buys nothing, it lets n fall
 *    until they say more.
 *    An operator who knows the slots can say them (`slots`): then no more
 *    are started from the first dispatch on, before any synthesis ends.
 *    Where the work itself shifts (a step in synthesis time that no change
 *    of n explains), the fit and the probe start over (probe_forget).
 *  - Safety stock: z standard deviations of the partitions that arrive
 *    during one lead.  Dispatches spaced 1/mu apart with lead times of
 *    spread sigma_S give that count a variance of mu sigma_S / sqrt(pi);
 *    GPU times of spread cv add mu L cv^2.  Not a fixed queue target.
 *  - Recovery: after an idle gap (or any drain) the position is far below
 *    B, and the whole gap is dispatched at once rather than paced.
 *  - The end of the work (the_last): arrivals, pending + dispatched, and
 *    the instants they came at.  The safety stock counts on a late
 *    synthesis being covered by the ones behind it; the last partitions
 *    of a backlog, or of a burst, have none, so they leave as soon as they
 *    are needed within a synthesis's high quantile (counted from when the
 *    first synthesis ends, after an empty pipeline, and at the CPU's rate
 *    where it is the slower; for a backlog, at the workers' W/P where that
 *    is the faster, since starved GPUs never show kernels that share a
 *    device; while the first fill is still ending, at a spread of at
 *    least cv 0.3, since its first to end are its short ones).
 *
 * Within one partition of B it paces at 1/mu; above B it holds until the
 * GPUs take one.  Until the first GPU completion nothing is known and it
 * dispatches as fast as memory and the engine's slots allow (and no more
 * than `slots`, if told), but for a queue that outlasts a synthesis
 * (queue_outlasts).
 */
#include <math.h>
#include <stdio.h>

#include "cpu_share.h"
#include "pace_util.h"

#define EPOCHS 4                    /* the lead's min filter spans this many epochs */
#define INV_SQRT_PI 0.5641895835
/* The synthesis time is jittery (cv 0.15 in the PoRep model) and the
 * target needs its mean, not the latest: an EMA over about 20 syntheses,
 * a plain mean of the first 20.  Started at the first to end, the EMA
 * kept a third of it after 20: the first to end is the fill's shortest,
 * and on synth-bound.ini it read the first 20 as 77-80 s where they took
 * 83-87 s on average (seeds 3, 6, 8, 12), against which a level of 14
 * on 18 that ran 64-68 s looked no faster (seeds 3, 8 and 12 held 1.86
 * to 2.76 of the bound; 1.55 so). */
#define SYNTH_ALPHA 0.05
/* The probe's level is known once this many syntheses lived all at it:
 * one alone says little against the spread of synthesis times. */
#define LEVEL_SEEN 3
/* The verdict on a level is a likelihood ratio (cpu_share_llr): "the
 * level ran faster" over "it did not", in nats.  Above LEVEL_SPED it did:
 * in doubt it says not, since a level held below the limit idles CPUs and
 * one held above it only costs memory (at 0, a held-out 8 CPUs under 8
 * syntheses at cv 0.3 drained on past them on chance verdicts, 1.050 of
 * greedy's makespan over 40 seeds; at 1, synth-bound held 1.505 of the
 * bound over 300 seeds; 1.043 and 1.483 so).  Past LEVEL_CLEAR either way
 * the level has said what it can, and need not wait for LEVEL_SEEN. */
#define LEVEL_SPED 0.5
#define LEVEL_CLEAR 4.0
/* A drain needs at least this many rounds of synthesis pending (see
 * probe_holds). */
#define PROBE_ROUNDS 8
/* A first drain by a step of the spread (drain_step) needs this many
 * steps pending: on a CPU that was not full it idles one step for about
 * a synthesis, at most 1% of the work left. */
#define STEP_COST 100
/* Whether more work is coming is judged on the latest this many instants
 * work arrived at: a daemon that idled over a weekend is as busy as the
 * arrivals since then say, not as the mean since it started (which read
 * every job after the weekend as the last of the work). */
#define ARRIVALS_KEPT 32
/* Arrivals this close, in syntheses, are one: a client that submits a
 * burst job by job, each at its own instant. */
#define ARRIVALS_APART 0.01
/* A stream has ended where none arrived for this many of its mean gaps
 * (a Poisson stream goes that quiet by chance once in e^4), and for this
 * share of the horizon: at a whole horizon, the high quantile of a
 * synthesis (several means at cv 0.5), the last of a held-out stream
 * still waited long after it had ended (1.049 of greedy's makespan over
 * 6 seeds; 1.036 so). */
#define QUIET_GAPS 4.0
#define QUIET_HORIZON 0.25
/* Past the cap, the end of a stream goes at once only where the GPUs
 * take all of it within this share of a synthesis (gpus_take_at_once). */
#define GPU_TAIL 0.25
/* The cap admits the most slots the data do not refute where the GPUs
 * were short of feed at it for this share of about the latest synthesis
 * (cap_to_start). */
#define CAP_STARVED 0.2
#define CAP_FEW 2                   /* caps this low are looked above (cap_to_start) */

struct lead_state {
    double alpha;                   /* EMA gain of GPU times, per device's completion */
    double z;                       /* safety stock, in standard deviations */
    uint64_t slots;                 /* the CPU's synthesis slots if told; 0: learnt */
    /* GPU */
    double proc_ns, dev_ns;
    double batch_var;               /* spread of device time, from batch means (below) */
    uint64_t batch_done, batch_ns;  /* the batch being gathered */
    double batch_mean;
    int have_gpu, overlap, app_limited, gpu_started;
    uint64_t t_gpu0, last_done, last_gpu_ns, last_dev_ns;
    /* synthesis */
    double synth_ns, synth_var;
    uint64_t synth_count;           /* syntheses ended */
    int have_synth;
    uint64_t last_synth_done, last_synth_ns;
    /* epochs of about one synthesis: their mean lead */
    uint64_t ep_t0, ep_done0, ep_ns0;
    uint64_t ep_most, ep_most_prev; /* the most in synthesis in this epoch and the last */
    uint64_t first_fill;            /* dispatched when the first synthesis ended */
    double ep_lead[EPOCHS];
    unsigned nep, ep_next;
    struct cpu_share cpu;
    unsigned cpu_shifts;            /* the work's shifts the probe has started over after */
    /* the CPU probe (probe_holds) */
    double starved;                 /* the share of about the last synthesis short of feed */
    uint64_t last_now;
    int was_short;
    uint64_t drain_from;            /* n when the drain now began; 0: none */
    uint64_t drain_to;              /* and the level it goes to */
    uint64_t drain_end, drain_level;/* when the last ended, and at what n */
    int level_seen;                 /* syntheses that lived all at that level and ended */
    double level_ns;                /* their total time */
    double drain_ns;                /* what the last drain's level is judged against */
    int drain_k;                    /* the mean time of how many syntheses */
    uint64_t drained_from;          /* and n then */
    int level_sped;                 /* the verdict on the level before it */
    uint64_t level_t0;              /* when the drain to the level began */
    double level_llr;               /* its verdict in nats (LEVEL_SPED); NAN: none yet,
                                     * and none for a level not below the one it left */
    uint64_t llr_done;              /* synth_done when it was last worked out */
    double fill_ns;                 /* the first fill's syntheses that ended: their time */
    uint64_t fill_k;                /* and how many */
    uint64_t fill_dispatched;       /* dispatched before any synthesis ended */
    uint64_t t_fill_last;           /* when the last of those was */
    double fill_median;             /* the time of the one that ended half the first fill */
    int ref_fill;                   /* the first level is judged against the whole fill */
    int fill_mem_full;              /* the budget was full before the first fill ended */
    /* arrivals: whether more work may come before the last ends */
    uint64_t t_first, first_batch, arrived;
    /* the latest instants work arrived at after the first, and how much
     * had arrived after the first by each: a ring, arrival_n in all */
    uint64_t arrival_t[ARRIVALS_KEPT], arrival_work[ARRIVALS_KEPT];
    unsigned arrival_n;
    uint64_t empty_at, empty_done;  /* when the pipeline was last empty, and synth_done then */
    /* what interval_ns last worked out, for describe */
    double mu, lead_ns, safety, target, position;
    uint64_t last_interval;
};

static int lead_init(void *state, const struct cupace_params *p, char *err, size_t errlen)
{
    struct lead_state *st = state;

    if (pace_alpha_init(p, 0.4, &st->alpha, err, errlen) < 0 ||
        p->get_f64(p->ctx, "safety", 3.0, &st->z) < 0 ||
        p->get_u64(p->ctx, "slots", 0, &st->slots) < 0)
        return -1;
    if (!(st->z >= 0 && st->z <= 10)) {
        snprintf(err, errlen, "safety must be from 0 to 10 standard deviations");
        return -1;
    }
    st->level_llr = NAN;
    if (st->slots > 1000000) {
        snprintf(err, errlen, "slots must be from 1 to 1000000 syntheses, or 0 to learn them");
        return -1;
    }
    return 0;
}

/* One sample of the GPU times from the completions since the last.  With
 * D devices completions come D times as often and from devices of
 * different speeds, so the gain is alpha / D: the same reaction in wall
 * time, over a mix of devices.  The jitter of device time is measured on
 * batches of one completion per worker, whose mix of devices is about the
 * same each time: what varies from batch to batch is jitter, not which
 * device finished (its variance times the batch size is a completion's). */
static void sample_gpu(struct lead_state *st, const struct cupace_signals *s)
{
    uint64_t n = s->gpu_done - st->last_done;
    double a = st->alpha / (s->num_devices ? s->num_devices : 1);
    double p, k;

    if (n == 0 || s->gpu_ns_total < st->last_gpu_ns || s->gpu_device_ns_total < st->last_dev_ns)
        return;
    p = (double)(s->gpu_ns_total - st->last_gpu_ns) / (double)n;
    k = (double)(s->gpu_device_ns_total - st->last_dev_ns) / (double)n;
    /* app-limited: may raise the rate (a shorter P), never lower it */
    if (!(st->have_gpu && st->app_limited && p > st->proc_ns))
        st->proc_ns = pace_ema(st->proc_ns, p, a, !st->have_gpu);
    st->dev_ns = pace_ema(st->dev_ns, k, a, !st->have_gpu);
    st->batch_done += n;
    st->batch_ns += s->gpu_device_ns_total - st->last_dev_ns;
    if (st->batch_done >= s->num_gpu_workers) {
        double m = (double)st->batch_ns / (double)st->batch_done;
        double d = st->batch_mean > 0 ? m - st->batch_mean : 0;
        st->batch_var = pace_ema(st->batch_var, d * d * (double)st->batch_done, st->alpha / 4,
                                 st->batch_mean == 0);
        st->batch_mean = pace_ema(st->batch_mean, m, st->alpha, st->batch_mean == 0);
        st->batch_done = st->batch_ns = 0;
    }
    st->have_gpu = 1;
    st->app_limited = 0;
    st->last_done = s->gpu_done;
    st->last_gpu_ns = s->gpu_ns_total;
    st->last_dev_ns = s->gpu_device_ns_total;
    /* more kernel time than wall time on some device: kernels overlap */
    if (s->now_ns > st->t_gpu0 &&
        (double)s->gpu_device_ns_total > 1.02 * s->num_devices * (double)(s->now_ns - st->t_gpu0))
        st->overlap = 1;
}

/* The probe's reference as the whole first fill's mean (probe_holds). */
static void refer_to_fill(struct lead_state *st)
{
    st->drain_ns = st->fill_ns / (double)st->fill_k;
    st->drain_k = (int)st->fill_k;
}

static void sample_synthesis(struct lead_state *st, const struct cupace_signals *s)
{
    uint64_t n = s->synth_done - st->last_synth_done;
    double x, d, gain;

    if (n == 0 || s->synth_ns_total < st->last_synth_ns)
        return;
    x = (double)(s->synth_ns_total - st->last_synth_ns) / (double)n;
    d = st->have_synth ? x - st->synth_ns : 0;
    /* began at or after the probe's level was reached: lived all at it */
    if (st->drain_end && st->level_seen < LEVEL_SEEN && s->now_ns >= st->drain_end &&
        (double)(s->now_ns - st->drain_end) >= x) {
        int k = n < (uint64_t)(LEVEL_SEEN - st->level_seen) ? (int)n : LEVEL_SEEN - st->level_seen;

        st->level_seen += k;
        st->level_ns += k * x;
    }
    /* the first fill's own mean, all of it as it ends (probe_holds) */
    if (st->synth_count < st->first_fill) {
        uint64_t k = n < st->first_fill - st->synth_count ? n : st->first_fill - st->synth_count;

        if (2 * st->fill_k < st->first_fill && 2 * (st->fill_k + k) >= st->first_fill)
            st->fill_median = x;
        st->fill_ns += (double)k * x;
        st->fill_k += k;
        if (st->ref_fill)
            refer_to_fill(st);
    }
    st->synth_count += n;
    gain = (double)n / (double)st->synth_count;     /* a plain mean of the first */
    if (gain < SYNTH_ALPHA)
        gain = SYNTH_ALPHA;
    /* as an increment, which is exact where every synthesis takes as long:
     * a mean off by a rounding error is a spread, and a safety stock */
    st->synth_ns = st->have_synth ? st->synth_ns + gain * d : x;
    st->synth_var = pace_ema(st->synth_var, d * d, SYNTH_ALPHA, !st->have_synth);
    st->have_synth = 1;
    st->last_synth_done = s->synth_done;
    st->last_synth_ns = s->synth_ns_total;
}

/* Closes an epoch once it has lasted one synthesis and seen one end. */
static void epoch(struct lead_state *st, const struct cupace_signals *s)
{
    uint64_t done = s->synth_done - st->ep_done0;
    double span = (double)(s->now_ns - st->ep_t0);

    if (!st->have_gpu || span < st->synth_ns)
        return;
    /* the first fill started together, and its first to end are its
     * short ones: an epoch is a fair sample only once all of it ended */
    if (done > 0 && st->ep_t0 > 0 && s->synth_done + s->failed >= st->first_fill) {
        st->ep_lead[st->ep_next] = (double)(s->synth_ns_total - st->ep_ns0) / (double)done;
        st->ep_next = (st->ep_next + 1) % EPOCHS;
        if (st->nep < EPOCHS)
            st->nep++;
    }
    st->ep_most_prev = st->ep_most;
    st->ep_most = s->in_synthesis;
    st->ep_t0 = s->now_ns;
    st->ep_done0 = s->synth_done;
    st->ep_ns0 = s->synth_ns_total;
}

/* The memory budget has no room for one partition more: what starves the
 * GPUs then is the budget, which fewer syntheses would not help (the
 * mean partition held stands for the next one's size). */
static int memory_full(const struct cupace_signals *s)
{
    uint64_t held = s->in_synthesis + s->waiting + s->gpu_busy_workers;

    return held > 0 && (s->mem_reserved > s->mem_budget ||
                        s->mem_budget - s->mem_reserved < s->mem_reserved / held);
}

/* The memory budget has room for K partitions more.  A partition's size
 * is what those in synthesis and waiting hold on average: those on a GPU
 * may have released most of theirs at the kernel, and counted in, they
 * made a new one look a third smaller than it is. */
static int room_for(const struct cupace_signals *s, uint64_t k)
{
    uint64_t held = s->in_synthesis + s->waiting;

    if (held == 0)
        return 1;
    return s->mem_reserved <= s->mem_budget &&
           (double)(s->mem_budget - s->mem_reserved) >=
               (double)k * ((double)s->mem_reserved / (double)held);
}

/* The GPUs idle with nothing waiting while work is pending: the pipeline
 * is short of feed, and if n stays as it is the CPU is the bottleneck. */
static int short_of_feed(const struct cupace_signals *s)
{
    return s->pending > 0 && s->waiting == 0 && s->gpu_busy_workers < s->num_gpu_workers;
}

/* The work itself shifted (cpu_share_shift): what the probe learnt of
 * levels and drains was of the old work.  Faster syntheses read as a level
 * that sped up, and the probe drained 14 in synthesis to 7 on 12 CPUs; a
 * lead read of old and new work alike is neither's. */
static void probe_forget(struct lead_state *st)
{
    st->drain_from = st->drain_to = 0;
    st->drain_end = st->drain_level = st->drained_from = 0;
    st->level_seen = 0;
    st->level_ns = 0;
    st->level_sped = 0;
    st->level_llr = NAN;
    st->llr_done = 0;
    st->nep = st->ep_next = 0;      /* the lead's epochs were of the old work */
    st->starved = 0;
}

static void lead_update(void *state, const struct cupace_signals *s)
{
    struct lead_state *st = state;

    if (!st->gpu_started && s->gpu_busy_workers > 0) {
        st->gpu_started = 1;
        st->t_gpu0 = s->now_ns;
    }
    if (!s->synth_done && s->dispatched > st->fill_dispatched) {
        st->fill_dispatched = s->dispatched;
        st->t_fill_last = s->now_ns;
    }
    if (!st->first_fill && s->synth_done > 0)
        st->first_fill = s->dispatched;     /* what was started before any ended */
    if (st->synth_count < st->first_fill || !st->first_fill)
        st->fill_mem_full |= memory_full(s);
    sample_gpu(st, s);
    sample_synthesis(st, s);
    epoch(st, s);
    cpu_share_update(&st->cpu, s);
    if (st->cpu.shifts != st->cpu_shifts) {
        st->cpu_shifts = st->cpu.shifts;
        probe_forget(st);
    }
    /* the level's verdict, at every end while n is held at it or since */
    if (st->drain_end && !st->drain_from && st->drained_from > st->drain_level &&
        s->synth_done != st->llr_done) {
        st->level_llr = cpu_share_llr(&st->cpu, st->level_t0, s->now_ns, (unsigned)st->drained_from,
                                      (unsigned)st->drain_level);
        st->llr_done = s->synth_done;
    }
    if (s->in_synthesis > st->ep_most)
        st->ep_most = s->in_synthesis;
    /* short of feed over about one synthesis, not at an instant: a partition
     * that just arrived makes the GPU queue non-empty for a moment */
    if (st->have_gpu && st->have_synth && st->synth_ns > 0 && s->now_ns > st->last_now) {
        double k = exp(-(double)(s->now_ns - st->last_now) / st->synth_ns);
        st->starved = st->starved * k + (st->was_short ? 1 - k : 0);
    }
    st->last_now = s->now_ns;
    /* short of feed for want of synthesis, the probe's cue, only while lead
     * wants more at once: not where its own target held back (an early
     * lead too short) or the memory budget did.  Read as the CPU's, these
     * drained 42 in synthesis to 18 on 48 CPUs (1.17 of greedy's makespan) */
    st->was_short = short_of_feed(s) && (double)(s->waiting + s->in_synthesis) + 1 < st->target &&
                    !memory_full(s);
    if (st->first_batch && s->pending + s->dispatched > st->arrived && s->now_ns > st->t_first) {
        unsigned last = (st->arrival_n + ARRIVALS_KEPT - 1) % ARRIVALS_KEPT;

        if (!st->arrival_n ||
            (double)(s->now_ns - st->arrival_t[last]) > ARRIVALS_APART * st->synth_ns) {
            last = st->arrival_n++ % ARRIVALS_KEPT;
            st->arrival_t[last] = s->now_ns;    /* when the group began */
        }
        st->arrival_work[last] = s->pending + s->dispatched - st->first_batch;
    }
    st->arrived = s->pending + s->dispatched;
    if (s->in_synthesis + s->waiting + s->gpu_busy_workers == 0) {
        st->empty_at = s->now_ns;
        st->empty_done = s->synth_done;
    }
    if (st->arrived > 0 && !st->first_batch)
        st->t_first = s->now_ns;
    if (st->arrived > 0 && s->now_ns == st->t_first)
        st->first_batch = st->arrived;
    if (s->waiting == 0 && s->gpu_busy_workers < s->num_gpu_workers)
        st->app_limited = 1;
}

/* The workers' own capacity W/P, partitions per ns: what the GPUs take
 * where kernels share a device. */
static double workers_rate(const struct lead_state *st, const struct cupace_signals *s)
{
    return s->num_gpu_workers / st->proc_ns;
}

/* The GPUs' consumption rate, partitions per ns (see the header): W/P,
 * or D/K where that is the smaller and no kernels were seen to overlap. */
static double gpu_rate(const struct lead_state *st, const struct cupace_signals *s)
{
    double w = workers_rate(st, s);
    double d = s->num_devices / st->dev_ns;

    return st->overlap || !(d < w) ? w : d;
}

/* The most syntheses worth running: the CPU's slots where the data place
 * them.  Where they only bound them from above, that bound, but not below
 * the level the probe is testing: the syntheses that lived at it are
 * counted only once the older ones end, and until then the bound follows
 * every dip of n, down past the limit. */
static int cpu_under(const struct lead_state *st);

static uint64_t cap(const struct lead_state *st)
{
    if (st->slots)
        return st->slots;
    if (!st->cpu.slots)
        return UINT64_MAX;
    if (!cpu_under(st) && st->drain_level > st->cpu.slots)
        return st->drain_level;
    return st->cpu.slots;
}

/* The most syntheses to start now: the cap, or, where the GPUs have been
 * short of feed at it for a fifth of about the latest synthesis, the most
 * slots the data do not refute.  The cap is the data's pick, and n held
 * under it shows nothing against it: a held-out 5 CPUs under 8 syntheses
 * of cv 0.5 was capped at 4 for 1200 s while the GPUs starved (1.175 of
 * greedy's makespan; 1.071 so).  Where the pick is right, the syntheses
 * that the ones above it stretch soon refute them. */
static uint64_t cap_to_start(const struct lead_state *st)
{
    uint64_t c = cap(st);

    if (st->slots || c != st->cpu.slots || !(st->starved > CAP_STARVED))
        return c;
    if (st->cpu.most_plausible > c)
        return st->cpu.most_plausible;
    /* a cap of one or two, only bounded from above, is a third of the CPU
     * or more if wrong, and none above it is plausible to the data that
     * set it: but data from before a shift in the work mislead.  Bursts of
     * 25 on 3 CPUs whose synthesis halved in the first one's tail read as
     * one slot, and the next burst ran one at a time while the GPUs starved
     * (1.145 of greedy's makespan over 4 seeds); one more, which the data
     * soon refute where the cap is right, 1.072 */
    if (c <= CAP_FEW && !cpu_under(st))
        return c + 1;
    return c;
}

/* The slots are known: told, or placed by the data (not only bounded). */
static int slots_known(const struct lead_state *st)
{
    return st->slots || (st->cpu.over && cpu_under(st));
}

/* Whether the probe's last level ran faster than the level it left.  The
 * verdict is the likelihood ratio of the level's n against the n it was
 * drained from as the CPU's slots (cpu_share_llr), over every synthesis
 * that ran since the drain began, those still running included: on
 * synth-bound.ini's first level, when three syntheses that lived all at
 * it have ended, it reads 7.1 nats on average (sd 5.3, over 0 on 94 of
 * 100 seeds), and -7.2 on its twin with 18 CPUs (over 0 on 4).  Where it
 * is not known (the cohort too young, or the history lost), the mean of
 * those three against the level before: nearer the level's share of their
 * time (stretched, each ran at c / n) than the same time (not), by one
 * standard error of the difference, with the spread the relative one
 * (stretching scales the times).  Either way, in doubt it says not: a
 * level held below the limit idles CPUs, one held above it only costs
 * memory. */
static int level_sped_up(const struct lead_state *st)
{
    double share = st->drained_from ? (double)st->drain_level / (double)st->drained_from : 1;
    double mean, mid, cv2, se;

    if (isfinite(st->level_llr))
        return st->level_llr > LEVEL_SPED;
    if (st->level_seen <= 0 || !(st->drain_ns > 0) || st->drain_k <= 0 || !(st->synth_ns > 0))
        return 0;
    mean = st->level_ns / st->level_seen;
    mid = st->drain_ns * (1 + share) / 2;
    cv2 = st->synth_var / (st->synth_ns * st->synth_ns);
    se = sqrt(cv2 * (mean * mean / st->level_seen + st->drain_ns * st->drain_ns / st->drain_k));
    return mean + se < mid;
}

/* The level has said what it can: LEVEL_SEEN syntheses that lived all at
 * it have ended, or its verdict is clear already, which it often is
 * before the first of them ends: most of the evidence is in those that
 * were running when the drain began.  Every level held until three had
 * ended, synth-bound held 1.506 of the bound over 100 seeds; 1.491 so. */
static int level_done(const struct lead_state *st)
{
    return st->level_seen >= LEVEL_SEEN ||
           (isfinite(st->level_llr) && fabs(st->level_llr) >= LEVEL_CLEAR);
}

/* The probe's last level is behind it: no drain on its way, and the
 * level done. */
static int level_over(const struct lead_state *st)
{
    return !st->drain_from && st->drain_end && level_done(st);
}

/* The data's "some ran unstretched" (cpu_share.h), unless the probe's
 * latest level showed its syntheses all sped up, which says the opposite
 * on the syntheses that matter: at 2 nats, tested at every end, the
 * likelihood crosses by chance now and then.  On synth-bound.ini seed 11
 * it did while a level of 11 on 6 CPUs was being gathered, right after
 * the level of 14 had run 58.8 s against 82.4 before it; read as "the
 * slots are placed", it stopped the probe at 13-15 in synthesis (2.37 of
 * the bound; 1.65 so, the makespan 1.003 and 1.008 of greedy's).  While a
 * drain is on its way, the verdict on the level it left. */
static int probe_sped(const struct lead_state *st)
{
    return level_over(st) ? level_sped_up(st) : st->level_sped;
}

/* The last level is done and its verdict says it ran faster: the next
 * drain may begin at once (probe_holds). */
static int sped_on(const struct lead_state *st)
{
    return level_over(st) && isfinite(st->level_llr) && level_sped_up(st);
}

static int cpu_under(const struct lead_state *st)
{
    return st->cpu.under && !probe_sped(st);
}

/* Whether the CPU probe holds dispatch now.  Where the GPUs have been
 * short of feed for about a synthesis, the CPU may be the bottleneck, and
 * if the data do not yet say how many slots it has, a synthesis more may
 * buy nothing.  Letting n fall shows it: the syntheses that speed up as it
 * falls (or do not) place the limit (cpu_share.h).  A batch sharing the
 * CPU ends together, so what it says comes late, and a drain all the way
 * would idle the CPU: a drain takes n down by a quarter at most (by half,
 * n would fall well below a limit between half and all of it, which is
 * where a CPU-bound pipeline usually is), n stays at that level until
 * LEVEL_SEEN syntheses that lived all at it have ended, and only then may
 * the next drain begin.  The quarter is of the most in synthesis over the
 * last epoch or two, not of n at the instant the drain begins: where a
 * batch ends together n is near none for that instant, and a level taken
 * from it held a pipeline of 50 partitions on 9 CPUs at 2 for a whole
 * synthesis (1.20 of greedy's makespan). */
/* Who asks whether the work pending is the last (the_last): the CPU
 * probe, before a drain (at the CPU's rate where it is shown the slower,
 * or for a first drain by a step: probe_holds); the cap, before it is
 * passed; or the pacing, of a burst's or a stream's last. */
enum last_asker { LAST_FOR_PROBE, LAST_FOR_PROBE_AT_CPU, LAST_FOR_CAP, LAST_FOR_PACING };

static int the_last(const struct lead_state *st, const struct cupace_signals *s,
                    enum last_asker asker);

/* The probe's first cue where starvation is certain before it shows: the
 * GPUs' rate times a synthesis is what must be in synthesis to feed them,
 * and where that is over twice what is in synthesis and waiting while
 * lead wants more, no fill the CPU can hold feeds them.  `starved` says so
 * only a synthesis or so later: the first fill ends as a wave that keeps
 * the GPU queue full for a while, and on synth-bound the first drain began
 * only at about 150 s, with 18 syntheses on 6 CPUs until then (1.66 of the
 * bound over 20 seeds; 1.49 so, the makespan 1.0056 -> 1.0062 of
 * greedy's).  Only for the first drain: the later ones have the levels'
 * verdicts.  Not where the budget capped the fill: the GPUs starve then
 * between one partition's end and the next dispatch, for want of memory
 * (150 GiB for 36 CPUs: 1.009 of greedy's makespan where it drained). */
static int starvation_certain(const struct lead_state *st, const struct cupace_signals *s)
{
    return !st->drain_end && st->have_synth && st->synth_count < st->first_fill && st->was_short &&
           !st->fill_mem_full &&
           gpu_rate(st, s) * st->synth_ns > 2.0 * (double)(s->in_synthesis + s->waiting);
}

/* the spread of synthesis times, as a squared cv, under which the first
 * drain is judged against the whole fill's mean */
#define FILL_REF_CV2 (0.25 * 0.25)

/* A first drain of no more than a quarter where synthesis is steady: a step
 * of twice the relative spread of synthesis times (at least one), which
 * three syntheses at the level tell as surely as a quarter at cv 0.125.
 * 0 where the spread is wider, or not yet seen (the first fill's first to
 * end are its short ones). */
static uint64_t drain_step(const struct lead_state *st, uint64_t high)
{
    double f;

    if (!st->first_fill || st->synth_count < st->first_fill || !(st->synth_ns > 0))
        return 0;
    f = 2 * sqrt(st->synth_var) / st->synth_ns;
    if (!(f < 0.25))
        return 0;
    return f * (double)high >= 1 ? (uint64_t)(f * (double)high) : 1;
}

/* The level n has been at, not n at an instant: a batch that ends
 * together leaves n near none for a moment.  The most in this epoch and
 * the last, since one has just begun when an epoch closes. */
static uint64_t level_of_n(const struct lead_state *st, const struct cupace_signals *s)
{
    uint64_t high = s->in_synthesis > st->ep_most ? s->in_synthesis : st->ep_most;

    return st->ep_most_prev > high ? st->ep_most_prev : high;
}

static int probe_holds(struct lead_state *st, const struct cupace_signals *s)
{
    uint64_t n = s->in_synthesis;
    /* never down to nothing: with none in synthesis no synthesis ends, and
     * the level would hold for good */
    uint64_t floor_n = st->cpu.least > 1 ? st->cpu.least : 1;
    /* a drain takes down the level n has been at */
    uint64_t high = level_of_n(st, s);
    int unsure = !slots_known(st);

    if (st->drain_from) {
        uint64_t level = st->drain_to;

        if (unsure && n > floor_n && n > level)
            return 1;
        st->drained_from = st->drain_from;
        st->drain_from = 0;
        st->drain_level = level > floor_n ? level : floor_n;
        st->ep_most = st->ep_most_prev = st->drain_level;   /* the level, from now on */
        st->drain_end = s->now_ns;
        st->level_seen = 0;
        st->level_ns = 0;
    }
    if (!unsure)
        return 0;
    if (st->drain_end && !level_done(st))
        return n >= st->drain_level && st->drain_level >= floor_n;
    /* a drain shows only what runs unstretched at fewer: once some are seen
     * to, only n above the levels seen could say more */
    /* and a drain pays only on the work still to come.  Where the CPU was
     * not full, a level idles what it drained, a quarter of n, for about
     * a synthesis: a quarter of a round of synthesis, never won back.
     * With fewer than PROBE_ROUNDS rounds pending that is over 3% of the
     * work left, and where the CPU was full what the probe saves is
     * memory for too short a time.  With a drain wherever a round was
     * pending, 94 of doc/heldout.sh's 1200 workloads of draws 1-8 ended
     * more than 1% behind greedy's makespan, up to 1.039 with as many CPUs
     * as synthesis workers and 100 partitions; 69 so.  After the
     * first, a drain needs the CPU shown oversubscribed at the level it
     * leaves: by the last level, whose syntheses ran faster than before
     * it, or where that verdict is not known, by the data (`over`).  Where
     * they did not, another drain only idles CPUs (with as many CPUs as
     * syntheses and cv 0.5 they went on down to half, 1.17-1.22 of
     * greedy's makespan).  `over` says only that n was once above the
     * limit: where it stood for the verdict, a held-out 9 CPUs under 18
     * syntheses at cv 0.5 drained on, level after level judged no faster,
     * down to 3 (1.037 of greedy's makespan over 20 seeds; 1.005 so).  A
     * level that sped up has shown the CPU oversubscribed already, and the
     * next drain begins at once: waiting for the GPUs' starvation to show
     * again let n climb back (1.515 of the bound on synth-bound over 100
     * seeds; 1.491 so).
     *
     * Whether the work pending is the last is asked at the GPUs' rate: on
     * a CPU that may not be oversubscribed, a drain where the GPUs would
     * take all that is pending within a synthesis idles CPUs near the end
     * (with the CPU's rate, held-out draws 4-42 had 258 workloads more
     * than 1% behind greedy's makespan; 243 so).  But where a level's
     * verdict said clearly (LEVEL_CLEAR) that it ran faster, the CPU is
     * the slower, and the end of the work is as near as the CPU makes it:
     * at the GPUs' rate, 8 syntheses on 2 CPUs, feeding GPUs that take a
     * round in seconds, held greedy's 4.0 times the bound all through 25
     * rounds of synthesis.  And where synthesis is steady, a first drain
     * by a step of its spread (drain_step) costs a CPU that was not full
     * so little that it may go wherever STEP_COST steps are pending, the
     * end judged at the CPU's rate too (that workload: 2.0 times the
     * bound, at greedy's makespan). */
    if (!(st->have_gpu && (st->starved > 0.5 || starvation_certain(st, s) || sped_on(st)) &&
          high > floor_n && !cpu_under(st) && !memory_full(s) &&
          (!st->drain_end || level_sped_up(st) || (st->cpu.over && !isfinite(st->level_llr)))))
        return 0;
    /* a clear verdict (LEVEL_CLEAR is above LEVEL_SPED) that it sped up.
     * Under 4 in synthesis a quarter is none: that drain would only end
     * the first drain's case, and the step of the spread may go instead */
    int shown = st->drain_end && isfinite(st->level_llr) && st->level_llr >= LEVEL_CLEAR;
    uint64_t small = st->drain_end ? 0 : drain_step(st, high), level;

    if (high >= 4 && s->pending >= PROBE_ROUNDS * high &&
        !the_last(st, s, shown ? LAST_FOR_PROBE_AT_CPU : LAST_FOR_PROBE))
        level = high - high / 4;
    else if (small && s->pending >= STEP_COST * small && !the_last(st, s, LAST_FOR_PROBE_AT_CPU))
        level = high - small;
    else
        return 0;

    /* the reference: the last level's syntheses, which lived all at
     * it; the mean of all of them lags each level (levels below the
     * limit looked sped up against it).  Before a first drain, that
     * mean, of about 1 / SYNTH_ALPHA syntheses: the latest alone are
     * the first fill's long tail where the CPU is not shared, and a
     * first level judged against them looked sped up where it was not
     * (1.05 of greedy's makespan, as many CPUs as syntheses) */
    int sped = st->drain_end && level_sped_up(st);

    /* after a level that sped up, down from it: until the slots are
     * placed nothing caps n, which climbs back between the verdict and
     * the next drain, and a drain from there tried the same level
     * again, which looked no faster than itself (with the first drain
     * begun as the fill ends, synth-bound seed 3 held 14 for good, 2.53
     * of the bound; 1.44 so).  From a level under 4 a quarter is none */
    if (sped && st->drain_level < high) {
        high = st->drain_level;
        level = high - high / 4;
        if (level == high)
            return 0;
    }
    st->level_sped = sped;
    if (st->drain_end && st->level_seen > 0) {
        st->drain_ns = st->level_ns / st->level_seen;
        st->drain_k = st->level_seen;
        st->ref_fill = 0;
    } else if (st->fill_k > 0 && st->fill_k < st->first_fill &&
               st->synth_var < FILL_REF_CV2 * st->synth_ns * st->synth_ns) {
        /* a drain begun as the fill ends: the whole fill's mean, as
         * the rest of it ends (sample_synthesis); its first to end
         * are its short ones.  Only where synthesis is steady: at cv
         * 0.5 the level's own first three to end are short ones too,
         * and against the fill's unbiased mean they looked sped up
         * (n fell to 7 with 12 CPUs) */
        st->ref_fill = 1;
        refer_to_fill(st);
    } else {
        st->drain_ns = st->synth_ns;
        st->drain_k = (int)(1 / SYNTH_ALPHA);
    }
    st->drain_from = high;
    st->drain_to = level;
    st->level_t0 = s->now_ns;
    st->level_llr = NAN;
    st->llr_done = 0;
    return n > (level > floor_n ? level : floor_n);
}

/* Whether what is pending is the last of the work, needed so soon that it
 * should leave now.  In a steady stream a synthesis that runs late is
 * covered by the others behind it, which is what the safety stock counts
 * on; the last partitions have none behind them, and the GPUs end by
 * waiting for the slowest.  The last one pending, sent now, is needed
 * about (position + pending) / rate from now: where that is sooner than
 * the z-sd quantile of a synthesis, all of it goes now.  Synthesis times
 * are skewed (a normal quantile would be 25% short at cv 0.3, and cost
 * 0.2% of makespan on a held-out workload), so the quantile is a
 * lognormal's of the measured mean and spread.
 *
 * The need is counted from when the GPUs take: after the pipeline was
 * empty none is taken until a synthesis ends, so from the low quantile
 * of the first to end (a CPU-bound pipeline also has the GPUs idle with
 * nothing waiting, but there a synthesis ends any moment).  The rate is
 * the GPUs'; for a burst, the CPU's where its slots are known and it is
 * the slower.  The end of all the work keeps the GPUs' rate: there the
 * last slots' worth is to pass the cap at once, since sharing the CPU
 * they end together (lead_interval).  Where all the work came at once
 * (a backlog), whether its last go at once is read at the workers' rate
 * W/P where that is the higher: D/K is what exclusive kernels allow, and
 * kernels that share a device show it only while the GPUs are busy,
 * which starved GPUs are not.  Read at D/K, a held-out 40 partitions on
 * 25 CPUs under 36 syntheses, 2 devices of 3 workers sharing kernels, held
 * the last back and idled CPUs (1.056 of greedy's makespan over 20 seeds
 * where proctime is at 1.000; 1.000 so).  A higher rate only sends the
 * last sooner, once; for bursts and streams it would every time (up to
 * 0.16 more of the bound on held-out streams and bursts, at the same
 * makespan).
 *
 * It is the last only where no more work is expected meanwhile, at the
 * rate work arrived at over the latest ARRIVALS_KEPT arrivals after the
 * first (none, for a backlog).  Of a burst (asked by the pacing), arrivals are
 * counted as instants, since work comes as whole jobs and a burst of
 * sixty is one arrival: counted in partitions, a burst's tail was never
 * the last and waited on the takes behind it (bursts.ini: 1.0046 of
 * greedy's makespan, 0.3% behind proctime's; 1.0018 so).  Of all the
 * work, as partitions: only there may it pass the CPU's cap or stop the
 * CPU probe, which pay back on the work to come (with both counted as
 * instants, held-out bursts on a few CPUs held up to 2.6 of the bound
 * where they held 1.5, at the same makespan).
 *
 * The rate of arrivals says more is coming long after a stream has ended:
 * a held-out 40 jobs of 10, one every 10 s on average, held the last of
 * its work back for the rate of a stream that had stopped (1.037 of
 * greedy's makespan; 1.009 so).  Where the stream has gone quiet
 * (stream_ended), the call that paces judges the last as if none were
 * to come.
 * The probe does not: there the last stop it, and held-out streams on a
 * few CPUs held up to 0.8 more of the bound, one of them 5% behind where
 * it was ahead of greedy.  Past the cap it does where the GPUs take all
 * of it at once (gpus_take_at_once): the cap held the last of a stream
 * of 20 partitions on 3 CPUs, all alike, until one ran alone (1.060 of
 * greedy's makespan over 6 seeds; 1.039 so).  Where the GPUs' tail is
 * longer, all ending together leave it alone at the end: at half a
 * synthesis, held-out streams of syntheses all alike on 3 CPUs, behind a
 * kernel of 4 s, went from 0.993 to 1.012 of greedy's makespan.
 *
 * While the first fill is still ending, the spread of synthesis is not
 * seen: its first to end are its short ones, whose spread is a fraction
 * of the fill's (cv 0.08 read where it was 0.3).  Read from them, the
 * quantile held the last 14 of a held-out 50 partitions on 36 CPUs back
 * while CPUs idled (1.070 of greedy's makespan over 6 seeds; 1.004 so).
 * Until the fill has all ended, the last that would leave now are judged
 * at a spread of at least FILL_UNSEEN_CV2; the call from the probe and
 * from the cap keeps the spread measured (at the floor too, CPU-bound
 * backlogs on a few CPUs held up to 1.4 more of the bound).  Their mean
 * is short for the same reason: at least the fill's median is, since
 * synthesis times skew right, and where fewer than half of it ended that
 * is more than the youngest of it has lived (fill_median).  Judged at the
 * mean of the short ones, a held-out 50 partitions on 36 CPUs at cv 0.5
 * held the last 14 back for 10 s of a run of 57 s for greedy (1.105 of
 * greedy's makespan over 6 seeds; 1.048 so).  Where the CPU is
 * oversubscribed, the last sent sooner slows the others: some held-out
 * backlogs that were ahead of greedy's makespan are 1.5% less so.  Read
 * for the target too, the lead rose by as much, and shipped scenarios
 * held up to 0.003 more of the bound. */
#define FILL_UNSEEN_CV2 (0.3 * 0.3)

/* Whether the N arrivals since T0 (after the first) have stopped: the
 * latest came more than QUIET_HORIZON of a HORIZON ago and more than
 * QUIET_GAPS of their mean gap ago. */
static int stream_ended(const struct lead_state *st, uint64_t now, uint64_t t0, uint64_t n,
                        double horizon)
{
    uint64_t latest;
    double quiet;

    if (n == 0)
        return 0;
    latest = st->arrival_t[(st->arrival_n + ARRIVALS_KEPT - 1) % ARRIVALS_KEPT];
    quiet = (double)(now - latest);
    return quiet > QUIET_HORIZON * horizon && quiet > QUIET_GAPS * (double)(latest - t0) / (double)n;
}

/* What the first fill's median synthesis is at least, while it is still
 * ending: where fewer than half of it ended, the age of the youngest of
 * it; after, the time of the one that ended its half.  Nothing, where no
 * update came between its dispatch and its first end (a host may call
 * update less often than ours): its age is then not known. */
static double fill_median(const struct lead_state *st, uint64_t now)
{
    if (!st->fill_dispatched)
        return 0;
    if (2 * st->fill_k < st->first_fill)
        return (double)(now - st->t_fill_last);
    return st->fill_median;
}

/* The GPUs take all that is in the pipeline and pending within
 * GPU_TAIL of a synthesis: passing the cap, the last end together with
 * those in synthesis, and the GPUs' tail is short. */
static int gpus_take_at_once(const struct lead_state *st, const struct cupace_signals *s)
{
    return (st->position + (double)s->pending) / st->mu <= GPU_TAIL * st->lead_ns;
}

static int the_last(const struct lead_state *st, const struct cupace_signals *s,
                    enum last_asker asker)
{
    int of_a_burst = asker == LAST_FOR_PACING;
    double cv2 = st->synth_ns > 0 ? st->synth_var / (st->synth_ns * st->synth_ns) : 0;
    double s2, horizon, lead = st->lead_ns;
    int filling = st->synth_count < st->first_fill;

    if (of_a_burst && filling) {
        if (cv2 < FILL_UNSEEN_CV2)
            cv2 = FILL_UNSEEN_CV2;
        if (fill_median(st, s->now_ns) > lead)
            lead = fill_median(st, s->now_ns);
    }
    s2 = log1p(cv2);
    horizon = lead * exp(st->z * sqrt(s2) - s2 / 2);
    /* mu is W/P, or D/K where that is the smaller */
    double rate = of_a_burst && !st->arrival_n ? workers_rate(st, s) : st->mu;
    int probe = asker == LAST_FOR_PROBE || asker == LAST_FOR_PROBE_AT_CPU;

    /* what is in synthesis over a synthesis: the CPU's own rate, at the
     * level of n (level_of_n), which at an instant where a batch ends
     * together reads as no rate at all */
    uint64_t level = level_of_n(st, s);

    if (asker == LAST_FOR_PROBE_AT_CPU && st->synth_ns > 0 && (double)level / st->synth_ns < rate)
        rate = (double)level / st->synth_ns;
    /* what arrived since t0: since the first, or where the ring is full
     * since its oldest */
    uint64_t t0 = st->t_first, work0 = 0, n = st->arrival_n, newest;
    double later;

    if (s->pending == 0 || s->now_ns <= st->t_first)
        return 0;
    if (n > ARRIVALS_KEPT) {
        unsigned oldest = st->arrival_n % ARRIVALS_KEPT;

        t0 = st->arrival_t[oldest];
        work0 = st->arrival_work[oldest];
        n = ARRIVALS_KEPT - 1;
    }
    newest = n ? st->arrival_work[(st->arrival_n + ARRIVALS_KEPT - 1) % ARRIVALS_KEPT] : 0;
    later = of_a_burst ? (double)n : (double)(newest - work0);
    if (s->now_ns > t0 && later / (double)(s->now_ns - t0) * horizon >= 1 &&
        !(!probe && stream_ended(st, s->now_ns, t0, n, horizon) &&
          (of_a_burst || gpus_take_at_once(st, s))))
        return 0;
    /* none ended since the pipeline was empty: nothing waits, no GPU holds one */
    if (s->synth_done == st->empty_done) {
        double first = st->lead_ns * exp(-st->z * sqrt(s2) - s2 / 2) -
                       (double)(s->now_ns - st->empty_at);

        horizon -= first > 0 ? first : 0;
    }
    if (of_a_burst && slots_known(st) && (double)cap(st) / st->lead_ns < rate)
        rate = (double)cap(st) / st->lead_ns;
    return st->position + (double)s->pending <= rate * horizon;
}

/* Before the first GPU completion: the GPU rate is not known, but it is
 * at most one partition per worker per time the first has run so far.
 * Where the partitions waiting would last a synthesis even at that rate,
 * one dispatched after the first completion still arrives before the
 * GPUs run dry, so none is until then.  A short synthesis ahead of long
 * GPU work otherwise kept dispatching until that completion: of a
 * held-out 100 partitions of 5 s synthesis on 24 CPUs, feeding one worker
 * with a kernel of 4 s, 96 were dispatched before it (40 times the bound
 * over 6 seeds; 15 so, at the same makespan). */
static int queue_outlasts(const struct lead_state *st, const struct cupace_signals *s)
{
    return st->have_synth && !st->have_gpu && st->gpu_started && s->num_gpu_workers > 0 &&
           s->now_ns > st->t_gpu0 && (double)s->waiting * (double)(s->now_ns - st->t_gpu0) >=
               (double)s->num_gpu_workers * st->synth_ns;
}

static uint64_t lead_interval(void *state, const struct cupace_signals *s)
{
    struct lead_state *st = state;
    double cv2, var, work = cpu_share_work_ns(&st->cpu);

    if (!st->have_gpu || !st->have_synth || !(st->proc_ns > 0))
        return st->last_interval = s->in_synthesis >= cap(st) || queue_outlasts(st, s)
                                       ? CUPACE_PACE_HOLD
                                       : 0;  /* nothing known yet: fill */
    st->mu = gpu_rate(st, s);
    st->lead_ns = st->synth_ns;
    for (unsigned i = 0; i < st->nep; i++)
        if (st->ep_lead[i] < st->lead_ns)
            st->lead_ns = st->ep_lead[i];
    /* the slots known, the mean unstretched time replaces a stretched
     * min, but not a lower one: where the CPU was not full the epochs saw
     * the lead unstretched already, and their min is the BBR-like reading
     * the target was made for (the mean alone held 1.27 of the bound on
     * poisson-near-capacity.ini where told the slots it held 1.22) */
    if (work > 0 && work < st->lead_ns)
        st->lead_ns = work;
    cv2 = st->dev_ns > 0 ? st->batch_var / (st->dev_ns * st->dev_ns) : 0;
    var = st->mu * sqrt(st->synth_var) * INV_SQRT_PI + st->mu * st->lead_ns * cv2;
    st->safety = st->z * sqrt(var);
    st->target = st->mu * st->lead_ns + st->safety;
    if (st->target < 1)
        st->target = 1;             /* zero-length synthesis: one in the pipe, not none */
    st->position = (double)(s->waiting + s->in_synthesis);
    /* the CPU is full; but the last slots' worth of a backlog goes at once
     * (unless told the slots: the operator's limit is a limit):
     * sharing the CPU they end together, and keep it busy to the end,
     * where capped the last to start would run alone (synth-bound: 1.010
     * of greedy's makespan, 1.005 so).  All of it, or none yet: where the
     * budget takes only some, the rest start as those end, and run alone
     * (48 CPUs under 24 syntheses all alike, 600 GiB: 1.058 of greedy's
     * makespan; 1.019 so) */
    if (s->in_synthesis >= cap_to_start(st) &&
        (st->slots ||
         !(s->pending <= cap(st) && room_for(s, s->pending) &&
           the_last(st, s, LAST_FOR_CAP))))
        return st->last_interval = CUPACE_PACE_HOLD;
    if (probe_holds(st, s))
        return st->last_interval = CUPACE_PACE_HOLD;
    if (!isfinite(st->target))
        return st->last_interval = 0;            /* zero-length work: no pacing to do */
    if (the_last(st, s, LAST_FOR_PACING))
        return st->last_interval = 0;
    if (st->position + 1 < st->target)
        return st->last_interval = 0;            /* a gap to fill: at once */
    if (st->position < st->target)
        return st->last_interval = pace_clamp_ns(1.0 / st->mu, 0, UINT64_MAX - 1);
    return st->last_interval = CUPACE_PACE_HOLD; /* full: one out, one in */
}

static int lead_describe(void *state, char *buf, size_t len)
{
    struct lead_state *st = state;

    return snprintf(buf, len, "rate_per_s=%.4g lead_s=%.4g slots=%u slots_known=%d safety=%.3g "
                    "target=%.3g position=%.3g overlap=%d interval_s=%.4g work_shifts=%u",
                    st->mu * 1e9, st->lead_ns / 1e9,
                    st->slots ? (unsigned)st->slots : st->cpu.slots,
                    slots_known(st), st->safety, st->target,
                    st->position, st->overlap,
                    st->last_interval == CUPACE_PACE_HOLD ? -1.0 : (double)st->last_interval / 1e9,
                    st->cpu.shifts);
}

const struct cupace_pacer cupace_pacer_entry = {
    .abi = CUPACE_PACER_ABI,
    .size = sizeof(struct cupace_pacer),
    .name = "lead",
    .summary = "base stock: GPU rate x synthesis lead + safety from jitter (Little's law)",
    .state_size = sizeof(struct lead_state),
    .init = lead_init,
    .update = lead_update,
    .interval_ns = lead_interval,
    .describe = lead_describe,
};
