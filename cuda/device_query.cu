/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * device_query.cu -- asks the CUDA runtime how many devices answer.
 *
 * The first unit of the CUDA backend: compiled by nvcc through libtool and
 * linked into the engine, so the CUDA build path is proven on machines
 * without a GPU (where it answers with CUDA's own error string).
 */
#include <cuda_runtime.h>
#include <stdio.h>

extern "C" int cupace_cuda_device_count(char *why, size_t len)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);

    if (e != cudaSuccess) {
        snprintf(why, len, "%s", cudaGetErrorString(e));
        return -1;
    }
    if (n == 0)
        snprintf(why, len, "no CUDA device");
    return n;
}

extern "C" int cupace_cuda_device_name(int dev, char *buf, size_t len)
{
    cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceProperties(&prop, dev);

    if (e != cudaSuccess) {
        snprintf(buf, len, "%s", cudaGetErrorString(e));
        return -1;
    }
    snprintf(buf, len, "%s (sm_%d%d, %.0f GiB)", prop.name, prop.major, prop.minor,
             (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
    return 0;
}
