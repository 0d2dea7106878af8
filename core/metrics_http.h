/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * metrics_http.h -- metrics in the Prometheus text format on a local HTTP
 * port ([serve] metrics = HOST:PORT), served by libmicrohttpd.
 *
 * GET /metrics answers with what the caller's render function writes, in
 * libmicrohttpd's own thread: the function must be safe to call from there
 * (take a snapshot under the caller's lock).  Anything else is 404, any
 * method but GET and HEAD is 405.  Nothing here prints.
 */
#ifndef CUPACE_METRICS_HTTP_H
#define CUPACE_METRICS_HTTP_H

#include <stdio.h>

#include "error.h"

/* Writes the metrics, in the Prometheus text format, to OUT. */
typedef void (*cupace_metrics_render)(void *ctx, FILE *out);

struct cupace_metrics_http;

/* Listens on ADDR, "HOST:PORT" with a numeric host ("127.0.0.1:9464",
 * "[::1]:9464"; port 0: any free port).  NULL with err if it cannot. */
struct cupace_metrics_http *cupace_metrics_http_start(const char *addr, cupace_metrics_render fn,
                                                      void *ctx, struct cupace_err *err);

/* The port it listens on (the one chosen, for port 0). */
unsigned cupace_metrics_http_port(const struct cupace_metrics_http *h);

void cupace_metrics_http_stop(struct cupace_metrics_http *h);

#endif
