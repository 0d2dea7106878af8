/*
 * cli_realtime.c -- what the command does around a real-time run, which the
 * engine leaves to its caller: the signals (the first SIGINT or SIGTERM
 * drains the run, the second cancels what is in flight), the status line
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
#include <unistd.h>

#include "cli.h"
#include "units.h"

struct cli_watch {
    pthread_mutex_t lock;
    struct cupace_rt *rt;           /* the run a signal stops, NULL between runs */
    int signals;                    /* taken so far */
    int quiet;
    sigset_t set, old;
    pthread_t thread;
    int started;
};

static struct cli_watch watch = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* With watch.lock held: the first signal drains, any later one cancels. */
static void stop_run(int sig)
{
    uint64_t in_flight;

    if (!watch.rt)
        return;
    in_flight = cupace_rt_stop(watch.rt, watch.signals == 1 ? CUPACE_RT_DRAIN : CUPACE_RT_CANCEL);
    if (watch.quiet || sig == 0)
        return;
    if (watch.signals == 1)
        fprintf(stderr, "\ncupace: %s: stopping dispatch, letting %llu partitions in flight finish "
                "(again to cancel them)\n", strsignal(sig), (unsigned long long)in_flight);
    else
        fprintf(stderr, "cupace: %s again: cancelling what is in flight\n", strsignal(sig));
}

static void *watcher(void *arg)
{
    int sig;

    (void)arg;
    for (;;) {
        pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
        if (sigwait(&watch.set, &sig) != 0)
            continue;
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
        pthread_mutex_lock(&watch.lock);
        watch.signals++;
        stop_run(sig);
        pthread_mutex_unlock(&watch.lock);
    }
    return NULL;
}

void cupace_cli_signals_start(int quiet)
{
    watch.quiet = quiet;
    sigemptyset(&watch.set);
    sigaddset(&watch.set, SIGINT);
    sigaddset(&watch.set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &watch.set, &watch.old);
    watch.started = pthread_create(&watch.thread, NULL, watcher, NULL) == 0;
}

void cupace_cli_signals_stop(void)
{
    if (watch.started) {
        pthread_cancel(watch.thread);
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
    if (!quiet && cfg->engine.backend == CUPACE_BACKEND_AUTO)
        fprintf(stderr, "cupace: backend: %s (%s)\n", cupace_rt_backend(rt, &why), why);
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
