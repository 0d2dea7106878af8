/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * cli.h -- what the `cupace` command parsed, shared by its subcommands.
 */
#ifndef CUPACE_CLI_H
#define CUPACE_CLI_H

#include <stddef.h>

#include "conf.h"
#include "error.h"
#include "pacer_host.h"
#include "realtime.h"

enum {
    CUPACE_EXIT_OK = 0,
    CUPACE_EXIT_FAILED = 1,          /* work failed, a controller stalled, an invariant broke */
    CUPACE_EXIT_USAGE = 2,           /* usage, configuration or plugin error */
    CUPACE_EXIT_INTERRUPTED = 130,
};

#define CUPACE_CLI_MAX 64

struct cupace_cli {
    const char *command;
    const char *args[CUPACE_CLI_MAX];
    size_t nargs;
    const char *sets[CUPACE_CLI_MAX];
    size_t nsets;
    const char *pacers[CUPACE_CLI_MAX];
    size_t npacers;
    const char *json, *csv, *plot;
    const char *seeds, *baseline, *jobs;    /* ab --seeds N [--baseline LABEL] [--jobs J] */
    const char *count, *partitions, *bytes, *priority, *payload;   /* queue submit */
    int quiet, verbose, help, version;
    char given[64];                          /* the options given, as getopt's letters */
};

int cupace_cli_usage_error(const char *what);

/* A database error (MSG, from queue.h) for the operator: prefixed with
 * where [queue] url or table was set, or with what an unset url means, and
 * with its "(next attempt in ...)" said as "(retrying)" where the command
 * retries (RETRIES), and left out where it gives up.  The same error reads
 * the same however long the next attempt waits.  Returns buf. */
const char *cupace_cli_queue_error(const struct cupace_config *cfg, const char *msg, int retries,
                                   char *buf, size_t len);
int cupace_cli_check_pacers(struct cupace_config *cfg, const char *const *labels, size_t n,
                            struct cupace_err *err);
/* Refuses a [queue] url that libpq cannot use (cupace_queue_check_url),
 * naming where it was set: a configuration error, never one to retry. */
int cupace_cli_check_queue_url(const struct cupace_config *cfg, struct cupace_err *err);

/* Around runs (cli_realtime.c): signals_start blocks SIGINT and SIGTERM and
 * takes them in a thread of its own until signals_stop.  The first raises
 * the simulator's stop flag (cupace_cli_sim_stop, for cupace_run_opts.stop)
 * and drains the real-time run of cupace_cli_realtime in progress (or the
 * next one) for at most stop_timeout_ns; a second, or the timeout, cancels. */
void cupace_cli_signals_start(int quiet, uint64_t stop_timeout_ns);
int *cupace_cli_sim_stop(void);
void cupace_cli_signals_stop(void);
int cupace_cli_signals_taken(void);
/* One real-time run with the status line and the backend note unless quiet. */
int cupace_cli_realtime(const struct cupace_config *cfg, struct cupace_pacer_instance *pacer,
                        const struct cupace_run_opts *opts, int quiet, struct cupace_result *res,
                        struct cupace_err *err);

/* run (ab = 0) and ab (ab = 1): cli_run.c */
int cupace_cli_run(struct cupace_cli *cli, int ab);

/* queue init|submit|status CONFIG: cli_queue.c */
int cupace_cli_queue(struct cupace_cli *cli);

/* serve CONFIG: cli_serve.c */
int cupace_cli_serve(struct cupace_cli *cli);

#endif
