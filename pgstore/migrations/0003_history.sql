-- 0003_history: attempt history, audit trail, quarantine, closed items.
--
-- Three tables beside inbox_items, each keyed by the item's key and a
-- number, each with a foreign key to the item ON DELETE CASCADE, so
-- retention removes an item's history with it:
--   inbox_attempts   one row per processing attempt, written by the
--                    statement that settles it (or, for a crashed attempt,
--                    by the acquisition that takes the item over);
--   inbox_audit      one row per replay, closing or provider redelivery;
--   inbox_quarantine deliveries that reused an event ID with another
--                    payload, the first few per item.
--
-- Every new column of inbox_items is nullable or has a constant default,
-- which changes only the catalog: the table is not rewritten. The new
-- CHECK constraints are added NOT VALID: the constraints they replace hold
-- for every existing row and imply them, so validating them would only
-- read the whole table while the migration holds its lock. They are
-- enforced for every row written from now on.
--
-- Instances of the previous version keep working beside upgraded ones
-- during a rolling upgrade: they never read the new columns and tables,
-- and no new constraint refuses what they write. The attempts they make
-- are not recorded in the history.

ALTER TABLE {{schema}}.inbox_items
    -- the provider's payload version, when the verifier knows it.
    ADD COLUMN api_version      text COLLATE "C" NOT NULL DEFAULT '',
    -- ties the item to the trace of its receive (webhooks.Observer).
    ADD COLUMN trace_link       text NOT NULL DEFAULT '',
    -- when an operator closed the item (state 'closed').
    ADD COLUMN closed_at        timestamptz,
    -- the number of the latest attempt in inbox_attempts: one more at each
    -- acquisition, abandoned attempts included (attempts does not count
    -- those, and a replay may reset it), so numbers are unique per item.
    ADD COLUMN attempt_seq      integer NOT NULL DEFAULT 0,
    -- the current (or latest) lease: when it was taken and by which worker
    -- and processing version, for the attempt's history row. Kept after
    -- the settlement, replaced by the next acquisition.
    ADD COLUMN lease_started_at timestamptz,
    ADD COLUMN lease_worker     text,
    ADD COLUMN lease_version    text,
    -- conflicting deliveries, counted whether quarantined or not.
    ADD COLUMN conflicts        bigint NOT NULL DEFAULT 0;

ALTER TABLE {{schema}}.inbox_items
    DROP CONSTRAINT inbox_items_state_check,
    ADD CONSTRAINT inbox_items_state_check
        CHECK (state IN ('pending', 'leased', 'succeeded', 'dead', 'closed')) NOT VALID,
    -- A closed item was dead: it keeps its dead_at.
    DROP CONSTRAINT inbox_items_dead_check,
    ADD CONSTRAINT inbox_items_dead_check
        CHECK ((state IN ('dead', 'closed')) = (dead_at IS NOT NULL)) NOT VALID,
    ADD CONSTRAINT inbox_items_closed_check
        CHECK ((state = 'closed') = (closed_at IS NOT NULL)) NOT VALID,
    ADD CONSTRAINT inbox_items_attempt_seq_check CHECK (attempt_seq >= 0) NOT VALID;

-- Attempts made before the upgrade have no rows; number the next one after
-- them, as Lease.Attempt does. Only items that can be acquired again need
-- it, and the partial indexes find them without reading succeeded rows.
UPDATE {{schema}}.inbox_items SET attempt_seq = attempts
    WHERE state IN ('pending', 'leased') AND attempts > 0;
UPDATE {{schema}}.inbox_items SET attempt_seq = attempts
    WHERE state = 'dead' AND attempts > 0;

-- Closed items, paged like dead letters (List with State closed) and
-- deleted by DeleteClosed: WHERE state = 'closed'
-- ORDER BY closed_at DESC, provider DESC, tenant DESC, event_id DESC.
CREATE INDEX inbox_items_closed_idx
    ON {{schema}}.inbox_items (closed_at DESC, provider DESC, tenant DESC, event_id DESC)
    WHERE state = 'closed';

-- Stats: dead letters grouped by provider and event type, read from the
-- index alone (dead rows do not change, so their pages are all-visible
-- once vacuumed).
CREATE INDEX inbox_items_dead_type_idx
    ON {{schema}}.inbox_items (provider, event_type)
    WHERE state = 'dead';

CREATE TABLE {{schema}}.inbox_attempts (
    provider      text COLLATE "C" NOT NULL,
    tenant        text COLLATE "C" NOT NULL,
    event_id      text COLLATE "C" NOT NULL,
    number        integer NOT NULL,
    outcome       text NOT NULL,
    -- NULL for an attempt whose lease was taken before the upgrade.
    started_at    timestamptz,
    finished_at   timestamptz NOT NULL,
    error_class   text,
    error_message text,
    worker        text NOT NULL DEFAULT '',
    version       text NOT NULL DEFAULT '',
    -- the attempt's lease token, by which a refused settlement or lease
    -- extension finds the crashed attempt it belonged to (lease_lost).
    lease_token   uuid,
    CONSTRAINT inbox_attempts_pkey PRIMARY KEY (provider, tenant, event_id, number),
    CONSTRAINT inbox_attempts_item_fkey FOREIGN KEY (provider, tenant, event_id)
        REFERENCES {{schema}}.inbox_items (provider, tenant, event_id) ON DELETE CASCADE,
    CONSTRAINT inbox_attempts_outcome_check CHECK (outcome IN
        ('succeeded', 'retried', 'dead_lettered', 'abandoned', 'crashed', 'lease_lost'))
);

CREATE TABLE {{schema}}.inbox_audit (
    provider text COLLATE "C" NOT NULL,
    tenant   text COLLATE "C" NOT NULL,
    event_id text COLLATE "C" NOT NULL,
    seq      bigint GENERATED ALWAYS AS IDENTITY,
    action   text NOT NULL,
    at       timestamptz NOT NULL,
    actor    text NOT NULL,
    reason   text NOT NULL,
    ticket   text NOT NULL DEFAULT '',
    CONSTRAINT inbox_audit_pkey PRIMARY KEY (provider, tenant, event_id, seq),
    CONSTRAINT inbox_audit_item_fkey FOREIGN KEY (provider, tenant, event_id)
        REFERENCES {{schema}}.inbox_items (provider, tenant, event_id) ON DELETE CASCADE,
    CONSTRAINT inbox_audit_action_check CHECK (action IN ('replay', 'close', 'redelivery'))
);

CREATE TABLE {{schema}}.inbox_quarantine (
    provider       text COLLATE "C" NOT NULL,
    tenant         text COLLATE "C" NOT NULL,
    event_id       text COLLATE "C" NOT NULL,
    -- the item's conflicts count when this delivery arrived: 1, 2, …
    seq            bigint NOT NULL,
    payload        bytea NOT NULL,
    headers        jsonb,
    payload_sha256 bytea NOT NULL,
    key_id         text NOT NULL,
    received_at    timestamptz NOT NULL,
    CONSTRAINT inbox_quarantine_pkey PRIMARY KEY (provider, tenant, event_id, seq),
    CONSTRAINT inbox_quarantine_item_fkey FOREIGN KEY (provider, tenant, event_id)
        REFERENCES {{schema}}.inbox_items (provider, tenant, event_id) ON DELETE CASCADE,
    CONSTRAINT inbox_quarantine_digest_check CHECK (octet_length(payload_sha256) = 32)
);
