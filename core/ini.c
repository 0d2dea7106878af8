/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * ini.c -- the INI syntax of cupace.ini, one line at a time.  See ini.h.
 */
#include "config.h"
#include "ini.h"

#include <string.h>

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static char *trim(char *s)
{
    char *e;

    while (is_blank(*s))
        s++;
    e = s + strlen(s);
    while (e > s && is_blank(e[-1]))
        *--e = '\0';
    return s;
}

/* Cuts an inline comment: ';' at the start or after a blank. */
static void cut_comment(char *s)
{
    for (char *p = s; *p; p++)
        if (*p == ';' && (p == s || is_blank(p[-1]))) {
            *p = '\0';
            return;
        }
}

void cupace_ini_split(char *line, int first, struct cupace_ini_line *out)
{
    char *p = line, *end, *eq;

    memset(out, 0, sizeof *out);
    if (first && strncmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    out->indented = is_blank(*p);
    p = trim(p);
    if (!*p || *p == ';' || *p == '#') {
        out->kind = CUPACE_INI_BLANK;
        return;
    }
    if (*p == '[') {
        end = strchr(p, ']');
        if (!end) {
            out->kind = CUPACE_INI_ERROR;
            out->why = "a section header without its ']'";
            return;
        }
        *end = '\0';
        cut_comment(end + 1);
        if (*trim(end + 1)) {
            out->kind = CUPACE_INI_ERROR;
            out->why = "text after a section header";
            return;
        }
        out->kind = CUPACE_INI_SECTION;
        out->name = p + 1;
        return;
    }
    eq = strchr(p, '=');
    if (!eq || eq == p) {
        out->kind = CUPACE_INI_ERROR;
        out->why = eq ? "a key before '='"
                 : out->indented ? "an indented line would continue the previous value; "
                                   "remove the indentation or start the line with ';'"
                 : "expected '[section]', 'key = value' or a comment";
        return;
    }
    *eq = '\0';
    cut_comment(eq + 1);
    out->kind = CUPACE_INI_KEY;
    out->key = trim(p);
    out->value = trim(eq + 1);
    if (!*out->key) {
        out->kind = CUPACE_INI_ERROR;
        out->why = "a key before '='";
    }
}
