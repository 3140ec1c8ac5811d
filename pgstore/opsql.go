package pgstore

import (
	"strings"

	webhooks "github.com/hookinbox/webhooks"
)

// The statements of the operators' methods (ops.Store), written like those
// in sql.go.

// getSQL reads an event's jobs, by handler, each with the event and its
// conflict count: $1..$3 key.
const getSQL = `
SELECT ` + itemColumns + `, e.conflicts
FROM {{schema}}.inbox_jobs AS i
JOIN {{schema}}.inbox_events AS e ON ` + jobOfEvent + `
WHERE i.provider = $1 AND i.tenant = $2 AND i.event_id = $3
ORDER BY i.handler`

// historySQL reads the attempts of an event's jobs, by handler, oldest
// first: $1..$3 key.
const historySQL = `
SELECT handler, number, outcome, started_at, finished_at, error_class, error_message, worker, version
FROM {{schema}}.inbox_attempts
WHERE provider = $1 AND tenant = $2 AND event_id = $3
ORDER BY handler, number`

// auditSQL reads the audit trails of an event's jobs, by handler, oldest
// first: $1..$3 key.
const auditSQL = `
SELECT handler, action, at, actor, reason, ticket
FROM {{schema}}.inbox_audit
WHERE provider = $1 AND tenant = $2 AND event_id = $3
ORDER BY handler, seq`

// quarantineSQL reads an item's quarantined deliveries, oldest first:
// $1..$3 key.
const quarantineSQL = `
SELECT payload, headers, payload_sha256, key_id, received_at
FROM {{schema}}.inbox_quarantine
WHERE provider = $1 AND tenant = $2 AND event_id = $3
ORDER BY seq`

// listSQL is the start of List's statement for the columns of jobs in
// state (i, and their events e): List (and a bulk Replay, for the keys it
// replays) adds its filters, then listOrder and the limit. The order
// matches inbox_jobs_dead_idx for dead letters and inbox_jobs_closed_idx
// for closed jobs, whose predicates are the state test; succeeded jobs,
// which only a bulk replay selects, are read through
// inbox_jobs_succeeded_idx (on completed_at). Each job's event is read
// by its primary key, in a subquery the planner keeps (OFFSET 0): it
// outputs the payload's length, not the payload (see summaryColumns).
func listSQL(columns, state string) string {
	return `
SELECT ` + columns + `
FROM {{schema}}.inbox_jobs AS i
CROSS JOIN LATERAL (
	SELECT ev.payload_sha256, ev.key_id, ev.duplicate_count, ev.last_seen_at, ev.occurred_at, ev.received_at,
		ev.api_version, ev.trace_link, ev.ordering_key, ev.order_version, octet_length(ev.payload) AS payload_bytes
	FROM {{schema}}.inbox_events AS ev
	WHERE ev.provider = i.provider AND ev.tenant = i.tenant AND ev.event_id = i.event_id
	OFFSET 0) AS e
WHERE i.state = '` + state + `'`
}

// orderedBy is the column listings and bulk replays order the items of a
// state by (newest first).
var orderedBy = map[webhooks.State]string{
	webhooks.StateDead:      "dead_at",
	webhooks.StateClosed:    "closed_at",
	webhooks.StateSucceeded: "completed_at",
}

// replayStatements renders, for each state a bulk replay takes, the start
// of its selection: the keys and the column it is ordered by.
func replayStatements(r *strings.Replacer) map[webhooks.State]string {
	out := make(map[webhooks.State]string, len(orderedBy))
	for state, at := range orderedBy {
		out[state] = r.Replace(listSQL("i.provider, i.tenant, i.event_id, i.handler, i."+at, string(state)))
	}
	return out
}

// replayFirstSQL is the statement of a bulk replay's first call, from
// selection, a selectReplay statement completed by listOrdered, and the
// parameters limit (Query.Limit) and batch (ops.ReplayBatch). In one
// snapshot it counts the items the selection takes up to limit, and
// returns the first batch of them (part 1: up to batch) and the last
// (part 2), with the count. Each part reads the state's index in its
// order, so nothing is held but a batch; only the rows returned are
// sorted. The bounds are cast: least of two literals, as the simple
// protocol sends them, would be text.
func replayFirstSQL(selection, limit, batch string) string {
	return `
WITH c AS (SELECT count(*) AS n FROM (` + selection + limit + `) AS a)
SELECT s.part, s.provider, s.tenant, s.event_id, s.handler, s.at, c.n
FROM c CROSS JOIN (
	(SELECT 1 AS part, f.* FROM (` + selection + `least(` + limit + `::bigint, ` + batch + `::bigint)) AS f (provider, tenant, event_id, handler, at))
	UNION ALL
	(SELECT 2 AS part, l.* FROM (` + selection + `1 OFFSET greatest((SELECT n FROM c) - 1, 0)) AS l (provider, tenant, event_id, handler, at))
) AS s
ORDER BY s.part, s.at DESC, s.provider DESC, s.tenant DESC, s.event_id DESC, s.handler DESC`
}

// listOrder orders a listing by the column at, as its index does.
func listOrder(at string) string {
	return `
ORDER BY i.` + at + ` DESC, i.provider DESC, i.tenant DESC, i.event_id DESC, i.handler DESC
LIMIT `
}

// replayOneSQL replays the job $1..$3 of the handler $12 (NULL: every job
// of the event, for a provider's redelivery) when it is in one of the
// states $11 (dead, closed, succeeded), due at $10 (NULL: at now), and
// records the replay in its audit trail, in one statement. It returns the
// job's new due time when it replayed one (the earliest); otherwise NULL
// and the job's state (of several, the one an enqueue would report, see
// jobStateSummary), read with a lock so that a change committed by a
// concurrent transaction is seen (NULL when there is no job). A concurrent
// replay of the same job waits for the row lock, then finds it pending.
//
// A job of an ordered key re-enters its key like an enqueue (jobsCTE):
// the key's depth goes up by one, and the job is the key's head, pending,
// when the key has no other unfinished job, and waits behind the head
// otherwise (its "due time" is then the replay's now: it runs after what
// runs now); a head copies its key's applied version (see jobsCTE).
// A replayed dead letter is no longer run past (dead_ahead down by one,
// and last_dead_event_id cleared when it names it); a replayed job that
// becomes its key's head runs past the dead letters before it (see
// overtookSQL). The job is locked first (target),
// then its key: the order of every statement that takes a job and its key
// but a settlement, which locks heads, never dead or finished jobs.
//
// $1..$3 key, $4 now, $5 reset attempts, $6 action, $7 actor, $8 reason,
// $9 ticket, $10 due at (or NULL), $11 the states replayed, $12 handler.
var replayOneSQL = `
WITH target AS (
	SELECT provider, tenant, event_id, handler, ordering_key, order_version, seq, state AS was
	FROM {{schema}}.inbox_jobs
	WHERE provider = $1 AND tenant = $2 AND event_id = $3 AND ($12::text IS NULL OR handler = $12::text)
		AND state = ANY($11::text[])
	ORDER BY handler
	FOR UPDATE
), keyed AS (
	INSERT INTO {{schema}}.inbox_keys AS k (handler, provider, tenant, ordering_key, depth, updated_at)
	SELECT handler, provider, tenant, ordering_key, 1, coalesce($4::timestamptz, now())
	FROM target
	WHERE ordering_key IS NOT NULL
	ORDER BY handler
	ON CONFLICT (handler, provider, tenant, ordering_key) DO UPDATE SET
		depth = k.depth + 1,
		dead_ahead = greatest(k.dead_ahead - (SELECT count(*) FROM target AS t
			WHERE t.handler = k.handler AND t.was = 'dead')::int, 0),
		last_dead_event_id = CASE WHEN k.last_dead_event_id = $3 AND EXISTS (SELECT 1 FROM target AS t
			WHERE t.handler = k.handler AND t.was = 'dead') THEN NULL ELSE k.last_dead_event_id END,
		updated_at = EXCLUDED.updated_at
	RETURNING k.handler, k.depth, k.dead_ahead, k.last_dead_event_id, k.applied_version
), replayed AS (
	UPDATE {{schema}}.inbox_jobs AS j SET
		state = CASE WHEN k.depth > 1 THEN 'waiting' ELSE 'pending' END,
		` + dueOrParkedSet("k.depth > 1", "coalesce($10::timestamptz, $4::timestamptz, now())", parks("j.handler", "j.provider", "j.tenant", "j.event_type")) + `,
		dead_at = NULL,
		closed_at = NULL,
		completed_at = NULL,
		overtook_event_id = CASE WHEN k.depth = 1 THEN ` + overtookSQL("k.dead_ahead", "k.last_dead_event_id",
	"t.handler", "t.provider", "t.tenant", "t.ordering_key", "(d.order_version, d.seq) < (t.order_version, t.seq)") + ` END,
		applied_version = CASE WHEN k.depth = 1 THEN k.applied_version END,
		updated_at = coalesce($4::timestamptz, now()),
		attempts = CASE WHEN $5::boolean THEN 0 ELSE j.attempts END
	FROM target AS t
	LEFT JOIN keyed AS k ON k.handler = t.handler
	WHERE j.provider = t.provider AND j.tenant = t.tenant AND j.event_id = t.event_id AND j.handler = t.handler
	RETURNING j.handler, coalesce(j.paused_due, j.next_attempt_at, $4::timestamptz, now()) AS next_attempt_at
), audited AS (
	INSERT INTO {{schema}}.inbox_audit (provider, tenant, event_id, handler, action, at, actor, reason, ticket)
	SELECT $1, $2, $3, handler, $6, coalesce($4::timestamptz, now()), $7, $8, $9
	FROM replayed
)
SELECT (SELECT min(next_attempt_at) FROM replayed),
	(SELECT state FROM {{schema}}.inbox_jobs
		WHERE provider = $1 AND tenant = $2 AND event_id = $3 AND ($12::text IS NULL OR handler = $12::text)
			AND NOT EXISTS (SELECT 1 FROM replayed)
		ORDER BY CASE state WHEN 'dead' THEN 0 WHEN 'leased' THEN 1 WHEN 'pending' THEN 2 WHEN 'waiting' THEN 2
			WHEN 'succeeded' THEN 3 ELSE 4 END
		LIMIT 1
		FOR SHARE)`

// peekSQL reads a job's state for a dry run, and the now a replay would
// use: $1..$3 key, $4 now, $5 handler.
const peekSQL = `
SELECT (SELECT state FROM {{schema}}.inbox_jobs
		WHERE provider = $1 AND tenant = $2 AND event_id = $3 AND handler = $5::text),
	coalesce($4::timestamptz, now())`

// replayBatchSQL replays one call of a bulk replay: the jobs $1..$3, $12
// (arrays of keys and handlers) still in the state $11, each due at now
// plus its offset $4 (µs), and records each replay in the job's audit
// trail, in one statement. The rows are locked in key order, so
// concurrent bulk replays never deadlock; locking re-checks the state on
// the row's latest version, so a job another transaction replayed or
// closed meanwhile is skipped. It returns the replayed jobs and their due
// times. Jobs of an ordered key are left out: Replay replays each by
// replayOneSQL, which keeps its key's bookkeeping.
//
// $5 now, $6 reset attempts, $7 action, $8 actor, $9 reason, $10 ticket,
// $11 the state replayed, $12 handlers.
var replayBatchSQL = `
WITH batch AS (
	SELECT i.provider, i.tenant, i.event_id, i.handler, b.offset_us
	FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $12::text[]) AS b(provider, tenant, event_id, offset_us, handler)
	JOIN {{schema}}.inbox_jobs AS i
		ON i.provider = b.provider AND i.tenant = b.tenant AND i.event_id = b.event_id AND i.handler = b.handler
	WHERE i.state = $11::text AND i.ordering_key IS NULL
	ORDER BY i.provider, i.tenant, i.event_id, i.handler
	FOR UPDATE OF i
), replayed AS (
	UPDATE {{schema}}.inbox_jobs AS i SET
		state = 'pending',
		` + dueOrParkedSet("false", "coalesce($5::timestamptz, now()) + batch.offset_us * interval '1 microsecond'",
	parks("i.handler", "i.provider", "i.tenant", "i.event_type")) + `,
		dead_at = NULL,
		closed_at = NULL,
		completed_at = NULL,
		updated_at = coalesce($5::timestamptz, now()),
		attempts = CASE WHEN $6::boolean THEN 0 ELSE i.attempts END
	FROM batch
	WHERE i.provider = batch.provider AND i.tenant = batch.tenant AND i.event_id = batch.event_id
		AND i.handler = batch.handler
	RETURNING i.provider, i.tenant, i.event_id, i.handler, coalesce(i.paused_due, i.next_attempt_at) AS next_attempt_at
), audited AS (
	INSERT INTO {{schema}}.inbox_audit (provider, tenant, event_id, handler, action, at, actor, reason, ticket)
	SELECT provider, tenant, event_id, handler, $7, coalesce($5::timestamptz, now()), $8, $9, $10
	FROM replayed
)
SELECT provider, tenant, event_id, handler, next_attempt_at FROM replayed`

// closeSQL closes the dead job $1..$3 of the handler $8 and records the
// closing in its audit trail, in one statement. It returns whether it
// closed the job, and otherwise its state, read like replayOneSQL's. A
// closed dead letter of an ordered key is no longer run past by its
// key's next heads (dead_ahead down by one, and last_dead_event_id
// cleared when it names it).
//
// $4 now, $5 actor, $6 reason, $7 ticket, $8 handler.
var closeSQL = `
WITH closed AS (
	UPDATE {{schema}}.inbox_jobs SET
		state = 'closed',
		closed_at = coalesce($4::timestamptz, now()),
		updated_at = coalesce($4::timestamptz, now())
	WHERE provider = $1 AND tenant = $2 AND event_id = $3 AND handler = $8::text AND state = 'dead'
	RETURNING provider, tenant, handler, ordering_key
), released AS (
	UPDATE {{schema}}.inbox_keys AS k SET
		dead_ahead = greatest(k.dead_ahead - 1, 0),
		last_dead_event_id = CASE WHEN k.last_dead_event_id = $3 THEN NULL ELSE k.last_dead_event_id END,
		updated_at = coalesce($4::timestamptz, now())
	FROM closed AS c
	WHERE c.ordering_key IS NOT NULL AND k.handler = c.handler AND k.provider = c.provider
		AND k.tenant = c.tenant AND k.ordering_key = c.ordering_key
), audited AS (
	INSERT INTO {{schema}}.inbox_audit (provider, tenant, event_id, handler, action, at, actor, reason, ticket)
	SELECT $1, $2, $3, $8::text, 'close', coalesce($4::timestamptz, now()), $5, $6, $7
	FROM closed
)
SELECT EXISTS (SELECT 1 FROM closed),
	(SELECT state FROM {{schema}}.inbox_jobs
		WHERE provider = $1 AND tenant = $2 AND event_id = $3 AND handler = $8::text
			AND NOT EXISTS (SELECT 1 FROM closed)
		FOR SHARE)`

// statsSQL counts what the inbox holds in one statement, each part through
// a partial index of inbox_jobs, never reading succeeded rows from the
// table (a job is what it counts: an event with several handlers counts
// once per job):
//
//   - pending and leased jobs, the backlog due at now, retries, leases
//     held and the oldest due time: one pass over inbox_jobs_due_idx
//     (its predicate is the states);
//
//   - waiting jobs: inbox_jobs_waiting_idx;
//
//   - closed jobs: inbox_jobs_closed_idx;
//
//   - dead letters by handler, provider and event type:
//     inbox_jobs_dead_type_idx, in its order, so the grouping needs no
//     sort; the groups are then ranked by size, the first $4 returned and
//     the rest only counted;
//
//   - succeeded jobs: counted through inbox_jobs_succeeded_idx up to $2
//     rows, stopping at $2 (in the index's order, so that the planner reads
//     the index rather than the first pages of the table, which it would
//     find cheaper while succeeded rows are most of the table, but which
//     may hold any number of rows of other states), and estimated from the
//     statistics of that index ($3): its reltuples, as of the last
//     (auto)vacuum or analyze, scaled by how much the index grew since, as
//     the planner does.
//
//   - per handler (Stats.Handlers): the same counts grouped by handler,
//     each from its index (the due, waiting, dead-type and closed
//     indexes, all partial);
//
//   - held keys: the failed heads of ordered keys with jobs waiting
//     behind them, from inbox_jobs_held_idx, each with its key's depth
//     (inbox_keys) and its next job (inbox_jobs_waiting_idx, LIMIT 1),
//     the deepest $5 listed and the rest counted.
//
// $1 now, $2 the most succeeded jobs counted exactly, $3 the succeeded
// index's qualified name, $4 the most dead-letter groups returned, $5 the
// most held keys listed.
const statsSQL = `
WITH per_handler AS (
	SELECT handler, sum(pending)::bigint AS pending, sum(leased)::bigint AS leased, sum(due)::bigint AS due,
		sum(retrying)::bigint AS retrying, sum(held)::bigint AS held, min(oldest_due) AS oldest_due,
		sum(waiting)::bigint AS waiting, sum(dead)::bigint AS dead, sum(closed)::bigint AS closed,
		sum(parked)::bigint AS parked
	FROM (
		SELECT handler, count(*) FILTER (WHERE state = 'pending') AS pending,
			count(*) FILTER (WHERE state = 'leased') AS leased,
			count(*) FILTER (WHERE next_attempt_at <= coalesce($1::timestamptz, now())) AS due,
			count(*) FILTER (WHERE state = 'pending' AND last_error_class IS NOT NULL) AS retrying,
			count(*) FILTER (WHERE state = 'leased' AND next_attempt_at > coalesce($1::timestamptz, now())) AS held,
			min(next_attempt_at) FILTER (WHERE next_attempt_at <= coalesce($1::timestamptz, now())) AS oldest_due,
			0 AS waiting, 0 AS dead, 0 AS closed, count(*) FILTER (WHERE paused_due IS NOT NULL) AS parked
		FROM {{schema}}.inbox_jobs WHERE state IN ('pending', 'leased') GROUP BY handler
		UNION ALL
		SELECT handler, 0, 0, 0, 0, 0, NULL, count(*), 0, 0, 0
		FROM {{schema}}.inbox_jobs WHERE state = 'waiting' GROUP BY handler
		UNION ALL
		SELECT handler, 0, 0, 0, 0, 0, NULL, 0, count(*), 0, 0
		FROM {{schema}}.inbox_jobs WHERE state = 'dead' GROUP BY handler
		UNION ALL
		SELECT handler, 0, 0, 0, 0, 0, NULL, 0, 0, count(*), 0
		FROM {{schema}}.inbox_jobs WHERE state = 'closed' GROUP BY handler
	) AS parts
	GROUP BY handler
), held_keys AS (
	SELECT j.handler, j.provider, j.tenant, j.ordering_key, j.event_id, j.attempts,
		j.last_error_class, j.last_error_message, j.last_error_at, k.depth,
		row_number() OVER (ORDER BY k.depth DESC, j.handler, j.provider, j.tenant, j.ordering_key) AS rank
	FROM {{schema}}.inbox_jobs AS j
	JOIN {{schema}}.inbox_keys AS k
		ON k.handler = j.handler AND k.provider = j.provider AND k.tenant = j.tenant AND k.ordering_key = j.ordering_key
	WHERE j.ordering_key IS NOT NULL AND j.state IN ('pending', 'leased') AND j.last_error_class IS NOT NULL
		AND k.depth > 1
), held_listed AS (
	SELECT h.*, n.event_id AS next_event_id, e.received_at AS next_received_at
	FROM held_keys AS h
	CROSS JOIN LATERAL (
		SELECT w.event_id FROM {{schema}}.inbox_jobs AS w
		WHERE w.handler = h.handler AND w.provider = h.provider AND w.tenant = h.tenant
			AND w.ordering_key = h.ordering_key AND w.state = 'waiting'
		ORDER BY w.order_version, w.seq
		LIMIT 1) AS n
	JOIN {{schema}}.inbox_events AS e ON e.provider = h.provider AND e.tenant = h.tenant AND e.event_id = n.event_id
	WHERE h.rank <= $5
)
SELECT a.pending, a.leased, a.due, a.retrying, a.held, a.oldest_due,
	(SELECT count(*) FROM {{schema}}.inbox_jobs WHERE state = 'waiting'),
	(SELECT count(*) FROM {{schema}}.inbox_jobs WHERE state = 'closed'),
	(SELECT count(*) FROM (
		SELECT 1 FROM {{schema}}.inbox_jobs WHERE state = 'succeeded'
		ORDER BY completed_at LIMIT $2) AS s),
	(SELECT CASE
			WHEN c.reltuples < 0 THEN NULL
			WHEN c.relpages > 0 THEN c.reltuples / c.relpages *
				(pg_relation_size(c.oid) / current_setting('block_size')::float8)
			ELSE c.reltuples
		END::bigint
		FROM pg_catalog.pg_class AS c WHERE c.oid = $3::regclass),
	d.handlers, d.providers, d.event_types, d.counts, d.more_groups, d.more_items,
	ph.handlers, ph.pending, ph.leased, ph.due, ph.retrying, ph.held, ph.oldest_due, ph.waiting, ph.dead, ph.closed,
	hk.handlers, hk.providers, hk.tenants, hk.keys, hk.depths, hk.heads, hk.attempts, hk.classes, hk.messages, hk.error_ats,
	hk.nexts, hk.next_received, (SELECT count(*) FROM held_keys WHERE rank > $5), a.parked, ph.parked
FROM (
	SELECT coalesce(array_agg(handler ORDER BY handler), '{}') AS handlers,
		coalesce(array_agg(pending ORDER BY handler), '{}') AS pending,
		coalesce(array_agg(leased ORDER BY handler), '{}') AS leased,
		coalesce(array_agg(due ORDER BY handler), '{}') AS due,
		coalesce(array_agg(retrying ORDER BY handler), '{}') AS retrying,
		coalesce(array_agg(held ORDER BY handler), '{}') AS held,
		coalesce(array_agg(oldest_due ORDER BY handler), '{}') AS oldest_due,
		coalesce(array_agg(waiting ORDER BY handler), '{}') AS waiting,
		coalesce(array_agg(dead ORDER BY handler), '{}') AS dead,
		coalesce(array_agg(closed ORDER BY handler), '{}') AS closed,
		coalesce(array_agg(parked ORDER BY handler), '{}') AS parked
	FROM per_handler
) AS ph, (
	SELECT coalesce(array_agg(handler ORDER BY rank), '{}') AS handlers,
		coalesce(array_agg(provider ORDER BY rank), '{}') AS providers,
		coalesce(array_agg(tenant ORDER BY rank), '{}') AS tenants,
		coalesce(array_agg(ordering_key ORDER BY rank), '{}') AS keys,
		coalesce(array_agg(depth::bigint ORDER BY rank), '{}') AS depths,
		coalesce(array_agg(event_id ORDER BY rank), '{}') AS heads,
		coalesce(array_agg(attempts ORDER BY rank), '{}') AS attempts,
		coalesce(array_agg(last_error_class ORDER BY rank), '{}') AS classes,
		coalesce(array_agg(last_error_message ORDER BY rank), '{}') AS messages,
		coalesce(array_agg(last_error_at ORDER BY rank), '{}') AS error_ats,
		coalesce(array_agg(next_event_id ORDER BY rank), '{}') AS nexts,
		coalesce(array_agg(next_received_at ORDER BY rank), '{}') AS next_received
	FROM held_listed
) AS hk, (
	SELECT count(*) FILTER (WHERE state = 'pending') AS pending,
		count(*) FILTER (WHERE state = 'leased') AS leased,
		count(*) FILTER (WHERE next_attempt_at <= coalesce($1::timestamptz, now())) AS due,
		count(*) FILTER (WHERE state = 'pending' AND last_error_class IS NOT NULL) AS retrying,
		count(*) FILTER (WHERE state = 'leased' AND next_attempt_at > coalesce($1::timestamptz, now())) AS held,
		min(next_attempt_at) FILTER (WHERE next_attempt_at <= coalesce($1::timestamptz, now())) AS oldest_due,
		count(*) FILTER (WHERE paused_due IS NOT NULL) AS parked
	FROM {{schema}}.inbox_jobs
	WHERE state IN ('pending', 'leased')
) AS a, (
	SELECT coalesce(array_agg(handler ORDER BY rank) FILTER (WHERE rank <= $4), '{}') AS handlers,
		coalesce(array_agg(provider ORDER BY rank) FILTER (WHERE rank <= $4), '{}') AS providers,
		coalesce(array_agg(event_type ORDER BY rank) FILTER (WHERE rank <= $4), '{}') AS event_types,
		coalesce(array_agg(n ORDER BY rank) FILTER (WHERE rank <= $4), '{}') AS counts,
		count(*) FILTER (WHERE rank > $4) AS more_groups,
		coalesce(sum(n) FILTER (WHERE rank > $4), 0)::bigint AS more_items
	FROM (
		SELECT handler, provider, event_type, count(*) AS n,
			row_number() OVER (ORDER BY count(*) DESC, handler, provider, event_type) AS rank
		FROM {{schema}}.inbox_jobs
		WHERE state = 'dead'
		GROUP BY handler, provider, event_type
	) AS g
) AS d`

// lockEventSQL locks the event $1..$3 (FOR UPDATE): the first statement
// of a replay to another handler, in its transaction, so that retention,
// which locks an event before deleting it with its last job, cannot
// delete it under the job the replay adds, and two such replays of one
// event run one after the other. It returns the key when there is one.
const lockEventSQL = `
SELECT event_id FROM {{schema}}.inbox_events
WHERE provider = $1 AND tenant = $2 AND event_id = $3
FOR UPDATE`

// replayToSQL creates the job of the handler $11 for the event $1..$3,
// locked by lockEventSQL, when it has none: pending with no attempts,
// due at $10 (NULL: now), or, when $5 (ToOrdered) and the event has an
// ordering key, an ordered job entering its key as an enqueue's does
// (jobsCTE, overtookSQL), of priority $12 (ToPriority); the creation is
// audited on it. It returns the new job's due
// time (now for a waiting one) when it made it; otherwise NULL and the
// existing job's state (NULL: no job of that handler).
//
// $4 now, $6 action, $7 actor, $8 reason, $9 ticket.
var replayToSQL = `
WITH existing AS (
	SELECT state FROM {{schema}}.inbox_jobs
	WHERE provider = $1 AND tenant = $2 AND event_id = $3 AND handler = $11::text
), wanted AS (
	SELECT e.provider, e.tenant, e.event_id, e.event_type, e.order_version,
		CASE WHEN $5::boolean THEN e.ordering_key END AS okey
	FROM {{schema}}.inbox_events AS e
	WHERE e.provider = $1 AND e.tenant = $2 AND e.event_id = $3 AND NOT EXISTS (SELECT 1 FROM existing)
), keyed AS (
	INSERT INTO {{schema}}.inbox_keys AS k (handler, provider, tenant, ordering_key, depth, updated_at)
	SELECT $11::text, provider, tenant, okey, 1, coalesce($4::timestamptz, now())
	FROM wanted
	WHERE okey IS NOT NULL
	ON CONFLICT (handler, provider, tenant, ordering_key) DO UPDATE SET
		depth = k.depth + 1,
		updated_at = EXCLUDED.updated_at
	RETURNING k.depth, k.dead_ahead, k.last_dead_event_id, k.applied_version
), created AS (
	INSERT INTO {{schema}}.inbox_jobs (
		provider, tenant, event_id, handler, event_type, state, next_attempt_at, paused_due, updated_at,
		ordering_key, order_version, overtook_event_id, applied_version, priority)
	SELECT w.provider, w.tenant, w.event_id, $11::text, w.event_type,
		CASE WHEN k.depth > 1 THEN 'waiting' ELSE 'pending' END,
		` + dueOrParked("k.depth > 1", "coalesce($10::timestamptz, $4::timestamptz, now())", parks("$11::text", "w.provider", "w.tenant", "w.event_type")) + `,
		coalesce($4::timestamptz, now()),
		w.okey, CASE WHEN w.okey IS NOT NULL THEN w.order_version ELSE 0 END,
		CASE WHEN k.depth = 1 THEN ` + overtookSQL("k.dead_ahead", "k.last_dead_event_id", "$11::text", "w.provider",
	"w.tenant", "w.okey", arrivedBefore("w.order_version")) + ` END,
		CASE WHEN k.depth = 1 THEN k.applied_version END,
		$12::int
	FROM wanted AS w
	LEFT JOIN keyed AS k ON true
	RETURNING coalesce(paused_due, next_attempt_at, $4::timestamptz, now()) AS due
), audited AS (
	INSERT INTO {{schema}}.inbox_audit (provider, tenant, event_id, handler, action, at, actor, reason, ticket)
	SELECT $1, $2, $3, $11::text, $6, coalesce($4::timestamptz, now()), $7, $8, $9
	FROM created
)
SELECT (SELECT due FROM created), (SELECT state FROM existing)`
