/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * replay.c -- runs a harness over files without libFuzzer, so that `make
 * check` replays the seed corpora and every input that once crashed, with
 * whatever compiler and sanitizers the build has.
 *
 *   replay_conf FILE|FOLDER...
 *
 * Each file is one input; a folder stands for the files in it.  A harness
 * that finds a fault aborts, and the test with it.
 */
#include "config.h"
#include "fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int replay_file(const char *path)
{
    FILE *fp = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0, n;

    if (!fp) {
        perror(path);
        return -1;
    }
    do {
        if (len == cap) {
            cap = cap ? cap * 2 : 4096;
            buf = realloc(buf, cap);
            if (!buf)
                abort();
        }
        n = fread(buf + len, 1, cap - len, fp);
        len += n;
    } while (n > 0);
    fclose(fp);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

static int replay(const char *path, unsigned *count)
{
    struct stat st;
    DIR *d;
    struct dirent *e;
    int rc = 0;

    if (stat(path, &st) < 0) {
        perror(path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return replay_file(path);
    }
    d = opendir(path);
    if (!d) {
        perror(path);
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        char sub[4096];
        if (e->d_name[0] == '.')
            continue;
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        if (replay(sub, count) < 0)
            rc = -1;
    }
    closedir(d);
    return rc;
}

int main(int argc, char **argv)
{
    unsigned count = 0;
    int rc = 0;

    for (int i = 1; i < argc; i++)
        if (replay(argv[i], &count) < 0)
            rc = 1;
    printf("%s: %u inputs replayed\n", argv[0], count);
    return rc;
}
