/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * conf.c -- loading and validating cupace.ini.
 *
 * The schema is one table, `keys`, of (section, key, type, field, range):
 * parsing, the unknown-key check and the messages all come from it.  Keys
 * that need more than a table row (lists, change points, the pacer sections)
 * have a parser of their own.  The file is read by lines.c (lines of any
 * length, counted, so that every message can name one) and split by ini.c;
 * what each line means is decided here.  A key written twice is an error.
 */
#include "config.h"
#include "conf.h"
#include "grow.h"
#include "ini.h"
#include "lines.h"
#include "units.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum key_type { K_U64, K_DURATION, K_SIZE, K_F64, K_BOOL, K_ENUM, K_SPECIAL };

struct loader;
/* A key with a parser of its own; `value` is a private copy it may cut up.
 * It returns -1 with *why set to what was expected, or having said why
 * itself with fail() where the reason needs the value's words. */
typedef int (*special_fn)(struct loader *ld, char *value, const char **why);

struct keydef {
    const char *section;
    const char *key;
    enum key_type type;
    size_t off;                     /* offset in struct cupace_config */
    double min, max;                /* for numbers; sizes and durations too */
    const char *const *names;       /* K_ENUM: the values, in enum order */
    special_fn special;
};

static const char *const mode_names[] = { "sim", "realtime", NULL };
static const char *const arrival_names[] = { "backlog", "poisson", "burst", "trace", NULL };
static const char *const dist_names[] = { "fixed", "lognormal", "gamma", "exponential", NULL };

static int parse_device_ids(struct loader *ld, char *v, const char **why);
static int parse_device_speed(struct loader *ld, char *v, const char **why);
static int parse_change(struct loader *ld, char *v, const char **why);
static int parse_backend(struct loader *ld, char *v, const char **why);
static int parse_pacer_name(struct loader *ld, char *v, const char **why);
static int parse_pacer_path(struct loader *ld, char *v, const char **why);
static int parse_trace(struct loader *ld, char *v, const char **why);
static int parse_ab_pacers(struct loader *ld, char *v, const char **why);
static int parse_queue_url(struct loader *ld, char *v, const char **why);
static int parse_queue_table(struct loader *ld, char *v, const char **why);
static int parse_fail_at(struct loader *ld, char *v, const char **why);
static int parse_serve_metrics(struct loader *ld, char *v, const char **why);

#define E(f) offsetof(struct cupace_config, engine.f)
#define W(f) offsetof(struct cupace_config, workload.f)
#define Q(f) offsetof(struct cupace_config, queue.f)
#define C(f) offsetof(struct cupace_config, cuda.f)
#define BIG 1.8e19

static const struct keydef keys[] = {
    { "engine", "mode", K_ENUM, E(mode), 0, 0, mode_names, NULL },
    { "engine", "backend", K_SPECIAL, 0, 0, 0, NULL, parse_backend },
    { "engine", "devices", K_U64, E(devices), 1, CUPACE_MAX_DEVICES, NULL, NULL },
    { "engine", "device_ids", K_SPECIAL, 0, 0, 0, NULL, parse_device_ids },
    { "engine", "workers_per_device", K_U64, E(workers_per_device), 1, 64, NULL, NULL },
    { "engine", "synth_workers", K_U64, E(synth_workers), 1, 4096, NULL, NULL },
    { "engine", "memory_budget", K_SIZE, E(memory_budget), 1, BIG, NULL, NULL },
    { "engine", "seed", K_U64, E(seed), 0, BIG, NULL, NULL },
    { "engine", "status_interval", K_DURATION, E(status_interval_ns), 1e8, BIG, NULL, NULL },
    { "engine", "stall_timeout", K_DURATION, E(stall_timeout_ns), 0, BIG, NULL, NULL },
    { "engine", "stop_timeout", K_DURATION, E(stop_timeout_ns), 0, BIG, NULL, NULL },
    { "pacer", "name", K_SPECIAL, 0, 0, 0, NULL, parse_pacer_name },
    { "pacer", "path", K_SPECIAL, 0, 0, 0, NULL, parse_pacer_path },
    { "workload", "jobs", K_U64, W(jobs), 1, 1e8, NULL, NULL },
    { "workload", "partitions_per_job", K_U64, W(partitions_per_job), 1, 1e6, NULL, NULL },
    { "workload", "arrival", K_ENUM, W(arrival), 0, 0, arrival_names, NULL },
    { "workload", "interarrival", K_DURATION, W(interarrival_ns), 1, BIG, NULL, NULL },
    { "workload", "burst_jobs", K_U64, W(burst_jobs), 1, 1e8, NULL, NULL },
    { "workload", "burst_every", K_DURATION, W(burst_every_ns), 1, BIG, NULL, NULL },
    { "workload", "trace", K_SPECIAL, 0, 0, 0, NULL, parse_trace },
    { "workload", "partition_memory", K_SIZE, W(partition_memory), 1, BIG, NULL, NULL },
    { "workload", "release_at_kernel", K_SIZE, W(release_at_kernel), 0, BIG, NULL, NULL },
    { "workload", "synth_time", K_DURATION, W(synth_ns), 0, BIG, NULL, NULL },
    { "workload", "synth_cv", K_F64, W(synth_cv), 0, 10, NULL, NULL },
    { "workload", "synth_dist", K_ENUM, W(synth_dist), 0, 0, dist_names, NULL },
    { "workload", "cpu_slots", K_U64, W(cpu_slots), 1, 1e6, NULL, NULL },
    { "workload", "gpu_prep", K_DURATION, W(gpu_prep_ns), 0, BIG, NULL, NULL },
    { "workload", "gpu_kernel", K_DURATION, W(gpu_kernel_ns), 0, BIG, NULL, NULL },
    { "workload", "gpu_epilogue", K_DURATION, W(gpu_epilogue_ns), 0, BIG, NULL, NULL },
    { "workload", "gpu_cv", K_F64, W(gpu_cv), 0, 10, NULL, NULL },
    { "workload", "gpu_dist", K_ENUM, W(gpu_dist), 0, 0, dist_names, NULL },
    { "workload", "gpu_exclusive", K_BOOL, W(gpu_exclusive), 0, 1, NULL, NULL },
    { "workload", "contention", K_F64, W(contention), 1e-3, 1e3, NULL, NULL },
    { "workload", "device_speed", K_SPECIAL, 0, 0, 0, NULL, parse_device_speed },
    { "workload", "fail_rate", K_F64, W(fail_rate), 0, 1, NULL, NULL },
    { "workload", "fail_at", K_SPECIAL, 0, 0, 0, NULL, parse_fail_at },
    { "workload", "time_scale", K_F64, W(time_scale), 1e-6, 1e6, NULL, NULL },
    { "workload", "change", K_SPECIAL, 0, 0, 0, NULL, parse_change },
    { "ab", "pacers", K_SPECIAL, 0, 0, 0, NULL, parse_ab_pacers },
    { "queue", "url", K_SPECIAL, 0, 0, 0, NULL, parse_queue_url },
    { "queue", "table", K_SPECIAL, 0, 0, 0, NULL, parse_queue_table },
    { "queue", "lease", K_DURATION, Q(lease_ns), 1e8, 8.64e13, NULL, NULL },
    { "queue", "poll", K_DURATION, Q(poll_ns), 1e7, 3.6e12, NULL, NULL },
    { "queue", "max_attempts", K_U64, Q(max_attempts), 1, 1e6, NULL, NULL },
    { "serve", "metrics", K_SPECIAL, 0, 0, 0, NULL, parse_serve_metrics },
    { "cuda", "transfer", K_SIZE, C(transfer), 8, 1099511627776.0, NULL, NULL },
    { "cuda", "verify", K_BOOL, C(verify), 0, 1, NULL, NULL },
};
#define NKEYS (sizeof keys / sizeof keys[0])

/* K_ENUM fields are written as an int */
_Static_assert(sizeof(enum cupace_dist) == sizeof(int) && sizeof(enum cupace_mode) == sizeof(int),
               "enums are int-sized");

struct loader {
    struct cupace_config *cfg;
    struct cupace_err *err;
    const char *file;               /* the origin of what is being read */
    unsigned line;
    const char *set;                /* the override being applied (--set, cupace_engine_set), or NULL */
    int failed;
    struct cupace_origin seen[NKEYS];
};

/* The origin of what is being read. */
static struct cupace_origin reading_at(const struct loader *ld)
{
    return (struct cupace_origin){ ld->file, ld->line, ld->set };
}

const char *cupace_origin_format(const struct cupace_origin *at, char *buf, size_t len)
{
    if (at->set)
        snprintf(buf, len, "%s '%s'", at->file ? at->file : "--set", at->set);
    else if (at->line)
        snprintf(buf, len, "%s:%u", at->file ? at->file : "?", at->line);
    else
        snprintf(buf, len, "%s", at->file ? at->file : "?");
    return buf;
}

void cupace_err_at(struct cupace_err *err, const struct cupace_origin *at, const char *section,
                   const char *key)
{
    char place[4200];

    if (!at || !at->file)
        return;
    cupace_origin_format(at, place, sizeof place);
    if (key)
        cupace_err_prefix(err, "%s: [%s] %s", place, section, key);
    else
        cupace_err_prefix(err, "%s: [%s]", place, section);
}

static int find_key(const char *section, const char *key)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (strcmp(keys[i].section, section) == 0 && strcmp(keys[i].key, key) == 0)
            return (int)i;
    return -1;
}

static int section_has_keys(const char *section)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (strcmp(keys[i].section, section) == 0)
            return 1;
    return 0;
}

static const char *pacer_label_of(const char *section)
{
    return strncmp(section, "pacer.", 6) == 0 ? section + 6 : NULL;
}

static const char *stages_name_of(const char *section)
{
    return strncmp(section, "stages.", 7) == 0 ? section + 7 : NULL;
}

/*
 * Out of memory while loading: the allocation jumps back to
 * cupace_config_load, which frees what the config holds so far and returns
 * the error.  The engine is a library: it neither prints nor aborts its
 * host.  Per thread, since configs load on any (ab --jobs, libcupace).
 * Every partly made thing the config points to is valid when a jump can
 * come (a count grows only after its entry is whole).
 */
static _Thread_local jmp_buf *oom_jump;

static void out_of_memory(void)
{
    if (oom_jump)
        longjmp(*oom_jump, 1);
    abort();                            /* not reached: every allocation here is in a load */
}

static char *xstrdup(const char *s)
{
    char *d = strdup(s ? s : "");

    if (!d)
        out_of_memory();
    return d;
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);

    if (!q)
        out_of_memory();
    return q;
}

static int fail(struct loader *ld, const char *section, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(struct loader *ld, const char *section, const char *key, const char *fmt, ...)
{
    struct cupace_origin o = reading_at(ld);
    char reason[4096];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    if (!ld->failed) {
        cupace_err_set(ld->err, "%s", reason);
        cupace_err_at(ld->err, &o, section, key);
    }
    ld->failed = 1;
    return -1;
}

/* A key written twice in the file is an error wherever it is: one of the
 * two would be silently ignored.  Overrides (--set, cupace_engine_set)
 * exist to override, so a value set by one, or over one, is not. */
static int set_twice(const struct loader *ld, const struct cupace_origin *first)
{
    return first->file && !ld->set && !first->set;
}

/* ---- special keys ------------------------------------------------------ */

/* Splits a comma-separated list in place; returns the number of items. */
static size_t split_list(char *s, char sep, char **items, size_t max)
{
    size_t n = 0;
    char *p = s;

    if (!*s)
        return 0;
    for (;;) {
        char *end = strchr(p, sep), *a, *b;

        if (end)
            *end = '\0';
        a = p;
        while (isspace((unsigned char)*a))
            a++;
        b = a + strlen(a);
        while (b > a && isspace((unsigned char)b[-1]))
            *--b = '\0';
        if (n < max)
            items[n] = a;
        n++;
        if (!end)
            break;
        p = end + 1;
    }
    return n;
}

static int parse_device_ids(struct loader *ld, char *v, const char **why)
{
    char *items[CUPACE_MAX_DEVICES + 1];
    struct cupace_engine_conf *e = &ld->cfg->engine;
    size_t n;

    *why = "a comma-separated list of device numbers, e.g. 0,2";
    e->ndevice_ids = 0;
    if (!*v)
        return 0;
    n = split_list(v, ',', items, CUPACE_MAX_DEVICES + 1);
    if (n > CUPACE_MAX_DEVICES) {
        *why = "at most 64 devices";
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t id;
        const char *w;

        if (cupace_parse_u64(items[i], &id, &w) < 0 || id > 1023)
            return -1;
        for (size_t j = 0; j < i; j++)
            if (e->device_ids[j] == id) {
                *why = "each device once";
                return -1;
            }
        e->device_ids[i] = (unsigned)id;
    }
    e->ndevice_ids = (unsigned)n;
    return 0;
}

static int parse_speeds(char *v, char sep, double *out, unsigned *count, const char **why)
{
    char *items[CUPACE_MAX_DEVICES + 1];
    size_t n;

    *why = "relative speeds from 1e-6 to 1e6, one per device or one for all, e.g. 1.0,0.5";
    n = split_list(v, sep, items, CUPACE_MAX_DEVICES + 1);
    if (n == 0 || n > CUPACE_MAX_DEVICES)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const char *w;

        if (cupace_parse_f64(items[i], &out[i], &w) < 0 || !(out[i] >= 1e-6) || out[i] > 1e6)
            return -1;
    }
    *count = (unsigned)n;
    return 0;
}

static int parse_device_speed(struct loader *ld, char *v, const char **why)
{
    struct cupace_workload *w = &ld->cfg->workload;

    return parse_speeds(v, ',', w->device_speed, &w->ndevice_speed, why);
}

static const char *const change_names[] = { "synth_time", "gpu_prep", "gpu_kernel",
                                            "gpu_epilogue", "contention", "device_speed" };

static int parse_one_change(char *item, struct cupace_change *c, const char **why)
{
    char *colon, *eq, *k, *val;

    *why = "AT:KEY=VALUE, e.g. 600s:gpu_kernel=5s";
    colon = strchr(item, ':');
    if (!colon)
        return -1;
    *colon = '\0';
    eq = strchr(colon + 1, '=');
    if (!eq)
        return -1;
    *eq = '\0';
    k = colon + 1;
    val = eq + 1;
    while (isspace((unsigned char)*k))
        k++;
    for (char *e = k + strlen(k); e > k && isspace((unsigned char)e[-1]);)
        *--e = '\0';
    if (cupace_parse_duration(item, &c->at_ns, why) < 0)
        return -1;
    if (c->at_ns > CUPACE_HORIZON_NS) {
        *why = "an AT within cupace's horizon of 2^62 ns (146 years): a change past it never "
               "applies";
        return -1;
    }
    for (unsigned i = 0; i < sizeof change_names / sizeof change_names[0]; i++) {
        if (strcmp(k, change_names[i]) != 0)
            continue;
        c->key = (enum cupace_change_key)i;
        switch (c->key) {
        case CUPACE_CHANGE_CONTENTION: {
            int bad = cupace_parse_f64(val, &c->value, why) < 0 || c->value < 1e-3 ||
                      c->value > 1e3;

            *why = "a contention factor from 0.001 to 1000";   /* parse_f64 set its own */
            return bad ? -1 : 0;
        }
        case CUPACE_CHANGE_DEVICE_SPEED:
            /* ',' separates change points, so speeds are separated by '/' here */
            return parse_speeds(val, '/', c->speed, &c->nspeed, why);
        default:
            return cupace_parse_duration(val, &c->ns, why);
        }
    }
    *why = "a KEY that may change: synth_time, gpu_prep, gpu_kernel, gpu_epilogue, "
           "contention, device_speed (speeds separated by '/')";
    return -1;
}

static int cmp_change(const void *a, const void *b)
{
    const struct cupace_change *x = a, *y = b;

    return x->at_ns < y->at_ns ? -1 : x->at_ns > y->at_ns;
}

static int parse_change(struct loader *ld, char *v, const char **why)
{
    char *items[256];
    struct cupace_workload *w = &ld->cfg->workload;
    struct cupace_change *list;
    size_t n;

    free(w->changes);
    w->changes = NULL;
    w->nchanges = 0;
    free(w->change_text);
    w->change_text = NULL;
    if (!*v)
        return 0;
    /* kept whole: a refusal an entry causes later (the horizon) quotes it */
    w->change_text = xstrdup(v);
    n = split_list(v, ',', items, 256);
    if (n > 256) {
        *why = "at most 256 change points";
        return -1;
    }
    list = xrealloc(NULL, n * sizeof *list);
    memset(list, 0, n * sizeof *list);
    for (size_t i = 0; i < n; i++) {
        list[i].entry = (unsigned)i + 1;
        list[i].text_off = (unsigned)(items[i] - v);     /* split_list cut v in place */
        list[i].text_len = (unsigned)strlen(items[i]);
        if (parse_one_change(items[i], &list[i], why) < 0) {
            free(list);
            return -1;
        }
    }
    /* Stable order for equal times: insertion sort keeps what was written. */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && cmp_change(&list[j - 1], &list[j]) > 0; j--) {
            struct cupace_change t = list[j];
            list[j] = list[j - 1];
            list[j - 1] = t;
        }
    /* two values for one key at one instant: which wins would be the
     * order they were written in, which reads as a typo more often (the
     * sort kept that order, so the first of the two was written first) */
    for (size_t i = 1; i < n; i++)
        if (list[i].at_ns == list[i - 1].at_ns && list[i].key == list[i - 1].key) {
            static _Thread_local char twice[160];
            const struct cupace_change *a = &list[i - 1], *b = &list[i];

            snprintf(twice, sizeof twice, "one value per key and instant (entries %u and %u "
                     "both change %s at %.9gs)", a->entry, b->entry, change_names[a->key],
                     (double)a->at_ns / 1e9);
            *why = twice;
            free(list);
            return -1;
        }
    w->changes = list;
    w->nchanges = n;
    return 0;
}

/* auto | cuda | emulated, or the NAME of a stage plugin. */
static int parse_backend(struct loader *ld, char *v, const char **why)
{
    static const char *const builtin[] = { "auto", "cuda", "emulated" };
    struct cupace_engine_conf *e = &ld->cfg->engine;

    *why = "auto, cuda, emulated, or a stage plugin's name (" CUPACE_NAME_RULE ")";
    e->backend_plugin[0] = '\0';
    for (int i = 0; i < 3; i++)
        if (strcmp(v, builtin[i]) == 0) {
            e->backend = (enum cupace_backend)i;
            return 0;
        }
    if (!cupace_is_identifier(v) || strlen(v) >= sizeof e->backend_plugin)
        return -1;
    e->backend = CUPACE_BACKEND_PLUGIN;
    snprintf(e->backend_plugin, sizeof e->backend_plugin, "%s", v);
    return 0;
}

static int parse_pacer_name(struct loader *ld, char *v, const char **why)
{
    *why = "a controller label (" CUPACE_NAME_RULE ")";
    if (!cupace_is_identifier(v))
        return -1;
    free(ld->cfg->pacer_name);
    ld->cfg->pacer_name = xstrdup(v);
    return 0;
}

static int parse_pacer_path(struct loader *ld, char *v, const char **why)
{
    (void)why;
    free(ld->cfg->pacer_path);
    ld->cfg->pacer_path = *v ? xstrdup(v) : NULL;
    return 0;
}

static int parse_ab_pacers(struct loader *ld, char *v, const char **why)
{
    char *items[64];
    struct cupace_config *cfg = ld->cfg;
    size_t n;

    *why = "a comma-separated list of controller labels";
    n = split_list(v, ',', items, 64);
    if (n == 0 || n > 64) {
        *why = "one to 64 controller labels, comma-separated";
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (!cupace_is_identifier(items[i]))
            return -1;
        /* a label twice gives two columns of one name and a --baseline
         * that could mean either */
        for (size_t j = 0; j < i; j++)
            if (strcmp(items[j], items[i]) == 0)
                return fail(ld, "ab", "pacers", "'%s' twice: each controller label once", items[i]);
    }
    for (size_t i = 0; i < cfg->nab; i++)
        free(cfg->ab[i]);
    cfg->nab = 0;
    cfg->ab = xrealloc(cfg->ab, n * sizeof *cfg->ab);
    for (size_t i = 0; i < n; i++) {
        cfg->ab[i] = xstrdup(items[i]);
        cfg->nab = i + 1;
    }
    return 0;
}

static const char *const fail_stage_names[] = { "none", "synth", "prep", "kernel", "epilogue" };

/* "JOB:PARTITION:STAGE"; the job's existence is checked in validate(). */
static int parse_one_fail_at(char *item, struct cupace_fail_at *f)
{
    char *c1 = strchr(item, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, *st;
    uint64_t job, part;
    const char *w;

    if (!c2)
        return -1;
    *c1 = *c2 = '\0';
    if (cupace_parse_u64(item, &job, &w) < 0 || job > UINT32_MAX ||
        cupace_parse_u64(c1 + 1, &part, &w) < 0 || part > UINT32_MAX)
        return -1;
    f->job = (uint32_t)job;
    f->part = (uint32_t)part;
    for (st = c2 + 1; isspace((unsigned char)*st); st++)
        ;
    st[strcspn(st, " \t")] = '\0';
    for (int i = CUPACE_FAIL_SYNTH; i <= CUPACE_FAIL_EPILOGUE; i++)
        if (strcmp(st, fail_stage_names[i]) == 0) {
            f->stage = (enum cupace_fail_stage)i;
            return 0;
        }
    return -1;
}

static int cmp_fail_at(const void *a, const void *b)
{
    const struct cupace_fail_at *x = a, *y = b;

    if (x->job != y->job)
        return x->job < y->job ? -1 : 1;
    return x->part < y->part ? -1 : x->part > y->part;
}

static int parse_fail_at(struct loader *ld, char *v, const char **why)
{
    struct cupace_workload *w = &ld->cfg->workload;
    size_t n = 1;
    char *buf, **items;
    int rc = 0;

    free(w->fail_at);
    w->fail_at = NULL;
    w->nfail_at = 0;
    if (!*v)
        return 0;
    for (const char *c = v; *c; c++)
        n += *c == ',';
    buf = xstrdup(v);
    items = xrealloc(NULL, n * sizeof *items);
    split_list(buf, ',', items, n);
    w->fail_at = xrealloc(NULL, n * sizeof *w->fail_at);
    *why = "JOB:PARTITION:STAGE, comma-separated, with STAGE one of synth, prep, kernel, "
           "epilogue (e.g. 0:3:kernel)";
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = parse_one_fail_at(items[i], &w->fail_at[i]);
    if (rc == 0) {
        qsort(w->fail_at, n, sizeof *w->fail_at, cmp_fail_at);
        for (size_t i = 1; i < n && rc == 0; i++)
            if (cmp_fail_at(&w->fail_at[i - 1], &w->fail_at[i]) == 0) {
                *why = "each partition at most once";
                rc = -1;
            }
    }
    if (rc == 0) {
        w->nfail_at = n;
    } else {
        free(w->fail_at);
        w->fail_at = NULL;
    }
    free(items);
    free(buf);
    return rc;
}

static int parse_trace(struct loader *ld, char *v, const char **why)
{
    (void)why;
    free(ld->cfg->workload.trace);
    ld->cfg->workload.trace = *v ? xstrdup(v) : NULL;
    return 0;
}

static int parse_queue_url(struct loader *ld, char *v, const char **why)
{
    (void)why;
    free(ld->cfg->queue.url);
    ld->cfg->queue.url = xstrdup(v);
    return 0;
}

/* PostgreSQL's reserved key words (its documentation's appendix C, those
 * reserved outright or reserved but for function and type names): the
 * statements name the table unquoted, and such a name is a syntax error
 * in every one of them. */
static int sql_reserved(const char *v)
{
    static const char *const words[] = {
        "all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric",
        "authorization", "binary", "both", "case", "cast", "check", "collate", "collation",
        "column", "concurrently", "constraint", "create", "cross", "current_catalog",
        "current_date", "current_role", "current_schema", "current_time", "current_timestamp",
        "current_user", "default", "deferrable", "desc", "distinct", "do", "else", "end",
        "except", "false", "fetch", "for", "foreign", "freeze", "from", "full", "grant",
        "group", "having", "ilike", "in", "initially", "inner", "intersect", "into", "is",
        "isnull", "join", "lateral", "leading", "left", "like", "limit", "localtime",
        "localtimestamp", "natural", "not", "notnull", "null", "offset", "on", "only", "or",
        "order", "outer", "overlaps", "placing", "primary", "references", "returning", "right",
        "select", "session_user", "similar", "some", "symmetric", "system_user", "table",
        "tablesample", "then", "to", "trailing", "true", "union", "unique", "user", "using",
        "variadic", "verbose", "when", "where", "window", "with",
    };

    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcmp(v, words[i]) == 0)
            return 1;
    return 0;
}

static int parse_queue_table(struct loader *ld, char *v, const char **why)
{
    *why = "a table name: a lower-case letter or '_', then lower-case letters, digits or '_', "
           "at most 48 of them";
    if (!cupace_is_sql_name(v, CUPACE_QUEUE_TABLE_MAX))
        return -1;
    if (sql_reserved(v)) {
        *why = "a table name that is no SQL reserved word (order, user, table, select...)";
        return -1;
    }
    free(ld->cfg->queue.table);
    ld->cfg->queue.table = xstrdup(v);
    return 0;
}

static int parse_serve_metrics(struct loader *ld, char *v, const char **why)
{
    char host[64];
    unsigned port;
    unsigned char addr[16];

    *why = "HOST:PORT with a numeric host, e.g. 127.0.0.1:9464 or [::1]:9464 (empty: none)";
    /* numeric, as serve binds it: a name would pass here and fail there */
    if (*v && (cupace_parse_hostport(v, host, sizeof host, &port) < 0 ||
               (inet_pton(AF_INET, host, addr) != 1 && inet_pton(AF_INET6, host, addr) != 1)))
        return -1;
    free(ld->cfg->serve_metrics);
    ld->cfg->serve_metrics = *v ? xstrdup(v) : NULL;
    return 0;
}

/* ---- the pacer sections ------------------------------------------------ */

static struct cupace_pacer_section *find_in(struct cupace_pacer_section *v, size_t n,
                                            const char *label)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].label, label) == 0)
            return &v[i];
    return NULL;
}

/* [pacer.LABEL] (stages = 0) or [stages.NAME] (stages = 1), made on first sight. */
static struct cupace_pacer_section *get_section(struct loader *ld, const char *label, int stages)
{
    struct cupace_config *cfg = ld->cfg;
    struct cupace_pacer_section **v = stages ? &cfg->stage_sections : &cfg->sections;
    size_t *n = stages ? &cfg->nstage_sections : &cfg->nsections;
    struct cupace_pacer_section *s = find_in(*v, *n, label);

    if (s)
        return s;
    *v = xrealloc(*v, (*n + 1) * sizeof **v);
    s = &(*v)[(*n)++];
    memset(s, 0, sizeof *s);
    s->label = xstrdup(label);
    s->at = reading_at(ld);
    return s;
}

static int set_pacer_key(struct loader *ld, const char *section, const char *label,
                         const char *key, const char *value, int stages)
{
    struct cupace_pacer_section *s;

    if (!cupace_is_identifier(label))
        return fail(ld, section, NULL, "'%s' is not a %s (%s)", label,
                    stages ? "stage plugin name" : "controller label", CUPACE_NAME_RULE);
    s = get_section(ld, label, stages);
    if (!stages && strcmp(key, "plugin") == 0) {
        if (!cupace_is_identifier(value))
            return fail(ld, section, key, "expected a controller name (%s), got '%s'",
                        CUPACE_NAME_RULE, value);
        if (set_twice(ld, &s->plugin_at))
            return fail(ld, section, key, "set twice (first on line %u)", s->plugin_at.line);
        free(s->plugin);
        s->plugin = xstrdup(value);
        s->plugin_at = reading_at(ld);
        return 0;
    }
    for (size_t i = 0; i < s->nkv; i++) {
        if (strcmp(s->kv[i].key, key) != 0)
            continue;
        if (set_twice(ld, &s->kv[i].at))
            return fail(ld, section, key, "set twice (first on line %u)", s->kv[i].at.line);
        free(s->kv[i].value);
        s->kv[i].value = xstrdup(value);
        s->kv[i].at = reading_at(ld);
        return 0;
    }
    s->kv = xrealloc(s->kv, (s->nkv + 1) * sizeof *s->kv);
    s->kv[s->nkv].key = xstrdup(key);
    s->kv[s->nkv].value = xstrdup(value);
    s->kv[s->nkv].at = reading_at(ld);
    s->kv[s->nkv].used = 0;
    s->nkv++;
    return 0;
}

/* ---- one key ----------------------------------------------------------- */

static int in_range(const struct keydef *k, double v)
{
    return v >= k->min && v <= k->max;
}

static int set_table_key(struct loader *ld, int idx, const char *value)
{
    const struct keydef *k = &keys[idx];
    char *field = (char *)ld->cfg + k->off;
    const char *why = "a valid value";
    uint64_t u;
    double d;
    int b;

    switch (k->type) {
    case K_U64:
        if (cupace_parse_u64(value, &u, &why) < 0)
            break;
        if (!in_range(k, (double)u))
            return fail(ld, k->section, k->key, "expected an integer from %.0f to %.0f, got '%s'",
                        k->min, k->max, value);
        memcpy(field, &u, sizeof u);
        return 0;
    case K_DURATION:
    case K_SIZE:
        if ((k->type == K_SIZE ? cupace_parse_size : cupace_parse_duration)(value, &u, &why) < 0) {
            if (!cupace_too_large(why))
                break;
            u = UINT64_MAX;             /* past 64 bits: past the key's own limit too */
        }
        if (!in_range(k, (double)u)) {
            /* the bound it is past: a value too large was once told the minimum */
            int high = (double)u > k->max;
            char bound[32];

            if (k->type == K_SIZE)
                cupace_format_size((uint64_t)(high ? k->max : k->min), bound, sizeof bound);
            else
                cupace_format_duration((uint64_t)(high ? k->max : k->min), bound, sizeof bound);
            if (high)
                return fail(ld, k->section, k->key, "too large: expected at most %s, got '%s'",
                            bound, value);
            return fail(ld, k->section, k->key, "expected at least %s, got '%s'", bound, value);
        }
        memcpy(field, &u, sizeof u);
        return 0;
    case K_F64:
        if (cupace_parse_f64(value, &d, &why) < 0)
            break;
        if (!in_range(k, d))
            return fail(ld, k->section, k->key, "expected a number from %g to %g, got '%s'",
                        k->min, k->max, value);
        memcpy(field, &d, sizeof d);
        return 0;
    case K_BOOL:
        if (cupace_parse_bool(value, &b, &why) < 0)
            break;
        memcpy(field, &b, sizeof b);
        return 0;
    case K_ENUM: {
        char list[256] = "";
        for (int i = 0; k->names[i]; i++) {
            if (strcmp(value, k->names[i]) == 0) {
                memcpy(field, &i, sizeof i);    /* the enums are int-sized */
                return 0;
            }
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? " | " : "",
                     k->names[i]);
        }
        return fail(ld, k->section, k->key, "expected one of %s, got '%s'", list, value);
    }
    case K_SPECIAL: {
        char *copy = xstrdup(value);
        int rc = k->special(ld, copy, &why);

        free(copy);
        if (rc < 0 && ld->failed)
            return -1;              /* it said why itself, with what was wrong in it */
        if (rc < 0)
            break;
        return 0;
    }
    }
    return fail(ld, k->section, k->key, "expected %s, got '%s'", why, value);
}

static int set_key(struct loader *ld, const char *section, const char *key, const char *value)
{
    const char *label = pacer_label_of(section);
    int idx;

    if (label)
        return set_pacer_key(ld, section, label, key, value, 0);
    if ((label = stages_name_of(section)))
        return set_pacer_key(ld, section, label, key, value, 1);
    if (!section_has_keys(section))
        return fail(ld, section, NULL, "unknown section (known: engine, pacer, pacer.LABEL, "
                    "stages.NAME, workload, ab, queue, serve, cuda)");
    idx = find_key(section, key);
    if (idx < 0) {
        /* a key of another section, put in the wrong one: say which */
        for (size_t i = 0; i < NKEYS; i++)
            if (strcmp(keys[i].key, key) == 0)
                return fail(ld, section, key, "unknown key here: it is a key of [%s]",
                            keys[i].section);
        return fail(ld, section, key, "unknown key");
    }
    if (set_twice(ld, &ld->seen[idx]))
        return fail(ld, section, key, "set twice (first on line %u)", ld->seen[idx].line);
    ld->seen[idx] = reading_at(ld);
    return set_table_key(ld, idx, value);
}

/* ---- reading the file -------------------------------------------------- */

/* A section header: checked here, so that an empty unknown section is
 * refused too, and so that [pacer.LABEL] exists even without keys. */
static int on_section(struct loader *ld, const char *name)
{
    if (pacer_label_of(name)) {
        if (!cupace_is_identifier(name + 6))
            return fail(ld, name, NULL, "'%s' is not a controller label (%s)", name + 6,
                        CUPACE_NAME_RULE);
        get_section(ld, name + 6, 0);
        return 0;
    }
    if (stages_name_of(name)) {
        if (!cupace_is_identifier(name + 7))
            return fail(ld, name, NULL, "'%s' is not a stage plugin name (%s)", name + 7,
                        CUPACE_NAME_RULE);
        get_section(ld, name + 7, 1);
        return 0;
    }
    if (!section_has_keys(name))
        return fail(ld, name, NULL, "unknown section (known: engine, pacer, pacer.LABEL, "
                    "stages.NAME, workload, ab, queue, serve, cuda)");
    return 0;
}

static int on_key(struct loader *ld, const char *section, const struct cupace_ini_line *l)
{
    if (l->indented)
        return fail(ld, *section ? section : "(none)", l->key, "an indented line would "
                    "continue the previous value; remove the indentation or start the line "
                    "with ';'");
    if (!*section)
        return fail(ld, "(none)", l->key, "a key before any [section]");
    return set_key(ld, section, l->key, l->value);
}

/* Reads the whole file, line by line, into the config. */
static int read_file(struct loader *ld, const char *file)
{
    struct cupace_lines r;
    struct cupace_ini_line l;
    char *section = xstrdup("");
    const char *why;
    size_t len;
    int rc;

    memset(&l, 0, sizeof l);
    if (cupace_lines_open(&r, file, CUPACE_CONFIG_MAX_BYTES, &why) < 0) {
        free(section);
        return cupace_err_set(ld->err, "%s: cannot open: %s", file, why);
    }
    while ((rc = cupace_lines_next(&r, &len, &why)) > 0) {
        ld->line = r.line;
        cupace_ini_split(r.buf, r.line == 1, &l);
        if (l.kind == CUPACE_INI_SECTION) {
            free(section);
            section = xstrdup(l.name);
            rc = on_section(ld, section);
        } else if (l.kind == CUPACE_INI_KEY) {
            rc = on_key(ld, section, &l);
        } else if (l.kind == CUPACE_INI_ERROR) {
            rc = cupace_err_set(ld->err, "%s:%u: syntax error: %s", file, r.line, l.why);
        }
        if (rc < 0)
            break;
    }
    if (rc < 0 && !ld->failed && l.kind != CUPACE_INI_ERROR)
        cupace_err_set(ld->err, "%s:%u: %s", file, r.line, why);
    cupace_lines_close(&r);
    free(section);
    return rc < 0 ? -1 : 0;
}

/* ---- the trace --------------------------------------------------------- */

static int trace_fail(struct cupace_err *err, const char *file, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int trace_fail(struct cupace_err *err, const char *file, unsigned line, const char *fmt, ...)
{
    char reason[4096];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    return cupace_err_set(err, "%s:%u: %s", file, line, reason);
}

enum { COL_ARRIVAL, COL_PARTITIONS, COL_SYNTH, COL_KERNEL, NCOLS };

static int trace_header(char *line, int *colmap, size_t ncolmax, size_t *ncols,
                        const char *file, unsigned lineno, struct cupace_err *err)
{
    static const char *const names[NCOLS] = { "arrival", "partitions", "synth_time", "gpu_kernel" };
    char *items[32];
    int have[NCOLS] = { 0 };
    size_t n = split_list(line, ',', items, 32);

    if (n > ncolmax)
        return trace_fail(err, file, lineno, "more than %zu columns", ncolmax);
    for (size_t i = 0; i < n; i++) {
        colmap[i] = -1;
        for (int c = 0; c < NCOLS; c++)
            if (strcmp(items[i], names[c]) == 0)
                colmap[i] = c;
        if (colmap[i] < 0)
            return trace_fail(err, file, lineno, "unknown column '%s' (known: arrival, partitions, "
                              "synth_time, gpu_kernel)", items[i]);
        if (have[colmap[i]]++)
            return trace_fail(err, file, lineno, "column '%s' twice", items[i]);
    }
    if (!have[COL_ARRIVAL] || !have[COL_PARTITIONS])
        return trace_fail(err, file, lineno, "the header must name the columns 'arrival' and "
                          "'partitions' (got '%s')", n ? items[0] : "");
    *ncols = n;
    return 0;
}

static int trace_row(char *line, const int *colmap, size_t ncols, struct cupace_trace_job *job,
                     const char *file, unsigned lineno, struct cupace_err *err)
{
    static const char *const names[NCOLS] = { "arrival", "partitions", "synth_time", "gpu_kernel" };
    char *items[32];
    size_t n = split_list(line, ',', items, 32);
    const char *why;

    if (n != ncols)
        return trace_fail(err, file, lineno, "%zu fields, the header has %zu", n, ncols);
    memset(job, 0, sizeof *job);
    for (size_t i = 0; i < n; i++) {
        const char *v = items[i];
        uint64_t u;
        double sec;

        switch (colmap[i]) {
        case COL_ARRIVAL:
            if (cupace_parse_duration(v, &u, &why) < 0) {
                if (cupace_parse_f64(v, &sec, &why) < 0 || !(sec >= 0))
                    return trace_fail(err, file, lineno, "column 'arrival': expected seconds "
                                      "from the start or a duration, got '%s'", v);
                u = cupace_ns_from_double(sec * 1e9);
            }
            if (u > CUPACE_HORIZON_NS)
                return trace_fail(err, file, lineno, "column 'arrival': '%s' is past cupace's "
                                  "horizon of 2^62 ns (146 years)", v);
            job->arrival_ns = u;
            break;
        case COL_PARTITIONS:
            if (cupace_parse_u64(v, &u, &why) < 0 || u < 1 || u > 1000000)
                return trace_fail(err, file, lineno, "column 'partitions': expected an integer "
                                  "from 1 to 1000000, got '%s'", v);
            job->partitions = (uint32_t)u;
            break;
        default:
            if (!*v)
                break;                  /* empty: the workload's value */
            if (cupace_parse_duration(v, &u, &why) < 0 || u == 0)
                return trace_fail(err, file, lineno, "column '%s': expected %s, got '%s'",
                                  names[colmap[i]], why, v);
            if (colmap[i] == COL_SYNTH)
                job->synth_ns = u;
            else
                job->kernel_ns = u;
        }
    }
    return 0;
}

/* Sorts the trace's jobs by arrival, rows with equal arrivals in the order
 * written: a bottom-up merge sort, O(n log n) whatever the order (the
 * insertion sort it replaces took 14 s for 1e5 rows written backwards), and
 * O(n) for a trace already in order, which most are. */
static int sort_trace(struct cupace_trace_job *v, size_t n)
{
    struct cupace_trace_job *tmp, *src = v, *dst;
    size_t i;

    for (i = 1; i < n && v[i - 1].arrival_ns <= v[i].arrival_ns; i++)
        ;
    if (i >= n)
        return 0;
    tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return -1;
    dst = tmp;
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = mid + width < n ? mid + width : n;
            size_t a = lo, b = mid, k = lo;

            while (a < mid && b < hi)
                dst[k++] = src[b].arrival_ns < src[a].arrival_ns ? src[b++] : src[a++];
            while (a < mid)
                dst[k++] = src[a++];
            while (b < hi)
                dst[k++] = src[b++];
        }
        src = dst;
        dst = dst == tmp ? v : tmp;
    }
    if (src != v)
        memcpy(v, src, n * sizeof *v);
    free(tmp);
    return 0;
}

static int cross_fail(struct loader *ld, const char *section, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Reads the trace into cfg->workload.trace_jobs, sorted by arrival (rows
 * with equal arrivals keep their order). */
static int load_trace(struct loader *ld, struct cupace_config *cfg, const char *path,
                      struct cupace_err *err)
{
    struct cupace_workload *w = &cfg->workload;
    struct cupace_lines r;
    int colmap[32];
    size_t ncols = 0, cap = 0, len;
    uint64_t partitions = 0;
    int have_header = 0, rc;
    const char *why;

    /* not a row's fault: where the config names it, then the file */
    if (cupace_lines_open(&r, path, CUPACE_TRACE_MAX_BYTES, &why) < 0)
        return cross_fail(ld, "workload", "trace", "%s: cannot open the trace: %s", path, why);
    while ((rc = cupace_lines_next(&r, &len, &why)) > 0) {
        char *p = r.buf;

        /* a byte-order mark, as spreadsheets save CSV (the INI reader skips one too) */
        if (r.line == 1 && strncmp(p, "\xEF\xBB\xBF", 3) == 0)
            p += 3;
        while (isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#')
            continue;
        if (!have_header) {
            if (trace_header(p, colmap, 32, &ncols, path, r.line, err) < 0)
                goto fail;
            have_header = 1;
            continue;
        }
        if (w->ntrace_jobs == cap) {
            struct cupace_trace_job *more = cupace_grow(w->trace_jobs, &cap, sizeof *more, 64);
            if (!more) {
                trace_fail(err, path, r.line, "out of memory for the trace");
                goto fail;
            }
            w->trace_jobs = more;
        }
        if (trace_row(p, colmap, ncols, &w->trace_jobs[w->ntrace_jobs], path, r.line, err) < 0)
            goto fail;
        partitions += w->trace_jobs[w->ntrace_jobs++].partitions;
        if (partitions > CUPACE_MAX_PARTITIONS) {
            trace_fail(err, path, r.line, "more than %llu partitions in all",
                       (unsigned long long)CUPACE_MAX_PARTITIONS);
            goto fail;
        }
    }
    if (rc < 0) {
        trace_fail(err, path, r.line, "%s", why);
        goto fail;
    }
    cupace_lines_close(&r);
    if (!have_header || w->ntrace_jobs == 0)
        return cupace_err_set(err, "%s: the trace has no %s", path, have_header ? "rows" : "header");
    if (sort_trace(w->trace_jobs, w->ntrace_jobs) < 0)
        return cupace_err_set(err, "%s: out of memory sorting the trace", path);
    return 0;
fail:
    cupace_lines_close(&r);
    return -1;
}

/* ---- defaults, overrides, cross-checks -------------------------------- */

static void set_defaults(struct cupace_config *cfg)
{
    struct cupace_engine_conf *e = &cfg->engine;
    struct cupace_workload *w = &cfg->workload;

    e->mode = CUPACE_MODE_SIM;
    e->backend = CUPACE_BACKEND_AUTO;
    e->devices = 1;
    e->workers_per_device = 2;
    e->synth_workers = 18;
    e->memory_budget = 314ULL << 30;
    e->seed = 1;
    e->status_interval_ns = 10000000000ULL;
    e->stall_timeout_ns = 600000000000ULL;
    e->stop_timeout_ns = 30000000000ULL;
    cfg->pacer_name = xstrdup("proctime");
    w->jobs = 20;
    w->partitions_per_job = 10;
    w->arrival = CUPACE_ARRIVAL_BACKLOG;
    w->interarrival_ns = 120000000000ULL;
    w->burst_jobs = 4;
    w->burst_every_ns = 900000000000ULL;
    w->partition_memory = 14ULL << 30;
    w->release_at_kernel = 0;
    w->synth_ns = 30000000000ULL;
    w->synth_cv = 0.15;
    w->synth_dist = CUPACE_DIST_LOGNORMAL;
    w->cpu_slots = 12;
    w->gpu_prep_ns = 800000000ULL;
    w->gpu_kernel_ns = 2500000000ULL;
    w->gpu_epilogue_ns = 500000000ULL;
    w->gpu_cv = 0.05;
    w->gpu_dist = CUPACE_DIST_LOGNORMAL;
    w->gpu_exclusive = 1;
    w->contention = 1.0;
    w->device_speed[0] = 1.0;
    w->ndevice_speed = 1;
    w->fail_rate = 0;
    w->time_scale = 1.0;
    cfg->queue.url = xstrdup("");
    cfg->queue.table = xstrdup("cupace_jobs");
    cfg->queue.lease_ns = 30000000000ULL;
    cfg->queue.poll_ns = 1000000000ULL;
    cfg->queue.max_attempts = 3;
    cfg->cuda.transfer = 16ULL << 20;
    cfg->cuda.verify = 1;
}

static int apply_override(struct loader *ld, const char *text, unsigned index, const char *how)
{
    struct cupace_config *cfg = ld->cfg;
    char *kept, *buf, *eq, *dot;
    int rc = -1;

    /* kept by the config for the origins of what it sets; a count grows
     * only after its entry is whole (an out-of-memory jump frees them) */
    cfg->set_texts = xrealloc(cfg->set_texts, (cfg->nset_texts + 1) * sizeof *cfg->set_texts);
    kept = xstrdup(text);
    cfg->set_texts[cfg->nset_texts++] = kept;
    buf = xstrdup(text);
    ld->file = how;
    ld->line = index;
    ld->set = kept;
    eq = strchr(buf, '=');
    if (eq)
        *eq = '\0';
    dot = eq ? strrchr(buf, '.') : NULL;
    if (!dot || dot == buf || !dot[1]) {
        cupace_err_set(ld->err, "%s '%s': expected SECTION.KEY=VALUE", how, text);
    } else {
        *dot = '\0';
        rc = set_key(ld, buf, dot + 1, eq + 1);
    }
    free(buf);
    return rc;
}

/* Names a key's origin for cross-checks; the file's first line if unset. */
static struct cupace_origin where(const struct loader *ld, const char *section, const char *key)
{
    int idx = find_key(section, key);
    struct cupace_origin o = { ld->cfg->path, 0, NULL };

    if (idx >= 0 && ld->seen[idx].file)
        o = ld->seen[idx];
    return o;
}

static int cross_fail(struct loader *ld, const char *section, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int cross_fail(struct loader *ld, const char *section, const char *key, const char *fmt, ...)
{
    struct cupace_origin o = where(ld, section, key);
    char reason[4096];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    cupace_err_set(ld->err, "%s", reason);
    cupace_err_at(ld->err, &o, section, key);
    return -1;
}

/* ---- the horizon ------------------------------------------------------- */

/* The largest value KEY takes: its own, V, or that of a change point;
 * *FROM is that change point, left as it was where V is the largest. */
static double largest(const struct cupace_workload *w, enum cupace_change_key key, double v,
                      const struct cupace_change **from)
{
    for (size_t i = 0; i < w->nchanges; i++) {
        const struct cupace_change *c = &w->changes[i];
        double x = key == CUPACE_CHANGE_CONTENTION ? c->value : (double)c->ns;

        if (c->key == key && x > v) {
            v = x;
            *from = c;
        }
    }
    return v;
}

static double slowest_device(const struct cupace_workload *w, uint64_t devices,
                             const struct cupace_change **from)
{
    double s = 1e300;

    for (uint64_t d = 0; d < devices; d++) {
        if (w->device_speed[d] < s) {
            s = w->device_speed[d];
            *from = NULL;
        }
        for (size_t i = 0; i < w->nchanges; i++)
            if (w->changes[i].key == CUPACE_CHANGE_DEVICE_SPEED && w->changes[i].speed[d] < s) {
                s = w->changes[i].speed[d];
                *from = &w->changes[i];
            }
    }
    return s;
}

/* The time by which the last of JOBS Poisson arrivals of mean gap MEAN has
 * come, but for a chance of 1 in 10^12.  Its mean, (jobs - 1) x MEAN, is
 * no bound: the sum of k exponential gaps (a gamma) passes its mean about
 * half the time, so a stream sized to end just short of the horizon ran
 * past it on one seed in two.  By Chernoff, P(sum >= t k MEAN) <=
 * (t e^(1-t))^k for t > 1, so t solves k (t - 1 - ln t) = ln 10^12: about
 * 1 + 7.4/sqrt(k) for long streams, 32 for a single gap.  Bisection: the
 * left side grows with t. */
static double poisson_last_arrival(uint64_t jobs, double mean)
{
    double k = (double)(jobs - 1), want, lo = 1, hi = 2;

    if (jobs < 2)
        return 0;
    want = 12 * log(10) / k;
    while (hi - 1 - log(hi) < want)
        hi *= 2;
    for (int i = 0; i < 100; i++) {
        double mid = (lo + hi) / 2;

        if (mid - 1 - log(mid) < want)
            lo = mid;
        else
            hi = mid;
    }
    return hi * k * mean;
}

/* The worst case of the horizon check, term by term: n x each stage at its
 * largest (kernels on the slowest device, contended), then the last
 * arrival; FROM[i] is the change point behind term i, or NULL. */
static void horizon_terms(const struct cupace_workload *w, uint64_t devices, double n,
                          double terms[5], const struct cupace_change *from[5], int traced[5])
{
    const struct cupace_change *contended = NULL, *slowest = NULL;
    double synth, kernel, arrival = 0;

    for (size_t i = 0; i < 5; i++) {
        from[i] = NULL;
        traced[i] = 0;
    }
    synth = largest(w, CUPACE_CHANGE_SYNTH_TIME, (double)w->synth_ns, &from[0]);
    kernel = largest(w, CUPACE_CHANGE_GPU_KERNEL, (double)w->gpu_kernel_ns, &from[2]);
    for (size_t i = 0; i < w->ntrace_jobs; i++) {
        if ((double)w->trace_jobs[i].synth_ns > synth) {
            synth = (double)w->trace_jobs[i].synth_ns;
            from[0] = NULL;
            traced[0] = 1;
        }
        if ((double)w->trace_jobs[i].kernel_ns > kernel) {
            kernel = (double)w->trace_jobs[i].kernel_ns;
            from[2] = NULL;
            traced[2] = 1;
        }
    }
    traced[4] = w->arrival == CUPACE_ARRIVAL_TRACE;
    if (w->arrival == CUPACE_ARRIVAL_TRACE && w->ntrace_jobs)
        arrival = (double)w->trace_jobs[w->ntrace_jobs - 1].arrival_ns;
    else if (w->arrival == CUPACE_ARRIVAL_POISSON)
        arrival = poisson_last_arrival(w->jobs, (double)w->interarrival_ns);
    else if (w->arrival == CUPACE_ARRIVAL_BURST)
        arrival = (double)((w->jobs - 1) / w->burst_jobs) * (double)w->burst_every_ns;
    terms[0] = n * synth;
    terms[1] = n * largest(w, CUPACE_CHANGE_GPU_PREP, (double)w->gpu_prep_ns, &from[1]);
    terms[2] = n * kernel *
               largest(w, CUPACE_CHANGE_CONTENTION, w->contention > 1 ? w->contention : 1, &contended) /
               slowest_device(w, devices, &slowest);
    terms[3] = n * largest(w, CUPACE_CHANGE_GPU_EPILOGUE, (double)w->gpu_epilogue_ns, &from[3]);
    terms[4] = arrival;
    /* a kernel's time is a product: its own change first */
    if (!from[2])
        from[2] = contended ? contended : slowest;
}

/* The longest one partition can take by the configured durations: each
 * stage at its largest (horizon_terms for one partition, no arrival). */
double cupace_workload_partition_worst_ns(const struct cupace_config *cfg)
{
    double t[5];
    const struct cupace_change *from[5];
    int traced[5];

    horizon_terms(&cfg->workload, cfg->engine.devices, 1, t, from, traced);
    return t[0] + t[1] + t[2] + t[3];
}

static double horizon_sum(const double terms[5], size_t *big)
{
    *big = 4;
    for (size_t i = 0; i < 4; i++)
        if (terms[i] > terms[*big])
            *big = i;
    return terms[0] + terms[1] + terms[2] + terms[3] + terms[4];
}

/* Refuses a workload whose worst case could pass the horizon of virtual
 * time (checked.h): the last arrival, then every partition run one after
 * another, each stage at its largest configured mean.  Far above any real
 * makespan, and it keeps every sum of times below 2^63.  Names the key
 * that weighs most; where only the change points take it past, the change
 * entry behind the term that weighs most, at where change was set and as
 * written (the key it changes may not be set at all). */
static int check_horizon(struct loader *ld)
{
    const struct cupace_workload *w = &ld->cfg->workload;
    struct cupace_workload unchanged = *w;
    double n = (double)cupace_workload_partitions(ld->cfg), terms[5], base[5], h;
    const struct cupace_change *from[5], *none[5], *entry = NULL;
    static const char *const names[5] = { "synth_time", "gpu_prep", "gpu_kernel", "gpu_epilogue",
                                          NULL };
    const char *key, *last = w->arrival == CUPACE_ARRIVAL_POISSON
                                 ? "the last arrival as late as it comes but once in 10^12"
                                 : "the last arrival";
    char when[32];
    size_t big;
    int traced[5], unused[5];

    horizon_terms(w, ld->cfg->engine.devices, n, terms, from, traced);
    h = horizon_sum(terms, &big);
    if (h <= (double)CUPACE_HORIZON_NS)
        return 0;
    snprintf(when, sizeof when, "%.3g years", h / 1e9 / 86400 / 365.25);
    unchanged.nchanges = 0;
    horizon_terms(&unchanged, ld->cfg->engine.devices, n, base, none, unused);
    if (horizon_sum(base, &big) <= (double)CUPACE_HORIZON_NS)
        for (size_t i = 0; i < 5; i++)
            if (from[i] && (!entry || terms[i] > terms[big])) {
                entry = from[i];
                big = i;
            }
    if (entry)
        return cross_fail(ld, "workload", "change", "entry %u, '%.*s': this workload could take %s "
                          "of virtual time (%s, then its %.0f partitions one after another at "
                          "their longest), past cupace's horizon of 2^62 ns (146 years); shorten it",
                          entry->entry, (int)entry->text_len, w->change_text + entry->text_off,
                          when, last, n);
    /* a trace's own column, where its largest is a row's: the trace is to blame */
    if (traced[big])
        return cross_fail(ld, "workload", "trace", "this workload could take %s of virtual "
                          "time (%s, then its %.0f partitions one after another at their "
                          "longest), past cupace's horizon of 2^62 ns (146 years), by %s of %s; "
                          "shorten it", when, last, n,
                          big == 4 ? "the last arrival" : big == 0 ? "a row's synth_time"
                                                                   : "a row's gpu_kernel",
                          w->trace);
    if (big < 4)
        key = names[big];
    else
        key = w->arrival == CUPACE_ARRIVAL_POISSON ? "interarrival" : "burst_every";
    return cross_fail(ld, "workload", key, "this workload could take %s of virtual time (%s, "
                      "then its %.0f partitions one after another at their longest), past "
                      "cupace's horizon of 2^62 ns (146 years); shorten it", when, last, n);
}

static int validate(struct loader *ld)
{
    struct cupace_config *cfg = ld->cfg;
    struct cupace_engine_conf *e = &cfg->engine;
    struct cupace_workload *w = &cfg->workload;
    char a[32], b[32];

    if (e->ndevice_ids && e->ndevice_ids != e->devices)
        return cross_fail(ld, "engine", "device_ids", "%u ids for devices = %llu",
                          e->ndevice_ids, (unsigned long long)e->devices);
    if (w->ndevice_speed != 1 && w->ndevice_speed != e->devices)
        return cross_fail(ld, "workload", "device_speed", "%u speeds for devices = %llu "
                          "(give one for all, or one per device)", w->ndevice_speed,
                          (unsigned long long)e->devices);
    if (w->ndevice_speed == 1)
        for (unsigned i = 1; i < CUPACE_MAX_DEVICES; i++)
            w->device_speed[i] = w->device_speed[0];
    for (size_t i = 0; i < w->nchanges; i++) {
        struct cupace_change *c = &w->changes[i];
        if (c->key != CUPACE_CHANGE_DEVICE_SPEED)
            continue;
        if (c->nspeed != 1 && c->nspeed != e->devices)
            return cross_fail(ld, "workload", "change", "device_speed at %.3fs gives %u speeds "
                              "for devices = %llu", (double)c->at_ns / 1e9, c->nspeed,
                              (unsigned long long)e->devices);
        if (c->nspeed == 1)
            for (unsigned j = 1; j < CUPACE_MAX_DEVICES; j++)
                c->speed[j] = c->speed[0];
    }
    if (w->release_at_kernel > w->partition_memory) {
        cupace_format_size(w->release_at_kernel, a, sizeof a);
        cupace_format_size(w->partition_memory, b, sizeof b);
        if (strcmp(a, b) == 0) {        /* rounded alike: the bytes tell them apart */
            snprintf(a, sizeof a, "%lluB", (unsigned long long)w->release_at_kernel);
            snprintf(b, sizeof b, "%lluB", (unsigned long long)w->partition_memory);
        }
        return cross_fail(ld, "workload", "release_at_kernel", "%s exceeds partition_memory (%s)",
                          a, b);
    }
    if (w->partition_memory > e->memory_budget) {
        cupace_format_size(w->partition_memory, a, sizeof a);
        cupace_format_size(e->memory_budget, b, sizeof b);
        return cross_fail(ld, "workload", "partition_memory", "%s exceeds [engine] memory_budget "
                          "(%s): no partition could ever start", a, b);
    }
    if (w->jobs * w->partitions_per_job > CUPACE_MAX_PARTITIONS)
        return cross_fail(ld, "workload", "jobs", "jobs x partitions_per_job exceeds %llu",
                          (unsigned long long)CUPACE_MAX_PARTITIONS);
    if (w->arrival == CUPACE_ARRIVAL_TRACE) {
        char *path;
        int rc;

        if (!w->trace)
            return cross_fail(ld, "workload", "arrival", "arrival = trace needs trace = FILE.csv");
        if (w->trace[0] == '/' || !cfg->dir) {
            path = xstrdup(w->trace);
        } else {
            path = xrealloc(NULL, strlen(cfg->dir) + strlen(w->trace) + 2);
            sprintf(path, "%s/%s", cfg->dir, w->trace);
        }
        rc = load_trace(ld, cfg, path, ld->err);
        free(path);
        if (rc < 0)
            return -1;
    }
    for (size_t i = 0; i < w->nfail_at; i++) {
        const struct cupace_fail_at *f = &w->fail_at[i];
        int trace = w->arrival == CUPACE_ARRIVAL_TRACE;
        uint64_t njobs = trace ? w->ntrace_jobs : w->jobs;

        if (f->job >= njobs)
            return cross_fail(ld, "workload", "fail_at", "job %u does not exist: the jobs are "
                              "0 to %llu, in arrival order", f->job,
                              (unsigned long long)njobs - 1);
        if (f->part >= (trace ? w->trace_jobs[f->job].partitions : w->partitions_per_job))
            return cross_fail(ld, "workload", "fail_at", "job %u has no partition %u: its "
                              "partitions are 0 to %llu", f->job, f->part,
                              (unsigned long long)(trace ? w->trace_jobs[f->job].partitions
                                                         : w->partitions_per_job) - 1);
    }
    if (check_horizon(ld) < 0)
        return -1;
    for (size_t i = 0; i < cfg->nsections; i++)
        if (!cfg->sections[i].plugin)
            cfg->sections[i].plugin = xstrdup(cfg->sections[i].label);
    if (cfg->nab == 0) {
        cfg->ab = xrealloc(NULL, sizeof *cfg->ab);
        cfg->ab[0] = xstrdup(cfg->pacer_name);
        cfg->nab = 1;
    }
    return 0;
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *d;

    if (!slash)
        return xstrdup(".");
    if (slash == path)
        return xstrdup("/");
    d = xstrdup(path);
    d[slash - path] = '\0';
    return d;
}

struct cupace_config *cupace_config_load(const char *file, const char *const *sets, size_t nsets,
                                         struct cupace_err *err)
{
    return cupace_config_load_sets(file, sets, nsets, "--set", err, NULL);
}

struct cupace_config *cupace_config_load_sets(const char *file, const char *const *sets,
                                              size_t nsets, const char *how,
                                              struct cupace_err *err, size_t *bad_set)
{
    struct cupace_config *volatile cfg = calloc(1, sizeof *cfg);   /* read after a longjmp */
    jmp_buf *outer = oom_jump, here;
    struct loader ld;

    if (!cfg) {
        cupace_err_set(err, "out of memory");
        return NULL;
    }
    if (setjmp(here)) {
        oom_jump = outer;
        cupace_err_set(err, "%s: out of memory", file ? file : "(settings in code)");
        cupace_config_free(cfg);        /* cfg was set before setjmp: not clobbered */
        return NULL;
    }
    oom_jump = &here;
    memset(&ld, 0, sizeof ld);
    ld.cfg = cfg;
    ld.err = err;
    cfg->path = xstrdup(file ? file : "(settings in code)");   /* libcupace: no file */
    cfg->dir = file ? dir_of(file) : xstrdup(".");
    set_defaults(cfg);
    ld.file = cfg->path;
    if (file && read_file(&ld, cfg->path) < 0)
        goto fail;
    if (bad_set)
        *bad_set = 0;
    for (size_t i = 0; i < nsets; i++)
        if (apply_override(&ld, sets[i], (unsigned)i + 1, how) < 0) {
            if (bad_set)
                *bad_set = i + 1;
            goto fail;
        }
    if (validate(&ld) < 0)
        goto fail;
    cfg->key_at = xrealloc(NULL, sizeof ld.seen);
    memcpy(cfg->key_at, ld.seen, sizeof ld.seen);
    oom_jump = outer;
    return cfg;
fail:
    oom_jump = outer;
    cupace_config_free(cfg);
    return NULL;
}

static void free_sections(struct cupace_pacer_section *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct cupace_pacer_section *s = &v[i];
        for (size_t j = 0; j < s->nkv; j++) {
            free(s->kv[j].key);
            free(s->kv[j].value);
        }
        free(s->kv);
        free(s->label);
        free(s->plugin);
    }
    free(v);
}

void cupace_config_free(struct cupace_config *cfg)
{
    if (!cfg)
        return;
    free_sections(cfg->sections, cfg->nsections);
    free_sections(cfg->stage_sections, cfg->nstage_sections);
    for (size_t i = 0; i < cfg->nab; i++)
        free(cfg->ab[i]);
    free(cfg->ab);
    free(cfg->workload.changes);
    free(cfg->workload.change_text);
    free(cfg->workload.fail_at);
    free(cfg->workload.trace);
    free(cfg->workload.trace_jobs);
    free(cfg->pacer_name);
    free(cfg->pacer_path);
    free(cfg->queue.url);
    free(cfg->queue.table);
    free(cfg->serve_metrics);
    for (size_t i = 0; i < cfg->nset_texts; i++)
        free(cfg->set_texts[i]);
    free(cfg->set_texts);
    free(cfg->key_at);
    free(cfg->path);
    free(cfg->dir);
    free(cfg);
}

const struct cupace_origin *cupace_config_origin(const struct cupace_config *cfg, const char *section,
                                                 const char *key)
{
    int idx = find_key(section, key);

    return idx >= 0 && cfg->key_at && cfg->key_at[idx].file ? &cfg->key_at[idx] : NULL;
}

struct cupace_pacer_section *cupace_config_section(struct cupace_config *cfg, const char *label)
{
    return find_in(cfg->sections, cfg->nsections, label);
}

struct cupace_pacer_section *cupace_config_stage_section(struct cupace_config *cfg, const char *name)
{
    return find_in(cfg->stage_sections, cfg->nstage_sections, name);
}

const char *cupace_config_plugin_of(const struct cupace_config *cfg, const char *label)
{
    for (size_t i = 0; i < cfg->nsections; i++)
        if (strcmp(cfg->sections[i].label, label) == 0)
            return cfg->sections[i].plugin ? cfg->sections[i].plugin : label;
    return label;
}

uint64_t cupace_workload_partitions(const struct cupace_config *cfg)
{
    const struct cupace_workload *w = &cfg->workload;
    uint64_t n = 0;

    if (w->arrival != CUPACE_ARRIVAL_TRACE)
        return w->jobs * w->partitions_per_job;
    for (size_t i = 0; i < w->ntrace_jobs; i++)
        n += w->trace_jobs[i].partitions;
    return n;
}

const char *cupace_fail_stage_name(enum cupace_fail_stage st)
{
    return st <= CUPACE_FAIL_EPILOGUE ? fail_stage_names[st] : "?";
}

const char *cupace_dist_name(enum cupace_dist d)
{
    return dist_names[d];
}

const char *cupace_arrival_name(enum cupace_arrival a)
{
    return arrival_names[a];
}
