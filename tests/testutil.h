/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * testutil.h -- helpers shared by the Check suites: scratch files inside the
 * build tree (make check writes nothing outside it), and configs from text.
 */
#ifndef CUPACE_TESTUTIL_H
#define CUPACE_TESTUTIL_H

#include <check.h>

#include "conf.h"
#include "error.h"

/* Writes CONTENT to NAME in this process's scratch folder; returns the path
 * (malloc'd, freed at exit). */
const char *tu_write(const char *name, const char *content);

/* The scratch folder itself (created on first use). */
const char *tu_dir(void);

/* Loads INI text as a config file; NULL with err set on failure. */
struct cupace_config *tu_config(const char *ini, struct cupace_err *err);

/* INI text behind a [pacer] path of the shipped and the test-only
 * controllers (absolute paths). */
struct cupace_config *tu_config_with_plugins(const char *body);

/* Runs LABEL on cfg, in the config's mode (quietly); asserts it ran. */
struct cupace_result;
void tu_run_cfg(struct cupace_config *cfg, const char *label, struct cupace_result *res);
/* The same, with the stop requests of `stop` (sim.h). */
void tu_run_cfg_stop(struct cupace_config *cfg, const char *label, int *stop,
                     struct cupace_result *res);
/* The same, with the run options OPTS (a series recorded, a stop). */
struct cupace_run_opts;
void tu_run_cfg_opts(struct cupace_config *cfg, const char *label,
                     const struct cupace_run_opts *opts, struct cupace_result *res);

/* Folders of the shipped controllers and of the test-only ones. */
const char *tu_plugins_dir(void);
const char *tu_test_plugins_dir(void);

/* Whether TEXT is one valid JSON value (strict: UTF-8, no raw control
 * characters in strings, nothing after it). */
int tu_json_valid(const char *text);

/* Runs a suite; returns the exit status for main. */
int tu_run(Suite *s);

#endif
