package pgstore

import "strings"

// The statements below are written with {{schema}} for the quoted schema
// name. A parameter named "now" is NULL when the store uses the database
// clock, so coalesce($n::timestamptz, now()) picks the caller's time or the
// server's. Durations travel as microseconds (bigint).

// itemColumns lists the columns itemRow.dest scans, in order (scanItem, and
// acquireSQL after its own three).
const itemColumns = `i.provider, i.tenant, i.event_id, i.event_type, i.payload, i.headers,
	i.payload_sha256, i.key_id, i.state, i.attempts, i.next_attempt_at, i.lease_expires_at,
	i.last_error_class, i.last_error_message, i.last_error_at, i.duplicate_count, i.last_seen_at,
	i.occurred_at, i.received_at, i.updated_at, i.completed_at, i.dead_at`

// itemColumnCount is the number of columns in itemColumns.
var itemColumnCount = strings.Count(itemColumns, ",") + 1

// enqueueSQL inserts an item or, when the key exists, counts a duplicate
// (same digest) or leaves the row as it was (other digest). The DO UPDATE
// always runs on conflict so the statement returns exactly one row even when
// the conflicting row was committed by a concurrent transaction after this
// statement's snapshot; a conflict rewrites the row with its own values.
// (xmax = 0) is true only for a row version this statement inserted: an
// updated version carries the updating transaction as its locker.
//
// It sends no NOTIFY: Enqueue asks the store's notifier for one after the
// statement has committed (see notifier).
//
// $1 provider, $2 tenant, $3 event_id, $4 event_type, $5 payload, $6 headers,
// $7 digest, $8 key_id, $9 occurred_at, $10 received_at, $11 now (due and
// updated time).
const enqueueSQL = `
INSERT INTO {{schema}}.inbox_items AS i (
	provider, tenant, event_id, event_type, payload, headers, payload_sha256, key_id,
	state, attempts, next_attempt_at, duplicate_count, last_seen_at,
	occurred_at, received_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8,
	'pending', 0, coalesce($11::timestamptz, now()), 0, $10,
	$9, $10, coalesce($11::timestamptz, now()))
ON CONFLICT (provider, tenant, event_id) DO UPDATE SET
	duplicate_count = CASE WHEN i.payload_sha256 = EXCLUDED.payload_sha256
		THEN i.duplicate_count + 1 ELSE i.duplicate_count END,
	last_seen_at = CASE WHEN i.payload_sha256 = EXCLUDED.payload_sha256
		THEN EXCLUDED.last_seen_at ELSE i.last_seen_at END
RETURNING (i.xmax = 0) AS inserted, (i.payload_sha256 = $7) AS same_digest, i.state`

// enqueueNotifySQL is enqueueSQL that also notifies $12 for a new item, for
// EnqueueTx in the host's transaction: NOTIFY is delivered when that
// transaction commits, never when it rolls back.
const enqueueNotifySQL = `
WITH upsert AS (` + enqueueSQL + `
), notified AS (
	SELECT pg_notify($12, '') FROM upsert WHERE inserted
)
SELECT inserted, same_digest, state, (SELECT count(*) FROM notified) FROM upsert`

// acquireSQL leases up to $3 due items, the longest due first. The CTE
// locks candidate rows, skipping rows another transaction holds; locking
// re-checks the WHERE clause against the row's latest version, and the
// CTE's columns are read from that version, so a row leased (or finished)
// by a transaction that committed after this statement's snapshot is not
// taken, and reclaimed says whether the row was leased (its lease expired)
// when this statement took it. Each row gets its own fresh token, and the
// token that settled it last no longer counts (settled_token).
//
// $1 now, $2 lease duration (µs), $3 limit.
const acquireSQL = `
WITH due AS (
	SELECT provider, tenant, event_id, next_attempt_at AS due_at, state = 'leased' AS reclaimed
	FROM {{schema}}.inbox_items
	WHERE state IN ('pending', 'leased')
		AND next_attempt_at <= coalesce($1::timestamptz, now())
	ORDER BY next_attempt_at
	LIMIT $3
	FOR UPDATE SKIP LOCKED
)
UPDATE {{schema}}.inbox_items AS i SET
	state = 'leased',
	attempts = i.attempts + 1,
	lease_token = gen_random_uuid(),
	settled_token = NULL,
	lease_expires_at = coalesce($1::timestamptz, now()) + $2::bigint * interval '1 microsecond',
	next_attempt_at = coalesce($1::timestamptz, now()) + $2::bigint * interval '1 microsecond',
	updated_at = coalesce($1::timestamptz, now())
FROM due
WHERE i.provider = due.provider AND i.tenant = due.tenant AND i.event_id = due.event_id
RETURNING due.due_at, due.reclaimed, i.lease_token::text, ` + itemColumns

// leaseWhere fences a statement on the current token. $1..$3 key, $4 token.
const leaseWhere = `
WHERE provider = $1 AND tenant = $2 AND event_id = $3
	AND state = 'leased' AND lease_token = $4::uuid`

// fencedSQL makes the statement of a settlement or lease extension: an
// UPDATE of the row leased under the token $4 (leaseWhere) that sets set,
// in a statement that returns three columns: whether it changed the row,
// the row's new lease expiry, and, when it changed nothing, whether $4 is
// the token that settled the item (ErrAlreadySettled) rather than a stale
// one (ErrLeaseLost).
//
// That last check runs only when the UPDATE changed nothing (a one-time
// filter), and it locks the row FOR SHARE: locking reads the row's latest
// committed version, not the statement's snapshot, so a settlement that a
// concurrent transaction committed while the UPDATE waited for the row
// (a handler's CompleteTx, say) is seen. The lock is held until the
// statement's transaction ends, which is at once outside a host's
// transaction. A row leased again has settled_token NULL; the state test
// keeps an older instance, which does not clear it, from making a stale
// token look settled.
func fencedSQL(set string) string {
	return `
WITH changed AS (
	UPDATE {{schema}}.inbox_items SET` + set + leaseWhere + `
	RETURNING lease_expires_at
)
SELECT EXISTS (SELECT 1 FROM changed),
	(SELECT lease_expires_at FROM changed),
	coalesce((SELECT state <> 'leased' AND settled_token = $4::uuid
		FROM {{schema}}.inbox_items
		WHERE provider = $1 AND tenant = $2 AND event_id = $3
			AND NOT EXISTS (SELECT 1 FROM changed)
		FOR SHARE), false)`
}

// settledSet ends the SET clause of every settlement: the lease is gone and
// its token is kept as the one that settled the item.
const settledSet = `
	lease_token = NULL,
	lease_expires_at = NULL,
	settled_token = lease_token`

// succeedSQL: $5 now.
var succeedSQL = fencedSQL(`
	state = 'succeeded',
	completed_at = coalesce($5::timestamptz, now()),
	updated_at = coalesce($5::timestamptz, now()),
	next_attempt_at = NULL,` + settledSet)

// retrySQL: $5 now, $6 retry at (NULL with the database clock), $7 retry
// delay from now (µs), $8 error class, $9 error message.
var retrySQL = fencedSQL(`
	state = 'pending',
	next_attempt_at = coalesce($6::timestamptz, now() + $7::bigint * interval '1 microsecond'),
	last_error_class = $8,
	last_error_message = $9,
	last_error_at = coalesce($5::timestamptz, now()),
	updated_at = coalesce($5::timestamptz, now()),` + settledSet)

// deadLetterSQL: $5 now, $6 error class, $7 error message.
var deadLetterSQL = fencedSQL(`
	state = 'dead',
	dead_at = coalesce($5::timestamptz, now()),
	next_attempt_at = NULL,
	last_error_class = $6,
	last_error_message = $7,
	last_error_at = coalesce($5::timestamptz, now()),
	updated_at = coalesce($5::timestamptz, now()),` + settledSet)

// abandonSQL: $5 now.
var abandonSQL = fencedSQL(`
	state = 'pending',
	attempts = greatest(attempts - 1, 0),
	next_attempt_at = coalesce($5::timestamptz, now()),
	updated_at = coalesce($5::timestamptz, now()),` + settledSet)

// extendSQL: $5 now, $6 duration (µs).
var extendSQL = fencedSQL(`
	lease_expires_at = coalesce($5::timestamptz, now()) + $6::bigint * interval '1 microsecond',
	next_attempt_at = coalesce($5::timestamptz, now()) + $6::bigint * interval '1 microsecond',
	updated_at = coalesce($5::timestamptz, now())`)

// releaseSQL gives back a row that an acquisition leased but could not
// read (see acquire): pending again, due when its lease would have expired,
// and not charged the attempt, since no handler ran. Its token was never
// handed out, so it is not kept. $5 now.
const releaseSQL = `
UPDATE {{schema}}.inbox_items SET
	state = 'pending',
	attempts = greatest(attempts - 1, 0),
	next_attempt_at = lease_expires_at,
	updated_at = coalesce($5::timestamptz, now()),
	lease_token = NULL,
	lease_expires_at = NULL` + leaseWhere

// getSQL: $1..$3 key.
const getSQL = `
SELECT ` + itemColumns + `
FROM {{schema}}.inbox_items AS i
WHERE i.provider = $1 AND i.tenant = $2 AND i.event_id = $3`

// deadLettersSQL is completed by DeadLetters with the filters, then
// deadLettersOrder. The ORDER BY matches inbox_items_dead_idx.
const deadLettersSQL = `
SELECT ` + itemColumns + `
FROM {{schema}}.inbox_items AS i
WHERE i.state = 'dead'`

const deadLettersOrder = `
ORDER BY i.dead_at DESC, i.provider DESC, i.tenant DESC, i.event_id DESC
LIMIT `

// replayDeadLetterSQL makes a dead item pending and reports whether it did
// and whether the item exists. A concurrent replay of the same item waits
// for the row lock, then finds it no longer dead. (ReplayDeadLetter asks the
// notifier for a wake-up once it has committed.)
//
// $1..$3 key, $4 now, $5 reset attempts.
const replayDeadLetterSQL = `
WITH replayed AS (
	UPDATE {{schema}}.inbox_items SET
		state = 'pending',
		next_attempt_at = coalesce($4::timestamptz, now()),
		dead_at = NULL,
		updated_at = coalesce($4::timestamptz, now()),
		attempts = CASE WHEN $5::boolean THEN 0 ELSE attempts END
	WHERE provider = $1 AND tenant = $2 AND event_id = $3 AND state = 'dead'
	RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM replayed),
	EXISTS (SELECT 1 FROM {{schema}}.inbox_items
		WHERE provider = $1 AND tenant = $2 AND event_id = $3)`

// registerSQL registers a replay key, replacing an expired registration in
// the same statement. Like enqueueSQL it always updates on conflict, so it
// returns exactly one row; the SET expressions all read the old row. The
// registration ID is fresh per call, so finding it in the row means this
// call made the registration.
//
// $1 provider, $2 tenant, $3 key, $4 digest, $5 registration ID, $6 now,
// $7 expires at (NULL with the database clock), $8 expiry from now (µs).
const registerSQL = `
INSERT INTO {{schema}}.replay_keys AS r (
	provider, tenant, replay_key, payload_sha256, registration_id, registered_at, expires_at)
VALUES ($1, $2, $3, $4, $5, coalesce($6::timestamptz, now()),
	coalesce($7::timestamptz, now() + $8::bigint * interval '1 microsecond'))
ON CONFLICT (provider, tenant, replay_key) DO UPDATE SET
	payload_sha256 = CASE WHEN r.expires_at <= EXCLUDED.registered_at
		THEN EXCLUDED.payload_sha256 ELSE r.payload_sha256 END,
	registration_id = CASE WHEN r.expires_at <= EXCLUDED.registered_at
		THEN EXCLUDED.registration_id ELSE r.registration_id END,
	registered_at = CASE WHEN r.expires_at <= EXCLUDED.registered_at
		THEN EXCLUDED.registered_at ELSE r.registered_at END,
	expires_at = CASE WHEN r.expires_at <= EXCLUDED.registered_at
		THEN EXCLUDED.expires_at ELSE r.expires_at END
RETURNING (r.registration_id = $5) AS registered, (r.payload_sha256 = $4) AS same_digest`

// deleteSucceededSQL deletes one batch of succeeded items completed before
// the cutoff $1; $2 is the batch size. The subquery locks up to $2 rows,
// skipping rows other transactions hold; locking follows a row updated after
// the statement's snapshot to its newest version and re-checks the WHERE
// clause there. The DELETE then matches the locked rows by primary key, so it
// deletes exactly those rows, newest versions included (matching by ctid
// would miss a row whose newest version is not the one in the snapshot).
// The conditions are not repeated outside the subquery: the rows are locked,
// so they still hold, and repeating them leads the planner to scan every
// matching row for the join instead of looking up the batch's keys in the
// primary key index (which it does unless the batch is a large part of the
// table).
const deleteSucceededSQL = `
DELETE FROM {{schema}}.inbox_items
WHERE (provider, tenant, event_id) IN (
		SELECT provider, tenant, event_id FROM {{schema}}.inbox_items
		WHERE state = 'succeeded' AND completed_at < $1
		LIMIT $2
		FOR UPDATE SKIP LOCKED)`

// deleteExpiredReplayKeysSQL deletes one batch, like deleteSucceededSQL:
// $1 now, $2 batch size.
const deleteExpiredReplayKeysSQL = `
DELETE FROM {{schema}}.replay_keys
WHERE (provider, tenant, replay_key) IN (
		SELECT provider, tenant, replay_key FROM {{schema}}.replay_keys
		WHERE expires_at <= $1
		LIMIT $2
		FOR UPDATE SKIP LOCKED)`

// statements are the SQL texts with the schema filled in.
type statements struct {
	enqueue, enqueueNotify                               string
	acquire, release                                     string
	succeed, retry, deadLetter, abandon, extend          string
	get, deadLetters, deadLettersOrder, replayDeadLetter string
	register, deleteSucceeded, deleteExpiredReplayKeys   string
}

func renderStatements(quotedSchema string) statements {
	r := strings.NewReplacer("{{schema}}", quotedSchema)
	return statements{
		enqueue:                 r.Replace(enqueueSQL),
		enqueueNotify:           r.Replace(enqueueNotifySQL),
		release:                 r.Replace(releaseSQL),
		acquire:                 r.Replace(acquireSQL),
		succeed:                 r.Replace(succeedSQL),
		retry:                   r.Replace(retrySQL),
		deadLetter:              r.Replace(deadLetterSQL),
		abandon:                 r.Replace(abandonSQL),
		extend:                  r.Replace(extendSQL),
		get:                     r.Replace(getSQL),
		deadLetters:             r.Replace(deadLettersSQL),
		deadLettersOrder:        deadLettersOrder,
		replayDeadLetter:        r.Replace(replayDeadLetterSQL),
		register:                r.Replace(registerSQL),
		deleteSucceeded:         r.Replace(deleteSucceededSQL),
		deleteExpiredReplayKeys: r.Replace(deleteExpiredReplayKeysSQL),
	}
}
