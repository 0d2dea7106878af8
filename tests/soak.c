/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* soak.c -- `make soak`: the engine over random scenarios until time is up.
 *
 *   soak_engine SHIPPED_PLUGINS TEST_PLUGINS     (SOAK_SECONDS, default 180; SOAK_SEED, default 1)
 *
 * Each run draws a scenario (devices, workers, slots, memory, arrivals
 * backlog/poisson/burst/trace, distributions, change points, device speeds),
 * a controller instance with random keys, a seed, and injected failures
 * (fail_rate, and fail_at naming random partitions at random stages).  One
 * run in 25 is real time (emulated, durations scaled down to milliseconds);
 * one simulated run in 10 is run twice and must give the same report.  After
 * every run the invariants below are checked; a run that breaks one is
 * written to soak-fail-N.ini for replay with `cupace run`.  Not part of
 * `make check` or CI: it takes minutes by design.  Exit 1 on any violation.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "realtime.h"
#include "result.h"
#include "sim.h"
#include "workload.h"

static uint64_t rng_state;

static uint64_t next(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static uint64_t pick(uint64_t lo, uint64_t hi)
{
    return lo + next() % (hi - lo + 1);
}

static double unit(void)
{
    return (double)(next() >> 11) / 9007199254740992.0;
}

/* A duration in ms, log-uniform from 1 to max_ms. */
static unsigned long long some_ms(double max_ms)
{
    return (unsigned long long)exp2(unit() * log2(max_ms));
}

#define MAX_FAIL_AT 8
#define MAX_ROWS 4000

struct scenario {
    char ini[8192];
    size_t len;
    int realtime;
    uint64_t jobs;
    uint32_t parts[MAX_ROWS];           /* partitions of each job, in arrival order */
    uint64_t nfail_at, fail_at_jobs;    /* partitions and distinct jobs fail_at names */
    double fail_rate;
};

static void put(struct scenario *sc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct scenario *sc, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    sc->len += (size_t)vsnprintf(sc->ini + sc->len, sizeof sc->ini - sc->len, fmt, ap);
    va_end(ap);
    if (sc->len >= sizeof sc->ini) {
        fputs("soak: a scenario outgrew its buffer\n", stderr);
        exit(2);
    }
}

static const char *const dists[] = { "fixed", "lognormal", "gamma", "exponential" };

/* [pacer.soak]: one of the shipped controllers (lead mostly learning the
 * CPU's slots, now and then told them), or the test-only recorder (greedy,
 * and it checks the signal contract on every call). */
static void draw_pacer(struct scenario *sc)
{
    put(sc, "[pacer]\nname = soak\n[pacer.soak]\n");
    switch (pick(0, 5)) {
    case 0:
        put(sc, "plugin = proctime\ntarget = %llu\nkp = %.3f\nki = %.4f\nalpha = %.3f\n",
            (unsigned long long)pick(1, 16), 0.05 + 2 * unit(), 0.05 * unit(), 0.05 + 0.95 * unit());
        break;
    case 1:
        put(sc, "plugin = intercompletion\nrequire_waiting = %s\n", pick(0, 1) ? "yes" : "no");
        break;
    case 2:
        /* in real time a few ms at most: 2 s between dispatches there made
         * one run of 200 partitions take minutes */
        put(sc, "plugin = fixed\ninterval = %llums\n",
            pick(0, 1) ? some_ms(sc->realtime ? 20 : 2000) : 0ULL);
        break;
    case 3:
        put(sc, "plugin = window\nwindow = %llu\n", (unsigned long long)pick(1, 64));
        break;
    case 4:
        put(sc, "plugin = lead\nsafety = %.2f\nslots = %llu\n", 4 * unit(),
            (unsigned long long)(pick(0, 2) ? 0 : pick(1, 64)));
        break;
    default:
        put(sc, "plugin = recorder\n");
    }
}

/* The jobs: their number and partitions, and how they arrive (a trace is
 * written beside the config, rows in arrival order). */
static void draw_arrivals(struct scenario *sc, double max_ms)
{
    uint64_t ppj = pick(1, 20);
    uint64_t most = sc->realtime ? 300 : 60000;
    unsigned arrival = (unsigned)pick(0, 3);

    sc->jobs = pick(1, most / ppj < MAX_ROWS ? most / ppj : MAX_ROWS);
    for (uint64_t j = 0; j < sc->jobs; j++)
        sc->parts[j] = (uint32_t)ppj;
    put(sc, "jobs = %llu\npartitions_per_job = %llu\n", (unsigned long long)sc->jobs,
        (unsigned long long)ppj);
    if (arrival == 0) {
        put(sc, "arrival = backlog\n");
    } else if (arrival == 1) {
        put(sc, "arrival = poisson\ninterarrival = %llums\n", some_ms(max_ms));
    } else if (arrival == 2) {
        put(sc, "arrival = burst\nburst_jobs = %llu\nburst_every = %llums\n",
            (unsigned long long)pick(1, sc->jobs), some_ms(max_ms * 4));
    } else {
        FILE *fp = fopen("soak-trace.csv", "w");
        unsigned long long t = 0;

        if (!fp) {
            perror("soak-trace.csv");
            exit(2);
        }
        fputs("arrival,partitions,synth_time,gpu_kernel\n", fp);
        for (uint64_t j = 0; j < sc->jobs; j++) {
            sc->parts[j] = (uint32_t)pick(1, 20);
            if (sc->parts[j] * (j + 1) > most)
                sc->parts[j] = 1;
            t += pick(0, 1) ? some_ms(max_ms) : 0;
            fprintf(fp, "%llums,%u,", t, sc->parts[j]);
            if (pick(0, 3) == 0)
                fprintf(fp, "%llums", some_ms(max_ms));
            fputc(',', fp);
            if (pick(0, 3) == 0)
                fprintf(fp, "%llums", some_ms(max_ms / 10));
            fputc('\n', fp);
        }
        fclose(fp);
        put(sc, "arrival = trace\ntrace = soak-trace.csv\n");
    }
}

/* fail_rate half of the time; fail_at naming up to 8 distinct partitions. */
static void draw_failures(struct scenario *sc)
{
    static const char *const stages[] = { "synth", "prep", "kernel", "epilogue" };
    uint64_t job[MAX_FAIL_AT], part[MAX_FAIL_AT];
    unsigned n = (unsigned)pick(0, MAX_FAIL_AT);

    sc->fail_rate = pick(0, 1) ? 0 : 0.3 * unit();
    put(sc, "fail_rate = %.4f\n", sc->fail_rate);
    sc->nfail_at = sc->fail_at_jobs = 0;
    for (unsigned i = 0; i < n; i++) {
        uint64_t j = pick(0, sc->jobs - 1), p = pick(0, sc->parts[j] - 1);
        int seen_part = 0, seen_job = 0;

        for (unsigned k = 0; k < sc->nfail_at; k++) {
            seen_part |= job[k] == j && part[k] == p;
            seen_job |= job[k] == j;
        }
        if (seen_part)
            continue;
        put(sc, "%s%llu:%llu:%s", sc->nfail_at ? ", " : "fail_at = ", (unsigned long long)j,
            (unsigned long long)p, stages[pick(0, 3)]);
        job[sc->nfail_at] = j;
        part[sc->nfail_at++] = p;
        sc->fail_at_jobs += !seen_job;
    }
    if (sc->nfail_at)
        put(sc, "\n");
}

static void draw(struct scenario *sc, int realtime)
{
    uint64_t devices = pick(1, 8), pmem = pick(1, 16384), slots = pick(1, 64);
    double max_ms = realtime ? 50 : 1200000;    /* real time: milliseconds, at time_scale 0.1 */

    memset(sc, 0, sizeof *sc);
    sc->realtime = realtime;
    draw_pacer(sc);
    put(sc, "[engine]\nmode = %s\n%sdevices = %llu\nworkers_per_device = %llu\n"
        "synth_workers = %llu\nmemory_budget = %lluMiB\nseed = %llu\n",
        realtime ? "realtime" : "sim", realtime ? "backend = emulated\n" : "",
        (unsigned long long)devices, (unsigned long long)pick(1, 4), (unsigned long long)slots,
        (unsigned long long)(pmem * pick(1, 64)), (unsigned long long)pick(0, 1000000));
    put(sc, "[workload]\npartition_memory = %lluMiB\nrelease_at_kernel = %lluMiB\n",
        (unsigned long long)pmem, (unsigned long long)pick(0, pmem));
    draw_arrivals(sc, max_ms);
    /* now and then no synthesis time at all (lead's target was 0 there) */
    put(sc, "synth_time = %llums\nsynth_cv = %.3f\nsynth_dist = %s\ncpu_slots = %llu\n",
        pick(0, 15) ? some_ms(max_ms) : 0ULL, unit(), dists[pick(0, 3)],
        (unsigned long long)pick(1, 64));
    put(sc, "gpu_prep = %llums\ngpu_kernel = %llums\ngpu_epilogue = %llums\ngpu_cv = %.3f\n"
        "gpu_dist = %s\ngpu_exclusive = %s\ncontention = %.2f\n",
        some_ms(max_ms / 10), some_ms(max_ms / 5), some_ms(max_ms / 10), unit(),
        dists[pick(0, 3)], pick(0, 1) ? "yes" : "no", 1 + 2 * unit());
    if (devices > 1 && pick(0, 1)) {
        put(sc, "device_speed = ");
        for (uint64_t d = 0; d < devices; d++)
            put(sc, "%s%.2f", d ? "," : "", 0.25 + 2 * unit());
        put(sc, "\n");
    }
    if (pick(0, 2) == 0)
        put(sc, "change = %llums:gpu_kernel=%llums, %llums:contention=%.2f\n",
            some_ms(max_ms * 20), some_ms(max_ms / 5), some_ms(max_ms * 20), 1 + unit());
    if (realtime)
        put(sc, "time_scale = 0.1\n");
    draw_failures(sc);
}

/* ---- the invariants ---------------------------------------------------- */

static unsigned violations;

static void violated(const char *what, ...) __attribute__((format(printf, 1, 2)));

static void violated(const char *what, ...)
{
    va_list ap;

    violations++;
    fputs("soak: invariant broken: ", stderr);
    va_start(ap, what);
    vfprintf(stderr, what, ap);
    va_end(ap);
    fputc('\n', stderr);
}

#define EXPECT(cond, ...) ((cond) ? 1 : (violated(__VA_ARGS__), 0))

/* The span from the first arrival to the last, in seconds of the report. */
static double arrival_span_s(const struct cupace_config *cfg, int realtime)
{
    size_t n = cupace_workload_njobs(cfg);
    struct cupace_trace_job *jobs = calloc(n, sizeof *jobs);
    double span;

    if (!jobs)
        abort();
    cupace_workload_arrivals(cfg, jobs);
    span = (double)(jobs[n - 1].arrival_ns - jobs[0].arrival_ns) / 1e9;
    free(jobs);
    return realtime ? span * cfg->workload.time_scale : span;
}

/* Every check on one report; returns whether all held. */
static int check(const struct scenario *sc, const struct cupace_config *cfg,
                 const struct cupace_result *r)
{
    uint64_t parts = cupace_workload_partitions(cfg);
    double eps = 1e-9;
    int ok = 1;

    ok &= EXPECT(r->invariants_ok, "the engine's own invariants (invariants_ok false)");
    ok &= EXPECT(!r->stalled, "stalled: %s", r->stall_reason);
    ok &= EXPECT(r->partitions == parts && r->dispatched == parts,
                 "%llu partitions, %llu dispatched, %llu in the workload",
                 (unsigned long long)r->partitions, (unsigned long long)r->dispatched,
                 (unsigned long long)parts);
    ok &= EXPECT(r->completed + r->failed == parts, "%llu completed + %llu failed != %llu",
                 (unsigned long long)r->completed, (unsigned long long)r->failed,
                 (unsigned long long)parts);
    ok &= EXPECT(r->jobs_completed + r->jobs_failed == sc->jobs, "jobs: %llu + %llu != %llu",
                 (unsigned long long)r->jobs_completed, (unsigned long long)r->jobs_failed,
                 (unsigned long long)sc->jobs);
    ok &= EXPECT(r->failed >= sc->nfail_at && r->jobs_failed >= sc->fail_at_jobs,
                 "%llu failed (%llu jobs), fail_at names %llu (%llu jobs)",
                 (unsigned long long)r->failed, (unsigned long long)r->jobs_failed,
                 (unsigned long long)sc->nfail_at, (unsigned long long)sc->fail_at_jobs);
    if (sc->fail_rate == 0)
        ok &= EXPECT(r->failed == sc->nfail_at && r->jobs_failed == sc->fail_at_jobs,
                     "no fail_rate: %llu failed, fail_at names %llu",
                     (unsigned long long)r->failed, (unsigned long long)sc->nfail_at);
    ok &= EXPECT(r->mem_peak <= r->mem_budget && r->mem_mean <= (double)r->mem_peak * (1 + eps),
                 "memory: mean %.0f, peak %llu, budget %llu", r->mem_mean,
                 (unsigned long long)r->mem_peak, (unsigned long long)r->mem_budget);
    ok &= EXPECT(r->waiting_mean <= (double)r->waiting_max * (1 + eps) + eps &&
                 r->in_synthesis_mean <= (double)r->in_synthesis_max * (1 + eps) + eps &&
                 r->in_synthesis_max <= cfg->engine.synth_workers,
                 "means above maxima: waiting %.3f/%llu, in synthesis %.3f/%llu (slots %llu)",
                 r->waiting_mean, (unsigned long long)r->waiting_max, r->in_synthesis_mean,
                 (unsigned long long)r->in_synthesis_max,
                 (unsigned long long)cfg->engine.synth_workers);
    ok &= EXPECT(r->gpu_busy_fraction >= 0 && r->gpu_busy_fraction <= 1 + eps,
                 "gpu_busy_fraction %.6f", r->gpu_busy_fraction);
    ok &= EXPECT(r->makespan_s >= 0 && r->makespan_s + 1e-6 >= arrival_span_s(cfg, sc->realtime),
                 "makespan %.9f s before the last arrival (%.9f s after the first)",
                 r->makespan_s, arrival_span_s(cfg, sc->realtime));
    ok &= EXPECT(r->job_latency.max <= r->makespan_s * (1 + eps) + 1e-6,
                 "a job latency of %.6f s in a makespan of %.6f s", r->job_latency.max,
                 r->makespan_s);
    if (strncmp(sc->ini, "[pacer]\nname = soak\n[pacer.soak]\nplugin = recorder", 50) == 0)
        ok &= EXPECT(strstr(r->pacer_state, "broken=0") != NULL, "the signal contract: %s",
                     r->pacer_state);
    return ok;
}

/* Whether two simulated reports of one scenario are the same. */
static int same_report(const struct cupace_result *a, const struct cupace_result *b)
{
    return a->makespan_s == b->makespan_s && a->completed == b->completed &&
           a->failed == b->failed && a->mem_mean == b->mem_mean &&
           a->waiting_mean == b->waiting_mean && a->job_latency.p99 == b->job_latency.p99 &&
           a->events == b->events && strcmp(a->pacer_state, b->pacer_state) == 0;
}

/* ---- the loop ---------------------------------------------------------- */

struct totals {
    unsigned long long runs, sim, rt, partitions, completed, failed, named, events;
};

static void keep_failure(const struct scenario *sc)
{
    static unsigned kept;
    char name[64];
    const char *t = strstr(sc->ini, "trace = soak-trace.csv");
    FILE *fp;

    if (kept >= 10)
        return;
    snprintf(name, sizeof name, "soak-fail-%u.ini", ++kept);
    fp = fopen(name, "w");
    if (!fp)
        return;
    if (t) {                        /* keep its trace too */
        char line[64];

        snprintf(line, sizeof line, "soak-fail-%u.csv", kept);
        rename("soak-trace.csv", line);
        fprintf(fp, "%.*strace = %s%s", (int)(t - sc->ini), sc->ini, line,
                t + strlen("trace = soak-trace.csv"));
    } else {
        fputs(sc->ini, fp);
    }
    fclose(fp);
    fprintf(stderr, "soak: the scenario is in %s\n", name);
}

/* One scenario: run, check, and (one in ten simulated) run again. */
static int one(struct scenario *sc, struct totals *tot)
{
    struct cupace_config *cfg;
    struct cupace_pacer_instance inst;
    struct cupace_run_opts opts = { 0 };
    struct cupace_result r, again;
    struct cupace_err err;
    int rc, ok;

    if (bench_open(sc->ini, "soak", &cfg, &inst) < 0) {
        violated("a drawn scenario was refused (a bug in soak.c, or in the loader)");
        keep_failure(sc);
        return -1;
    }
    memset(&r, 0, sizeof r);
    rc = sc->realtime ? cupace_realtime(cfg, &inst, &opts, &r, &err)
                      : cupace_simulate(cfg, &inst, &opts, &r, &err);
    cupace_pacer_instance_destroy(&inst);
    if (rc < 0) {
        violated("the run could not be made: %s", err.msg);
        cupace_config_free(cfg);
        keep_failure(sc);
        return -1;
    }
    ok = check(sc, cfg, &r);
    if (ok && !sc->realtime && tot->runs % 10 == 0) {
        struct cupace_pacer_path path;

        cupace_pacer_path_init(&path, cfg);
        rc = cupace_pacer_instance_create(&inst, cfg, &path, "soak", &err);
        cupace_pacer_path_free(&path);
        memset(&again, 0, sizeof again);
        if (rc == 0 && cupace_simulate(cfg, &inst, &opts, &again, &err) == 0)
            ok &= EXPECT(same_report(&r, &again), "the same scenario gave two reports "
                         "(makespan %.9f and %.9f)", r.makespan_s, again.makespan_s);
        if (rc == 0)
            cupace_pacer_instance_destroy(&inst);
        cupace_result_free(&again);
    }
    if (!ok)
        keep_failure(sc);
    tot->runs++;
    tot->rt += sc->realtime;
    tot->sim += !sc->realtime;
    tot->partitions += r.partitions;
    tot->completed += r.completed;
    tot->failed += r.failed;
    tot->named += sc->nfail_at;
    tot->events += r.events;
    cupace_result_free(&r);
    cupace_config_free(cfg);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *secs_env = getenv("SOAK_SECONDS"), *seed_env = getenv("SOAK_SEED");
    double secs = secs_env ? atof(secs_env) : 180, t0 = bench_now(), wall;
    struct totals tot;
    struct scenario *sc = malloc(sizeof *sc);
    char path[8192];

    if (argc != 3 || !sc) {
        fputs("usage: soak_engine SHIPPED_PLUGINS TEST_PLUGINS\n", stderr);
        return 2;
    }
    /* through the environment, so that a deep build tree cannot make a
     * config line too long */
    snprintf(path, sizeof path, "%s:%s", argv[1], argv[2]);
    setenv("CUPACE_PACER_PATH", path, 1);
    rng_state = seed_env ? strtoull(seed_env, NULL, 0) : 1;
    memset(&tot, 0, sizeof tot);
    for (double report = 30; bench_now() - t0 < secs;) {
        draw(sc, tot.runs % 25 == 24);
        one(sc, &tot);
        if (bench_now() - t0 >= report) {
            fprintf(stderr, "soak: %.0f s: %llu runs, %llu partitions, %u violations\n",
                    report, tot.runs, tot.partitions, violations);
            report += 30;
        }
    }
    wall = bench_now() - t0;
    remove("soak-trace.csv");
    printf("soak: %llu runs (%llu simulated, %llu real time), %llu partitions: %llu completed, "
           "%llu failed (%llu named by fail_at); %llu simulated events; "
           "%u invariant violations; %.1f s wall\n",
           tot.runs, tot.sim, tot.rt, tot.partitions, tot.completed, tot.failed, tot.named,
           tot.events, violations, wall);
    free(sc);
    return violations ? 1 : 0;
}
