/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * units.h -- parsing the values of configuration keys.
 *
 * Durations take ns us ms s m h, sizes B KiB MiB GiB TiB; a bare number is
 * refused for both ("0" excepted), as are negatives and values that do not
 * fit in 64 bits.  Each parser returns 0 and stores the value, or -1 with
 * *why set to a static phrase describing what was expected; *out is left
 * unchanged on failure.
 */
#ifndef CUPACE_UNITS_H
#define CUPACE_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "checked.h"             /* cupace_sat_add, which users of units.h had from here */

int cupace_parse_duration(const char *s, uint64_t *out, const char **why);
int cupace_parse_size(const char *s, uint64_t *out, const char **why);
int cupace_parse_u64(const char *s, uint64_t *out, const char **why);
int cupace_parse_f64(const char *s, double *out, const char **why);
int cupace_parse_bool(const char *s, int *out, const char **why);

/* Whether WHY, from cupace_parse_duration or cupace_parse_size, refused a
 * well-formed value as too large for 64 bits (and not a malformed one), so
 * that a caller with a lower limit of its own can say that one instead. */
int cupace_too_large(const char *why);

/* The only form a controller name or label may take: 1 to CUPACE_NAME_MAX
 * characters of [A-Za-z0-9_-].  Longer is refused, never cut. */
#define CUPACE_NAME_MAX 64
#define CUPACE_NAME_RULE "[A-Za-z0-9_-], 1 to 64 characters"
int cupace_is_identifier(const char *s);

/* "[a-z_][a-z0-9_]*" of at most MAX bytes: an SQL name that needs no
 * quoting and reads the same folded to lower case (the queue's table). */
int cupace_is_sql_name(const char *s, size_t max);

/* "HOST:PORT" or "[HOST]:PORT" (port 0 to 65535) split into HOST (at most
 * hostlen - 1 bytes) and *port: 0, or -1 if it has another form.  The host
 * is not looked up. */
int cupace_parse_hostport(const char *s, char *host, size_t hostlen, unsigned *port);

/* Human forms for reports: "2.5s", "14GiB". */
void cupace_format_duration(uint64_t ns, char *buf, unsigned len);
void cupace_format_size(uint64_t bytes, char *buf, unsigned len);

/* ns x f rounded to the nearest ns: exact below the horizon, "beyond" above
 * it (checked.h); durations drawn from the model and durations under
 * time_scale alike. */
uint64_t cupace_scale_ns(uint64_t ns, double f);

#endif
