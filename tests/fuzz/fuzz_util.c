/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz_util.c -- the harnesses' private folder and their oracles.
 *
 * The loader reads files, so each input is written to a file in a folder
 * of the harness's own (made with mkdtemp on first use, removed at exit).
 * A config there that says `trace = t.csv` reads the trace beside it, which
 * lets the configuration fuzzer reach the trace reader too.  The files are
 * links to memfds: rewriting a file on disk for every input costs a couple
 * of milliseconds on ext4, ten times what the loader takes.
 *
 * The oracles check what the loader promises (conf.h, DESIGN §4) on every
 * configuration it accepts, and the form of every refusal.
 */
#define _GNU_SOURCE                     /* memfd_create */
#include "config.h"
#include "fuzz.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "units.h"
#include "workload.h"

static char folder[4096];
static struct {
    char name[64];
    int fd;
} files[8];
static unsigned nfiles;

static void remove_folder(void)
{
    char path[sizeof folder + sizeof files];

    for (unsigned i = 0; i < nfiles; i++) {
        snprintf(path, sizeof path, "%s/%s", folder, files[i].name);
        unlink(path);
        close(files[i].fd);
    }
    rmdir(folder);
}

static void make_folder(void)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(folder, sizeof folder, "%s/cupace-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(folder)) {
        perror("cupace fuzz: mkdtemp");
        abort();
    }
    atexit(remove_folder);
}

/* The memfd behind NAME, made (with its link in the folder) on first use. */
static int file_of(const char *name)
{
    char path[sizeof folder + sizeof files], target[64];
    int fd;

    for (unsigned i = 0; i < nfiles; i++)
        if (strcmp(files[i].name, name) == 0)
            return files[i].fd;
    if (!folder[0])
        make_folder();
    fd = memfd_create(name, 0);
    snprintf(path, sizeof path, "%s/%s", folder, name);
    snprintf(target, sizeof target, "/proc/self/fd/%d", fd);
    if (fd < 0 || nfiles == sizeof files / sizeof files[0] || symlink(target, path) < 0) {
        perror("cupace fuzz: making the input file");
        abort();
    }
    snprintf(files[nfiles].name, sizeof files[0].name, "%s", name);
    files[nfiles++].fd = fd;
    return fd;
}

const char *fuzz_write(const char *name, const void *data, size_t size)
{
    static char path[sizeof folder + sizeof files];
    int fd = file_of(name);

    if (ftruncate(fd, 0) < 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
        perror("cupace fuzz: writing the input");
        abort();
    }
    snprintf(path, sizeof path, "%s/%s", folder, name);
    return path;
}

char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);

    if (!s)
        abort();
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

int fuzz_unsafe_path(const uint8_t *data, size_t size)
{
    static const char *const bad[] = { "/dev", "/proc", "/sys" };

    for (size_t i = 0; i < size; i++)
        for (unsigned b = 0; b < 3; b++) {
            size_t n = strlen(bad[b]);
            if (size - i >= n && memcmp(data + i, bad[b], n) == 0)
                return 1;
        }
    return 0;
}

void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s:%d: oracle failed: %s: ", file, line, cond);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

/* ---- accepted configurations ------------------------------------------ */

static void check_engine(const struct cupace_config *cfg)
{
    const struct cupace_engine_conf *e = &cfg->engine;

    FUZZ_REQUIRE(e->devices >= 1 && e->devices <= CUPACE_MAX_DEVICES, "devices %llu",
                 (unsigned long long)e->devices);
    FUZZ_REQUIRE(e->workers_per_device >= 1 && e->synth_workers >= 1, "no workers");
    FUZZ_REQUIRE(e->ndevice_ids == 0 || e->ndevice_ids == e->devices, "%u device ids for %llu",
                 e->ndevice_ids, (unsigned long long)e->devices);
    FUZZ_REQUIRE(cupace_is_identifier(cfg->pacer_name), "pacer name '%s'", cfg->pacer_name);
    FUZZ_REQUIRE(cfg->nab >= 1, "no A/B list");
    for (size_t i = 0; i < cfg->nab; i++)
        FUZZ_REQUIRE(cupace_is_identifier(cfg->ab[i]), "A/B label '%s'", cfg->ab[i]);
    for (size_t i = 0; i < cfg->nsections; i++) {
        const struct cupace_pacer_section *s = &cfg->sections[i];
        FUZZ_REQUIRE(cupace_is_identifier(s->label) && cupace_is_identifier(s->plugin),
                     "section '%s' plugin '%s'", s->label, s->plugin ? s->plugin : "(null)");
        for (size_t j = 0; j < i; j++)
            FUZZ_REQUIRE(strcmp(cfg->sections[j].label, s->label) != 0, "[pacer.%s] twice",
                         s->label);
        for (size_t k = 0; k < s->nkv; k++)
            for (size_t j = 0; j < k; j++)
                FUZZ_REQUIRE(strcmp(s->kv[j].key, s->kv[k].key) != 0, "[pacer.%s] %s twice",
                             s->label, s->kv[k].key);
    }
}

static void check_speeds(const double *speed, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        FUZZ_REQUIRE(speed[i] > 0 && speed[i] <= 1e6, "device speed %g", speed[i]);
}

static void check_workload(const struct cupace_config *cfg)
{
    const struct cupace_workload *w = &cfg->workload;

    FUZZ_REQUIRE(w->release_at_kernel <= w->partition_memory &&
                 w->partition_memory <= cfg->engine.memory_budget && w->partition_memory > 0,
                 "memory: release %llu, partition %llu, budget %llu",
                 (unsigned long long)w->release_at_kernel,
                 (unsigned long long)w->partition_memory,
                 (unsigned long long)cfg->engine.memory_budget);
    FUZZ_REQUIRE(w->jobs >= 1 && w->partitions_per_job >= 1 && w->cpu_slots >= 1, "empty workload");
    FUZZ_REQUIRE(w->fail_rate >= 0 && w->fail_rate <= 1, "fail_rate %g", w->fail_rate);
    FUZZ_REQUIRE(w->synth_cv >= 0 && w->gpu_cv >= 0, "a negative cv");
    FUZZ_REQUIRE(w->contention > 0 && w->time_scale > 0, "contention %g, time_scale %g",
                 w->contention, w->time_scale);
    check_speeds(w->device_speed, (unsigned)cfg->engine.devices);
    for (size_t i = 0; i < w->nchanges; i++) {
        FUZZ_REQUIRE(i == 0 || w->changes[i - 1].at_ns <= w->changes[i].at_ns,
                     "change points out of order");
        if (w->changes[i].key == CUPACE_CHANGE_DEVICE_SPEED)
            check_speeds(w->changes[i].speed, (unsigned)cfg->engine.devices);
    }
    for (size_t i = 0; i < w->nfail_at; i++) {
        const struct cupace_fail_at *f = &w->fail_at[i];
        int trace = w->arrival == CUPACE_ARRIVAL_TRACE;

        FUZZ_REQUIRE(f->stage >= CUPACE_FAIL_SYNTH && f->stage <= CUPACE_FAIL_EPILOGUE,
                     "fail_at stage %d", (int)f->stage);
        FUZZ_REQUIRE(f->job < (trace ? w->ntrace_jobs : w->jobs) &&
                     f->part < (trace ? w->trace_jobs[f->job].partitions : w->partitions_per_job),
                     "fail_at %u:%u names no partition", f->job, f->part);
        FUZZ_REQUIRE(i == 0 || f[-1].job < f->job || (f[-1].job == f->job && f[-1].part < f->part),
                     "fail_at not sorted, or a partition twice, at %zu", i);
    }
    if (w->arrival != CUPACE_ARRIVAL_TRACE)
        return;
    FUZZ_REQUIRE(w->ntrace_jobs > 0 && w->trace_jobs, "a trace without rows");
    for (size_t i = 0; i < w->ntrace_jobs; i++) {
        FUZZ_REQUIRE(w->trace_jobs[i].partitions >= 1, "trace row %zu: no partitions", i);
        FUZZ_REQUIRE(i == 0 || w->trace_jobs[i - 1].arrival_ns <= w->trace_jobs[i].arrival_ns,
                     "trace rows out of order at %zu", i);
    }
}

/* The generated arrival process, when small enough to spell out: it must
 * bring the partitions counted and never go back in time. */
static void check_arrivals(const struct cupace_config *cfg)
{
    size_t n = cupace_workload_njobs(cfg);
    struct cupace_trace_job *jobs;
    uint64_t parts = 0;

    if (n == 0 || n > 4096)
        return;
    jobs = calloc(n, sizeof *jobs);
    if (!jobs)
        abort();
    cupace_workload_arrivals(cfg, jobs);
    for (size_t i = 0; i < n; i++) {
        FUZZ_REQUIRE(i == 0 || jobs[i - 1].arrival_ns <= jobs[i].arrival_ns,
                     "job %zu arrives at %llu ns, before job %zu at %llu ns", i,
                     (unsigned long long)jobs[i].arrival_ns, i - 1,
                     (unsigned long long)jobs[i - 1].arrival_ns);
        parts += jobs[i].partitions;
    }
    FUZZ_REQUIRE(parts == cupace_workload_partitions(cfg), "%llu partitions arrive, %llu counted",
                 (unsigned long long)parts,
                 (unsigned long long)cupace_workload_partitions(cfg));
    free(jobs);
}

void fuzz_check_config(const struct cupace_config *cfg)
{
    check_engine(cfg);
    check_workload(cfg);
    check_arrivals(cfg);
}

/* ---- refusals ---------------------------------------------------------- */

/* Whether the message starts with the name of a file that `input` names. */
static int names_input_path(const char *m, const char *input)
{
    const char *colon = strchr(m, ':');
    char name[1024];

    if (!input || !colon || colon == m)
        return 0;
    snprintf(name, sizeof name, "%.*s", (int)(colon - m), m);
    return strstr(input, name) != NULL;
}

void fuzz_check_error(const struct cupace_err *err, const char *origin, const char *input)
{
    const char *m = err->msg;

    FUZZ_REQUIRE(memchr(m, '\0', sizeof err->msg) != NULL, "an unterminated message");
    FUZZ_REQUIRE(*m, "a refusal without a message");
    FUZZ_REQUIRE(!strchr(m, '\n'), "a message of more than one line: %s", m);
    /* the config's folder (the config itself, or a trace beside it), a
     * --set, or a file the input named */
    FUZZ_REQUIRE(strncmp(m, origin, strlen(origin)) == 0 || strncmp(m, "--set", 5) == 0 ||
                 names_input_path(m, input), "a message that names no origin: %s", m);
}

struct cupace_config *fuzz_load(const char *path, const char *const *sets, size_t nsets,
                               const char *input)
{
    struct cupace_err err;
    struct cupace_config *cfg;

    memset(&err, 0, sizeof err);
    cfg = cupace_config_load(path, sets, nsets, &err);
    if (cfg)
        fuzz_check_config(cfg);
    else
        fuzz_check_error(&err, folder, input);
    return cfg;
}
