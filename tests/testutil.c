/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* testutil.c -- see testutil.h. */
#include "config.h"
#include "testutil.h"
#include "pacer_host.h"
#include "realtime.h"
#include "result.h"
#include "sim.h"
#include "text.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char scratch[512];

const char *tu_dir(void)
{
    if (!scratch[0]) {
        snprintf(scratch, sizeof scratch, "tmp-check-%ld", (long)getpid());
        mkdir(scratch, 0700);
    }
    return scratch;
}

const char *tu_write(const char *name, const char *content)
{
    static char path[64][1024];
    static unsigned next;
    char *p = path[next++ % 64];
    FILE *fp;

    snprintf(p, 1024, "%s/%s", tu_dir(), name);
    fp = fopen(p, "w");
    ck_assert_ptr_nonnull(fp);
    fputs(content, fp);
    fclose(fp);
    return p;
}

struct cupace_config *tu_config(const char *ini, struct cupace_err *err)
{
    return cupace_config_load(tu_write("test.ini", ini), NULL, 0, err);
}

const char *tu_plugins_dir(void)
{
    const char *d = getenv("CUPACE_TEST_SHIPPED");
    return d ? d : "../plugins/.libs";
}

const char *tu_test_plugins_dir(void)
{
    const char *d = getenv("CUPACE_TEST_PLUGINS");
    return d ? d : "plugins/.libs";
}

int tu_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

struct cupace_config *tu_config_with_plugins(const char *body)
{
    char *ini, a[PATH_MAX], b[PATH_MAX];
    struct cupace_err err;
    struct cupace_config *cfg;

    ck_assert_ptr_nonnull(realpath(tu_plugins_dir(), a));
    ck_assert_ptr_nonnull(realpath(tu_test_plugins_dir(), b));
    ini = malloc(strlen(a) + strlen(b) + strlen(body) + 32);   /* any checkout path, whole */
    ck_assert_ptr_nonnull(ini);
    sprintf(ini, "[pacer]\npath = %s:%s\n%s", a, b, body);
    cfg = tu_config(ini, &err);
    free(ini);
    ck_assert_msg(cfg != NULL, "%s", err.msg);
    return cfg;
}

void tu_run_cfg(struct cupace_config *cfg, const char *label, struct cupace_result *res)
{
    tu_run_cfg_stop(cfg, label, NULL, res);
}

void tu_run_cfg_stop(struct cupace_config *cfg, const char *label, int *stop,
                     struct cupace_result *res)
{
    struct cupace_run_opts opts = { .series_step_ns = 1000000000ULL, .stop = stop };

    tu_run_cfg_opts(cfg, label, &opts, res);
}

void tu_run_cfg_opts(struct cupace_config *cfg, const char *label,
                     const struct cupace_run_opts *opts, struct cupace_result *res)
{
    struct cupace_pacer_path path;
    struct cupace_pacer_instance inst;
    struct cupace_err err;
    int rc;

    memset(res, 0, sizeof *res);
    cupace_pacer_path_init(&path, cfg);
    ck_assert_msg(cupace_pacer_instance_create(&inst, cfg, &path, label, &err) == 0, "%s", err.msg);
    cupace_pacer_path_free(&path);
    if (cfg->engine.mode == CUPACE_MODE_SIM)
        rc = cupace_simulate(cfg, &inst, opts, res, &err);
    else
        rc = cupace_realtime(cfg, &inst, opts, res, &err);
    ck_assert_msg(rc == 0, "%s", err.msg);
    cupace_pacer_instance_destroy(&inst);
}

/* ---- a strict JSON checker (RFC 8259), for the reports ----------------- */

static int js_value(const char **p, int depth);

static void js_ws(const char **p)
{
    while (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r')
        (*p)++;
}

static int js_string(const char **p)
{
    const unsigned char *s = (const unsigned char *)*p;

    if (*s++ != '"')
        return 0;
    while (*s != '"') {
        if (*s < 0x20)
            return 0;                   /* a raw control character */
        if (*s == '\\') {
            s++;
            if (*s == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!isxdigit(s[i]))
                        return 0;
                s += 5;
            } else if (strchr("\"\\/bfnrt", *s) && *s) {
                s++;
            } else {
                return 0;
            }
        } else if (*s < 0x80) {
            s++;
        } else {
            size_t n = cupace_utf8_len(s);
            if (n == 0)
                return 0;               /* invalid UTF-8 */
            s += n;
        }
    }
    *p = (const char *)s + 1;
    return 1;
}

static int js_number(const char **p)
{
    char *end;

    if (**p != '-' && !isdigit((unsigned char)**p))
        return 0;
    strtod(*p, &end);
    if (end == *p)
        return 0;
    *p = end;
    return 1;
}

static int js_list(const char **p, int depth, char close, int object)
{
    (*p)++;
    js_ws(p);
    if (**p == close) {
        (*p)++;
        return 1;
    }
    for (;;) {
        js_ws(p);
        if (object) {
            if (!js_string(p))
                return 0;
            js_ws(p);
            if (*(*p)++ != ':')
                return 0;
        }
        if (!js_value(p, depth + 1))
            return 0;
        js_ws(p);
        if (**p == ',') {
            (*p)++;
            continue;
        }
        if (**p != close)
            return 0;
        (*p)++;
        return 1;
    }
}

static int js_value(const char **p, int depth)
{
    js_ws(p);
    if (depth > 64)
        return 0;
    switch (**p) {
    case '{':
        return js_list(p, depth, '}', 1);
    case '[':
        return js_list(p, depth, ']', 0);
    case '"':
        return js_string(p);
    case 't':
        return strncmp(*p, "true", 4) == 0 ? (*p += 4, 1) : 0;
    case 'f':
        return strncmp(*p, "false", 5) == 0 ? (*p += 5, 1) : 0;
    case 'n':
        return strncmp(*p, "null", 4) == 0 ? (*p += 4, 1) : 0;
    default:
        return js_number(p);
    }
}

int tu_json_valid(const char *text)
{
    const char *p = text;

    if (!js_value(&p, 0))
        return 0;
    js_ws(&p);
    return *p == '\0';
}
