/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * cuda_backend.c -- host side of the CUDA backend (device discovery).
 */
#include "config.h"
#include "cuda_backend.h"

int cupace_cuda_device_count(char *why, size_t len);
int cupace_cuda_device_name(int dev, char *buf, size_t len);

int cupace_cuda_probe(char *why, size_t len)
{
    return cupace_cuda_device_count(why, len);
}

int cupace_cuda_describe(int dev, char *buf, size_t len)
{
    return cupace_cuda_device_name(dev, buf, len);
}
