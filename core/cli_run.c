/*
 * cli_run.c -- `cupace run` and `cupace ab`.
 */
#include "config.h"

#include <stdio.h>

#include "cli.h"

int cupace_cli_run(struct cupace_cli *cli, int ab)
{
    (void)cli;
    fprintf(stderr, "cupace: %s: not built yet (the simulator lands next)\n", ab ? "ab" : "run");
    return CUPACE_EXIT_USAGE;
}
