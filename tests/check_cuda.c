/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* check_cuda.c -- the CUDA workers' host side (cuda/cuda_stages.c) on the
 * test double of the CUDA runtime (cuda_double.h), in real time: the phases
 * in order on each worker's own stream, event times as the device time,
 * calibration from events, nothing allocated once the run is set up, an
 * injected launch failure failing its partition, a sticky error retiring
 * one device while the other goes on, and every device lost ending the run. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_double.h"
#include "cuda_stages.h"
#include "mont.h"
#include "pacer_host.h"
#include "realtime.h"
#include "result.h"
#include "testutil.h"

#define NS_PER_STEP 1000.0          /* the double's device speed */
#define LAUNCH_NS 5000.0
#define KERNEL_NS 2000000ULL        /* the model's kernel: 2 ms of device time */

/* ---- the stages on the double, with keys of our own --------------------- */

static struct {
    uint64_t devices, wpd, transfer;
    const char *ids;
} keys;

static const char *k_get(void *ctx, const char *key)
{
    (void)ctx;
    return strcmp(key, "device_ids") == 0 ? keys.ids : NULL;
}

static int k_f64(void *ctx, const char *key, double def, double *out)
{
    (void)ctx, (void)key;
    *out = def;
    return 0;
}

static int k_u64(void *ctx, const char *key, uint64_t def, uint64_t *out)
{
    (void)ctx;
    *out = strcmp(key, "devices") == 0 ? keys.devices :
           strcmp(key, "workers_per_device") == 0 ? keys.wpd :
           strcmp(key, "transfer") == 0 ? keys.transfer : def;
    return 0;
}

static int k_bool(void *ctx, const char *key, int def, int *out)
{
    (void)ctx, (void)key;
    *out = def;                     /* verify = yes */
    return 0;
}

static const struct cupace_params params = {
    .get = k_get, .get_f64 = k_f64, .get_ns = k_u64, .get_u64 = k_u64, .get_bool = k_bool,
};

static void *last_state;            /* for the calibration report */

static int dbl_init(void *state, const struct cupace_params *p, const struct cupace_stage_host *host,
                    struct cupace_stage_info *info, char *err, size_t errlen)
{
    last_state = state;
    return cupace_cuda_stages_init(state, &dbl_ops, p, host, info, err, errlen);
}

static char calibration[1024];

static void dbl_fini(void *state)
{
    if (cupace_cuda_stages_report(state, calibration, sizeof calibration) < 0)
        calibration[0] = '\0';
    cupace_cuda_stages.fini(state);
}

static struct cupace_stages stages_on_double(void)
{
    struct cupace_stages s = cupace_cuda_stages;

    s.init = dbl_init;
    s.fini = dbl_fini;
    return s;
}

/* Runs JOBS x PARTS partitions of 2 ms kernels on DEVICES x 2 workers. */
#define JOBS 4
#define PARTS 5
static int run(unsigned devices, struct cupace_result *r, struct cupace_err *err)
{
    char ini[512];
    struct cupace_config *cfg;
    struct cupace_pacer_path path;
    struct cupace_pacer_instance inst;
    struct cupace_stages s = stages_on_double();
    struct cupace_run_opts opts = { .stages = &s, .stage_params = &params };
    int rc;

    keys.devices = devices;
    keys.wpd = 2;
    keys.transfer = 64 * 8;
    keys.ids = devices == 2 ? "1,0" : "";   /* ordinals other than indices */
    snprintf(ini, sizeof ini, "[engine]\nmode = realtime\ndevices = %u\nworkers_per_device = 2\n"
             "synth_workers = 4\nmemory_budget = 1GiB\n[workload]\njobs = %d\n"
             "partitions_per_job = %d\npartition_memory = 16MiB\nsynth_time = 1ms\n"
             "synth_cv = 0\ngpu_cv = 0\ngpu_prep = 0\ngpu_kernel = 2ms\ngpu_epilogue = 0\n",
             devices, JOBS, PARTS);
    cfg = tu_config_with_plugins(ini);
    memset(r, 0, sizeof *r);
    cupace_pacer_path_init(&path, cfg);
    ck_assert_msg(cupace_pacer_instance_create(&inst, cfg, &path, "fixed", err) == 0, "%s", err->msg);
    cupace_pacer_path_free(&path);
    rc = cupace_realtime(cfg, &inst, &opts, r, err);
    cupace_pacer_instance_destroy(&inst);
    cupace_config_free(cfg);
    return rc;
}

/* Launches a device's calibration makes on the double: a clean one-device
 * run's launches less one per partition (a 2 ms kernel is one launch). */
static long calibration_launches(void)
{
    struct cupace_result r;
    struct cupace_err err;

    dbl_reset(1, NS_PER_STEP, LAUNCH_NS);
    ck_assert_msg(run(1, &r, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(r.completed, JOBS * PARTS);
    return dbl.launches - JOBS * PARTS;
}

/* ---- the tests ----------------------------------------------------------- */

/* The kernel's arithmetic: Montgomery multiplication against 128-bit %. */
START_TEST(montgomery_matches_plain_arithmetic)
{
    __extension__ typedef unsigned __int128 u128;
    uint64_t r = (uint64_t)(((u128)1 << 64) % CUPACE_MONT_P);

    ck_assert_uint_eq(CUPACE_MONT_P * CUPACE_MONT_PINV, UINT64_MAX);
    for (uint64_t i = 0; i < 20000; i++) {
        uint64_t a = i < 4 ? CUPACE_MONT_P - 1 - i : cupace_mont_input(7, i);
        uint64_t b = i < 4 ? CUPACE_MONT_P - 1 : cupace_mont_input(9, i);
        uint64_t ar = (uint64_t)(((u128)a * r) % CUPACE_MONT_P);

        ck_assert_uint_eq(cupace_mont_mul(ar, b), (uint64_t)(((u128)a * b) % CUPACE_MONT_P));
    }
}
END_TEST

/* Each worker's calls go to its own stream on its own device, in the order
 * h2d, then launches, then d2h, one round per partition; event times
 * are the device time; the calibration is the double's speed. */
START_TEST(phases_in_order_on_the_workers_stream)
{
    struct cupace_result r;
    struct cupace_err err;
    long streams[8] = { 0 };
    pthread_t threads[8];
    int phase[8] = { 0 }, rounds[8] = { 0 }, nstreams = 0, total = 0, ndev = 0;
    long streams_at_start;

    dbl_reset(2, NS_PER_STEP, LAUNCH_NS);
    ck_assert_msg(run(2, &r, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(r.completed, JOBS * PARTS);
    ck_assert(r.invariants_ok);
    /* the calibration's streams are made first, one per device, in init;
     * the workers' come after */
    streams_at_start = 2;
    ck_assert_int_eq(dbl.streams, streams_at_start + 4);
    for (long i = 0; i < dbl.nlog; i++) {
        const struct dbl_call *c = &dbl.log[i];
        int k;

        if (c->op == DBL_EVSYNC || c->op == DBL_OTHER)
            continue;
        ck_assert_int_eq(c->device, c->stream_device);      /* the thread on the stream's device */
        if (c->stream <= streams_at_start)
            continue;                                       /* the calibration's */
        for (k = 0; k < nstreams && streams[k] != c->stream; k++)
            ;
        if (k == nstreams) {
            ck_assert_int_lt(nstreams, 8);
            streams[nstreams] = c->stream;
            threads[nstreams++] = c->thread;
        }
        ck_assert(pthread_equal(threads[k], c->thread));   /* a stream is one worker's */
        /* 0: before h2d; 1: copied in; 2: launched; then d2h ends a round */
        switch (c->op) {
        case DBL_H2D:
            ck_assert_msg(phase[k] == 0, "h2d in phase %d", phase[k]);
            phase[k] = 1;
            break;
        case DBL_LAUNCH:
            ck_assert_msg(phase[k] == 1 || phase[k] == 2, "launch in phase %d", phase[k]);
            phase[k] = 2;
            break;
        case DBL_D2H:
            ck_assert_msg(phase[k] == 2, "d2h in phase %d", phase[k]);
            phase[k] = 0;
            rounds[k]++;
            break;
        default:
            break;
        }
    }
    ck_assert_int_eq(nstreams, 4);      /* one per worker */
    for (int k = 0; k < nstreams; k++) {
        ck_assert_int_eq(phase[k], 0);
        total += rounds[k];
    }
    ck_assert_int_eq(total, JOBS * PARTS);
    /* device time from the events: 2 ms of device clock per kernel, exactly */
    ck_assert_int_eq(r.device_clock, 1);
    ck_assert_msg(fabs(r.gpu_device_s - JOBS * PARTS * (double)KERNEL_NS / 1e9) < 1e-6,
                  "device time %.9f s", r.gpu_device_s);
    /* the calibration recovers the double's speed (event times are floats in ms) */
    for (const char *at = calibration; (at = strstr(at, "\"ns_per_step\": ")); at++) {
        char *end;
        double step = strtod(at + 15, &end), launch;

        ck_assert_msg(fabs(step - NS_PER_STEP) < 0.001 * NS_PER_STEP, "%s", calibration);
        ck_assert_ptr_nonnull(strstr(end, "\"launch_ns\": "));
        launch = strtod(strstr(end, "\"launch_ns\": ") + 13, NULL);
        ck_assert_msg(fabs(launch - LAUNCH_NS) < 0.01 * LAUNCH_NS, "%s", calibration);
        ndev++;
    }
    ck_assert_int_eq(ndev, 2);
}
END_TEST

/* Every buffer, stream and event is made before the first partition:
 * the pool and device buffers in init, a stream and two events per worker
 * in its set-up; all of them are released. */
START_TEST(no_allocation_after_start)
{
    struct cupace_result r;
    struct cupace_err err;

    dbl_reset(1, NS_PER_STEP, LAUNCH_NS);
    ck_assert_msg(run(1, &r, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(r.completed, JOBS * PARTS);
    ck_assert_int_eq(dbl.host_allocs, 1);           /* one pinned pool per device */
    ck_assert_int_eq(dbl.dev_allocs, 2);            /* one device buffer per worker */
    ck_assert_int_eq(dbl.streams, 1 + 2);           /* calibration, then one per worker */
    ck_assert_int_eq(dbl.events, 2 + 4);
    ck_assert_int_eq(dbl.host_frees, dbl.host_allocs);
    ck_assert_int_eq(dbl.dev_frees, dbl.dev_allocs);
    ck_assert_int_eq(dbl.streams_destroyed, dbl.streams);
    ck_assert_int_eq(dbl.events_destroyed, dbl.events);
}
END_TEST

/* An injected launch failure fails that partition with CUDA's message;
 * every other partition completes. */
START_TEST(launch_failure_fails_the_partition)
{
    struct cupace_result r;
    struct cupace_err err;

    long calib = calibration_launches();

    dbl_reset(1, NS_PER_STEP, LAUNCH_NS);
    dbl.fail_launch_at = calib + 7;
    ck_assert_msg(run(1, &r, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(r.failed, 1);
    ck_assert_uint_eq(r.stage_failures, 1);
    ck_assert_uint_eq(r.completed, JOBS * PARTS - 1);
    ck_assert_msg(strstr(r.stage_failure, "kernel: CUDA device 0: launch: double: the launch failed (injected)"),
                  "%s", r.stage_failure);
    ck_assert_str_eq(r.devices_lost, "");
    ck_assert(r.invariants_ok);
}
END_TEST

/* Whether WHY is PREFIX then one of a CUDA worker's phases (cuda_stages.c). */
static int lost_in_a_phase(const char *why, const char *prefix)
{
    static const char *const phases[] = { "host to device copy: ", "launch: ", "device to host copy: " };
    size_t n = strlen(prefix);

    if (strncmp(why, prefix, n) != 0)
        return 0;
    for (size_t i = 0; i < sizeof phases / sizeof phases[0]; i++)
        if (strncmp(why + n, phases[i], strlen(phases[i])) == 0)
            return 1;
    return 0;
}

/* A sticky error on one device retires its workers; the other device does
 * the rest, and the lost device is not called again once the stages know
 * it is lost.  Its other worker may be inside a phase when the device goes:
 * that phase's next call fails (it is how that worker learns of the loss,
 * and it marks the device lost itself before starting another phase), so
 * at most workers_per_device - 1 calls land on the lost device, never
 * more.  Which one of those a run sees depends on the threads' timing. */
START_TEST(sticky_error_retires_one_device)
{
    struct cupace_result r;
    struct cupace_err err;
    long calib = calibration_launches();

    dbl_reset(2, NS_PER_STEP, LAUNCH_NS);
    dbl.lose_device = 1;
    dbl.lose_at_launch = calib + 3;
    ck_assert_msg(run(2, &r, &err) == 0, "%s", err.msg);
    ck_assert(r.invariants_ok);
    ck_assert_int_eq(dbl.lost[1], 1);
    /* ordinal 1 is the run's device 0 (device_ids = 1,0).  The reason is
     * the first call to fail on it: the launch that lost it, or the other
     * worker's phase call if that worker reports first (TSan's timing saw
     * its host to device copy) */
    ck_assert_msg(lost_in_a_phase(r.devices_lost, "GPU device 0 lost: CUDA device 1: ") &&
                  strstr(r.devices_lost, "illegal memory access"), "%s", r.devices_lost);
    ck_assert_int_eq(r.interrupted, 0);
    ck_assert_uint_ge(r.failed, 1);
    ck_assert_uint_le(r.failed, 2);                 /* at most what its two workers held */
    ck_assert_uint_eq(r.completed + r.failed, JOBS * PARTS);
    ck_assert_int_le(dbl.calls_after_loss, 1);     /* workers_per_device - 1: see above */
    ck_assert_int_gt(dbl.launches_on[0], calib + (JOBS * PARTS) / 2);
}
END_TEST

/* With every device lost, the run ends failed, with the reason. */
START_TEST(losing_every_device_ends_the_run)
{
    struct cupace_result r;
    struct cupace_err err;
    long calib = calibration_launches();

    dbl_reset(1, NS_PER_STEP, LAUNCH_NS);
    dbl.lose_device = 0;
    dbl.lose_at_launch = calib + 2;
    ck_assert_msg(run(1, &r, &err) == 0, "%s", err.msg);
    ck_assert_msg(strstr(r.devices_lost, "every GPU device was lost"), "%s", r.devices_lost);
    ck_assert_int_eq(r.interrupted, 0);
    ck_assert_uint_lt(r.completed, JOBS * PARTS);
    ck_assert(r.invariants_ok);
}
END_TEST

/* A device that is not there is refused at init, naming it. */
START_TEST(missing_device_is_named)
{
    struct cupace_result r;
    struct cupace_err err;

    dbl_reset(1, NS_PER_STEP, LAUNCH_NS);
    /* two devices asked for as ordinals 1,0 on a one-device double */
    ck_assert_int_lt(run(2, &r, &err), 0);
    ck_assert_msg(strstr(err.msg, "device 1 is not there (1 CUDA device answers)"), "%s", err.msg);
}
END_TEST

/* A wrong result is caught by verify and fails the partition. */
START_TEST(verify_catches_a_wrong_result)
{
    struct cupace_result r;
    struct cupace_err err;

    dbl_reset(1, NS_PER_STEP, LAUNCH_NS);
    dbl.corrupt = 1;
    ck_assert_msg(run(1, &r, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(r.failed, JOBS * PARTS);
    ck_assert_msg(strstr(r.stage_failure, "verify: element 0"), "%s", r.stage_failure);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cuda");
    TCase *tc = tcase_create("double");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, montgomery_matches_plain_arithmetic);
    tcase_add_test(tc, phases_in_order_on_the_workers_stream);
    tcase_add_test(tc, no_allocation_after_start);
    tcase_add_test(tc, launch_failure_fails_the_partition);
    tcase_add_test(tc, sticky_error_retires_one_device);
    tcase_add_test(tc, losing_every_device_ends_the_run);
    tcase_add_test(tc, missing_device_is_named);
    tcase_add_test(tc, verify_catches_a_wrong_result);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
