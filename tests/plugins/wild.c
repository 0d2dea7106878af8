/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Test-only controller: intervals drawn at random from ordinary and
 * extreme values (0, 1 ns, a second, an hour, 2^61..2^63 ns, 2^64 - 2,
 * CUPACE_PACE_HOLD), from its own `seed`.  The host must stay exact, or
 * stop at its horizon, whatever a controller asks for. */
#include "cupace/pacer.h"
struct st { uint64_t x; };
static const uint64_t table[] = {
    0, 0, 0, 1, 1000, 1000000000ULL, 3600000000000ULL,
    1ULL << 61, 1ULL << 62, (1ULL << 62) + 1, 1ULL << 63, UINT64_MAX - 1, CUPACE_PACE_HOLD,
};
static int i_(void *s, const struct cupace_params *p, char *e, size_t n)
{
    (void)e; (void)n;
    return p->get_u64(p->ctx, "seed", 1, &((struct st *)s)->x);
}
static void u_(void *s, const struct cupace_signals *g) { (void)s; (void)g; }
static uint64_t v_(void *s, const struct cupace_signals *g)
{
    struct st *st = s;
    (void)g;
    st->x = st->x * 6364136223846793005ULL + 1442695040888963407ULL;
    return table[(st->x >> 33) % (sizeof table / sizeof table[0])];
}
const struct cupace_pacer cupace_pacer_entry = {
    .abi = CUPACE_PACER_ABI, .size = sizeof(struct cupace_pacer), .name = "wild",
    .summary = "test-only: random and extreme intervals", .state_size = sizeof(struct st),
    .init = i_, .update = u_, .interval_ns = v_,
};
