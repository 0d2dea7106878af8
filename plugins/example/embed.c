/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * embed.c -- an example program that embeds the engine (cupace/cupace.h):
 * its own stages in code, four threads submitting jobs, a wait for each.
 *
 *   cc $(pkg-config --cflags cupace) -o embed embed.c $(pkg-config --libs cupace) -lpthread
 *   ./embed [PACER] [JOBS_PER_THREAD]
 *
 * The controller PACER (default proctime) is found as `cupace run` finds
 * it: $CUPACE_PACER_PATH, then the installed controllers.  Prints one line
 * per thread and a summary; exits 0 when every job completed.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupace/cupace.h>

/* ---- the stages: a little real CPU work, the GPU a sleep ------------------- */

struct proof {                      /* what a caller hangs on a job */
    unsigned thread, seq;
    uint64_t digest;                /* written by the synthesis of partition 0 */
};

static int my_init(void *state, const struct cupace_params *p, const struct cupace_stage_host *host,
                   struct cupace_stage_info *info, char *err, size_t errlen)
{
    (void)host;
    (void)err;
    (void)errlen;
    info->buffer_bytes = 0;
    return p->get_u64(p->ctx, "rounds", 200000, state);
}

static int my_synthesize(void *state, const struct cupace_part_view *v, char *err, size_t errlen)
{
    uint64_t rounds = *(const uint64_t *)state, x = v->job * 1000003u + v->index + 1;
    struct proof *pf = v->job_data;

    for (uint64_t i = 0; i < rounds; i++)           /* xorshift: CPU time, no memory */
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    if (!pf) {
        snprintf(err, errlen, "a job without its proof");
        return -1;
    }
    if (v->index == 0)
        pf->digest = x;             /* the job's own: no other partition writes it */
    return 0;
}

static int my_gpu(void *state, const struct cupace_part_view *v, char *err, size_t errlen)
{
    (void)state;
    (void)err;
    (void)errlen;
    return v->host->sleep_ns(v->host->ctx, 2000000);   /* 2 ms of "device" */
}

static const struct cupace_stages my_stages = {
    .abi = CUPACE_STAGE_ABI, .size = sizeof(struct cupace_stages), .name = "embedded",
    .summary = "xorshift rounds on the CPU, 2 ms sleeps for the GPU",
    .state_size = sizeof(uint64_t),
    .init = my_init, .synthesize = my_synthesize, .kernel = my_gpu,
};

/* ---- four submitters ---------------------------------------------------------- */

struct submitter {
    struct cupace_engine *e;
    unsigned index, njobs, ok;
    struct proof *proofs;
    uint64_t *ids;
};

static void *submit_and_wait(void *arg)
{
    struct submitter *s = arg;
    struct cupace_error *err = NULL;

    for (unsigned i = 0; i < s->njobs; i++) {
        struct cupace_job_spec spec = {
            .size = sizeof spec, .partitions = 1 + i % 4,
            .partition_bytes = (uint64_t)(1 + i % 3) << 20, .data = &s->proofs[i],
        };
        s->proofs[i] = (struct proof){ .thread = s->index, .seq = i };
        if (cupace_engine_submit(s->e, &spec, &s->ids[i], &err) < 0) {
            fprintf(stderr, "embed: thread %u: %s\n", s->index, cupace_error_message(err));
            s->ids[i] = UINT64_MAX;
        }
    }
    for (unsigned i = 0; i < s->njobs; i++) {
        struct cupace_job_outcome o = { .size = sizeof o };
        if (s->ids[i] == UINT64_MAX || cupace_engine_wait(s->e, s->ids[i], &o, &err) < 0)
            continue;
        if (o.ok && o.data == &s->proofs[i] && s->proofs[i].digest != 0)
            s->ok++;
        else
            fprintf(stderr, "embed: job %llu: %s\n", (unsigned long long)o.job,
                    o.reason ? o.reason : "no digest");
    }
    cupace_error_free(err);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *pacer = argc > 1 ? argv[1] : "proctime";
    unsigned per_thread = argc > 2 ? (unsigned)atoi(argv[2]) : 25, total = 0;
    struct submitter subs[4];
    pthread_t th[4];
    struct cupace_error *err = NULL;
    struct cupace_metrics m = { .size = sizeof m };
    struct cupace_engine *e;
    int rc = 0;

    if (cupace_api_version() < CUPACE_API_VERSION) {
        fprintf(stderr, "embed: libcupace %s is older than this program\n", cupace_library_version());
        return 2;
    }
    e = cupace_engine_new(NULL, &err);
    if (!e || cupace_engine_set(e, "pacer.name", pacer, &err) < 0 ||
        cupace_engine_set(e, "engine.synth_workers", "8", &err) < 0 ||
        cupace_engine_set(e, "engine.memory_budget", "24MiB", &err) < 0 ||
        cupace_engine_set(e, "workload.partition_memory", "1MiB", &err) < 0 ||
        cupace_engine_set(e, "workload.release_at_kernel", "0", &err) < 0 ||
        cupace_engine_set(e, "stages.embedded.rounds", "300000", &err) < 0 ||
        cupace_engine_set_stages(e, &my_stages, &err) < 0 || cupace_engine_start(e, &err) < 0) {
        fprintf(stderr, "embed: %s\n", cupace_error_message(err));
        cupace_error_free(err);
        cupace_engine_free(e);
        return 2;
    }
    for (unsigned t = 0; t < 4; t++) {
        subs[t] = (struct submitter){ .e = e, .index = t, .njobs = per_thread,
                                      .proofs = calloc(per_thread, sizeof(struct proof)),
                                      .ids = calloc(per_thread, sizeof(uint64_t)) };
        if (!subs[t].proofs || !subs[t].ids || pthread_create(&th[t], NULL, submit_and_wait, &subs[t])) {
            fprintf(stderr, "embed: cannot start thread %u\n", t);
            return 2;
        }
    }
    for (unsigned t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        printf("thread %u: %u of %u jobs completed\n", t, subs[t].ok, subs[t].njobs);
        total += subs[t].ok;
        free(subs[t].proofs);
        free(subs[t].ids);
    }
    cupace_engine_metrics(e, &m);
    cupace_engine_stop(e, CUPACE_STOP_DRAIN);
    if (cupace_engine_join(e, &err) < 0) {
        fprintf(stderr, "embed: %s\n", cupace_error_message(err));
        rc = 1;
    }
    printf("jobs %u of %u completed; %llu partitions, memory budget %llu bytes\n", total,
           4 * per_thread, (unsigned long long)m.signals.gpu_done,
           (unsigned long long)m.signals.mem_budget);
    cupace_error_free(err);
    cupace_engine_free(e);
    return rc == 0 && total == 4 * per_thread ? 0 : 1;
}
