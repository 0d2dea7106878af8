/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * conf.h -- the configuration: cupace.ini (DESIGN §4) as a validated struct.
 *
 * One loader serves `run`, `ab` and `check-config`: it parses the file
 * (ini.c, lines of any length), applies --set overrides, checks every cross-key rule and, for
 * `arrival = trace`, reads the trace.  Unknown sections and keys are errors.
 * Every error names the file, the line and the key.  Keys of [pacer.LABEL]
 * sections are kept as text with their origins: the controller asks for them
 * during its init (pacer_host.c) and any key it never asked for is refused.
 *
 * This is not the place for defaults of controllers: those belong to each
 * plugin.
 */
#ifndef CUPACE_CONF_H
#define CUPACE_CONF_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define CUPACE_MAX_DEVICES 64

/* Limits of what the loader accepts, each refused with a message beyond it
 * (never cut short): partitions in one run, and the bytes of a
 * configuration file and of a trace, so that an input that never ends
 * (a pipe fed forever) is refused instead of read until memory runs out.
 * A line may be as long as its file. */
#define CUPACE_MAX_PARTITIONS 100000000ULL
#define CUPACE_CONFIG_MAX_BYTES (16ULL << 20)
#define CUPACE_TRACE_MAX_BYTES (4ULL << 30)

enum cupace_mode { CUPACE_MODE_SIM, CUPACE_MODE_REALTIME };
enum cupace_backend { CUPACE_BACKEND_AUTO, CUPACE_BACKEND_CUDA, CUPACE_BACKEND_EMULATED,
                      CUPACE_BACKEND_PLUGIN /* a stage plugin: engine.backend_plugin */ };
enum cupace_arrival { CUPACE_ARRIVAL_BACKLOG, CUPACE_ARRIVAL_POISSON, CUPACE_ARRIVAL_BURST,
                      CUPACE_ARRIVAL_TRACE };
enum cupace_dist { CUPACE_DIST_FIXED, CUPACE_DIST_LOGNORMAL, CUPACE_DIST_GAMMA,
                   CUPACE_DIST_EXPONENTIAL };

/* Where a value came from: the config file, or an override (file = how it
 * was given, "--set" or "cupace_engine_set"; line = its index; set = its
 * text, owned by the config). */
struct cupace_origin {
    const char *file;
    unsigned line;
    const char *set;
};

/* Writes where a value came from, as messages begin: "FILE:LINE" ("FILE"
 * where no line is known), or "HOW 'TEXT'" for an override ("--set
 * 'engine.seed=2'", "cupace_engine_set '...'"); returns buf. */
const char *cupace_origin_format(const struct cupace_origin *at, char *buf, size_t len);

/* Prefixes err's message with where the configuration asked for what
 * failed: "AT: [SECTION] KEY: ", or "AT: [SECTION]: " with KEY NULL;
 * nothing where AT is NULL or names no file. */
void cupace_err_at(struct cupace_err *err, const struct cupace_origin *at, const char *section,
                   const char *key);

/* One key of a [pacer.LABEL] section. `used` is set when the controller asks. */
struct cupace_kv {
    char *key;
    char *value;
    struct cupace_origin at;
    int used;
};

/* [pacer.LABEL]: an instance of controller `plugin` (default: LABEL).
 * [stages.NAME]: the keys of stage plugin NAME (`plugin` unused). */
struct cupace_pacer_section {
    char *label;
    char *plugin;
    struct cupace_origin at;
    struct cupace_origin plugin_at;    /* where `plugin` was set (file NULL: not set) */
    struct cupace_kv *kv;
    size_t nkv;
};

/* The workload keys that `change = AT:KEY=VALUE` may alter. */
enum cupace_change_key {
    CUPACE_CHANGE_SYNTH_TIME, CUPACE_CHANGE_GPU_PREP, CUPACE_CHANGE_GPU_KERNEL,
    CUPACE_CHANGE_GPU_EPILOGUE, CUPACE_CHANGE_CONTENTION, CUPACE_CHANGE_DEVICE_SPEED
};

struct cupace_change {
    uint64_t at_ns;
    enum cupace_change_key key;
    uint64_t ns;                       /* durations */
    double value;                      /* contention */
    double speed[CUPACE_MAX_DEVICES];  /* device_speed, per device */
    unsigned nspeed;
    unsigned entry;                    /* 1 for the first entry as written, 2 for the next, ... */
    unsigned text_off, text_len;       /* the entry as written, in the workload's change_text */
};

/* Where a partition fails: at the end of its synthesis, of its GPU prep,
 * of its kernel, or of its epilogue.  fail_rate draws SYNTH or KERNEL. */
enum cupace_fail_stage {
    CUPACE_FAIL_NONE = 0, CUPACE_FAIL_SYNTH, CUPACE_FAIL_PREP, CUPACE_FAIL_KERNEL,
    CUPACE_FAIL_EPILOGUE
};

/* fail_at = JOB:PARTITION:STAGE: a partition that fails whatever its draw.
 * JOB counts jobs from 0 in arrival order, PARTITION from 0 in the job. */
struct cupace_fail_at {
    uint32_t job, part;
    enum cupace_fail_stage stage;
};

/* One job of a trace (or of a generated arrival process). */
struct cupace_trace_job {
    uint64_t arrival_ns;
    uint32_t partitions;
    uint64_t synth_ns;                 /* 0: the workload's synth_time */
    uint64_t kernel_ns;                /* 0: the workload's gpu_kernel */
};

struct cupace_workload {
    uint64_t jobs;
    uint64_t partitions_per_job;
    enum cupace_arrival arrival;
    uint64_t interarrival_ns;
    uint64_t burst_jobs;
    uint64_t burst_every_ns;
    char *trace;                       /* the path as written */
    struct cupace_trace_job *trace_jobs;
    size_t ntrace_jobs;
    uint64_t partition_memory;
    uint64_t release_at_kernel;
    uint64_t synth_ns;
    double synth_cv;
    enum cupace_dist synth_dist;
    uint64_t cpu_slots;
    uint64_t gpu_prep_ns;
    uint64_t gpu_kernel_ns;
    uint64_t gpu_epilogue_ns;
    double gpu_cv;
    enum cupace_dist gpu_dist;
    int gpu_exclusive;
    double contention;
    double device_speed[CUPACE_MAX_DEVICES];   /* filled for every device */
    unsigned ndevice_speed;                    /* as written (1 = same for all) */
    double fail_rate;
    struct cupace_fail_at *fail_at;            /* sorted by (job, part), each once */
    size_t nfail_at;
    double time_scale;
    struct cupace_change *changes;             /* sorted by at_ns */
    size_t nchanges;
    char *change_text;                         /* the value of change as written, for messages */
};

struct cupace_engine_conf {
    enum cupace_mode mode;
    enum cupace_backend backend;
    char backend_plugin[128];          /* backend = NAME of a stage plugin, else "" */
    uint64_t devices;
    unsigned device_ids[CUPACE_MAX_DEVICES];
    unsigned ndevice_ids;
    uint64_t workers_per_device;
    uint64_t synth_workers;
    uint64_t memory_budget;
    uint64_t seed;
    uint64_t status_interval_ns;
    uint64_t stall_timeout_ns;         /* realtime: a stage op running longer ends the run; 0: never */
    uint64_t stop_timeout_ns;          /* realtime: the longest drain after SIGINT/SIGTERM */
};

/* The longest queue table name: the schema adds "_done" and "_waiting", and
 * a PostgreSQL name has at most 63 bytes. */
#define CUPACE_QUEUE_TABLE_MAX 48

/* [queue]: the job queue of `cupace serve` and `cupace queue` (DESIGN §10). */
struct cupace_queue_settings {
    char *url;                         /* libpq connection string; "" = libpq's defaults */
    char *table;                       /* the hot table; results go to TABLE_done */
    uint64_t lease_ns;                 /* a claim lapses this long after its last heartbeat */
    uint64_t poll_ns;                  /* an idle node looks for work at least this often */
    uint64_t max_attempts;             /* claims a submitted job gets before it ends failed */
    uint64_t max_partition_bytes;      /* claim only jobs whose partitions hold at most this
                                        * (the node's memory budget; 0: any) - not a key */
};

/* [cuda]: the CUDA stages' keys (DESIGN §9). */
struct cupace_cuda_conf {
    uint64_t transfer;                 /* bytes copied to the device per partition */
    int verify;                        /* check a sample of each result on the CPU */
};

struct cupace_config {
    char *path;                        /* the file, as given */
    char *dir;                         /* its folder: relative paths start there */
    struct cupace_engine_conf engine;
    char *pacer_name;                  /* [pacer] name: a label */
    char *pacer_path;                  /* [pacer] path: colon-separated, may be NULL */
    struct cupace_pacer_section *sections;
    size_t nsections;
    struct cupace_pacer_section *stage_sections;   /* [stages.NAME] */
    size_t nstage_sections;
    char **ab;                         /* [ab] pacers: labels */
    size_t nab;
    struct cupace_workload workload;
    struct cupace_queue_settings queue;
    char *serve_metrics;               /* [serve] metrics: HOST:PORT, or NULL (none) */
    char **set_texts;                  /* the --set overrides applied, for their origins */
    size_t nset_texts;
    struct cupace_origin *key_at;      /* where each key of the schema was set (file NULL: not) */
    struct cupace_cuda_conf cuda;
};

/* A --set override: "SECTION.KEY=VALUE". */
struct cupace_override {
    const char *text;
};

/* Loads FILE (NULL: none, every key at its default), applies the
 * overrides in order, validates.  Returns a config
 * to free with cupace_config_free(), or NULL with the message in err. */
struct cupace_config *cupace_config_load(const char *file, const char *const *sets, size_t nsets,
                                         struct cupace_err *err);

/* cupace_config_load, with HOW naming where the overrides came from in
 * messages ("--set", "cupace_engine_set": a string that outlives the
 * config, which its origins point to), saying in *bad_set which
 * override (1 for the first) was refused on its own, an unknown key or a
 * malformed value; 0 where the load failed elsewhere: the file, or keys
 * that disagree. */
struct cupace_config *cupace_config_load_sets(const char *file, const char *const *sets,
                                              size_t nsets, const char *how,
                                              struct cupace_err *err, size_t *bad_set);
void cupace_config_free(struct cupace_config *cfg);

/* The section of LABEL, or NULL: a label without a section is the plugin of
 * that name with its defaults. */
struct cupace_pacer_section *cupace_config_section(struct cupace_config *cfg, const char *label);

/* Where SECTION's KEY (of the schema, not of a [pacer.LABEL]) was set;
 * NULL where nothing set it. */
const struct cupace_origin *cupace_config_origin(const struct cupace_config *cfg, const char *section,
                                                 const char *key);
/* [stages.NAME], or NULL.  Not const: the plugin's init marks the keys it asks for. */
struct cupace_pacer_section *cupace_config_stage_section(struct cupace_config *cfg, const char *name);

/* The controller name an instance label stands for. */
const char *cupace_config_plugin_of(const struct cupace_config *cfg, const char *label);

/* The number of partitions the workload will bring. */
uint64_t cupace_workload_partitions(const struct cupace_config *cfg);

/* The longest one partition can take, in ns, by the configured durations
 * alone (no draw's tail): each stage at its largest value, the kernel on the
 * slowest device, contended.  The loader's horizon check is the last
 * arrival plus this for every partition, one after another. */
double cupace_workload_partition_worst_ns(const struct cupace_config *cfg);

/* The stage a fail_at entry names: synth, prep, kernel, epilogue. */
const char *cupace_fail_stage_name(enum cupace_fail_stage st);

const char *cupace_dist_name(enum cupace_dist d);
const char *cupace_arrival_name(enum cupace_arrival a);

#endif
