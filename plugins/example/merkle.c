/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * merkle.c -- an example stage plugin (cupace/stage.h): real CPU work in
 * the synthesis, the GPU phases emulated.
 *
 * Each partition's synthesis builds a SHA-256 Merkle tree over `leaves`
 * leaves (each the hash of the job, the partition and the leaf's index) and
 * keeps the root in the partition's buffer; its cost grows linearly with
 * `leaves`.  The GPU phases sleep the workload model's durations, as the
 * device would take them, and the epilogue checks that a root was made.
 *
 *   [engine]
 *   mode = realtime
 *   backend = merkle
 *   [stages.merkle]
 *   leaves = 65536          ; 2^16 leaves: about 131k hashes per partition
 *
 * Built outside cupace against the installed SDK alone:
 *   cc -shared -fPIC $(pkg-config --cflags cupace-pacer) -o merkle.so merkle.c
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cupace/stage.h>

/* ---- SHA-256 (FIPS 180-4), one-shot over a short message ------------------- */

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(uint32_t h[8], const uint8_t *p)
{
    uint32_t w[64], a, b, c, d, e, f, g, hh;

    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    a = h[0]; b = h[1]; c = h[2]; d = h[3]; e = h[4]; f = h[5]; g = h[6]; hh = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = hh + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

/* The hash of LEN <= 64 bytes (two blocks at most). */
static void sha256(const uint8_t *msg, size_t len, uint8_t out[32])
{
    uint32_t h[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                      0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
    uint8_t buf[128] = { 0 };
    size_t blocks = len + 9 > 64 ? 2 : 1;
    uint64_t bits = (uint64_t)len * 8;

    memcpy(buf, msg, len);
    buf[len] = 0x80;
    for (int i = 0; i < 8; i++)
        buf[blocks * 64 - 1 - i] = (uint8_t)(bits >> (8 * i));
    for (size_t b = 0; b < blocks; b++)
        sha256_block(h, buf + 64 * b);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(h[i] >> 8);
        out[4 * i + 3] = (uint8_t)h[i];
    }
}

/* ---- the stages -------------------------------------------------------------- */

struct merkle {
    uint64_t leaves;                /* a power of two */
};

static int merkle_init(void *state, const struct cupace_params *p,
                       const struct cupace_stage_host *host, struct cupace_stage_info *info,
                       char *err, size_t errlen)
{
    struct merkle *m = state;

    (void)host;
    if (p->get_u64(p->ctx, "leaves", 4096, &m->leaves) < 0)
        return -1;
    if (m->leaves < 2 || m->leaves > (1ULL << 30) || (m->leaves & (m->leaves - 1))) {
        snprintf(err, errlen, "leaves = %llu: a power of two from 2 to 2^30",
                 (unsigned long long)m->leaves);
        return -1;
    }
    info->buffer_bytes = 32;        /* the root: what the "GPU" takes on */
    return 0;
}

/* The tree is built level by level in place over a stack of at most 31
 * pending hashes: leaf i is folded into its parents as soon as its sibling
 * is there, so memory stays O(log leaves). */
static int merkle_synthesize(void *state, const struct cupace_part_view *v, char *err,
                             size_t errlen)
{
    const struct merkle *m = state;
    uint8_t stack[32][32], pair[64], leaf[24];
    unsigned depth[32], top = 0;

    for (uint64_t i = 0; i < m->leaves; i++) {
        uint64_t fields[3] = { v->job, v->index, i };

        if ((i & 4095) == 0 && v->host->cancelled(v->host->ctx)) {
            snprintf(err, errlen, "cancelled at leaf %llu", (unsigned long long)i);
            return -1;
        }
        memcpy(leaf, fields, sizeof leaf);
        sha256(leaf, sizeof leaf, stack[top]);
        depth[top++] = 0;
        while (top >= 2 && depth[top - 1] == depth[top - 2]) {
            memcpy(pair, stack[top - 2], 32);
            memcpy(pair + 32, stack[top - 1], 32);
            sha256(pair, sizeof pair, stack[top - 2]);
            depth[top - 2]++;
            top--;
        }
    }
    if (!v->buf || v->buf_bytes < 32) {
        snprintf(err, errlen, "no buffer for the root");
        return -1;
    }
    memcpy(v->buf, stack[0], 32);
    return 0;
}

/* The device, emulated: the model's duration of the phase. */
static int merkle_device(void *state, const struct cupace_part_view *v, char *err, size_t errlen)
{
    (void)state;
    if (v->host->sleep_ns(v->host->ctx, v->model_ns) < 0) {
        snprintf(err, errlen, "cancelled");
        return -1;
    }
    return 0;
}

static int merkle_epilogue(void *state, const struct cupace_part_view *v, char *err, size_t errlen)
{
    static const uint8_t zero[32];

    if (!v->buf || memcmp(v->buf, zero, 32) == 0) {
        snprintf(err, errlen, "no root was made");
        return -1;
    }
    return merkle_device(state, v, err, errlen);
}

const struct cupace_stages cupace_stages_entry = {
    .abi = CUPACE_STAGE_ABI,
    .size = sizeof(struct cupace_stages),
    .name = "merkle",
    .summary = "SHA-256 Merkle tree of `leaves` leaves per partition on the CPU; GPU emulated",
    .state_size = sizeof(struct merkle),
    .init = merkle_init,
    .synthesize = merkle_synthesize,
    .prep = merkle_device,
    .kernel = merkle_device,
    .epilogue = merkle_epilogue,
};
