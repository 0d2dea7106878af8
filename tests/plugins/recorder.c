/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Test-only controller: greedy, and checks the contract's promises on every
 * call (monotonic clock, cumulative counters, the accounting identity).  A
 * broken promise makes interval_ns hold forever, which the tests see as a
 * stall.  describe() reports the counts. */
#include <stdio.h>
#include "cupace/pacer.h"
struct st { uint64_t updates, calls, last_now, last_dispatched, last_done, broken; int key_value_ok; };
static int i_(void *s, const struct cupace_params *p, char *e, size_t n) { (void)s; (void)p; (void)e; (void)n; return 0; }
static void u_(void *s, const struct cupace_signals *g)
{
    struct st *t = s;
    t->updates++;
    if (g->now_ns < t->last_now || g->dispatched < t->last_dispatched || g->gpu_done < t->last_done ||
        g->dispatched != g->in_synthesis + g->waiting + g->gpu_busy_workers + g->gpu_done + g->failed ||
        g->mem_reserved > g->mem_budget)
        t->broken++;
    t->last_now = g->now_ns; t->last_dispatched = g->dispatched; t->last_done = g->gpu_done;
}
static uint64_t v_(void *s, const struct cupace_signals *g) { struct st *t = s; (void)g; t->calls++; return t->broken ? CUPACE_PACE_HOLD : 0; }
static int d_(void *s, char *b, size_t n) { struct st *t = s; return snprintf(b, n, "updates=%llu calls=%llu broken=%llu", (unsigned long long)t->updates, (unsigned long long)t->calls, (unsigned long long)t->broken); }
const struct cupace_pacer cupace_pacer_entry = {
    .abi = CUPACE_PACER_ABI, .size = sizeof(struct cupace_pacer), .name = "recorder",
    .summary = "test-only: greedy, checks the signal contract", .state_size = sizeof(struct st),
    .init = i_, .update = u_, .interval_ns = v_, .describe = d_,
};
