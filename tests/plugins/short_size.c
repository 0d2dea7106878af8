/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Test-only controller: claims a struct smaller than the engine's. */
#include "cupace/pacer.h"
static int i_(void *s, const struct cupace_params *p, char *e, size_t n) { (void)s; (void)p; (void)e; (void)n; return 0; }
static void u_(void *s, const struct cupace_signals *g) { (void)s; (void)g; }
static uint64_t v_(void *s, const struct cupace_signals *g) { (void)s; (void)g; return 0; }
const struct cupace_pacer cupace_pacer_entry = {
    .abi = CUPACE_PACER_ABI, .size = 24, .name = "short_size",
    .init = i_, .update = u_, .interval_ns = v_,
};
