/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * lines.h -- reading text input one line at a time, of any length.
 *
 * The configuration and the trace are read through this reader.  A line may
 * be as long as memory allows: nothing is ever cut or split.  What a line
 * reader cannot be trusted with is refused instead, with a reason: a NUL
 * byte (the input is not text: /dev/zero, a binary file), a read error
 * (a folder), or more than `limit` bytes in all (an input that never ends,
 * such as a pipe fed forever).  The reader counts lines, so that every
 * message can name one.  It does not print.
 */
#ifndef CUPACE_LINES_H
#define CUPACE_LINES_H

#include <stdint.h>
#include <stdio.h>

struct cupace_lines {
    FILE *fp;
    char *buf;                      /* the last line read, NUL-terminated, without its newline */
    size_t cap;
    unsigned line;                  /* its number, from 1 */
    uint64_t total;                 /* bytes read so far */
    uint64_t limit;                 /* refuse input longer than this (0: no limit) */
};

/* Opens PATH for reading.  Returns 0, or -1 with *why a static phrase (a
 * folder is refused here) and errno's text in sys when it is the reason. */
int cupace_lines_open(struct cupace_lines *r, const char *path, uint64_t limit, const char **why);

/* Reads the next line.  Returns 1 with r->buf holding it, 0 at the end of
 * the input, or -1 with *why a static phrase; r->line is then the line at
 * fault. */
int cupace_lines_next(struct cupace_lines *r, size_t *len, const char **why);

void cupace_lines_close(struct cupace_lines *r);

#endif
