/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Test-only controller: writes hostile bytes into every buffer it is lent
 * (quotes, backslashes, control characters, a terminal escape, invalid and
 * overlong UTF-8, a surrogate), fills them to the last byte without a NUL,
 * claims more than it was given, and with `init_overrun` or
 * `describe_overrun` writes past the length.  With `fail = yes` its init
 * fails with such a message.  The host
 * must stay whole and its reports must parse. */
#include <string.h>
#include "cupace/pacer.h"
struct st { int fail, init_overrun, describe_overrun; };
static const char bad[] = "q\"b\\n\n\r\t\x1b[31mred\x01\x7f\xc0\xaf\xed\xa0\x80\xf5\xff\xe2\x82 \xc2\x85";
static void fill(char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = bad[i % (sizeof bad - 1)];
}
static int i_(void *s, const struct cupace_params *p, char *e, size_t n)
{
    struct st *st = s;
    if (p->get_bool(p->ctx, "fail", 0, &st->fail) < 0 ||
        p->get_bool(p->ctx, "init_overrun", 0, &st->init_overrun) < 0 ||
        p->get_bool(p->ctx, "describe_overrun", 0, &st->describe_overrun) < 0)
        return -1;
    if (!st->fail && !st->init_overrun)
        return 0;
    fill(e, n + (st->init_overrun ? 16 : 0));
    return st->fail ? -1 : 0;
}
static void u_(void *s, const struct cupace_signals *g) { (void)s; (void)g; }
static uint64_t v_(void *s, const struct cupace_signals *g) { (void)s; (void)g; return 0; }
static int d_(void *s, char *buf, size_t len)
{
    fill(buf, len + (((struct st *)s)->describe_overrun ? 16 : 0));
    return (int)len * 10;
}
const struct cupace_pacer cupace_pacer_entry = {
    .abi = CUPACE_PACER_ABI, .size = sizeof(struct cupace_pacer), .name = "hostile",
    .summary = "test-only: hostile bytes \x1b[2J in every buffer", .state_size = sizeof(struct st),
    .init = i_, .update = u_, .interval_ns = v_, .describe = d_,
};
