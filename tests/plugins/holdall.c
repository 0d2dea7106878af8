/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Test-only controller: dispatches `burst` partitions, then holds forever.
 * The simulator must report the stall, naming the controller. */
#include "cupace/pacer.h"
struct st { uint64_t burst; };
static int i_(void *s, const struct cupace_params *p, char *e, size_t n) { (void)e; (void)n; return p->get_u64(p->ctx, "burst", 0, &((struct st *)s)->burst); }
static void u_(void *s, const struct cupace_signals *g) { (void)s; (void)g; }
static uint64_t v_(void *s, const struct cupace_signals *g) { return g->dispatched < ((struct st *)s)->burst ? 0 : CUPACE_PACE_HOLD; }
static void f_(void *s) { ((struct st *)s)->burst = 0; }
const struct cupace_pacer cupace_pacer_entry = {
    .abi = CUPACE_PACER_ABI, .size = sizeof(struct cupace_pacer), .name = "holdall",
    .summary = "test-only: holds after `burst` dispatches", .state_size = sizeof(struct st),
    .init = i_, .update = u_, .interval_ns = v_, .fini = f_,
};
