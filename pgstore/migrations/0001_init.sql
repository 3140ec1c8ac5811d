-- 0001_init: the inbox and the replay keys.
--
-- {{schema}} stands for the quoted schema name; pgstore.Migrations renders it.
-- Key text columns use COLLATE "C" so that ordering (dead-letter paging)
-- matches Go's byte-wise string comparison.

CREATE TABLE {{schema}}.inbox_items (
    provider           text COLLATE "C" NOT NULL,
    tenant             text COLLATE "C" NOT NULL,
    event_id           text COLLATE "C" NOT NULL,
    event_type         text COLLATE "C" NOT NULL,
    payload            bytea NOT NULL,
    -- headers kept with the item as {"Name": ["value", ...]}; NULL for none.
    headers            jsonb,
    payload_sha256     bytea NOT NULL,
    key_id             text NOT NULL,

    state              text NOT NULL,
    attempts           integer NOT NULL DEFAULT 0,
    -- when the item is due: for pending items the next attempt, for leased
    -- items the lease expiry (so one index serves acquisition); NULL once
    -- succeeded or dead.
    next_attempt_at    timestamptz,
    lease_token        uuid,
    lease_expires_at   timestamptz,

    last_error_class   text,
    last_error_message text,
    last_error_at      timestamptz,

    duplicate_count    bigint NOT NULL DEFAULT 0,
    last_seen_at       timestamptz NOT NULL,

    occurred_at        timestamptz,
    received_at        timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    completed_at       timestamptz,
    dead_at            timestamptz,

    CONSTRAINT inbox_items_pkey PRIMARY KEY (provider, tenant, event_id),
    CONSTRAINT inbox_items_state_check
        CHECK (state IN ('pending', 'leased', 'succeeded', 'dead')),
    CONSTRAINT inbox_items_attempts_check CHECK (attempts >= 0),
    CONSTRAINT inbox_items_digest_check CHECK (octet_length(payload_sha256) = 32),
    -- A leased item has a token, and its due time is its lease expiry.
    CONSTRAINT inbox_items_lease_check CHECK (
        (state = 'leased') = (lease_token IS NOT NULL)
        AND (state = 'leased') = (lease_expires_at IS NOT NULL)
        AND (state <> 'leased' OR next_attempt_at = lease_expires_at)
    ),
    CONSTRAINT inbox_items_due_check
        CHECK ((state IN ('pending', 'leased')) = (next_attempt_at IS NOT NULL)),
    CONSTRAINT inbox_items_dead_check CHECK ((state = 'dead') = (dead_at IS NOT NULL))
);

-- Acquisition: WHERE state IN ('pending', 'leased') AND next_attempt_at <= now
-- ORDER BY next_attempt_at.
CREATE INDEX inbox_items_due_idx
    ON {{schema}}.inbox_items (next_attempt_at)
    WHERE state IN ('pending', 'leased');

-- Dead-letter paging: WHERE state = 'dead'
-- ORDER BY dead_at DESC, provider DESC, tenant DESC, event_id DESC.
CREATE INDEX inbox_items_dead_idx
    ON {{schema}}.inbox_items (dead_at DESC, provider DESC, tenant DESC, event_id DESC)
    WHERE state = 'dead';

-- Retention: WHERE state = 'succeeded' AND completed_at < cutoff.
CREATE INDEX inbox_items_succeeded_idx
    ON {{schema}}.inbox_items (completed_at)
    WHERE state = 'succeeded';

CREATE TABLE {{schema}}.replay_keys (
    provider        text COLLATE "C" NOT NULL,
    tenant          text COLLATE "C" NOT NULL,
    replay_key      text COLLATE "C" NOT NULL,
    payload_sha256  bytea NOT NULL,
    -- a random ID per registration; Register compares it to learn whether
    -- its own statement made the registration.
    registration_id uuid NOT NULL,
    registered_at   timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL,
    CONSTRAINT replay_keys_pkey PRIMARY KEY (provider, tenant, replay_key),
    CONSTRAINT replay_keys_digest_check CHECK (octet_length(payload_sha256) = 32)
);

-- Cleanup: WHERE expires_at <= now.
CREATE INDEX replay_keys_expires_at_idx ON {{schema}}.replay_keys (expires_at);
