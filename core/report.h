/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report.h -- presenting results: the terminal summary and A/B table, the
 * JSON report (DESIGN §5), the CSV time series, and plots through gnuplot.
 * Each writer takes a FILE and returns 0, or -1 with err set.
 */
#ifndef CUPACE_REPORT_H
#define CUPACE_REPORT_H

#include <stdio.h>

#include "error.h"
#include "result.h"
#include "seeds.h"

struct cupace_report_meta {
    const char *config;
    const char *mode;               /* "sim" or "realtime" */
    uint64_t seed;
    int interrupted;
};

/* The side-by-side table, one column per result, the best of each row
 * marked with '*' (and bold when `color`). */
void cupace_report_table(FILE *fp, const struct cupace_result *r, size_t n, int color);

int cupace_report_json(FILE *fp, const struct cupace_report_meta *meta,
                       const struct cupace_result *r, size_t n);
int cupace_report_csv(FILE *fp, const struct cupace_result *r, size_t n);
/* Whether FILE can be drawn: its suffix, its name, gnuplot on the PATH;
 * -1 with err set if not.  Asked before a run, so that a bad --plot is
 * refused before any work is done. */
int cupace_report_plot_check(const char *file, struct cupace_err *err);
/* Draws FILE (.png or .svg) with gnuplot; exit-2 class errors when gnuplot
 * is missing or the suffix is unknown. */
int cupace_report_plot(const char *file, const struct cupace_report_meta *meta,
                       const struct cupace_result *r, size_t n, struct cupace_err *err);

/* A many-seed A/B (seeds.h): res[seed * npacers + pacer], and the
 * summary of each controller against the baseline. */
struct cupace_seeds_report {
    const struct cupace_result *res;
    size_t nseeds, npacers, baseline;
    uint64_t first_seed;
    const struct cupace_seed_summary *sum;
};

/* One row per controller: mean ratio [95% interval] per metric. */
void cupace_report_seeds_table(FILE *fp, const struct cupace_seeds_report *sr);
/* Every run (each with its "seed") and a "summary" per controller. */
int cupace_report_seeds_json(FILE *fp, const struct cupace_report_meta *meta,
                             const struct cupace_seeds_report *sr);
/* One row per run: pacer, seed and the metrics the summary is made of. */
int cupace_report_seeds_csv(FILE *fp, const struct cupace_seeds_report *sr);
/* Makespan ratio against memory / bound, one point per controller with
 * its 95% whiskers. */
int cupace_report_tradeoff_plot(const char *file, const struct cupace_report_meta *meta,
                                const struct cupace_seeds_report *sr, struct cupace_err *err);

#endif
