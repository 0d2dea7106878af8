/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * ini.h -- the INI syntax of cupace.ini, one line at a time.
 *
 * cupace reads its own INI instead of using libinih, whose Debian build cuts
 * lines at 200 bytes and section names at 50 characters without a word; a
 * configuration must never mean something other than what was written.
 * The syntax is libinih's as cupace used it:
 *
 *   [section]            a section header (blanks around it are allowed)
 *   key = value          blanks around the key and the value are dropped
 *   ; comment, # comment whole-line comments
 *   key = value ; note   an inline comment: ';' after a blank
 *
 * A line may be of any length.  An indented "key = value" line is reported
 * as such (libinih would have glued it to the previous value), so that the
 * loader can refuse it.  A UTF-8 byte order mark on the first line is
 * skipped.  What a key or a section means is the loader's business (conf.c).
 */
#ifndef CUPACE_INI_H
#define CUPACE_INI_H

enum cupace_ini_kind {
    CUPACE_INI_BLANK,               /* empty or a comment */
    CUPACE_INI_SECTION,             /* name */
    CUPACE_INI_KEY,                 /* key, value */
    CUPACE_INI_ERROR,               /* why */
};

struct cupace_ini_line {
    enum cupace_ini_kind kind;
    const char *name;               /* SECTION: between the brackets, as written */
    const char *key, *value;        /* KEY: trimmed; the value may be "" */
    int indented;                   /* KEY: the line starts with a blank */
    const char *why;                /* ERROR: what was expected, a static phrase */
};

/* Splits LINE (one line, without its newline) in place.  `first` is nonzero
 * for the first line of the file (where a byte order mark may be). */
void cupace_ini_split(char *line, int first, struct cupace_ini_line *out);

#endif
