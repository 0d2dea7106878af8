/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pipeline.c -- transitions, accounting and metrics of the pipeline.
 * See pipeline.h for the invariants.
 */
#define _GNU_SOURCE 1              /* mremap */
#include "config.h"
#include "pipeline.h"
#include "checked.h"
#include "grow.h"
#include "units.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The partition records of a large run are tens of MiB, touched once each:
 * anonymous memory (zeroed by the kernel) with transparent huge pages where
 * the kernel allows them turns ~15 000 page faults into ~30. */
static void *records_alloc(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
}

static void records_free(void *p, size_t bytes)
{
    if (p)
        munmap(p, bytes);
}

static int pipeline_init(struct cupace_pipeline *pl, const struct cupace_config *cfg, int open,
                         struct cupace_err *err)
{
    struct cupace_trace_job *arrivals;
    uint64_t total = open ? 0 : cupace_workload_partitions(cfg);
    uint32_t p = 0;

    memset(pl, 0, sizeof *pl);
    pl->cfg = cfg;
    cupace_draw_plan_init(&pl->draw_plan, cfg);
    pl->ndevices = (uint32_t)cfg->engine.devices;
    pl->workers_per_device = (uint32_t)cfg->engine.workers_per_device;
    pl->nworkers = pl->ndevices * pl->workers_per_device;
    pl->synth_slots = cfg->engine.synth_workers;
    pl->mem_budget = cfg->engine.memory_budget;
    pl->part_mem = cfg->workload.partition_memory;
    pl->release_at_kernel = cfg->workload.release_at_kernel;
    if (total >= UINT32_MAX)
        return cupace_err_set(err, "%s: %llu partitions: at most %u", cfg->path,
                              (unsigned long long)total, UINT32_MAX - 1);
    pl->njobs = open ? 0 : cupace_workload_njobs(cfg);
    pl->nparts = (uint32_t)total;
    pl->cap_jobs = pl->njobs ? pl->njobs : 1;
    pl->cap_parts = pl->nparts ? pl->nparts : 1;
    arrivals = calloc(pl->njobs ? pl->njobs : 1, sizeof *arrivals);
    pl->jobs = calloc(pl->njobs ? pl->njobs : 1, sizeof *pl->jobs);
    pl->parts = records_alloc((total ? total : 1) * sizeof *pl->parts);
    pl->gpuq = malloc((total ? total : 1) * sizeof *pl->gpuq);
    pl->latency = malloc((pl->njobs ? pl->njobs : 1) * sizeof *pl->latency);
    pl->device_kernels = calloc(pl->ndevices, sizeof *pl->device_kernels);
    pl->device_holders = calloc(pl->ndevices, sizeof *pl->device_holders);
    if (!arrivals || !pl->jobs || !pl->parts || !pl->gpuq || !pl->latency || !pl->device_kernels ||
        !pl->device_holders) {
        free(arrivals);
        cupace_pipeline_free(pl);
        return cupace_err_set(err, "out of memory for %llu partitions", (unsigned long long)total);
    }
    if (!open)
        cupace_workload_arrivals(cfg, arrivals);
    for (size_t j = 0; j < pl->njobs; j++) {
        struct cupace_job *job = &pl->jobs[j];
        job->arrival_ns = arrivals[j].arrival_ns;
        job->synth_ns = arrivals[j].synth_ns;
        job->kernel_ns = arrivals[j].kernel_ns;
        job->part_mem = pl->part_mem;
        job->release = pl->release_at_kernel;
        job->first = p;
        job->count = job->left = arrivals[j].partitions;
        for (uint32_t i = 0; i < job->count; i++)
            pl->parts[p++].job = (uint32_t)j;
    }
    free(arrivals);
    return 0;
}

int cupace_pipeline_init(struct cupace_pipeline *pl, const struct cupace_config *cfg,
                         struct cupace_err *err)
{
    return pipeline_init(pl, cfg, 0, err);
}

int cupace_pipeline_init_open(struct cupace_pipeline *pl, const struct cupace_config *cfg,
                              struct cupace_err *err)
{
    return pipeline_init(pl, cfg, 1, err);
}

/* Room for `jobs` jobs and `parts` partitions in every per-job and
 * per-partition array, by doubling.  0, or -1 (nothing changed that
 * matters: the capacities stay those of the arrays). */
static int reserve(struct cupace_pipeline *pl, size_t jobs, uint32_t parts)
{
    if (jobs > pl->cap_jobs) {
        size_t cap = cupace_grow_cap(pl->cap_jobs, jobs, UINT32_MAX);
        struct cupace_job *j;
        double *l;
        if (!(j = realloc(pl->jobs, cap * sizeof *j)))
            return -1;
        pl->jobs = j;
        if (!(l = realloc(pl->latency, cap * sizeof *l)))
            return -1;
        pl->latency = l;
        pl->cap_jobs = cap;
    }
    if (parts > pl->cap_parts) {
        size_t cap = cupace_grow_cap(pl->cap_parts, parts, UINT32_MAX);
        void *p;
        uint32_t *q;
        if (!(q = realloc(pl->gpuq, cap * sizeof *q)))
            return -1;
        pl->gpuq = q;
        p = mremap(pl->parts, pl->cap_parts * sizeof *pl->parts, cap * sizeof *pl->parts,
                   MREMAP_MAYMOVE);     /* anonymous memory: the new part is zeroed */
        if (p == MAP_FAILED)
            return -1;
        pl->parts = p;
        pl->cap_parts = (uint32_t)cap;
    }
    return 0;
}

int64_t cupace_pipeline_add_job(struct cupace_pipeline *pl, uint64_t now, uint32_t count,
                                uint64_t part_mem, uint64_t release, struct cupace_err *err)
{
    struct cupace_job *job;
    size_t j = pl->njobs;

    if (count == 0)
        return cupace_err_set(err, "a job of no partitions");
    if (part_mem > pl->mem_budget) {
        char part[32], budget[32];

        cupace_format_size(part_mem, part, sizeof part);
        cupace_format_size(pl->mem_budget, budget, sizeof budget);
        return cupace_err_set(err, "%s (%llu bytes) per partition: more than the memory budget, "
                              "%s (%llu bytes), could ever hold", part, (unsigned long long)part_mem,
                              budget, (unsigned long long)pl->mem_budget);
    }
    if (release > part_mem)
        return cupace_err_set(err, "%llu bytes released at the kernel of a %llu-byte partition",
                              (unsigned long long)release, (unsigned long long)part_mem);
    if (count >= UINT32_MAX - pl->nparts || j >= UINT32_MAX)
        return cupace_err_set(err, "%u partitions more: at most %u in one run", count,
                              UINT32_MAX - 1);
    if (reserve(pl, j + 1, pl->nparts + count) < 0)
        return cupace_err_set(err, "out of memory for %u partitions more", count);
    job = &pl->jobs[j];
    *job = (struct cupace_job){ .arrival_ns = now, .part_mem = part_mem, .release = release,
                                .first = pl->nparts, .count = count, .left = count };
    for (uint32_t i = 0; i < count; i++)
        pl->parts[pl->nparts + i] = (struct cupace_part){ .job = (uint32_t)j };
    pl->nparts += count;
    pl->njobs++;
    cupace_pipeline_arrive(pl, now);
    return (int64_t)j;
}

void cupace_pipeline_free(struct cupace_pipeline *pl)
{
    free(pl->jobs);
    records_free(pl->parts, pl->cap_parts * sizeof *pl->parts);
    free(pl->gpuq);
    free(pl->latency);
    free(pl->device_kernels);
    free(pl->device_holders);
    pl->jobs = NULL;
    pl->parts = NULL;
    pl->gpuq = NULL;
    pl->latency = NULL;
    pl->device_kernels = NULL;
    pl->device_holders = NULL;
}

/* ---- accounting -------------------------------------------------------- */

static void tw_advance(struct cupace_tw *tw, uint64_t value, uint64_t dt)
{
    tw->integral += (cupace_acc)value * dt;
    if (value > tw->max)
        tw->max = value;
}

/* Advances every time-weighted metric from t_last to now, over the state as
 * it was.  Called first by each transition. */
static void account(struct cupace_pipeline *pl, uint64_t now)
{
    uint64_t dt;

    if (!pl->started)
        return;
    if (now < pl->t_last)
        pl->time_went_back = 1;     /* a driver's bug: the report will say so */
    if (now <= pl->t_last)
        return;
    dt = now - pl->t_last;
    tw_advance(&pl->tw_waiting, pl->waiting, dt);
    tw_advance(&pl->tw_synth, pl->in_synthesis, dt);
    tw_advance(&pl->tw_mem, pl->mem_reserved, dt);
    pl->busy_ns += (cupace_acc)pl->busy_devices * dt;
    if (pl->arrived_end > cupace_pipeline_finished(pl))
        pl->starved_ns += (cupace_acc)(pl->ndevices - pl->busy_devices) * dt;
    pl->t_last = now;
}

static void tw_see(struct cupace_tw *tw, uint64_t value)
{
    if (value > tw->max_any)
        tw->max_any = value;
}

/* Called last by each transition that changed a signal: the state it left
 * is seen, however long it lasts. */
static void notify(struct cupace_pipeline *pl, uint64_t now)
{
    assert(cupace_pipeline_sane(pl));
    tw_see(&pl->tw_waiting, pl->waiting);
    tw_see(&pl->tw_synth, pl->in_synthesis);
    tw_see(&pl->tw_mem, pl->mem_reserved);
    if (pl->observer)
        pl->observer(pl->observer_ctx, now);
}

_Static_assert(sizeof(struct cupace_part) == 64, "a partition record is one cache line");

/* What a partition holds of the budget, by its state (see struct cupace_part). */
static uint64_t mem_held(const struct cupace_pipeline *pl, const struct cupace_part *p)
{
    switch (p->state) {
    case CUPACE_PART_SYNTH:
    case CUPACE_PART_WAITING:
    case CUPACE_PART_GPU:
        return p->released ? pl->jobs[p->job].part_mem - pl->jobs[p->job].release
                           : pl->jobs[p->job].part_mem;
    default:
        return 0;
    }
}

static void release(struct cupace_pipeline *pl, uint64_t bytes)
{
    assert(pl->mem_reserved >= bytes);
    pl->mem_reserved -= bytes;
}

/* A partition finished (completed or failed): its job may be done. */
static void finish_part(struct cupace_pipeline *pl, uint64_t now, struct cupace_part *p, int failed)
{
    struct cupace_job *job = &pl->jobs[p->job];

    release(pl, mem_held(pl, p));
    p->state = failed ? CUPACE_PART_FAILED : CUPACE_PART_DONE;
    if (failed) {
        pl->failed++;
        job->failed++;
    }
    pl->t_end = now;
    if (--job->left == 0) {
        if (job->failed) {
            pl->jobs_failed++;
        } else {
            pl->jobs_completed++;
            pl->latency[pl->nlatency++] = (double)(now - job->arrival_ns) / 1e9;
        }
        if (pl->job_observer)
            pl->job_observer(pl->job_observer_ctx, p->job);
    }
}

/* ---- transitions ------------------------------------------------------- */

uint64_t cupace_pipeline_next_arrival(const struct cupace_pipeline *pl)
{
    return pl->jobs_arrived < pl->njobs ? pl->jobs[pl->jobs_arrived].arrival_ns : UINT64_MAX;
}

void cupace_pipeline_arrive(struct cupace_pipeline *pl, uint64_t now)
{
    struct cupace_job *job = &pl->jobs[pl->jobs_arrived++];

    if (!pl->started) {
        pl->started = 1;
        pl->t_first = pl->t_last = pl->t_end = now;
        /* in real time the arrival is seen a little after it was due; a
         * job's latency runs from when it was due, so the makespan does too,
         * or the first job's latency would exceed it */
        if (job->arrival_ns < now)
            pl->t_first = job->arrival_ns;
    }
    account(pl, now);
    pl->arrived_end = job->first + job->count;
    notify(pl, now);
}

int cupace_pipeline_can_dispatch(const struct cupace_pipeline *pl)
{
    return pl->next_dispatch < pl->arrived_end && pl->in_synthesis < pl->synth_slots &&
           pl->mem_budget - pl->mem_reserved >= pl->jobs[pl->parts[pl->next_dispatch].job].part_mem;
}

uint32_t cupace_pipeline_dispatch(struct cupace_pipeline *pl, uint64_t now)
{
    uint32_t id = pl->next_dispatch++;
    struct cupace_part *p = &pl->parts[id];
    struct cupace_job *job = &pl->jobs[p->job];
    struct cupace_draws d;

    assert(p->state == CUPACE_PART_PENDING);
    account(pl, now);
    cupace_workload_draw(&pl->draw_plan, p->job, id - job->first, &d);
    p->prep_draw = d.prep;
    p->kernel_draw = d.kernel;
    p->epilogue_draw = d.epilogue;
    p->fail = d.fail;
    p->state = CUPACE_PART_SYNTH;
    p->t_stage = now;
    p->synth_drawn_ns = cupace_workload_synth_ns(&pl->cfg->workload, now, job->synth_ns, d.synth);
    pl->mem_reserved += job->part_mem;
    pl->dispatched++;
    pl->in_synthesis++;
    notify(pl, now);
    return id;
}

int cupace_pipeline_synth_end(struct cupace_pipeline *pl, uint64_t now, uint32_t id)
{
    struct cupace_part *p = &pl->parts[id];

    assert(p->state == CUPACE_PART_SYNTH);
    account(pl, now);
    pl->in_synthesis--;
    if (p->fail == CUPACE_FAIL_SYNTH) {
        finish_part(pl, now, p, 1);
        notify(pl, now);
        return -1;
    }
    p->state = CUPACE_PART_WAITING;
    pl->synth_done++;
    pl->synth_ns_total = cupace_sat_add(pl->synth_ns_total, now - p->t_stage);
    pl->gpuq[pl->q_tail++] = id;
    pl->waiting++;
    notify(pl, now);
    return 0;
}

uint32_t cupace_pipeline_take(struct cupace_pipeline *pl, uint64_t now, unsigned device)
{
    uint32_t id;
    struct cupace_part *p;

    assert(pl->waiting > 0 && pl->q_head < pl->q_tail);
    account(pl, now);
    id = pl->gpuq[pl->q_head++];
    p = &pl->parts[id];
    p->state = CUPACE_PART_GPU;
    p->t_stage = now;
    pl->waiting--;
    pl->gpu_busy++;
    pl->device_holders[device]++;
    notify(pl, now);
    return id;
}

int cupace_pipeline_contended(const struct cupace_pipeline *pl, unsigned device)
{
    return pl->device_holders[device] > 1;
}

/* A GPU worker gives up a partition that failed on it. */
static void gpu_fail(struct cupace_pipeline *pl, uint64_t now, struct cupace_part *p,
                     unsigned device)
{
    pl->gpu_busy--;
    pl->device_holders[device]--;
    finish_part(pl, now, p, 1);
    notify(pl, now);
}

int cupace_pipeline_prep_end(struct cupace_pipeline *pl, uint64_t now, uint32_t id,
                             unsigned device)
{
    struct cupace_part *p = &pl->parts[id];

    assert(p->state == CUPACE_PART_GPU && !p->in_kernel);
    if (p->fail != CUPACE_FAIL_PREP)
        return 0;                   /* no signal changed: no update */
    account(pl, now);
    gpu_fail(pl, now, p, device);
    return -1;
}

void cupace_pipeline_kernel_start(struct cupace_pipeline *pl, uint64_t now, uint32_t id,
                                  unsigned device, uint64_t prep_ns, uint64_t kernel_ns)
{
    struct cupace_part *p = &pl->parts[id];

    assert(p->state == CUPACE_PART_GPU && !p->in_kernel);
    account(pl, now);
    p->in_kernel = 1;
    p->prep_ns = prep_ns;
    p->kernel_ns = kernel_ns;
    if (pl->device_kernels[device]++ == 0)
        pl->busy_devices++;
    p->released = 1;
    release(pl, pl->jobs[p->job].release);
    notify(pl, now);
}

static void kernel_stop(struct cupace_pipeline *pl, struct cupace_part *p, unsigned device)
{
    p->in_kernel = 0;
    if (--pl->device_kernels[device] == 0)
        pl->busy_devices--;
}

int cupace_pipeline_kernel_end(struct cupace_pipeline *pl, uint64_t now, uint32_t id,
                               unsigned device)
{
    struct cupace_part *p = &pl->parts[id];

    assert(p->state == CUPACE_PART_GPU && p->in_kernel);
    account(pl, now);
    kernel_stop(pl, p, device);
    if (p->fail != CUPACE_FAIL_KERNEL)
        return 0;                   /* no signal changed: no update */
    gpu_fail(pl, now, p, device);
    return -1;
}

int cupace_pipeline_gpu_done(struct cupace_pipeline *pl, uint64_t now, uint32_t id,
                             unsigned device, uint64_t epilogue_ns)
{
    struct cupace_part *p = &pl->parts[id];

    assert(p->state == CUPACE_PART_GPU && !p->in_kernel);
    account(pl, now);
    if (p->fail == CUPACE_FAIL_EPILOGUE) {
        gpu_fail(pl, now, p, device);
        return -1;
    }
    pl->gpu_busy--;
    pl->device_holders[device]--;
    /* time before done, so that a reader never sees a completion without it */
    pl->gpu_ns_total = cupace_sat_add(pl->gpu_ns_total, now - p->t_stage);
    pl->gpu_device_ns_total = cupace_sat_add(pl->gpu_device_ns_total, p->kernel_ns);
    pl->gpu_done++;
    pl->bound_byte_ns += (cupace_acc)(p->synth_drawn_ns + p->prep_ns) * pl->jobs[p->job].part_mem +
                         (cupace_acc)(p->kernel_ns + epilogue_ns) *
                             (pl->jobs[p->job].part_mem - pl->jobs[p->job].release);
    finish_part(pl, now, p, 0);
    notify(pl, now);
    return 0;
}

uint64_t cupace_pipeline_prep_ns(const struct cupace_pipeline *pl, uint64_t now, uint32_t part)
{
    return cupace_workload_prep_ns(&pl->cfg->workload, now, pl->parts[part].prep_draw);
}

uint64_t cupace_pipeline_kernel_ns(const struct cupace_pipeline *pl, uint64_t now, uint32_t part,
                                   unsigned device)
{
    const struct cupace_part *p = &pl->parts[part];

    return cupace_workload_kernel_ns(&pl->cfg->workload, now, pl->jobs[p->job].kernel_ns,
                                     p->kernel_draw, device, cupace_pipeline_contended(pl, device));
}

uint64_t cupace_pipeline_epilogue_ns(const struct cupace_pipeline *pl, uint64_t now, uint32_t part)
{
    return cupace_workload_epilogue_ns(&pl->cfg->workload, now, pl->parts[part].epilogue_draw);
}

size_t cupace_pipeline_synth_collect(struct cupace_pipeline *pl, struct cupace_ps *ps, uint64_t now,
                                     int scheduled, void (*each)(void *ctx, uint32_t id, int rc),
                                     void *ctx)
{
    size_t n = 0;
    uint32_t id;

    /* pop_due takes what ps finds finished (ties within half a ns), the
     * earliest first; the scheduled one is taken first whatever it finds */
    for (int first = scheduled && ps->n; first || cupace_ps_pop_due(ps, now, &id) == 0; first = 0) {
        int rc;

        if (first)
            id = cupace_ps_pop(ps, now);
        rc = cupace_pipeline_synth_end(pl, now, id);
        if (each)
            each(ctx, id, rc);
        n++;
    }
    return n;
}

void cupace_pipeline_abort(struct cupace_pipeline *pl, uint64_t now, uint32_t id, unsigned device)
{
    struct cupace_part *p = &pl->parts[id];

    account(pl, now);
    switch (p->state) {
    case CUPACE_PART_SYNTH:
        pl->in_synthesis--;
        break;
    case CUPACE_PART_GPU:
        if (p->in_kernel)
            kernel_stop(pl, p, device);
        pl->gpu_busy--;
        pl->device_holders[device]--;
        break;
    default:
        return;                     /* waiting: see abort_waiting; finished: nothing to do */
    }
    finish_part(pl, now, p, 1);
    notify(pl, now);
}

uint64_t cupace_pipeline_abort_waiting(struct cupace_pipeline *pl, uint64_t now)
{
    uint64_t n = 0;

    account(pl, now);
    while (pl->q_head < pl->q_tail) {
        struct cupace_part *p = &pl->parts[pl->gpuq[pl->q_head++]];
        pl->waiting--;
        finish_part(pl, now, p, 1);
        n++;
    }
    if (n)
        notify(pl, now);
    return n;
}

void cupace_pipeline_signals(const struct cupace_pipeline *pl, uint64_t now,
                             struct cupace_signals *s)
{
    s->now_ns = now;
    s->num_devices = pl->ndevices;
    s->num_gpu_workers = pl->nworkers;
    s->pending = cupace_pipeline_pending(pl);
    s->dispatched = pl->dispatched;
    s->in_synthesis = pl->in_synthesis;
    s->synth_done = pl->synth_done;
    s->synth_ns_total = pl->synth_ns_total;
    s->waiting = pl->waiting;
    s->gpu_busy_workers = pl->gpu_busy;
    s->gpu_done = pl->gpu_done;
    s->gpu_ns_total = pl->gpu_ns_total;
    s->gpu_device_ns_total = pl->gpu_device_ns_total;
    s->failed = pl->failed;
    s->mem_reserved = pl->mem_reserved;
    s->mem_budget = pl->mem_budget;
}

int cupace_pipeline_sane(const struct cupace_pipeline *pl)
{
    return pl->dispatched == pl->in_synthesis + pl->waiting + pl->gpu_busy + pl->gpu_done +
                                 pl->failed &&
           pl->dispatched == pl->next_dispatch &&
           pl->mem_reserved <= pl->mem_budget &&
           pl->in_synthesis <= pl->synth_slots &&
           pl->gpu_busy <= pl->nworkers &&
           pl->waiting == (uint64_t)(pl->q_tail - pl->q_head) &&
           pl->next_dispatch <= pl->arrived_end && pl->arrived_end <= pl->nparts &&
           pl->busy_devices <= pl->ndevices &&
           pl->jobs_completed + pl->jobs_failed <= pl->jobs_arrived;
}

int cupace_pipeline_sane_full(const struct cupace_pipeline *pl)
{
    uint64_t count[CUPACE_PART_FAILED + 1] = { 0 };
    uint64_t held = 0;

    if (!cupace_pipeline_sane(pl))
        return 0;
    for (uint32_t i = 0; i < pl->nparts; i++) {
        const struct cupace_part *p = &pl->parts[i];
        if (p->state > CUPACE_PART_FAILED)
            return 0;
        count[p->state]++;
        held += mem_held(pl, p);
        if ((i < pl->next_dispatch) != (p->state != CUPACE_PART_PENDING))
            return 0;               /* the job queue is the range [next_dispatch, arrived_end) */
    }
    return held == pl->mem_reserved &&
           count[CUPACE_PART_SYNTH] == pl->in_synthesis &&
           count[CUPACE_PART_WAITING] == pl->waiting &&
           count[CUPACE_PART_GPU] == pl->gpu_busy &&
           count[CUPACE_PART_DONE] == pl->gpu_done &&
           count[CUPACE_PART_FAILED] == pl->failed;
}
