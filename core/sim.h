/*
 * sim.h -- the discrete-event simulator (mode = sim): virtual time,
 * deterministic, the pipeline state machine driven from an event queue.
 */
#ifndef CUPACE_SIM_H
#define CUPACE_SIM_H

#include "conf.h"
#include "error.h"
#include "pacer_host.h"
#include "result.h"

struct cupace_run_opts {
    int record_series;              /* keep a time series in the result */
    uint64_t series_step_ns;        /* at most one sample per step */
};

/* Runs the workload of cfg under the controller instance.  Returns 0 with
 * res filled (a stalled run is a result: res->stalled), or -1 with err set
 * when the run could not be made (out of memory). */
int cupace_simulate(const struct cupace_config *cfg, struct cupace_pacer_instance *pacer,
                    const struct cupace_run_opts *opts, struct cupace_result *res,
                    struct cupace_err *err);

#endif
