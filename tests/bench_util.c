/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* bench_util.c -- see bench_util.h. */
#include "config.h"
#include "bench_util.h"

#include <stdio.h>
#include <time.h>

int bench_open(const char *ini, const char *label, struct cupace_config **cfg,
               struct cupace_pacer_instance *inst)
{
    const char *file = "bench.ini";
    struct cupace_pacer_path path;
    struct cupace_err err;
    FILE *fp = fopen(file, "w");
    int rc;

    if (!fp) {
        perror(file);
        return -1;
    }
    fputs(ini, fp);
    fclose(fp);
    *cfg = cupace_config_load(file, NULL, 0, &err);
    remove(file);
    if (!*cfg) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    cupace_pacer_path_init(&path, *cfg);
    rc = cupace_pacer_instance_create(inst, *cfg, &path, label, &err);
    cupace_pacer_path_free(&path);
    if (rc < 0) {
        fprintf(stderr, "%s\n", err.msg);
        cupace_config_free(*cfg);
    }
    return rc;
}

void bench_close(struct cupace_config *cfg, struct cupace_pacer_instance *inst)
{
    cupace_pacer_instance_destroy(inst);
    cupace_config_free(cfg);
}

double bench_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
