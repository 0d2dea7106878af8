/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * cuda_runtime.cu -- the real struct cupace_cuda_ops: thin C wrappers of
 * the CUDA runtime calls the CUDA stages make, and the kernel with the
 * small C function that launches it (cuda_ops.h).  Nothing here decides
 * anything; the orchestration is cuda_stages.c's, tested on a double.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

extern "C" {
#include "cuda_ops.h"
}
#include "mont.h"

/* Each thread walks a grid-stride over the elements: x <- chain(x, c_i, steps). */
__global__ static void mont_chain_kernel(uint64_t *data, size_t n, uint64_t steps)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        data[i] = cupace_mont_chain(data[i], cupace_mont_const(i), steps);
}

static int rt_launch(void *stream, uint64_t *data, size_t n, uint64_t steps)
{
    unsigned threads = 256;
    size_t blocks = (n + threads - 1) / threads;

    if (blocks > 65535)
        blocks = 65535;
    if (blocks == 0)
        blocks = 1;
    mont_chain_kernel<<<(unsigned)blocks, threads, 0, (cudaStream_t)stream>>>(data, n, steps);
    return (int)cudaGetLastError();
}

static int rt_device_count(int *n) { return (int)cudaGetDeviceCount(n); }
static int rt_set_device(int d) { return (int)cudaSetDevice(d); }

static int rt_device_name(int d, char *buf, size_t len)
{
    cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceProperties(&prop, d);

    if (e == cudaSuccess)
        snprintf(buf, len, "%s (sm_%d%d)", prop.name, prop.major, prop.minor);
    return (int)e;
}

static int rt_stream_create(void **s)
{
    cudaStream_t st;
    cudaError_t e = cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);

    *s = e == cudaSuccess ? (void *)st : NULL;
    return (int)e;
}

static int rt_stream_destroy(void *s) { return (int)cudaStreamDestroy((cudaStream_t)s); }
static int rt_stream_sync(void *s) { return (int)cudaStreamSynchronize((cudaStream_t)s); }

static int rt_event_create(void **ev)
{
    cudaEvent_t e0;
    /* blocking: a worker waiting for its kernel leaves the CPU to the syntheses */
    cudaError_t e = cudaEventCreateWithFlags(&e0, cudaEventBlockingSync);

    *ev = e == cudaSuccess ? (void *)e0 : NULL;
    return (int)e;
}

static int rt_event_destroy(void *ev) { return (int)cudaEventDestroy((cudaEvent_t)ev); }

static int rt_event_record(void *ev, void *s)
{
    return (int)cudaEventRecord((cudaEvent_t)ev, (cudaStream_t)s);
}

static int rt_event_sync(void *ev) { return (int)cudaEventSynchronize((cudaEvent_t)ev); }

static int rt_event_elapsed_ms(float *ms, void *a, void *b)
{
    return (int)cudaEventElapsedTime(ms, (cudaEvent_t)a, (cudaEvent_t)b);
}

static int rt_host_alloc(void **p, size_t bytes)
{
    return (int)cudaHostAlloc(p, bytes, cudaHostAllocPortable);
}

static int rt_host_free(void *p) { return (int)cudaFreeHost(p); }
static int rt_dev_alloc(void **p, size_t bytes) { return (int)cudaMalloc(p, bytes); }
static int rt_dev_free(void *p) { return (int)cudaFree(p); }

static int rt_copy_h2d(void *dst, const void *src, size_t bytes, void *s)
{
    return (int)cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, (cudaStream_t)s);
}

static int rt_copy_d2h(void *dst, const void *src, size_t bytes, void *s)
{
    return (int)cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, (cudaStream_t)s);
}

static const char *rt_error_string(int e) { return cudaGetErrorString((cudaError_t)e); }

/* The errors after which the context is unusable (CUDA's "sticky" ones). */
static int rt_sticky(int e)
{
    switch ((cudaError_t)e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorDevicesUnavailable:
        return 1;
    default:
        return 0;
    }
}

static const struct cupace_cuda_ops runtime_ops = {
    rt_device_count, rt_set_device, rt_device_name,
    rt_stream_create, rt_stream_destroy, rt_stream_sync,
    rt_event_create, rt_event_destroy, rt_event_record, rt_event_sync, rt_event_elapsed_ms,
    rt_host_alloc, rt_host_free, rt_dev_alloc, rt_dev_free,
    rt_copy_h2d, rt_copy_d2h, rt_launch, rt_error_string, rt_sticky,
};

extern "C" const struct cupace_cuda_ops *cupace_cuda_runtime_ops(void)
{
    return &runtime_ops;
}
