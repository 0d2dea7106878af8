/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz.h -- what the libFuzzer harnesses share: a private folder to put the
 * input in (the loader reads files, and a config's relative trace path is
 * read from the config's folder), and the oracles that say what a correct
 * answer looks like beyond "did not crash".
 *
 * Each harness defines LLVMFuzzerTestOneInput.  Built with clang and
 * -fsanitize=fuzzer it is a fuzzer; linked with replay.c it replays its
 * corpus under `make check`.  An oracle that fails prints what it saw and
 * aborts, which libFuzzer reports as a crash with the input saved.
 */
#ifndef CUPACE_FUZZ_H
#define CUPACE_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Writes data to NAME in the harness's private folder (made on first use,
 * removed at exit) and returns the file's path. */
const char *fuzz_write(const char *name, const void *data, size_t size);

/* A NUL-terminated copy of data, to free(). */
char *fuzz_cstr(const uint8_t *data, size_t size);

/* Whether data mentions a path that could block or never end (/dev, /proc,
 * /sys): such inputs are skipped, not fed to the loader. */
int fuzz_unsafe_path(const uint8_t *data, size_t size);

/* Aborts with the message unless cond holds. */
#define FUZZ_REQUIRE(cond, ...) \
    ((cond) ? (void)0 : fuzz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__))
void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));

/* The rules every loaded configuration must keep (ranges, cross-key rules,
 * a sorted trace, arrivals that never go back in time). */
void fuzz_check_config(const struct cupace_config *cfg);

/* A refusal must be one line that starts with its origin: a file in the
 * folder `origin`, "--set", or a file that `input` (may be NULL) names. */
void fuzz_check_error(const struct cupace_err *err, const char *origin, const char *input);

/* Loads the config at path with the overrides and runs the oracles;
 * `input` is the fuzzed text (for fuzz_check_error).  Returns the config
 * (to free with cupace_config_free) or NULL. */
struct cupace_config *fuzz_load(const char *path, const char *const *sets, size_t nsets,
                               const char *input);

#endif
