package pgstore

import (
	"fmt"
	"strconv"
	"strings"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// The statements below are written with {{schema}} for the quoted schema
// name. A parameter named "now" is NULL when the store uses the database
// clock, so coalesce($n::timestamptz, now()) picks the caller's time or the
// server's. Durations travel as microseconds (bigint).
//
// Every statement runs in each of pgx's query exec modes, among them exec,
// which sends parameters as text of a type the server infers, and
// simple_protocol, which writes them into the statement as literals: a
// parameter's Go type is one whose text its column reads (JSON as a
// string: a []byte is bytea), and a parameter the server could only type
// from literals is cast. TestExecModes runs them.

// itemColumns lists the columns itemRow.dest scans, in order (getSQL, and
// acquireSQL and repeatSQL after their own five): a job (alias i, a row
// of inbox_jobs) and its event (alias e, inbox_events). A parked job's
// due time is its paused_due (see migration 0009). No column holds a
// comma of its own: itemColumnCount counts them.
const itemColumns = `i.provider, i.tenant, i.event_id, i.event_type, e.payload, e.headers,
	e.payload_sha256, e.key_id, i.state, i.attempts, CASE WHEN i.paused_due IS NULL THEN i.next_attempt_at ELSE i.paused_due END, i.lease_expires_at,
	i.last_error_class, i.last_error_message, i.last_error_at, e.duplicate_count, e.last_seen_at,
	e.occurred_at, e.received_at, i.updated_at, i.completed_at, i.dead_at, e.api_version, i.closed_at,
	e.trace_link, i.handler, e.ordering_key, e.order_version, i.ordering_key IS NOT NULL, i.seq,
	i.overtook_event_id, i.priority`

// itemColumnCount is the number of columns in itemColumns.
var itemColumnCount = strings.Count(itemColumns, ",") + 1

// summaryColumns are itemColumns as a list reads them (scanSummary): the
// payload's length (payload_bytes, see listSQL) in place of the payload
// and the headers, which a list does not show. octet_length takes the
// length of a TOASTed value from its pointer, without fetching or
// decompressing the value.
var summaryColumns = strings.Replace(itemColumns, "e.payload, e.headers,", "e.payload_bytes,", 1)

// jobOfEvent joins the event e of the job i.
const jobOfEvent = `e.provider = i.provider AND e.tenant = i.tenant AND e.event_id = i.event_id`

// jobStateSummary sums up, in one state, the states of the jobs of the
// event whose key the expressions provider, tenant and eventID give
// (webhooks.EnqueueResult.State): dead if one is, else leased, else
// pending (waiting counts as pending), else succeeded, else closed; NULL
// when it has none in the statement's snapshot.
func jobStateSummary(provider, tenant, eventID string) string {
	return `(SELECT CASE
		WHEN bool_or(j.state = 'dead') THEN 'dead'
		WHEN bool_or(j.state = 'leased') THEN 'leased'
		WHEN bool_or(j.state IN ('pending', 'waiting')) THEN 'pending'
		WHEN bool_or(j.state = 'succeeded') THEN 'succeeded'
		WHEN bool_or(j.state = 'closed') THEN 'closed' END
	FROM {{schema}}.inbox_jobs AS j
	WHERE j.provider = ` + provider + ` AND j.tenant = ` + tenant + ` AND j.event_id = ` + eventID + `)`
}

// upsertSQL inserts an event or, when the key exists, counts a duplicate
// (same digest) or a conflict (other digest), changing nothing else. The
// DO UPDATE always runs on conflict so the statement returns exactly one
// row even when the conflicting row was committed by a concurrent
// transaction after this statement's snapshot. (xmax = 0) is true only for
// a row version this statement inserted: an updated version carries the
// updating transaction as its locker. It returns the columns quarantineCTE
// and the enqueue statements read.
//
// $1 provider, $2 tenant, $3 event_id, $4 event_type, $5 payload, $6 headers,
// $7 digest, $8 key_id, $9 occurred_at, $10 received_at, $11 now (due and
// updated time), $12 api_version, $13 trace_link, $14 the handlers of the
// jobs, $15 whether each is ordered, $16 ordering key (NULL for none),
// $17 ordering version.
const upsertSQL = `
INSERT INTO {{schema}}.inbox_events AS e (
	provider, tenant, event_id, event_type, payload, headers, payload_sha256, key_id,
	duplicate_count, last_seen_at, occurred_at, received_at, api_version, trace_link,
	ordering_key, order_version)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8,
	0, $10, $9, $10, $12, $13,
	$16::text, $17::bigint)
ON CONFLICT (provider, tenant, event_id) DO UPDATE SET
	duplicate_count = CASE WHEN e.payload_sha256 = EXCLUDED.payload_sha256
		THEN e.duplicate_count + 1 ELSE e.duplicate_count END,
	last_seen_at = CASE WHEN e.payload_sha256 = EXCLUDED.payload_sha256
		THEN EXCLUDED.last_seen_at ELSE e.last_seen_at END,
	conflicts = CASE WHEN e.payload_sha256 = EXCLUDED.payload_sha256
		THEN e.conflicts ELSE e.conflicts + 1 END
RETURNING (e.xmax = 0) AS inserted, (e.payload_sha256 = $7) AS same_digest, e.conflicts`

// quarantineCTE keeps a conflicting delivery, the upsert CTE's row says
// which, when it is among the event's first ops.QuarantineLimit: its
// number is the event's conflict count, which the upsert raised under the
// row's lock, so numbers are unique. The arguments name the parameters
// holding the delivery.
func quarantineCTE(payload, headers, digest, keyID, receivedAt string) string {
	return `
quarantined AS (
	INSERT INTO {{schema}}.inbox_quarantine (
		provider, tenant, event_id, seq, payload, headers, payload_sha256, key_id, received_at)
	SELECT $1, $2, $3, conflicts, ` + payload + `, ` + headers + `, ` + digest + `, ` + keyID + `, ` + receivedAt + `
	FROM upsert
	WHERE NOT inserted AND NOT same_digest AND conflicts <= ` + strconv.Itoa(ops.QuarantineLimit) + `
)`
}

// jobsCTE inserts a new event's jobs, one per handler of $14, in their
// order. A job of an ordered handler ($15) with an ordering key ($16) goes
// through its key's row in inbox_keys: the upsert adds it to the key's
// depth, under the row's lock (ON CONFLICT DO UPDATE works on the row's
// latest version, whatever the snapshot), and the job is the key's head,
// pending, when the key had no unfinished job (depth 1 now), and waits
// behind the head otherwise; a head that starts while a dead letter of
// its key before it is neither replayed nor closed ran past it, and says
// so (overtook_event_id, see overtookSQL), as a promoted one does; a head
// copies its key's applied version (applied_version, which acquisition
// returns as webhooks.Lease.Applied), as a promoted one does. Key rows
// are locked in handler order, which is key order: the other statements
// that lock several (a settlement batch, a group commit) lock them in key
// order too. Other jobs are pending, due at $11. A duplicate adds none.
//
// A job of a version ($17 above 0) older than its key's head, when that
// head has not started, takes its place (demotedCTE): the head goes back
// to waiting, and the job is the head.
var jobsCTE = `
wanted AS (
	SELECT h.handler, h.o, CASE WHEN h.ordered THEN $16::text END AS okey, h.priority
	FROM upsert, unnest($14::text[], $15::boolean[], $18::int[]) WITH ORDINALITY AS h(handler, ordered, priority, o)
	WHERE upsert.inserted
), keyed AS (
	INSERT INTO {{schema}}.inbox_keys AS k (handler, provider, tenant, ordering_key, depth, updated_at)
	SELECT handler, $1, $2, okey, 1, coalesce($11::timestamptz, now())
	FROM wanted
	WHERE okey IS NOT NULL
	ORDER BY handler
	ON CONFLICT (handler, provider, tenant, ordering_key) DO UPDATE SET
		depth = k.depth + 1,
		updated_at = EXCLUDED.updated_at
	RETURNING k.handler, k.depth, k.dead_ahead, k.last_dead_event_id, k.applied_version
), demoted AS (
	UPDATE {{schema}}.inbox_jobs AS j SET ` + demoteSet("coalesce($11::timestamptz, now())") + `
	FROM keyed AS k
	WHERE k.depth > 1 AND $17::bigint > 0
		AND j.handler = k.handler AND j.provider = $1 AND j.tenant = $2 AND j.ordering_key = $16::text
		AND ` + demotable("j", "$17::bigint") + `
	RETURNING j.handler
), jobs AS (
	INSERT INTO {{schema}}.inbox_jobs (
		provider, tenant, event_id, handler, event_type, state, next_attempt_at, paused_due, updated_at,
		ordering_key, order_version, overtook_event_id, applied_version, priority)
	SELECT $1, $2, $3, w.handler, $4,
		CASE WHEN k.depth > 1 AND d.handler IS NULL THEN 'waiting' ELSE 'pending' END,
		` + dueOrParked("k.depth > 1 AND d.handler IS NULL", "coalesce($11::timestamptz, now())", parks("w.handler", "$1", "$2", "$4")) + `,
		coalesce($11::timestamptz, now()),
		w.okey, $17::bigint,
		CASE WHEN k.depth = 1 OR d.handler IS NOT NULL THEN ` + overtookSQL("k.dead_ahead", "k.last_dead_event_id",
	"w.handler", "$1", "$2", "w.okey", arrivedBefore("$17::bigint")) + ` END,
		CASE WHEN k.depth = 1 OR d.handler IS NOT NULL THEN k.applied_version END,
		w.priority
	FROM wanted AS w
	LEFT JOIN keyed AS k ON k.handler = w.handler
	LEFT JOIN demoted AS d ON d.handler = w.handler
	ORDER BY w.o
)`

// demotable is the condition, on the job alias of a key's head, under
// which an enqueued job of the key of version (above 0) demotes it: the
// head is of a newer version and has not started: pending, its attempt
// counter (attempt_seq) never raised and never leased (an acquisition
// always writes lease_worker, which nothing clears), so no instance ever
// ran or held it. A head that has started keeps its key, and the stale
// guard (webhooks.Lease.Applied) tells the older job, which runs after
// it.
//
// The statement holds the key's row (the upsert's lock) when it updates
// the head, and the UPDATE re-checks the condition on the head's latest
// version when it gets the row's lock: an acquisition that leased the
// head first (committed) leaves it leased, and the enqueued job waits.
// An acquisition that comes to the head after the demotion skips it
// while the enqueue holds its lock (SKIP LOCKED), and after it commits
// re-checks its WHERE on the latest version, waiting, and does not take
// it. A head committed after the statement's snapshot is not seen, and
// is not demoted: the enqueued job then waits, as before demotion.
func demotable(alias, version string) string {
	return alias + `.state = 'pending' AND ` + alias + `.attempt_seq = 0 AND ` + alias + `.lease_worker IS NULL
		AND ` + alias + `.order_version > ` + version
}

// demoteSet is the SET list of a demotion at now: the head waits, not
// due, and flags no overtaking nor applied version (it copies both again
// when promoted).
func demoteSet(now string) string {
	return `state = 'waiting', next_attempt_at = NULL, paused_due = NULL, overtook_event_id = NULL, applied_version = NULL, updated_at = ` + now
}

// overtookSQL is overtook_event_id for a job that becomes the head of
// its ordering key (handler, provider, tenant, key): the key's dead
// letter, neither replayed nor closed, nearest before the job in key
// order (order_version, then seq), NULL when none is (webhooks.Item.Overtook).
// before is the condition, on the alias d, that d comes before the job.
//
// The dead letters are the dead jobs of the statement's snapshot, and
// lastDead, the key row's last_dead_event_id as the statement locked it:
// the key's most recent death while it is neither replayed nor closed.
// The row is the key's latest version, so it names a death the snapshot
// does not show: one committed after the snapshot by the settlement the
// statement waited for on the key row's lock, or the statement's own (a
// settlement that dead-letters a head and promotes the next). A dead
// letter replayed or closed by a transaction that committed after the
// snapshot may still be named.
//
// deadAhead is the key row's dead_ahead: the subquery runs only when the
// key has a dead letter, so a key without one pays nothing for it. It
// reads inbox_jobs_dead_keys_idx and the primary key.
func overtookSQL(deadAhead, lastDead, handler, provider, tenant, key, before string) string {
	job := `d.handler = ` + handler + ` AND d.provider = ` + provider + ` AND d.tenant = ` + tenant +
		` AND d.ordering_key = ` + key + ` AND ` + before
	return `CASE WHEN ` + deadAhead + ` > 0 THEN (
		SELECT CASE WHEN l.seq IS NOT NULL AND (a.seq IS NULL OR (l.order_version, l.seq) > (a.order_version, a.seq))
			THEN l.event_id ELSE a.event_id END
		FROM (SELECT d.event_id, d.order_version, d.seq FROM {{schema}}.inbox_jobs AS d
			WHERE d.state = 'dead' AND ` + job + `
			ORDER BY d.order_version DESC, d.seq DESC LIMIT 1) AS a
		FULL JOIN (SELECT d.event_id, d.order_version, d.seq FROM {{schema}}.inbox_jobs AS d
			WHERE d.event_id = ` + lastDead + ` AND ` + job + `) AS l ON true) END`
}

// arrivedBefore is overtookSQL's before for a job the statement inserts,
// of version: a new job's seq is above every other's, so every job of
// its version or an older one comes before it.
func arrivedBefore(version string) string { return `d.order_version <= ` + version }

// enqueueState is the state an enqueue reports: a new event's jobs are
// pending; a duplicate's are summed up (jobStateSummary) as of the
// statement's snapshot, or pending when the event was committed by a
// concurrent transaction after it (its jobs are not visible then, and
// they were made pending).
const enqueueState = `CASE WHEN inserted THEN 'pending' ELSE coalesce(` + "%s" + `, 'pending') END`

// enqueueSQL stores an envelope (upsertSQL) and its jobs and quarantines
// a conflicting delivery in one statement.
//
// It sends no NOTIFY: Enqueue asks the store's notifier for one after the
// statement has committed (see notifier).
var enqueueSQL = `
WITH upsert AS (` + upsertSQL + `
),` + quarantineCTE("$5", "$6", "$7", "$8", "$10") + `,` + jobsCTE + `
SELECT inserted, same_digest, ` + fmt.Sprintf(enqueueState, jobStateSummary("$1", "$2", "$3")) + ` FROM upsert`

// enqueueNotifySQL is enqueueSQL that also notifies $19 for a new event,
// for EnqueueTx in the host's transaction: NOTIFY is delivered when that
// transaction commits, never when it rolls back.
var enqueueNotifySQL = `
WITH upsert AS (` + upsertSQL + `
),` + quarantineCTE("$5", "$6", "$7", "$8", "$10") + `,` + jobsCTE + `,
notified AS (
	SELECT pg_notify($19, '') FROM upsert WHERE inserted
)
SELECT inserted, same_digest, ` + fmt.Sprintf(enqueueState, jobStateSummary("$1", "$2", "$3")) + `,
	(SELECT count(*) FROM notified) FROM upsert`

// enqueueBatchSQL is enqueueSQL for many envelopes at once, given as
// arrays, one element per envelope: one statement, one commit. The keys
// are distinct (the committer puts at most one request per key in a
// batch: ON CONFLICT cannot update a row it inserted in the same
// statement), and rows are inserted in key order, so two batches with keys
// in common lock them in the same order and never deadlock. Each returned
// row is an envelope's position in the arrays (from 1) and what the upsert
// found for it; a conflicting delivery is quarantined as by enqueueSQL.
// Payloads and headers are taken from their arrays by position where a row
// is written, not carried through the CTEs and the sort: those keep their
// rows in memory only up to work_mem and write the rest to temporary files,
// which for a batch of large bodies cost more than the insert itself. The
// jobs come as arrays of their own, one element per job: the position of
// its envelope, its handler and whether it is ordered; they are inserted
// in the order of those arrays (envelope by envelope, in the batch's key
// order), which is the order of their seq. The ordered jobs of one key
// (handler, provider, tenant, ordering key) are counted (c) and ranked by
// (version, position) (r); the key's row is upserted once, depth + c, in
// key order, and a job is the key's head iff new depth - c + r = 1 (the
// key had none, and it comes first), or it is the first (r = 1) and
// demoted the key's head, which has not started and is of a newer version
// (see demotable); waiting otherwise (see jobsCTE).
//
// $1 provider, $2 tenant, $3 event_id, $4 event_type, $5 payload,
// $6 headers, $7 digest, $8 key_id, $9 occurred_at, $10 received_at,
// $11 due and updated time (NULL elements: the database's now),
// $12 api_version, $13 trace_link, $14 ordering key (NULL elements for
// none), $15 ordering version; $16 each job's envelope, $17 its handler,
// $18 whether it is ordered, $19 its priority.
var enqueueBatchSQL = `
WITH input AS (
	SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[],
		$7::bytea[], $8::text[], $9::timestamptz[], $10::timestamptz[], $11::timestamptz[], $12::text[], $13::text[],
		$14::text[], $15::bigint[])
		WITH ORDINALITY AS x(provider, tenant, event_id, event_type,
			payload_sha256, key_id, occurred_at, received_at, due_at, api_version, trace_link,
			ordering_key, order_version, n)
), upsert AS (
	INSERT INTO {{schema}}.inbox_events AS e (
		provider, tenant, event_id, event_type, payload, headers, payload_sha256, key_id,
		duplicate_count, last_seen_at, occurred_at, received_at, api_version, trace_link,
		ordering_key, order_version)
	SELECT provider, tenant, event_id, event_type, ($5::bytea[])[n], ($6::jsonb[])[n], payload_sha256, key_id,
		0, received_at, occurred_at, received_at, api_version, trace_link,
		ordering_key, order_version
	FROM (SELECT * FROM input ORDER BY provider COLLATE "C", tenant COLLATE "C", event_id COLLATE "C" OFFSET 0) AS sorted
	ON CONFLICT (provider, tenant, event_id) DO UPDATE SET
		duplicate_count = CASE WHEN e.payload_sha256 = EXCLUDED.payload_sha256
			THEN e.duplicate_count + 1 ELSE e.duplicate_count END,
		last_seen_at = CASE WHEN e.payload_sha256 = EXCLUDED.payload_sha256
			THEN EXCLUDED.last_seen_at ELSE e.last_seen_at END,
		conflicts = CASE WHEN e.payload_sha256 = EXCLUDED.payload_sha256
			THEN e.conflicts ELSE e.conflicts + 1 END
	RETURNING e.provider, e.tenant, e.event_id, (e.xmax = 0) AS inserted, e.payload_sha256, e.conflicts
), matched AS (
	SELECT x.n, x.payload_sha256 AS digest, x.key_id, x.received_at, x.event_type, x.due_at,
		x.ordering_key, x.order_version,
		u.provider, u.tenant, u.event_id, u.inserted, u.payload_sha256 = x.payload_sha256 AS same_digest,
		u.conflicts
	FROM upsert AS u
	JOIN input AS x ON x.provider = u.provider AND x.tenant = u.tenant AND x.event_id = u.event_id
), quarantined AS (
	INSERT INTO {{schema}}.inbox_quarantine (
		provider, tenant, event_id, seq, payload, headers, payload_sha256, key_id, received_at)
	SELECT provider, tenant, event_id, conflicts, ($5::bytea[])[n], ($6::jsonb[])[n], digest, key_id, received_at
	FROM matched
	WHERE NOT inserted AND NOT same_digest AND conflicts <= ` + strconv.Itoa(ops.QuarantineLimit) + `
), wanted AS (
	SELECT m.*, j.handler, j.o, CASE WHEN j.ordered THEN m.ordering_key END AS okey, j.priority
	FROM unnest($16::int[], $17::text[], $18::boolean[], $19::int[]) WITH ORDINALITY AS j(n, handler, ordered, priority, o)
	JOIN matched AS m ON m.n = j.n
	WHERE m.inserted
), ranked AS (
	SELECT w.*,
		count(*) OVER (PARTITION BY w.handler, w.provider, w.tenant, w.okey) AS c,
		row_number() OVER (PARTITION BY w.handler, w.provider, w.tenant, w.okey ORDER BY w.order_version, w.o) AS r
	FROM wanted AS w
), keyed AS (
	INSERT INTO {{schema}}.inbox_keys AS k (handler, provider, tenant, ordering_key, depth, updated_at)
	SELECT handler, provider, tenant, okey, c, coalesce(due_at, now())
	FROM ranked
	WHERE okey IS NOT NULL AND r = 1
	ORDER BY handler COLLATE "C", provider COLLATE "C", tenant COLLATE "C", okey COLLATE "C"
	ON CONFLICT (handler, provider, tenant, ordering_key) DO UPDATE SET
		depth = k.depth + EXCLUDED.depth,
		updated_at = EXCLUDED.updated_at
	RETURNING k.handler, k.provider, k.tenant, k.ordering_key, k.depth, k.dead_ahead, k.last_dead_event_id,
		k.applied_version
), demoted AS (
	UPDATE {{schema}}.inbox_jobs AS j SET ` + demoteSet("coalesce(r.due_at, now())") + `
	FROM ranked AS r
	JOIN keyed AS k
		ON k.handler = r.handler AND k.provider = r.provider AND k.tenant = r.tenant AND k.ordering_key = r.okey
	WHERE r.r = 1 AND k.depth > r.c AND r.order_version > 0
		AND j.handler = r.handler AND j.provider = r.provider AND j.tenant = r.tenant AND j.ordering_key = r.okey
		AND ` + demotable("j", "r.order_version") + `
	RETURNING j.handler, j.provider, j.tenant, j.ordering_key
), heads AS (
	SELECT r.o, k.applied_version,
		` + overtookSQL("k.dead_ahead", "k.last_dead_event_id", "r.handler", "r.provider", "r.tenant", "r.okey",
	arrivedBefore("r.order_version")) + ` AS overtook,
		k.depth - r.c + r.r = 1 OR r.r = 1 AND EXISTS (SELECT 1 FROM demoted AS d
			WHERE d.handler = r.handler AND d.provider = r.provider AND d.tenant = r.tenant AND d.ordering_key = r.okey) AS head
	FROM ranked AS r
	JOIN keyed AS k
		ON k.handler = r.handler AND k.provider = r.provider AND k.tenant = r.tenant AND k.ordering_key = r.okey
), jobs AS (
	INSERT INTO {{schema}}.inbox_jobs (
		provider, tenant, event_id, handler, event_type, state, next_attempt_at, paused_due, updated_at,
		ordering_key, order_version, overtook_event_id, applied_version, priority)
	SELECT r.provider, r.tenant, r.event_id, r.handler, r.event_type,
		CASE WHEN h.head IS false THEN 'waiting' ELSE 'pending' END,
		` + dueOrParked("h.head IS false", "coalesce(r.due_at, now())", parks("r.handler", "r.provider", "r.tenant", "r.event_type")) + `,
		coalesce(r.due_at, now()),
		r.okey, r.order_version,
		CASE WHEN h.head THEN h.overtook END,
		CASE WHEN h.head THEN h.applied_version END,
		r.priority
	FROM ranked AS r
	LEFT JOIN heads AS h ON h.o = r.o
	ORDER BY r.o
)
SELECT n, inserted, same_digest, ` + fmt.Sprintf(enqueueState, jobStateSummary("m.provider", "m.tenant", "m.event_id")) + `
FROM matched AS m`

// held tells, in a statement on inbox_jobs, that the row's lease (current
// or, once settled, last) is held: its attempt did not start. An
// acquisition makes a lease held by leaving lease_started_at NULL, and
// always writes lease_worker; a lease taken before migration 0003 has
// neither column, and had started. heldI and heldC are held for the
// aliases i and c.
const (
	held  = `(lease_started_at IS NULL AND lease_worker IS NOT NULL)`
	heldI = `(i.lease_started_at IS NULL AND i.lease_worker IS NOT NULL)`
	heldC = `(c.lease_started_at IS NULL AND c.lease_worker IS NOT NULL)`
)

// legacyReclaimedSQL derives, for a row no instance of this version has
// leased since migration 0005 (lease_reclaimed NULL), Lease.Reclaimed of
// the lease taking it over, or of its current lease, as the previous
// version does: from the history's row numbered number, which the
// takeover of an expired started lease recorded as crashed (or, since,
// lease_lost). alias is the row's alias.
func legacyReclaimedSQL(alias, number string) string {
	return `EXISTS (SELECT 1 FROM {{schema}}.inbox_attempts AS a
			WHERE a.provider = ` + alias + `.provider AND a.tenant = ` + alias + `.tenant AND a.event_id = ` + alias + `.event_id
				AND a.handler = ` + alias + `.handler
				AND a.number = ` + number + ` AND a.outcome IN ('crashed', 'lease_lost'))`
}

// appliedSQL reads, for the job i, its key's applied version
// (webhooks.Lease.Applied): NULL for an unordered job or a key none has
// succeeded in. The job holds it: every statement that makes a job its
// key's head (the enqueues, a settlement's promotion, a replay) copies
// the key row's applied_version into the job, and only the head's own
// success raises the key's, so the copy is the key's while the job is the
// head, and acquisition reads no other table for it.
const appliedSQL = `i.applied_version AS applied`

// acquireSQL leases up to $3 due items, the longest due first. The due
// CTE locks candidate rows, skipping rows another transaction holds; locking
// re-checks the WHERE clause against the row's latest version, and the
// CTE's columns are read from that version, so a row leased (or finished)
// by a transaction that committed after this statement's snapshot is not
// taken. Each row gets its own fresh token, and the token that settled it
// last no longer counts (settled_token).
//
// The locked rows are ranked by due time, then key: ties are common (one
// acquisition's leases expire together; a replay without a spread makes
// its items due at once), and the rank decides which start and the order
// the caller gets them in (Acquire sorts by it: RETURNING follows the
// plan). The due CTE itself leaves ties to the index: ordering them there
// would sort every row of a tie, as many as a replay makes due at once,
// before the LIMIT.
//
// A lease is started or held (webhooks.LeaseStarter, see held):
// lease_started_at is when the current lease's attempt started, NULL while
// it is held. Every row is started (its attempt counted in attempts and
// numbered in attempt_seq) unless the caller asked for held leases ($7):
// then only the rows ranked at most $8 that are not reclaimed are, and the
// others are held, counted and numbered only when started (startSQL, or a
// settlement that ran them). A row is reclaimed when it is taken over
// from an expired started lease, or its last lease is unstarted (held and
// expired, or given back) and was itself reclaimed (lease_reclaimed,
// which the statement writes; see legacyReclaimedSQL for rows without
// it); a reclaimed lease is always held.
//
// The attempt of an expired started lease is recorded as crashed by the
// same statement (the crashed CTE), from the lease columns as they were:
// its number, when it started, its expiry as its end, its worker, version
// and token (by which a late settlement of it finds it, see leaseLostSQL).
// An expired held lease was no attempt: nothing is recorded or counted
// for it. ON CONFLICT DO NOTHING: numbers are unique by construction; the
// clause makes sure a history row, which only describes, can never fail an
// acquisition (as a row written by an instance of the previous version
// during a rolling upgrade could).
//
// An acquisition with an ID ($6, webhooks.AcquireRequest.ID; NULL for
// none) writes acquisition_id: the ID, a space and the row's new token,
// which due makes for it (see repeatSQL).
//
// It leases the jobs of the handler $9 only (webhooks.AcquireRequest.Handler),
// through inbox_jobs_due_idx, which leads with the handler.
//
// A handler paused (a row of inbox_pauses in force, webhooks.PauseStore)
// gets no lease (gate), but after a breaker's cool-down, while a job is
// due and no lease of the handler is unexpired (the probe's, extended
// past probe_until, or one granted before the pause; counted from
// inbox_jobs_leased_idx), the probe CTE claims the probe by setting
// probe_until, and one job is leased, returned with probe true.
// The claim is an UPDATE: a concurrent acquisition waits for the row,
// re-checks probe_until on its latest version, and claims nothing.
//
// The gate's n (and, under Limits, what they allow) bounds the leases in
// planned, by rank, not in due's LIMIT, which stays the parameter $3: a
// LIMIT the planner cannot read is planned as a tenth of the due rows,
// and beside a large backlog it then joins the leased rows by a scan of
// inbox_jobs (TestLimitedAcquirePlanBesidePendingBacklog). So due may
// lock up to $3 rows and lease fewer, the others unlocked at commit;
// acquisitions that lease fewer than $3 (a probe, a limited handler's)
// run one at a time anyway (the pause row's lock, the advisory lock).
// A gate of 0 (paused) locks nothing: due's one-time filter.
//
// $1 now, $2 lease duration (µs), $3 limit, $4 worker, $5 version,
// $6 acquisition ID, $7 hold, $8 how many to start, $9 handler.
var acquireSQL = acquireStatement(plainAcquisition, false)

// An acquisition's kind: which statement acquireStatement makes.
type acquisitionKind int

const (
	plainAcquisition   acquisitionKind = iota // acquireSQL
	limitedAcquisition                        // acquireLimitedSQL
	fairAcquisition                           // acquireFairSQL
)

// acquireStatement makes acquireSQL, acquireLimitedSQL or acquireFairSQL,
// or, prioritized, acquirePrioritizedSQL or acquireLimitedPrioritizedSQL.
func acquireStatement(kind acquisitionKind, prioritized bool) string {
	limited := kind != plainAcquisition
	// most is how many may be leased, before the pause: Max, or what the
	// Limits allow.
	most := `$3::int`
	head := `
WITH `
	if limited {
		most = `(SELECT n FROM allowance)`
		head += limitsCTEs + `, `
	}
	due, rankOrder := dueCTE, `d.due_at, d.provider, d.tenant, d.event_id, d.handler`
	if prioritized {
		// The priorities follow the statement's other parameters.
		priorities := `$10`
		if limited {
			priorities = `$13`
		}
		due, rankOrder = prioritizedDue(priorities), `d.level, `+rankOrder
	}
	if kind == fairAcquisition {
		head = `
WITH RECURSIVE ` + head[len("\nWITH "):]
		due, rankOrder = fairCTEs, `d.turn, d.step`
	}
	return head + heldCTE + `, probe AS (
	UPDATE {{schema}}.inbox_pauses AS p SET probe_until = coalesce($1::timestamptz, now()) + $2::bigint * interval '1 microsecond'
	WHERE p.handler = $9::text AND p.provider = '' AND p.event_types = '' AND p.ended_at IS NULL AND p.cause = 'breaker'
		AND p.until <= coalesce($1::timestamptz, now())
		AND (p.probe_until IS NULL OR p.probe_until <= coalesce($1::timestamptz, now()))
		AND ` + most + ` > 0
		AND NOT EXISTS (SELECT 1 FROM {{schema}}.inbox_pauses AS o
			WHERE o.handler = '*' AND o.provider = '' AND o.event_types = '' AND o.ended_at IS NULL)
		AND NOT EXISTS (SELECT 1 FROM {{schema}}.inbox_jobs AS r
			WHERE r.handler = p.handler AND r.state = 'leased' AND r.lease_expires_at > coalesce($1::timestamptz, now()))
		AND EXISTS (SELECT 1 FROM {{schema}}.inbox_jobs AS j
			WHERE j.handler = p.handler AND j.state IN ('pending', 'leased') AND j.next_attempt_at <= coalesce($1::timestamptz, now())
				AND ` + notHeld("j") + `)
	RETURNING 1
), gate AS (
	SELECT CASE WHEN EXISTS (SELECT 1 FROM probe) THEN 1
		WHEN EXISTS (SELECT 1 FROM {{schema}}.inbox_pauses
			WHERE handler IN ($9::text, '*') AND provider = '' AND event_types = '' AND ended_at IS NULL) THEN 0
		ELSE ` + most + ` END AS n
), ` + due + `, ranked AS (
	SELECT d.*,
		CASE WHEN d.was_started THEN d.expired
			ELSE coalesce(d.lease_reclaimed, d.expired AND ` + legacyReclaimedSQL("d", "d.attempt_seq") + `) END AS reclaimed,
		row_number() OVER (ORDER BY ` + rankOrder + `) AS rank
	FROM due AS d
), planned AS (
	SELECT r.*, NOT ($7::boolean AND (r.reclaimed OR r.rank > $8::int)) AS start
	FROM ranked AS r
	WHERE r.rank <= (SELECT n FROM gate)
), crashed AS (
	INSERT INTO {{schema}}.inbox_attempts (
		provider, tenant, event_id, handler, number, outcome, started_at, finished_at, worker, version, lease_token)
	SELECT provider, tenant, event_id, handler, attempt_seq, 'crashed', lease_started_at, lease_expires_at,
		coalesce(lease_worker, ''), coalesce(lease_version, ''), lease_token
	FROM planned
	WHERE expired AND was_started
	ON CONFLICT DO NOTHING
), leased AS (
	UPDATE {{schema}}.inbox_jobs AS i SET
		state = 'leased',
		attempts = i.attempts + p.start::int,
		attempt_seq = i.attempt_seq + p.start::int,
		lease_token = p.new_token,
		acquisition_id = $6::text || ' ' || p.new_token::text,
		settled_token = NULL,
		lease_reclaimed = p.reclaimed,
		lease_started_at = CASE WHEN p.start THEN coalesce($1::timestamptz, now()) END,
		lease_worker = $4,
		lease_version = $5,
		lease_expires_at = coalesce($1::timestamptz, now()) + $2::bigint * interval '1 microsecond',
		next_attempt_at = coalesce($1::timestamptz, now()) + $2::bigint * interval '1 microsecond',
		updated_at = coalesce($1::timestamptz, now())
	FROM planned AS p
	WHERE i.provider = p.provider AND i.tenant = p.tenant AND i.event_id = p.event_id AND i.handler = p.handler
	RETURNING p.rank, p.reclaimed, NOT p.start AS unstarted, i.lease_token::text AS token, i.*
)` + spent(limited) + moved(kind) + `
SELECT i.rank, i.reclaimed, i.unstarted, i.token, EXISTS (SELECT 1 FROM probe) AS probe, ` + appliedSQL + `, ` + itemColumns + `
FROM leased AS i
JOIN {{schema}}.inbox_events AS e ON ` + jobOfEvent + `
`
}

// heldCTE is every acquisition's first CTE after the Limits': how many
// scoped pauses are in force of the handler $9 (or of every handler),
// whose jobs it leases none of. The store parks such jobs (parks), out
// of the due range, but one that became due in a statement that took its
// snapshot before the pause committed is not parked, nor is a lease that
// began before the pause: notHeld passes over them while the pause holds.
const heldCTE = `held AS MATERIALIZED (
	SELECT count(*) AS n FROM {{schema}}.inbox_pauses
	WHERE handler IN ($9::text, '*') AND ended_at IS NULL AND (provider <> '' OR event_types <> '')
)`

// notHeld is the condition that no scoped pause in force holds the job j:
// true at once when heldCTE found none, else migration 0009's inbox_held.
// A function call and a CASE keep it a cheap filter of the scan, to plan
// and to run: an EXISTS of its own in the WHERE clause was planned as an
// anti join, which cannot stop early (the scan in due order under a LIMIT
// became a scan of every due job and a sort), and a correlated EXISTS in
// the CASE took a tenth of a millisecond more to plan each acquisition.
func notHeld(j string) string {
	return `CASE WHEN (SELECT n FROM held) = 0 THEN true
			ELSE NOT {{schema}}.inbox_held(` + j + `.handler, ` + j + `.provider, ` + j + `.tenant, ` + j + `.event_type) END`
}

// scopeHolds is the condition that the scope of the pause p (its
// provider, tenant and event_types columns) holds the job j, as
// webhooks.PauseScope.Holds says and migration 0009's inbox_held does.
func scopeHolds(p, j string) string {
	return `(` + p + `.provider = '' OR ` + p + `.provider = ` + j + `.provider)
		AND (` + p + `.tenant = '' OR ` + p + `.tenant = ` + j + `.tenant)
		AND (` + p + `.event_types = '' OR ` + p + `.event_types = ` + j + `.event_type
			OR right(` + p + `.event_types, 2) = '.*' AND starts_with(` + j + `.event_type, left(` + p + `.event_types, -1))
				AND length(` + j + `.event_type) > length(` + p + `.event_types) - 1)`
}

// parks is the condition that the job of the handler h, of an event of
// provider p, tenant t and type et, that becomes pending and due in the
// statement, is parked: a scoped pause in force holds it (see migration
// 0009). Its EXISTS reads no column of the row, so PostgreSQL runs it
// once per statement, and calls inbox_held only while a scoped pause is
// in force: with none, the usual case, parking costs a look at a table
// of a few rows per statement. Every statement that makes a job due
// parks it so (the enqueues, the retries and give-backs of settlements,
// promotions, replays, the resume of another pause); an acquisition
// leases no held job even when one was not parked (notHeld).
func parks(h, p, t, et string) string {
	return `(CASE WHEN NOT EXISTS (SELECT 1 FROM {{schema}}.inbox_pauses
			WHERE ended_at IS NULL AND (provider <> '' OR event_types <> '')) THEN false
		ELSE {{schema}}.inbox_held(` + h + `, ` + p + `, ` + t + `, ` + et + `) END)`
}

// dueOrParked returns the values of next_attempt_at and paused_due, in
// that order and comma-separated, of a job that waits (not due: both
// NULL) when the condition waiting holds, and otherwise is pending, due
// at due, or parked when park holds: due at 'infinity', its due time kept
// in paused_due.
func dueOrParked(waiting, due, park string) string {
	next, paused := dueOrParkedValues(waiting, due, park)
	return next + `,
		` + paused
}

// dueOrParkedSet is dueOrParked as the items of a SET list.
func dueOrParkedSet(waiting, due, park string) string {
	next, paused := dueOrParkedValues(waiting, due, park)
	return `next_attempt_at = ` + next + `,
		paused_due = ` + paused
}

// dueOrParkedValues returns dueOrParked's two values.
func dueOrParkedValues(waiting, due, park string) (next, paused string) {
	return `CASE WHEN ` + waiting + ` THEN NULL WHEN ` + park + ` THEN 'infinity'::timestamptz ELSE ` + due + ` END`,
		`CASE WHEN ` + waiting + ` THEN NULL WHEN ` + park + ` THEN ` + due + ` END`
}

// parkedSet is dueOrParkedSet for a job, the row being updated (its own
// columns), that becomes pending, due at due.
func parkedSet(due string) string {
	return dueOrParkedSet("false", due, parks("handler", "provider", "tenant", "event_type"))
}

// pauseInForceSQL locks the pause in force of the handler $1 and the
// scope $2 (provider), $3 (tenant), $4 (event_types), and returns its ID
// and cause.
const pauseInForceSQL = `
SELECT id, cause FROM {{schema}}.inbox_pauses
WHERE handler = $1::text AND provider = $2::text AND tenant = $3::text AND event_types = $4::text AND ended_at IS NULL
FOR UPDATE`

// endPauseSQL ends the pause $1 at $2, by $3, for the reason $4.
const endPauseSQL = `
UPDATE {{schema}}.inbox_pauses SET ended_at = $2, ended_by = $3, end_reason = $4, probe_until = NULL WHERE id = $1`

// insertPauseSQL starts a pause of the handler $1 and the scope $7
// (provider), $8 (tenant), $9 (event_types): cause $2, actor $3, reason
// $4, at $5, until $6 (NULL for an operator's).
const insertPauseSQL = `
INSERT INTO {{schema}}.inbox_pauses (handler, cause, actor, reason, since, until, provider, tenant, event_types)
VALUES ($1::text, $2::text, $3::text, $4::text, $5, $6, $7::text, $8::text, $9::text)`

// parkSQL parks the pending jobs, due or not, that the scope $2
// (provider), $3 (tenant), $4 (event_types) holds of the handler $1 ('*':
// of every handler), for a new scoped pause, in its transaction (see
// parks). With a provider, it reads inbox_jobs_tenant_due_idx
// (whose predicate it names); a scope of types alone reads every job of
// the handler that is pending or leased.
var parkSQL = `
UPDATE {{schema}}.inbox_jobs AS j SET paused_due = j.next_attempt_at, next_attempt_at = 'infinity'
FROM (SELECT $2::text AS provider, $3::text AS tenant, $4::text AS event_types) AS p
WHERE (j.handler = $1::text OR $1::text = '*')
	AND j.state COLLATE "C" IN ('pending', 'leased') AND j.state = 'pending' AND j.next_attempt_at <> 'infinity'
	AND ($2::text = '' OR j.provider = $2::text) AND ($3::text = '' OR j.tenant = $3::text)
	AND ` + scopeHolds("p", "j")

// unparkSQL gives the jobs parked by the scope $2, $3, $4 of the handler
// $1 (as parkSQL) their due times back, after the pause's end, in its
// transaction, but those another pause in force holds, which stay
// parked. It reads inbox_jobs_parked_idx.
var unparkSQL = `
UPDATE {{schema}}.inbox_jobs AS j SET
	` + dueOrParkedSet("false", "j.paused_due", parks("j.handler", "j.provider", "j.tenant", "j.event_type")) + `
FROM (SELECT $2::text AS provider, $3::text AS tenant, $4::text AS event_types) AS p
WHERE j.paused_due IS NOT NULL AND (j.handler = $1::text OR $1::text = '*')
	AND ($2::text = '' OR j.provider = $2::text) AND ($3::text = '' OR j.tenant = $3::text)
	AND ` + scopeHolds("p", "j")

// resumeSQL ends the pause in force of the handler $1 and the scope $6,
// $7, $8 (as pauseInForceSQL's) at $3, by $4, for the reason $5: any
// pause when $2 is 'operator', a breaker's only when it is 'breaker'.
const resumeSQL = `
UPDATE {{schema}}.inbox_pauses SET ended_at = $3, ended_by = $4::text, end_reason = $5::text, probe_until = NULL
WHERE handler = $1::text AND provider = $6::text AND tenant = $7::text AND event_types = $8::text
	AND ended_at IS NULL AND ($2::text = 'operator' OR cause = 'breaker')`

// pausesSQL lists the pauses in force by handler and scope, then the $1
// that ended last, the latest first.
const pausesSQL = `
(SELECT handler, provider, tenant, event_types, cause, actor, reason, since, until, probe_until, ended_at, ended_by, end_reason
	FROM {{schema}}.inbox_pauses WHERE ended_at IS NULL ORDER BY handler, provider, tenant, event_types)
UNION ALL
(SELECT handler, provider, tenant, event_types, cause, actor, reason, since, until, probe_until, ended_at, ended_by, end_reason
	FROM {{schema}}.inbox_pauses WHERE ended_at IS NOT NULL ORDER BY ended_at DESC, id DESC LIMIT $1)`

// lockLimitsSQL takes the transaction-level advisory lock of the handler
// $2 in the schema's class $1 (see Store.limitsClass), which every
// acquisition of the handler under Limits takes first: they count its
// running leases and spend its tokens one after the other. It is a
// statement of its own, so that the acquisition after it, in the same
// transaction, takes its snapshot once the lock is held and sees every
// lease the acquisition before it granted.
const lockLimitsSQL = `SELECT pg_advisory_xact_lock($1::int, hashtext($2::text))`

// acquireLimitedSQL is acquireSQL under webhooks.Limits, after
// lockLimitsSQL: it leases no more than the handler's room under
// MaxRunning ($10, 0 none; its leased rows not expired, counted from
// inbox_jobs_leased_idx) and the tokens of its bucket (inbox_limits:
// $12 tokens, one every $11 µs, 0 none), and spends a token per lease.
var acquireLimitedSQL = acquireStatement(limitedAcquisition, false)

// limitsCTEs are acquireLimitedSQL's first: the handler's bucket, and
// how many its Limits allow (allowance.n).
const limitsCTEs = `bucket AS (
	SELECT greatest(coalesce((SELECT full_at FROM {{schema}}.inbox_limits WHERE handler = $9::text), '-infinity'),
		coalesce($1::timestamptz, now())) AS from_at
), allowance AS (
	SELECT least($3::int,
		CASE WHEN $10::int > 0 THEN greatest(0, $10::int - (SELECT count(*) FROM {{schema}}.inbox_jobs
			WHERE handler = $9::text AND state = 'leased' AND lease_expires_at > coalesce($1::timestamptz, now())))
			ELSE $3::int END,
		CASE WHEN $11::bigint > 0 THEN greatest(0, $12::int
			- ceil(extract(epoch FROM b.from_at - coalesce($1::timestamptz, now())) * 1000000 / $11::bigint))
			ELSE $3::int END)::int AS n,
		b.from_at
	FROM bucket AS b
)`

// spent is, limited, acquireLimitedSQL's last CTE, which spends a token
// of the handler's bucket per lease; nothing otherwise.
func spent(limited bool) string {
	if !limited {
		return ``
	}
	return `, spent AS (
	INSERT INTO {{schema}}.inbox_limits AS l (handler, full_at)
	SELECT $9::text, a.from_at + (SELECT count(*) FROM leased) * $11::bigint * interval '1 microsecond'
	FROM allowance AS a
	WHERE $11::bigint > 0 AND EXISTS (SELECT 1 FROM leased)
	ON CONFLICT (handler) DO UPDATE SET full_at = EXCLUDED.full_at
)`
}

// dueCTE is acquireSQL's due CTE: the handler's due jobs, the longest
// due first, locked.
var dueCTE = `due AS (
	SELECT ` + dueColumns + `
	FROM {{schema}}.inbox_jobs AS i
	WHERE i.handler = $9::text AND i.state IN ('pending', 'leased')
		AND i.next_attempt_at <= coalesce($1::timestamptz, now())
		AND (SELECT n FROM gate) > 0
		AND ` + notHeld("i") + `
	ORDER BY i.next_attempt_at
	LIMIT $3
	FOR UPDATE SKIP LOCKED
)`

// acquirePrioritizedSQL is acquireSQL with webhooks.AcquireRequest.Priorities
// ($10), and acquireLimitedPrioritizedSQL acquireLimitedSQL with them
// ($13): their due CTE is prioritizedDue's.
var (
	acquirePrioritizedSQL        = acquireStatement(plainAcquisition, true)
	acquireLimitedPrioritizedSQL = acquireStatement(limitedAcquisition, true)
)

// prioritizedDue is the due CTE of an acquisition with the priorities p
// (an int array, each above 0, highest first; see
// webhooks.FlowSupport.Priorities): dueCTE's jobs, those of p[1] first,
// the longest due first, then those of p[2], and so on, then the others
// (level: the priority's place in p, and one past it for the others). A
// priority's due jobs are read from inbox_jobs_priority_idx (whose
// predicate the scan names), one LIMIT each, in the order of p; the
// others from inbox_jobs_due_idx, past the due jobs of p's priorities:
// those are fewer than $3 (else the scan does not run) and the ones other
// acquisitions hold locked. The scans run one after the other, in that
// order, under due's LIMIT, and stop once it has its rows: a backlog of
// one priority costs the jobs of another nothing to find, and those of
// priority 0 only the due ones of the others. A job of a priority p does
// not list (the handler's TypePriorities changed) is among the others.
func prioritizedDue(p string) string {
	return `due AS (
	SELECT * FROM ((
		SELECT ` + dueColumns + `, l.o AS level
		FROM unnest(` + p + `::int[]) WITH ORDINALITY AS l(priority, o)
		CROSS JOIN LATERAL (` + lockedDue(`i.priority = l.priority AND i.state IN ('pending', 'leased') AND i.priority <> 0`) + `) AS i
	) UNION ALL (
		SELECT ` + dueColumns + `, cardinality(` + p + `::int[]) + 1 AS level
		FROM (` + lockedDue(`i.state IN ('pending', 'leased') AND i.priority <> ALL (`+p+`::int[])`) + `) AS i
	)) AS d
	LIMIT $3
)`
}

// lockedDue is one of prioritizedDue's scans: the handler $9's due jobs
// (alias i) that match, not held, the longest due first, up to $3,
// locked, none while the gate is shut. Each locks in a subquery of its
// own: FOR UPDATE is not allowed on an arm of a UNION.
func lockedDue(match string) string {
	return `
			SELECT i.* FROM {{schema}}.inbox_jobs AS i
			WHERE i.handler = $9::text AND ` + match + `
				AND i.next_attempt_at <= coalesce($1::timestamptz, now())
				AND (SELECT n FROM gate) > 0
				AND ` + notHeld("i") + `
			ORDER BY i.next_attempt_at
			LIMIT $3
			FOR UPDATE SKIP LOCKED`
}

// dueColumns are the columns of a due CTE, of the job i.
const dueColumns = `i.provider, i.tenant, i.event_id, i.handler, i.next_attempt_at AS due_at, i.state = 'leased' AS expired,
		NOT ` + heldI + ` AS was_started, i.lease_reclaimed,
		i.attempt_seq, i.lease_token, i.lease_started_at, i.lease_expires_at, i.lease_worker, i.lease_version,
		gen_random_uuid() AS new_token`

// acquireFairSQL is acquireLimitedSQL with webhooks.AcquireRequest.Fair
// (see webhooks.FlowSupport.Fair), after lockLimitsSQL, which makes the
// handler's Fair acquisitions run one after the other. Its due CTE is
// fairCTEs': the walk CTE visits the tenants of the handler with pending
// or leased jobs, from the one after the tenant of its row of inbox_fair
// (the cursor CTE; the first without one) and coming round to the start,
// one probe of inbox_jobs_tenant_due_idx for the next tenant, whose first
// entry there is its longest due job (due or not: a tenant has a due job
// when that one is), until it has found as many with one as it may lease
// (the gate's n: $3, or fewer under Limits or for a probe), or visited
// $13 (webhooks.AcquireRequest.FairVisits) or all of them. cand reads the
// due jobs of each tenant found, in due order, no more than n - found +
// 1 of each (every other tenant found takes one in the first turn), from
// the same index, and numbers them in that order (their turn; ties by
// event ID), sorting no more than it read: a window over the index scan
// would read a tie to its end, as many rows as a replay makes due at
// once, before the LIMIT; due locks the first $3 by turn, then visit
// order, skipping locked rows and re-checking each row's latest version,
// and ranks them so. The moved CTE keeps the tenant visited last. The
// walk and cand name the state's collation as the index's predicate does
// (see migration 0008), so that they read that index whatever the
// table's statistics say.
var acquireFairSQL = acquireStatement(fairAcquisition, false)

// fairCTEs are acquireFairSQL's in place of dueCTE.
var fairCTEs = `cursor AS (
	SELECT coalesce((SELECT provider FROM {{schema}}.inbox_fair WHERE handler = $9::text), '') AS provider,
		coalesce((SELECT tenant FROM {{schema}}.inbox_fair WHERE handler = $9::text), '') AS tenant
), walk AS (
	SELECT 0 AS step, 0 AS found, false AS wrapped, false AS due, c.provider, c.tenant
	FROM cursor AS c
	UNION ALL
	SELECT w.step + 1, w.found + n.due::int, n.wrapped, n.due, n.provider, n.tenant
	FROM walk AS w
	CROSS JOIN LATERAL (
		SELECT t.provider, t.tenant, t.wrapped, t.next_attempt_at <= coalesce($1::timestamptz, now()) AS due
		FROM ((SELECT j.provider, j.tenant, j.next_attempt_at, w.wrapped AS wrapped
				FROM {{schema}}.inbox_jobs AS j
				WHERE j.handler = $9::text AND j.state COLLATE "C" IN ('pending', 'leased') AND (j.provider, j.tenant) > (w.provider, w.tenant)
				ORDER BY j.provider, j.tenant, j.next_attempt_at
				LIMIT 1)
			UNION ALL
			(SELECT j.provider, j.tenant, j.next_attempt_at, true
				FROM {{schema}}.inbox_jobs AS j
				WHERE NOT w.wrapped AND j.handler = $9::text AND j.state COLLATE "C" IN ('pending', 'leased')
				ORDER BY j.provider, j.tenant, j.next_attempt_at
				LIMIT 1)
			LIMIT 1) AS t
		WHERE NOT (t.wrapped AND (t.provider, t.tenant) > (SELECT c.provider, c.tenant FROM cursor AS c))
	) AS n
	WHERE w.found < (SELECT n FROM gate) AND w.step < $13::int
), cand AS MATERIALIZED (
	SELECT c.provider, c.tenant, c.event_id, w.step,
		row_number() OVER (PARTITION BY w.step ORDER BY c.next_attempt_at, c.event_id) AS turn
	FROM walk AS w
	CROSS JOIN LATERAL (
		SELECT j.provider, j.tenant, j.event_id, j.next_attempt_at
		FROM {{schema}}.inbox_jobs AS j
		WHERE j.handler = $9::text AND j.provider = w.provider AND j.tenant = w.tenant
			AND j.state COLLATE "C" IN ('pending', 'leased') AND j.next_attempt_at <= coalesce($1::timestamptz, now())
			AND ` + notHeld("j") + `
		ORDER BY j.next_attempt_at
		LIMIT (SELECT n FROM gate) - (SELECT max(found) FROM walk) + 1
	) AS c
	WHERE w.due
), due AS (
	SELECT ` + dueColumns + `, c.turn, c.step
	FROM cand AS c
	JOIN {{schema}}.inbox_jobs AS i
		ON i.provider = c.provider AND i.tenant = c.tenant AND i.event_id = c.event_id AND i.handler = $9::text
	WHERE i.state IN ('pending', 'leased') AND i.next_attempt_at <= coalesce($1::timestamptz, now())
	ORDER BY c.turn, c.step
	LIMIT $3
	FOR UPDATE OF i SKIP LOCKED
)`

// moved is, for a Fair acquisition, its CTE that keeps the tenant it
// visited last in inbox_fair; nothing otherwise.
func moved(kind acquisitionKind) string {
	if kind != fairAcquisition {
		return ``
	}
	return `, moved AS (
	INSERT INTO {{schema}}.inbox_fair AS f (handler, provider, tenant)
	SELECT $9::text, w.provider, w.tenant FROM walk AS w WHERE w.step > 0 ORDER BY w.step DESC LIMIT 1
	ON CONFLICT (handler) DO UPDATE SET provider = EXCLUDED.provider, tenant = EXCLUDED.tenant
)`
}

// repeatSQL returns the leases granted under the acquisition ID $2 and
// still valid at $1 (webhooks.AcquisitionRepeater), in the columns of
// acquireSQL's result, ranked by priority, the highest first, changing
// nothing: rows leased, due (their lease
// expiry) after now, whose acquisition_id is the ID followed by their
// current token. It goes through the leased rows and the retries not yet
// due of the handler $3 (inbox_jobs_due_idx from now on, or a scan of the
// table where many retries are scheduled); it only follows an acquisition
// error. The rows are ordered by expiry, as the index holds them: without
// the order the planner may find the primary key, which holds the handler
// but not first, as cheap on a small table. The token in the value makes a
// row leased since by an instance that does not write the column (the
// previous version, during a rolling upgrade) match nothing. A lease is
// the probe when it expires when the pause in force of a breaker says its
// probe's lease does (probe_until, which the probe's acquisition set to
// the same expiry; a repeat follows an acquisition whose reply was lost,
// so the lease was not extended since).
var repeatSQL = `
SELECT (-i.priority)::bigint AS rank,
	coalesce(i.lease_reclaimed, ` + legacyReclaimedSQL("i", "i.attempt_seq - (NOT "+heldI+")::int") + `) AS reclaimed,
	` + heldI + ` AS unstarted,
	i.lease_token::text AS token,
	EXISTS (SELECT 1 FROM {{schema}}.inbox_pauses AS p
		WHERE p.handler = i.handler AND p.ended_at IS NULL AND p.cause = 'breaker' AND p.probe_until = i.lease_expires_at) AS probe,
	` + appliedSQL + `, ` + itemColumns + `
FROM {{schema}}.inbox_jobs AS i
JOIN {{schema}}.inbox_events AS e ON ` + jobOfEvent + `
WHERE i.handler = $3::text AND i.state = 'leased'
	AND i.next_attempt_at > coalesce($1::timestamptz, now())
	AND i.acquisition_id = $2::text || ' ' || i.lease_token::text
ORDER BY i.next_attempt_at`

// leaseWhere fences a statement on the current token of a job. $1..$3
// key, $4 token, $5 handler.
const leaseWhere = `
WHERE provider = $1 AND tenant = $2 AND event_id = $3 AND handler = $5::text
	AND state = 'leased' AND lease_token = $4::uuid`

// fencedSQL makes the statement of a settlement or lease extension: an
// UPDATE of the row leased under the token $4 (leaseWhere) that sets set,
// in a statement that returns two columns: whether it changed the row,
// and, when it changed nothing, whether $4 is the token that settled the
// item (ErrAlreadySettled) rather than a stale one (ErrLeaseLost). record is added after the CTE changed, which returns
// the changed row's lease columns: settleSQL's CTE that records the
// attempt, or nothing.
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
func fencedSQL(set, record string) string {
	return `
WITH changed AS (
	UPDATE {{schema}}.inbox_jobs SET` + set + leaseWhere + `
	RETURNING attempt_seq, lease_started_at, lease_worker, lease_version
)` + record + `
SELECT EXISTS (SELECT 1 FROM changed),
	coalesce((SELECT state <> 'leased' AND settled_token = $4::uuid
		FROM {{schema}}.inbox_jobs
		WHERE provider = $1 AND tenant = $2 AND event_id = $3 AND handler = $5::text
			AND NOT EXISTS (SELECT 1 FROM changed)
		FOR SHARE), false)`
}

// settleSQL makes the statement of a settlement with outcome: fencedSQL
// with set, and a CTE that records the attempt in inbox_attempts, in the
// same statement, from the lease columns the settlement leaves as they
// were: the attempt's number, start, worker and version, its outcome, the
// settlement's now ($6) as its end, and the failure errClass and errMsg
// name (SQL NULL for none). ON CONFLICT DO NOTHING as in acquireSQL. A
// held lease (lease_started_at NULL) that the settlement leaves unstarted
// (dead-lettered or abandoned) is no attempt: nothing is recorded.
func settleSQL(set, outcome, errClass, errMsg string) string {
	return fencedSQL(set, `, recorded AS (
	INSERT INTO {{schema}}.inbox_attempts (
		provider, tenant, event_id, handler, number, outcome, started_at, finished_at,
		error_class, error_message, worker, version, lease_token)
	SELECT $1, $2, $3, $5::text, attempt_seq, '`+outcome+`', lease_started_at, coalesce($6::timestamptz, now()),
		`+errClass+`, `+errMsg+`, coalesce(lease_worker, ''), coalesce(lease_version, ''), $4::uuid
	FROM changed
	WHERE NOT `+held+`
	ON CONFLICT DO NOTHING
)`)
}

// ranSet starts the SET clause of a settlement that says its handler ran
// (succeeded or retried): a held lease settled so is started by it, its
// attempt counted and numbered, started at $6 (the settlement's now).
const ranSet = `
	attempts = attempts + ` + held + `::int,
	attempt_seq = attempt_seq + ` + held + `::int,
	lease_started_at = CASE WHEN ` + held + ` THEN coalesce($6::timestamptz, now()) ELSE lease_started_at END,`

// settledSet ends the SET clause of every settlement: the lease is gone and
// its token is kept as the one that settled the item. The lease's start,
// worker and version stay, for the history; the next acquisition replaces
// them. Every settlement judges a reclaimed lease's crash but the giving
// back of an unstarted lease (abandonSQL).
const settledSet = `
	acquisition_id = NULL,
	lease_token = NULL,
	lease_expires_at = NULL,
	settled_token = lease_token,
	lease_reclaimed = false`

// succeedSQL: $6 now, $7 and $8 the class and message of the
// settlement's note for the history (NULL for none, see
// webhooks.Settlement.Failure). The item's last error is cleared: the
// history keeps every failure.
var succeedSQL = settleSQL(ranSet+`
	state = 'succeeded',
	completed_at = coalesce($6::timestamptz, now()),
	updated_at = coalesce($6::timestamptz, now()),
	next_attempt_at = NULL,
	last_error_class = NULL,
	last_error_message = NULL,
	last_error_at = NULL,`+settledSet, "succeeded", "$7::text", "$8::text")

// retrySQL: $6 now, $7 retry at (NULL with the database clock), $8 retry
// delay from now (µs), $9 error class, $10 error message.
var retrySQL = settleSQL(ranSet+`
	state = 'pending',
	`+parkedSet("coalesce($7::timestamptz, now() + $8::bigint * interval '1 microsecond')")+`,
	last_error_class = $9,
	last_error_message = $10,
	last_error_at = coalesce($6::timestamptz, now()),
	updated_at = coalesce($6::timestamptz, now()),`+settledSet, "retried", "$9", "$10")

// deadLetterSQL: $6 now, $7 error class, $8 error message.
var deadLetterSQL = settleSQL(`
	state = 'dead',
	dead_at = coalesce($6::timestamptz, now()),
	next_attempt_at = NULL,
	last_error_class = $7,
	last_error_message = $8,
	last_error_at = coalesce($6::timestamptz, now()),
	updated_at = coalesce($6::timestamptz, now()),`+settledSet, "dead_lettered", "$7", "$8")

// abandonSQL: $6 now. The attempt is not counted (attempts), but it keeps
// its number in the history; a held lease had neither, and a reclaimed one
// stays reclaimed: it ran nothing, so its crash is still to be judged.
var abandonSQL = settleSQL(`
	state = 'pending',
	attempts = CASE WHEN `+held+` THEN attempts ELSE greatest(attempts - 1, 0) END,
	`+parkedSet("coalesce($6::timestamptz, now())")+`,
	updated_at = coalesce($6::timestamptz, now()),`+strings.Replace(settledSet, "lease_reclaimed = false",
	"lease_reclaimed = "+held+" AND lease_reclaimed", 1), "abandoned", "NULL", "NULL")

// settleBatchSQL settles many leases in one statement, each fenced by its
// own token and recorded in inbox_attempts, as the statements of
// settleSQL do one at a time; the settlements come as arrays, one element
// each, and a key appears at most once (SettleBatch runs repeats in a
// statement of their own). The outcome selects the changes of succeedSQL,
// retrySQL, deadLetterSQL or abandonSQL (ranSet included). Each returned row is a
// settlement's position in the arrays (from 1), whether it changed its
// item, and, when not, whether its token is the one that settled the
// item, read with a lock as by fencedSQL.
//
// SettleBatch sorts the settlements by key, and the plan updates the rows
// in that order (a nested loop from the arrays into the primary key, which
// TestQueriesUseTheirIndexes checks), as an enqueue batch locks its rows:
// two batches with rows in common wait for each other in one direction
// only. (Locking the rows first, in an ORDER BY … FOR UPDATE, would make
// that certain for any plan, at the price of a lock record per row.)
//
// $1 provider, $2 tenant, $3 event_id, $4 token, $5 outcome (an
// AttemptOutcome), $6 now (NULL elements: the database's now), $7 retry
// at (NULL: now plus $8), $8 retry delay (µs), $9 error class and $10
// error message (NULL unless retried or dead-lettered), $11 handler.
var settleBatchSQL = `
WITH input AS (
	SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::uuid[], $5::text[], $6::timestamptz[],
		$7::timestamptz[], $8::bigint[], $9::text[], $10::text[], $11::text[])
		WITH ORDINALITY AS b(provider, tenant, event_id, token, outcome, now, retry_at, retry_us,
			error_class, error_message, handler, n)
), changed AS (
	UPDATE {{schema}}.inbox_jobs AS i SET
		state = CASE b.outcome WHEN 'succeeded' THEN 'succeeded' WHEN 'dead_lettered' THEN 'dead' ELSE 'pending' END,
		attempts = CASE
			WHEN b.outcome = 'abandoned' AND NOT ` + heldI + ` THEN greatest(i.attempts - 1, 0)
			WHEN b.outcome IN ('succeeded', 'retried') AND ` + heldI + ` THEN i.attempts + 1
			ELSE i.attempts END,
		attempt_seq = i.attempt_seq + (b.outcome IN ('succeeded', 'retried') AND ` + heldI + `)::int,
		lease_started_at = CASE WHEN b.outcome IN ('succeeded', 'retried') AND ` + heldI + `
			THEN coalesce(b.now, now()) ELSE i.lease_started_at END,
		` + dueOrParkedSet("b.outcome NOT IN ('retried', 'abandoned')",
	"CASE b.outcome WHEN 'retried' THEN coalesce(b.retry_at, now() + b.retry_us * interval '1 microsecond') ELSE coalesce(b.now, now()) END",
	parks("i.handler", "i.provider", "i.tenant", "i.event_type")) + `,
		completed_at = CASE b.outcome WHEN 'succeeded' THEN coalesce(b.now, now()) ELSE i.completed_at END,
		dead_at = CASE b.outcome WHEN 'dead_lettered' THEN coalesce(b.now, now()) ELSE i.dead_at END,
		last_error_class = CASE b.outcome WHEN 'succeeded' THEN NULL WHEN 'abandoned' THEN i.last_error_class
			ELSE b.error_class END,
		last_error_message = CASE b.outcome WHEN 'succeeded' THEN NULL WHEN 'abandoned' THEN i.last_error_message
			ELSE b.error_message END,
		last_error_at = CASE b.outcome WHEN 'succeeded' THEN NULL WHEN 'abandoned' THEN i.last_error_at
			ELSE coalesce(b.now, now()) END,
		updated_at = coalesce(b.now, now()),` + strings.Replace(settledSet, "lease_reclaimed = false",
	"lease_reclaimed = b.outcome = 'abandoned' AND "+heldI+" AND i.lease_reclaimed", 1) + `
	FROM input AS b
	WHERE i.provider = b.provider AND i.tenant = b.tenant AND i.event_id = b.event_id AND i.handler = b.handler
		AND i.state = 'leased' AND i.lease_token = b.token
	RETURNING b.n, i.attempt_seq, i.lease_started_at, i.lease_worker, i.lease_version,
		i.provider, i.tenant, i.event_id, i.handler, i.ordering_key, i.order_version,
		b.outcome, b.error_class, b.now
), recorded AS (
	INSERT INTO {{schema}}.inbox_attempts (
		provider, tenant, event_id, handler, number, outcome, started_at, finished_at,
		error_class, error_message, worker, version, lease_token)
	SELECT b.provider, b.tenant, b.event_id, b.handler, c.attempt_seq, b.outcome, c.lease_started_at, coalesce(b.now, now()),
		b.error_class, b.error_message, coalesce(c.lease_worker, ''), coalesce(c.lease_version, ''), b.token
	FROM changed AS c
	JOIN input AS b ON b.n = c.n
	WHERE NOT ` + heldC + `
	ON CONFLICT DO NOTHING
), ended AS (
	SELECT c.provider, c.tenant, c.event_id, c.handler, c.ordering_key, c.order_version,
		c.outcome, c.error_class, c.now
	FROM changed AS c
	WHERE c.ordering_key IS NOT NULL AND c.outcome IN ('succeeded', 'dead_lettered')
), keyed AS (
	UPDATE {{schema}}.inbox_keys AS k SET
		depth = k.depth - 1,
		applied_version = CASE
			WHEN e.outcome = 'succeeded' AND coalesce(e.error_class, '') <> 'skipped' AND e.order_version > 0
			THEN greatest(coalesce(k.applied_version, 0), e.order_version) ELSE k.applied_version END,
		dead_ahead = k.dead_ahead + (e.outcome = 'dead_lettered')::int,
		last_dead_event_id = CASE WHEN e.outcome = 'dead_lettered' THEN e.event_id ELSE k.last_dead_event_id END,
		updated_at = coalesce(e.now, now())
	FROM ended AS e
	WHERE k.handler = e.handler AND k.provider = e.provider AND k.tenant = e.tenant AND k.ordering_key = e.ordering_key
	RETURNING k.handler, k.provider, k.tenant, k.ordering_key, k.depth, k.dead_ahead, k.last_dead_event_id,
		k.applied_version, e.now
), nxt AS MATERIALIZED (
	SELECT k.*, w.event_id, w.order_version, w.seq, w.job
	FROM keyed AS k
	CROSS JOIN LATERAL (
		SELECT j.event_id, j.order_version, j.seq, j.ctid AS job FROM {{schema}}.inbox_jobs AS j
		WHERE j.handler = k.handler AND j.provider = k.provider AND j.tenant = k.tenant
			AND j.ordering_key = k.ordering_key AND j.state = 'waiting'
		ORDER BY j.order_version, j.seq
		LIMIT 1) AS w
	WHERE k.depth > 0
), promoted AS (
	UPDATE {{schema}}.inbox_jobs AS j SET
		state = 'pending',
		` + dueOrParkedSet("false", "coalesce(n.now, now())", parks("j.handler", "j.provider", "j.tenant", "j.event_type")) + `,
		updated_at = coalesce(n.now, now()),
		overtook_event_id = ` + overtookSQL("n.dead_ahead", "n.last_dead_event_id", "n.handler", "n.provider", "n.tenant",
	"n.ordering_key", "(d.order_version, d.seq) < (n.order_version, n.seq)") + `,
		applied_version = n.applied_version
	FROM nxt AS n
	WHERE j.ctid = n.job AND j.provider = n.provider AND j.tenant = n.tenant AND j.event_id = n.event_id
		AND j.handler = n.handler AND j.state = 'waiting'
	RETURNING 1
)
SELECT b.n, c.n IS NOT NULL,
	c.n IS NULL AND coalesce((SELECT i.state <> 'leased' AND i.settled_token = b.token
		FROM {{schema}}.inbox_jobs AS i
		WHERE i.provider = b.provider AND i.tenant = b.tenant AND i.event_id = b.event_id AND i.handler = b.handler
		FOR SHARE), false),
	(SELECT count(*) FROM promoted)
FROM input AS b
LEFT JOIN changed AS c ON c.n = b.n`

// (In settleBatchSQL, nxt is MATERIALIZED, and promoted reaches the job
// nxt found by its ctid: inlined, or joined by key, the planner went
// through inbox_jobs_waiting_idx by handler, provider and tenant, and ran
// nxt's LIMIT 1 once per waiting job it met, a cost that grows with the
// tenant's waiting jobs (100 keys of 100 waiting jobs: 10,000 loops, 40 ms
// per settlement batch of 100). The ctid is stable: a waiting job changes
// only under its key's lock, which the statement holds. ended reads the
// settlement's outcome from changed, not by joining input again, which
// the planner did as a nested loop, quadratic in the batch.)

// lockKeysSQL locks the key rows $1..$4 (arrays of handler, provider,
// tenant and ordering key) in key order: the statement a settlement batch
// runs first, in its transaction, when it ends the head of an ordered key
// (succeeded or dead-lettered). settleBatchSQL then takes its snapshot
// with the locks held, so it sees every waiting job an enqueue committed
// to those keys and promotes the right one. Without it, a job enqueued
// (and its key's depth raised) after settleBatchSQL's snapshot but before
// it locked the key row would be counted in the key's depth (the UPDATE
// reads the row's latest version) but not found by the promotion (which
// reads the snapshot): it would wait behind a head that is gone, forever.
const lockKeysSQL = `
SELECT 1 FROM {{schema}}.inbox_keys
WHERE (handler, provider, tenant, ordering_key) IN (
	SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]))
ORDER BY handler, provider, tenant, ordering_key
FOR UPDATE`

// extendSQL: $6 now, $7 duration (µs).
var extendSQL = fencedSQL(`
	lease_expires_at = coalesce($6::timestamptz, now()) + $7::bigint * interval '1 microsecond',
	next_attempt_at = coalesce($6::timestamptz, now()) + $7::bigint * interval '1 microsecond',
	updated_at = coalesce($6::timestamptz, now())`, "")

// startSQL starts held leases (webhooks.LeaseStarter), given as arrays,
// one element each, with distinct keys in key order (StartLeases sorts
// them, as SettleBatch does), each fenced by its own token: a held lease's
// attempt is counted and numbered and starts at $5; a started one is
// left started. Either way its expiry moves to $5 + $6 µs. Each returned
// row is a lease's position in the arrays (from 1), whether it changed its
// row, and, when it changed nothing, whether its token is
// the one that settled the item, read with a lock as by fencedSQL.
//
// $1 provider, $2 tenant, $3 event_id, $4 token, $5 now, $6 duration (µs),
// $7 handler.
const startSQL = `
WITH input AS (
	SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::uuid[], $7::text[])
		WITH ORDINALITY AS b(provider, tenant, event_id, token, handler, n)
), changed AS (
	UPDATE {{schema}}.inbox_jobs AS i SET
		attempts = i.attempts + ` + heldI + `::int,
		attempt_seq = i.attempt_seq + ` + heldI + `::int,
		lease_started_at = CASE WHEN ` + heldI + ` THEN coalesce($5::timestamptz, now()) ELSE i.lease_started_at END,
		lease_expires_at = coalesce($5::timestamptz, now()) + $6::bigint * interval '1 microsecond',
		next_attempt_at = coalesce($5::timestamptz, now()) + $6::bigint * interval '1 microsecond',
		updated_at = coalesce($5::timestamptz, now())
	FROM input AS b
	WHERE i.provider = b.provider AND i.tenant = b.tenant AND i.event_id = b.event_id AND i.handler = b.handler
		AND i.state = 'leased' AND i.lease_token = b.token
	RETURNING b.n
)
SELECT b.n, c.n IS NOT NULL,
	c.n IS NULL AND coalesce((SELECT i.state <> 'leased' AND i.settled_token = b.token
		FROM {{schema}}.inbox_jobs AS i
		WHERE i.provider = b.provider AND i.tenant = b.tenant AND i.event_id = b.event_id AND i.handler = b.handler
		FOR SHARE), false)
FROM input AS b
LEFT JOIN changed AS c ON c.n = b.n`

// leaseLostSQL records that the worker of a crashed attempt came back: a
// settlement or lease extension under its token $4 was refused with
// ErrLeaseLost. It runs only then, never on a settlement's way. The
// attempt ends at $6 (the refused call's now), with the failure the
// refused settlement carried ($7 class, $8 message), if any. Only a
// crashed attempt changes: a token of an attempt that settled, or never
// issued, matches nothing.
const leaseLostSQL = `
UPDATE {{schema}}.inbox_attempts SET
	outcome = 'lease_lost',
	finished_at = coalesce($6::timestamptz, now()),
	error_class = coalesce($7::text, error_class),
	error_message = coalesce($8::text, error_message)
WHERE provider = $1 AND tenant = $2 AND event_id = $3 AND handler = $5::text
	AND lease_token = $4::uuid AND outcome = 'crashed'`

// releaseSQL gives back a row that an acquisition leased but could not
// read (see acquire): pending again, due when its lease would have expired,
// and not charged the attempt, since no handler ran; its attempt number is
// given back too (a held lease had neither). Its token was never handed
// out, so it is not kept. $6 now.
var releaseSQL = `
UPDATE {{schema}}.inbox_jobs SET
	state = 'pending',
	attempts = greatest(attempts - (NOT ` + held + `)::int, 0),
	attempt_seq = greatest(attempt_seq - (NOT ` + held + `)::int, 0),
	` + parkedSet("lease_expires_at") + `,
	updated_at = coalesce($6::timestamptz, now()),
	acquisition_id = NULL,
	lease_token = NULL,
	lease_expires_at = NULL` + leaseWhere

// registerSQL registers a replay key, replacing an expired registration in
// the same statement. Like enqueueSQL it always updates on conflict, so it
// returns exactly one row; the SET expressions all read the old row. The
// registration ID is fresh per call, so finding it in the row means this
// call made the registration.
//
// Keys are guarded per provider (webhooks.ReplayRegistration): the tenant
// column, part of the primary key since 0001, is always ”. Instances of
// an earlier version, during a rolling upgrade, still write the route's
// tenant there; their keys then stay apart from these until they expire.
//
// $1 provider, $2 key, $3 digest, $4 registration ID, $5 now, $6 expires
// at (NULL with the database clock), $7 expiry from now (µs).
const registerSQL = `
INSERT INTO {{schema}}.replay_keys AS r (
	provider, tenant, replay_key, payload_sha256, registration_id, registered_at, expires_at)
VALUES ($1, '', $2, $3, $4, coalesce($5::timestamptz, now()),
	coalesce($6::timestamptz, now() + $7::bigint * interval '1 microsecond'))
ON CONFLICT (provider, tenant, replay_key) DO UPDATE SET
	payload_sha256 = CASE WHEN r.expires_at <= EXCLUDED.registered_at
		THEN EXCLUDED.payload_sha256 ELSE r.payload_sha256 END,
	registration_id = CASE WHEN r.expires_at <= EXCLUDED.registered_at
		THEN EXCLUDED.registration_id ELSE r.registration_id END,
	registered_at = CASE WHEN r.expires_at <= EXCLUDED.registered_at
		THEN EXCLUDED.registered_at ELSE r.registered_at END,
	expires_at = CASE WHEN r.expires_at <= EXCLUDED.registered_at
		THEN EXCLUDED.expires_at ELSE r.expires_at END
RETURNING (r.registration_id = $4) AS registered, (r.payload_sha256 = $3) AS same_digest`

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
//
// Retention is per job: the statement deletes jobs, and returns, locked
// FOR UPDATE, the events they belonged to; deleteEventsSQL then deletes
// those of them left without a job, in the same transaction. Locking the
// events first means that a job another transaction adds to one of them
// (a replay to another handler, which locks its event) is committed, and
// seen by deleteEventsSQL, before that statement decides: the event then
// stays.
const deleteSucceededSQL = `
WITH gone AS (
	DELETE FROM {{schema}}.inbox_jobs
	WHERE (provider, tenant, event_id, handler) IN (
			SELECT provider, tenant, event_id, handler FROM {{schema}}.inbox_jobs
			WHERE state = 'succeeded' AND completed_at < $1
			LIMIT $2
			FOR UPDATE SKIP LOCKED)
	RETURNING provider, tenant, event_id
)
SELECT (SELECT count(*) FROM gone), e.provider, e.tenant, e.event_id
FROM {{schema}}.inbox_events AS e
WHERE (e.provider, e.tenant, e.event_id) IN (SELECT provider, tenant, event_id FROM gone)
ORDER BY e.provider, e.tenant, e.event_id
FOR UPDATE OF e`

// deleteClosedSQL deletes one batch of closed jobs closed before the
// cutoff $1, like deleteSucceededSQL; $2 is the batch size.
const deleteClosedSQL = `
WITH gone AS (
	DELETE FROM {{schema}}.inbox_jobs
	WHERE (provider, tenant, event_id, handler) IN (
			SELECT provider, tenant, event_id, handler FROM {{schema}}.inbox_jobs
			WHERE state = 'closed' AND closed_at < $1
			LIMIT $2
			FOR UPDATE SKIP LOCKED)
	RETURNING provider, tenant, event_id
)
SELECT (SELECT count(*) FROM gone), e.provider, e.tenant, e.event_id
FROM {{schema}}.inbox_events AS e
WHERE (e.provider, e.tenant, e.event_id) IN (SELECT provider, tenant, event_id FROM gone)
ORDER BY e.provider, e.tenant, e.event_id
FOR UPDATE OF e`

// sweepKeysSQL deletes, of the next $2 rows of inbox_keys after the key
// $3..$6 in key order (a sweep resumed by position, so each statement
// reads at most a batch), those with no unfinished job (depth 0) last
// changed before $1: the stale guard forgets a key's applied version
// after the retention period. DELETE re-checks depth on the row's latest
// version, so a key an enqueue has just used again stays; an enqueue
// waiting for the deleted row inserts it anew. It returns how many rows
// it deleted and the last key it read (NULL when it read none).
const sweepKeysSQL = `
WITH batch AS (
	SELECT handler, provider, tenant, ordering_key FROM {{schema}}.inbox_keys
	WHERE (handler, provider, tenant, ordering_key) > ($3::text, $4::text, $5::text, $6::text)
	ORDER BY handler, provider, tenant, ordering_key
	LIMIT $2
), gone AS (
	DELETE FROM {{schema}}.inbox_keys AS k
	USING batch AS b
	WHERE k.handler = b.handler AND k.provider = b.provider AND k.tenant = b.tenant AND k.ordering_key = b.ordering_key
		AND k.depth = 0 AND k.updated_at < $1
	RETURNING 1
), last AS (
	SELECT * FROM batch ORDER BY handler DESC, provider DESC, tenant DESC, ordering_key DESC LIMIT 1
)
SELECT (SELECT count(*) FROM gone), l.handler, l.provider, l.tenant, l.ordering_key
FROM (SELECT 1) AS one LEFT JOIN last AS l ON true`

// deleteEventsSQL deletes the events $1..$3 (arrays of keys, locked by
// the statement before it) that have no job left, with their quarantine.
const deleteEventsSQL = `
DELETE FROM {{schema}}.inbox_events AS e
WHERE (e.provider, e.tenant, e.event_id) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))
	AND NOT EXISTS (SELECT 1 FROM {{schema}}.inbox_jobs AS j
		WHERE j.provider = e.provider AND j.tenant = e.tenant AND j.event_id = e.event_id)`

// deleteExpiredReplayKeysSQL deletes one batch, like deleteSucceededSQL:
// $1 now, $2 batch size.
const deleteExpiredReplayKeysSQL = `
DELETE FROM {{schema}}.replay_keys
WHERE (provider, tenant, replay_key) IN (
		SELECT provider, tenant, replay_key FROM {{schema}}.replay_keys
		WHERE expires_at <= $1
		LIMIT $2
		FOR UPDATE SKIP LOCKED)`

// settledHereSQL tells whether the job $1..$3, $4 handler, succeeded in
// the current transaction (its row version was written by it): a second
// CompleteTx in the transaction that completed the job.
const settledHereSQL = `
SELECT coalesce((SELECT state = 'succeeded' AND xmin = pg_current_xact_id()::xid
	FROM {{schema}}.inbox_jobs
	WHERE provider = $1 AND tenant = $2 AND event_id = $3 AND handler = $4::text), false)`

// statements are the SQL texts with the schema filled in.
type statements struct {
	enqueue, enqueueNotify, enqueueBatch             string
	acquire, acquireLimited, acquireFair, lockLimits string
	acquirePrioritized, acquireLimitedPrioritized    string
	pauseInForce, endPause, insertPause              string
	resume, pauses, park, unpark                     string
	repeat, release                                  string
	succeed, retry, deadLetter, abandon, extend      string
	settleBatch, start, lockKeys                     string
	leaseLost                                        string
	get, history, audit, quarantine                  string
	listDead, listClosed                             string
	selectReplay                                     map[webhooks.State]string
	replayOne, replayBatch, peek, closeOne, stats    string
	register                                         string
	deleteSucceeded, deleteClosed, deleteEvents      string
	sweepKeys                                        string
	lockEvent, replayTo                              string
	deleteExpiredReplayKeys                          string
	settledHere                                      string
}

func renderStatements(quotedSchema string) statements {
	r := strings.NewReplacer("{{schema}}", quotedSchema)
	return statements{
		enqueue:                   r.Replace(enqueueSQL),
		enqueueNotify:             r.Replace(enqueueNotifySQL),
		enqueueBatch:              r.Replace(enqueueBatchSQL),
		release:                   r.Replace(releaseSQL),
		acquire:                   r.Replace(acquireSQL),
		acquireLimited:            r.Replace(acquireLimitedSQL),
		acquireFair:               r.Replace(acquireFairSQL),
		acquirePrioritized:        r.Replace(acquirePrioritizedSQL),
		acquireLimitedPrioritized: r.Replace(acquireLimitedPrioritizedSQL),
		lockLimits:                r.Replace(lockLimitsSQL),
		pauseInForce:              r.Replace(pauseInForceSQL),
		endPause:                  r.Replace(endPauseSQL),
		insertPause:               r.Replace(insertPauseSQL),
		resume:                    r.Replace(resumeSQL),
		pauses:                    r.Replace(pausesSQL),
		park:                      r.Replace(parkSQL),
		unpark:                    r.Replace(unparkSQL),
		repeat:                    r.Replace(repeatSQL),
		succeed:                   r.Replace(succeedSQL),
		retry:                     r.Replace(retrySQL),
		deadLetter:                r.Replace(deadLetterSQL),
		abandon:                   r.Replace(abandonSQL),
		settleBatch:               r.Replace(settleBatchSQL),
		lockKeys:                  r.Replace(lockKeysSQL),
		start:                     r.Replace(startSQL),
		extend:                    r.Replace(extendSQL),
		leaseLost:                 r.Replace(leaseLostSQL),
		get:                       r.Replace(getSQL),
		history:                   r.Replace(historySQL),
		audit:                     r.Replace(auditSQL),
		quarantine:                r.Replace(quarantineSQL),
		listDead:                  r.Replace(listSQL(summaryColumns, "dead")),
		listClosed:                r.Replace(listSQL(summaryColumns, "closed")),
		selectReplay:              replayStatements(r),
		replayOne:                 r.Replace(replayOneSQL),
		replayBatch:               r.Replace(replayBatchSQL),
		peek:                      r.Replace(peekSQL),
		closeOne:                  r.Replace(closeSQL),
		stats:                     r.Replace(statsSQL),
		register:                  r.Replace(registerSQL),
		deleteSucceeded:           r.Replace(deleteSucceededSQL),
		deleteClosed:              r.Replace(deleteClosedSQL),
		deleteEvents:              r.Replace(deleteEventsSQL),
		sweepKeys:                 r.Replace(sweepKeysSQL),
		lockEvent:                 r.Replace(lockEventSQL),
		replayTo:                  r.Replace(replayToSQL),
		deleteExpiredReplayKeys:   r.Replace(deleteExpiredReplayKeysSQL),
		settledHere:               r.Replace(settledHereSQL),
	}
}
