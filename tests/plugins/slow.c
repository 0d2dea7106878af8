/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Test-only controller: no pacing, but each interval call sleeps for
 * `sleep_us` of real time, so that a simulation lasts long enough to be
 * interrupted from outside (a controller must never do this). */
#define _POSIX_C_SOURCE 200809L
#include <time.h>
#include "cupace/pacer.h"
struct st { uint64_t us; };
static int i_(void *s, const struct cupace_params *p, char *e, size_t n)
{
    (void)e; (void)n;
    return p->get_u64(p->ctx, "sleep_us", 1000, &((struct st *)s)->us);
}
static void u_(void *s, const struct cupace_signals *g) { (void)s; (void)g; }
static uint64_t v_(void *s, const struct cupace_signals *g)
{
    uint64_t us = ((struct st *)s)->us;
    struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };
    (void)g;
    nanosleep(&ts, NULL);
    return 0;
}
const struct cupace_pacer cupace_pacer_entry = {
    .abi = CUPACE_PACER_ABI, .size = sizeof(struct cupace_pacer), .name = "slow",
    .summary = "test-only: sleeps in every interval call", .state_size = sizeof(struct st),
    .init = i_, .update = u_, .interval_ns = v_,
};
