/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* bench_rt.c -- `make bench`: the real-time engine.
 *
 *  1. partitions per second through the full threaded path with zero-length
 *     stages (goal: 200k/s on 2 cores), beside the platform's own cost of
 *     one hand-off and back between two threads through a condition
 *     variable, measured in the same run: each partition crosses three
 *     threads, so this is the unit the engine's figure is made of;
 *  2. the engine's CPU use while it waits on a long synthesis (goal: ~0);
 *  3. dispatch lateness of a 1 ms fixed pacer, beside a plain
 *     clock_nanosleep(TIMER_ABSTIME) loop with the same period, measured in
 *     the same run (goal: at most 100 us above the platform's p99);
 *  4. the zero-length workload of 1 through libcupace (cupace/cupace.h: an
 *     open run, every job submitted from one thread), beside the run of the
 *     workload's own jobs, alternating in the same process (goal: within 5%).
 * This program links the shared libcupace, so both paths run the same code. */
#define _GNU_SOURCE 1
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_util.h"
#include "cupace/cupace.h"
#include "realtime.h"
#include "result.h"

static const char *plugins;

static double cpu_seconds(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int run(const char *body, const char *label, struct cupace_result *res)
{
    char ini[4096];
    struct cupace_config *cfg;
    struct cupace_pacer_instance inst;
    struct cupace_run_opts opts = { 0 };
    struct cupace_err err;
    int rc;

    snprintf(ini, sizeof ini, "[pacer]\npath = %s\n[engine]\nmode = realtime\nbackend = emulated\n%s",
             plugins, body);
    if (bench_open(ini, label, &cfg, &inst) < 0)
        return -1;
    memset(res, 0, sizeof *res);
    rc = cupace_realtime(cfg, &inst, &opts, res, &err);
    if (rc < 0)
        fprintf(stderr, "%s\n", err.msg);
    bench_close(cfg, &inst);
    return rc;
}

/* ---- the platform's hand-off: two threads taking turns through a condvar */

struct pingpong {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int turn, rounds;
};

static void *pong(void *arg)
{
    struct pingpong *pp = arg;

    pthread_mutex_lock(&pp->lock);
    for (int i = 0; i < pp->rounds; i++) {
        while (pp->turn != 1)
            pthread_cond_wait(&pp->cv, &pp->lock);
        pp->turn = 0;
        pthread_cond_signal(&pp->cv);
    }
    pthread_mutex_unlock(&pp->lock);
    return NULL;
}

/* Seconds per round trip (there and back) between two threads. */
static double condvar_round_trip(int rounds)
{
    struct pingpong pp = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, rounds };
    pthread_t t;
    double t0;

    if (pthread_create(&t, NULL, pong, &pp) != 0)
        return 0;
    t0 = bench_now();
    pthread_mutex_lock(&pp.lock);
    for (int i = 0; i < rounds; i++) {
        pp.turn = 1;
        pthread_cond_signal(&pp.cv);
        while (pp.turn != 0)
            pthread_cond_wait(&pp.cv, &pp.lock);
    }
    pthread_mutex_unlock(&pp.lock);
    t0 = bench_now() - t0;
    pthread_join(t, NULL);
    return t0 / rounds;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The zero-length workload of parts 1 and 4: 20000 jobs of 10 partitions,
 * greedy, with THREADS synthesis threads. */
static void zero_length(char *body, size_t len, int threads)
{
    snprintf(body, len,
             "synth_workers = %d\nworkers_per_device = 2\nmemory_budget = 1TiB\n"
             "[pacer.greedy]\nplugin = fixed\n"
             "[workload]\njobs = 20000\npartitions_per_job = 10\nsynth_time = 0\n"
             "gpu_prep = 0\ngpu_kernel = 0\ngpu_epilogue = 0\ngpu_exclusive = no\n"
             "cpu_slots = %d\n", threads, threads);
}

/* The zero-length workload through the library: N jobs of 10 partitions
 * submitted from this thread, then a drain.  Partitions completed, or -1. */
static long long through_library(int threads, unsigned njobs)
{
    char n[32];
    struct cupace_error *err = NULL;
    struct cupace_engine *e = cupace_engine_new(NULL, &err);
    struct cupace_job_spec spec = { .size = sizeof spec, .partitions = 10 };
    struct cupace_metrics m = { .size = sizeof m };
    const char *const sets[] = {
        "pacer.path", plugins, "pacer.name", "fixed", "engine.backend", "emulated",
        "engine.workers_per_device", "2", "engine.memory_budget", "1TiB",
        "workload.synth_time", "0", "workload.gpu_prep", "0", "workload.gpu_kernel", "0",
        "workload.gpu_epilogue", "0", "workload.gpu_exclusive", "no", NULL,
    };
    int rc = e ? 0 : -1;

    snprintf(n, sizeof n, "%d", threads);
    for (const char *const *kv = sets; rc == 0 && *kv; kv += 2)
        rc = cupace_engine_set(e, kv[0], kv[1], &err);
    if (rc == 0)
        rc = cupace_engine_set(e, "engine.synth_workers", n, &err);
    if (rc == 0)
        rc = cupace_engine_set(e, "workload.cpu_slots", n, &err);
    if (rc == 0)
        rc = cupace_engine_start(e, &err);
    for (unsigned j = 0; rc == 0 && j < njobs; j++)
        rc = cupace_engine_submit(e, &spec, NULL, &err);
    if (rc == 0) {
        cupace_engine_stop(e, CUPACE_STOP_DRAIN);
        rc = cupace_engine_join(e, &err);
        cupace_engine_metrics(e, &m);
    }
    if (rc < 0)
        fprintf(stderr, "bench_rt: libcupace: %s\n", cupace_error_message(err));
    cupace_error_free(err);
    cupace_engine_free(e);
    return rc < 0 ? -1 : (long long)m.signals.gpu_done;
}

int main(int argc, char **argv)
{
    struct cupace_result r;
    double t, c, rt_trip, lat[2000];
    struct timespec next;

    plugins = argc > 1 ? argv[1] : "../plugins/.libs";

    /* 1. throughput: 4 synthesis threads (at most 4 partitions per hand-off
     * from the dispatcher), then 64 (batches can form); three runs each */
    rt_trip = condvar_round_trip(20000);
    printf("1. zero-length stages, greedy, 2 GPU workers (goal 200000 partitions/s);\n"
           "   the platform: a condvar round trip between two threads takes %.1f us,\n"
           "   so the goal allows %.2f of them per partition\n", rt_trip * 1e6,
           1.0 / 200000 / rt_trip);
    for (int threads = 4; threads <= 64; threads *= 16) {
        char body[512];

        zero_length(body, sizeof body, threads);
        for (int rep = 0; rep < 3; rep++) {
            t = bench_now();
            if (run(body, "greedy", &r) < 0)
                return 1;
            t = bench_now() - t;
            printf("   %2d synthesis threads: %llu partitions in %.3f s = %6.0f partitions/s, "
                   "%.2f round trips each\n", threads, (unsigned long long)r.completed, t,
                   (double)r.completed / t, t / (double)r.completed / rt_trip);
        }
    }

    /* 2. idle CPU */
    t = bench_now();
    c = cpu_seconds();
    if (run("[workload]\njobs = 1\npartitions_per_job = 2\nsynth_time = 2s\nsynth_cv = 0\n"
            "gpu_kernel = 1ms\ngpu_prep = 0\ngpu_epilogue = 0\n", "fixed", &r) < 0)
        return 1;
    c = cpu_seconds() - c;
    t = bench_now() - t;
    printf("2. waiting on a 2 s synthesis: %.4f CPU-s over %.3f s wall = %.2f%% of a core\n", c, t,
           100.0 * c / t);

    /* 3. lateness: the engine, then the platform, same period */
    if (run("synth_workers = 4\nmemory_budget = 1TiB\n[pacer.ms]\nplugin = fixed\ninterval = 1ms\n"
            "[workload]\njobs = 200\npartitions_per_job = 10\nsynth_time = 0\ngpu_prep = 0\n"
            "gpu_kernel = 0\ngpu_epilogue = 0\ngpu_exclusive = no\n", "ms", &r) < 0)
        return 1;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (int i = 0; i < 2000; i++) {
        struct timespec now;
        next.tv_nsec += 1000000;
        if (next.tv_nsec >= 1000000000) {
            next.tv_nsec -= 1000000000;
            next.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
        lat[i] = (double)(now.tv_sec - next.tv_sec) + (double)(now.tv_nsec - next.tv_nsec) / 1e9;
    }
    qsort(lat, 2000, sizeof *lat, cmp);
    printf("3. dispatch lateness, 1 ms interval, 2000 dispatches (ms):\n");
    printf("   %-28s p50 %.3f  p99 %.3f  max %.3f\n", "cupace dispatcher", r.lateness.p50 * 1e3,
           r.lateness.p99 * 1e3, r.lateness.max * 1e3);
    printf("   %-28s p50 %.3f  p99 %.3f  max %.3f\n", "clock_nanosleep loop", lat[1000] * 1e3,
           lat[1979] * 1e3, lat[1999] * 1e3);
    printf("   p99 above the platform: %+.3f ms\n", (r.lateness.p99 - lat[1979]) * 1e3);

    /* 4. the library against the workload's own jobs, alternating */
    printf("4. zero-length stages through libcupace against the workload's own jobs\n"
           "   (20000 jobs of 10 partitions; partitions/s, alternating, 3 pairs):\n");
    for (int threads = 4; threads <= 64; threads *= 16) {
        char body[512];
        double best_rt = 0, best_lib = 0;

        zero_length(body, sizeof body, threads);
        for (int rep = 0; rep < 3; rep++) {
            long long done;
            double a, b;
            t = bench_now();
            if (run(body, "greedy", &r) < 0)
                return 1;
            a = (double)r.completed / (bench_now() - t);
            t = bench_now();
            if ((done = through_library(threads, 20000)) < 0)
                return 1;
            b = (double)done / (bench_now() - t);
            printf("   %2d synthesis threads: workload %6.0f, libcupace %6.0f, ratio %.3f\n",
                   threads, a, b, b / a);
            if (a > best_rt)
                best_rt = a;
            if (b > best_lib)
                best_lib = b;
        }
        printf("   %2d synthesis threads, best of each: ratio libcupace / workload %.3f\n", threads,
               best_lib / best_rt);
    }
    return 0;
}
