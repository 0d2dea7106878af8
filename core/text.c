/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * text.c -- making text from outside safe to show.  See text.h.
 */
#include "config.h"
#include "text.h"

#include <string.h>

#define GUARD_BYTE 0xA5

size_t cupace_utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n;
    unsigned cp;

    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, cp = c & 0x07;
    else
        return 0;                   /* a continuation byte, C0/C1 (overlong) or F5..FF */
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;               /* NUL included: a sequence cut short */
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;                   /* overlong, past Unicode, or a surrogate */
    return n;
}

size_t cupace_text_plain(char *s)
{
    unsigned char *p = (unsigned char *)s;
    size_t changed = 0;

    while (*p) {
        size_t n = cupace_utf8_len(p);

        if (n == 0) {
            *p++ = '?';
            changed++;
        } else if (n == 1 && (*p < 0x20 || *p == 0x7F)) {
            *p++ = ' ';
            changed++;
        } else if (n == 2 && p[0] == 0xC2 && p[1] < 0xA0) {
            p[0] = ' ';             /* a C1 control, U+0080..U+009F: two spaces */
            p[1] = ' ';
            p += 2;
            changed += 2;
        } else {
            p += n;
        }
    }
    return changed;
}

void cupace_lend(struct cupace_lent *l, size_t n)
{
    memset(l->buf, 0, n);
    memset(l->buf + n, GUARD_BYTE, CUPACE_LENT_GUARD);
}

int cupace_take_back(struct cupace_lent *l, size_t n)
{
    for (size_t i = n; i < n + CUPACE_LENT_GUARD; i++)
        if ((unsigned char)l->buf[i] != GUARD_BYTE)
            return -1;
    l->buf[n - 1] = '\0';
    cupace_text_plain(l->buf);
    return 0;
}
