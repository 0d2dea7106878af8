/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * metrics_http.c -- GET /metrics over libmicrohttpd (metrics_http.h).
 *
 * One internal polling thread of libmicrohttpd answers every request; a
 * scrape is rare and small, so a thread per connection would buy nothing.
 * The body is rendered afresh for each request into a memory stream.
 */
#include "config.h"
#include "metrics_http.h"
#include "units.h"

#include <microhttpd.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

struct cupace_metrics_http {
    struct MHD_Daemon *d;
    cupace_metrics_render fn;
    void *ctx;
    unsigned port;
};

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **state)
{
    struct cupace_metrics_http *h = cls;
    struct MHD_Response *r;
    unsigned status = MHD_HTTP_OK;
    char *body = NULL;
    size_t len = 0;
    enum MHD_Result rc;

    (void)version, (void)upload, (void)upload_size, (void)state;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        status = MHD_HTTP_METHOD_NOT_ALLOWED;
        body = strdup("only GET\n");
    } else if (strcmp(url, "/metrics") != 0) {
        status = MHD_HTTP_NOT_FOUND;
        body = strdup("the metrics are at /metrics\n");
    } else {
        FILE *out = open_memstream(&body, &len);

        if (!out)
            return MHD_NO;
        h->fn(h->ctx, out);
        if (fclose(out) != 0) {
            free(body);
            return MHD_NO;
        }
    }
    if (!body)
        return MHD_NO;
    r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            status == MHD_HTTP_OK ? "text/plain; version=0.0.4; charset=utf-8"
                                                  : "text/plain; charset=utf-8");
    rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

struct cupace_metrics_http *cupace_metrics_http_start(const char *addr, cupace_metrics_render fn,
                                                      void *ctx, struct cupace_err *err)
{
    char host[64], port[8];
    unsigned portno;
    struct addrinfo hints, *ai = NULL;
    struct cupace_metrics_http *h;
    const union MHD_DaemonInfo *info;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL;
    int rc;

    if (cupace_parse_hostport(addr, host, sizeof host, &portno) < 0) {
        cupace_err_set(err, "metrics '%s': expected HOST:PORT, e.g. 127.0.0.1:9464", addr);
        return NULL;
    }
    snprintf(port, sizeof port, "%u", portno);
    memset(&hints, 0, sizeof hints);
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    hints.ai_socktype = SOCK_STREAM;
    rc = getaddrinfo(host, port, &hints, &ai);
    if (rc != 0) {
        cupace_err_set(err, "metrics '%s': %s", addr, gai_strerror(rc));
        return NULL;
    }
    h = calloc(1, sizeof *h);
    if (!h) {
        freeaddrinfo(ai);
        cupace_err_set(err, "out of memory");
        return NULL;
    }
    h->fn = fn;
    h->ctx = ctx;
    if (ai->ai_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    h->d = MHD_start_daemon(flags, (uint16_t)portno, NULL, NULL, answer, h,
                            MHD_OPTION_SOCK_ADDR, ai->ai_addr, MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!h->d) {
        free(h);
        cupace_err_set(err, "metrics '%s': cannot listen there (in use, or not this host's)",
                       addr);
        return NULL;
    }
    info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : portno;
    return h;
}

unsigned cupace_metrics_http_port(const struct cupace_metrics_http *h)
{
    return h->port;
}

void cupace_metrics_http_stop(struct cupace_metrics_http *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->d);
    free(h);
}
