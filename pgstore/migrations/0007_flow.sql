-- Flow control: webhooks.Limits (webhooks.FlowSupport.Limits) and pauses
-- (webhooks.PauseStore).
--
-- Instances of the previous version (0006) keep working beside it: they
-- do not read the new tables, so they acquire a paused handler's jobs and
-- ignore Limits until they stop. Building inbox_jobs_leased_idx reads
-- inbox_jobs once under a SHARE lock: writes to it wait that long.

-- A handler's rate limit: the bucket of Limits.Rate is full at full_at
-- (the generic cell rate algorithm): at now it lacks one token for each
-- token interval (1/Rate) of full_at - now, so a handler quiet for a
-- bucket's worth of intervals has a full bucket. A row is made by the
-- first acquisition that spends a token; without one, the bucket is full.
-- Acquisitions of a handler under Limits take a transaction-level advisory
-- lock first, so they count one after the other.
CREATE TABLE {{schema}}.inbox_limits (
    handler text COLLATE "C" NOT NULL,
    full_at timestamptz NOT NULL,
    CONSTRAINT inbox_limits_pkey PRIMARY KEY (handler)
) WITH (fillfactor = 50);

-- Limits.MaxRunning: WHERE handler = $h AND state = 'leased' AND
-- lease_expires_at > now counts the handler's running leases from a small
-- index (only leased rows are in it).
CREATE INDEX inbox_jobs_leased_idx
    ON {{schema}}.inbox_jobs (handler, lease_expires_at)
    WHERE state = 'leased';

-- Handlers' pauses (webhooks.PauseStore): at most one in force per handler
-- (ended_at NULL); the ended ones are the pauses' audit trail. An
-- acquisition looks its handler's pause up by inbox_pauses_in_force_idx.
CREATE TABLE {{schema}}.inbox_pauses (
    id          bigint GENERATED ALWAYS AS IDENTITY,
    handler     text COLLATE "C" NOT NULL,
    cause       text NOT NULL,
    actor       text NOT NULL,
    reason      text NOT NULL,
    since       timestamptz NOT NULL,
    -- a breaker's: the end of its cool-down, and its probe's lease.
    until       timestamptz,
    probe_until timestamptz,
    ended_at    timestamptz,
    ended_by    text,
    end_reason  text,
    CONSTRAINT inbox_pauses_pkey PRIMARY KEY (id),
    CONSTRAINT inbox_pauses_cause_check CHECK (cause IN ('operator', 'breaker'))
);
CREATE UNIQUE INDEX inbox_pauses_in_force_idx
    ON {{schema}}.inbox_pauses (handler)
    WHERE ended_at IS NULL;
CREATE INDEX inbox_pauses_ended_idx
    ON {{schema}}.inbox_pauses (ended_at DESC, id DESC)
    WHERE ended_at IS NOT NULL;
