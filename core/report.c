/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report.c -- the table, JSON, CSV and plot writers.
 *
 * The table's rows are one array of (label, getter, which way is better),
 * so the terminal table and its "best" marks come from one description.
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"
#include "report.h"
#include "text.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

struct row {
    const char *label;
    double (*get)(const struct cupace_result *r);
    int better;                     /* -1 lower is better, +1 higher, 0 no ranking */
    char conv;                      /* 'f' fixed or 'g' general */
    int prec;
};

static double g_makespan(const struct cupace_result *r) { return r->makespan_s; }
static double g_throughput(const struct cupace_result *r) { return r->throughput_pps; }
static double g_busy(const struct cupace_result *r) { return 100.0 * r->gpu_busy_fraction; }
static double g_starved(const struct cupace_result *r) { return r->gpu_starved_s; }
static double g_wait_mean(const struct cupace_result *r) { return r->waiting_mean; }
static double g_wait_max(const struct cupace_result *r) { return (double)r->waiting_max; }
static double g_synth_mean(const struct cupace_result *r) { return r->in_synthesis_mean; }
static double g_synth_max(const struct cupace_result *r) { return (double)r->in_synthesis_max; }
static double g_mem_mean(const struct cupace_result *r) { return r->mem_mean / GIB; }
static double g_mem_peak(const struct cupace_result *r) { return (double)r->mem_peak / GIB; }
static double g_mem_bound(const struct cupace_result *r) { return r->mem_bound / GIB; }
static double g_lat50(const struct cupace_result *r) { return r->job_latency.p50; }
static double g_lat99(const struct cupace_result *r) { return r->job_latency.p99; }
static double g_latmax(const struct cupace_result *r) { return r->job_latency.max; }
static double g_done(const struct cupace_result *r) { return (double)r->completed; }
static double g_failed(const struct cupace_result *r) { return (double)r->failed; }
static double g_late99(const struct cupace_result *r) { return r->lateness.p99 * 1e3; }

static const struct row rows[] = {
    { "makespan (s)", g_makespan, -1, 'g', 5 },
    { "throughput (partitions/s)", g_throughput, +1, 'f', 4 },
    { "GPU busy (%)", g_busy, +1, 'f', 1 },
    { "GPU starved (device-s)", g_starved, -1, 'f', 1 },
    { "waiting, mean", g_wait_mean, 0, 'f', 2 },
    { "waiting, max", g_wait_max, 0, 'f', 0 },
    { "in synthesis, mean", g_synth_mean, 0, 'f', 2 },
    { "in synthesis, max", g_synth_max, 0, 'f', 0 },
    { "memory mean (GiB)", g_mem_mean, -1, 'f', 1 },
    { "memory peak (GiB)", g_mem_peak, -1, 'f', 1 },
    { "memory bound (GiB)", g_mem_bound, 0, 'f', 1 },
    { "job latency p50 (s)", g_lat50, -1, 'g', 5 },
    { "job latency p99 (s)", g_lat99, -1, 'g', 5 },
    { "job latency max (s)", g_latmax, -1, 'g', 5 },
    { "partitions completed", g_done, 0, 'f', 0 },
    { "partitions failed", g_failed, 0, 'f', 0 },
};

static const struct row lateness_row = { "dispatch lateness p99 (ms)", g_late99, -1, 'f', 3 };

static void format_cell(const struct row *row, double v, char *buf, size_t len)
{
    if (!isfinite(v))
        snprintf(buf, len, "n/a");  /* no value: a throughput of a run that took no time */
    else if (row->conv == 'f')
        snprintf(buf, len, "%.*f", row->prec, v);
    else
        snprintf(buf, len, "%.*g", row->prec, v);
}

static void table_row(FILE *fp, const struct row *row, const struct cupace_result *r, size_t n,
                      int color)
{
    double best = 0;
    int have = 0;

    for (size_t i = 0; i < n && row->better; i++) {
        double v = row->get(&r[i]);
        if (!isfinite(v))
            continue;               /* no value is never the best */
        if (!have || (row->better < 0 ? v < best : v > best))
            best = v;
        have = 1;
    }
    fprintf(fp, "%-28s", row->label);
    for (size_t i = 0; i < n; i++) {
        char cell[64];
        double v = row->get(&r[i]);
        /* "best" is within display precision: ties are all marked */
        char shown[48], bshown[48];
        int mark;

        format_cell(row, v, shown, sizeof shown);
        format_cell(row, best, bshown, sizeof bshown);
        mark = row->better && n > 1 && have && isfinite(v) && strcmp(shown, bshown) == 0;
        snprintf(cell, sizeof cell, "%s%s", shown, mark ? "*" : " ");
        if (mark && color)
            fprintf(fp, " \033[1m%17s\033[0m", cell);
        else
            fprintf(fp, " %17s", cell);
    }
    fputc('\n', fp);
}

void cupace_report_table(FILE *fp, const struct cupace_result *r, size_t n, int color)
{
    int lateness = 0;

    fprintf(fp, "%-28s", "");
    for (size_t i = 0; i < n; i++)
        fprintf(fp, " %17.16s", r[i].label);
    fputc('\n', fp);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        table_row(fp, &rows[i], r, n, color);
    for (size_t i = 0; i < n; i++)
        lateness |= r[i].has_lateness;
    if (lateness)
        table_row(fp, &lateness_row, r, n, color);
    fprintf(fp, "%-28s", "invariants");
    for (size_t i = 0; i < n; i++)
        fprintf(fp, " %17s", r[i].invariants_ok ? "ok " : "BROKEN ");
    fputc('\n', fp);
    for (size_t i = 0; i < n; i++) {
        if (r[i].stalled)
            fprintf(fp, "note: %s\n", r[i].stall_reason);
        /* the JSON says "interrupted": the table must not read as a whole run */
        if (r[i].interrupted)
            fprintf(fp, "note: %s was interrupted: %llu of %llu partitions never dispatched\n",
                    r[i].label, (unsigned long long)r[i].never_dispatched,
                    (unsigned long long)r[i].partitions);
    }
    if (n > 1)
        fprintf(fp, "* best of the row (memory bound: the Little's-law floor at that throughput)\n");
}

/* ---- JSON -------------------------------------------------------------- */

/* A JSON string of any bytes: quotes, backslashes and control characters
 * escaped, and a byte that is not valid UTF-8 (a config path in another
 * encoding, say) written as U+FFFD, so that the report always parses. */
static void json_string(FILE *fp, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    fputc('"', fp);
    while (*p) {
        size_t n = cupace_utf8_len(p);

        if (n == 0) {
            fputs("\\ufffd", fp);
            p++;
        } else if (*p == '"' || *p == '\\') {
            fprintf(fp, "\\%c", *p++);
        } else if (*p < 0x20 || *p == 0x7F) {
            fprintf(fp, "\\u%04x", *p++);
        } else {
            fwrite(p, 1, n, fp);
            p += n;
        }
    }
    fputc('"', fp);
}

static double finite_or_zero(double v)
{
    return isfinite(v) ? v : 0;
}

static void json_quantiles(FILE *fp, const char *name, const struct cupace_quantiles *q)
{
    fprintf(fp, "\"%s\": {\"p50\": %.9g, \"p99\": %.9g, \"max\": %.9g}", name, finite_or_zero(q->p50),
            finite_or_zero(q->p99), finite_or_zero(q->max));
}

/* One run; `seed` is written when the report holds many seeds (has_seed). */
static void json_run(FILE *fp, const struct cupace_result *r, int has_seed, uint64_t seed)
{
    fprintf(fp, "    { \"pacer\": ");
    json_string(fp, r->label);
    if (has_seed)
        fprintf(fp, ", \"seed\": %llu", (unsigned long long)seed);
    fprintf(fp, ", \"plugin\": ");
    json_string(fp, r->plugin);
    fprintf(fp, ",\n      \"makespan_s\": %.9g, \"partitions\": {\"dispatched\": %llu, "
                "\"completed\": %llu, \"failed\": %llu, \"never_dispatched\": %llu},\n",
            finite_or_zero(r->makespan_s), (unsigned long long)r->dispatched,
            (unsigned long long)r->completed, (unsigned long long)r->failed,
            (unsigned long long)r->never_dispatched);
    fprintf(fp, "      \"jobs\": {\"completed\": %llu, \"failed\": %llu},\n",
            (unsigned long long)r->jobs_completed, (unsigned long long)r->jobs_failed);
    /* null, not 0, where there is no rate: partitions completed in no time */
    fprintf(fp, "      \"throughput_pps\": ");
    if (isnan(r->throughput_pps))
        fprintf(fp, "null");
    else
        fprintf(fp, "%.9g", finite_or_zero(r->throughput_pps));
    fprintf(fp, ", \"gpu_busy_fraction\": %.9g, \"gpu_starved_s\": %.9g,\n",
            finite_or_zero(r->gpu_busy_fraction), finite_or_zero(r->gpu_starved_s));
    fprintf(fp, "      \"waiting\": {\"mean\": %.9g, \"max\": %llu}, "
                "\"in_synthesis\": {\"mean\": %.9g, \"max\": %llu},\n",
            finite_or_zero(r->waiting_mean), (unsigned long long)r->waiting_max,
            finite_or_zero(r->in_synthesis_mean), (unsigned long long)r->in_synthesis_max);
    fprintf(fp, "      \"memory\": {\"mean_bytes\": %.0f, \"peak_bytes\": %llu, "
                "\"budget_bytes\": %llu, \"bound_bytes\": %.0f},\n",
            finite_or_zero(r->mem_mean), (unsigned long long)r->mem_peak,
            (unsigned long long)r->mem_budget, finite_or_zero(r->mem_bound));
    fprintf(fp, "      ");
    json_quantiles(fp, "job_latency_s", &r->job_latency);
    fprintf(fp, ",\n");
    if (r->has_lateness) {
        fprintf(fp, "      ");
        json_quantiles(fp, "dispatch_lateness_s", &r->lateness);
        fprintf(fp, ",\n");
    }
    if (r->has_gpu_time) {
        fprintf(fp, "      \"gpu_time_s\": {\"device\": %.9g, \"worker\": %.9g, \"device_clock\": "
                "\"%s\"}, \"gpu_busy_fraction_host\": %.9g,\n",
                finite_or_zero(r->gpu_device_s), finite_or_zero(r->gpu_worker_s),
                r->device_clock ? "events" : "host", finite_or_zero(r->gpu_busy_fraction_host));
        if (r->backend_json[0])
            fprintf(fp, "      \"calibration\": %s,\n", r->backend_json);
        if (r->devices_lost[0]) {
            fprintf(fp, "      \"devices_lost\": ");
            json_string(fp, r->devices_lost);
            fprintf(fp, ",\n");
        }
    }
    fprintf(fp, "      \"pacer_state\": ");
    json_string(fp, r->pacer_state);
    fprintf(fp, ",\n      \"stalled\": %s", r->stalled ? "true" : "false");
    if (r->stalled) {
        fprintf(fp, ", \"stall_reason\": ");
        json_string(fp, r->stall_reason);
    }
    if (r->stage_failures) {
        fprintf(fp, ",\n      \"stage_failures\": %llu, \"first_stage_failure\": ",
                (unsigned long long)r->stage_failures);
        json_string(fp, r->stage_failure);
    }
    fprintf(fp, ",\n      \"invariants_ok\": %s", r->invariants_ok ? "true" : "false");
    if (!r->invariants_ok && r->broken) {
        fprintf(fp, ", \"broken\": ");
        json_string(fp, r->broken);
    }
    fprintf(fp, " }");
}

int cupace_report_json(FILE *fp, const struct cupace_report_meta *meta,
                       const struct cupace_result *r, size_t n)
{
    fprintf(fp, "{ \"cupace_version\": \"%s\", \"config\": ", PACKAGE_VERSION);
    json_string(fp, meta->config);
    fprintf(fp, ", \"mode\": \"%s\", \"seed\": %llu,%s\n  \"runs\": [\n", meta->mode,
            (unsigned long long)meta->seed, meta->interrupted ? " \"interrupted\": true," : "");
    for (size_t i = 0; i < n; i++) {
        json_run(fp, &r[i], 0, 0);
        fprintf(fp, "%s\n", i + 1 < n ? "," : "");
    }
    fprintf(fp, "  ] }\n");
    return ferror(fp) ? -1 : 0;
}

/* ---- CSV --------------------------------------------------------------- */

/* A count's mean over a step: whole where the count held all of it. */
static void csv_count(FILE *fp, double v)
{
    fprintf(fp, v == floor(v) ? "%.0f," : "%.3f,", v);
}

int cupace_report_csv(FILE *fp, const struct cupace_result *r, size_t n)
{
    fprintf(fp, "pacer,time_s,waiting,in_synthesis,on_gpu,mem_reserved_bytes,interval_s\n");
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < r[i].nseries; k++) {
            const struct cupace_sample *s = &r[i].series[k];
            fprintf(fp, "%s,%.3f,", r[i].label, s->t_s);
            csv_count(fp, s->waiting);
            csv_count(fp, s->in_synthesis);
            csv_count(fp, s->on_gpu);
            fprintf(fp, "%.0f,", s->mem_reserved);
            if (isnan(s->interval_s))
                fprintf(fp, "hold\n");
            else
                fprintf(fp, "%.6f\n", s->interval_s);
        }
    return ferror(fp) ? -1 : 0;
}

/* ---- plot -------------------------------------------------------------- */

static int find_on_path(const char *prog, char *out, size_t len)
{
    const char *path = getenv("PATH");
    const char *p = path ? path : "/usr/bin:/bin";

    while (*p) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        snprintf(out, len, "%.*s/%s", (int)n, n ? p : ".", prog);
        if (access(out, X_OK) == 0)
            return 0;
        if (!end)
            break;
        p = end + 1;
    }
    return -1;
}

static const char *suffix(const char *file)
{
    const char *dot = strrchr(file, '.');

    return dot ? dot + 1 : "";
}

/* Writes S to gnuplot as a single-quoted string.  Inside one, gnuplot
 * reads '' as a quote and nothing else as special, so a name that holds a
 * quote stays a name: pasted bare, `--plot "x'; system('...'); '"` ran
 * the shell.  A control character would end gnuplot's line, and prints
 * as '?' (names that hold one are refused before the run). */
static void gp_string(FILE *gp, const char *s)
{
    fputc('\'', gp);
    for (; *s; s++) {
        if (*s == '\'')
            fputs("''", gp);
        else
            fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, gp);
    }
    fputc('\'', gp);
}

static int has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

int cupace_report_plot_check(const char *file, struct cupace_err *err)
{
    char gnuplot[4096];
    const char *sfx = suffix(file);

    if (strcmp(sfx, "png") != 0 && strcmp(sfx, "svg") != 0)
        return cupace_err_set(err, "--plot %s: the file must end in .png or .svg", file);
    if (has_control(file))
        return cupace_err_set(err, "--plot: the file name holds a control character");
    if (find_on_path("gnuplot", gnuplot, sizeof gnuplot) < 0)
        return cupace_err_set(err, "--plot %s: gnuplot is not installed (Debian: apt-get "
                              "install gnuplot-nox); --csv writes the same figures as text",
                              file);
    return 0;
}

static void plot_panel(FILE *gp, const char *ylabel, int column, double scale, size_t n,
                       const char *const *titles)
{
    fprintf(gp, "set ylabel '%s'\nplot ", ylabel);
    for (size_t i = 0; i < n; i++) {
        fprintf(gp, "%s$d%zu using 1:($%d/%g) with steps lw 1.5 title ", i ? ", " : "", i,
                column, scale);
        gp_string(gp, titles[i]);
    }
    fputc('\n', gp);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double run_end(const struct cupace_result *r)
{
    double t = r->nseries ? r->series[r->nseries - 1].t_s : 0;

    return r->makespan_s > t ? r->makespan_s : t;
}

/* Where the time axis ends: at the last run's end, except that runs more
 * than twice as long as the median run are cut there, so that one slow
 * controller does not squash the others into a corner. */
static double time_axis_end(const struct cupace_result *r, size_t n)
{
    double *ends = malloc((n ? n : 1) * sizeof *ends), median, end = 0;

    if (!ends)
        return 0;
    for (size_t i = 0; i < n; i++)
        ends[i] = run_end(&r[i]);
    qsort(ends, n, sizeof *ends, cmp_dbl);
    median = n ? ends[n / 2] : 0;
    for (size_t i = 0; i < n; i++)
        if (ends[i] <= 2 * median && ends[i] > end)
            end = ends[i];
    free(ends);
    return end * 1.02;
}

/* One run's series for gnuplot, with the GPU busy fraction (%) over the
 * `window` seconds before each sample: device-busy time is cumulative in the
 * samples, so the fraction is a difference, not a spike per kernel. */
static void plot_data(FILE *gp, size_t i, const struct cupace_result *r, double window)
{
    size_t j = 0;
    double nd = r->ndevices ? r->ndevices : 1;

    fprintf(gp, "$d%zu << EOD\n", i);
    for (size_t k = 0; k < r->nseries; k++) {
        const struct cupace_sample *s = &r->series[k];
        while (j + 1 < k && r->series[j + 1].t_s <= s->t_s - window)
            j++;
        fprintf(gp, "%.3f %.4g %.4g %.4g %.0f ", s->t_s, s->waiting, s->in_synthesis, s->on_gpu,
                s->mem_reserved);
        if (s->t_s > r->series[j].t_s)
            fprintf(gp, "%.2f\n", 100 * (s->busy_s - r->series[j].busy_s) /
                                      (nd * (s->t_s - r->series[j].t_s)));
        else
            fprintf(gp, "?\n");
    }
    fprintf(gp, "EOD\n");
}

/* Starts gnuplot writing FILE (.png or .svg) at width x height; NULL with
 * err set when the suffix is unknown or gnuplot is missing. */
static FILE *plot_open(const char *file, int width, int height, struct cupace_err *err)
{
    FILE *gp;

    if (cupace_report_plot_check(file, err) < 0)
        return NULL;
    /* gnuplot draws on its stdout where it cannot open the output: an
     * image in the terminal, or in the JSON of `--json -` */
    gp = popen("exec gnuplot >/dev/null", "w");
    if (!gp) {
        cupace_err_set(err, "--plot %s: cannot start gnuplot", file);
        return NULL;
    }
    fprintf(gp, "set terminal %s size %d,%d noenhanced\n",
            strcmp(suffix(file), "png") == 0 ? "pngcairo" : "svg", width, height);
    fputs("set output ", gp);
    gp_string(gp, file);
    fputc('\n', gp);
    /* dark, distinct colours: gnuplot's default yellow is hard to read */
    fprintf(gp, "set linetype 1 lc rgb '#1b9e77'\nset linetype 2 lc rgb '#d95f02'\n"
                "set linetype 3 lc rgb '#7570b3'\nset linetype 4 lc rgb '#e7298a'\n"
                "set linetype 5 lc rgb '#66a61e'\nset linetype 6 lc rgb '#222222'\n"
                "set linetype 7 lc rgb '#a6761d'\nset linetype 8 lc rgb '#1f78b4'\n"
                "set linetype cycle 8\n");
    return gp;
}

static int plot_close(FILE *gp, const char *file, struct cupace_err *err)
{
    int rc = pclose(gp);

    if (rc != 0)
        return cupace_err_set(err, "--plot %s: gnuplot failed (status %d)", file, rc);
    return 0;
}

/* The config's file name without its folders: titles name the workload,
 * not where this machine keeps it. */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');

    return slash ? slash + 1 : path;
}

int cupace_report_plot(const char *file, const struct cupace_report_meta *meta,
                       const struct cupace_result *r, size_t n, struct cupace_err *err)
{
    double end = time_axis_end(r, n), window = end / 60 < 5 ? 5 : end / 60;
    char (*titles)[192] = calloc(n ? n : 1, sizeof *titles);
    const char **tp = calloc(n ? n : 1, sizeof *tp);
    FILE *gp = titles && tp ? plot_open(file, 1200, 1400, err) : NULL;

    if (!gp) {
        if (!titles || !tp)
            cupace_err_set(err, "--plot %s: out of memory", file);
        free(titles);
        free(tp);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (run_end(&r[i]) > end)
            snprintf(titles[i], sizeof titles[i], "%s (cut: runs to %.0f s)", r[i].label,
                     run_end(&r[i]));
        else
            snprintf(titles[i], sizeof titles[i], "%s", r[i].label);
        tp[i] = titles[i];
        plot_data(gp, i, &r[i], window);
    }
    {
        char title[512];

        snprintf(title, sizeof title, "%s (%s)", base_name(meta->config), meta->mode);
        fputs("set multiplot layout 4,1 title ", gp);
        gp_string(gp, title);
    }
    fprintf(gp, "\nset key outside right\nset xlabel 'time (s)'\nset grid\n"
                "set xrange [0:%.3f]\n", end > 0 ? end : 1);
    plot_panel(gp, "waiting (GPU queue)", 2, 1, n, tp);
    plot_panel(gp, "in synthesis", 3, 1, n, tp);
    fprintf(gp, "set yrange [0:105]\n");
    {
        char label[96];
        snprintf(label, sizeof label, "GPU busy (%%, over %.0f s)", window);
        plot_panel(gp, label, 6, 1, n, tp);
    }
    fprintf(gp, "set yrange [*:*]\n");
    plot_panel(gp, "memory reserved (GiB)", 5, GIB, n, tp);
    fprintf(gp, "unset multiplot\n");
    free(titles);
    free(tp);
    return plot_close(gp, file, err);
}

/* ---- many seeds -------------------------------------------------------- */

static void ci_cell(char *buf, size_t len, const struct cupace_ci *ci)
{
    if (isnan(ci->mean))
        snprintf(buf, len, "-");
    else if (isnan(ci->lo))
        snprintf(buf, len, "%.4f", ci->mean);
    else
        snprintf(buf, len, "%.4f [%.4f, %.4f]", ci->mean, ci->lo, ci->hi);
}

static const struct {
    const char *head;
    size_t offset;
} ci_columns[] = {
    { "makespan", offsetof(struct cupace_seed_summary, makespan) },
    { "job latency p50", offsetof(struct cupace_seed_summary, p50) },
    { "job latency p99", offsetof(struct cupace_seed_summary, p99) },
    { "memory mean", offsetof(struct cupace_seed_summary, mem) },
    { "memory mean / bound", offsetof(struct cupace_seed_summary, mem_over_bound) },
};
#define NCI_COLUMNS (sizeof ci_columns / sizeof ci_columns[0])

static const struct cupace_ci *ci_of(const struct cupace_seed_summary *s, size_t col)
{
    return (const struct cupace_ci *)((const char *)s + ci_columns[col].offset);
}

static double mean_of(const struct cupace_seeds_report *sr, size_t p, double (*get)(const struct cupace_result *))
{
    double sum = 0;

    for (size_t s = 0; s < sr->nseeds; s++)
        sum += get(CUPACE_SEED_RESULT(sr->res, sr->npacers, s, p));
    return sr->nseeds ? sum / (double)sr->nseeds : 0;
}

void cupace_report_seeds_table(FILE *fp, const struct cupace_seeds_report *sr)
{
    const char *base = sr->res[sr->baseline].label;

    fprintf(fp, "%zu seeds (%llu to %llu), paired: mean ratio to %s [95%% confidence interval]; "
                "memory / bound is each run's own\n", sr->nseeds,
            (unsigned long long)sr->first_seed,
            (unsigned long long)(sr->first_seed + sr->nseeds - 1), base);
    fprintf(fp, "%-16s", "");
    for (size_t c = 0; c < NCI_COLUMNS; c++)
        fprintf(fp, c + 1 < NCI_COLUMNS ? "  %-24s" : "  %s", ci_columns[c].head);
    fputc('\n', fp);
    for (size_t p = 0; p < sr->npacers; p++) {
        fprintf(fp, "%-16.16s", sr->res[p].label);
        for (size_t c = 0; c < NCI_COLUMNS; c++) {
            char cell[80];
            ci_cell(cell, sizeof cell, ci_of(&sr->sum[p], c));
            fprintf(fp, c + 1 < NCI_COLUMNS ? "  %-24s" : "  %s", cell);
        }
        fputc('\n', fp);
    }
    for (size_t p = 0; p < sr->npacers; p++)
        if (sr->sum[p].left_out)
            fprintf(fp, "%s: %zu of %zu seeds left out, where its run or %s's stalled or "
                        "broke an invariant\n", sr->res[p].label, sr->sum[p].left_out,
                    sr->nseeds, base);
    fprintf(fp, "%s, mean over the seeds: makespan %.5g s, job latency p50 %.5g s, p99 %.5g s, "
                "memory mean %.1f GiB, bound %.1f GiB\n", base,
            mean_of(sr, sr->baseline, g_makespan), mean_of(sr, sr->baseline, g_lat50),
            mean_of(sr, sr->baseline, g_lat99), mean_of(sr, sr->baseline, g_mem_mean),
            mean_of(sr, sr->baseline, g_mem_bound));
}

static void json_ci(FILE *fp, const char *name, const struct cupace_ci *ci)
{
    fprintf(fp, "\"%s\": {", name);
    if (isnan(ci->mean))
        fprintf(fp, "\"mean\": null");
    else
        fprintf(fp, "\"mean\": %.9g", ci->mean);
    if (isnan(ci->lo))
        fprintf(fp, ", \"ci95\": null");
    else
        fprintf(fp, ", \"ci95\": [%.9g, %.9g]", ci->lo, ci->hi);
    fprintf(fp, ", \"n\": %zu}", ci->n);
}

int cupace_report_seeds_json(FILE *fp, const struct cupace_report_meta *meta,
                             const struct cupace_seeds_report *sr)
{
    static const char *const names[NCI_COLUMNS] = {
        "makespan_ratio", "job_latency_p50_ratio", "job_latency_p99_ratio", "memory_mean_ratio",
        "memory_mean_over_bound",
    };
    size_t total = sr->nseeds * sr->npacers;

    fprintf(fp, "{ \"cupace_version\": \"%s\", \"config\": ", PACKAGE_VERSION);
    json_string(fp, meta->config);
    fprintf(fp, ", \"mode\": \"%s\", \"seed\": %llu, \"seeds\": %zu, \"baseline\": ", meta->mode,
            (unsigned long long)sr->first_seed, sr->nseeds);
    json_string(fp, sr->res[sr->baseline].label);
    fprintf(fp, ",\n  \"runs\": [\n");
    for (size_t i = 0; i < total; i++) {
        json_run(fp, &sr->res[i], 1, sr->first_seed + i / sr->npacers);
        fprintf(fp, "%s\n", i + 1 < total ? "," : "");
    }
    fprintf(fp, "  ],\n  \"summary\": [\n");
    for (size_t p = 0; p < sr->npacers; p++) {
        fprintf(fp, "    { \"pacer\": ");
        json_string(fp, sr->res[p].label);
        for (size_t c = 0; c < NCI_COLUMNS; c++) {
            fprintf(fp, ",\n      ");
            json_ci(fp, names[c], ci_of(&sr->sum[p], c));
        }
        fprintf(fp, ",\n      \"seeds_left_out\": %zu }%s\n", sr->sum[p].left_out,
                p + 1 < sr->npacers ? "," : "");
    }
    fprintf(fp, "  ] }\n");
    return ferror(fp) ? -1 : 0;
}

int cupace_report_seeds_csv(FILE *fp, const struct cupace_seeds_report *sr)
{
    fprintf(fp, "pacer,seed,makespan_s,job_latency_p50_s,job_latency_p99_s,mem_mean_bytes,"
                "mem_bound_bytes\n");
    for (size_t i = 0; i < sr->nseeds * sr->npacers; i++) {
        const struct cupace_result *r = &sr->res[i];
        fprintf(fp, "%s,%llu,%.9g,%.9g,%.9g,%.0f,%.0f\n", r->label,
                (unsigned long long)(sr->first_seed + i / sr->npacers), r->makespan_s,
                r->job_latency.p50, r->job_latency.p99, r->mem_mean, r->mem_bound);
    }
    return ferror(fp) ? -1 : 0;
}

/* The trade-off at a glance: memory over the Little's-law bound across,
 * makespan over the baseline's up, one point per controller with its 95%
 * whiskers both ways.  Good controllers sit low and left.  A controller
 * more than OFF_SCALE times slower than the baseline is drawn at the top
 * edge with its figure, so that it does not squash the others. */
#define OFF_SCALE 1.5

int cupace_report_tradeoff_plot(const char *file, const struct cupace_report_meta *meta,
                                const struct cupace_seeds_report *sr, struct cupace_err *err)
{
    FILE *gp = plot_open(file, 1000, 700, err);
    double ylo = 1, yhi = 1, top;

    if (!gp)
        return -1;
    for (size_t p = 0; p < sr->npacers; p++) {
        const struct cupace_ci *m = &sr->sum[p].makespan;
        double lo = isnan(m->lo) ? m->mean : m->lo, hi = isnan(m->hi) ? m->mean : m->hi;
        if (!isfinite(m->mean) || m->mean > OFF_SCALE)
            continue;
        if (lo < ylo)
            ylo = lo;
        if (hi > yhi)
            yhi = hi;
    }
    top = yhi + 0.15 * (yhi - ylo) + 0.005;
    {
        char title[512];

        snprintf(title, sizeof title, "%s: %zu seeds, mean and 95%% interval",
                 base_name(meta->config), sr->nseeds);
        fputs("set title ", gp);
        gp_string(gp, title);
    }
    fprintf(gp, "\nset xlabel 'memory mean / bound (Little''s-law floor = 1)'\n"
                "set ylabel 'makespan / %s'\nset grid\nset key outside right\n"
                "set offsets graph 0.1, graph 0.1, 0, 0\nset yrange [%.6g:%.6g]\n",
            sr->res[sr->baseline].label, ylo - 0.1 * (top - ylo) - 0.005,
            top + 0.05 * (top - ylo));
    for (size_t p = 0; p < sr->npacers; p++) {
        const struct cupace_seed_summary *s = &sr->sum[p];
        double x = finite_or_zero(s->mem_over_bound.mean), y = finite_or_zero(s->makespan.mean);
        double xl = isnan(s->mem_over_bound.lo) ? x : s->mem_over_bound.lo;
        double xh = isnan(s->mem_over_bound.hi) ? x : s->mem_over_bound.hi;
        double yl = isnan(s->makespan.lo) ? y : s->makespan.lo;
        double yh = isnan(s->makespan.hi) ? y : s->makespan.hi;
        char label[160];

        if (y > OFF_SCALE) {        /* off the scale: at the top edge, with its figure */
            snprintf(label, sizeof label, " %s (%.2fx, off scale)", sr->res[p].label, y);
            y = yl = yh = top;
        } else {
            snprintf(label, sizeof label, " %s", sr->res[p].label);
        }
        fprintf(gp, "$d%zu << EOD\n%.6g %.6g %.6g %.6g %.6g %.6g \"%s\"\nEOD\n", p, x, y,
                finite_or_zero(xl), finite_or_zero(xh), finite_or_zero(yl), finite_or_zero(yh),
                label);
    }
    fprintf(gp, "plot ");
    for (size_t p = 0; p < sr->npacers; p++)
        fprintf(gp, "%s$d%zu using 1:2:3:4:5:6 with xyerrorbars lw 2 pt %zu ps 1.6 lt %zu "
                    "title '%s', $d%zu using 1:2:7 with labels left offset 0.8,%s tc lt %zu notitle",
                p ? ", " : "", p, 5 + 2 * (p % 4), p + 1, sr->res[p].label, p,
                p % 2 ? "-0.9" : "0.9", p + 1);
    fputc('\n', gp);
    return plot_close(gp, file, err);
}
