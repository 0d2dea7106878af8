/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz_trace.c -- libFuzzer harness: the trace reader.
 *
 * The input is a trace CSV, t.csv, named by a fixed config beside it
 * (`arrival = trace`).  Besides the loader's oracles (rows sorted by
 * arrival, each with a partition at least; a refusal names the file), an
 * accepted trace must have exactly one job per row written: a row that is
 * split, merged or dropped is a wrong workload that looks right.
 *
 * A row, for this count, is a line (up to '\n', without a trailing '\r',
 * up to a NUL) that is not blank and does not start with '#', after the
 * header row; a byte-order mark opening the file is no part of its first
 * line.
 */
#include "config.h"
#include "fuzz.h"

#include <ctype.h>
#include <string.h>

static const char conf[] = "[workload]\narrival = trace\ntrace = t.csv\n";

static size_t count_rows(const uint8_t *data, size_t size)
{
    size_t rows = 0, i = size >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;

    while (i < size) {
        size_t end = i, stop;

        while (end < size && data[end] != '\n')
            end++;
        stop = end;
        if (memchr(data + i, '\0', stop - i))
            stop = (size_t)((const uint8_t *)memchr(data + i, '\0', stop - i) - data);
        if (stop == end && stop > i && data[stop - 1] == '\r')
            stop--;
        while (i < stop && isspace(data[i]))
            i++;
        if (i < stop && data[i] != '#')
            rows++;
        i = end + 1;
    }
    return rows ? rows - 1 : 0;     /* the first is the header */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *path;
    struct cupace_config *cfg;

    if (!path)
        path = strdup(fuzz_write("cupace.ini", conf, strlen(conf)));
    fuzz_write("t.csv", data, size);
    cfg = fuzz_load(path, NULL, 0, NULL);
    if (cfg) {
        size_t rows = count_rows(data, size);
        FUZZ_REQUIRE(cfg->workload.ntrace_jobs == rows, "%zu rows written, %zu jobs read", rows,
                     cfg->workload.ntrace_jobs);
    }
    cupace_config_free(cfg);
    return 0;
}
