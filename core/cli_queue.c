/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * cli_queue.c -- `cupace queue init|submit|status CONFIG`: the job queue of
 * [queue] (DESIGN §10), so that an operator can try `cupace serve` in a
 * minute.
 *
 * init creates the schema (idempotent); submit adds jobs, by default the
 * [workload]'s jobs, partitions_per_job and partition_memory; status prints
 * the jobs by state.  The queue itself is queue.c; this file parses flags
 * and prints.  Exit: 0 done, 1 the database could not be reached or refused,
 * 2 usage or configuration.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "queue.h"
#include "units.h"

/* Parses flag FLAG's VALUE with PARSE into *out within [min, max]; exit
 * code 2 with a message otherwise. */
static int flag_value(const char *flag, const char *value,
                      int (*parse)(const char *, uint64_t *, const char **), uint64_t min,
                      uint64_t max, uint64_t *out)
{
    const char *why = "a number";
    char msg[256];

    if (!value)
        return 0;
    if (parse(value, out, &why) == 0 && *out >= min && *out <= max)
        return 0;
    snprintf(msg, sizeof msg, "%s '%s': expected %s from %" PRIu64 " to %" PRIu64, flag, value,
             why, min, max);
    return cupace_cli_usage_error(msg);
}

struct submit_args {
    uint64_t count, partitions, bytes, priority;
};

/* The flags of submit, over the [workload]'s values: 0, or exit code 2. */
static int submit_args(const struct cupace_cli *cli, const struct cupace_config *cfg,
                       struct submit_args *a)
{
    a->count = cfg->workload.jobs;
    a->partitions = cfg->workload.partitions_per_job;
    a->bytes = cfg->workload.partition_memory;
    a->priority = 0;
    return flag_value("--count", cli->count, cupace_parse_u64, 1, 100000000, &a->count) ||
           flag_value("--partitions", cli->partitions, cupace_parse_u64, 1, 1000000,
                      &a->partitions) ||
           flag_value("--bytes", cli->bytes, cupace_parse_size, 0, INT64_MAX, &a->bytes) ||
           flag_value("--priority", cli->priority, cupace_parse_u64, 0, INT32_MAX, &a->priority)
               ? CUPACE_EXIT_USAGE : 0;
}

static int submit(const struct cupace_cli *cli, const struct submit_args *a,
                  struct cupace_queue *q, struct cupace_err *err)
{
    int64_t first = 0;
    int rc = cupace_queue_submit(q, a->count, (uint32_t)a->partitions, a->bytes,
                                 (int32_t)a->priority, cli->payload, &first, err);

    if (rc != CUPACE_QUEUE_OK)
        return rc;
    if (!cli->quiet) {
        char b[32];

        cupace_format_size(a->bytes, b, sizeof b);
        printf("submitted %" PRIu64 " job%s of %" PRIu64 " partition%s of %s (ids from %" PRId64
               ")\n", a->count, a->count == 1 ? "" : "s", a->partitions,
               a->partitions == 1 ? "" : "s", b, first);
    }
    return CUPACE_QUEUE_OK;
}

static void print_json(FILE *fp, const char *table, const struct cupace_queue_counts *c)
{
    fprintf(fp, "{\"table\": \"%s\", \"queued\": %" PRIu64 ", \"claimed\": %" PRIu64
                ", \"expired\": %" PRIu64 ", \"done\": %" PRIu64 ", \"failed\": %" PRIu64 "}\n",
            table, c->queued, c->claimed, c->expired, c->done, c->failed);
}

static int status(const struct cupace_cli *cli, const struct cupace_config *cfg,
                  struct cupace_queue *q, struct cupace_err *err)
{
    struct cupace_queue_counts c;
    int rc = cupace_queue_counts(q, &c, err);
    FILE *fp;

    if (rc != CUPACE_QUEUE_OK)
        return rc;
    if (!cli->json) {
        printf("queued %" PRIu64 "\nclaimed %" PRIu64 "\nexpired %" PRIu64 "\ndone %" PRIu64
               "\nfailed %" PRIu64 "\n", c.queued, c.claimed, c.expired, c.done, c.failed);
        return CUPACE_QUEUE_OK;
    }
    if (strcmp(cli->json, "-") == 0) {
        print_json(stdout, cfg->queue.table, &c);
        return CUPACE_QUEUE_OK;
    }
    if (!(fp = fopen(cli->json, "w")))
        return cupace_err_set(err, "--json %s: cannot write", cli->json), CUPACE_QUEUE_ERROR;
    print_json(fp, cfg->queue.table, &c);
    if (fclose(fp) != 0)
        return cupace_err_set(err, "--json %s: write failed", cli->json), CUPACE_QUEUE_ERROR;
    return CUPACE_QUEUE_OK;
}

const char *cupace_cli_queue_error(const struct cupace_config *cfg, const char *msg, int retries,
                                   char *buf, size_t len)
{
    const char *retry = strstr(msg, " (next attempt in ");
    int cut = retry ? (int)(retry - msg) : (int)strlen(msg);
    /* queue.c's own mark of a table nobody made; libpq's "database ... does
     * not exist" and "role ... does not exist" are the url's */
    int missing = strstr(msg, "(run `cupace queue init`)") != NULL;
    const struct cupace_origin *at = cupace_config_origin(cfg, "queue", missing ? "table" : "url");
    int database = strncmp(msg, "queue ", 6) == 0;   /* not --json's, say */
    char origin[4200], where[4300] = "";

    if (database && at)
        snprintf(where, sizeof where, "%s: [queue] %s: ",
                 cupace_origin_format(at, origin, sizeof origin), missing ? "table" : "url");
    else if (database && !missing && !cfg->queue.url[0])
        snprintf(where, sizeof where, "%s: [queue] url is not set, so libpq's defaults (the local "
                 "server's socket, a database named after the user) are tried: ", cfg->path);
    snprintf(buf, len, "%s%.*s%s", where, cut, msg, retry && retries ? " (retrying)" : "");
    return buf;
}

int cupace_cli_check_queue_url(const struct cupace_config *cfg, struct cupace_err *err)
{
    if (cupace_queue_check_url(cfg->queue.url, err) < 0) {
        cupace_err_at(err, cupace_config_origin(cfg, "queue", "url"), "queue", "url");
        return -1;
    }
    return 0;
}

int cupace_cli_queue(struct cupace_cli *cli)
{
    struct cupace_config *cfg;
    struct cupace_queue *q;
    struct cupace_err err;
    struct submit_args args;
    const char *verb;
    int rc;

    if (cli->nargs != 2)
        return cupace_cli_usage_error("queue takes init, submit or status, then CONFIG");
    verb = cli->args[0];
    if (strcmp(verb, "init") != 0 && strcmp(verb, "submit") != 0 && strcmp(verb, "status") != 0) {
        char msg[128];
        snprintf(msg, sizeof msg, "queue: unknown verb '%.40s' (init, submit, status)", verb);
        return cupace_cli_usage_error(msg);
    }
    if (strcmp(verb, "submit") != 0 &&
        (cli->count || cli->partitions || cli->bytes || cli->priority || cli->payload)) {
        char msg[160];
        snprintf(msg, sizeof msg, "queue %s: --count, --partitions, --bytes, --priority and "
                 "--payload are submit's", verb);
        return cupace_cli_usage_error(msg);
    }
    if (strcmp(verb, "status") != 0 && cli->json) {
        char msg[96];
        snprintf(msg, sizeof msg, "queue %s: --json is status's", verb);
        return cupace_cli_usage_error(msg);
    }
    cfg = cupace_config_load(cli->args[1], cli->sets, cli->nsets, &err);
    if (!cfg || cupace_cli_check_queue_url(cfg, &err) < 0) {
        fprintf(stderr, "cupace: %s\n", err.msg);
        cupace_config_free(cfg);
        return CUPACE_EXIT_USAGE;
    }
    if (strcmp(verb, "submit") == 0 && submit_args(cli, cfg, &args) != 0) {
        cupace_config_free(cfg);
        return CUPACE_EXIT_USAGE;
    }
    q = cupace_queue_open(&cfg->queue, NULL, &err);
    if (!q) {
        fprintf(stderr, "cupace: %s\n", err.msg);
        cupace_config_free(cfg);
        return CUPACE_EXIT_USAGE;
    }
    if (strcmp(verb, "init") == 0) {
        rc = cupace_queue_init(q, &err);
        if (rc == CUPACE_QUEUE_OK && !cli->quiet)
            printf("queue %s: ready (results in %s_done)\n", cfg->queue.table, cfg->queue.table);
    } else if (strcmp(verb, "submit") == 0) {
        rc = submit(cli, &args, q, &err);
    } else {
        rc = status(cli, cfg, q, &err);
    }
    cupace_queue_close(q);
    if (rc != CUPACE_QUEUE_OK) {
        char msg[sizeof err.msg + 4400];    /* and where the config set [queue] */

        fprintf(stderr, "cupace: %s\n", cupace_cli_queue_error(cfg, err.msg, 0, msg, sizeof msg));
        cupace_config_free(cfg);
        return CUPACE_EXIT_FAILED;
    }
    cupace_config_free(cfg);
    return CUPACE_EXIT_OK;
}
