/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* error.c -- building error messages once, where the context is known. */
#include "config.h"
#include "error.h"
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A message is one line of plain text: the values it quotes come from
 * files, flags and plugins, and a CR or an escape sequence in one would
 * rewrite the operator's terminal (a CR in a value read as "got 'fixed'"
 * over what came before).  A tab reads as a space, any other control
 * character (C1's included: U+009B is a CSI) and any byte of no valid
 * UTF-8 sequence as '?', so that the line is text a terminal, a log or a
 * JSON string takes as it is. */
void cupace_one_line(char *s)
{
    unsigned char *p = (unsigned char *)s;

    while (*p) {
        size_t n = cupace_utf8_len(p);

        if (*p == '\t') {
            *p++ = ' ';
        } else if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f))) {
            *p++ = '?';
        } else if (n == 2 && p[0] == 0xC2 && p[1] < 0xA0) {
            *p++ = '?';
            *p++ = '?';
        } else {
            p += n;
        }
    }
}

int cupace_err_set(struct cupace_err *err, const char *fmt, ...)
{
    va_list ap;

    if (!err)
        return -1;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    cupace_one_line(err->msg);
    return -1;
}

int cupace_err_prefix(struct cupace_err *err, const char *fmt, ...)
{
    char prefix[4096], old[sizeof err->msg];
    size_t n, m;
    va_list ap;

    if (!err)
        return -1;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    /* the message is cut only past 8 KiB: keep the prefix, then what fits */
    n = strlen(prefix);
    memcpy(err->msg, prefix, n);
    memcpy(err->msg + n, ": ", 2);
    n += 2;
    m = strlen(old);
    if (m > sizeof err->msg - 1 - n)
        m = sizeof err->msg - 1 - n;
    memcpy(err->msg + n, old, m);
    err->msg[n + m] = '\0';
    cupace_one_line(err->msg);
    return -1;
}
