/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * text.h -- making text from outside safe to show: controllers' describe()
 * and init() messages, which go to a terminal, a table and a JSON report.
 *
 * A controller is code written by others; what it writes must not be able
 * to move the terminal's cursor, break a line of the table or break the
 * JSON.  This is where such text is made plain: valid UTF-8, no control
 * characters.  Quoting for JSON stays in report.c.
 */
#ifndef CUPACE_TEXT_H
#define CUPACE_TEXT_H

#include <stddef.h>

/* Rewrites S in place: every byte that is not part of a valid UTF-8
 * sequence (overlong forms, surrogates and code points past U+10FFFF
 * included) becomes '?', and every control character (C0, DEL, C1)
 * becomes a space.  Returns the number of bytes changed. */
size_t cupace_text_plain(char *s);

/* The length of the valid UTF-8 sequence at S (1 to 4), or 0 if the bytes
 * there are not one. */
size_t cupace_utf8_len(const unsigned char *s);

/* A buffer lent to a plugin (a controller's init error and describe, a
 * stage's init error): ours, with a guard zone right after the length the
 * plugin is told, so that a plugin that writes past it writes into the
 * guard, where the host sees it, instead of into the engine's stack. */
#define CUPACE_LENT_MAX 512
#define CUPACE_LENT_GUARD 256

struct cupace_lent {
    char buf[CUPACE_LENT_MAX + CUPACE_LENT_GUARD];
};

/* Lends the first n (1..CUPACE_LENT_MAX) bytes, zeroed, the guard after them. */
void cupace_lend(struct cupace_lent *l, size_t n);

/* Takes the buffer back: 0 with its text cut at n - 1 bytes whatever the
 * plugin returned, NUL-terminated and plain; -1 when it wrote past n. */
int cupace_take_back(struct cupace_lent *l, size_t n);

#endif
