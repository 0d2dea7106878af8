/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * cuda_ops.h -- the CUDA runtime calls the CUDA stages make, behind a table.
 *
 * cuda_runtime.cu fills it with the real runtime (and the kernel launch);
 * the tests fill it with a double that runs on the CPU and injects errors.
 * The stages (cuda_stages.c) are plain C and see CUDA only through here:
 * handles are opaque pointers, and every call returns 0 or the runtime's
 * error code, which error_string names in CUDA's own words.
 *
 * Threads: set_device binds the calling thread, as cudaSetDevice does;
 * every other call acts on the device the calling thread is bound to.
 */
#ifndef CUPACE_CUDA_OPS_H
#define CUPACE_CUDA_OPS_H

#include <stddef.h>
#include <stdint.h>

struct cupace_cuda_ops {
    int (*device_count)(int *n);
    int (*set_device)(int ordinal);
    int (*device_name)(int ordinal, char *buf, size_t len);
    int (*stream_create)(void **stream);
    int (*stream_destroy)(void *stream);
    int (*stream_sync)(void *stream);
    int (*event_create)(void **ev);
    int (*event_destroy)(void *ev);
    int (*event_record)(void *ev, void *stream);
    int (*event_sync)(void *ev);
    int (*event_elapsed_ms)(float *ms, void *start, void *end);
    int (*host_alloc)(void **p, size_t bytes);      /* pinned (cudaHostAlloc) */
    int (*host_free)(void *p);
    int (*dev_alloc)(void **p, size_t bytes);
    int (*dev_free)(void *p);
    int (*copy_h2d)(void *dst, const void *src, size_t bytes, void *stream);
    int (*copy_d2h)(void *dst, const void *src, size_t bytes, void *stream);
    /* The kernel (mont.h): each of the n elements of data takes `steps`
     * steps of its chain, in place, on stream. */
    int (*launch)(void *stream, uint64_t *data, size_t n, uint64_t steps);
    const char *(*error_string)(int e);
    /* 1 when e leaves the device unusable for this process (a sticky error:
     * every later call on it fails). */
    int (*sticky)(int e);
};

/* The real runtime; NULL in a build without CUDA. */
const struct cupace_cuda_ops *cupace_cuda_runtime_ops(void);

#endif
