/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* check_pipeline.c -- the pipeline's state machine on its own: random
 * programs of valid transitions, with every invariant checked after each
 * one and the counters compared against a plain tally kept here. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline.h"
#include "result.h"
#include "testutil.h"

/* The test's own view: which device holds each partition on the GPU, and a
 * plain tally of what happened. */
struct model {
    struct cupace_pipeline pl;
    unsigned *device;               /* per partition, while on the GPU */
    uint32_t *holders;              /* per device */
    uint64_t dispatched, synth_failed, gpu_failed, aborted, completed, cancelled_waiting;
    uint64_t now;
    unsigned seed;
    int open;                       /* jobs come by add_job (libcupace's open runs) */
    unsigned jobs_left;             /* open: jobs still to add */
};

static unsigned rnd(struct model *m, unsigned n)
{
    return (unsigned)(rand_r(&m->seed) % n);
}

/* A random partition in STATE (and, on the GPU, in the given kernel phase:
 * -1 any); UINT32_MAX when there is none.  O(partitions): a test. */
static uint32_t pick(struct model *m, int state, int in_kernel, int released)
{
    uint32_t n = 0, chosen = UINT32_MAX;

    for (uint32_t i = 0; i < m->pl.nparts; i++) {
        const struct cupace_part *p = &m->pl.parts[i];
        if (p->state != state || (in_kernel >= 0 && p->in_kernel != in_kernel) ||
            (released >= 0 && p->released != released))
            continue;
        if (rnd(m, ++n) == 0)       /* reservoir sampling: uniform over the matches */
            chosen = i;
    }
    return chosen;
}

static int step(struct model *m)
{
    struct cupace_pipeline *pl = &m->pl;
    uint32_t id;
    unsigned d;

    m->now += rnd(m, 3) * 1000;
    switch (rnd(m, 8)) {
    case 0:
        if (m->open) {              /* a job of its own size; the arrays grow under it */
            static const uint64_t sizes[] = { 256ULL << 20, 512ULL << 20, 1ULL << 30 };
            uint64_t bytes = sizes[rnd(m, 3)];
            struct cupace_err err;
            unsigned parts;
            uint64_t release;
            int64_t j;
            if (m->jobs_left == 0)
                return 0;
            /* drawn apart: a call's arguments are evaluated in no set
             * order, and the walk must be the same under any compiler */
            parts = 1 + rnd(m, 12);
            release = rnd(m, 2) ? bytes / 2 : 0;
            j = cupace_pipeline_add_job(pl, m->now, parts, bytes, release, &err);
            ck_assert_msg(j == (int64_t)pl->njobs - 1, "%s", err.msg);
            m->jobs_left--;
            ck_assert(m->device = realloc(m->device, pl->cap_parts * sizeof *m->device));
            return 1;
        }
        if (cupace_pipeline_next_arrival(pl) == UINT64_MAX)
            return 0;
        if (m->now < cupace_pipeline_next_arrival(pl))
            m->now = cupace_pipeline_next_arrival(pl);
        cupace_pipeline_arrive(pl, m->now);
        return 1;
    case 1:
        if (!cupace_pipeline_can_dispatch(pl))
            return 0;
        ck_assert_uint_le(pl->mem_reserved + pl->jobs[pl->parts[pl->next_dispatch].job].part_mem,
                          pl->mem_budget);
        cupace_pipeline_dispatch(pl, m->now);
        m->dispatched++;
        return 1;
    case 2:
        if ((id = pick(m, CUPACE_PART_SYNTH, -1, -1)) == UINT32_MAX)
            return 0;
        if (cupace_pipeline_synth_end(pl, m->now, id) < 0)
            m->synth_failed++;
        return 1;
    case 3:
        d = rnd(m, pl->ndevices);
        if (pl->waiting == 0 || m->holders[d] == pl->workers_per_device)
            return 0;
        id = cupace_pipeline_take(pl, m->now, d);
        m->device[id] = d;
        m->holders[d]++;
        return 1;
    case 4:
        if ((id = pick(m, CUPACE_PART_GPU, 0, 0)) == UINT32_MAX)
            return 0;
        cupace_pipeline_kernel_start(pl, m->now, id, m->device[id], rnd(m, 5000),
                                     cupace_pipeline_kernel_ns(pl, m->now, id, m->device[id]));
        return 1;
    case 5:
        if ((id = pick(m, CUPACE_PART_GPU, 1, -1)) == UINT32_MAX)
            return 0;
        if (cupace_pipeline_kernel_end(pl, m->now, id, m->device[id]) < 0) {
            m->gpu_failed++;
            m->holders[m->device[id]]--;
        }
        return 1;
    case 6:
        if ((id = pick(m, CUPACE_PART_GPU, 0, 1)) == UINT32_MAX)
            return 0;
        cupace_pipeline_gpu_done(pl, m->now, id, m->device[id], rnd(m, 5000));
        m->holders[m->device[id]]--;
        m->completed++;
        return 1;
    default:                        /* rarely: cancel one in flight, or every waiting one */
        if (rnd(m, 20) != 0)
            return 0;
        if (rnd(m, 4) == 0) {
            m->cancelled_waiting += cupace_pipeline_abort_waiting(pl, m->now);
            return 1;
        }
        if ((id = pick(m, rnd(m, 2) ? CUPACE_PART_SYNTH : CUPACE_PART_GPU, -1, -1)) == UINT32_MAX)
            return 0;
        if (pl->parts[id].state == CUPACE_PART_GPU)
            m->holders[m->device[id]]--;
        cupace_pipeline_abort(pl, m->now, id, m->device[id]);
        m->aborted++;
        return 1;
    }
}

static void check_tally(const struct model *m)
{
    const struct cupace_pipeline *pl = &m->pl;

    ck_assert(cupace_pipeline_sane_full(pl));
    ck_assert_uint_eq(pl->dispatched, m->dispatched);
    ck_assert_uint_eq(pl->gpu_done, m->completed);
    ck_assert_uint_eq(pl->failed, m->synth_failed + m->gpu_failed + m->aborted +
                                      m->cancelled_waiting);
    for (unsigned d = 0; d < pl->ndevices; d++)
        ck_assert_uint_eq(pl->device_holders[d], m->holders[d]);
}

static void random_program(unsigned seed, int open)
{
    char ini[1024];
    struct cupace_err err;
    struct cupace_config *cfg;
    struct model m;
    unsigned s = seed;
    /* one draw per statement, as in step() */
    unsigned budget_parts = 1 + (unsigned)(rand_r(&s) % 6);
    unsigned devices = 1 + (unsigned)(rand_r(&s) % 3);
    unsigned workers = 1 + (unsigned)(rand_r(&s) % 3);
    unsigned synth_workers = 1 + (unsigned)(rand_r(&s) % 5);
    unsigned jobs = 1 + (unsigned)(rand_r(&s) % 6);
    unsigned per_job = 1 + (unsigned)(rand_r(&s) % 8);
    unsigned release_mib = (unsigned)(rand_r(&s) % 1025);
    unsigned fail_tenths = (unsigned)(rand_r(&s) % 3);

    snprintf(ini, sizeof ini,
             "[engine]\ndevices = %u\nworkers_per_device = %u\nsynth_workers = %u\n"
             "memory_budget = %uGiB\nseed = %u\n"
             "[workload]\njobs = %u\npartitions_per_job = %u\narrival = poisson\ninterarrival = 5us\n"
             "partition_memory = 1GiB\nrelease_at_kernel = %uMiB\nfail_rate = 0.%u\n",
             devices, workers, synth_workers, budget_parts, seed, jobs, per_job, release_mib,
             fail_tenths);
    cfg = tu_config(ini, &err);
    ck_assert_msg(cfg != NULL, "%s", err.msg);
    memset(&m, 0, sizeof m);
    m.seed = seed;
    m.open = open;
    m.jobs_left = open ? 40 : 0;
    ck_assert_msg((open ? cupace_pipeline_init_open(&m.pl, cfg, &err)
                        : cupace_pipeline_init(&m.pl, cfg, &err)) == 0, "%s", err.msg);
    m.device = calloc(m.pl.cap_parts, sizeof *m.device);
    m.holders = calloc(m.pl.ndevices, sizeof *m.holders);
    ck_assert(m.device && m.holders);
    for (unsigned i = 0; i < 6000 && (m.jobs_left || cupace_pipeline_finished(&m.pl) < m.pl.nparts);
         i++) {
        if (step(&m))
            check_tally(&m);
    }
    /* when every partition is finished, nothing is held and every job is settled */
    if (cupace_pipeline_finished(&m.pl) == m.pl.nparts) {
        ck_assert_uint_eq(m.pl.mem_reserved, 0);
        ck_assert_uint_eq(m.pl.jobs_completed + m.pl.jobs_failed, m.pl.njobs);
        ck_assert_uint_eq(m.pl.nlatency, m.pl.jobs_completed);
    }
    free(m.device);
    free(m.holders);
    cupace_pipeline_free(&m.pl);
    cupace_config_free(cfg);
}

START_TEST(random_transitions_keep_every_invariant)
{
    for (unsigned seed = 1; seed <= 60; seed++)
        random_program(seed * 7919u, 0);
}
END_TEST

/* The same with jobs added as they come, each of its own partition size
 * and release: per-job memory, and arrays that grow (mremap) mid-run. */
START_TEST(random_transitions_with_jobs_added_keep_every_invariant)
{
    for (unsigned seed = 1; seed <= 40; seed++)
        random_program(seed * 104729u, 1);
}
END_TEST

/* A job that could never be held, or is empty, is refused and changes
 * nothing. */
START_TEST(add_job_refuses_what_could_never_run)
{
    struct cupace_err err;
    struct cupace_config *cfg = tu_config("[engine]\nmemory_budget = 2GiB\n[workload]\npartition_memory = 1GiB\n", &err);
    struct cupace_pipeline pl;

    ck_assert_msg(cfg != NULL, "%s", err.msg);
    ck_assert(cupace_pipeline_init_open(&pl, cfg, &err) == 0);
    ck_assert_int_eq(cupace_pipeline_add_job(&pl, 0, 1, 3ULL << 30, 0, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "memory budget"));
    ck_assert_int_eq(cupace_pipeline_add_job(&pl, 0, 0, 1 << 20, 0, &err), -1);
    ck_assert_int_eq(cupace_pipeline_add_job(&pl, 0, 1, 1 << 20, 2 << 20, &err), -1);
    ck_assert_uint_eq(pl.njobs, 0);
    ck_assert_int_eq(cupace_pipeline_add_job(&pl, 5, 3, 1 << 20, 0, &err), 0);
    ck_assert_uint_eq(pl.nparts, 3);
    ck_assert(cupace_pipeline_can_dispatch(&pl));
    ck_assert(cupace_pipeline_sane_full(&pl));
    cupace_pipeline_free(&pl);
    cupace_config_free(cfg);
}
END_TEST

/* The memory gate never overcommits: with room for exactly two partitions
 * the third dispatch waits until one of them finishes. */
START_TEST(memory_gate_waits_for_room)
{
    struct cupace_err err;
    struct cupace_config *cfg = tu_config(
        "[engine]\nsynth_workers = 8\nmemory_budget = 2GiB\n"
        "[workload]\njobs = 1\npartitions_per_job = 3\npartition_memory = 1GiB\n", &err);
    struct cupace_pipeline pl;
    uint32_t a;

    ck_assert_msg(cfg != NULL, "%s", err.msg);
    ck_assert(cupace_pipeline_init(&pl, cfg, &err) == 0);
    cupace_pipeline_arrive(&pl, 0);
    a = cupace_pipeline_dispatch(&pl, 0);
    cupace_pipeline_dispatch(&pl, 0);
    ck_assert(!cupace_pipeline_can_dispatch(&pl));
    cupace_pipeline_abort(&pl, 1, a, 0);
    ck_assert(cupace_pipeline_can_dispatch(&pl));
    ck_assert(cupace_pipeline_sane_full(&pl));
    cupace_pipeline_free(&pl);
    cupace_config_free(cfg);
}
END_TEST

/* In real time an arrival is seen a little after it was due, and a job's
 * latency runs from when it was due: so does the makespan, or the first
 * job's latency would exceed it (the soak found a job 1 us longer than its
 * run). */
START_TEST(makespan_starts_when_the_first_job_was_due)
{
    struct cupace_err err;
    struct cupace_config *cfg = tu_config("[workload]\njobs = 1\npartitions_per_job = 1\n", &err);
    struct cupace_pipeline pl;
    struct cupace_result res;
    uint32_t id;

    ck_assert_msg(cfg != NULL, "%s", err.msg);
    ck_assert(cupace_pipeline_init(&pl, cfg, &err) == 0);
    cupace_pipeline_arrive(&pl, 7000);      /* due at 0, seen 7 us late */
    id = cupace_pipeline_dispatch(&pl, 7000);
    ck_assert_int_eq(cupace_pipeline_synth_end(&pl, 20000, id), 0);
    ck_assert_uint_eq(cupace_pipeline_take(&pl, 20000, 0), id);
    ck_assert_int_eq(cupace_pipeline_prep_end(&pl, 21000, id, 0), 0);
    cupace_pipeline_kernel_start(&pl, 21000, id, 0, 1000, 1000);
    ck_assert_int_eq(cupace_pipeline_kernel_end(&pl, 22000, id, 0), 0);
    ck_assert_int_eq(cupace_pipeline_gpu_done(&pl, 23000, id, 0, 1000), 0);
    memset(&res, 0, sizeof res);
    cupace_result_from_pipeline(&res, &pl);
    ck_assert_double_eq_tol(res.makespan_s, 23e-6, 1e-12);
    ck_assert_double_eq_tol(res.job_latency.max, 23e-6, 1e-12);
    ck_assert_msg(res.invariants_ok, "%s", res.broken ? res.broken : "");
    cupace_result_free(&res);
    cupace_pipeline_free(&pl);
    cupace_config_free(cfg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pipeline");
    TCase *tc = tcase_create("pipeline");

    tcase_add_test(tc, random_transitions_keep_every_invariant);
    tcase_add_test(tc, random_transitions_with_jobs_added_keep_every_invariant);
    tcase_add_test(tc, add_job_refuses_what_could_never_run);
    tcase_add_test(tc, memory_gate_waits_for_room);
    tcase_add_test(tc, makespan_starts_when_the_first_job_was_due);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
