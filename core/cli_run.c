/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * cli_run.c -- `cupace run` and `cupace ab`: load the config, check every
 * controller before running any, run each on the same workload, report.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "pacer_host.h"
#include "realtime.h"
#include "report.h"
#include "seeds.h"
#include "sim.h"
#include "units.h"

static FILE *open_out(const char *file, const char *what)
{
    FILE *fp = strcmp(file, "-") == 0 ? stdout : fopen(file, "w");

    if (!fp)
        fprintf(stderr, "cupace: %s %s: cannot write: ", what, file), perror(NULL);
    return fp;
}

static int close_out(FILE *fp, const char *file, const char *what)
{
    int bad = ferror(fp);

    if (fp == stdout)
        bad |= fflush(fp) != 0;
    else
        bad |= fclose(fp) != 0;
    if (bad)
        fprintf(stderr, "cupace: %s %s: write failed\n", what, file);
    return bad ? -1 : 0;
}

/* The folder a file name is in: up to its last '/', or "." */
static void folder_of(const char *file, char *dir, size_t len)
{
    const char *slash = strrchr(file, '/');

    snprintf(dir, len, "%.*s", slash ? (int)(slash - file) + 1 : 1, slash ? file : ".");
}

/* Whether FILE can be written, asked before any work is done: a report
 * refused after an hour's run is an hour lost.  Its folder must let us
 * make it, or the file itself be writable; "-" is stdout. */
static int check_out(const char *file, const char *what)
{
    char dir[4096];
    struct stat st;

    if (strcmp(file, "-") == 0)
        return 0;
    if (stat(file, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            fprintf(stderr, "cupace: %s %s: is a directory\n", what, file);
            return -1;
        }
        if (access(file, W_OK) == 0)
            return 0;
    } else if (errno == ENOENT) {
        folder_of(file, dir, sizeof dir);
        if (access(dir, W_OK | X_OK) == 0)
            return 0;
    }
    fprintf(stderr, "cupace: %s %s: cannot write: %s\n", what, file, strerror(errno));
    return -1;
}

/* Where FILE writes to: its device and inode where it exists ("-":
 * stdout's), else its folder's real path and its name. */
struct out_id {
    int exists;
    dev_t dev;
    ino_t ino;
    char path[8192];
};

static void out_id(const char *file, struct out_id *id)
{
    struct stat st;
    char dir[4096], real[4096], link[4096], target[4096];
    const char *slash;

    id->exists = strcmp(file, "-") == 0 ? fstat(STDOUT_FILENO, &st) == 0 : stat(file, &st) == 0;
    if (id->exists) {
        id->dev = st.st_dev;
        id->ino = st.st_ino;
        return;
    }
    /* a link to a file not made yet writes where it points: follow it
     * (a few times, as the kernel would; a loop ends as a name) */
    for (int hops = 0; hops < 8 && lstat(file, &st) == 0 && S_ISLNK(st.st_mode); hops++) {
        ssize_t len = readlink(file, link, sizeof link - 1);

        if (len <= 0)
            break;
        link[len] = '\0';
        /* relative to the link's folder: FILE up to its last '/' */
        slash = strrchr(file, '/');
        snprintf(dir, sizeof dir, "%.*s", slash && link[0] != '/' ? (int)(slash - file) + 1 : 0,
                 file);
        if (snprintf(id->path, sizeof id->path, "%s%s", dir, link) >=
            (int)sizeof id->path)
            break;
        file = id->path;
    }
    /* FILE may be id->path by now: its parts are copied out first */
    slash = strrchr(file, '/');
    if (snprintf(target, sizeof target, "%s", slash ? slash + 1 : file) >= (int)sizeof target)
        target[0] = '\0';
    folder_of(file, dir, sizeof dir);
    if (snprintf(id->path, sizeof id->path, "%s/%s", realpath(dir, real) ? real : dir, target) >=
        (int)sizeof id->path)
        id->path[0] = '\0';
}

/* Whether A and B name one file: the same name, or by another path to it
 * (./x.csv and x.csv, /dev/stdout and -). */
static int same_out(const char *a, const char *b)
{
    struct out_id x, y;
    struct stat null;

    out_id(a, &x);
    out_id(b, &y);
    if (x.exists && y.exists && x.dev == y.dev && x.ino == y.ino)
        /* what goes to /dev/null twice joins nothing */
        return !(stat("/dev/null", &null) == 0 && null.st_dev == x.dev && null.st_ino == x.ino);
    if (strcmp(a, b) == 0)
        return 1;
    return !x.exists && !y.exists && strcmp(x.path, y.path) == 0;
}

/* The outputs asked for, checked before the run: each writable, no two
 * the same file (the second overwrote the first), at most one on stdout
 * (the two joined parse as neither), a plot that can be drawn.  -1 after
 * the message. */
static int check_outputs(const struct cupace_cli *cli)
{
    const char *files[] = { cli->json, cli->csv, cli->plot };
    const char *names[] = { "--json", "--csv", "--plot" };
    struct cupace_err err;
    char msg[8400];

    for (int i = 0; i < 3; i++) {
        if (!files[i])
            continue;
        if (cli->nargs == 1 && strcmp(files[i], "-") != 0 && same_out(files[i], cli->args[0])) {
            snprintf(msg, sizeof msg, "%s %s would overwrite the configuration it runs",
                     names[i], files[i]);
            cupace_cli_usage_error(msg);
            return -1;
        }
        for (int j = 0; j < i; j++)
            if (files[j] && same_out(files[i], files[j])) {
                snprintf(msg, sizeof msg, "%s and %s both write to %s; give each its own file",
                         names[j], names[i], strcmp(files[i], "-") == 0 ? "stdout" : files[i]);
                cupace_cli_usage_error(msg);
                return -1;
            }
        if (check_out(files[i], names[i]) < 0)
            return -1;
    }
    if (cli->plot && cupace_report_plot_check(cli->plot, &err) < 0) {
        fprintf(stderr, "cupace: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static int write_reports(const struct cupace_cli *cli, const struct cupace_report_meta *meta,
                         const struct cupace_result *res, size_t n)
{
    struct cupace_err err;
    FILE *fp;

    if (cli->json) {
        if (!(fp = open_out(cli->json, "--json")))
            return -1;
        cupace_report_json(fp, meta, res, n);
        if (close_out(fp, cli->json, "--json") < 0)
            return -1;
    }
    if (cli->csv) {
        if (!(fp = open_out(cli->csv, "--csv")))
            return -1;
        cupace_report_csv(fp, res, n);
        if (close_out(fp, cli->csv, "--csv") < 0)
            return -1;
    }
    if (cli->plot && cupace_report_plot(cli->plot, meta, res, n, &err) < 0) {
        fprintf(stderr, "cupace: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static int write_seed_reports(const struct cupace_cli *cli, const struct cupace_report_meta *meta,
                              const struct cupace_seeds_report *sr)
{
    struct cupace_err err;
    FILE *fp;

    if (cli->json) {
        if (!(fp = open_out(cli->json, "--json")))
            return -1;
        cupace_report_seeds_json(fp, meta, sr);
        if (close_out(fp, cli->json, "--json") < 0)
            return -1;
    }
    if (cli->csv) {
        if (!(fp = open_out(cli->csv, "--csv")))
            return -1;
        cupace_report_seeds_csv(fp, sr);
        if (close_out(fp, cli->csv, "--csv") < 0)
            return -1;
    }
    if (cli->plot && cupace_report_tradeoff_plot(cli->plot, meta, sr, &err) < 0) {
        fprintf(stderr, "cupace: %s\n", err.msg);
        return -1;
    }
    return 0;
}

/* Runs one controller; 0, or -1 with err set when it could not run. */
static int run_one(struct cupace_config *cfg, const char *label, const struct cupace_run_opts *opts,
                   const struct cupace_cli *cli, struct cupace_result *res, struct cupace_err *err)
{
    struct cupace_pacer_instance inst;
    int rc;

    if (cupace_pacer_instance_open(&inst, cfg, label, err) < 0)
        return -1;
    if (cfg->engine.mode == CUPACE_MODE_SIM)
        rc = cupace_simulate(cfg, &inst, opts, res, err);
    else
        rc = cupace_cli_realtime(cfg, &inst, opts, cli->quiet, res, err);
    cupace_pacer_instance_destroy(&inst);
    return rc;
}

static int choose_labels(const struct cupace_cli *cli, struct cupace_config *cfg, int ab,
                         const char **labels, size_t *n)
{
    *n = 0;
    if (cli->npacers) {
        if (!ab && cli->npacers > 1)
            return cupace_cli_usage_error("run takes one --pacer; ab compares several");
        /* twice, it is two identical columns and an ambiguous baseline */
        for (size_t i = 0; i < cli->npacers; i++)
            for (size_t j = 0; j < i; j++)
                if (strcmp(cli->pacers[i], cli->pacers[j]) == 0) {
                    char msg[256];
                    snprintf(msg, sizeof msg, "--pacer '%s' given twice", cli->pacers[i]);
                    return cupace_cli_usage_error(msg);
                }
        for (size_t i = 0; i < cli->npacers; i++)
            labels[(*n)++] = cli->pacers[i];
    } else if (ab) {
        for (size_t i = 0; i < cfg->nab; i++)
            labels[(*n)++] = cfg->ab[i];
    } else {
        labels[(*n)++] = cfg->pacer_name;
    }
    return 0;
}

static int exit_code(const struct cupace_result *res, size_t n, int interrupted)
{
    int failed = 0;

    for (size_t i = 0; i < n; i++) {
        if (res[i].stalled)
            fprintf(stderr, "cupace: %s\n", res[i].stall_reason);
        if (!res[i].invariants_ok)
            fprintf(stderr, "cupace: %s: the report cannot be trusted: %s\n", res[i].label,
                    res[i].broken ? res[i].broken : "an invariant broke");
        if (res[i].failed)
            /* the jobs they are in: a stopped run leaves some unended */
            fprintf(stderr, "cupace: %s: %llu partitions failed, in %llu jobs\n", res[i].label,
                    (unsigned long long)res[i].failed, (unsigned long long)res[i].jobs_hit);
        if (res[i].stage_failures)
            fprintf(stderr, "cupace: %s: %llu of them by a stage's error, the first: %s\n",
                    res[i].label, (unsigned long long)res[i].stage_failures, res[i].stage_failure);
        if (res[i].devices_lost[0])
            fprintf(stderr, "cupace: %s: %s\n", res[i].label, res[i].devices_lost);
        failed |= res[i].stalled || !res[i].invariants_ok || res[i].failed ||
                  res[i].devices_lost[0];
    }
    if (interrupted)
        return CUPACE_EXIT_INTERRUPTED;
    return failed ? CUPACE_EXIT_FAILED : CUPACE_EXIT_OK;
}

/* Parses a positive count of flag NAME, at most max; -1 after the message. */
static int parse_count(const char *name, const char *text, uint64_t max, uint64_t *out)
{
    const char *why;
    char msg[256];

    if (cupace_parse_u64(text, out, &why) == 0 && *out >= 1 && *out <= max)
        return 0;
    snprintf(msg, sizeof msg, "%s '%s': expected a whole number from 1 to %llu", name, text,
             (unsigned long long)max);
    cupace_cli_usage_error(msg);
    return -1;
}

/* ab --seeds N: every controller on N seeds over J threads, then the paired
 * summary (seeds.h) as a table, JSON, CSV and the trade-off plot. */
static int ab_seeds(const struct cupace_cli *cli, struct cupace_config *cfg,
                    const char *const *labels, size_t n)
{
    uint64_t nseeds, jobs;
    size_t baseline = 0;
    struct cupace_result *res;
    struct cupace_seed_summary *sum;
    struct cupace_seeds_report sr;
    struct cupace_report_meta meta;
    struct cupace_err err;
    FILE *table = cli->json && strcmp(cli->json, "-") == 0 ? stderr : stdout;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int rc = CUPACE_EXIT_OK;

    if (cli->csv && strcmp(cli->csv, "-") == 0)
        table = stderr;
    if (parse_count("--seeds", cli->seeds, 1000000, &nseeds) < 0)
        return CUPACE_EXIT_USAGE;
    jobs = online > 0 ? (uint64_t)online : 1;
    if (cli->jobs && parse_count("--jobs", cli->jobs, 4096, &jobs) < 0)
        return CUPACE_EXIT_USAGE;
    if (cfg->engine.mode != CUPACE_MODE_SIM)
        return cupace_cli_usage_error("--seeds runs in the simulator only (mode = sim); "
                                      "use --set engine.mode=sim");
    if (cli->baseline) {
        for (baseline = 0; baseline < n && strcmp(labels[baseline], cli->baseline) != 0;
             baseline++)
            ;
        if (baseline == n) {
            char msg[256];
            snprintf(msg, sizeof msg, "--baseline '%s' is not one of the controllers compared",
                     cli->baseline);
            return cupace_cli_usage_error(msg);
        }
    }
    res = calloc(nseeds * n, sizeof *res);
    sum = calloc(n, sizeof *sum);
    if (!res || !sum) {
        free(res);
        free(sum);
        fprintf(stderr, "cupace: out of memory\n");
        return CUPACE_EXIT_USAGE;
    }
    if (cupace_run_seeds(cfg, labels, n, nseeds, (unsigned)jobs, res, &err) < 0) {
        fprintf(stderr, "cupace: %s\n", err.msg);
        rc = CUPACE_EXIT_USAGE;
    } else {
        cupace_seeds_summarize(res, nseeds, n, baseline, sum);
        sr = (struct cupace_seeds_report){ res, nseeds, n, baseline, cfg->engine.seed, sum };
        meta = (struct cupace_report_meta){ cfg->path, "sim", cfg->engine.seed, 0 };
        if (!cli->quiet)
            cupace_report_seeds_table(table, &sr);
        if (write_seed_reports(cli, &meta, &sr) < 0)
            rc = CUPACE_EXIT_USAGE;
        else
            rc = exit_code(res, nseeds * n, 0);
    }
    free(sum);
    free(res);              /* no time series were recorded: nothing else to free */
    return rc;
}

int cupace_cli_run(struct cupace_cli *cli, int ab)
{
    const char *labels[CUPACE_CLI_MAX];
    struct cupace_config *cfg;
    struct cupace_result *res;
    struct cupace_err err;
    struct cupace_run_opts opts = { .series_step_ns = 1000000000ULL };
    struct cupace_report_meta meta;
    size_t n, done = 0;
    int rc = CUPACE_EXIT_OK, to_stdout, interrupted = 0;

    if (cli->nargs != 1)
        return cupace_cli_usage_error(ab ? "ab takes one CONFIG" : "run takes at most one CONFIG");
    if (!ab && (cli->seeds || cli->baseline || cli->jobs))
        return cupace_cli_usage_error("--seeds, --baseline and --jobs belong to ab");
    if (!cli->seeds && (cli->baseline || cli->jobs))
        return cupace_cli_usage_error("--baseline and --jobs need --seeds");
    if (check_outputs(cli) < 0)
        return CUPACE_EXIT_USAGE;
    cfg = cupace_config_load(cli->args[0], cli->sets, cli->nsets, &err);
    if (!cfg) {
        fprintf(stderr, "cupace: %s\n", err.msg);
        return CUPACE_EXIT_USAGE;
    }
    if (choose_labels(cli, cfg, ab, labels, &n) != 0 ||
        cupace_cli_check_pacers(cfg, labels, n, &err) < 0) {
        if (n && err.msg[0])
            fprintf(stderr, "cupace: %s\n", err.msg);
        cupace_config_free(cfg);
        return CUPACE_EXIT_USAGE;
    }
    if (cli->seeds) {
        rc = ab_seeds(cli, cfg, labels, n);
        cupace_config_free(cfg);
        return rc;
    }
    opts.record_series = cli->csv || cli->plot;
    res = calloc(n, sizeof *res);
    if (!res) {
        cupace_config_free(cfg);
        return CUPACE_EXIT_USAGE;
    }
    cupace_cli_signals_start(cli->quiet, cfg->engine.stop_timeout_ns);
    opts.stop = cupace_cli_sim_stop();
    for (; done < n && !interrupted; done++) {
        if (run_one(cfg, labels[done], &opts, cli, &res[done], &err) < 0) {
            fprintf(stderr, "cupace: %s\n", err.msg);
            rc = CUPACE_EXIT_USAGE;
            break;
        }
        interrupted = res[done].interrupted;
    }
    cupace_cli_signals_stop();
    if (rc == CUPACE_EXIT_OK) {
        to_stdout = (cli->json && strcmp(cli->json, "-") == 0) ||
                    (cli->csv && strcmp(cli->csv, "-") == 0);
        if (!cli->quiet)
            cupace_report_table(to_stdout ? stderr : stdout, res, done,
                                isatty(fileno(to_stdout ? stderr : stdout)) && !getenv("NO_COLOR"));
        meta.config = cfg->path;
        meta.mode = cfg->engine.mode == CUPACE_MODE_SIM ? "sim" : "realtime";
        meta.seed = cfg->engine.seed;
        meta.interrupted = interrupted;
        if (write_reports(cli, &meta, res, done) < 0)
            rc = CUPACE_EXIT_USAGE;
        else
            rc = exit_code(res, done, interrupted);
    }
    for (size_t i = 0; i < n; i++)
        cupace_result_free(&res[i]);
    free(res);
    cupace_config_free(cfg);
    return rc;
}
