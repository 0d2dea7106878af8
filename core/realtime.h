/*
 * realtime.h -- the real-time engine (mode = realtime): threads, a real
 * clock, real waiting; the pipeline state machine of pipeline.h driven from
 * a dispatcher thread, a synthesis pool and GPU workers.
 */
#ifndef CUPACE_REALTIME_H
#define CUPACE_REALTIME_H

#include "conf.h"
#include "error.h"
#include "pacer_host.h"
#include "result.h"
#include "sim.h"

int cupace_realtime(const struct cupace_config *cfg, struct cupace_pacer_instance *pacer,
                    const struct cupace_run_opts *opts, int quiet, struct cupace_result *res,
                    struct cupace_err *err);

#endif
