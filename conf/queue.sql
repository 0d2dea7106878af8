-- SPDX-License-Identifier: MIT OR Apache-2.0
-- queue.sql -- the job queue of `cupace serve` (cupace-serve(8)), for PostgreSQL
-- 12 or later and PostgreSQL-compatible databases.
--
-- `cupace queue init CONFIG` runs this file with @TABLE@ replaced by
-- [queue] table (default cupace_jobs).  By hand:
--     sed 's/@TABLE@/cupace_jobs/g' queue.sql | psql "$URL"
-- Running it again changes nothing.
--
-- Two tables.  @TABLE@ is the hot queue: a row per job that is waiting or
-- held, updated by every claim and heartbeat, so it is kept small (under MVCC
-- every update leaves a dead row version behind until vacuum; a table of
-- only live jobs vacuums in no time).  A job that ends, done or failed, is
-- deleted from it and written into @TABLE@_done in the same transaction;
-- @TABLE@_done is only ever inserted into.  Its primary key is the job's id,
-- so a job's result is recorded at most once whatever happens to the nodes.
--
-- A claim is a lease: `owner` (the node's name, unique per process) and
-- `attempts` (the number of the claim) identify it, `lease_until` is when
-- it lapses unless a heartbeat extends it.  Times are the database's clock,
-- never a node's.

CREATE TABLE IF NOT EXISTS @TABLE@ (
    id              bigserial PRIMARY KEY,
    priority        integer NOT NULL DEFAULT 0,          -- higher first, then by id
    partitions      integer NOT NULL CHECK (partitions > 0),
    partition_bytes bigint NOT NULL DEFAULT 0 CHECK (partition_bytes >= 0),
    payload         text NOT NULL DEFAULT '',            -- what the stages are given
    state           text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'claimed')),
    owner           text,                                -- the node holding the lease
    lease_until     timestamptz,                         -- the lease lapses then
    attempts        integer NOT NULL DEFAULT 0,          -- claims so far
    max_attempts    integer NOT NULL DEFAULT 3 CHECK (max_attempts > 0),
    last_error      text,                                -- why the last attempt failed
    created         timestamptz NOT NULL DEFAULT now(),
    CHECK ((state = 'claimed') = (owner IS NOT NULL AND lease_until IS NOT NULL))
);

-- What a claim reads: the oldest waiting jobs, and leases that lapsed.
CREATE INDEX IF NOT EXISTS @TABLE@_waiting ON @TABLE@ (priority DESC, id) WHERE state = 'queued';
CREATE INDEX IF NOT EXISTS @TABLE@_leases ON @TABLE@ (lease_until) WHERE state = 'claimed';
CREATE INDEX IF NOT EXISTS @TABLE@_owner ON @TABLE@ (owner) WHERE state = 'claimed';

CREATE TABLE IF NOT EXISTS @TABLE@_done (
    id              bigint PRIMARY KEY,                  -- the job's id in @TABLE@
    priority        integer NOT NULL,
    partitions      integer NOT NULL,
    partition_bytes bigint NOT NULL,
    payload         text NOT NULL,
    state           text NOT NULL CHECK (state IN ('done', 'failed')),
    owner           text,                                -- the node that ended it
    attempts        integer NOT NULL,
    result          text,                                -- what the stages returned
    error           text,                                -- state = 'failed': why
    created         timestamptz NOT NULL,
    finished        timestamptz NOT NULL DEFAULT now()
);

-- Idle nodes LISTEN on the channel named after the table; work that becomes
-- claimable wakes them: new jobs, and jobs put back (a retry, a node's
-- cancel).  A lapsed lease sends nothing: nodes find those by polling, as they
-- find everything where NOTIFY is disabled (YugabyteDB).  pg_notify folds
-- identical notifications of one transaction into one.
CREATE OR REPLACE FUNCTION cupace_queue_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify(TG_TABLE_NAME, '');
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS @TABLE@_submitted ON @TABLE@;
CREATE TRIGGER @TABLE@_submitted AFTER INSERT ON @TABLE@
    FOR EACH STATEMENT EXECUTE FUNCTION cupace_queue_notify();

DROP TRIGGER IF EXISTS @TABLE@_requeued ON @TABLE@;
CREATE TRIGGER @TABLE@_requeued AFTER UPDATE OF state ON @TABLE@
    FOR EACH ROW WHEN (NEW.state = 'queued' AND OLD.state <> 'queued')
    EXECUTE FUNCTION cupace_queue_notify();
