package pgstore

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/cursor"
	"github.com/hookinbox/webhooks/pgstore/internal/pgtest"
)

// TestQueriesUseTheirIndexes checks that each index matches its query
// exactly: with sequential scans discouraged, the plan reads the index and
// needs no Sort step.
func TestQueriesUseTheirIndexes(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 1)
	s := newMigratedStore(t, pool)
	ctx := t.Context()
	_, err := pool.Exec(ctx, "ANALYZE "+quoteSchema(s.schema)+".inbox_items")
	require.NoError(t, err)

	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	after := cursor.DeadLetter{DeadAt: now, Key: webhooks.InboxKey{Provider: "p", Tenant: "t", EventID: "e"}}.String()
	dlSQL, dlArgs, err := s.deadLettersQuery(webhooks.DeadLetterQuery{After: after, Limit: 50})
	require.NoError(t, err)
	dlFilteredSQL, dlFilteredArgs, err := s.deadLettersQuery(webhooks.DeadLetterQuery{Provider: "p", EventType: "x", Limit: 50})
	require.NoError(t, err)
	settleArgs, err := leaseArgs(&webhooks.Lease{Token: "00000000-0000-4000-8000-000000000000", Item: webhooks.Item{Key: webhooks.InboxKey{Provider: "p", Tenant: "t", EventID: "e"}}}, now)
	require.NoError(t, err)
	extendArgs := append(slices.Clone(settleArgs), int64(60e6))

	for _, c := range []struct {
		name, sql, index string
		args             []any
	}{
		{"acquire", s.sql.acquire, "inbox_items_due_idx", []any{now, int64(60e6), 10}},
		{"acquire with database clock", s.sql.acquire, "inbox_items_due_idx", []any{nil, int64(60e6), 10}},
		{"dead letters after a cursor", dlSQL, "inbox_items_dead_idx", dlArgs},
		{"dead letters filtered", dlFilteredSQL, "inbox_items_dead_idx", dlFilteredArgs},
		{"delete succeeded", s.sql.deleteSucceeded, "inbox_items_succeeded_idx", []any{now, 100}},
		{"delete expired replay keys", s.sql.deleteExpiredReplayKeys, "replay_keys_expires_at_idx", []any{now, 100}},
		{"get", s.sql.get, "inbox_items_pkey", []any{"p", "t", "e"}},
		// The fenced statements reach the row by its key twice: to update
		// it, and to tell a settled token from a stale one.
		{"settle (succeeded)", s.sql.succeed, "inbox_items_pkey", settleArgs},
		{"extend lease", s.sql.extend, "inbox_items_pkey", extendArgs},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := explain(t, s, c.sql, c.args)
			assert.Contains(t, plan, c.index, "plan:\n%s", plan)
			assert.NotContains(t, plan, "Sort", "plan:\n%s", plan)
		})
	}
}

func explain(t *testing.T, s *Store, sql string, args []any) string {
	t.Helper()
	var lines []string
	err := pgx.BeginFunc(t.Context(), s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(t.Context(), "SET LOCAL enable_seqscan = off"); err != nil {
			return err
		}
		rows, err := tx.Query(t.Context(), "EXPLAIN "+sql, args...)
		if err != nil {
			return err
		}
		lines, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	require.NoError(t, err)
	return strings.Join(lines, "\n")
}
