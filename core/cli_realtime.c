/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * cli_realtime.c -- what the command does around a real-time run, which the
 * engine leaves to its caller: the signals (the first SIGINT or SIGTERM
 * ends a simulation, or drains a real-time run for at most [engine]
 * stop_timeout; the second signal, or the timeout, cancels what is in
 * flight), the status line
 * (redrawn in place on a terminal, a log line every status_interval
 * otherwise) and the note of which backend `auto` chose.
 *
 * The signals are blocked in the calling thread before any engine thread
 * exists, so every engine thread inherits the mask and only the watcher
 * thread here takes them, with sigwait.  The watcher may be asked to stop a
 * run that is not there yet or any more: the run it may stop is published
 * under a mutex, and a signal taken between two runs of `ab` stops the next
 * one at once.
 */
#define _GNU_SOURCE 1
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "units.h"

struct cli_watch {
    pthread_mutex_t lock;
    struct cupace_rt *rt;           /* the run a signal stops, NULL between runs */
    int signals;                    /* taken so far */
    int timed_out;                  /* the drain passed stop_timeout */
    int sim_stop;                   /* the simulator's stop flag (sim.h) */
    uint64_t stop_timeout_ns;
    int quiet;
    sigset_t set, old;
    pthread_t thread;
    int started;
};

static struct cli_watch watch = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* With watch.lock held: the first signal drains, a later one or the stop
 * timeout (sig -1) cancels. */
static void stop_run(int sig)
{
    int cancel = watch.signals > 1 || watch.timed_out;
    uint64_t in_flight;

    cupace_stop_request(&watch.sim_stop);
    if (!watch.rt)
        return;
    in_flight = cupace_rt_stop(watch.rt, cancel ? CUPACE_RT_CANCEL : CUPACE_RT_DRAIN);
    if (watch.quiet || sig == 0)
        return;
    if (sig < 0)
        fprintf(stderr, "\ncupace: the stop timeout (%.3g s) passed: cancelling what is in "
                "flight\n", (double)watch.stop_timeout_ns / 1e9);
    else if (!cancel)
        fprintf(stderr, "\ncupace: %s: stopping dispatch, letting %llu partitions in flight finish "
                "for at most %.3g s (again to cancel them)\n", strsignal(sig),
                (unsigned long long)in_flight, (double)watch.stop_timeout_ns / 1e9);
    else
        fprintf(stderr, "cupace: %s again: cancelling what is in flight\n", strsignal(sig));
}

static uint64_t mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The next signal, or -1 once the monotonic `deadline` passes (0: none). */
static int next_signal(uint64_t deadline)
{
    struct timespec ts;
    uint64_t now, left;
    int sig;

    for (;;) {
        if (!deadline)
            return sigwait(&watch.set, &sig) == 0 ? sig : 0;
        now = mono_ns();
        if (now >= deadline)
            return -1;
        left = deadline - now;
        ts.tv_sec = (time_t)(left / 1000000000ULL);
        ts.tv_nsec = (long)(left % 1000000000ULL);
        sig = sigtimedwait(&watch.set, NULL, &ts);
        if (sig > 0)
            return sig;
    }
}

static void *watcher(void *arg)
{
    uint64_t deadline = 0;          /* when the drain must end */
    int sig;

    (void)arg;
    for (;;) {
        sig = next_signal(deadline);
        if (sig == SIGUSR2)
            return NULL;            /* signals_stop: the runs are over */
        if (sig == 0)
            continue;
        pthread_mutex_lock(&watch.lock);
        if (sig < 0) {
            watch.timed_out = 1;
            deadline = 0;
        } else if (++watch.signals == 1) {
            deadline = cupace_sat_add(mono_ns(), watch.stop_timeout_ns);
            if (deadline == 0)
                deadline = 1;
        } else {
            deadline = 0;
        }
        stop_run(sig);
        pthread_mutex_unlock(&watch.lock);
    }
    return NULL;
}

int *cupace_cli_sim_stop(void)
{
    return &watch.sim_stop;
}

void cupace_cli_signals_start(int quiet, uint64_t stop_timeout_ns)
{
    watch.quiet = quiet;
    watch.stop_timeout_ns = stop_timeout_ns;
    sigemptyset(&watch.set);
    sigaddset(&watch.set, SIGINT);
    sigaddset(&watch.set, SIGTERM);
    sigaddset(&watch.set, SIGUSR2);     /* from signals_stop alone: ends the watcher */
    pthread_sigmask(SIG_BLOCK, &watch.set, &watch.old);
    watch.started = pthread_create(&watch.thread, NULL, watcher, NULL) == 0;
}

void cupace_cli_signals_stop(void)
{
    if (watch.started) {
        /* not pthread_cancel: unwinding a thread cancelled in sigwait upsets
         * ASan's bookkeeping of its stack */
        pthread_kill(watch.thread, SIGUSR2);
        pthread_join(watch.thread, NULL);
        watch.started = 0;
    }
    pthread_sigmask(SIG_SETMASK, &watch.old, NULL);
}

int cupace_cli_signals_taken(void)
{
    int n;

    pthread_mutex_lock(&watch.lock);
    n = watch.signals;
    pthread_mutex_unlock(&watch.lock);
    return n;
}

/* The status line, from the engine's progress callback. */
static void status_line(void *ctx, const struct cupace_rt_progress *p)
{
    int tty = *(const int *)ctx;
    char mem[32], iv[32];

    cupace_format_size(p->mem_reserved, mem, sizeof mem);
    if (p->interval_ns == CUPACE_PACE_HOLD)
        snprintf(iv, sizeof iv, "hold");
    else
        cupace_format_duration(p->interval_ns, iv, sizeof iv);
    fprintf(stderr, "%s[%s] %7.1fs %llu/%llu done  waiting %llu  synth %llu  gpu %llu/%u  mem %s  "
            "interval %s  %s%s", tty ? "\r\033[K" : "cupace: ", p->label, (double)p->now_ns / 1e9,
            (unsigned long long)p->finished, (unsigned long long)p->partitions,
            (unsigned long long)p->waiting, (unsigned long long)p->in_synthesis,
            (unsigned long long)p->gpu_busy, p->gpu_workers, mem, iv, p->pacer_state,
            tty && !p->final ? "" : "\n");
}

int cupace_cli_realtime(const struct cupace_config *cfg, struct cupace_pacer_instance *pacer,
                        const struct cupace_run_opts *opts, int quiet, struct cupace_result *res,
                        struct cupace_err *err)
{
    static int tty;
    struct cupace_run_opts o = *opts;
    struct cupace_rt *rt;
    const char *why;
    int rc;

    tty = isatty(STDERR_FILENO);
    if (!quiet) {
        o.progress = status_line;
        o.progress_ctx = &tty;
        o.progress_interval_ns = tty ? 1000000000ULL : cfg->engine.status_interval_ns;
    }
    rt = cupace_rt_create(cfg, pacer, &o, err);
    if (!rt)
        return -1;
    if (!quiet && cfg->engine.backend == CUPACE_BACKEND_AUTO) {
        /* apart: the order in which arguments are evaluated is unspecified,
         * and why is only set by the call */
        const char *name = cupace_rt_backend(rt, &why);
        fprintf(stderr, "cupace: backend: %s (%s)\n", name, why);
    }
    pthread_mutex_lock(&watch.lock);
    watch.rt = rt;
    if (watch.signals)
        stop_run(0);                /* taken before this run began */
    pthread_mutex_unlock(&watch.lock);
    rc = cupace_rt_run(rt, res, err);
    pthread_mutex_lock(&watch.lock);
    watch.rt = NULL;
    pthread_mutex_unlock(&watch.lock);
    cupace_rt_destroy(rt);
    return rc;
}
