/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* check_conf.c -- the configuration loader: the schema, every class of
 * error, and that each message names the file, the line and the key. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "testutil.h"

/* Loads INI, expects a failure whose message contains every needle. */
static void expect_error(const char *ini, const char *n1, const char *n2, const char *n3)
{
    struct cupace_err err = { "" };
    struct cupace_config *cfg = tu_config(ini, &err);

    ck_assert_msg(cfg == NULL, "config accepted: %s", ini);
    ck_assert_msg(strstr(err.msg, "test.ini") || strstr(err.msg, "--set") || strstr(err.msg, ".csv"),
                  "no file in '%s'", err.msg);
    if (n1)
        ck_assert_msg(strstr(err.msg, n1), "'%s' not in '%s'", n1, err.msg);
    if (n2)
        ck_assert_msg(strstr(err.msg, n2), "'%s' not in '%s'", n2, err.msg);
    if (n3)
        ck_assert_msg(strstr(err.msg, n3), "'%s' not in '%s'", n3, err.msg);
}

START_TEST(defaults_follow_the_design)
{
    struct cupace_err err;
    struct cupace_config *cfg = tu_config("", &err);

    ck_assert_ptr_nonnull(cfg);
    ck_assert_int_eq(cfg->engine.mode, CUPACE_MODE_SIM);
    ck_assert_uint_eq(cfg->engine.workers_per_device, 2);
    ck_assert_uint_eq(cfg->engine.memory_budget, 314ULL << 30);
    ck_assert_uint_eq(cfg->workload.partition_memory, 14ULL << 30);
    ck_assert_uint_eq(cfg->workload.release_at_kernel, 0);
    ck_assert_str_eq(cfg->pacer_name, "proctime");
    ck_assert_uint_eq(cfg->nab, 1);
    ck_assert_str_eq(cfg->ab[0], "proctime");
    ck_assert_uint_eq(cupace_workload_partitions(cfg), 200);
    cupace_config_free(cfg);
}
END_TEST

START_TEST(the_whole_schema_loads)
{
    struct cupace_err err;
    struct cupace_config *cfg = tu_config(
        "[engine]\nmode = realtime\nbackend = emulated\ndevices = 2\ndevice_ids = 0, 2\n"
        "workers_per_device = 3\nsynth_workers = 7\nmemory_budget = 1TiB\nseed = 42\n"
        "status_interval = 5s\nstop_timeout = 2s\n"
        "[pacer]\nname = greedy\npath = plug:/opt/x\n"
        "[pacer.greedy]\nplugin = fixed\ninterval = 0\n"
        "[workload]\njobs = 3\npartitions_per_job = 4\narrival = burst\nburst_jobs = 2\n"
        "burst_every = 15m\ninterarrival = 120s\npartition_memory = 14GiB\n"
        "release_at_kernel = 13GiB\nsynth_time = 30s\nsynth_cv = 0.15\nsynth_dist = gamma\n"
        "cpu_slots = 12\ngpu_prep = 0.8s\ngpu_kernel = 2.5s\ngpu_epilogue = 0.5s\ngpu_cv = 0.05\n"
        "gpu_dist = exponential\ngpu_exclusive = no\ncontention = 1.3\ndevice_speed = 1.0, 2.0\n"
        "fail_rate = 0.01\ntime_scale = 0.001\n"
        "change = 600s:gpu_kernel=5s, 60s:device_speed=0.5/1, 900s:contention=2\n"
        "[ab]\npacers = greedy, proctime, window\n", &err);

    ck_assert_msg(cfg != NULL, "%s", err.msg);
    ck_assert_int_eq(cfg->engine.mode, CUPACE_MODE_REALTIME);
    ck_assert_int_eq(cfg->engine.backend, CUPACE_BACKEND_EMULATED);
    ck_assert_uint_eq(cfg->engine.ndevice_ids, 2);
    ck_assert_uint_eq(cfg->engine.device_ids[1], 2);
    ck_assert_str_eq(cfg->pacer_path, "plug:/opt/x");
    ck_assert_uint_eq(cfg->engine.stop_timeout_ns, 2000000000ULL);
    ck_assert_int_eq(cfg->workload.arrival, CUPACE_ARRIVAL_BURST);
    ck_assert_int_eq(cfg->workload.synth_dist, CUPACE_DIST_GAMMA);
    ck_assert_int_eq(cfg->workload.gpu_exclusive, 0);
    ck_assert_double_eq(cfg->workload.device_speed[1], 2.0);
    ck_assert_uint_eq(cfg->workload.nchanges, 3);
    /* change points come sorted by time */
    ck_assert_uint_eq(cfg->workload.changes[0].at_ns, 60000000000ULL);
    ck_assert_int_eq(cfg->workload.changes[0].key, CUPACE_CHANGE_DEVICE_SPEED);
    ck_assert_double_eq(cfg->workload.changes[0].speed[0], 0.5);
    ck_assert_uint_eq(cfg->workload.changes[1].ns, 5000000000ULL);
    ck_assert_uint_eq(cfg->nab, 3);
    ck_assert_str_eq(cupace_config_plugin_of(cfg, "greedy"), "fixed");
    ck_assert_str_eq(cupace_config_plugin_of(cfg, "window"), "window");
    cupace_config_free(cfg);
}
END_TEST

START_TEST(unknown_section_names_line)
{
    expect_error("[engine]\nseed = 1\n\n[engnie]\n", "test.ini:4:", "[engnie]", "unknown section");
}
END_TEST

START_TEST(unknown_empty_section_is_refused)
{
    expect_error("[workload]\njobs = 1\n[extra]\n", "test.ini:3:", "[extra]", NULL);
}
END_TEST

START_TEST(unknown_key_names_key_and_line)
{
    expect_error("[engine]\ndevices = 1\nworkers = 2\n", "test.ini:3:", "workers", "unknown key");
    /* a key of another section says which */
    expect_error("[engine]\ntime_scale = 0.1\n", "test.ini:2:", "[engine] time_scale",
                 "it is a key of [workload]");
}
END_TEST

START_TEST(bare_number_duration_is_refused)
{
    expect_error("[workload]\nsynth_time = 30\n", "test.ini:2:", "synth_time", "unit");
}
END_TEST

START_TEST(bad_size_is_refused)
{
    expect_error("[engine]\nmemory_budget = 314GB\n", "test.ini:2:", "memory_budget", "KiB");
}
END_TEST

START_TEST(queue_section_loads_with_defaults)
{
    struct cupace_err err;
    struct cupace_config *cfg = tu_config("", &err);

    ck_assert_ptr_nonnull(cfg);
    ck_assert_str_eq(cfg->queue.url, "");
    ck_assert_str_eq(cfg->queue.table, "cupace_jobs");
    ck_assert_uint_eq(cfg->queue.lease_ns, 30000000000ULL);
    ck_assert_uint_eq(cfg->queue.poll_ns, 1000000000ULL);
    ck_assert_uint_eq(cfg->queue.max_attempts, 3);
    cupace_config_free(cfg);
    cfg = tu_config("[queue]\nurl = host=/tmp port=5433 dbname=farm\ntable = _jobs2\n"
                    "lease = 2m\npoll = 250ms\nmax_attempts = 5\n", &err);
    ck_assert_msg(cfg != NULL, "%s", err.msg);
    ck_assert_str_eq(cfg->queue.url, "host=/tmp port=5433 dbname=farm");
    ck_assert_str_eq(cfg->queue.table, "_jobs2");
    ck_assert_uint_eq(cfg->queue.lease_ns, 120000000000ULL);
    ck_assert_uint_eq(cfg->queue.poll_ns, 250000000ULL);
    ck_assert_uint_eq(cfg->queue.max_attempts, 5);
    ck_assert_ptr_null(cfg->serve_metrics);
    cupace_config_free(cfg);
    cfg = tu_config("[serve]\nmetrics = [::1]:9464\n", &err);
    ck_assert_msg(cfg != NULL, "%s", err.msg);
    ck_assert_str_eq(cfg->serve_metrics, "[::1]:9464");
    cupace_config_free(cfg);
}
END_TEST

START_TEST(bad_queue_keys_are_refused)
{
    expect_error("[queue]\ntable = Jobs\n", "test.ini:2:", "[queue] table", "lower-case");
    expect_error("[queue]\n\ntable = 9jobs\n", "test.ini:3:", "table", "'9jobs'");
    expect_error("[queue]\ntable = jobs; drop table x\n", "test.ini:2:", "table", NULL);
    /* named unquoted, a reserved word was a syntax error in every statement, for ever */
    expect_error("[queue]\ntable = order\n", "test.ini:2:", "table", "reserved word");
    expect_error("[queue]\ntable = user\n", "test.ini:2:", "table", "reserved word");
    expect_error("[queue]\ntable = a23456789012345678901234567890123456789012345678x\n",
                 "test.ini:2:", "table", "at most 48");
    expect_error("[queue]\nlease = 10ms\n", "test.ini:2:", "lease", "at least");
    expect_error("[queue]\npoll = 1\n", "test.ini:2:", "poll", NULL);
    expect_error("[queue]\nmax_attempts = 0\n", "test.ini:2:", "max_attempts", "from 1");
    expect_error("[queue]\nowner = me\n", "test.ini:2:", "owner", "unknown key");
    expect_error("[serve]\nmetrics = 9464\n", "test.ini:2:", "[serve] metrics", "HOST:PORT");
    expect_error("[serve]\nmetrics = 127.0.0.1:65536\n", "test.ini:2:", "metrics", NULL);
    /* serve binds a numeric host: a name, or no address at all, is refused here, not at start */
    expect_error("[serve]\nmetrics = localhost:9464\n", "test.ini:2:", "metrics", "numeric host");
    expect_error("[serve]\nmetrics = 999.1.1.1:80\n", "test.ini:2:", "metrics", "numeric host");
    expect_error("[serve]\nmetrics = ::1:80\n", "test.ini:2:", "metrics", NULL);
}
END_TEST

START_TEST(out_of_range_is_refused)
{
    expect_error("[engine]\ndevices = 0\n", "test.ini:2:", "devices", "from 1");
    expect_error("[workload]\nfail_rate = 1.5\n", "test.ini:2:", "fail_rate", "from 0 to 1");
}
END_TEST

START_TEST(overflowing_values_are_refused)
{
    expect_error("[workload]\nsynth_time = 99999999999h\n", "synth_time",
                 "too large: expected at most 18000000000s", NULL);
    /* past the key's limit, short of 64 bits: the limit, not the minimum */
    expect_error("[engine]\nmemory_budget = 16777215TiB\n", "test.ini:2: [engine] memory_budget",
                 "too large: expected at most 16370904.6TiB, got '16777215TiB'", NULL);
    expect_error("[engine]\nmemory_budget = 16777216TiB\n", "memory_budget",
                 "too large: expected at most 16370904.6TiB", NULL);
    expect_error("[cuda]\ntransfer = 2TiB\n", "transfer", "too large: expected at most 1.0TiB", NULL);
    expect_error("[queue]\nlease = 2000h\n", "lease", "too large: expected at most 86400s", NULL);
    expect_error("[engine]\nseed = 99999999999999999999999\n", "seed", "64 bits", NULL);
}
END_TEST

START_TEST(bad_enum_lists_the_choices)
{
    expect_error("[workload]\narrival = sometimes\n", "arrival", "backlog | poisson | burst | trace",
                 "sometimes");
}
END_TEST

START_TEST(release_above_partition_memory)
{
    expect_error("[workload]\npartition_memory = 14GiB\nrelease_at_kernel = 15GiB\n",
                 "test.ini:3:", "release_at_kernel", "partition_memory");
}
END_TEST

START_TEST(partition_above_budget)
{
    expect_error("[engine]\nmemory_budget = 10GiB\n[workload]\npartition_memory = 14GiB\n",
                 "test.ini:4:", "partition_memory", "no partition could ever start");
}
END_TEST

START_TEST(duplicate_key_names_first_line)
{
    expect_error("[engine]\nseed = 1\nseed = 2\n", "test.ini:3:", "seed", "line 2");
}
END_TEST

START_TEST(indented_continuation_is_refused)
{
    expect_error("[engine]\nseed = 1\n   2\n", "test.ini:3:", "indented", NULL);
}
END_TEST

START_TEST(syntax_error_names_line)
{
    expect_error("[engine]\nseed 1\n", "test.ini:2:", "syntax", NULL);
}
END_TEST

START_TEST(bad_change_point)
{
    expect_error("[workload]\nchange = 600s:gpu_kern=5s\n", "test.ini:2:", "change", "gpu_kernel");
    expect_error("[workload]\nchange = 600:gpu_kernel=5s\n", "test.ini:2:", "change", NULL);
    /* two values for one key at one instant: the last written won */
    expect_error("[workload]\nchange = 10s:gpu_kernel=5s, 20s:gpu_prep=1s, 10s:gpu_kernel=1s\n",
                 "test.ini:2:", "change", "entries 1 and 3 both change gpu_kernel at 10s");
    expect_error("[workload]\nchange = 4000000h:gpu_kernel=1s\n", "test.ini:2:", "change",
                 "never applies");
}
END_TEST

START_TEST(device_lists_must_match_devices)
{
    expect_error("[engine]\ndevices = 2\n[workload]\ndevice_speed = 1, 2, 3\n", "test.ini:4:",
                 "device_speed", "3 speeds");
    expect_error("[engine]\ndevices = 2\ndevice_ids = 0\n", "test.ini:3:", "device_ids", NULL);
    expect_error("[engine]\ndevices = 2\ndevice_ids = 1, 1\n", "device_ids", "each device once",
                 NULL);
}
END_TEST

START_TEST(bad_pacer_labels)
{
    expect_error("[pacer]\nname = ../evil\n", "test.ini:2:", "name", "label");
    expect_error("[pacer.a/b]\nplugin = fixed\n", "test.ini:1:", "label", NULL);
    expect_error("[pacer.x]\nplugin = /tmp/x.so\n", "test.ini:2:", "plugin", NULL);
    expect_error("[ab]\npacers = a, b c\n", "test.ini:2:", "pacers", NULL);
    /* a label twice: two columns of one name, and --baseline ambiguous */
    expect_error("[ab]\npacers = proctime, fixed, proctime\n", "test.ini:2: [ab] pacers: ",
                 "'proctime' twice", NULL);
}
END_TEST

START_TEST(pacer_sections_keep_keys_with_lines)
{
    struct cupace_err err;
    struct cupace_config *cfg = tu_config("[pacer.fast]\nplugin = proctime\n\ntarget = 2\nkp=1\n",
                                          &err);
    struct cupace_pacer_section *s;

    ck_assert_ptr_nonnull(cfg);
    s = cupace_config_section(cfg, "fast");
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s->plugin, "proctime");
    ck_assert_uint_eq(s->nkv, 2);
    ck_assert_str_eq(s->kv[0].key, "target");
    ck_assert_uint_eq(s->kv[0].at.line, 4);
    ck_assert_str_eq(s->kv[1].value, "1");
    cupace_config_free(cfg);
}
END_TEST

START_TEST(overrides_apply_and_name_themselves)
{
    const char *sets[] = { "engine.seed=7", "pacer.greedy.interval=0", "workload.synth_time=1m" };
    const char *bad[] = { "engine.sede=7" };
    const char *bad2[] = { "workload.synth_time=12" };
    struct cupace_err err;
    const char *file = tu_write("o.ini", "[engine]\nseed = 1\n[pacer.greedy]\nplugin = fixed\n"
                                         "interval = 5s\n");
    struct cupace_config *cfg = cupace_config_load(file, sets, 3, &err);

    ck_assert_msg(cfg != NULL, "%s", err.msg);
    ck_assert_uint_eq(cfg->engine.seed, 7);
    ck_assert_uint_eq(cfg->workload.synth_ns, 60000000000ULL);
    ck_assert_str_eq(cupace_config_section(cfg, "greedy")->kv[0].value, "0");
    cupace_config_free(cfg);
    ck_assert_ptr_null(cupace_config_load(file, bad, 1, &err));
    ck_assert_msg(strstr(err.msg, "--set 'engine.sede=7'") && strstr(err.msg, "unknown key"), "%s",
                  err.msg);
    ck_assert_ptr_null(cupace_config_load(file, bad2, 1, &err));
    ck_assert_msg(strstr(err.msg, "synth_time") && strstr(err.msg, "unit"), "%s", err.msg);
}
END_TEST

START_TEST(traces_load_sorted)
{
    struct cupace_err err;
    struct cupace_config *cfg;

    tu_write("t.csv", "arrival,partitions,synth_time\n10,2,\n0,3,45s\n# a comment\n5m,1,\n");
    cfg = tu_config("[workload]\narrival = trace\ntrace = t.csv\n", &err);
    ck_assert_msg(cfg != NULL, "%s", err.msg);
    ck_assert_uint_eq(cfg->workload.ntrace_jobs, 3);
    ck_assert_uint_eq(cfg->workload.trace_jobs[0].arrival_ns, 0);
    ck_assert_uint_eq(cfg->workload.trace_jobs[0].synth_ns, 45000000000ULL);
    ck_assert_uint_eq(cfg->workload.trace_jobs[1].arrival_ns, 10000000000ULL);
    ck_assert_uint_eq(cfg->workload.trace_jobs[2].arrival_ns, 300000000000ULL);
    ck_assert_uint_eq(cupace_workload_partitions(cfg), 6);
    cupace_config_free(cfg);
}
END_TEST

/* A byte-order mark before the header, as spreadsheets save CSV, is no
 * part of the first column's name. */
START_TEST(a_trace_may_start_with_a_byte_order_mark)
{
    struct cupace_err err;
    struct cupace_config *cfg;

    tu_write("bom.csv", "\xEF\xBB\xBF" "arrival,partitions\n0,2\n5s,1\n");
    cfg = tu_config("[workload]\narrival = trace\ntrace = bom.csv\n", &err);
    ck_assert_msg(cfg, "%s", err.msg);
    ck_assert_uint_eq(cfg->workload.ntrace_jobs, 2);
    ck_assert_uint_eq(cupace_workload_partitions(cfg), 3);
    cupace_config_free(cfg);
}
END_TEST

START_TEST(bad_traces_name_file_line_column)
{
    tu_write("b1.csv", "arrival,partitions\n0,2\n1,zero\n");
    expect_error("[workload]\narrival = trace\ntrace = b1.csv\n", "b1.csv:3:", "partitions", "zero");
    tu_write("b2.csv", "arrival,parts\n0,2\n");
    expect_error("[workload]\narrival = trace\ntrace = b2.csv\n", "b2.csv:1:", "parts", NULL);
    tu_write("b3.csv", "arrival,partitions\n0,2,5\n");
    expect_error("[workload]\narrival = trace\ntrace = b3.csv\n", "b3.csv:2:", "fields", NULL);
    expect_error("[workload]\narrival = trace\n", "arrival", "trace = FILE", NULL);
    expect_error("[workload]\narrival = trace\ntrace = missing.csv\n", "missing.csv", "cannot open",
                 "test.ini:3: [workload] trace: ");    /* where the config names it */
}
END_TEST


/* Regression (issue 8, bug 6): lines were cut at 198 characters, so a deep
 * plugin path or 64 device speeds could not be written.  Lines of any
 * length are read whole. */
START_TEST(long_lines_are_read_whole)
{
    size_t n = 20000;
    char *ini = malloc(n + 4096), *p = ini;
    struct cupace_err err;
    struct cupace_config *cfg;

    p += sprintf(p, "; %0*d\n[engine]\ndevices = 64\n[pacer]\npath = /", 5000, 7);
    for (int i = 0; i < 800; i++)
        p += sprintf(p, "dir%d/", i);
    p += sprintf(p, "end\n[workload]\ndevice_speed = ");
    for (int i = 0; i < 64; i++)
        p += sprintf(p, "%s%d.000000000000000", i ? ", " : "", i % 3 + 1);
    p += sprintf(p, "\njobs = 3\n");
    cfg = tu_config(ini, &err);
    ck_assert_msg(cfg != NULL, "%s", err.msg);
    ck_assert_uint_gt(strlen(cfg->pacer_path), 4096);
    ck_assert_str_eq(cfg->pacer_path + strlen(cfg->pacer_path) - 4, "/end");
    ck_assert_uint_eq(cfg->workload.ndevice_speed, 64);
    ck_assert_double_eq(cfg->workload.device_speed[63], 1.0);
    ck_assert_double_eq(cfg->workload.device_speed[62], 3.0);
    ck_assert_uint_eq(cfg->workload.jobs, 3);
    cupace_config_free(cfg);
    free(ini);
}
END_TEST

/* Regression (issue 8, bug 4): section names were cut at 49 characters,
 * sending a long label's keys to a section never written.  Labels work up
 * to 64 characters and are refused, whole, beyond. */
START_TEST(labels_are_never_cut)
{
    char ini[1024], label[80];
    struct cupace_err err;
    struct cupace_config *cfg;

    memset(label, 'a', 64);
    label[64] = '\0';
    snprintf(ini, sizeof ini, "[pacer]\nname = %s\n[pacer.%s]\nplugin = fixed\ninterval = 1s\n",
             label, label);
    cfg = tu_config(ini, &err);
    ck_assert_msg(cfg != NULL, "%s", err.msg);
    ck_assert_str_eq(cfg->sections[0].label, label);
    ck_assert_str_eq(cupace_config_plugin_of(cfg, label), "fixed");
    ck_assert_uint_eq(cfg->sections[0].nkv, 1);
    cupace_config_free(cfg);
    strcat(label, "b");
    snprintf(ini, sizeof ini, "[pacer.%s]\nplugin = fixed\n", label);
    expect_error(ini, "test.ini:1:", label, "1 to 64 characters");
    snprintf(ini, sizeof ini, "[pacer]\nname = %s\n", label);
    expect_error(ini, "test.ini:2:", "name", "1 to 64 characters");
}
END_TEST

/* Regression (issue 8, bug 5): `plugin` set twice was accepted, the last
 * winning.  A key set twice is an error everywhere; --set still overrides. */
START_TEST(a_key_twice_is_refused_everywhere)
{
    struct cupace_err err;
    const char *sets[] = { "pacer.x.plugin=window" };
    struct cupace_config *cfg;

    expect_error("[pacer.x]\nplugin = fixed\n\nplugin = window\n", "test.ini:4:", "plugin",
                 "first on line 2");
    expect_error("[pacer.x]\nplugin = fixed\n[pacer.x]\ninterval = 1s\ninterval = 2s\n",
                 "test.ini:5:", "interval", "first on line 4");
    expect_error("[workload]\njobs = 1\n[engine]\nseed = 1\n[workload]\njobs = 2\n",
                 "test.ini:6:", "jobs", "first on line 2");
    cfg = cupace_config_load(tu_write("o.ini", "[pacer.x]\nplugin = fixed\n"), sets, 1, &err);
    ck_assert_msg(cfg != NULL, "%s", err.msg);
    ck_assert_str_eq(cupace_config_plugin_of(cfg, "x"), "window");
    cupace_config_free(cfg);
}
END_TEST

START_TEST(syntax_errors_name_the_line)
{
    expect_error("[engine\nseed = 1\n", "test.ini:1:", "']'", NULL);
    expect_error("[engine] seed = 1\n", "test.ini:1:", "after a section header", NULL);
    expect_error("[engine]\n = 1\n", "test.ini:2:", "key", NULL);
    expect_error("seed = 1\n", "test.ini:1:", "before any [section]", NULL);
    expect_error("[engine]\nseed = 1\n\tdevices = 2\n", "test.ini:3:", "indented", NULL);
    /* inline comments, blanks and a byte order mark are as libinih had them */
    {
        struct cupace_err err;
        struct cupace_config *cfg = tu_config("\xEF\xBB\xBF[engine] ; c\nseed=7 ; note\n"
                                              "# x\n[pacer]\npath = a;b\n", &err);

        ck_assert_msg(cfg != NULL, "%s", err.msg);
        ck_assert_uint_eq(cfg->engine.seed, 7);
        ck_assert_str_eq(cfg->pacer_path, "a;b");
        cupace_config_free(cfg);
    }
}
END_TEST

START_TEST(binary_input_is_refused)
{
    struct cupace_err err;
    const char *path = tu_write("nul.ini", "[engine]\nseed = 1\n");
    FILE *fp = fopen(path, "a");

    fputs("devices = 1", fp);
    fputc('\0', fp);
    fputs("\n", fp);
    fclose(fp);
    ck_assert_ptr_null(cupace_config_load(path, NULL, 0, &err));
    ck_assert_msg(strstr(err.msg, "nul.ini:3:") && strstr(err.msg, "NUL"), "%s", err.msg);
}
END_TEST

/* Regression (issue 8, bug 3): a trace line longer than the reader's
 * buffer was split into two jobs.  It is one row however long. */
START_TEST(long_trace_lines_are_one_row)
{
    size_t n = 10000;
    char *csv = malloc(n + 100), *p;
    struct cupace_err err;
    struct cupace_config *cfg;

    sprintf(csv, "arrival,partitions\n%*s5s,2\n1s,3%*s\n", (int)n / 2, "", (int)n / 2, "");
    tu_write("long.csv", csv);
    cfg = tu_config("[workload]\narrival = trace\ntrace = long.csv\n", &err);
    ck_assert_msg(cfg != NULL, "%s", err.msg);
    ck_assert_uint_eq(cfg->workload.ntrace_jobs, 2);
    ck_assert_uint_eq(cupace_workload_partitions(cfg), 5);
    cupace_config_free(cfg);
    p = csv + sprintf(csv, "arrival,partitions\n0,1\n1,");
    memset(p, '9', n);
    strcpy(p + n, "\n");
    tu_write("long2.csv", csv);
    expect_error("[workload]\narrival = trace\ntrace = long2.csv\n", "long2.csv:3:", "partitions",
                 NULL);
    free(csv);
}
END_TEST

/* Regression (issue 8, bug 2): a trace written backwards took quadratic
 * time to sort.  Order by arrival, equal arrivals in the order written. */
START_TEST(backwards_traces_sort_stably)
{
    size_t rows = 5001;
    char *csv = malloc(rows * 40 + 64), *p = csv;
    struct cupace_err err;
    struct cupace_config *cfg;

    p += sprintf(p, "arrival,partitions\n");
    for (size_t i = 0; i < rows; i++)   /* arrivals 2500s..0s, each twice, partitions tell the row */
        p += sprintf(p, "%zus,%zu\n", (rows - i) / 2, i % 2 + 1);
    tu_write("back.csv", csv);
    cfg = tu_config("[workload]\narrival = trace\ntrace = back.csv\n", &err);
    ck_assert_msg(cfg != NULL, "%s", err.msg);
    ck_assert_uint_eq(cfg->workload.ntrace_jobs, rows);
    for (size_t i = 1; i < rows; i++) {
        const struct cupace_trace_job *a = &cfg->workload.trace_jobs[i - 1], *b = a + 1;
        ck_assert_uint_le(a->arrival_ns, b->arrival_ns);
        if (a->arrival_ns == b->arrival_ns)
            ck_assert_uint_lt(a->partitions, b->partitions);   /* row order kept */
    }
    cupace_config_free(cfg);
    free(csv);
}
END_TEST

START_TEST(missing_file_is_named)
{
    struct cupace_err err;

    ck_assert_ptr_null(cupace_config_load("no/such/file.ini", NULL, 0, &err));
    ck_assert_msg(strstr(err.msg, "no/such/file.ini") && strstr(err.msg, "cannot open"), "%s",
                  err.msg);
    ck_assert_ptr_null(cupace_config_load(tu_dir(), NULL, 0, &err));
    ck_assert_msg(strstr(err.msg, "is a folder"), "%s", err.msg);
}
END_TEST

START_TEST(shipped_configs_load)
{
    const char *files[] = { "cupace.ini", "scenarios/two-worker-seed.ini",
                            "scenarios/porep-c2-backlog.ini", "scenarios/bursts.ini",
                            "scenarios/gpu-throttle.ini", "scenarios/synth-bound.ini",
                            "scenarios/multi-gpu-hetero.ini", "scenarios/poisson-near-capacity.ini" };
    const char *srcdir = getenv("CUPACE_TEST_SRCDIR");
    char path[1024];

    for (unsigned i = 0; i < sizeof files / sizeof files[0]; i++) {
        struct cupace_err err;
        struct cupace_config *cfg;

        snprintf(path, sizeof path, "%s/../conf/%s", srcdir ? srcdir : ".", files[i]);
        cfg = cupace_config_load(path, NULL, 0, &err);
        ck_assert_msg(cfg != NULL, "%s", err.msg);
        cupace_config_free(cfg);
    }
}
END_TEST

START_TEST(fail_at_lists_partitions_and_stages)
{
    struct cupace_err err;
    struct cupace_config *cfg = tu_config("[workload]\njobs = 3\npartitions_per_job = 4\n"
                                          "fail_at = 2:1:epilogue, 0:3:prep,0:0:synth , 1:2:kernel\n",
                                          &err);
    const struct cupace_fail_at *f;

    ck_assert_msg(cfg != NULL, "%s", err.msg);
    ck_assert_uint_eq(cfg->workload.nfail_at, 4);
    f = cfg->workload.fail_at;          /* sorted by job, then partition */
    ck_assert(f[0].job == 0 && f[0].part == 0 && f[0].stage == CUPACE_FAIL_SYNTH);
    ck_assert(f[1].job == 0 && f[1].part == 3 && f[1].stage == CUPACE_FAIL_PREP);
    ck_assert(f[2].job == 1 && f[2].part == 2 && f[2].stage == CUPACE_FAIL_KERNEL);
    ck_assert(f[3].job == 2 && f[3].part == 1 && f[3].stage == CUPACE_FAIL_EPILOGUE);
    ck_assert_str_eq(cupace_fail_stage_name(f[3].stage), "epilogue");
    cupace_config_free(cfg);
}
END_TEST

START_TEST(bad_fail_at_names_the_partition)
{
    expect_error("[workload]\nfail_at = 0:0:gpu\n", "test.ini:2:", "fail_at", "synth, prep");
    expect_error("[workload]\nfail_at = 0:0\n", "test.ini:2:", "fail_at", "JOB:PARTITION:STAGE");
    expect_error("[workload]\nfail_at = 0:x:kernel\n", "test.ini:2:", "fail_at", NULL);
    expect_error("[workload]\nfail_at = 0:0:kernel,\n", "test.ini:2:", "fail_at", NULL);
    expect_error("[workload]\nfail_at = 1:2:kernel, 1:2:synth\n", "test.ini:2:", "fail_at",
                 "at most once");
    expect_error("[workload]\njobs = 5\nfail_at = 5:0:synth\n", "test.ini:3:", "job 5 does not exist",
                 "0 to 4");
    expect_error("[workload]\npartitions_per_job = 3\nfail_at = 0:3:synth\n", "test.ini:3:",
                 "job 0 has no partition 3", "0 to 2");
    tu_write("f.csv", "arrival,partitions\n5,2\n0,1\n");
    expect_error("[workload]\narrival = trace\ntrace = f.csv\nfail_at = 0:1:prep\n", "test.ini:4:",
                 "job 0 has no partition 1", NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("conf");
    TCase *ok = tcase_create("accepts"), *bad = tcase_create("refuses");

    tcase_add_test(ok, defaults_follow_the_design);
    tcase_add_test(ok, the_whole_schema_loads);
    tcase_add_test(ok, pacer_sections_keep_keys_with_lines);
    tcase_add_test(ok, overrides_apply_and_name_themselves);
    tcase_add_test(ok, traces_load_sorted);
    tcase_add_test(ok, shipped_configs_load);
    tcase_add_test(ok, queue_section_loads_with_defaults);
    tcase_add_test(ok, fail_at_lists_partitions_and_stages);
    tcase_add_test(bad, unknown_section_names_line);
    tcase_add_test(bad, unknown_empty_section_is_refused);
    tcase_add_test(bad, unknown_key_names_key_and_line);
    tcase_add_test(bad, bare_number_duration_is_refused);
    tcase_add_test(bad, bad_size_is_refused);
    tcase_add_test(bad, out_of_range_is_refused);
    tcase_add_test(bad, bad_queue_keys_are_refused);
    tcase_add_test(bad, overflowing_values_are_refused);
    tcase_add_test(bad, bad_enum_lists_the_choices);
    tcase_add_test(bad, release_above_partition_memory);
    tcase_add_test(bad, partition_above_budget);
    tcase_add_test(bad, duplicate_key_names_first_line);
    tcase_add_test(bad, indented_continuation_is_refused);
    tcase_add_test(bad, syntax_error_names_line);
    tcase_add_test(bad, bad_change_point);
    tcase_add_test(bad, a_trace_may_start_with_a_byte_order_mark);
    tcase_add_test(bad, device_lists_must_match_devices);
    tcase_add_test(bad, bad_pacer_labels);
    tcase_add_test(bad, bad_traces_name_file_line_column);
    tcase_add_test(bad, missing_file_is_named);
    tcase_add_test(ok, long_lines_are_read_whole);
    tcase_add_test(ok, labels_are_never_cut);
    tcase_add_test(bad, a_key_twice_is_refused_everywhere);
    tcase_add_test(bad, syntax_errors_name_the_line);
    tcase_add_test(bad, binary_input_is_refused);
    tcase_add_test(ok, long_trace_lines_are_one_row);
    tcase_add_test(ok, backwards_traces_sort_stably);
    tcase_add_test(bad, bad_fail_at_names_the_partition);
    suite_add_tcase(s, ok);
    suite_add_tcase(s, bad);
    return tu_run(s);
}
