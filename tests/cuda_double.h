/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * cuda_double.h -- a test double of the CUDA runtime calls the CUDA stages
 * make (cuda/cuda_ops.h), in C, on the CPU.
 *
 * Each device has a virtual clock: a launch advances it by launch_ns +
 * steps x ns_per_step and an event records it, so event times are exact
 * and known to the test (and unlike the host's wall clock).  The kernel
 * computes the real chains (mont.h) on the CPU, so verify passes.  Every
 * call is logged with the device the calling thread is bound to, so a test
 * can check the order of the phases on each stream.  Errors are injected:
 * a failing launch (once), and a sticky error that loses a device.
 */
#ifndef CUPACE_CUDA_DOUBLE_H
#define CUPACE_CUDA_DOUBLE_H

#include <pthread.h>
#include <stdint.h>

#include "cuda_ops.h"

#define DBL_MAX_DEV 4
#define DBL_MAX_LOG 65536

enum dbl_op { DBL_H2D, DBL_D2H, DBL_LAUNCH, DBL_RECORD, DBL_SYNC, DBL_EVSYNC, DBL_OTHER };

struct dbl_call {
    enum dbl_op op;
    int device;                     /* the calling thread's, -1 if unbound */
    long stream;                    /* the stream's serial number (addresses are reused) */
    int stream_device;              /* the device the stream was made on */
    pthread_t thread;
};

/* Error codes the double returns (error_string names them). */
enum { DBL_OK, DBL_ERR_LAUNCH = 1001, DBL_ERR_LOST = 1002, DBL_ERR_NODEV = 1003 };

struct dbl {
    /* set by the test before a run */
    int ndevices;
    double ns_per_step[DBL_MAX_DEV], launch_ns[DBL_MAX_DEV];
    long fail_launch_at;            /* the nth launch (1-based, all devices) fails; 0: none */
    int lose_device;                /* -1: none; else that device is lost at its... */
    long lose_at_launch;            /* ...nth launch (1-based, on that device) */
    int corrupt;                    /* the kernel adds 1 to element 0: verify must catch it */

    /* what happened */
    pthread_mutex_t lock;
    double clock_ns[DBL_MAX_DEV];
    long launches, launches_on[DBL_MAX_DEV], calls_after_loss;
    int lost[DBL_MAX_DEV];
    long host_allocs, dev_allocs, streams, events, host_frees, dev_frees, streams_destroyed,
        events_destroyed;
    struct dbl_call log[DBL_MAX_LOG];
    long nlog;
};

extern struct dbl dbl;
extern const struct cupace_cuda_ops dbl_ops;

/* Resets dbl to ndevices devices with the given speed and nothing injected. */
void dbl_reset(int ndevices, double ns_per_step, double launch_ns);


#endif
