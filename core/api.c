/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * api.c -- libcupace (cupace/cupace.h): the real-time engine of realtime.c
 * behind opaque handles, run in a thread of its own, with jobs submitted
 * from the caller's threads.
 *
 * An engine is a configuration (a file and the settings made in code,
 * loaded again with each setting so that a bad one is refused where it is
 * made, keys that disagree with each other at start), a controller instance, optional stages given in code, and once
 * started an open real-time run (cupace_rt_submit) on the engine's thread.
 * Each submitted job carries a record of ours as its data: the run's job
 * callback finds the caller's callback and the place for the outcome there,
 * with no table to look up while the job may already be ending.
 */
#define _GNU_SOURCE 1              /* strdup */
#include "config.h"
#include "cupace/cupace.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "error.h"
#include "grow.h"
#include "pacer_host.h"
#include "realtime.h"
#include "result.h"
#include "stages.h"

struct cupace_error {
    char msg[sizeof(struct cupace_err)];
};

/* One submitted job: ours, pointed to by the run's job data. */
struct api_job {
    uint32_t partitions;
    void *data;
    void (*done)(void *data, const struct cupace_job_outcome *outcome);
    int ended;
    struct cupace_job_outcome outcome;
    char *reason;                   /* outcome.reason's copy */
};

/* STARTING: one call of start has claimed the engine and sets up its run;
 * every other call sees it as started (the config it reads is in use),
 * and no second start can begin. */
enum api_state { API_NEW, API_STARTING, API_RUNNING, API_JOINED };

static const char *state_said(enum api_state st)
{
    return st == API_NEW ? "not started" : st == API_STARTING ? "still starting"
         : st == API_RUNNING ? "running" : "joined";
}

/* The engine whose run this thread is (done callbacks are called on it),
 * and the engine whose progress callback it is in (with the engine's lock
 * held).  The calls the contract forbids there would wait for themselves;
 * they are refused instead (refused_here). */
static _Thread_local const struct cupace_engine *run_thread_of;
static _Thread_local const struct cupace_engine *in_progress_of;

struct cupace_engine {
    pthread_mutex_t lock;
    pthread_mutex_t setup;          /* held by the calls before start, and by start */
    pthread_cond_t cv;              /* a job ended, or the run did */
    enum api_state state;

    char *path;                     /* NULL: no file */
    char **sets;                    /* "SECTION.KEY=VALUE", in order */
    size_t nsets, capsets;
    struct cupace_config *cfg;      /* loaded with every setting so far */
    int cfg_stale;                  /* the last settings disagree: start says how */
    const struct cupace_stages *stages;

    void (*progress)(void *data, const struct cupace_progress *p);
    void *progress_data;
    uint64_t progress_interval_ns;

    struct cupace_pacer_instance *pacer;        /* the controller now */
    struct retired {                            /* what reloads replaced: the run may still */
        struct cupace_pacer_instance *pacer;    /* read what the configs point to */
        struct cupace_config *cfg;
    } *retired;
    size_t nretired;
    struct cupace_params stage_params;
    struct cupace_params_ctx stage_pc;
    struct cupace_rt *rt;
    pthread_t thread;
    int run_rc;
    int run_over;
    struct cupace_err run_err;
    struct cupace_result res;

    struct api_job **jobs;          /* by id */
    size_t njobs, capjobs;
    uint64_t completed, failed;
    int joining;                    /* a join is waiting for the threads */
};

/* ---- errors ---------------------------------------------------------------- */

static int fail_with(struct cupace_error **err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int fail_with(struct cupace_error **err, const char *fmt, ...)
{
    va_list ap;

    if (!err)
        return -1;
    free(*err);
    *err = malloc(sizeof **err);
    if (!*err)
        return -1;                  /* no memory even for the message: NULL says so */
    va_start(ap, fmt);
    vsnprintf((*err)->msg, sizeof (*err)->msg, fmt, ap);
    va_end(ap);
    return -1;
}

static int fail_err(struct cupace_error **err, const struct cupace_err *e)
{
    return fail_with(err, "%s", e->msg);
}

/* Whether WHAT may not be called here, with err set: no engine; inside
 * the progress callback (the engine's lock is held, and every call takes
 * it); or, for a call that waits for the engine (WAITS), on the engine's
 * own thread, which it would wait for. */
static int refused_here(const struct cupace_engine *e, const char *what, int waits,
                        struct cupace_error **err)
{
    if (!e)
        return fail_with(err, "%s: no engine (NULL)", what);
    if (in_progress_of == e)
        return fail_with(err, "%s: called from the progress callback, which must not call "
                         "the engine", what);
    if (waits && run_thread_of == e)
        return fail_with(err, "%s: called on the engine's own thread (a done callback), which "
                         "it would wait for", what);
    return 0;
}

static enum api_state state_of(struct cupace_engine *e)
{
    enum api_state st;

    pthread_mutex_lock(&e->lock);
    st = e->state;
    pthread_mutex_unlock(&e->lock);
    return st;
}

const char *cupace_error_message(const struct cupace_error *err)
{
    return err ? err->msg : "out of memory";
}

void cupace_error_free(struct cupace_error *err)
{
    free(err);
}

unsigned cupace_api_version(void)
{
    return CUPACE_API_VERSION;
}

const char *cupace_library_version(void)
{
    return PACKAGE_VERSION;
}

/* ---- configuring ------------------------------------------------------------ */

static struct cupace_config *load(const struct cupace_engine *e, const char *extra,
                                  struct cupace_err *err, size_t *bad_set)
{
    const char **sets = malloc((e->nsets + 1) * sizeof *sets);
    struct cupace_config *cfg;
    size_t n = 0;

    if (!sets) {
        cupace_err_set(err, "out of memory");
        return NULL;
    }
    for (; n < e->nsets; n++)
        sets[n] = e->sets[n];
    if (extra)
        sets[n++] = extra;
    cfg = cupace_config_load_sets(e->path, sets, n, "cupace_engine_set", err, bad_set);
    free(sets);
    return cfg;
}

struct cupace_engine *cupace_engine_new(const char *path, struct cupace_error **err)
{
    struct cupace_engine *e = calloc(1, sizeof *e);
    struct cupace_err ce;

    if (!e || (path && !(e->path = strdup(path)))) {
        free(e);
        fail_with(err, "out of memory");
        return NULL;
    }
    if (!(e->cfg = load(e, NULL, &ce, NULL))) {
        free(e->path);
        free(e);
        fail_err(err, &ce);
        return NULL;
    }
    pthread_mutex_init(&e->lock, NULL);
    pthread_mutex_init(&e->setup, NULL);
    pthread_cond_init(&e->cv, NULL);
    return e;
}

#define SETTINGS_RULE "settings go before start"

/* The calls before start change what start reads (the config, the
 * stages): each holds e->setup, as start does while it sets up, so that
 * none frees the config under a start on another thread.  0: e->setup is
 * held, for the caller to let go of; else refused, with RULE said. */
static int before_start(struct cupace_engine *e, const char *what, const char *rule,
                        struct cupace_error **err)
{
    enum api_state st;

    if (refused_here(e, what, 0, err) < 0)
        return -1;
    pthread_mutex_lock(&e->setup);
    if ((st = state_of(e)) != API_NEW) {
        pthread_mutex_unlock(&e->setup);
        return fail_with(err, "%s: the engine is %s: %s", what, state_said(st), rule);
    }
    return 0;
}

static void set_state(struct cupace_engine *e, enum api_state st)
{
    pthread_mutex_lock(&e->lock);
    e->state = st;
    pthread_mutex_unlock(&e->lock);
}

static int engine_set(struct cupace_engine *e, const char *key, const char *value,
                      struct cupace_error **err)
{
    struct cupace_config *cfg;
    struct cupace_err ce;
    size_t len, bad;
    char *set;

    if (!key || !value || !strchr(key, '.') || strchr(key, '='))
        return fail_with(err, "cupace_engine_set: '%s': expected SECTION.KEY and a value",
                         key ? key : "(null)");
    len = strlen(key) + strlen(value) + 2;
    if (!(set = malloc(len)))
        return fail_with(err, "out of memory");
    snprintf(set, len, "%s=%s", key, value);
    /* A setting refused for itself (an unknown key, a malformed value) is
     * refused here.  Keys that disagree with each other are left for start:
     * the order of the settings must not matter. */
    cfg = load(e, set, &ce, &bad);
    if (!cfg && bad) {
        free(set);
        return fail_err(err, &ce);
    }
    if (e->nsets == e->capsets) {
        char **more = cupace_grow(e->sets, &e->capsets, sizeof *more, 8);
        if (!more) {
            free(set);
            if (cfg)
                cupace_config_free(cfg);
            return fail_with(err, "out of memory");
        }
        e->sets = more;
    }
    e->sets[e->nsets++] = set;
    if (cfg) {
        cupace_config_free(e->cfg);
        e->cfg = cfg;
    }
    e->cfg_stale = !cfg;
    return 0;
}

int cupace_engine_set(struct cupace_engine *e, const char *key, const char *value,
                      struct cupace_error **err)
{
    int rc;

    if (before_start(e, "cupace_engine_set", SETTINGS_RULE, err) < 0)
        return -1;
    rc = engine_set(e, key, value, err);
    pthread_mutex_unlock(&e->setup);
    return rc;
}

int cupace_engine_set_stages(struct cupace_engine *e, const struct cupace_stages *ops,
                             struct cupace_error **err)
{
    char why[256];
    int rc = 0;

    if (before_start(e, "cupace_engine_set_stages", SETTINGS_RULE, err) < 0)
        return -1;
    if (!ops || cupace_stages_validate(ops, 0, why, sizeof why) < 0)
        rc = fail_with(err, "stages '%s': %s", ops && ops->name ? ops->name : "(unnamed)",
                       ops ? why : "no stages given");
    else
        e->stages = ops;
    pthread_mutex_unlock(&e->setup);
    return rc;
}

int cupace_engine_on_progress(struct cupace_engine *e,
                              void (*fn)(void *data, const struct cupace_progress *p),
                              void *data, uint64_t interval_ns, struct cupace_error **err)
{
    if (before_start(e, "cupace_engine_on_progress", SETTINGS_RULE, err) < 0)
        return -1;
    e->progress = fn;
    e->progress_data = data;
    e->progress_interval_ns = interval_ns ? interval_ns : 1;
    pthread_mutex_unlock(&e->setup);
    return 0;
}

/* ---- the run ------------------------------------------------------------------ */

static void on_progress(void *ctx, const struct cupace_rt_progress *p)
{
    struct cupace_engine *e = ctx;
    struct cupace_progress pr = {
        .size = sizeof pr, .final = (uint32_t)p->final, .now_ns = p->now_ns,
        .partitions = p->partitions, .finished = p->finished, .waiting = p->waiting,
        .in_synthesis = p->in_synthesis, .gpu_busy = p->gpu_busy,
        .mem_reserved = p->mem_reserved, .interval_ns = p->interval_ns, .pacer = p->label,
        .pacer_state = p->pacer_state,
    };

    in_progress_of = e;
    e->progress(e->progress_data, &pr);
    in_progress_of = NULL;
}

/* A job ended: its outcome kept for wait, the caller's callback called
 * (on the run's thread, no lock of the engine's held). */
static void on_job_done(void *ctx, const struct cupace_rt_job_end *end)
{
    struct cupace_engine *e = ctx;
    struct api_job *j = end->tag;
    struct cupace_job_outcome o = {
        .size = sizeof o, .ok = end->failed == 0, .job = end->job, .data = j->data,
        .partitions = end->partitions, .failed = end->failed, .latency_s = end->latency_s,
        .reason = end->reason,
    };

    if (j->done)
        j->done(j->data, &o);
    pthread_mutex_lock(&e->lock);
    j->reason = end->reason ? strdup(end->reason) : NULL;
    j->outcome = o;
    j->outcome.reason = end->reason ? (j->reason ? j->reason : "out of memory for the reason")
                                    : NULL;
    j->ended = 1;
    if (o.ok)
        e->completed++;
    else
        e->failed++;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->lock);
}

static void *run_thread(void *arg)
{
    struct cupace_engine *e = arg;
    int rc;

    run_thread_of = e;
    rc = cupace_rt_run(e->rt, &e->res, &e->run_err);

    pthread_mutex_lock(&e->lock);
    /* every job has been reported but those the watchdog left in an op:
     * they end here, failed, without their callback (the op may still use
     * their data), so that no wait hangs */
    for (size_t i = 0; i < e->njobs; i++) {
        struct api_job *j = e->jobs[i];
        if (j && !j->ended) {
            /* how many of its partitions completed is not known once its
             * op was left running: none is counted as completed */
            j->outcome = (struct cupace_job_outcome){
                .size = sizeof j->outcome, .job = i, .data = j->data,
                .partitions = j->partitions, .failed = j->partitions,
                .latency_s = e->res.makespan_s,
                .reason = "left in a stage op by the watchdog ([engine] stall_timeout)",
            };
            j->ended = 1;
            e->failed++;
        }
    }
    e->run_rc = rc;
    e->run_over = 1;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->lock);
    return NULL;
}

/* The controller of cfg's [pacer] name, on its search path; NULL with err. */
static struct cupace_pacer_instance *new_pacer(struct cupace_config *cfg, struct cupace_err *err)
{
    struct cupace_pacer_instance *inst = calloc(1, sizeof *inst);

    if (!inst) {
        cupace_err_set(err, "out of memory");
        return NULL;
    }
    if (cupace_pacer_instance_open(inst, cfg, cfg->pacer_name, err) < 0) {
        free(inst);
        return NULL;
    }
    return inst;
}

static void free_pacer(struct cupace_pacer_instance *inst)
{
    if (inst) {
        cupace_pacer_instance_destroy(inst);
        free(inst);
    }
}

/* A start that failed leaves no controller behind: a second may be tried. */
static void drop_pacer(struct cupace_engine *e)
{
    free_pacer(e->pacer);
    e->pacer = NULL;
}

static int start_run(struct cupace_engine *e, struct cupace_error **err)
{
    struct cupace_run_opts opts = { .open = 1, .job_done = on_job_done, .job_done_ctx = e };
    struct cupace_err ce;
    char who[256];
    int pe;

    if (e->cfg_stale) {
        struct cupace_config *cfg = load(e, NULL, &ce, NULL);
        if (!cfg)
            return fail_err(err, &ce);
        cupace_config_free(e->cfg);
        e->cfg = cfg;
        e->cfg_stale = 0;
    }
    if (!(e->pacer = new_pacer(e->cfg, &ce)))
        return fail_err(err, &ce);
    if (e->progress) {
        opts.progress = on_progress;
        opts.progress_ctx = e;
        opts.progress_interval_ns = e->progress_interval_ns;
    }
    if (e->stages) {
        char section[160];
        snprintf(section, sizeof section, "stages.%s", e->stages->name);
        cupace_params_bind(&e->stage_params, &e->stage_pc,
                           cupace_config_stage_section(e->cfg, e->stages->name), section);
        opts.stages = e->stages;
        opts.stage_params = &e->stage_params;
    }
    if (!(e->rt = cupace_rt_create(e->cfg, e->pacer, &opts, &ce))) {
        drop_pacer(e);
        return fail_err(err, e->stages && e->stage_pc.has_bad ? &e->stage_pc.bad : &ce);
    }
    snprintf(who, sizeof who, "stages '%s'", e->stages ? e->stages->name : "");
    if (e->stages && cupace_params_check(&e->stage_pc, who, &ce) < 0) {
        cupace_rt_destroy(e->rt);
        e->rt = NULL;
        drop_pacer(e);
        return fail_err(err, &ce);
    }
    if ((pe = pthread_create(&e->thread, NULL, run_thread, e)) != 0) {
        cupace_rt_destroy(e->rt);
        e->rt = NULL;
        drop_pacer(e);
        return fail_with(err, "cannot start the engine's thread: %s", strerror(pe));
    }
    return 0;
}

/* Claims the engine before setting anything up, holding e->setup to the
 * end: two starts at once both passed a check that let go of the lock, and
 * made two runs of one engine; a set or a free meanwhile freed the config
 * start read.  With e->setup held no other start can pass NEW; STARTING is
 * for the calls that do not take it (free, metrics). */
int cupace_engine_start(struct cupace_engine *e, struct cupace_error **err)
{
    if (before_start(e, "cupace_engine_start", "start is once per engine", err) < 0)
        return -1;
    set_state(e, API_STARTING);
    if (start_run(e, err) < 0) {
        set_state(e, API_NEW);
        pthread_mutex_unlock(&e->setup);
        return -1;
    }
    set_state(e, API_RUNNING);
    pthread_mutex_unlock(&e->setup);
    cupace_rt_wait_ready(e->rt);   /* the run may also have ended at once: join says why */
    return 0;
}

/* ---- jobs -------------------------------------------------------------------------- */

int cupace_engine_submit(struct cupace_engine *e, const struct cupace_job_spec *spec,
                         uint64_t *job, struct cupace_error **err)
{
    struct api_job *j;
    struct cupace_err ce;
    uint64_t bytes;
    int64_t id;

    enum api_state st;

    if (refused_here(e, "cupace_engine_submit", 0, err) < 0)
        return -1;
    if ((st = state_of(e)) != API_RUNNING)
        return fail_with(err, "cupace_engine_submit: the engine is %s", state_said(st));
    if (!spec || spec->size < offsetof(struct cupace_job_spec, done) + sizeof spec->done)
        return fail_with(err, "cupace_engine_submit: a job spec of %u bytes: set its size to "
                         "sizeof(struct cupace_job_spec)", spec ? spec->size : 0);
    if (!(j = calloc(1, sizeof *j)))
        return fail_with(err, "out of memory");
    j->partitions = spec->partitions;
    j->data = spec->data;
    j->done = spec->done;
    /* Every submission goes through here under e->lock, so the run numbers
     * the job e->njobs: its place in the table is made first, and a failure
     * there changes nothing. */
    pthread_mutex_lock(&e->lock);
    if (e->njobs == e->capjobs) {
        size_t cap = e->capjobs;
        struct api_job **more = cupace_grow(e->jobs, &cap, sizeof *more, 64);
        if (!more) {
            pthread_mutex_unlock(&e->lock);
            free(j);
            return fail_with(err, "out of memory");
        }
        e->jobs = more;
        e->capjobs = cap;
    }
    bytes = spec->partition_bytes ? spec->partition_bytes : e->cfg->workload.partition_memory;
    id = cupace_rt_submit(e->rt, spec->partitions, bytes, spec->release_at_kernel, spec->data, j,
                          &ce);
    if (id >= 0)
        e->jobs[e->njobs++] = j;
    pthread_mutex_unlock(&e->lock);
    if (id < 0) {
        free(j);
        return fail_with(err, "cupace_engine_submit: %s", ce.msg);
    }
    if (job)
        *job = (uint64_t)id;
    return 0;
}

int cupace_engine_wait(struct cupace_engine *e, uint64_t job, struct cupace_job_outcome *out,
                       struct cupace_error **err)
{
    struct api_job *j;

    if (refused_here(e, "cupace_engine_wait", 1, err) < 0)
        return -1;
    pthread_mutex_lock(&e->lock);
    if (job >= e->njobs || !e->jobs[job]) {
        pthread_mutex_unlock(&e->lock);
        return fail_with(err, "cupace_engine_wait: no job %llu", (unsigned long long)job);
    }
    j = e->jobs[job];
    while (!j->ended)
        pthread_cond_wait(&e->cv, &e->lock);
    if (out) {
        uint32_t size = out->size < sizeof *out ? out->size : (uint32_t)sizeof *out;
        memcpy(out, &j->outcome, size);
        out->size = size;
    }
    pthread_mutex_unlock(&e->lock);
    return 0;
}

/* ---- metrics and stopping -------------------------------------------------------- */

int cupace_engine_metrics(struct cupace_engine *e, struct cupace_metrics *out)
{
    struct cupace_metrics m = { .size = sizeof m };
    struct cupace_rt *rt;
    uint32_t size;

    if (!out || out->size < sizeof out->size || refused_here(e, "cupace_engine_metrics", 0, NULL))
        return -1;
    /* the run is published with the state, under the lock: start writes
     * e->rt before, and destroys it again where a later step fails */
    pthread_mutex_lock(&e->lock);
    rt = e->state == API_RUNNING || e->state == API_JOINED ? e->rt : NULL;
    pthread_mutex_unlock(&e->lock);
    if (rt)
        (void)cupace_rt_signals(rt, &m.signals);     /* zero before the run is set up */
    pthread_mutex_lock(&e->lock);
    m.running = e->state == API_RUNNING && !e->run_over;
    m.jobs_submitted = e->njobs;
    m.jobs_completed = e->completed;
    m.jobs_failed = e->failed;
    pthread_mutex_unlock(&e->lock);
    size = out->size < sizeof m ? out->size : (uint32_t)sizeof m;
    memcpy(out, &m, size);
    out->size = size;
    return 0;
}

uint64_t cupace_engine_credit(struct cupace_engine *e, uint64_t horizon_ns, int *idle)
{
    int dummy;

    if (!idle)
        idle = &dummy;
    *idle = 0;
    if (refused_here(e, "cupace_engine_credit", 0, NULL) < 0)
        return 0;
    return state_of(e) == API_RUNNING ? cupace_rt_credit(e->rt, horizon_ns, idle) : 0;
}

static int reload_locked(struct cupace_engine *e, struct cupace_err *err)
{
    struct cupace_pacer_instance *inst = NULL;
    struct cupace_config *cfg;
    struct retired *more = NULL;

    if (!(cfg = load(e, NULL, err, NULL)) || !(inst = new_pacer(cfg, err)) ||
        !(more = realloc(e->retired, (e->nretired + 1) * sizeof *more))) {
        if (inst && !more)
            cupace_err_set(err, "out of memory");
        free_pacer(inst);
        cupace_config_free(cfg);
        return -1;
    }
    e->retired = more;
    cupace_rt_set_pacer(e->rt, inst);
    /* the old instance is no longer called; the run still points into the
     * old config (its path, its sections), so both are kept until free */
    e->retired[e->nretired++] = (struct retired){ .pacer = e->pacer, .cfg = e->cfg };
    e->pacer = inst;
    e->cfg = cfg;
    return 0;
}

int cupace_engine_reload(struct cupace_engine *e, struct cupace_error **err)
{
    struct cupace_err ce;
    int rc;

    if (refused_here(e, "cupace_engine_reload", 0, err) < 0)
        return -1;
    /* under e->lock: submit reads the config, and two reloads must not mix */
    pthread_mutex_lock(&e->lock);
    if (e->state != API_RUNNING || e->run_over) {
        pthread_mutex_unlock(&e->lock);
        return fail_with(err, "cupace_engine_reload: the engine is not running");
    }
    rc = reload_locked(e, &ce);
    pthread_mutex_unlock(&e->lock);
    return rc < 0 ? fail_err(err, &ce) : 0;
}

void cupace_engine_stop(struct cupace_engine *e, enum cupace_stop_how how)
{
    /* a stop that races a join finds the run over: rt stays until free */
    if (refused_here(e, "cupace_engine_stop", 0, NULL) < 0 || state_of(e) != API_RUNNING)
        return;
    if (how == CUPACE_STOP_CANCEL)
        cupace_rt_stop(e->rt, CUPACE_RT_CANCEL);
    else
        cupace_rt_close(e->rt);
}

int cupace_engine_join(struct cupace_engine *e, struct cupace_error **err)
{
    if (refused_here(e, "cupace_engine_join", 1, err) < 0)
        return -1;
    pthread_mutex_lock(&e->lock);
    /* a second join at once waits for the first, and is then too late */
    while (e->joining)
        pthread_cond_wait(&e->cv, &e->lock);
    if (e->state != API_RUNNING) {
        enum api_state st = e->state;
        pthread_mutex_unlock(&e->lock);
        return fail_with(err, "cupace_engine_join: the engine is %s%s", state_said(st),
                         st == API_JOINED ? " already" : "");
    }
    e->joining = 1;
    pthread_mutex_unlock(&e->lock);
    pthread_join(e->thread, NULL);
    pthread_mutex_lock(&e->lock);
    e->state = API_JOINED;
    e->joining = 0;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->lock);
    if (e->run_rc < 0)
        return fail_err(err, &e->run_err);
    if (e->res.stalled)
        return fail_with(err, "%s", e->res.stall_reason);
    return 0;
}

int cupace_engine_free(struct cupace_engine *e)
{
    enum api_state st;

    if (!e)
        return 0;
    st = state_of(e);
    if (in_progress_of == e || run_thread_of == e || st == API_RUNNING || st == API_STARTING)
        return -1;                  /* threads of ours still run, or start does: join first */
    cupace_rt_destroy(e->rt);
    free_pacer(e->pacer);
    for (size_t i = 0; i < e->nretired; i++) {
        free_pacer(e->retired[i].pacer);
        cupace_config_free(e->retired[i].cfg);
    }
    free(e->retired);
    cupace_result_free(&e->res);
    for (size_t i = 0; i < e->njobs; i++)
        if (e->jobs[i]) {
            free(e->jobs[i]->reason);
            free(e->jobs[i]);
        }
    free(e->jobs);
    for (size_t i = 0; i < e->nsets; i++)
        free(e->sets[i]);
    free(e->sets);
    cupace_config_free(e->cfg);
    free(e->path);
    pthread_cond_destroy(&e->cv);
    pthread_mutex_destroy(&e->setup);
    pthread_mutex_destroy(&e->lock);
    free(e);
    return 0;
}
