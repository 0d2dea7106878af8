/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * cuda_stages.c -- the CUDA stage set (see cuda_stages.h): the host side
 * of the CUDA workers, in plain C over a struct cupace_cuda_ops, so that
 * it builds and is tested without nvcc or a device.
 *
 * Every buffer is made in init: the pinned pool of a device holds one slot
 * per worker (the partition's input, then the result sample), and each
 * worker has a device buffer of `transfer` bytes.  cudaHostAlloc and
 * cudaMalloc serialise in the driver and stall running kernels: the seed's
 * engine called them per partition and measured the stall.
 */
#define _GNU_SOURCE 1
#include "config.h"
#include "cuda_stages.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mont.h"

#define CUDA_DEFAULT_TRANSFER (16u << 20)
#define CUDA_SAMPLE 256             /* result elements copied back */
#define CUDA_VERIFY 2               /* of them, checked against the CPU reference: each
                                       costs the CPU the whole chain, steps long */
#define CUDA_CHUNK_NS 50000000.0    /* a kernel is launched in pieces of about 50 ms,
                                       so that a cancelled run does not wait for it */
#define CUDA_CALIB_NS 20000000.0    /* a calibration measurement lasts at least 20 ms */

struct cuda_device {
    int ordinal;
    char name[128];
    void *pool;                     /* pinned: wpd slots of slot_bytes */
    void **dbufs;                   /* per worker slot: transfer bytes on the device */
    unsigned next_slot;             /* under the state's lock */
    double ns_per_step, launch_ns;  /* the calibration */
    int lost;                       /* under the state's lock */
    char lost_why[256];
};

struct cuda_worker {
    struct cuda_state *st;
    struct cuda_device *dev;
    void *stream, *ev_start, *ev_end;
    uint64_t *input, *result;       /* in the pool: n elements, then CUDA_SAMPLE */
    uint64_t *dbuf;
    uint64_t seed, steps;           /* the partition in flight */
    int set_up;
};

struct cuda_state {
    const struct cupace_cuda_ops *ops;
    const struct cupace_stage_host *host;
    size_t n;                       /* elements per partition: transfer / 8 */
    size_t slot_bytes;
    int verify;
    unsigned ndev, wpd;
    struct cuda_device *devs;
    struct cuda_worker *workers;    /* ndev * wpd */
    pthread_mutex_t lock;
    int locked_init;
};

/* ---- helpers ------------------------------------------------------------ */

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* "what: CUDA's message", -1. */
static int cuda_err(const struct cupace_cuda_ops *ops, int e, const char *what, char *err,
                    size_t errlen)
{
    snprintf(err, errlen, "%s: %s", what, ops->error_string(e));
    return -1;
}

/* A CUDA error in a GPU phase: the partition fails with CUDA's message,
 * and a sticky one retires the device. */
static int phase_err(struct cuda_worker *w, const struct cupace_part_view *v, int e,
                     const char *what, char *err, size_t errlen)
{
    struct cuda_state *st = w->st;
    char where[160];

    snprintf(where, sizeof where, "CUDA device %d: %s", w->dev->ordinal, what);
    cuda_err(st->ops, e, where, err, errlen);
    if (st->ops->sticky(e)) {
        pthread_mutex_lock(&st->lock);
        if (!w->dev->lost) {
            w->dev->lost = 1;
            snprintf(w->dev->lost_why, sizeof w->dev->lost_why, "%s", err);
        }
        pthread_mutex_unlock(&st->lock);
        if (CUPACE_STAGE_HOST_HAS(st->host, retire_device))
            st->host->retire_device(st->host->ctx, v, err);
    }
    return -1;
}

/* A phase on a device lost earlier fails at once, touching nothing. */
static int check_lost(struct cuda_worker *w, const struct cupace_part_view *v, char *err,
                      size_t errlen)
{
    struct cuda_state *st = w->st;
    int lost;

    pthread_mutex_lock(&st->lock);
    lost = w->dev->lost;
    if (lost)
        snprintf(err, errlen, "%s", w->dev->lost_why);
    pthread_mutex_unlock(&st->lock);
    if (lost && CUPACE_STAGE_HOST_HAS(st->host, retire_device))
        st->host->retire_device(st->host->ctx, v, err);
    return lost ? -1 : 0;
}

/* Acts out what is left of the model's ns for a phase begun at t0. */
static int sleep_rest(const struct cupace_part_view *v, uint64_t t0, char *err, size_t errlen)
{
    uint64_t spent = now_ns() - t0;

    if (spent < v->model_ns && v->host->sleep_ns(v->host->ctx, v->model_ns - spent) < 0) {
        snprintf(err, errlen, "cancelled");
        return -1;
    }
    return 0;
}

/* ---- device lists and calibration -------------------------------------- */

/* "0,2" into ordinals; NULL or "" means 0..ndev-1. */
static int parse_ids(const char *s, unsigned ndev, int *out, char *err, size_t errlen)
{
    unsigned i = 0;

    if (!s || !*s) {
        for (i = 0; i < ndev; i++)
            out[i] = (int)i;
        return 0;
    }
    while (*s) {
        char *end;
        unsigned long v = strtoul(s, &end, 10);

        if (end == s || v > 1u << 20 || i >= ndev) {
            snprintf(err, errlen, "device_ids '%s': expected %u device numbers", s, ndev);
            return -1;
        }
        out[i++] = (int)v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') {
            snprintf(err, errlen, "device_ids: unexpected '%c'", *end);
            return -1;
        }
    }
    if (i != ndev) {
        snprintf(err, errlen, "device_ids names %u devices, devices = %u", i, ndev);
        return -1;
    }
    return 0;
}

/* The device time of `steps` steps over n elements of dbuf, in ns. */
static int time_steps(struct cuda_state *st, void *stream, void *e0, void *e1, uint64_t *dbuf,
                      uint64_t steps, double *ns, char *err, size_t errlen)
{
    const struct cupace_cuda_ops *ops = st->ops;
    float ms = 0;
    int e;

    if ((e = ops->event_record(e0, stream)) || (e = ops->launch(stream, dbuf, st->n, steps)) ||
        (e = ops->event_record(e1, stream)) || (e = ops->event_sync(e1)) ||
        (e = ops->event_elapsed_ms(&ms, e0, e1)))
        return cuda_err(ops, e, "calibration", err, errlen);
    *ns = (double)ms * 1e6;
    return 0;
}

/* ns per step and the fixed cost of a launch on this device: the time of s
 * and of 2s steps, with s grown until a measurement lasts CUDA_CALIB_NS. */
static int calibrate(struct cuda_state *st, struct cuda_device *d, char *err, size_t errlen)
{
    const struct cupace_cuda_ops *ops = st->ops;
    void *stream = NULL, *e0 = NULL, *e1 = NULL;
    double t1 = 0, t2 = 0;
    uint64_t s = 16;
    int e, rc = -1;

    if ((e = ops->stream_create(&stream)) || (e = ops->event_create(&e0)) ||
        (e = ops->event_create(&e1))) {
        cuda_err(ops, e, "calibration", err, errlen);
        goto out;
    }
    for (uint64_t i = 0; i < st->n; i++)
        ((uint64_t *)d->pool)[i] = cupace_mont_input(0, i);
    if ((e = ops->copy_h2d(d->dbufs[0], d->pool, st->n * 8, stream)) ||
        (e = ops->stream_sync(stream))) {
        cuda_err(ops, e, "calibration", err, errlen);
        goto out;
    }
    if (time_steps(st, stream, e0, e1, d->dbufs[0], 1, &t1, err, errlen) < 0)   /* warm-up */
        goto out;
    for (;;) {
        if (time_steps(st, stream, e0, e1, d->dbufs[0], s, &t1, err, errlen) < 0)
            goto out;
        if (t1 >= CUDA_CALIB_NS || s >= (1ULL << 40))
            break;
        s *= t1 > 0 && CUDA_CALIB_NS / t1 < 8 ? 2 : 8;
    }
    if (time_steps(st, stream, e0, e1, d->dbufs[0], 2 * s, &t2, err, errlen) < 0)
        goto out;
    d->ns_per_step = (t2 - t1) / (double)s;
    if (d->ns_per_step <= 0)        /* noise: the whole time per step */
        d->ns_per_step = t2 / (double)(2 * s);
    d->launch_ns = t1 - d->ns_per_step * (double)s;
    if (d->launch_ns < 0)
        d->launch_ns = 0;
    if (!(d->ns_per_step > 0)) {
        snprintf(err, errlen, "calibration: device %d timed %llu steps as 0 ns", d->ordinal,
                 (unsigned long long)(2 * s));
        goto out;
    }
    rc = 0;
out:
    if (e1)
        ops->event_destroy(e1);
    if (e0)
        ops->event_destroy(e0);
    if (stream)
        ops->stream_destroy(stream);
    return rc;
}

/* ---- init and fini ---------------------------------------------------- */

static void cuda_fini(void *state);

int cupace_cuda_stages_init(void *state, const struct cupace_cuda_ops *ops,
                            const struct cupace_params *p, const struct cupace_stage_host *host,
                            struct cupace_stage_info *info, char *err, size_t errlen)
{
    struct cuda_state *st = state;
    uint64_t transfer, wpd, ndev_u;
    int count = 0, e, *ids = NULL;
    char what[160];

    st->ops = ops;
    st->host = host;
    info->buffer_bytes = 0;
    if (!ops) {
        snprintf(err, errlen, "this cupace was built without CUDA");
        return -1;
    }
    pthread_mutex_init(&st->lock, NULL);
    st->locked_init = 1;
    if (p->get_u64(p->ctx, "transfer", CUDA_DEFAULT_TRANSFER, &transfer) < 0 ||
        p->get_bool(p->ctx, "verify", 1, &st->verify) < 0 ||
        p->get_u64(p->ctx, "workers_per_device", 2, &wpd) < 0 ||
        p->get_u64(p->ctx, "devices", 1, &ndev_u) < 0) {
        snprintf(err, errlen, "bad [cuda] keys");
        return -1;
    }
    if (transfer < 8 || transfer > (1ULL << 40) || wpd < 1 || wpd > 1024 || ndev_u < 1 ||
        ndev_u > 1024) {
        snprintf(err, errlen, "transfer must be 8 B to 1 TiB (got %llu B)",
                 (unsigned long long)transfer);
        return -1;
    }
    st->n = (size_t)(transfer / 8);
    st->wpd = (unsigned)wpd;
    st->ndev = (unsigned)ndev_u;
    st->slot_bytes = (st->n + CUDA_SAMPLE) * 8;
    if ((e = ops->device_count(&count)))
        return cuda_err(ops, e, "no CUDA device", err, errlen);
    ids = calloc(st->ndev, sizeof *ids);
    st->devs = calloc(st->ndev, sizeof *st->devs);
    st->workers = calloc((size_t)st->ndev * st->wpd, sizeof *st->workers);
    if (!ids || !st->devs || !st->workers) {
        free(ids);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (parse_ids(p->get(p->ctx, "device_ids"), st->ndev, ids, err, errlen) < 0)
        goto fail;
    for (unsigned i = 0; i < st->ndev; i++) {
        struct cuda_device *d = &st->devs[i];

        d->ordinal = ids[i];
        if (ids[i] >= count) {
            snprintf(err, errlen, "device %d is not there (%d CUDA device%s answer%s)", ids[i],
                     count, count == 1 ? "" : "s", count == 1 ? "s" : "");
            goto fail;
        }
        snprintf(what, sizeof what, "device %d", d->ordinal);
        if ((e = ops->set_device(d->ordinal))) {
            cuda_err(ops, e, what, err, errlen);
            goto fail;
        }
        if (ops->device_name(d->ordinal, d->name, sizeof d->name))
            snprintf(d->name, sizeof d->name, "?");
        d->dbufs = calloc(st->wpd, sizeof *d->dbufs);
        if (!d->dbufs) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        snprintf(what, sizeof what, "device %d: cudaHostAlloc of the pinned pool (%zu B)",
                 d->ordinal, st->slot_bytes * st->wpd);
        if ((e = ops->host_alloc(&d->pool, st->slot_bytes * st->wpd))) {
            d->pool = NULL;
            cuda_err(ops, e, what, err, errlen);
            goto fail;
        }
        for (unsigned w = 0; w < st->wpd; w++) {
            snprintf(what, sizeof what, "device %d: cudaMalloc of %zu B", d->ordinal, st->n * 8);
            if ((e = ops->dev_alloc(&d->dbufs[w], st->n * 8))) {
                d->dbufs[w] = NULL;
                cuda_err(ops, e, what, err, errlen);
                goto fail;
            }
        }
        if (calibrate(st, d, err, errlen) < 0)
            goto fail;
    }
    free(ids);
    return 0;
fail:
    free(ids);
    return -1;                      /* fini frees what was made */
}

static int cuda_init(void *state, const struct cupace_params *p, const struct cupace_stage_host *host,
                     struct cupace_stage_info *info, char *err, size_t errlen)
{
    return cupace_cuda_stages_init(state, cupace_cuda_runtime_ops(), p, host, info, err, errlen);
}

static void cuda_fini(void *state)
{
    struct cuda_state *st = state;
    const struct cupace_cuda_ops *ops = st->ops;

    if (st->devs)
        for (unsigned i = 0; i < st->ndev; i++) {
            struct cuda_device *d = &st->devs[i];

            if (d->pool || d->dbufs)
                ops->set_device(d->ordinal);
            for (unsigned w = 0; d->dbufs && w < st->wpd; w++)
                if (d->dbufs[w])
                    ops->dev_free(d->dbufs[w]);
            if (d->pool)
                ops->host_free(d->pool);
            free(d->dbufs);
        }
    free(st->devs);
    free(st->workers);
    if (st->locked_init)
        pthread_mutex_destroy(&st->lock);
}

/* ---- the workers ------------------------------------------------------ */

static int cuda_worker_setup(void *state, uint32_t device, uint32_t worker, void **ws, char *err,
                             size_t errlen)
{
    struct cuda_state *st = state;
    const struct cupace_cuda_ops *ops = st->ops;
    struct cuda_device *d;
    struct cuda_worker *w;
    unsigned slot;
    char what[64];
    int e;

    (void)worker;
    if (device >= st->ndev) {
        snprintf(err, errlen, "device index %u, but %u devices were set up", device, st->ndev);
        return -1;
    }
    d = &st->devs[device];
    pthread_mutex_lock(&st->lock);
    slot = d->next_slot < st->wpd ? d->next_slot++ : st->wpd;
    pthread_mutex_unlock(&st->lock);
    if (slot == st->wpd) {
        snprintf(err, errlen, "more than %u workers on device %d", st->wpd, d->ordinal);
        return -1;
    }
    w = &st->workers[(size_t)device * st->wpd + slot];
    w->st = st;
    w->dev = d;
    w->input = (uint64_t *)((char *)d->pool + (size_t)slot * st->slot_bytes);
    w->result = w->input + st->n;
    w->dbuf = d->dbufs[slot];
    *ws = w;
    snprintf(what, sizeof what, "device %d", d->ordinal);
    if ((e = ops->set_device(d->ordinal)) || (e = ops->stream_create(&w->stream)) ||
        (e = ops->event_create(&w->ev_start)) || (e = ops->event_create(&w->ev_end)))
        return cuda_err(ops, e, what, err, errlen);
    w->set_up = 1;
    return 0;
}

static void cuda_worker_teardown(void *state, void *ws)
{
    struct cuda_worker *w = ws;
    const struct cupace_cuda_ops *ops = ((struct cuda_state *)state)->ops;

    int lost;

    if (!w)
        return;
    pthread_mutex_lock(&w->st->lock);
    lost = w->dev && w->dev->lost;
    pthread_mutex_unlock(&w->st->lock);
    if (w->stream && !lost)         /* a lost device gets no more work, only releases */
        ops->stream_sync(w->stream);
    if (w->ev_end)
        ops->event_destroy(w->ev_end);
    if (w->ev_start)
        ops->event_destroy(w->ev_start);
    if (w->stream)
        ops->stream_destroy(w->stream);
}

/* ---- the phases ------------------------------------------------------- */

static int cuda_synthesize(void *state, const struct cupace_part_view *v, char *err, size_t errlen)
{
    (void)state;
    if (v->host->cpu_work_ns(v->host->ctx, v, v->model_ns) < 0) {
        snprintf(err, errlen, "cancelled");
        return -1;
    }
    return 0;
}

/* The partition's data into the worker's pinned slot, then to the device. */
static int cuda_prep(void *state, const struct cupace_part_view *v, char *err, size_t errlen)
{
    struct cuda_state *st = state;
    struct cuda_worker *w = v->worker_state;
    uint64_t t0 = now_ns();
    int e;

    if (check_lost(w, v, err, errlen) < 0)
        return -1;
    w->seed = v->job * 0x100000001b3ULL + v->index;
    for (size_t i = 0; i < st->n; i++)
        w->input[i] = cupace_mont_input(w->seed, i);
    if ((e = st->ops->copy_h2d(w->dbuf, w->input, st->n * 8, w->stream)) ||
        (e = st->ops->stream_sync(w->stream)))
        return phase_err(w, v, e, "host to device copy", err, errlen);
    return sleep_rest(v, t0, err, errlen);
}

/* The model's kernel time as steps on this device, timed by events. */
static int cuda_kernel(void *state, const struct cupace_part_view *v, char *err, size_t errlen)
{
    struct cuda_state *st = state;
    const struct cupace_cuda_ops *ops = st->ops;
    struct cuda_worker *w = v->worker_state;
    struct cuda_device *d = w->dev;
    double want = (double)v->model_ns - d->launch_ns;
    uint64_t chunk, left;
    float ms = 0;
    int e;

    if (check_lost(w, v, err, errlen) < 0)
        return -1;
    w->steps = want > 0 ? (uint64_t)(want / d->ns_per_step + 0.5) : 0;
    chunk = (uint64_t)(CUDA_CHUNK_NS / d->ns_per_step);
    if (chunk < 1)
        chunk = 1;
    if ((e = ops->event_record(w->ev_start, w->stream)))
        return phase_err(w, v, e, "event", err, errlen);
    for (left = w->steps; left > 0;) {
        uint64_t s = left < chunk ? left : chunk;

        if ((e = ops->launch(w->stream, w->dbuf, st->n, s)))
            return phase_err(w, v, e, "launch", err, errlen);
        left -= s;
        if (left > 0) {
            if ((e = ops->stream_sync(w->stream)))
                return phase_err(w, v, e, "synchronise", err, errlen);
            if (v->host->cancelled(v->host->ctx)) {
                snprintf(err, errlen, "cancelled");
                return -1;
            }
        }
    }
    if ((e = ops->event_record(w->ev_end, w->stream)) || (e = ops->event_sync(w->ev_end)))
        return phase_err(w, v, e, "synchronise", err, errlen);
    if ((e = ops->event_elapsed_ms(&ms, w->ev_start, w->ev_end)))
        return phase_err(w, v, e, "event time", err, errlen);
    if (CUPACE_STAGE_HOST_HAS(v->host, device_time_ns))
        v->host->device_time_ns(v->host->ctx, v, (uint64_t)((double)ms * 1e6 + 0.5));
    return 0;
}

/* A sample of the result back, and checked against the CPU reference. */
static int cuda_epilogue(void *state, const struct cupace_part_view *v, char *err, size_t errlen)
{
    struct cuda_state *st = state;
    struct cuda_worker *w = v->worker_state;
    size_t sample = st->n < CUDA_SAMPLE ? st->n : CUDA_SAMPLE;
    uint64_t t0 = now_ns();
    int e;

    if (check_lost(w, v, err, errlen) < 0)
        return -1;
    if ((e = st->ops->copy_d2h(w->result, w->dbuf, sample * 8, w->stream)) ||
        (e = st->ops->stream_sync(w->stream)))
        return phase_err(w, v, e, "device to host copy", err, errlen);
    for (size_t k = 0; st->verify && k < CUDA_VERIFY && k < sample; k++) {
        size_t i = k * (sample / CUDA_VERIFY ? sample / CUDA_VERIFY : 1);
        uint64_t want = cupace_mont_chain(w->input[i], cupace_mont_const(i), w->steps);

        if (w->result[i] != want) {
            snprintf(err, errlen, "verify: element %zu after %llu steps is %#llx, the CPU "
                     "reference says %#llx", i, (unsigned long long)w->steps,
                     (unsigned long long)w->result[i], (unsigned long long)want);
            return -1;
        }
    }
    return sleep_rest(v, t0, err, errlen);
}

/* ---- the report ------------------------------------------------------- */

int cupace_cuda_stages_report(const void *state, char *buf, size_t len)
{
    const struct cuda_state *st = state;
    size_t at = 0;
    int n;

    n = snprintf(buf, len, "[");
    if (n < 0 || (size_t)n >= len)
        return -1;
    at = (size_t)n;
    for (unsigned i = 0; st->devs && i < st->ndev; i++) {
        const struct cuda_device *d = &st->devs[i];
        char name[128];
        size_t k = 0;

        for (const char *c = d->name; *c && k + 1 < sizeof name; c++)
            if (*c != '"' && *c != '\\' && (unsigned char)*c >= 0x20)
                name[k++] = *c;
        name[k] = '\0';
        n = snprintf(buf + at, len - at, "%s{\"device\": %u, \"ordinal\": %d, \"name\": \"%s\", "
                     "\"elements\": %zu, \"ns_per_step\": %.6g, \"launch_ns\": %.6g, \"lost\": %s}",
                     i ? ", " : "", i, d->ordinal, name, st->n, d->ns_per_step, d->launch_ns,
                     d->lost ? "true" : "false");
        if (n < 0 || (size_t)n >= len - at)
            return -1;
        at += (size_t)n;
    }
    n = snprintf(buf + at, len - at, "]");
    if (n < 0 || (size_t)n >= len - at)
        return -1;
    return (int)(at + (size_t)n);
}

const struct cupace_stages cupace_cuda_stages = {
    .abi = CUPACE_STAGE_ABI,
    .size = sizeof(struct cupace_stages),
    .name = "cuda",
    .summary = "real device work: H2D copy, Montgomery chains sized by calibration, D2H and verify",
    .state_size = sizeof(struct cuda_state),
    .init = cuda_init,
    .fini = cuda_fini,
    .worker_setup = cuda_worker_setup,
    .worker_teardown = cuda_worker_teardown,
    .synthesize = cuda_synthesize,
    .prep = cuda_prep,
    .kernel = cuda_kernel,
    .epilogue = cuda_epilogue,
};

#ifndef HAVE_CUDA
/* Without CUDA the stage table exists (for the tests' double) and its own
 * init says why it cannot run. */
const struct cupace_cuda_ops *cupace_cuda_runtime_ops(void)
{
    return NULL;
}
#endif
