/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * cli.c -- the `cupace` command: argument parsing, subcommands, exit codes.
 *
 * This file turns argv into calls of the engine and prints what they return;
 * it holds no pipeline logic.  Messages go to stderr, results to stdout.
 * Exit codes (DESIGN §5): 0 success; 1 the run finished but work failed, a
 * controller stalled it, or an invariant broke; 2 usage, configuration or
 * plugin error; 130 interrupted.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "conf.h"
#include "pacer_host.h"
#include "stages.h"
#include "text.h"

#ifndef CUPACE_SYSCONFDIR
#define CUPACE_SYSCONFDIR "/usr/local/etc"
#endif

static const struct {
    const char *name;
    const char *usage;
    const char *text;
} commands[] = {
    { "run", "cupace run [CONFIG] [--pacer LABEL] [--set S.K=V]... [--json F] [--csv F] [--plot F]",
      "Runs the workload of CONFIG (default: " CUPACE_SYSCONFDIR "/cupace/cupace.ini) with the\n"
      "controller of [pacer] name, or --pacer LABEL, and prints a summary.\n" },
    { "ab", "cupace ab CONFIG [--pacer LABEL]... [--seeds N [--baseline LABEL] [--jobs J]]\n"
            "            [--set S.K=V]... [--json F] [--csv F] [--plot F]",
      "Runs the same workload under each controller of [ab] pacers (or of the --pacer\n"
      "flags) and prints one table, a column per controller, the best value of each\n"
      "row marked with '*'.  Every controller sees the same arrivals and the same work.\n\n"
      "With --seeds N (simulation only) it runs every controller on seeds S, S+1, ...,\n"
      "S+N-1 (S: [engine] seed), paired, and prints each controller's mean ratio to\n"
      "the baseline (--baseline, default the first controller) with its 95% confidence\n"
      "interval (Student's t over the per-seed ratios) for makespan, job latency p50 and\n"
      "p99 and mean memory, and its mean memory over the Little's-law bound.  The runs\n"
      "go over --jobs J threads (default: the online CPUs); the output does not depend\n"
      "on J.  --json gains every run and the summary, --csv one row per run, and --plot\n"
      "draws the trade-off: makespan ratio against memory / bound.\n" },
    { "plugins", "cupace plugins [CONFIG]",
      "Lists the controllers found on the search path ([pacer] path of CONFIG,\n"
      "$CUPACE_PACER_PATH, then " CUPACE_PACERDIR "), with summary and file, and\n"
      "those refused, with the reason.\n" },
    { "check-config", "cupace check-config CONFIG [--set S.K=V]...",
      "Validates CONFIG, its trace and every controller it names (loading each and\n"
      "running its init), without running anything.\n" },
    { "queue", "cupace queue init|submit|status CONFIG [--count N] [--partitions P] [--bytes SIZE]",
      "Manages the job queue of [queue] for cupace serve: init creates its tables\n"
      "(idempotent); submit adds --count jobs (default: [workload] jobs) of\n"
      "--partitions partitions (default: partitions_per_job) of --bytes each\n"
      "(default: partition_memory), with --priority (higher first) and --payload;\n"
      "status prints the jobs by state (--json FILE for JSON).  Exit 1 if the\n"
      "database cannot be reached or refuses.\n" },
    { "serve", "cupace serve CONFIG [--set S.K=V]... [-q]",
      "The per-node daemon: runs the engine in real time with the configured stages\n"
      "and controller, and claims jobs from the queue of [queue] only as far as the\n"
      "controller grants credit.  SIGTERM or SIGINT drains (nothing more claimed, what\n"
      "is held finishes, exit 0); a second one gives the rest back (exit 130); SIGHUP\n"
      "reads CONFIG again and swaps the controller.  [serve] metrics = HOST:PORT\n"
      "serves Prometheus metrics; under systemd it notifies readiness and the watchdog.\n" },
    { "help", "cupace help [SUBCOMMAND]", "Shows help for a subcommand.\n" },
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *fp)
{
    fprintf(fp, "usage: cupace SUBCOMMAND [options]\n\n"
                "cupace paces GPU work fed by CPU-bound producers, with controllers loaded as plugins.\n\n"
                "subcommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(fp, "  %s\n", commands[i].usage);
    fprintf(fp, "\noptions:\n"
                "  --json FILE         write the JSON report to FILE ('-' for stdout)\n"
                "  --csv FILE          write the time series to FILE ('-' for stdout)\n"
                "  --plot FILE         draw the time series with gnuplot (.png or .svg)\n"
                "  --set S.K=VALUE     override a key of the configuration (repeatable)\n"
                "  --pacer LABEL       the controller(s) to run (repeatable for ab)\n"
                "  --seeds N           ab: N paired seeds, ratios with 95%% intervals\n"
                "  --baseline LABEL    ab --seeds: what the ratios divide by (default: the first)\n"
                "  --jobs J            ab --seeds: run on J threads (default: the online CPUs)\n"
                "  -q, --quiet         no status line, no summary\n"
                "  -v, --verbose       more detail\n"
                "  -h, --help          this help;  cupace help SUBCOMMAND for one\n"
                "  -V, --version       the version\n\n"
                "exit: 0 success, 1 work failed or stalled or an invariant broke,\n"
                "      2 usage, configuration or plugin error, 130 interrupted.\n"
                "See cupace(1) and cupace.ini(5).\n");
}

static int help_for(const char *name, FILE *fp)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0) {
            fprintf(fp, "usage: %s\n\n%s", commands[i].usage, commands[i].text);
            return 0;
        }
    fprintf(stderr, "cupace: help: no subcommand '%s' (run, ab, plugins, check-config, queue, serve)\n", name);
    return CUPACE_EXIT_USAGE;
}

/* ---- plugins ----------------------------------------------------------- */

struct scan_count {
    int found, refused;
};

static void print_found(struct scan_count *c, const char *file, const char *name,
                        const char *summary, const char *reason, const char *shadowed_by)
{
    if (name) {
        char plain[256];

        /* a plugin's own text: shown plain (text.h), never as terminal escapes */
        snprintf(plain, sizeof plain, "%s", summary ? summary : "");
        cupace_text_plain(plain);
        c->found++;
        /* the first NAME.so on the path is what NAME opens, refused or not */
        printf("%-16s %s\n%-16s %s%s%s%s%s%s\n", name, plain, "", file,
               shadowed_by ? "  (shadowed by " : "", shadowed_by ? shadowed_by : "",
               shadowed_by ? ", earlier on the path: '" : "", shadowed_by ? name : "",
               shadowed_by ? "' opens that one)" : "");
    } else {
        c->refused++;
        printf("%-16s refused: %s\n%-16s %s\n", "(refused)", reason, "", file);
    }
}

static void print_plugin(void *ctx, const char *file, const struct cupace_pacer *ops,
                         const char *reason, const char *shadowed_by)
{
    print_found(ctx, file, ops ? ops->name : NULL, ops ? ops->summary : NULL, reason, shadowed_by);
}

static void print_stages(void *ctx, const char *file, const struct cupace_stages *ops,
                         const char *reason, const char *shadowed_by)
{
    print_found(ctx, file, ops ? ops->name : NULL, ops ? ops->summary : NULL, reason, shadowed_by);
}

static int cmd_plugins(struct cupace_cli *cli)
{
    struct cupace_config *cfg = NULL;
    struct cupace_pacer_path path;
    struct scan_count count = { 0, 0 }, stages = { 0, 0 };
    struct cupace_err err;

    if (cli->nargs > 1)
        return cupace_cli_usage_error("plugins takes at most one CONFIG");
    if (cli->nargs == 1) {
        cfg = cupace_config_load(cli->args[0], cli->sets, cli->nsets, &err);
        if (!cfg) {
            fprintf(stderr, "cupace: %s\n", err.msg);
            return CUPACE_EXIT_USAGE;
        }
    }
    cupace_pacer_path_init(&path, cfg);
    if (cli->verbose)
        for (size_t i = 0; i < path.ndirs; i++)
            fprintf(stderr, "cupace: search path %zu: %s\n", i + 1, path.dirs[i]);
    printf("controllers ([pacer] name, [pacer.LABEL] plugin = NAME):\n");
    cupace_pacer_scan(&path, print_plugin, &count);
    printf("\nstages ([engine] backend = NAME):\n%-16s %s\n%-16s (built in)\n", "emulated",
           cupace_stages_emulated.summary, "");
    cupace_stages_scan(&path, print_stages, &stages);
    if (count.found == 0 && count.refused == 0) {
        fprintf(stderr, "cupace: no controllers found in:");
        for (size_t i = 0; i < path.ndirs; i++)
            fprintf(stderr, " %s", path.dirs[i]);
        fprintf(stderr, " (name the folder that holds them in CUPACE_PACER_PATH or [pacer] path; "
                "in a build tree, build/plugins/.libs)\n");
    }
    cupace_pacer_path_free(&path);
    cupace_config_free(cfg);
    return CUPACE_EXIT_OK;
}

/* ---- check-config ------------------------------------------------------ */

static int check_one_pacer(struct cupace_config *cfg, const struct cupace_pacer_path *path,
                           const char *label, struct cupace_err *err)
{
    struct cupace_pacer_instance inst;

    if (cupace_pacer_instance_create(&inst, cfg, path, label, err) < 0)
        return -1;
    cupace_pacer_instance_destroy(&inst);
    return 0;
}

static int listed(const char *const *labels, size_t n, const char *label)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(labels[i], label) == 0)
            return 1;
    return 0;
}

/* Loads the controllers LABELS and every one the config has a section
 * for, and runs each one's init: what check-config validates and what
 * run, ab and serve do before starting.  A section is checked even where
 * this run uses another: a typo in it is a typo whichever runs, and
 * check-config refused what run took. */
int cupace_cli_check_pacers(struct cupace_config *cfg, const char *const *labels, size_t n,
                            struct cupace_err *err)
{
    struct cupace_pacer_path path;
    int rc = 0;

    cupace_pacer_path_init(&path, cfg);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = check_one_pacer(cfg, &path, labels[i], err);
    for (size_t i = 0; i < cfg->nsections && rc == 0; i++)
        if (!listed(labels, n, cfg->sections[i].label))
            rc = check_one_pacer(cfg, &path, cfg->sections[i].label, err);
    cupace_pacer_path_free(&path);
    return rc;
}

/* A real-time run over a stage plugin opens it and runs its init with its
 * keys before it starts, and any run refuses a [stages.NAME] for stages
 * that do not run: check-config does the same, so that it refuses exactly
 * what run would.  The engine refuses a stray section before it sets
 * anything up, so for the built-in stages this costs no more than a probe
 * for a CUDA device. */
static int check_stage_plugin(struct cupace_config *cfg, struct cupace_err *err)
{
    struct cupace_pacer_instance inst;
    struct cupace_run_opts opts = { 0 };
    struct cupace_rt *rt;

    if (cfg->engine.mode != CUPACE_MODE_REALTIME ||
        (cfg->engine.backend != CUPACE_BACKEND_PLUGIN && cfg->nstage_sections == 0))
        return 0;
    if (cupace_pacer_instance_open(&inst, cfg, cfg->pacer_name, err) < 0)
        return -1;
    rt = cupace_rt_create(cfg, &inst, &opts, err);
    cupace_rt_destroy(rt);
    cupace_pacer_instance_destroy(&inst);
    return rt ? 0 : -1;
}

/* Adds LABEL to the N of LABELS (at most MAX) unless it is there already:
 * a controller named by [pacer] name, [ab] and its own section is one. */
static void add_label(const char **labels, size_t *n, size_t max, const char *label)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(labels[i], label) == 0)
            return;
    if (*n < max)
        labels[(*n)++] = label;
}

static int cmd_check_config(struct cupace_cli *cli)
{
    struct cupace_config *cfg;
    struct cupace_err err;
    const char *labels[130];
    size_t n = 0;

    if (cli->nargs != 1)
        return cupace_cli_usage_error("check-config takes one CONFIG");
    cfg = cupace_config_load(cli->args[0], cli->sets, cli->nsets, &err);
    if (!cfg) {
        fprintf(stderr, "cupace: %s\n", err.msg);
        return CUPACE_EXIT_USAGE;
    }
    add_label(labels, &n, 130, cfg->pacer_name);
    for (size_t i = 0; i < cfg->nab; i++)
        add_label(labels, &n, 130, cfg->ab[i]);
    for (size_t i = 0; i < cli->npacers; i++)
        add_label(labels, &n, 130, cli->pacers[i]);
    /* sections never named anywhere are instances too: checked, and counted */
    for (size_t i = 0; i < cfg->nsections; i++)
        add_label(labels, &n, 130, cfg->sections[i].label);
    /* what serve and the queue commands would refuse at start */
    if (cupace_cli_check_pacers(cfg, labels, n, &err) < 0 || check_stage_plugin(cfg, &err) < 0 ||
        cupace_cli_check_queue_url(cfg, &err) < 0) {
        fprintf(stderr, "cupace: %s\n", err.msg);
        cupace_config_free(cfg);
        return CUPACE_EXIT_USAGE;
    }
    if (!cli->quiet)
        printf("%s: ok (%llu partitions, %s arrivals, %zu controller%s checked)\n", cfg->path,
               (unsigned long long)cupace_workload_partitions(cfg),
               cupace_arrival_name(cfg->workload.arrival), n, n == 1 ? "" : "s");
    cupace_config_free(cfg);
    return CUPACE_EXIT_OK;
}

/* ---- argument parsing -------------------------------------------------- */

int cupace_cli_usage_error(const char *what)
{
    fprintf(stderr, "cupace: %s (cupace --help for usage)\n", what);
    return CUPACE_EXIT_USAGE;
}

/* The options that take one value each (getopt's letters, below). */
#define SINGLE_VALUED "jcpSBJnNbry"

/* What each subcommand reads of the options, as getopt's letters; -h and
 * -V are anyone's.  An option no subcommand reads would be dropped unsaid. */
static const struct {
    const char *command, *takes;
} command_flags[] = {
    { "run", "jcpsPSBJqv" },         /* --seeds and co. refused by run itself, with why */
    { "ab", "jcpsPSBJqv" },
    { "plugins", "sqv" },
    { "check-config", "sPqv" },
    { "queue", "jsnNbryqv" },
    { "serve", "sqv" },
    { "help", "" },
};

static const struct option options[] = {
    { "json", required_argument, NULL, 'j' },
    { "csv", required_argument, NULL, 'c' },
    { "plot", required_argument, NULL, 'p' },
    { "set", required_argument, NULL, 's' },
    { "pacer", required_argument, NULL, 'P' },
    { "seeds", required_argument, NULL, 'S' },
    { "baseline", required_argument, NULL, 'B' },
    { "jobs", required_argument, NULL, 'J' },
    { "count", required_argument, NULL, 'n' },
    { "partitions", required_argument, NULL, 'N' },
    { "bytes", required_argument, NULL, 'b' },
    { "priority", required_argument, NULL, 'r' },
    { "payload", required_argument, NULL, 'y' },
    { "quiet", no_argument, NULL, 'q' },
    { "verbose", no_argument, NULL, 'v' },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 },
};

static const char *flag_name(int c)
{
    static char name[32];

    for (const struct option *o = options; o->name; o++)
        if (o->val == c) {
            snprintf(name, sizeof name, "--%s", o->name);
            return name;
        }
    snprintf(name, sizeof name, "-%c", c);
    return name;
}

/* Refuses an option the subcommand does not read. */
static int flags_apply(const struct cupace_cli *cli)
{
    for (size_t i = 0; i < sizeof command_flags / sizeof command_flags[0]; i++) {
        if (strcmp(cli->command, command_flags[i].command) != 0)
            continue;
        for (const char *g = cli->given; *g; g++)
            if (!strchr(command_flags[i].takes, *g) && *g != 'h' && *g != 'V') {
                char msg[160];
                snprintf(msg, sizeof msg, "%s does not apply to %s", flag_name(*g),
                         cli->command);
                return cupace_cli_usage_error(msg);
            }
    }
    return 0;
}

static int parse_args(struct cupace_cli *cli, int argc, char **argv)
{
    int c;
    size_t ngiven = 0;

    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":qvhV", options, NULL)) != -1) {
        /* a flag that takes one value, given twice: the last would win unsaid */
        if (strchr(SINGLE_VALUED, c) && c != 0 && memchr(cli->given, c, ngiven)) {
            char msg[128];
            snprintf(msg, sizeof msg, "%s given twice", flag_name(c));
            return cupace_cli_usage_error(msg);
        }
        if (ngiven + 1 < sizeof cli->given && !memchr(cli->given, c, ngiven))
            cli->given[ngiven++] = (char)c;
        switch (c) {
        case 'j': cli->json = optarg; break;
        case 'c': cli->csv = optarg; break;
        case 'p': cli->plot = optarg; break;
        case 's':
            if (cli->nsets == CUPACE_CLI_MAX)
                return cupace_cli_usage_error("too many --set");
            cli->sets[cli->nsets++] = optarg;
            break;
        case 'P':
            if (cli->npacers == CUPACE_CLI_MAX)
                return cupace_cli_usage_error("too many --pacer");
            cli->pacers[cli->npacers++] = optarg;
            break;
        case 'S': cli->seeds = optarg; break;
        case 'B': cli->baseline = optarg; break;
        case 'J': cli->jobs = optarg; break;
        case 'n': cli->count = optarg; break;
        case 'N': cli->partitions = optarg; break;
        case 'b': cli->bytes = optarg; break;
        case 'r': cli->priority = optarg; break;
        case 'y': cli->payload = optarg; break;
        case 'q': cli->quiet = 1; break;
        case 'v': cli->verbose++; break;
        case 'h': cli->help = 1; break;
        case 'V': cli->version = 1; break;
        case ':': {
            char msg[128];
            snprintf(msg, sizeof msg, "option '%s' needs a value", argv[optind - 1]);
            return cupace_cli_usage_error(msg);
        }
        default: {
            char msg[128];
            snprintf(msg, sizeof msg, "unknown option '%s'", argv[optind - 1]);
            return cupace_cli_usage_error(msg);
        }
        }
    }
    for (int i = optind; i < argc; i++) {
        if (!cli->command)
            cli->command = argv[i];
        else if (cli->nargs < CUPACE_CLI_MAX)
            cli->args[cli->nargs++] = argv[i];
        else
            return cupace_cli_usage_error("too many arguments");
    }
    for (size_t i = 0; i < cli->nsets; i++)
        if (!strchr(cli->sets[i], '=') || !strchr(cli->sets[i], '.')) {
            char msg[256];
            snprintf(msg, sizeof msg, "--set '%s': expected SECTION.KEY=VALUE", cli->sets[i]);
            return cupace_cli_usage_error(msg);
        }
    return 0;
}

/* What went to stdout must have got there: a table lost to a full disk
 * or a closed pipe is not a success.  Said once, here, for every command. */
static int stdout_written(int rc)
{
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "cupace: writing to stdout failed%s%s\n", errno ? ": " : "",
                errno ? strerror(errno) : "");
        return rc == CUPACE_EXIT_OK ? CUPACE_EXIT_USAGE : rc;
    }
    return rc;
}


static int run_command(struct cupace_cli *cli)
{
    if (cli->version) {
        printf("cupace %s (controller ABI %u)\n", PACKAGE_VERSION, (unsigned)CUPACE_PACER_ABI);
        return CUPACE_EXIT_OK;
    }
    if (cli->help && cli->command && strcmp(cli->command, "help") != 0)
        return help_for(cli->command, stdout);
    if (cli->help || !cli->command) {
        usage(cli->help ? stdout : stderr);
        return cli->help ? CUPACE_EXIT_OK : CUPACE_EXIT_USAGE;
    }
    if (strcmp(cli->command, "help") == 0) {
        if (cli->nargs == 0) {
            usage(stdout);
            return CUPACE_EXIT_OK;
        }
        return help_for(cli->args[0], stdout);
    }
    if (flags_apply(cli) != 0)
        return CUPACE_EXIT_USAGE;
    if (strcmp(cli->command, "plugins") == 0)
        return cmd_plugins(cli);
    if (strcmp(cli->command, "check-config") == 0)
        return cmd_check_config(cli);
    if (strcmp(cli->command, "run") == 0) {
        if (cli->nargs == 0)
            cli->args[cli->nargs++] = CUPACE_SYSCONFDIR "/cupace/cupace.ini";
        return cupace_cli_run(cli, 0);
    }
    if (strcmp(cli->command, "ab") == 0)
        return cupace_cli_run(cli, 1);
    if (strcmp(cli->command, "queue") == 0)
        return cupace_cli_queue(cli);
    if (strcmp(cli->command, "serve") == 0)
        return cupace_cli_serve(cli);
    {
        char msg[128];
        snprintf(msg, sizeof msg, "unknown subcommand '%s'", cli->command);
        return cupace_cli_usage_error(msg);
    }
}

int main(int argc, char **argv)
{
    struct cupace_cli cli;

    memset(&cli, 0, sizeof cli);
    if (parse_args(&cli, argc, argv) != 0)
        return CUPACE_EXIT_USAGE;
    return stdout_written(run_command(&cli));
}
