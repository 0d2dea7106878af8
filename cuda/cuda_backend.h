/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * cuda_backend.h -- the host side of the CUDA backend.
 *
 * For now: whether a device answers.  The backend's workers (real kernels)
 * plug into the engine's worker interface in a later step.
 */
#ifndef CUPACE_CUDA_BACKEND_H
#define CUPACE_CUDA_BACKEND_H

#include <stddef.h>

/* Number of CUDA devices (> 0), or 0 / -1 with CUDA's own reason in why. */
int cupace_cuda_probe(char *why, size_t len);

/* "NAME (sm_XY, N GiB)" of device dev, or -1 with the reason in buf. */
int cupace_cuda_describe(int dev, char *buf, size_t len);

#endif
