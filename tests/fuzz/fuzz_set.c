/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz_set.c -- libFuzzer harness: `--set SECTION.KEY=VALUE` overrides.
 *
 * The input is up to 16 overrides, one per line, applied to a fixed config
 * that has an instance section ([pacer.greedy]) and a trace beside it, as
 * `cupace run CONFIG --set ...` would.  The oracles are the loader's (see
 * fuzz_conf.c); a refused override must be named in the message.
 */
#include "config.h"
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#define MAX_SETS 16

static const char conf[] = "[engine]\ndevices = 2\n\n[pacer.greedy]\nplugin = fixed\n"
                           "interval = 0\n\n[workload]\njobs = 3\n";
static const char trace[] = "arrival,partitions,gpu_kernel\n2s,2,1s\n0,1,\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *path;
    const char *sets[MAX_SETS];
    size_t nsets = 0;
    char *text, *whole, *p;

    if (fuzz_unsafe_path(data, size))
        return 0;
    if (!path) {
        fuzz_write("t.csv", trace, strlen(trace));
        path = strdup(fuzz_write("cupace.ini", conf, strlen(conf)));
    }
    text = fuzz_cstr(data, size);
    whole = fuzz_cstr(data, size);
    for (p = text; nsets < MAX_SETS; ) {
        char *nl = strchr(p, '\n');
        sets[nsets++] = p;
        if (!nl)
            break;
        *nl = '\0';
        p = nl + 1;
    }
    cupace_config_free(fuzz_load(path, sets, nsets, whole));
    free(whole);
    free(text);
    return 0;
}
