/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * cli_serve.c -- `cupace serve CONFIG`: the per-node daemon (DESIGN §10).
 *
 * Three parts, each written elsewhere, joined here: the engine (libcupace,
 * cupace/cupace.h: an open real-time run of the configured stages under
 * the configured controller), the node's side of the queue (serve.h: claims
 * within the engine's credit, heartbeats, outcomes written back in the
 * transaction that ends each lease), and the process, which is this file's
 * alone: signals, systemd's notifications, the metrics endpoint, messages.
 *
 *   SIGTERM, SIGINT   the first drains: nothing more is claimed, what is held
 *                     runs to its end and its outcome is written, exit 0;
 *                     the second cancels: the rest is given back, exit 130
 *   SIGHUP            reads CONFIG again and swaps in the controller its
 *                     [pacer] name gives, with nothing dropped
 *
 * The signals are blocked before any thread starts and taken by sigwait in
 * the main thread, which does nothing else; the queue's loop runs in a
 * thread of its own.
 */
#define _GNU_SOURCE 1
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cupace/cupace.h"
#include "metrics_http.h"
#include "realtime.h"
#include "serve.h"

struct node {
    struct cupace_engine *engine;
    struct cupace_serve *serve;
    uint64_t horizon_ns;            /* what a credit covers: one claim round, [queue] poll */
    int loop_failed;                /* the queue's loop could not go on (set before SIGUSR2) */
};

/* What the engine runs for one claimed job: the payload, NUL-terminated,
 * is what its stages see as the job's data. */
struct node_job {
    struct node *node;
    int64_t id;
    int32_t attempts;
    uint32_t partitions;
    char payload[];
};

/* ---- the engine behind serve.h's two calls ------------------------------- */

static uint64_t node_credit(void *ctx, int *idle)
{
    struct node *n = ctx;

    return cupace_engine_credit(n->engine, n->horizon_ns, idle);
}

static void node_job_done(void *data, const struct cupace_job_outcome *o)
{
    struct node_job *j = (struct node_job *)((char *)data - offsetof(struct node_job, payload));

    /* where the engine stopped before the job ran (a stall, a controller
     * that held), the job goes back with its attempt: restarted by systemd
     * three times, such a node ended every job it held failed unrun */
    int not_run = !o->ok && o->reason && strcmp(o->reason, CUPACE_RT_NOT_RUN) == 0;

    cupace_serve_finished(j->node->serve, j->id, j->attempts, j->partitions,
                          o->ok ? 1 : not_run ? CUPACE_SERVE_NOT_RUN : 0,
                          o->ok ? "completed" : o->reason);
    free(j);
}

static int node_start(void *ctx, const struct cupace_queue_job *job, char *why, size_t whylen)
{
    struct node *n = ctx;
    size_t len = job->payload ? strlen(job->payload) : 0;
    struct node_job *j = malloc(sizeof *j + len + 1);
    struct cupace_error *eerr = NULL;
    struct cupace_job_spec spec;

    if (!j || job->partitions <= 0) {
        snprintf(why, whylen, "%s", j ? "the job has no partitions" : "out of memory");
        free(j);
        return -1;
    }
    *j = (struct node_job){ .node = n, .id = job->id, .attempts = job->attempts,
                            .partitions = (uint32_t)job->partitions };
    memcpy(j->payload, job->payload ? job->payload : "", len + 1);
    spec = (struct cupace_job_spec){ .size = sizeof spec, .partitions = (uint32_t)job->partitions,
                                     .partition_bytes = job->partition_bytes,
                                     .data = j->payload, .done = node_job_done };
    if (cupace_engine_submit(n->engine, &spec, NULL, &eerr) < 0) {
        /* failed back at once by the loop, with the engine's reason: said
         * here too, since a refusal is the node's, not the job's */
        snprintf(why, whylen, "%s", cupace_error_message(eerr));
        fprintf(stderr, "cupace serve: job %" PRId64 " refused: %s\n", job->id, why);
        cupace_error_free(eerr);
        free(j);
        return -1;
    }
    /* j is the engine's now: node_job_done frees it, from its payload */
    // cppcheck-suppress memleak
    return 0;
}

/* ---- what operators look at ----------------------------------------------- */

static void render_metrics(void *ctx, FILE *out)
{
    struct node *n = ctx;
    struct cupace_metrics m = { .size = sizeof m };
    const struct cupace_signals *s = &m.signals;
    int idle;
    uint64_t credit = cupace_engine_credit(n->engine, n->horizon_ns, &idle);

    cupace_serve_metrics(n->serve, out);
    cupace_engine_metrics(n->engine, &m);
    fprintf(out, "# HELP cupace_engine_running 1 while the engine runs\n"
                 "# TYPE cupace_engine_running gauge\ncupace_engine_running %u\n", m.running);
#define GAUGE(name, help, v) \
    fprintf(out, "# HELP cupace_" name " " help "\n# TYPE cupace_" name " gauge\ncupace_" name \
                 " %" PRIu64 "\n", (uint64_t)(v))
#define COUNTER(name, help, v) \
    fprintf(out, "# HELP cupace_" name " " help "\n# TYPE cupace_" name " counter\ncupace_" name \
                 " %" PRIu64 "\n", (uint64_t)(v))
    GAUGE("pending_partitions", "partitions held, not yet dispatched", s->pending);
    GAUGE("in_synthesis_partitions", "partitions in synthesis", s->in_synthesis);
    GAUGE("waiting_partitions", "synthesized partitions waiting for a GPU worker", s->waiting);
    GAUGE("gpu_busy_workers", "GPU workers holding a partition", s->gpu_busy_workers);
    GAUGE("memory_reserved_bytes", "bytes of the budget held", s->mem_reserved);
    GAUGE("memory_budget_bytes", "the memory budget", s->mem_budget);
    GAUGE("credit_partitions", "partitions the controller grants for the next claim round", credit);
    COUNTER("dispatched_partitions_total", "partitions dispatched", s->dispatched);
    COUNTER("gpu_done_partitions_total", "partitions completed on a GPU", s->gpu_done);
    COUNTER("failed_partitions_total", "partitions failed", s->failed);
    COUNTER("synth_seconds_total", "synthesis time, summed", s->synth_ns_total / 1000000000u);
    COUNTER("jobs_completed_total", "jobs completed by this engine", m.jobs_completed);
    COUNTER("jobs_failed_total", "jobs failed by this engine", m.jobs_failed);
#undef GAUGE
#undef COUNTER
}

/* systemd's notification protocol (sd_notify(3)), without libsystemd: one
 * datagram to $NOTIFY_SOCKET.  Nothing when not run by systemd. */
static void notify_systemd(const char *state)
{
    const char *path = getenv("NOTIFY_SOCKET");
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    size_t len;
    int fd;

    if (!path || !*path || (path[0] != '/' && path[0] != '@') ||
        (len = strlen(path)) >= sizeof sa.sun_path)
        return;
    memcpy(sa.sun_path, path, len);
    if (sa.sun_path[0] == '@')
        sa.sun_path[0] = '\0';      /* an abstract socket */
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return;
    (void)sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
                 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len));
    close(fd);
}

/* WATCHDOG_USEC, when systemd asks for pings (only for this process). */
static uint64_t watchdog_ns(void)
{
    const char *usec = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
    unsigned long long v;

    if (!usec || (pid && strtol(pid, NULL, 10) != (long)getpid()))
        return 0;
    v = strtoull(usec, NULL, 10);
    return v > 0 && v < UINT64_MAX / 1000 ? (uint64_t)v * 1000 : 0;
}

/* ---- the daemon ----------------------------------------------------------------- */

/* A database error as said: its message and where the config set the url */
#define DB_SAID_MAX (sizeof ((struct cupace_err *)0)->msg + 4400)
#define DB_SAID_KINDS 16

/* What the operator was told of the database since it last answered: the
 * kinds of error said (hashes of their messages), so that each is said
 * once however the failing statements interleave. */
struct db_said {
    uint64_t errors;                /* db_errors when last looked at */
    int down;                       /* an error was said and no answer since */
    uint64_t kind[DB_SAID_KINDS];
    unsigned nkinds;
};

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 14695981039346656037ULL;

    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
    return h;
}

/* Says, once a tick, what changed: a kind of database error not said since
 * the database last answered (the loop retries on its own, so each is said
 * once, not once a retry), and that it answers again: a claim, heartbeat or
 * result went through.  Without it a node that could not reach its queue,
 * or found no table there, ran on in silence: only db_errors_total rose. */
static void say_database(struct cupace_serve *s, const struct cupace_config *cfg, struct db_said *said,
                         int quiet)
{
    struct cupace_serve_stats st;

    cupace_serve_stats(s, &st);
    if (st.db_errors > said->errors) {
        struct cupace_err e;
        char msg[DB_SAID_MAX];
        uint64_t h;
        unsigned i = 0;

        cupace_serve_last_error(s, &e);
        cupace_cli_queue_error(cfg, e.msg, 1, msg, sizeof msg);
        h = fnv1a(msg);
        while (i < said->nkinds && said->kind[i] != h)
            i++;
        if (i == said->nkinds) {
            fprintf(stderr, "cupace serve: %s\n", msg);
            if (said->nkinds < DB_SAID_KINDS)
                said->kind[said->nkinds++] = h;
        }
        said->down = 1;
    }
    said->errors = st.db_errors;
    if (said->down && st.answering) {
        if (!quiet)
            fprintf(stderr, "cupace serve: the database answers again\n");
        said->down = 0;
        said->nkinds = 0;
    }
}

static void *loop_thread(void *arg)
{
    struct node *n = arg;
    struct cupace_err err;

    if (cupace_serve_run(n->serve, &err) < 0) {
        fprintf(stderr, "cupace serve: %s\n", err.msg);
        n->loop_failed = 1;         /* read by the main thread after the join */
    }
    kill(getpid(), SIGUSR2);        /* the loop is over: the main thread stops the rest */
    return NULL;
}

int cupace_cli_serve(struct cupace_cli *cli)
{
    struct node n = { 0 };
    struct cupace_error *eerr = NULL;
    struct cupace_serve_engine eng = { .ctx = &n, .credit = node_credit, .start = node_start };
    struct cupace_metrics_http *http = NULL;
    struct cupace_config *cfg;
    struct cupace_queue_settings qs;
    struct cupace_err err;
    struct timespec tick;
    uint64_t wd, tick_ns;
    int engine_gone = 0;
    struct db_said said = { 0 };
    pthread_t loop;
    sigset_t set;
    int signals = 0, rc = CUPACE_EXIT_OK, sig;

    if (cli->nargs != 1)
        return cupace_cli_usage_error("serve takes one CONFIG");
    cfg = cupace_config_load(cli->args[0], cli->sets, cli->nsets, &err);
    if (!cfg || cupace_cli_check_queue_url(cfg, &err) < 0 ||
        cupace_cli_check_pacers(cfg, (const char *const *)&cfg->pacer_name, 1, &err) < 0) {
        /* the controller checked here too, so that what the operator typed
         * is named as typed (the engine hears it through cupace_engine_set) */
        fprintf(stderr, "cupace serve: %s\n", err.msg);
        cupace_config_free(cfg);
        return CUPACE_EXIT_USAGE;
    }
    n.horizon_ns = cfg->queue.poll_ns;

    /* the signals first: every thread started from here inherits the mask */
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set, NULL);

    /* the engine: CONFIG and the same --set, through the library */
    if (!(n.engine = cupace_engine_new(cli->args[0], &eerr)))
        goto engine_refused;
    for (size_t i = 0; i < cli->nsets; i++) {
        const char *eq = strchr(cli->sets[i], '=');     /* there: the config loaded with it */
        char *key = strndup(cli->sets[i], (size_t)(eq - cli->sets[i]));
        int set_rc = key ? cupace_engine_set(n.engine, key, eq + 1, &eerr) : -1;
        free(key);
        if (set_rc < 0)
            goto engine_refused;
    }
    if (cupace_engine_start(n.engine, &eerr) < 0)
        goto engine_refused;
    /* a job whose partitions this budget cannot hold is left to a node
     * that can run it (0 bytes: this node's partition_memory, which fits) */
    qs = cfg->queue;
    qs.max_partition_bytes = cfg->engine.memory_budget;
    n.serve = cupace_serve_create(&qs, NULL, &eng, &err);
    if (n.serve && cfg->serve_metrics &&
        !(http = cupace_metrics_http_start(cfg->serve_metrics, render_metrics, &n, &err))) {
        cupace_err_at(&err, cupace_config_origin(cfg, "serve", "metrics"), "serve", "metrics");
        cupace_serve_destroy(n.serve);
        n.serve = NULL;
    }
    if (!n.serve || pthread_create(&loop, NULL, loop_thread, &n) != 0) {
        fprintf(stderr, "cupace serve: %s\n", n.serve ? "cannot start the queue's thread" : err.msg);
        cupace_metrics_http_stop(http);
        cupace_engine_stop(n.engine, CUPACE_STOP_CANCEL);
        cupace_engine_join(n.engine, NULL);
        cupace_engine_free(n.engine);
        cupace_serve_destroy(n.serve);
        cupace_config_free(cfg);
        return CUPACE_EXIT_USAGE;
    }
    if (!cli->quiet) {
        fprintf(stderr, "cupace serve: %s: claiming from %s", cfg->path, cfg->queue.table);
        if (http)
            fprintf(stderr, ", metrics on port %u", cupace_metrics_http_port(http));
        fprintf(stderr, "\n");
    }
    notify_systemd("READY=1");

    /* a tick: the watchdog's ping (half its period), and a look at the
     * engine, whose run may end on its own (a stall, the stage watchdog) */
    wd = watchdog_ns() / 2;
    tick_ns = wd && wd < 1000000000u ? wd : 1000000000u;
    tick.tv_sec = (time_t)(tick_ns / 1000000000u);
    tick.tv_nsec = (long)(tick_ns % 1000000000u);
    for (;;) {
        sig = sigtimedwait(&set, NULL, &tick);
        if (sig < 0) {
            struct cupace_metrics m = { .size = sizeof m };
            if (errno != EAGAIN)
                continue;
            say_database(n.serve, cfg, &said, cli->quiet);
            cupace_engine_metrics(n.engine, &m);
            if (m.running) {
                if (wd)
                    notify_systemd("WATCHDOG=1");   /* only while both parts live */
            } else if (!engine_gone) {
                engine_gone = 1;
                fprintf(stderr, "cupace serve: the engine's run ended: giving back what is "
                        "held\n");
                notify_systemd("STOPPING=1");
                cupace_serve_stop(n.serve, CUPACE_SERVE_CANCEL);
                rc = CUPACE_EXIT_FAILED;
            }
            continue;
        }
        if (sig == SIGUSR2)
            break;                  /* the loop returned: drained, cancelled or failed */
        if (sig == SIGHUP) {
            if (cupace_engine_reload(n.engine, &eerr) < 0) {
                fprintf(stderr, "cupace serve: SIGHUP: %s: the controller is left as it was\n",
                        cupace_error_message(eerr));
            } else if (!cli->quiet) {
                /* only the controller is swapped; say which, and that the
                 * rest waits (the budget, the queue: a restart reads them) */
                struct cupace_config *now = cupace_config_load(cli->args[0], cli->sets,
                                                               cli->nsets, &err);

                fprintf(stderr, "cupace serve: SIGHUP: the controller is swapped: now '%s'; the "
                        "other keys are read at a restart\n", now ? now->pacer_name : "?");
                cupace_config_free(now);
            }
            notify_systemd("READY=1");
            continue;
        }
        if (++signals == 1) {
            notify_systemd("STOPPING=1");
            if (!cli->quiet)
                fprintf(stderr, "cupace serve: %s: claiming nothing more, finishing what is held "
                        "(again to give it back)\n", strsignal(sig));
            cupace_serve_stop(n.serve, CUPACE_SERVE_DRAIN);
        } else {
            if (!cli->quiet)
                fprintf(stderr, "cupace serve: %s again: giving back what is held\n", strsignal(sig));
            /* the engine is cancelled once the loop has given back what it
             * holds: cancelled now, its jobs' failures would reach the
             * queue first and spend their attempts */
            cupace_serve_stop(n.serve, CUPACE_SERVE_CANCEL);
            if (rc == CUPACE_EXIT_OK)
                rc = CUPACE_EXIT_INTERRUPTED;
        }
    }
    pthread_join(loop, NULL);
    if (n.loop_failed)
        rc = CUPACE_EXIT_FAILED;
    cupace_engine_stop(n.engine, rc == CUPACE_EXIT_OK ? CUPACE_STOP_DRAIN : CUPACE_STOP_CANCEL);
    if (cupace_engine_join(n.engine, &eerr) < 0) {
        fprintf(stderr, "cupace serve: %s\n", cupace_error_message(eerr));
        if (rc == CUPACE_EXIT_OK)
            rc = CUPACE_EXIT_FAILED;
    }
    cupace_metrics_http_stop(http);
    cupace_engine_free(n.engine);
    cupace_serve_destroy(n.serve);
    cupace_error_free(eerr);
    cupace_config_free(cfg);
    return rc;

engine_refused:
    fprintf(stderr, "cupace serve: %s\n", cupace_error_message(eerr));
    cupace_error_free(eerr);
    cupace_engine_free(n.engine);
    cupace_config_free(cfg);
    return CUPACE_EXIT_USAGE;
}
