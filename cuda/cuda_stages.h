/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * cuda_stages.h -- the CUDA stage set (DESIGN §9): `backend = cuda`.
 *
 * Synthesis acts out the model's CPU time as the emulated stages do; the
 * GPU phases do real device work through a struct cupace_cuda_ops (the
 * runtime, or a test double):
 *  - init, on the starting thread: checks the devices, allocates per
 *    device a pinned host pool and a device buffer per worker (once: no
 *    allocation on the hot path), and calibrates the kernel on each device
 *    with CUDA events;
 *  - worker_setup, on each GPU worker's thread: binds it to its device and
 *    gives it a stream and two events of its own;
 *  - prep copies `transfer` bytes host->device on the worker's stream;
 *    kernel runs chains of Montgomery multiplications (mont.h) sized by
 *    the model's kernel time through the calibration, timed by events
 *    (reported to the engine as the partition's device time); epilogue
 *    copies a sample of the result back and, with verify, checks it
 *    against the CPU reference.  Prep and epilogue then act out what is
 *    left of the model's time for their phase.
 * Keys (through the params object): transfer (bytes, default 16 MiB),
 * verify (default yes), device_ids ("0,2"), workers_per_device.
 */
#ifndef CUPACE_CUDA_STAGES_H
#define CUPACE_CUDA_STAGES_H

#include <stddef.h>

#include "cupace/stage.h"
#include "cuda_ops.h"

/* The stage table; its init uses the real runtime. */
extern const struct cupace_stages cupace_cuda_stages;

/* The init of cupace_cuda_stages with a given ops table: a test's own
 * table wraps it to run the stages on a double. */
int cupace_cuda_stages_init(void *state, const struct cupace_cuda_ops *ops,
                            const struct cupace_params *p, const struct cupace_stage_host *host,
                            struct cupace_stage_info *info, char *err, size_t errlen);

/* The calibration of every device as a JSON array (for the report):
 * [{"device": 0, "ordinal": N, "name": "...", "ns_per_step": X,
 *   "launch_ns": Y, "elements": N, "lost": "..."}].  Returns the length
 * written, or -1 when it does not fit. */
int cupace_cuda_stages_report(const void *state, char *buf, size_t len);

#endif
