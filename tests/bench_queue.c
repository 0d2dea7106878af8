/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* bench_queue.c -- `make bench`: the job queue (core/queue.c) on the
 * PostgreSQL server that bench_queue.sh starts (CUPACE_TEST_PG).
 *
 *  1. claim latency: one claim of one job at a time on an idle queue of
 *     NJOBS jobs, p50 and p99 of the call (one statement, committed), and
 *     of the complete that ends it;
 *  2. jobs per second one node sustains with zero-length work: claim a
 *     batch within a credit of CREDIT partitions, complete each job, again,
 *     until the queue is empty;
 *  3. the same with three nodes (threads with a connection each) on one
 *     queue, every job recorded once (checked).
 * Figures depend on the server's machine: here it shares the cores. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "queue.h"

#define NJOBS 3000
#define CREDIT 8

static const char *url;

static struct cupace_queue *open_q(const char *table, const char *owner)
{
    struct cupace_queue_settings s = { (char *)url, (char *)table, 60000000000ULL, 1000000000ULL, 3 };
    struct cupace_err err;
    struct cupace_queue *q = cupace_queue_open(&s, owner, &err);

    if (!q || !cupace_queue_connected(q)) {
        fprintf(stderr, "bench_queue: %s\n", q ? "cannot connect" : err.msg);
        exit(1);
    }
    return q;
}

static void must(int rc, const struct cupace_err *err)
{
    if (rc < 0) {
        fprintf(stderr, "bench_queue: %s\n", err->msg);
        exit(1);
    }
}

static struct cupace_queue *fresh(const char *table, unsigned n)
{
    struct cupace_queue *q = open_q(table, "setup");
    struct cupace_err err;

    must(cupace_queue_init(q, &err), &err);
    must(cupace_queue_submit(q, n, 1, 0, 0, NULL, NULL, &err), &err);
    return q;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static void latency(void)
{
    static double claim[NJOBS / 3], done[NJOBS / 3];
    struct cupace_queue *q = fresh("b_latency", NJOBS);
    struct cupace_err err;
    size_t n = NJOBS / 3;

    for (size_t i = 0; i < n; i++) {
        struct cupace_queue_batch b;
        double t0 = bench_now(), t1, t2;

        must(cupace_queue_claim(q, 1, 1, 0, &b, &err), &err);
        t1 = bench_now();
        must(cupace_queue_complete(q, b.jobs[0].id, b.jobs[0].attempts, NULL, &err), &err);
        t2 = bench_now();
        claim[i] = t1 - t0;
        done[i] = t2 - t1;
        cupace_queue_batch_free(&b);
    }
    qsort(claim, n, sizeof *claim, cmp_d);
    qsort(done, n, sizeof *done, cmp_d);
    printf("claim latency (1 job, %zu claims, %d queued): p50 %.0f us, p99 %.0f us\n", n, NJOBS,
           claim[n / 2] * 1e6, claim[n * 99 / 100] * 1e6);
    printf("complete latency (result and lease end in one transaction): p50 %.0f us, p99 %.0f us\n",
           done[n / 2] * 1e6, done[n * 99 / 100] * 1e6);
    cupace_queue_close(q);
}

struct node {
    const char *table;
    char owner[16];
    size_t jobs;
};

static void *node_main(void *arg)
{
    struct node *nd = arg;
    struct cupace_queue *q = open_q(nd->table, nd->owner);
    struct cupace_err err;

    for (;;) {
        struct cupace_queue_batch b;

        must(cupace_queue_claim(q, CREDIT, CREDIT, 0, &b, &err), &err);
        if (b.n == 0)
            break;
        for (size_t i = 0; i < b.n; i++)
            must(cupace_queue_complete(q, b.jobs[i].id, b.jobs[i].attempts, NULL, &err), &err);
        nd->jobs += b.n;
        cupace_queue_batch_free(&b);
    }
    cupace_queue_close(q);
    return NULL;
}

static void throughput(int nodes, const char *table)
{
    struct cupace_queue *q = fresh(table, NJOBS);
    struct node nd[8];
    pthread_t t[8];
    struct cupace_queue_counts c;
    struct cupace_err err;
    double t0 = bench_now(), dt;
    size_t total = 0;

    for (int i = 0; i < nodes; i++) {
        nd[i].table = table;
        nd[i].jobs = 0;
        snprintf(nd[i].owner, sizeof nd[i].owner, "node%d", i);
        pthread_create(&t[i], NULL, node_main, &nd[i]);
    }
    for (int i = 0; i < nodes; i++) {
        pthread_join(t[i], NULL);
        total += nd[i].jobs;
    }
    dt = bench_now() - t0;
    must(cupace_queue_counts(q, &c, &err), &err);
    printf("%d node%s, credit %d, zero-length work: %.0f jobs/s (%zu jobs in %.2fs; %llu recorded%s)\n",
           nodes, nodes == 1 ? "" : "s", CREDIT, (double)total / dt, total, dt,
           (unsigned long long)c.done, c.done == NJOBS && total == NJOBS ? "" : " -- WRONG");
    cupace_queue_close(q);
}

int main(void)
{
    url = getenv("CUPACE_TEST_PG");
    if (!url) {
        fputs("bench_queue: run me from bench_queue.sh\n", stderr);
        return 77;
    }
    latency();
    throughput(1, "b_one");
    throughput(3, "b_three");
    return 0;
}
