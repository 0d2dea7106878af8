/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz_conf.c -- libFuzzer harness: the configuration loader.
 *
 * The input is a cupace.ini.  Beside it lies a valid trace, t.csv, so that
 * a config naming it reaches the trace reader and the cross-key checks
 * after it.  The loader must either accept the file, with every rule of
 * conf.h holding (fuzz_check_config), or refuse it with one line naming the
 * file (fuzz_check_error).
 */
#include "config.h"
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

static const char trace[] = "arrival,partitions,synth_time\n0,2,\n1.5,1,3s\n# a comment\n0.5,3,\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int have_trace;
    const char *path;
    char *text;

    if (fuzz_unsafe_path(data, size))
        return 0;
    if (!have_trace) {
        fuzz_write("t.csv", trace, strlen(trace));
        have_trace = 1;
    }
    path = fuzz_write("cupace.ini", data, size);
    text = fuzz_cstr(data, size);
    cupace_config_free(fuzz_load(path, NULL, 0, text));
    free(text);
    return 0;
}
