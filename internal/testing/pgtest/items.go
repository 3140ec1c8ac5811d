package pgtest

import (
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// eventColumns are the columns of pgstore's inbox_events (migration 0006);
// every other column of an item belongs to its job (inbox_jobs), and the
// key, event type and ordering to both.
var eventColumns = []string{"payload", "headers", "payload_sha256", "key_id", "duplicate_count",
	"last_seen_at", "occurred_at", "received_at", "api_version", "trace_link", "conflicts"}

// columnTypes are the types of the columns that are not text.
var columnTypes = map[string]string{
	"payload": "bytea", "payload_sha256": "bytea", "headers": "jsonb",
	"duplicate_count": "bigint", "conflicts": "bigint", "order_version": "bigint",
	"last_seen_at": "timestamptz", "occurred_at": "timestamptz", "received_at": "timestamptz",
	"attempts": "integer", "attempt_seq": "integer", "next_attempt_at": "timestamptz",
	"lease_token": "uuid", "lease_expires_at": "timestamptz", "settled_token": "uuid",
	"lease_reclaimed": "boolean", "lease_started_at": "timestamptz", "last_error_at": "timestamptz",
	"updated_at": "timestamptz", "completed_at": "timestamptz", "dead_at": "timestamptz", "closed_at": "timestamptz",
	"paused_due": "timestamptz", "priority": "integer",
}

// InsertItemsSQL returns a statement that stores, in pgstore's schema,
// the rows query selects as items: each row's columns, named by columns
// (a comma-separated list of the columns inbox_items had, such as
// "provider, tenant, event_id, state"), go to the event or to its job of
// the default handler, as migration 0006 split them. Tests fill a schema
// with it directly, as they filled inbox_items before.
func InsertItemsSQL(schema, columns, query string) string {
	var cols, ev, job []string
	for c := range strings.SplitSeq(columns, ",") {
		c = strings.TrimSpace(c)
		cols = append(cols, c)
		switch {
		case c == "provider" || c == "tenant" || c == "event_id" || c == "event_type" || c == "ordering_key" || c == "order_version":
			ev, job = append(ev, c), append(job, c)
		case slices.Contains(eventColumns, c):
			ev = append(ev, c)
		default:
			job = append(job, c)
		}
	}
	q := pgx.Identifier{schema}.Sanitize()
	list := strings.Join
	// Literals and parameters the query leaves untyped are text in its
	// output: cast them to their columns' types.
	cast := func(cols []string) []string {
		out := make([]string, len(cols))
		for i, c := range cols {
			out[i] = c
			if t, ok := columnTypes[c]; ok {
				out[i] = c + "::" + t
			}
		}
		return out
	}
	return `WITH src AS (SELECT * FROM (` + query + `) AS s (` + list(cols, ", ") + `)),
ev AS (INSERT INTO ` + q + `.inbox_events (` + list(ev, ", ") + `) SELECT ` + list(cast(ev), ", ") + ` FROM src)
INSERT INTO ` + q + `.inbox_jobs (` + list(job, ", ") + `, handler) SELECT ` + list(cast(job), ", ") + `, '' FROM src`
}
