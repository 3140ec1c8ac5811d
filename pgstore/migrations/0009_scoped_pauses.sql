-- Scoped pauses (webhooks.PauseScope): a pause of a handler, or of every
-- handler ('*', webhooks.EveryHandler), narrowed to a provider, one of
-- its tenants, or event types; and the parking of the jobs one holds: the
-- statements that make a job pending and due park it while a scoped pause
-- in force holds it (see parks in sql.go), and acquisitions lease none
-- of the jobs one holds, parked or not (notHeld).
--
-- Instances of the previous version (0008) keep working beside it until
-- an operator makes a scoped pause: from then on they cannot read a
-- parked job (its next_attempt_at is 'infinity', which they do not
-- expect) and fail the reads of Item, Stats and List that meet one.
-- Stop them before pausing a scope. Adding the columns rewrites nothing;
-- building inbox_jobs_parked_idx reads inbox_jobs once under a SHARE
-- lock: writes to it wait that long.

-- A pause's scope: '' narrows nothing. event_types is a pattern as
-- webhooks.Mux.Handle takes ('invoice.paid', 'invoice.*'), never '*'. A
-- handler has one pause in force per scope.
ALTER TABLE {{schema}}.inbox_pauses
    ADD COLUMN provider    text COLLATE "C" NOT NULL DEFAULT '',
    ADD COLUMN tenant      text COLLATE "C" NOT NULL DEFAULT '',
    ADD COLUMN event_types text COLLATE "C" NOT NULL DEFAULT '';
DROP INDEX {{schema}}.inbox_pauses_in_force_idx;
CREATE UNIQUE INDEX inbox_pauses_in_force_idx
    ON {{schema}}.inbox_pauses (handler, provider, tenant, event_types)
    WHERE ended_at IS NULL;

-- A parked job: pending, held by a scoped pause in force. Its due time
-- moves to paused_due and next_attempt_at becomes 'infinity', past every
-- acquisition's now, so that the due-order scans of inbox_jobs_due_idx
-- and inbox_jobs_tenant_due_idx stop before it however many are parked.
-- NULL for every other job.
ALTER TABLE {{schema}}.inbox_jobs ADD COLUMN paused_due timestamptz;

-- Resuming a scope reads its parked jobs from here.
CREATE INDEX inbox_jobs_parked_idx
    ON {{schema}}.inbox_jobs (handler, provider, tenant)
    WHERE paused_due IS NOT NULL;

-- inbox_held reports whether a scoped pause in force holds the job of
-- the handler h of an event of provider p, tenant t and type et (as
-- webhooks.PauseScope.Holds says). The statements call it only while a
-- scoped pause is in force (they look for one first, once each); its
-- own first query, which has no parameter, says the same for a caller
-- that did not. PL/pgSQL, never inlined: a statement that calls it plans
-- one function call.
CREATE FUNCTION {{schema}}.inbox_held(h text, p text, t text, et text) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM {{schema}}.inbox_pauses
        WHERE ended_at IS NULL AND (provider <> '' OR event_types <> '')) THEN
        RETURN false;
    END IF;
    RETURN EXISTS (SELECT 1 FROM {{schema}}.inbox_pauses AS s
        WHERE s.ended_at IS NULL AND s.handler IN (h, '*')
            AND (s.provider <> '' OR s.event_types <> '')
            AND (s.provider = '' OR s.provider = p)
            AND (s.tenant = '' OR s.tenant = t)
            AND (s.event_types = '' OR s.event_types = et
                OR right(s.event_types, 2) = '.*'
                    AND starts_with(et, left(s.event_types, -1))
                    AND length(et) > length(s.event_types) - 1));
END
$$;
