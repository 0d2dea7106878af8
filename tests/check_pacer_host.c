/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* check_pacer_host.c -- the loader: every kind of bad controller is refused
 * with its file and reason; instances, params and the search path work; the
 * ABI's layout is pinned. */
#include "config.h"

#include <check.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pacer_host.h"
#include "report.h"
#include "result.h"
#include "text.h"
#include "testutil.h"

static void expect_refused(const char *name, const char *n1, const char *n2)
{
    char file[1024];
    struct cupace_err err = { "" };
    const struct cupace_pacer *ops = NULL;
    void *dl = NULL;

    snprintf(file, sizeof file, "%s/%s.so", tu_test_plugins_dir(), name);
    ck_assert_int_eq(cupace_pacer_open(file, &dl, &ops, &err), -1);
    ck_assert_ptr_null(dl);
    ck_assert_msg(strstr(err.msg, file), "file not named: %s", err.msg);
    ck_assert_msg(strstr(err.msg, n1), "'%s' not in '%s'", n1, err.msg);
    if (n2)
        ck_assert_msg(strstr(err.msg, n2), "'%s' not in '%s'", n2, err.msg);
}

START_TEST(wrong_abi_is_refused)
{
    expect_refused("bad_abi", "ABI 2", "rebuild");
}
END_TEST

START_TEST(short_size_is_refused)
{
    expect_refused("short_size", "24 bytes", "rebuild");
}
END_TEST

START_TEST(tiny_symbol_is_refused)
{
    expect_refused("tiny_symbol", "4 bytes", NULL);
}
END_TEST

START_TEST(missing_op_is_refused)
{
    expect_refused("missing_op", "update", "NULL");
}
END_TEST

START_TEST(missing_symbol_is_refused)
{
    expect_refused("no_symbol", "cupace_pacer_entry", "not a cupace controller");
}
END_TEST

START_TEST(not_elf_is_refused)
{
    const char *f = tu_write("notelf.so", "this is a text file, not a controller\n");
    struct cupace_err err;
    const struct cupace_pacer *ops;
    void *dl = NULL;

    ck_assert_int_eq(cupace_pacer_open(f, &dl, &ops, &err), -1);
    ck_assert_msg(strstr(err.msg, f) && strstr(err.msg, "not a shared object"), "%s", err.msg);
}
END_TEST

START_TEST(missing_file_is_refused)
{
    struct cupace_err err;
    const struct cupace_pacer *ops;
    void *dl = NULL;

    ck_assert_int_eq(cupace_pacer_open("nowhere/gone.so", &dl, &ops, &err), -1);
    ck_assert_msg(strstr(err.msg, "nowhere/gone.so"), "%s", err.msg);
}
END_TEST

/* Creates LABEL from an INI text whose [pacer] path is the test plugins. */
static int make_instance(struct cupace_pacer_instance *inst, const char *ini_body, const char *label,
                         struct cupace_err *err, struct cupace_config **cfgp)
{
    struct cupace_pacer_path path;
    struct cupace_config *cfg = tu_config_with_plugins(ini_body);
    int rc;

    cupace_pacer_path_init(&path, cfg);
    rc = cupace_pacer_instance_create(inst, cfg, &path, label, err);
    cupace_pacer_path_free(&path);
    *cfgp = cfg;
    return rc;
}

START_TEST(init_failure_gives_reason)
{
    struct cupace_pacer_instance inst;
    struct cupace_err err;
    struct cupace_config *cfg;

    ck_assert_int_eq(make_instance(&inst, "", "init_fails", &err, &cfg), -1);
    ck_assert_msg(strstr(err.msg, "init_fails") && strstr(err.msg, "no GPU budget configured"), "%s",
                  err.msg);
    cupace_config_free(cfg);
}
END_TEST

/* Whether S is plain text (text.h): valid UTF-8, no control character. */
static int is_plain(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    while (*p) {
        size_t n = cupace_utf8_len(p);
        if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7F)) || (n == 2 && p[0] == 0xC2 && p[1] < 0xA0))
            return 0;
        p += n;
    }
    return 1;
}

/* A controller's init error full of hostile bytes, filling the buffer to
 * the last byte without a NUL: the message names it and is plain text. */
START_TEST(hostile_init_text_is_made_plain)
{
    struct cupace_pacer_instance inst;
    struct cupace_err err;
    struct cupace_config *cfg;

    ck_assert_int_eq(make_instance(&inst, "[pacer.h]\nplugin = hostile\nfail = yes\n", "h", &err,
                                   &cfg), -1);
    ck_assert_msg(strstr(err.msg, "controller 'h'") && strstr(err.msg, "init failed: q"), "%s",
                  err.msg);
    ck_assert_msg(is_plain(err.msg), "%s", err.msg);
    cupace_pacer_instance_destroy(&inst);
    cupace_config_free(cfg);
}
END_TEST

/* Writing past the error buffer it was lent is caught and refused. */
START_TEST(init_writing_past_its_buffer_is_refused)
{
    struct cupace_pacer_instance inst;
    struct cupace_err err;
    struct cupace_config *cfg;

    ck_assert_int_eq(make_instance(&inst, "[pacer.h]\nplugin = hostile\ninit_overrun = yes\n", "h",
                                   &err, &cfg), -1);
    ck_assert_msg(strstr(err.msg, "controller 'h'") && strstr(err.msg, "wrote past"), "%s",
                  err.msg);
    cupace_pacer_instance_destroy(&inst);
    cupace_config_free(cfg);
}
END_TEST

/* Runs the hostile controller; returns its JSON report (malloc'd). */
static char *hostile_report(const char *body, struct cupace_result *r, const char *config)
{
    struct cupace_config *cfg = tu_config_with_plugins(body);
    struct cupace_report_meta meta = { .config = config, .mode = "sim", .seed = 1 };
    char *text = NULL;
    size_t len = 0;
    FILE *fp;

    tu_run_cfg(cfg, "h", r);
    fp = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(fp);
    cupace_report_json(fp, &meta, r, 1);
    fclose(fp);
    cupace_config_free(cfg);
    return text;
}

/* describe() fills its buffer with hostile bytes, no NUL, and claims ten
 * times the length: the state is plain, cut to the length, and the JSON
 * report (with a config path that is not UTF-8 either) parses. */
START_TEST(hostile_describe_cannot_break_the_report)
{
    struct cupace_result r;
    char *json = hostile_report("[pacer.h]\nplugin = hostile\n[workload]\njobs = 2\n", &r,
                                "odd\xff\xfe\"name\n.ini");

    ck_assert_msg(r.pacer_state[0] == 'q' && strlen(r.pacer_state) == sizeof r.pacer_state - 1,
                  "%zu: %s", strlen(r.pacer_state), r.pacer_state);
    ck_assert_msg(is_plain(r.pacer_state), "%s", r.pacer_state);
    ck_assert_msg(tu_json_valid(json), "%s", json);
    ck_assert(strstr(json, "\"pacer_state\": \"q\\\"b\\\\n"));
    ck_assert(strstr(json, "odd\\ufffd\\ufffd\\\"name\\u000a.ini"));
    ck_assert(r.invariants_ok);
    free(json);
    cupace_result_free(&r);
    /* and the checker itself refuses what the report must never hold */
    ck_assert(!tu_json_valid("{\"a\": \"\xff\"}"));
    ck_assert(!tu_json_valid("{\"a\": \"x\ny\"}"));
    ck_assert(!tu_json_valid("{\"a\": \"x\"y\"}"));
    ck_assert(tu_json_valid("{\"a\": [1, -2.5e3, true, null, \"\\u00e9\xc3\xa9\"]}"));
}
END_TEST

START_TEST(describe_writing_past_its_buffer_is_caught)
{
    struct cupace_result r;
    char *json = hostile_report("[pacer.h]\nplugin = hostile\ndescribe_overrun = yes\n"
                                "[workload]\njobs = 1\n", &r, "x.ini");

    ck_assert_msg(strstr(r.pacer_state, "wrote past"), "%s", r.pacer_state);
    ck_assert_msg(tu_json_valid(json), "%s", json);
    free(json);
    cupace_result_free(&r);
}
END_TEST

START_TEST(name_that_is_a_path_opens_nothing)
{
    struct cupace_pacer_path path = { NULL, 0 };
    struct cupace_err err;
    char file[256] = "";

    cupace_pacer_path_init(&path, NULL);
    ck_assert_int_eq(cupace_pacer_find(&path, "../plugins/.libs/fixed", file, sizeof file, &err), -1);
    ck_assert_msg(strstr(err.msg, "not a plain name"), "%s", err.msg);
    ck_assert_str_eq(file, "");
    ck_assert_int_eq(cupace_pacer_find(&path, "fixed.so", file, sizeof file, &err), -1);
    cupace_pacer_path_free(&path);
}
END_TEST

START_TEST(missing_controller_lists_the_path)
{
    struct cupace_pacer_instance inst;
    struct cupace_err err;
    struct cupace_config *cfg;

    ck_assert_int_eq(make_instance(&inst, "", "nosuch", &err, &cfg), -1);
    ck_assert_msg(strstr(err.msg, "nosuch.so") && strstr(err.msg, "CUPACE_PACER_PATH"), "%s",
                  err.msg);
    cupace_config_free(cfg);
}
END_TEST

/* A controller's file not found: the message names the line of the key
 * that asks for it, or the section header where its label is the name. */
START_TEST(missing_controller_names_the_line_that_asks_for_it)
{
    struct cupace_pacer_instance inst;
    struct cupace_err err;
    struct cupace_config *cfg;

    ck_assert_int_eq(make_instance(&inst, "[pacer.g]\nplugin = nosuch\n", "g", &err, &cfg), -1);
    ck_assert_msg(strstr(err.msg, ":4: [pacer.g] plugin: controller 'nosuch': no nosuch.so"), "%s",
                  err.msg);
    cupace_config_free(cfg);
    ck_assert_int_eq(make_instance(&inst, "[pacer.nosuch]\nwindow = 4\n", "nosuch", &err, &cfg), -1);
    ck_assert_msg(strstr(err.msg, ":3: [pacer.nosuch]: controller 'nosuch': no nosuch.so"), "%s",
                  err.msg);
    cupace_config_free(cfg);
}
END_TEST

/* A controller that refuses its keys at init says why in its own words;
 * where those begin with one of its keys, the message gives that key's
 * line, and the section's otherwise. */
START_TEST(init_failure_names_the_line_of_the_key_it_refuses)
{
    struct cupace_pacer_instance inst;
    struct cupace_err err;
    struct cupace_config *cfg;

    ck_assert_int_eq(make_instance(&inst, "[pacer.proctime]\nkp = 0.5\nalpha = 7\n", "proctime",
                                   &err, &cfg), -1);
    ck_assert_msg(strstr(err.msg, ":5: [pacer.proctime] alpha: controller 'proctime'") &&
                  strstr(err.msg, "init failed: alpha must be"), "%s", err.msg);
    cupace_config_free(cfg);
    ck_assert_int_eq(make_instance(&inst, "[pacer.f]\nplugin = init_fails\n", "f", &err, &cfg), -1);
    ck_assert_msg(strstr(err.msg, ":3: [pacer.f]: controller 'f'") &&
                  strstr(err.msg, "no GPU budget configured"), "%s", err.msg);
    cupace_config_free(cfg);
}
END_TEST

/* A reason about one of two keys checked together names that key's line,
 * not the other's: kp and ki were once refused in one phrase that began
 * with kp, wherever the bad value was. */
START_TEST(init_failure_names_the_key_at_fault_not_its_neighbour)
{
    struct cupace_pacer_instance inst;
    struct cupace_err err;
    struct cupace_config *cfg;

    ck_assert_int_eq(make_instance(&inst, "[pacer.proctime]\nkp = 0.5\ntarget = 8\nki = 200\n",
                                   "proctime", &err, &cfg), -1);
    ck_assert_msg(strstr(err.msg, ":6: [pacer.proctime] ki: controller 'proctime'") &&
                  strstr(err.msg, "init failed: ki must be"), "%s", err.msg);
    cupace_config_free(cfg);
}
END_TEST

START_TEST(misnamed_file_is_refused)
{
    struct cupace_pacer_instance inst;
    struct cupace_err err;
    struct cupace_config *cfg;

    ck_assert_int_eq(make_instance(&inst, "", "misnamed", &err, &cfg), -1);
    ck_assert_msg(strstr(err.msg, "someone_else"), "%s", err.msg);
    cupace_config_free(cfg);
}
END_TEST

START_TEST(unknown_key_is_refused_by_name)
{
    struct cupace_pacer_instance inst;
    struct cupace_err err;
    struct cupace_config *cfg;

    ck_assert_int_eq(make_instance(&inst, "[pacer.fixed]\ninterval = 1s\nintervall = 2s\n", "fixed",
                                   &err, &cfg), -1);
    ck_assert_msg(strstr(err.msg, ":5:") && strstr(err.msg, "intervall") &&
                  strstr(err.msg, "unknown key"), "%s", err.msg);
    cupace_config_free(cfg);
}
END_TEST

START_TEST(malformed_value_is_named)
{
    struct cupace_pacer_instance inst;
    struct cupace_err err;
    struct cupace_config *cfg;

    ck_assert_int_eq(make_instance(&inst, "[pacer.fixed]\ninterval = 3\n", "fixed", &err, &cfg), -1);
    ck_assert_msg(strstr(err.msg, ":4:") && strstr(err.msg, "[pacer.fixed] interval") &&
                  strstr(err.msg, "unit"), "%s", err.msg);
    cupace_config_free(cfg);
}
END_TEST

START_TEST(instances_have_their_own_keys)
{
    struct cupace_pacer_instance a, b;
    struct cupace_err err;
    struct cupace_config *cfg, *cfg2;
    struct cupace_signals s;
    const char *body = "[pacer.slow]\nplugin = fixed\ninterval = 2s\n"
                       "[pacer.greedy]\nplugin = fixed\ninterval = 0\n";

    memset(&s, 0, sizeof s);
    ck_assert_msg(make_instance(&a, body, "slow", &err, &cfg) == 0, "%s", err.msg);
    ck_assert_msg(make_instance(&b, body, "greedy", &err, &cfg2) == 0, "%s", err.msg);
    ck_assert_uint_eq(a.ops->interval_ns(a.state, &s), 2000000000ULL);
    ck_assert_uint_eq(b.ops->interval_ns(b.state, &s), 0);
    ck_assert_ptr_ne(a.state, b.state);
    ck_assert_str_eq(a.plugin, "fixed");
    ck_assert_str_eq(a.label, "slow");
    cupace_pacer_instance_destroy(&a);
    cupace_pacer_instance_destroy(&b);
    cupace_config_free(cfg);
    cupace_config_free(cfg2);
}
END_TEST

START_TEST(fini_runs_and_state_is_zeroed)
{
    struct cupace_pacer_instance inst;
    struct cupace_err err;
    struct cupace_config *cfg;
    struct cupace_signals s;

    memset(&s, 0, sizeof s);
    ck_assert_msg(make_instance(&inst, "[pacer.holdall]\nburst = 3\n", "holdall", &err, &cfg) == 0,
                  "%s", err.msg);
    ck_assert_uint_eq(inst.ops->interval_ns(inst.state, &s), 0);
    s.dispatched = 3;
    ck_assert_uint_eq(inst.ops->interval_ns(inst.state, &s), CUPACE_PACE_HOLD);
    cupace_pacer_instance_destroy(&inst);
    ck_assert_ptr_null(inst.state);
    cupace_config_free(cfg);
}
END_TEST

START_TEST(config_path_comes_before_environment)
{
    struct cupace_pacer_path path;
    struct cupace_err err;
    struct cupace_config *cfg = tu_config("[pacer]\npath = here : /abs/there\n", &err);

    ck_assert_ptr_nonnull(cfg);
    setenv("CUPACE_PACER_PATH", "/env/one:/env/two", 1);
    cupace_pacer_path_init(&path, cfg);
    ck_assert_uint_ge(path.ndirs, 5);
    ck_assert_msg(strstr(path.dirs[0], "/here") && strstr(path.dirs[0], tu_dir()), "%s",
                  path.dirs[0]);
    ck_assert_str_eq(path.dirs[1], "/abs/there");
    ck_assert_str_eq(path.dirs[2], "/env/one");
    ck_assert_str_eq(path.dirs[3], "/env/two");
    ck_assert_str_eq(path.dirs[4], CUPACE_PACERDIR);
    cupace_pacer_path_free(&path);
    unsetenv("CUPACE_PACER_PATH");
    cupace_config_free(cfg);
}
END_TEST

struct seen {
    int ok, refused, fixed_ok, bad_abi_refused;
};

static void on_found(void *ctx, const char *file, const struct cupace_pacer *ops, const char *reason,
                     const char *shadow)
{
    struct seen *s = ctx;

    (void)shadow;
    if (ops) {
        s->ok++;
        s->fixed_ok |= strcmp(ops->name, "fixed") == 0;
    } else {
        s->refused++;
        ck_assert_ptr_nonnull(reason);
        s->bad_abi_refused |= strstr(file, "bad_abi.so") && strstr(reason, "ABI");
    }
}

START_TEST(scan_lists_found_and_refused)
{
    char abs1[PATH_MAX], abs2[PATH_MAX];
    char *dirs[2];
    struct cupace_pacer_path path;
    struct seen seen = { 0, 0, 0, 0 };

    ck_assert_ptr_nonnull(realpath(tu_test_plugins_dir(), abs1));
    ck_assert_ptr_nonnull(realpath(tu_plugins_dir(), abs2));
    dirs[0] = abs1;
    dirs[1] = abs2;
    path.dirs = dirs;
    path.ndirs = 2;
    cupace_pacer_scan(&path, on_found, &seen);
    ck_assert_int_ge(seen.ok, 5);           /* four shipped + test-only good ones */
    ck_assert_int_ge(seen.refused, 5);
    ck_assert(seen.fixed_ok);
    ck_assert(seen.bad_abi_refused);
}
END_TEST

/* The ABI is a contract with code we do not build: pin its layout. */
START_TEST(abi_layout_is_pinned)
{
    ck_assert_uint_eq(CUPACE_PACER_ABI, 1);
    ck_assert_uint_eq(offsetof(struct cupace_pacer, abi), 0);
    ck_assert_uint_eq(offsetof(struct cupace_pacer, size), 4);
    ck_assert_uint_eq(offsetof(struct cupace_pacer, name), 8);
    ck_assert_uint_eq(offsetof(struct cupace_pacer, summary), 8 + sizeof(void *));
    ck_assert_uint_eq(offsetof(struct cupace_pacer, state_size), 8 + 2 * sizeof(void *));
    ck_assert_uint_eq(offsetof(struct cupace_pacer, init), 8 + 3 * sizeof(void *));
    ck_assert_uint_eq(offsetof(struct cupace_pacer, fini), 8 + 7 * sizeof(void *));
    ck_assert_uint_eq(sizeof(struct cupace_pacer), 8 + 8 * sizeof(void *));
    ck_assert_uint_eq(offsetof(struct cupace_signals, now_ns), 0);
    ck_assert_uint_eq(offsetof(struct cupace_signals, num_devices), 8);
    ck_assert_uint_eq(offsetof(struct cupace_signals, num_gpu_workers), 12);
    ck_assert_uint_eq(offsetof(struct cupace_signals, pending), 16);
    ck_assert_uint_eq(offsetof(struct cupace_signals, gpu_done), 16 + 7 * 8);
    ck_assert_uint_eq(offsetof(struct cupace_signals, mem_budget), 16 + 12 * 8);
    ck_assert_uint_eq(sizeof(struct cupace_signals), 16 + 13 * 8);
    ck_assert_uint_eq(offsetof(struct cupace_params, get), sizeof(void *));
    ck_assert_uint_eq(sizeof(struct cupace_params), 6 * sizeof(void *));
    ck_assert_uint_eq(CUPACE_PACE_HOLD, UINT64_MAX);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pacer_host");
    TCase *bad = tcase_create("refuses"), *ok = tcase_create("loads");

    tcase_add_test(bad, wrong_abi_is_refused);
    tcase_add_test(bad, short_size_is_refused);
    tcase_add_test(bad, tiny_symbol_is_refused);
    tcase_add_test(bad, missing_op_is_refused);
    tcase_add_test(bad, missing_symbol_is_refused);
    tcase_add_test(bad, not_elf_is_refused);
    tcase_add_test(bad, missing_file_is_refused);
    tcase_add_test(bad, init_failure_gives_reason);
    tcase_add_test(bad, hostile_init_text_is_made_plain);
    tcase_add_test(bad, init_writing_past_its_buffer_is_refused);
    tcase_add_test(bad, hostile_describe_cannot_break_the_report);
    tcase_add_test(bad, describe_writing_past_its_buffer_is_caught);
    tcase_add_test(bad, name_that_is_a_path_opens_nothing);
    tcase_add_test(bad, missing_controller_lists_the_path);
    tcase_add_test(bad, missing_controller_names_the_line_that_asks_for_it);
    tcase_add_test(bad, init_failure_names_the_line_of_the_key_it_refuses);
    tcase_add_test(bad, init_failure_names_the_key_at_fault_not_its_neighbour);
    tcase_add_test(bad, misnamed_file_is_refused);
    tcase_add_test(bad, unknown_key_is_refused_by_name);
    tcase_add_test(bad, malformed_value_is_named);
    tcase_add_test(ok, instances_have_their_own_keys);
    tcase_add_test(ok, fini_runs_and_state_is_zeroed);
    tcase_add_test(ok, config_path_comes_before_environment);
    tcase_add_test(ok, scan_lists_found_and_refused);
    tcase_add_test(ok, abi_layout_is_pinned);
    suite_add_tcase(s, bad);
    suite_add_tcase(s, ok);
    return tu_run(s);
}
