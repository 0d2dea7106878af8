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
/* Draws FILE (.png or .svg) with gnuplot; exit-2 class errors when gnuplot
 * is missing or the suffix is unknown. */
int cupace_report_plot(const char *file, const struct cupace_report_meta *meta,
                       const struct cupace_result *r, size_t n, struct cupace_err *err);

#endif
