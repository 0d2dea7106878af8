/*
 * backend.h -- the worker interface: what a GPU worker does with a
 * partition, phase by phase.
 *
 * The real-time engine owns the threads, the queues, the device lock and
 * the accounting; a backend only runs a phase.  The emulated backend sleeps
 * the model's duration; the CUDA backend (cuda/) will launch real kernels in
 * the same three calls.  A phase returns 0, or -1 if the run was cancelled
 * while it ran (the engine then accounts the partition as failed).
 */
#ifndef CUPACE_BACKEND_H
#define CUPACE_BACKEND_H

#include <stdint.h>

enum cupace_phase { CUPACE_PHASE_PREP, CUPACE_PHASE_KERNEL, CUPACE_PHASE_EPILOGUE };

struct cupace_rt;

struct cupace_backend_ops {
    const char *name;
    /* Runs `phase` of partition `part` on `device`; `ns` is the workload
     * model's duration for it (already scaled by time_scale). Required. */
    int (*run_phase)(struct cupace_rt *rt, unsigned device, enum cupace_phase phase, uint32_t part,
                     uint64_t ns);
};

/* The emulated backend: real sleeps of the model's durations. */
extern const struct cupace_backend_ops cupace_backend_emulated;

/* Sleeps ns on the engine's clock; returns -1 early if the run is cancelled. */
int cupace_rt_sleep(struct cupace_rt *rt, uint64_t ns);

#endif
