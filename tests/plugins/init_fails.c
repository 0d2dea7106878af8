/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Test-only controller: init refuses with a reason. */
#include <stdio.h>
#include "cupace/pacer.h"
static int i_(void *s, const struct cupace_params *p, char *e, size_t n) { (void)s; (void)p; snprintf(e, n, "no GPU budget configured"); return -1; }
static void u_(void *s, const struct cupace_signals *g) { (void)s; (void)g; }
static uint64_t v_(void *s, const struct cupace_signals *g) { (void)s; (void)g; return 0; }
const struct cupace_pacer cupace_pacer_entry = {
    .abi = CUPACE_PACER_ABI, .size = sizeof(struct cupace_pacer), .name = "init_fails",
    .init = i_, .update = u_, .interval_ns = v_,
};
