/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * cuda_double.c -- the test double of cuda/cuda_ops.h (see cuda_double.h).
 */
#include "config.h"
#include "cuda_double.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mont.h"

struct dbl dbl = { .lock = PTHREAD_MUTEX_INITIALIZER };

static _Thread_local int bound = -1;

struct dbl_stream {
    int device;
    long serial;
};

struct dbl_event {
    int device;
    double t_ns;
    int recorded;
};

void dbl_reset(int ndevices, double ns_per_step, double launch_ns)
{
    pthread_mutex_lock(&dbl.lock);
    memset((char *)&dbl + sizeof dbl.lock, 0, sizeof dbl - sizeof dbl.lock);
    pthread_mutex_unlock(&dbl.lock);
    dbl.ndevices = ndevices;
    dbl.lose_device = -1;
    for (int d = 0; d < DBL_MAX_DEV; d++) {
        dbl.ns_per_step[d] = ns_per_step;
        dbl.launch_ns[d] = launch_ns;
    }
}

static int stream_device(const void *stream)
{
    return stream ? ((const struct dbl_stream *)stream)->device : -1;
}

/* Logs a call; the lock is held.  A call on a lost device fails. */
static int note(enum dbl_op op, const void *stream)
{
    if (dbl.nlog < DBL_MAX_LOG)
        dbl.log[dbl.nlog++] = (struct dbl_call){
            op, bound, stream ? ((const struct dbl_stream *)stream)->serial : 0,
            stream_device(stream), pthread_self() };
    if (bound >= 0 && dbl.lost[bound]) {
        dbl.calls_after_loss++;
        return DBL_ERR_LOST;
    }
    return 0;
}

static int locked(enum dbl_op op, const void *stream)
{
    int e;

    pthread_mutex_lock(&dbl.lock);
    e = note(op, stream);
    pthread_mutex_unlock(&dbl.lock);
    return e;
}

static int d_device_count(int *n)
{
    *n = dbl.ndevices;
    return dbl.ndevices > 0 ? 0 : DBL_ERR_NODEV;
}

static int d_set_device(int d)
{
    if (d < 0 || d >= dbl.ndevices)
        return DBL_ERR_NODEV;
    bound = d;
    return 0;
}

static int d_device_name(int d, char *buf, size_t len)
{
    snprintf(buf, len, "double %d", d);
    return 0;
}

static int d_stream_create(void **s)
{
    struct dbl_stream *st = malloc(sizeof *st);

    if (!st)
        return DBL_ERR_NODEV;
    st->device = bound;
    pthread_mutex_lock(&dbl.lock);
    st->serial = ++dbl.streams;
    pthread_mutex_unlock(&dbl.lock);
    *s = st;
    return 0;
}

static int d_stream_destroy(void *s)
{
    pthread_mutex_lock(&dbl.lock);
    dbl.streams_destroyed++;
    pthread_mutex_unlock(&dbl.lock);
    free(s);
    return 0;
}

static int d_stream_sync(void *s)
{
    return locked(DBL_SYNC, s);
}

static int d_event_create(void **ev)
{
    struct dbl_event *e = calloc(1, sizeof *e);

    if (!e)
        return DBL_ERR_NODEV;
    e->device = bound;
    pthread_mutex_lock(&dbl.lock);
    dbl.events++;
    pthread_mutex_unlock(&dbl.lock);
    *ev = e;
    return 0;
}

static int d_event_destroy(void *ev)
{
    pthread_mutex_lock(&dbl.lock);
    dbl.events_destroyed++;
    pthread_mutex_unlock(&dbl.lock);
    free(ev);
    return 0;
}

static int d_event_record(void *ev, void *s)
{
    struct dbl_event *e = ev;
    int rc;

    pthread_mutex_lock(&dbl.lock);
    rc = note(DBL_RECORD, s);
    if (!rc) {
        e->t_ns = dbl.clock_ns[stream_device(s)];
        e->recorded = 1;
    }
    pthread_mutex_unlock(&dbl.lock);
    return rc;
}

static int d_event_sync(void *ev)
{
    (void)ev;
    return locked(DBL_EVSYNC, NULL);
}

static int d_event_elapsed_ms(float *ms, void *a, void *b)
{
    const struct dbl_event *x = a, *y = b;

    if (!x->recorded || !y->recorded)
        return DBL_ERR_NODEV;
    *ms = (float)((y->t_ns - x->t_ns) / 1e6);
    return 0;
}

static int d_host_alloc(void **p, size_t bytes)
{
    pthread_mutex_lock(&dbl.lock);
    dbl.host_allocs++;
    pthread_mutex_unlock(&dbl.lock);
    *p = calloc(1, bytes);
    return *p ? 0 : DBL_ERR_NODEV;
}

static int d_host_free(void *p)
{
    pthread_mutex_lock(&dbl.lock);
    dbl.host_frees++;
    pthread_mutex_unlock(&dbl.lock);
    free(p);
    return 0;
}

static int d_dev_alloc(void **p, size_t bytes)
{
    pthread_mutex_lock(&dbl.lock);
    dbl.dev_allocs++;
    pthread_mutex_unlock(&dbl.lock);
    *p = calloc(1, bytes);
    return *p ? 0 : DBL_ERR_NODEV;
}

static int d_dev_free(void *p)
{
    pthread_mutex_lock(&dbl.lock);
    dbl.dev_frees++;
    pthread_mutex_unlock(&dbl.lock);
    free(p);
    return 0;
}

static int copy(enum dbl_op op, void *dst, const void *src, size_t bytes, void *s)
{
    int rc = locked(op, s);

    if (!rc)
        memcpy(dst, src, bytes);
    return rc;
}

static int d_copy_h2d(void *dst, const void *src, size_t bytes, void *s)
{
    return copy(DBL_H2D, dst, src, bytes, s);
}

static int d_copy_d2h(void *dst, const void *src, size_t bytes, void *s)
{
    return copy(DBL_D2H, dst, src, bytes, s);
}

static int d_launch(void *s, uint64_t *data, size_t n, uint64_t steps)
{
    int dev = stream_device(s), rc;

    pthread_mutex_lock(&dbl.lock);
    rc = note(DBL_LAUNCH, s);
    if (!rc) {
        dbl.launches++;
        dbl.launches_on[dev]++;
        if (dbl.fail_launch_at && dbl.launches == dbl.fail_launch_at)
            rc = DBL_ERR_LAUNCH;
        else if (dev == dbl.lose_device && dbl.launches_on[dev] == dbl.lose_at_launch) {
            dbl.lost[dev] = 1;
            rc = DBL_ERR_LOST;
        } else {
            dbl.clock_ns[dev] += dbl.launch_ns[dev] + (double)steps * dbl.ns_per_step[dev];
        }
    }
    pthread_mutex_unlock(&dbl.lock);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++)      /* the stream is the worker's alone: no lock */
        data[i] = cupace_mont_chain(data[i], cupace_mont_const(i), steps);
    if (dbl.corrupt)
        data[0] ^= 1;
    return 0;
}

static const char *d_error_string(int e)
{
    switch (e) {
    case DBL_ERR_LAUNCH: return "double: the launch failed (injected)";
    case DBL_ERR_LOST: return "double: an illegal memory access was encountered (injected, sticky)";
    case DBL_ERR_NODEV: return "double: no CUDA-capable device is detected";
    default: return "double: unknown error";
    }
}

static int d_sticky(int e)
{
    return e == DBL_ERR_LOST;
}

const struct cupace_cuda_ops dbl_ops = {
    .device_count = d_device_count, .set_device = d_set_device, .device_name = d_device_name,
    .stream_create = d_stream_create, .stream_destroy = d_stream_destroy,
    .stream_sync = d_stream_sync, .event_create = d_event_create,
    .event_destroy = d_event_destroy, .event_record = d_event_record, .event_sync = d_event_sync,
    .event_elapsed_ms = d_event_elapsed_ms, .host_alloc = d_host_alloc, .host_free = d_host_free,
    .dev_alloc = d_dev_alloc, .dev_free = d_dev_free, .copy_h2d = d_copy_h2d,
    .copy_d2h = d_copy_d2h, .launch = d_launch, .error_string = d_error_string,
    .sticky = d_sticky,
};
