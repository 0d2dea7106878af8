/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * lines.c -- reading text input one line at a time, of any length.
 *
 * Bytes are taken one at a time with getc_unlocked (the stream is ours
 * alone), which is what lets a NUL byte be seen at all: fgets() would hide
 * it, and getline() would read an input without newlines until memory ran
 * out.  The buffer grows by doubling through grow.c.
 */
#define _GNU_SOURCE 1
#include "config.h"
#include "lines.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "grow.h"

int cupace_lines_open(struct cupace_lines *r, const char *path, uint64_t limit, const char **why)
{
    struct stat st;

    memset(r, 0, sizeof *r);
    r->limit = limit;
    r->fp = fopen(path, "r");
    if (!r->fp) {
        *why = strerror(errno);
        return -1;
    }
    if (fstat(fileno(r->fp), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(r->fp);
        r->fp = NULL;
        *why = "is a folder, not a file";
        return -1;
    }
    return 0;
}

static int grow_buf(struct cupace_lines *r)
{
    char *more = cupace_grow(r->buf, &r->cap, 1, 256);

    if (!more)
        return -1;
    r->buf = more;
    return 0;
}

int cupace_lines_next(struct cupace_lines *r, size_t *len, const char **why)
{
    size_t n = 0;
    int c;

    r->line++;
    for (;;) {
        c = getc_unlocked(r->fp);
        if (c == EOF)
            break;
        if (r->limit && ++r->total > r->limit) {
            *why = "the input is longer than its limit (an input that never ends?)";
            return -1;
        }
        if (c == '\n')
            break;
        if (c == '\0') {
            *why = "a NUL byte: this is not a text file";
            return -1;
        }
        if (n + 2 > r->cap && grow_buf(r) < 0) {
            *why = "out of memory for the line";
            return -1;
        }
        r->buf[n++] = (char)c;
    }
    if (ferror(r->fp)) {
        *why = errno == EISDIR ? "is a folder, not a file" : "cannot be read";
        return -1;
    }
    if (c == EOF && n == 0) {
        r->line--;
        return 0;
    }
    if (n + 1 > r->cap && grow_buf(r) < 0) {
        *why = "out of memory for the line";
        return -1;
    }
    if (n && r->buf[n - 1] == '\r')
        n--;                            /* a DOS line end */
    r->buf[n] = '\0';
    *len = n;
    return 1;
}

void cupace_lines_close(struct cupace_lines *r)
{
    if (r->fp)
        fclose(r->fp);
    free(r->buf);
    memset(r, 0, sizeof *r);
}
