/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * error.h -- how errors travel in cupace.
 *
 * A function that can fail returns -1 (or NULL) and fills a caller-owned
 * struct cupace_err with one complete message, built where the context is
 * known: "FILE:LINE: [section] key: reason" for configuration, "controller
 * 'NAME' (FILE): reason" for plugins.  Nothing below the CLI prints.
 */
#ifndef CUPACE_ERROR_H
#define CUPACE_ERROR_H

#include <stddef.h>

struct cupace_err {
    char msg[8192];                 /* room for a path of PATH_MAX and the rest */
};

/* Formats into err->msg; returns -1 so that callers can `return cupace_err_set(...)`.
 * A NULL err is allowed and ignored. */
int cupace_err_set(struct cupace_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Puts "prefix: " in front of the message already in err. */
int cupace_err_prefix(struct cupace_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Makes S one line of plain text in place: a tab a space, any other
 * control character '?'.  Every message built here is; text a plugin
 * hands over to be shown (a stage's reason) is passed through it. */
void cupace_one_line(char *s);

#endif
