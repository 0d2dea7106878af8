/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * seeds.c -- many seeds, many controllers, many threads (see seeds.h).
 */
#include "config.h"
#include "seeds.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pacer_host.h"
#include "sim.h"

struct seed_run {
    struct cupace_config *cfg;
    const char *const *labels;
    size_t npacers, total;
    struct cupace_result *res;
    pthread_mutex_t lock;            /* guards next, the config's key marks, and the error */
    size_t next;
    size_t failed_at;                /* the lowest item that failed, total if none */
    struct cupace_err err;
};

/* Runs item i: controller i % npacers on seed index i / npacers. */
static void run_item(struct seed_run *sr, size_t i)
{
    struct cupace_config cfg;
    struct cupace_pacer_instance inst;
    struct cupace_run_opts opts = { 0 };
    struct cupace_err err;
    int rc;

    pthread_mutex_lock(&sr->lock);
    cfg = *sr->cfg;                  /* a shallow copy: the simulator only reads it */
    rc = cupace_pacer_instance_open(&inst, sr->cfg, sr->labels[i % sr->npacers], &err);
    pthread_mutex_unlock(&sr->lock);
    cfg.engine.seed = sr->cfg->engine.seed + i / sr->npacers;
    if (rc == 0) {
        rc = cupace_simulate(&cfg, &inst, &opts, &sr->res[i], &err);
        pthread_mutex_lock(&sr->lock);
        cupace_pacer_instance_destroy(&inst);
        pthread_mutex_unlock(&sr->lock);
    }
    if (rc < 0) {
        pthread_mutex_lock(&sr->lock);
        if (i < sr->failed_at) {
            sr->failed_at = i;
            sr->err = err;
        }
        pthread_mutex_unlock(&sr->lock);
    }
}

static void *worker(void *arg)
{
    struct seed_run *sr = arg;

    for (;;) {
        size_t i;
        pthread_mutex_lock(&sr->lock);
        i = sr->next < sr->total && sr->failed_at == sr->total ? sr->next++ : sr->total;
        pthread_mutex_unlock(&sr->lock);
        if (i == sr->total)
            return NULL;
        run_item(sr, i);
    }
}

int cupace_run_seeds(struct cupace_config *cfg, const char *const *labels, size_t npacers,
                     size_t nseeds, unsigned jobs, struct cupace_result *res,
                     struct cupace_err *err)
{
    struct seed_run sr;
    pthread_t *tid;
    unsigned started = 0;

    memset(&sr, 0, sizeof sr);
    sr.cfg = cfg;
    sr.labels = labels;
    sr.npacers = npacers;
    sr.total = sr.failed_at = npacers * nseeds;
    sr.res = res;
    if (jobs < 1)
        jobs = 1;
    if (jobs > sr.total)
        jobs = (unsigned)(sr.total ? sr.total : 1);
    tid = calloc(jobs, sizeof *tid);
    if (!tid)
        return cupace_err_set(err, "out of memory");
    pthread_mutex_init(&sr.lock, NULL);
    /* the calling thread works too; the others are helpers */
    for (unsigned t = 1; t < jobs; t++)
        if (pthread_create(&tid[t], NULL, worker, &sr) == 0)
            started = t;
        else
            break;
    worker(&sr);
    for (unsigned t = 1; t <= started; t++)
        pthread_join(tid[t], NULL);
    pthread_mutex_destroy(&sr.lock);
    free(tid);
    if (sr.failed_at < sr.total) {
        if (err)
            *err = sr.err;
        return -1;
    }
    return 0;
}

static double ratio(double a, double b)
{
    return b != 0 ? a / b : NAN;
}

/* A run that stalled ended where it stopped, with its work undone, and
 * one that broke an invariant measured nothing sound: their makespan (0
 * for a controller that held from the start) and memory are no figures
 * of the controller, and a mean with them in would rank it best. */
static int whole(const struct cupace_result *r)
{
    return !r->stalled && r->invariants_ok;
}

void cupace_seeds_summarize(const struct cupace_result *res, size_t nseeds, size_t npacers,
                            size_t baseline, struct cupace_seed_summary *out)
{
    double *v = malloc(5 * (nseeds ? nseeds : 1) * sizeof *v);

    for (size_t p = 0; p < npacers; p++) {
        out[p].left_out = 0;
        if (!v) {
            struct cupace_ci none = { NAN, NAN, NAN, 0 };
            out[p].makespan = out[p].p50 = out[p].p99 = out[p].mem = out[p].mem_over_bound = none;
            continue;
        }
        for (size_t s = 0; s < nseeds; s++) {
            const struct cupace_result *r = CUPACE_SEED_RESULT(res, npacers, s, p);
            const struct cupace_result *b = CUPACE_SEED_RESULT(res, npacers, s, baseline);

            if (!whole(r) || !whole(b)) {
                for (size_t m = 0; m < 5; m++)
                    v[m * nseeds + s] = NAN;
                out[p].left_out++;
                continue;
            }
            v[0 * nseeds + s] = ratio(r->makespan_s, b->makespan_s);
            v[1 * nseeds + s] = ratio(r->job_latency.p50, b->job_latency.p50);
            v[2 * nseeds + s] = ratio(r->job_latency.p99, b->job_latency.p99);
            v[3 * nseeds + s] = ratio(r->mem_mean, b->mem_mean);
            v[4 * nseeds + s] = ratio(r->mem_mean, r->mem_bound);
        }
        out[p].makespan = cupace_ci95(v, nseeds);
        out[p].p50 = cupace_ci95(v + nseeds, nseeds);
        out[p].p99 = cupace_ci95(v + 2 * nseeds, nseeds);
        out[p].mem = cupace_ci95(v + 3 * nseeds, nseeds);
        out[p].mem_over_bound = cupace_ci95(v + 4 * nseeds, nseeds);
    }
    free(v);
}
