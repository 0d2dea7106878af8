/*
 * realtime.c -- the real-time engine.  (Lands with the next step.)
 */
#include "config.h"
#include "realtime.h"

int cupace_realtime(const struct cupace_config *cfg, struct cupace_pacer_instance *pacer,
                    const struct cupace_run_opts *opts, int quiet, struct cupace_result *res,
                    struct cupace_err *err)
{
    (void)pacer;
    (void)opts;
    (void)quiet;
    (void)res;
    return cupace_err_set(err, "%s: mode = realtime is not built yet; use mode = sim", cfg->path);
}
