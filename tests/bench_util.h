/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * bench_util.h -- what the benchmarks share: a controller instance over a
 * config written from text, and a monotonic clock in seconds.
 */
#ifndef CUPACE_BENCH_UTIL_H
#define CUPACE_BENCH_UTIL_H

#include "conf.h"
#include "pacer_host.h"

/* Writes INI to a scratch file in the current folder, loads it, and creates
 * the instance LABEL.  0, or -1 with the reason printed on stderr. */
int bench_open(const char *ini, const char *label, struct cupace_config **cfg,
               struct cupace_pacer_instance *inst);
void bench_close(struct cupace_config *cfg, struct cupace_pacer_instance *inst);
double bench_now(void);

#endif
