/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * queue.c -- the job queue in PostgreSQL: claims, leases, results (queue.h).
 *
 * Each operation is one SQL statement, prepared once per connection and run
 * with its own implicit transaction, so that it commits before the call
 * returns.  The statements are written against the schema of conf/queue.sql
 * with @TABLE@ for the table's name, the same placeholder the schema uses;
 * expand() fills it in for both.
 *
 * How the statements keep the promises of queue.h:
 * - A claim locks its candidates with FOR UPDATE SKIP LOCKED, so concurrent
 *   claimers never wait for each other and never take the same row: a row
 *   one of them holds locked is skipped by the others, and a row it has
 *   claimed no longer matches once its update commits.
 * - Ending a claim deletes the row only where owner and attempts still name
 *   our claim, and inserts it into the results in the same statement.  Once
 *   another node has claimed the row, the delete finds nothing.  The
 *   results' primary key is the job's id, so no job is recorded twice.
 * - Times are the database's now(), so the nodes' clocks never matter.
 *
 * Nothing here prints.  On a lost connection the handle closes it and waits
 * a backoff before the next attempt (queue.h).
 */
#include "config.h"
#include "queue.h"
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BACKOFF_MIN_NS 100000000ULL      /* 100 ms */
#define BACKOFF_MAX_NS 10000000000ULL    /* 10 s */

/* The columns a job keeps when it moves to the results. */
#define KEPT "id, priority, partitions, partition_bytes, payload"

enum stmt {
    S_CLAIM, S_HEARTBEAT, S_COMPLETE, S_FAIL, S_GIVE_BACK, S_SUBMIT, S_COUNTS, NSTMT
};

static const char *const stmt_sql[NSTMT] = {
    /* S_CLAIM ($1 owner, $2 max jobs, $3 max partitions, $4 first may exceed, $5 lease us,
     * $6 the most bytes a partition may hold here: a job larger than this
     * node's budget is left to a node that can run it, not claimed and
     * refused, which spent its attempts where it could never run).
     * Jobs whose lease lapsed on their last attempt end failed (reaped,
     * ended); the rest of the claimable jobs are taken oldest first while
     * their running sum of partitions stays within the credit.  Waiting
     * jobs and lapsed leases are read apart, each along its own partial
     * index, so that a claim reads a few rows however long the queue is
     * (one scan with an OR sorted the whole table: 13 ms at 3000 jobs). */
    "WITH reaped AS ("
    "  DELETE FROM @TABLE@ WHERE id IN ("
    "    SELECT id FROM @TABLE@ WHERE state = 'claimed' AND lease_until < now()"
    "      AND attempts >= max_attempts FOR UPDATE SKIP LOCKED)"
    "  RETURNING *),"
    " ended AS ("
    "  INSERT INTO @TABLE@_done (" KEPT ", state, owner, attempts, error, created)"
    "  SELECT " KEPT ", 'failed', owner, attempts,"
    "    'the lease lapsed on the last of ' || attempts || ' attempts', created FROM reaped),"
    " waiting AS ("
    "  SELECT id, priority, partitions FROM @TABLE@ WHERE state = 'queued'"
    "    AND partition_bytes <= $6::bigint"
    "  ORDER BY priority DESC, id LIMIT $2 FOR UPDATE SKIP LOCKED),"
    " lapsed AS ("
    "  SELECT id, priority, partitions FROM @TABLE@ WHERE state = 'claimed'"
    "    AND lease_until < now() AND attempts < max_attempts AND partition_bytes <= $6::bigint"
    "  ORDER BY priority DESC, id LIMIT $2 FOR UPDATE SKIP LOCKED),"
    " candidates AS (SELECT * FROM waiting UNION ALL SELECT * FROM lapsed),"
    " picked AS ("
    "  SELECT id FROM (SELECT id, partitions,"
    "      sum(partitions) OVER (ORDER BY priority DESC, id) AS upto,"
    "      row_number() OVER (ORDER BY priority DESC, id) AS n FROM candidates) c"
    "  WHERE n <= $2 AND (upto <= $3 OR ($4 AND n = 1)))"
    "UPDATE @TABLE@ t SET state = 'claimed', owner = $1, attempts = t.attempts + 1,"
    "  lease_until = now() + $5::float8 * interval '1 microsecond'"
    " FROM picked WHERE t.id = picked.id"
    " RETURNING t.id, t.attempts, t.partitions, t.partition_bytes, t.payload, t.priority",

    /* S_HEARTBEAT ($1 owner, $2 lease us) */
    "UPDATE @TABLE@ SET lease_until = now() + $2::float8 * interval '1 microsecond'"
    " WHERE state = 'claimed' AND owner = $1",

    /* S_COMPLETE ($1 id, $2 owner, $3 attempts, $4 result).  `before` sees
     * the results as they were when the statement began: a claim this owner
     * ended already. */
    "WITH ended AS ("
    "  DELETE FROM @TABLE@ WHERE id = $1 AND owner = $2 AND attempts = $3 AND state = 'claimed'"
    "  RETURNING *),"
    " recorded AS ("
    "  INSERT INTO @TABLE@_done (" KEPT ", state, owner, attempts, result, created)"
    "  SELECT " KEPT ", 'done', owner, attempts, $4, created FROM ended RETURNING id)"
    "SELECT (SELECT count(*) FROM recorded),"
    "  (SELECT count(*) FROM @TABLE@_done WHERE id = $1 AND owner = $2 AND attempts = $3"
    "     AND state = 'done')",

    /* S_FAIL ($1 id, $2 owner, $3 attempts, $4 error): the last attempt
     * ends failed, an earlier one goes back to the queue. */
    "WITH ended AS ("
    "  DELETE FROM @TABLE@ WHERE id = $1 AND owner = $2 AND attempts = $3 AND state = 'claimed'"
    "    AND attempts >= max_attempts RETURNING *),"
    " recorded AS ("
    "  INSERT INTO @TABLE@_done (" KEPT ", state, owner, attempts, error, created)"
    "  SELECT " KEPT ", 'failed', owner, attempts, $4, created FROM ended RETURNING id),"
    " requeued AS ("
    "  UPDATE @TABLE@ SET state = 'queued', owner = NULL, lease_until = NULL, last_error = $4"
    "  WHERE id = $1 AND owner = $2 AND attempts = $3 AND state = 'claimed'"
    "    AND attempts < max_attempts RETURNING id)"
    "SELECT (SELECT count(*) FROM recorded), (SELECT count(*) FROM requeued),"
    "  (SELECT count(*) FROM @TABLE@_done WHERE id = $1 AND owner = $2 AND attempts = $3"
    "     AND state = 'failed')",

    /* S_GIVE_BACK ($1 owner, $2 id and $3 attempts, or 0 and 0: all it holds) */
    "UPDATE @TABLE@ SET state = 'queued', owner = NULL, lease_until = NULL,"
    "  attempts = attempts - 1 WHERE state = 'claimed' AND owner = $1"
    "  AND ($2::bigint = 0 OR (id = $2::bigint AND attempts = $3::integer))",

    /* S_SUBMIT ($1 count, $2 partitions, $3 bytes, $4 priority, $5 payload, $6 max attempts) */
    "WITH added AS ("
    "  INSERT INTO @TABLE@ (partitions, partition_bytes, priority, payload, max_attempts)"
    "  SELECT $2::integer, $3::bigint, $4::integer, $5::text, $6::integer FROM generate_series(1, $1::bigint) RETURNING id)"
    "SELECT min(id) FROM added",

    /* S_COUNTS */
    "SELECT count(*) FILTER (WHERE state = 'queued'),"
    "  count(*) FILTER (WHERE state = 'claimed' AND lease_until >= now()),"
    "  count(*) FILTER (WHERE state = 'claimed' AND lease_until < now()),"
    "  (SELECT count(*) FILTER (WHERE state = 'done') FROM @TABLE@_done),"
    "  (SELECT count(*) FILTER (WHERE state = 'failed') FROM @TABLE@_done)"
    " FROM @TABLE@",
};

static const int stmt_nparams[NSTMT] = { 6, 2, 4, 4, 3, 6, 0 };

struct cupace_queue {
    PGconn *conn;                    /* NULL while disconnected */
    char *url;
    char table[CUPACE_QUEUE_TABLE_MAX + 1];
    char owner[160];
    uint64_t lease_us;
    uint64_t max_attempts;
    uint64_t max_partition_bytes;    /* claims take no job larger (INT64_MAX: any) */
    char *sql[NSTMT];                /* stmt_sql with the table's name */
    unsigned prepared;               /* bit s: statement s is prepared on this connection */
    int listening;
    uint64_t backoff_ns;             /* the wait before the next attempt after a failure */
    uint64_t next_try_ns;            /* no attempt before this (monotonic clock) */
    char down[512];                  /* why the connection was lost */
};

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* TEMPLATE with every @TABLE@ replaced by TABLE; NULL if out of memory. */
static char *expand(const char *template, const char *table)
{
    static const char mark[] = "@TABLE@";
    size_t n = 0, tl = strlen(table), ml = sizeof mark - 1;
    const char *p;
    char *out, *o;

    for (p = template; (p = strstr(p, mark)); p += ml)
        n++;
    out = malloc(strlen(template) + n * tl + 1);
    if (!out)
        return NULL;
    o = out;
    for (p = template;;) {
        const char *m = strstr(p, mark);
        size_t k = m ? (size_t)(m - p) : strlen(p);

        memcpy(o, p, k);
        o += k;
        if (!m)
            break;
        memcpy(o, table, tl);
        o += tl;
        p = m + ml;
    }
    *o = '\0';
    return out;
}

/* ---- the connection ---------------------------------------------------- */

/* Drops the connection after a failure: the next attempt waits a backoff. */
static int lose(struct cupace_queue *q, struct cupace_err *err, const char *what, const char *why)
{
    /* copy first: why may point into the connection */
    snprintf(q->down, sizeof q->down, "%s: %s", what, why && *why ? why : "the connection was lost");
    q->down[strcspn(q->down, "\n")] = '\0';
    if (q->conn)
        PQfinish(q->conn);
    q->conn = NULL;
    q->prepared = 0;
    q->listening = 0;
    q->backoff_ns = q->backoff_ns ? q->backoff_ns * 2 : BACKOFF_MIN_NS;
    if (q->backoff_ns > BACKOFF_MAX_NS)
        q->backoff_ns = BACKOFF_MAX_NS;
    q->next_try_ns = now_ns() + q->backoff_ns;
    cupace_err_set(err, "queue %s: %s (next attempt in %.1fs)", q->table, q->down,
                   (double)q->backoff_ns / 1e9);
    return CUPACE_QUEUE_DOWN;
}

/* ---- the url ----------------------------------------------------------- */

/* What libpq takes for a connection string rather than a database name
 * (its own test: a URI prefix, or an '='). */
static int is_conninfo(const char *url)
{
    return strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0 ||
           strchr(url, '=') != NULL;
}

/* A port list as libpq reads it: comma-separated, each empty (the
 * default) or an integer from 1 to 65535, blanks around it allowed. */
static int ports_ok(const char *list)
{
    const char *p = list;

    for (;;) {
        unsigned long v = 0;
        int digits = 0;

        while (*p == ' ' || *p == '\t')
            p++;
        for (; *p >= '0' && *p <= '9' && v <= 65535; p++, digits++)
            v = v * 10 + (unsigned long)(*p - '0');
        while (*p == ' ' || *p == '\t')
            p++;
        if ((*p && *p != ',') || (digits && (v < 1 || v > 65535)))
            return 0;
        if (!*p)
            return 1;
        p++;
    }
}

static int one_of(const char *v, const char *const *names)
{
    for (; *names; names++)
        if (strcmp(v, *names) == 0)
            return 1;
    return 0;
}

/* The values libpq checks only when it connects, of the options whose
 * forms are fixed (and, below, the lengths of the host and port lists): a
 * connection refused for one of them fails the same way every time, and
 * the daemon would retry it forever. */
static int option_ok(const PQconninfoOption *o, char *why, size_t len)
{
    static const char *const sslmodes[] = { "disable", "allow", "prefer", "require", "verify-ca",
                                            "verify-full", NULL };
    static const char *const gssencmodes[] = { "disable", "prefer", "require", NULL };

    if (strcmp(o->keyword, "port") == 0 && !ports_ok(o->val))
        snprintf(why, len, "port '%s': expected port numbers from 1 to 65535", o->val);
    else if (strcmp(o->keyword, "sslmode") == 0 && !one_of(o->val, sslmodes))
        snprintf(why, len, "sslmode '%s': expected disable, allow, prefer, require, verify-ca or "
                 "verify-full", o->val);
    else if (strcmp(o->keyword, "gssencmode") == 0 && !one_of(o->val, gssencmodes))
        snprintf(why, len, "gssencmode '%s': expected disable, prefer or require", o->val);
    else
        return 1;
    return 0;
}

static size_t entries(const char *list)
{
    size_t n = 1;

    for (; *list; list++)
        n += *list == ',';
    return n;
}

/* libpq's rule for lists of hosts: as many host names as hostaddr values
 * where both are given, and one port for all or one per host. */
static void lists_match(const PQconninfoOption *opts, char *why, size_t len)
{
    const char *host = NULL, *hostaddr = NULL, *port = NULL;
    size_t hosts = 1;

    for (const PQconninfoOption *o = opts; o->keyword; o++)
        if (o->val && o->val[0]) {
            if (strcmp(o->keyword, "host") == 0)
                host = o->val;
            else if (strcmp(o->keyword, "hostaddr") == 0)
                hostaddr = o->val;
            else if (strcmp(o->keyword, "port") == 0)
                port = o->val;
        }
    if (hostaddr)
        hosts = entries(hostaddr);
    else if (host)
        hosts = entries(host);
    if (hostaddr && host && entries(host) != hosts)
        snprintf(why, len, "%zu host names for %zu hostaddr values", entries(host), hosts);
    else if (port && entries(port) != 1 && entries(port) != hosts)
        snprintf(why, len, "%zu ports for %zu host%s (one for all, or one per host)",
                 entries(port), hosts, hosts == 1 ? "" : "s");
}

int cupace_queue_check_url(const char *url, struct cupace_err *err)
{
    PQconninfoOption *opts;
    char *said = NULL, why[512] = "";

    if (!url || !is_conninfo(url))
        return 0;                       /* empty (libpq's defaults) or a database's name */
    opts = PQconninfoParse(url, &said);
    if (!opts) {
        snprintf(why, sizeof why, "%s", said ? said : "out of memory");
        why[strcspn(why, "\n")] = '\0';
        PQfreemem(said);
        return cupace_err_set(err, "not a connection string libpq can read: %s", why);
    }
    for (const PQconninfoOption *o = opts; o->keyword && !why[0]; o++)
        if (o->val)
            option_ok(o, why, sizeof why);
    if (!why[0])
        lists_match(opts, why, sizeof why);
    PQconninfoFree(opts);
    if (why[0])
        return cupace_err_set(err, "not a connection string libpq can use: %s", why);
    return 0;
}

/* libpq prints the server's notices on stderr unless told otherwise; the
 * errors that matter come back through the calls. */
static void ignore_notice(void *arg, const char *message)
{
    (void)arg, (void)message;
}

int cupace_queue_connect(struct cupace_queue *q, struct cupace_err *err)
{
    /* connect_timeout first: the url's own value, if any, overrides it */
    const char *const keys[] = { "connect_timeout", "application_name", "dbname", NULL };
    const char *const values[] = { "5", "cupace", q->url, NULL };
    uint64_t now;

    if (q->conn && PQstatus(q->conn) == CONNECTION_OK)
        return CUPACE_QUEUE_OK;
    if (q->conn)
        return lose(q, err, "connection", PQerrorMessage(q->conn));
    now = now_ns();
    if (now < q->next_try_ns)
        return cupace_err_set(err, "queue %s: %s (next attempt in %.1fs)", q->table, q->down,
                              (double)(q->next_try_ns - now) / 1e9),
               CUPACE_QUEUE_DOWN;
    q->conn = PQconnectdbParams(keys, values, 1);
    if (!q->conn || PQstatus(q->conn) != CONNECTION_OK)
        return lose(q, err, "cannot connect", q->conn ? PQerrorMessage(q->conn) : "out of memory");
    PQsetNoticeProcessor(q->conn, ignore_notice, NULL);
    q->backoff_ns = 0;
    return CUPACE_QUEUE_OK;
}

/* Runs statement S with PARAMS; *res holds its rows (PQclear it). */
static int run(struct cupace_queue *q, enum stmt s, const char *const *params, PGresult **res,
               struct cupace_err *err)
{
    static const char *const names[NSTMT] = { "claim", "heartbeat", "complete", "fail",
                                              "give_back", "submit", "counts" };
    ExecStatusType st;
    int rc = cupace_queue_connect(q, err);

    *res = NULL;
    if (rc != CUPACE_QUEUE_OK)
        return rc;
    if (!(q->prepared & (1u << s))) {
        PGresult *p = PQprepare(q->conn, names[s], q->sql[s], stmt_nparams[s], NULL);

        st = p ? PQresultStatus(p) : PGRES_FATAL_ERROR;
        if (st != PGRES_COMMAND_OK) {
            char why[512];

            snprintf(why, sizeof why, "%s", p ? PQresultErrorMessage(p) : PQerrorMessage(q->conn));
            why[strcspn(why, "\n")] = '\0';
            PQclear(p);
            if (PQstatus(q->conn) != CONNECTION_OK)
                return lose(q, err, names[s], why);
            return cupace_err_set(err, "queue %s: %s: %s%s", q->table, names[s], why,
                                  strstr(why, "does not exist") ? " (run `cupace queue init`)" : ""),
                   CUPACE_QUEUE_ERROR;
        }
        PQclear(p);
        q->prepared |= 1u << s;
    }
    *res = PQexecPrepared(q->conn, names[s], stmt_nparams[s], params, NULL, NULL, 0);
    st = *res ? PQresultStatus(*res) : PGRES_FATAL_ERROR;
    if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)
        return CUPACE_QUEUE_OK;
    {
        char why[512];
        const char *state = *res ? PQresultErrorField(*res, PG_DIAG_SQLSTATE) : NULL;
        /* undefined_table: a table dropped after its statements were
         * prepared is as missing as one never made (the prepare's mark) */
        int missing = state && strcmp(state, "42P01") == 0;

        snprintf(why, sizeof why, "%s",
                 *res ? PQresultErrorMessage(*res) : PQerrorMessage(q->conn));
        why[strcspn(why, "\n")] = '\0';
        PQclear(*res);
        *res = NULL;
        if (PQstatus(q->conn) != CONNECTION_OK)
            return lose(q, err, names[s], why);
        return cupace_err_set(err, "queue %s: %s: %s%s", q->table, names[s], why,
                              missing ? " (run `cupace queue init`)" : ""),
               CUPACE_QUEUE_ERROR;
    }
}

static int64_t cell_i64(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? 0 : strtoll(PQgetvalue(r, row, col), NULL, 10);
}

/* ---- the handle -------------------------------------------------------- */

struct cupace_queue *cupace_queue_open(const struct cupace_queue_settings *qc, const char *owner,
                                       struct cupace_err *err)
{
    struct cupace_queue *q;

    if (!cupace_is_sql_name(qc->table, CUPACE_QUEUE_TABLE_MAX)) {
        cupace_err_set(err, "queue table '%s': not a plain lower-case SQL name", qc->table);
        return NULL;
    }
    if (cupace_queue_check_url(qc->url, err) < 0) {
        cupace_err_prefix(err, "queue url");
        return NULL;
    }
    if (qc->lease_ns < 1000000 || qc->max_attempts < 1 || qc->max_attempts > INT32_MAX) {
        cupace_err_set(err, "queue %s: the lease must be at least 1ms and max_attempts from 1",
                       qc->table);
        return NULL;
    }
    q = calloc(1, sizeof *q);
    if (!q || !(q->url = strdup(qc->url ? qc->url : "")))
        goto oom;
    snprintf(q->table, sizeof q->table, "%s", qc->table);
    if (owner) {
        snprintf(q->owner, sizeof q->owner, "%s", owner);
    } else {
        char host[64] = "localhost";
        struct timespec ts;

        gethostname(host, sizeof host - 1);
        host[sizeof host - 1] = '\0';
        clock_gettime(CLOCK_REALTIME, &ts);
        /* the start time tells apart two processes that got the same pid */
        snprintf(q->owner, sizeof q->owner, "%s:%ld:%lx", host, (long)getpid(),
                 (unsigned long)((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec));
    }
    q->lease_us = qc->lease_ns / 1000;
    q->max_attempts = qc->max_attempts;
    q->max_partition_bytes = qc->max_partition_bytes && qc->max_partition_bytes < INT64_MAX
                                 ? qc->max_partition_bytes : INT64_MAX;
    for (int s = 0; s < NSTMT; s++)
        if (!(q->sql[s] = expand(stmt_sql[s], q->table)))
            goto oom;
    cupace_queue_connect(q, NULL);
    return q;
oom:
    cupace_queue_close(q);
    cupace_err_set(err, "out of memory");
    return NULL;
}

void cupace_queue_close(struct cupace_queue *q)
{
    if (!q)
        return;
    if (q->conn)
        PQfinish(q->conn);
    for (int s = 0; s < NSTMT; s++)
        free(q->sql[s]);
    free(q->url);
    free(q);
}

const char *cupace_queue_owner(const struct cupace_queue *q)
{
    return q->owner;
}

int cupace_queue_connected(const struct cupace_queue *q)
{
    return q->conn && PQstatus(q->conn) == CONNECTION_OK;
}

/* ---- the schema and submitting ----------------------------------------- */

int cupace_queue_init(struct cupace_queue *q, struct cupace_err *err)
{
    char *sql;
    PGresult *res;
    int rc = cupace_queue_connect(q, err);

    if (rc != CUPACE_QUEUE_OK)
        return rc;
    sql = expand(cupace_queue_sql, q->table);
    if (!sql)
        return cupace_err_set(err, "out of memory"), CUPACE_QUEUE_ERROR;
    /* PQexec runs a multi-statement string as one transaction */
    res = PQexec(q->conn, sql);
    free(sql);
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
        char why[512];

        snprintf(why, sizeof why, "%s", PQresultErrorMessage(res));
        why[strcspn(why, "\n")] = '\0';
        PQclear(res);
        if (PQstatus(q->conn) != CONNECTION_OK)
            return lose(q, err, "init", why);
        return cupace_err_set(err, "queue %s: init: %s", q->table, why), CUPACE_QUEUE_ERROR;
    }
    PQclear(res);
    return CUPACE_QUEUE_OK;
}

int cupace_queue_submit(struct cupace_queue *q, uint64_t count, uint32_t partitions,
                        uint64_t bytes, int32_t priority, const char *payload, int64_t *first_id,
                        struct cupace_err *err)
{
    char c[24], p[24], b[24], pr[24], m[24];
    const char *params[6] = { c, p, b, pr, payload ? payload : "", m };
    PGresult *res;
    int rc;

    if (count == 0 || partitions == 0 || partitions > INT32_MAX || bytes > INT64_MAX)
        return cupace_err_set(err, "queue %s: submit: count and partitions must be at least 1",
                              q->table), CUPACE_QUEUE_ERROR;
    snprintf(c, sizeof c, "%" PRIu64, count);
    snprintf(p, sizeof p, "%" PRIu32, partitions);
    snprintf(b, sizeof b, "%" PRIu64, bytes);
    snprintf(pr, sizeof pr, "%" PRId32, priority);
    snprintf(m, sizeof m, "%" PRIu64, q->max_attempts);
    rc = run(q, S_SUBMIT, params, &res, err);
    if (rc != CUPACE_QUEUE_OK)
        return rc;
    if (first_id)
        *first_id = cell_i64(res, 0, 0);
    PQclear(res);
    return CUPACE_QUEUE_OK;
}

/* ---- claims and leases ------------------------------------------------- */

static int cmp_job(const void *a, const void *b)
{
    const struct cupace_queue_job *x = a, *y = b;

    return x->id < y->id ? -1 : x->id > y->id;
}

/* Copies the claim's rows into B: jobs in claim order, payloads in one block. */
static int take_rows(const PGresult *res, struct cupace_queue_batch *b)
{
    int n = PQntuples(res);
    size_t text = 0;
    char *t;

    memset(b, 0, sizeof *b);
    if (n == 0)
        return 0;
    for (int i = 0; i < n; i++)
        text += (size_t)PQgetlength(res, i, 4) + 1;
    b->jobs = calloc((size_t)n, sizeof *b->jobs);
    b->text = malloc(text);
    if (!b->jobs || !b->text) {
        cupace_queue_batch_free(b);
        return -1;
    }
    t = b->text;
    for (int i = 0; i < n; i++) {
        struct cupace_queue_job *j = &b->jobs[i];
        size_t len = (size_t)PQgetlength(res, i, 4);

        j->id = cell_i64(res, i, 0);
        j->attempts = (int32_t)cell_i64(res, i, 1);
        j->partitions = (int32_t)cell_i64(res, i, 2);
        j->partition_bytes = (uint64_t)cell_i64(res, i, 3);
        memcpy(t, PQgetvalue(res, i, 4), len + 1);
        j->payload = t;
        t += len + 1;
    }
    b->n = (size_t)n;
    /* RETURNING has no order: put them back in queue order (ids rise
     * within one priority; priority orders the claim, not the dispatch) */
    qsort(b->jobs, b->n, sizeof *b->jobs, cmp_job);
    return 0;
}

int cupace_queue_claim(struct cupace_queue *q, size_t max_jobs, uint64_t max_partitions,
                       int first_may_exceed, struct cupace_queue_batch *out,
                       struct cupace_err *err)
{
    char n[24], parts[24], lease[24], bytes[24];
    const char *params[6] = { q->owner, n, parts, first_may_exceed ? "true" : "false", lease,
                              bytes };
    PGresult *res;
    int rc;

    memset(out, 0, sizeof *out);
    if (max_jobs == 0 || (max_partitions == 0 && !first_may_exceed))
        return CUPACE_QUEUE_OK;
    snprintf(n, sizeof n, "%zu", max_jobs);
    snprintf(parts, sizeof parts, "%" PRIu64, max_partitions > INT64_MAX ? INT64_MAX : max_partitions);
    snprintf(lease, sizeof lease, "%" PRIu64, q->lease_us);
    snprintf(bytes, sizeof bytes, "%" PRIu64, q->max_partition_bytes);
    rc = run(q, S_CLAIM, params, &res, err);
    if (rc != CUPACE_QUEUE_OK)
        return rc;
    if (take_rows(res, out) < 0) {
        PQclear(res);
        /* the claim committed: the leases will lapse and others take the jobs */
        return cupace_err_set(err, "out of memory"), CUPACE_QUEUE_ERROR;
    }
    PQclear(res);
    return CUPACE_QUEUE_OK;
}

void cupace_queue_batch_free(struct cupace_queue_batch *b)
{
    free(b->jobs);
    free(b->text);
    memset(b, 0, sizeof *b);
}

int cupace_queue_heartbeat(struct cupace_queue *q, uint64_t *held, struct cupace_err *err)
{
    char lease[24];
    const char *params[2] = { q->owner, lease };
    PGresult *res;
    int rc;

    snprintf(lease, sizeof lease, "%" PRIu64, q->lease_us);
    rc = run(q, S_HEARTBEAT, params, &res, err);
    if (rc != CUPACE_QUEUE_OK)
        return rc;
    if (held)
        *held = strtoull(PQcmdTuples(res), NULL, 10);
    PQclear(res);
    return CUPACE_QUEUE_OK;
}

int cupace_queue_complete(struct cupace_queue *q, int64_t id, int32_t attempts, const char *result,
                          struct cupace_err *err)
{
    char i[24], a[24];
    const char *params[4] = { i, q->owner, a, result };
    PGresult *res;
    int rc;

    snprintf(i, sizeof i, "%" PRId64, id);
    snprintf(a, sizeof a, "%" PRId32, attempts);
    rc = run(q, S_COMPLETE, params, &res, err);
    if (rc != CUPACE_QUEUE_OK)
        return rc;
    rc = cell_i64(res, 0, 0) == 1 || cell_i64(res, 0, 1) == 1 ? CUPACE_QUEUE_OK
                                                               : CUPACE_QUEUE_LEASE_LOST;
    PQclear(res);
    if (rc == CUPACE_QUEUE_LEASE_LOST)
        cupace_err_set(err, "queue %s: job %" PRId64 " attempt %" PRId32 ": the lease was lost",
                       q->table, id, attempts);
    return rc;
}

int cupace_queue_fail(struct cupace_queue *q, int64_t id, int32_t attempts, const char *error,
                      struct cupace_err *err)
{
    char i[24], a[24];
    const char *params[4] = { i, q->owner, a, error ? error : "failed" };
    PGresult *res;
    int rc;

    snprintf(i, sizeof i, "%" PRId64, id);
    snprintf(a, sizeof a, "%" PRId32, attempts);
    rc = run(q, S_FAIL, params, &res, err);
    if (rc != CUPACE_QUEUE_OK)
        return rc;
    if (cell_i64(res, 0, 1) == 1)
        rc = CUPACE_QUEUE_RETRY;
    else if (cell_i64(res, 0, 0) == 1 || cell_i64(res, 0, 2) == 1)
        rc = CUPACE_QUEUE_OK;
    else
        rc = CUPACE_QUEUE_LEASE_LOST;
    PQclear(res);
    if (rc == CUPACE_QUEUE_LEASE_LOST)
        cupace_err_set(err, "queue %s: job %" PRId64 " attempt %" PRId32 ": the lease was lost",
                       q->table, id, attempts);
    return rc;
}

static int give_back(struct cupace_queue *q, int64_t id, int32_t attempts, uint64_t *n,
                     struct cupace_err *err)
{
    char i[24], a[24];
    const char *params[3] = { q->owner, i, a };
    PGresult *res;
    int rc;

    snprintf(i, sizeof i, "%" PRId64, id);
    snprintf(a, sizeof a, "%" PRId32, attempts);
    rc = run(q, S_GIVE_BACK, params, &res, err);
    if (rc != CUPACE_QUEUE_OK)
        return rc;
    if (n)
        *n = strtoull(PQcmdTuples(res), NULL, 10);
    PQclear(res);
    return CUPACE_QUEUE_OK;
}

int cupace_queue_give_back(struct cupace_queue *q, uint64_t *n, struct cupace_err *err)
{
    return give_back(q, 0, 0, n, err);
}

int cupace_queue_give_back_job(struct cupace_queue *q, int64_t id, int32_t attempts,
                               uint64_t *n, struct cupace_err *err)
{
    return give_back(q, id, attempts, n, err);
}

int cupace_queue_counts(struct cupace_queue *q, struct cupace_queue_counts *c,
                        struct cupace_err *err)
{
    PGresult *res;
    int rc = run(q, S_COUNTS, NULL, &res, err);

    if (rc != CUPACE_QUEUE_OK)
        return rc;
    c->queued = (uint64_t)cell_i64(res, 0, 0);
    c->claimed = (uint64_t)cell_i64(res, 0, 1);
    c->expired = (uint64_t)cell_i64(res, 0, 2);
    c->done = (uint64_t)cell_i64(res, 0, 3);
    c->failed = (uint64_t)cell_i64(res, 0, 4);
    PQclear(res);
    return CUPACE_QUEUE_OK;
}

/* ---- waiting for work -------------------------------------------------- */

static int listen_once(struct cupace_queue *q, struct cupace_err *err)
{
    char sql[CUPACE_QUEUE_TABLE_MAX + 16];
    PGresult *res;

    if (q->listening)
        return CUPACE_QUEUE_OK;
    /* the channel is the table's name as the trigger sees it (TG_TABLE_NAME) */
    snprintf(sql, sizeof sql, "LISTEN %s", q->table);
    res = PQexec(q->conn, sql);
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
        char why[512];

        snprintf(why, sizeof why, "%s", PQresultErrorMessage(res));
        PQclear(res);
        if (PQstatus(q->conn) != CONNECTION_OK)
            return lose(q, err, "listen", why);
        /* LISTEN may be disabled (YugabyteDB): polling alone will do */
        q->listening = -1;
        return CUPACE_QUEUE_OK;
    }
    PQclear(res);
    q->listening = 1;
    return CUPACE_QUEUE_OK;
}

static int drain_notifies(struct cupace_queue *q)
{
    PGnotify *n;
    int any = 0;

    while ((n = PQnotifies(q->conn))) {
        any = 1;
        PQfreemem(n);
    }
    return any;
}

static int sleep_on(int fd, uint64_t timeout_ns)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    int ms = (int)((timeout_ns + 999999) / 1000000);

    if (fd < 0) {
        struct timespec ts = { (time_t)(timeout_ns / 1000000000ULL),
                               (long)(timeout_ns % 1000000000ULL) };
        nanosleep(&ts, NULL);
        return 0;
    }
    return poll(&p, 1, ms) > 0 ? 2 : 0;
}

int cupace_queue_wait(struct cupace_queue *q, uint64_t timeout_ns, int extra_fd,
                      struct cupace_err *err)
{
    struct pollfd p[2];
    uint64_t deadline = now_ns() + timeout_ns;
    int rc = cupace_queue_connect(q, err);

    if (rc == CUPACE_QUEUE_OK)
        rc = listen_once(q, err);
    if (rc != CUPACE_QUEUE_OK) {
        /* wait anyway, so that a caller looping on claim and wait does not spin */
        return sleep_on(extra_fd, timeout_ns) == 2 ? 2 : rc;
    }
    for (;;) {
        uint64_t now;
        int r;

        if (!PQconsumeInput(q->conn))
            return lose(q, err, "wait", PQerrorMessage(q->conn));
        if (drain_notifies(q))
            return 1;
        now = now_ns();
        if (now >= deadline)
            return 0;
        p[0].fd = PQsocket(q->conn);
        p[0].events = POLLIN;
        p[1].fd = extra_fd;
        p[1].events = POLLIN;
        p[0].revents = p[1].revents = 0;
        r = poll(p, extra_fd >= 0 ? 2 : 1, (int)((deadline - now + 999999) / 1000000));
        if (r < 0 && errno != EINTR)
            return cupace_err_set(err, "queue %s: wait: %s", q->table, strerror(errno)),
                   CUPACE_QUEUE_ERROR;
        if (r > 0 && extra_fd >= 0 && (p[1].revents & (POLLIN | POLLHUP)))
            return 2;
    }
}
