/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * cupace/pacer.h -- the pacing-controller SDK.
 *
 * A controller is a shared object that exports one symbol,
 * `cupace_pacer_entry`, a `const struct cupace_pacer`.  The engine loads it
 * with dlopen(RTLD_NOW|RTLD_LOCAL), checks `abi` and `size`, checks that the
 * required ops are present, allocates `state_size` zeroed bytes per instance
 * and calls `init`.  Plugins never link against the engine: everything they
 * need is in this header.
 *
 * Rules of the contract:
 *  - The engine calls a controller from one thread only; a controller needs no
 *    locks and must not read clocks: time is `now_ns`, so the same controller
 *    runs in real time and in simulation.
 *  - `update` is called after every event that changes the signals (arrival,
 *    dispatch, synthesis end, a worker taking a partition, kernel start, GPU
 *    completion, failure).
 *  - `interval_ns` is the wanted spacing between consecutive dispatches.  The
 *    engine dispatches when now >= last_dispatch + interval (saturating), and
 *    re-evaluates after every event.  0 means "as fast as the memory budget and
 *    the synthesis slots allow"; CUPACE_PACE_HOLD means "dispatch nothing until
 *    the next event".
 *  - Keys of the controller's INI section that `init` never asked for are a
 *    configuration error naming the key, so typos cannot pass silently.
 */
#ifndef CUPACE_PACER_H
#define CUPACE_PACER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUPACE_PACER_ABI 1
#define CUPACE_PACE_HOLD UINT64_MAX   /* interval_ns(): dispatch nothing until the next event */

/* A snapshot the engine takes before each call.  Cumulative counters never
 * decrease; "now" values are the state at now_ns. */
struct cupace_signals {
    uint64_t now_ns;                /* engine clock: monotonic, or virtual in simulation */
    uint32_t num_devices;
    uint32_t num_gpu_workers;       /* devices x workers_per_device */
    uint64_t pending;               /* partitions arrived, not yet dispatched */
    uint64_t dispatched;            /* cumulative */
    uint64_t in_synthesis;          /* now */
    uint64_t synth_done;            /* cumulative, successful syntheses */
    uint64_t synth_ns_total;        /* cumulative synthesis time of successful syntheses */
    uint64_t waiting;               /* synthesized, in the GPU queue, now */
    uint64_t gpu_busy_workers;      /* workers holding a partition, now */
    uint64_t gpu_done;              /* cumulative successful GPU completions */
    uint64_t gpu_ns_total;          /* cumulative worker processing time of those completions */
    uint64_t gpu_device_ns_total;   /* cumulative device-exclusive (kernel) time of those completions */
    uint64_t failed;                /* cumulative failed partitions, any stage */
    uint64_t mem_reserved;          /* bytes reserved now */
    uint64_t mem_budget;            /* bytes */
};

/* The controller's own INI section, [pacer.LABEL].  Valid during init only;
 * copy what you keep.  get_* store the parsed value (or `def` when the key is
 * absent) in *out and return 0, or return -1 when the value is malformed (the
 * engine then reports the file, line and key).  Asking for a key marks it as
 * known, also when it is absent. */
struct cupace_params {
    void *ctx;
    const char *(*get)(void *ctx, const char *key);                    /* NULL if absent */
    int (*get_f64)(void *ctx, const char *key, double def, double *out);
    int (*get_ns)(void *ctx, const char *key, uint64_t def, uint64_t *out);  /* "250ms", "3s" */
    int (*get_u64)(void *ctx, const char *key, uint64_t def, uint64_t *out);
    int (*get_bool)(void *ctx, const char *key, int def, int *out);    /* yes/no, true/false, on/off, 1/0 */
};

struct cupace_pacer {
    uint32_t abi;                   /* CUPACE_PACER_ABI */
    uint32_t size;                  /* sizeof(struct cupace_pacer) */
    const char *name;               /* required: the plugin's name, a plain identifier */
    const char *summary;            /* one line, shown by `cupace plugins`; may be NULL */
    size_t state_size;              /* private state the host allocates, zeroed, per instance; may be 0 */

    /* Required.  Called once per instance, before any other op.  Read the
     * parameters, set up *state.  Return 0, or -1 with a reason in err. */
    int  (*init)(void *state, const struct cupace_params *p, char *err, size_t errlen);

    /* Required.  Called after every event that changes the signals. */
    void (*update)(void *state, const struct cupace_signals *s);

    /* Required.  The wanted spacing between consecutive dispatches, in ns;
     * 0 = no pacing, CUPACE_PACE_HOLD = wait for the next event. */
    uint64_t (*interval_ns)(void *state, const struct cupace_signals *s);

    /* Optional.  Writes "key=value ..." estimates into buf (NUL-terminated,
     * at most len bytes).  Returns the length written, or -1. */
    int  (*describe)(void *state, char *buf, size_t len);

    /* Optional.  Called once when the instance is destroyed, if init succeeded.
     * The engine frees the state itself. */
    void (*fini)(void *state);
};

/* What a plugin exports:
 *   const struct cupace_pacer cupace_pacer_entry = { .abi = CUPACE_PACER_ABI, ... };
 */
#define CUPACE_PACER_ENTRY_SYMBOL "cupace_pacer_entry"

#ifdef __cplusplus
}
#endif

#endif /* CUPACE_PACER_H */
