package pgstore

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/cursor"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/ops"
)

// TestQueriesUseTheirIndexes checks that each index matches its query
// exactly: with sequential scans discouraged, the plan reads the index and,
// where the statement pages or takes the first rows in an order, needs no
// Sort step.
func TestQueriesUseTheirIndexes(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 1)
	s := newMigratedStore(t, pool)
	ctx := t.Context()
	_, err := pool.Exec(ctx, "ANALYZE "+quoteSchema(s.schema)+".inbox_jobs, "+quoteSchema(s.schema)+".inbox_events")
	require.NoError(t, err)

	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	k := webhooks.InboxKey{Provider: "p", Tenant: "t", EventID: "e"}
	list := func(start string, state webhooks.State, q ops.Query, after *cursor.Position) (string, []any) {
		sql, args, err := s.listQuery(start, state, q, after, nil, 51)
		require.NoError(t, err)
		return sql, args
	}
	end := &cursor.Position{State: webhooks.StateDead, At: now.Add(-time.Hour), Key: k}
	tenant := ""
	dlSQL, dlArgs := list(s.sql.listDead, webhooks.StateDead, ops.Query{}, &cursor.Position{State: webhooks.StateDead, At: now, Key: k})
	dlFilteredSQL, dlFilteredArgs := list(s.sql.listDead, webhooks.StateDead, ops.Query{
		Provider: "p", Tenant: &tenant, EventType: "x", ErrorClass: webhooks.FailurePermanent, APIVersion: "2024-01-01", From: now, To: now.Add(time.Hour)}, nil)
	closedSQL, closedArgs := list(s.sql.listClosed, webhooks.StateClosed, ops.Query{State: webhooks.StateClosed, From: now}, &cursor.Position{State: webhooks.StateClosed, At: now.Add(time.Hour), Key: k})
	selectSQL, selectArgs, err := s.listQuery(s.sql.selectReplay[webhooks.StateDead], webhooks.StateDead, ops.Query{Provider: "p"},
		&cursor.Position{State: webhooks.StateDead, At: now, Key: k}, end, 51)
	require.NoError(t, err)
	firstSQL, firstArgs, err := s.listOrdered(s.sql.selectReplay[webhooks.StateDead], webhooks.StateDead, ops.Query{Provider: "p"}, nil, nil)
	require.NoError(t, err)
	firstArgs = append(firstArgs, 1000, ops.ReplayBatch)
	firstSQL = replayFirstSQL(firstSQL, "$"+strconv.Itoa(len(firstArgs)-1), "$"+strconv.Itoa(len(firstArgs)))
	selectClosedSQL, selectClosedArgs := list(s.sql.selectReplay[webhooks.StateClosed], webhooks.StateClosed, ops.Query{State: webhooks.StateClosed}, nil)
	selectSucceededSQL, selectSucceededArgs := list(s.sql.selectReplay[webhooks.StateSucceeded], webhooks.StateSucceeded,
		ops.Query{State: webhooks.StateSucceeded, From: now, To: now.Add(time.Hour)}, &cursor.Position{State: webhooks.StateSucceeded, At: now.Add(time.Hour), Key: k})
	keyArgs := []any{"p", "t", "e"}
	settleArgs, err := leaseArgs(&webhooks.Lease{Token: "00000000-0000-4000-8000-000000000000", Item: webhooks.Item{Key: k}}, now)
	require.NoError(t, err)
	extendArgs := append(slices.Clone(settleArgs), int64(60e6))
	lostArgs := append(slices.Clone(settleArgs), "error", "lost")
	var enqueueReqs []*enqueueRequest
	for _, id := range []string{"a", "b"} {
		r, err := s.newEnqueueRequest(t.Context(), webhooks.Envelope{Key: webhooks.InboxKey{Provider: "p", EventID: id}, ReceivedAt: now})
		require.NoError(t, err)
		enqueueReqs = append(enqueueReqs, r)
	}
	tok := settleArgs[3].(pgtype.UUID)
	settleBatchArgs := []any{[]string{"p", "p"}, []string{"t", "t"}, []string{"e", "f"}, []pgtype.UUID{tok, tok},
		[]string{"succeeded", "retried"}, []time.Time{now, now}, []*time.Time{nil, &now}, []int64{0, 0},
		[]*string{nil, new("error")}, []*string{nil, new("failed")}, []string{"", ""}}

	for _, c := range []struct {
		name, sql string
		indexes   []string
		args      []any
		sorts     bool
	}{
		{"enqueue a batch", s.sql.enqueueBatch, []string{"inbox_events_pkey", "inbox_jobs_dead_keys_idx"}, enqueueBatchArgs(enqueueReqs), true},
		// An acquisition ranks the rows it locked (at most a batch) to
		// start the first: the only sort in its plan (checked below).
		{"acquire", s.sql.acquire, []string{"inbox_jobs_due_idx", "inbox_pauses_in_force_idx"}, []any{now, int64(60e6), 10, "w", "v", nil, true, 5, ""}, true},
		{"acquire with database clock", s.sql.acquire, []string{"inbox_jobs_due_idx"}, []any{nil, int64(60e6), 10, "w", "v", nil, true, 5, ""}, true},
		{"acquire under limits", s.sql.acquireLimited, []string{"inbox_jobs_due_idx", "inbox_jobs_leased_idx", "inbox_limits_pkey"},
			[]any{now, int64(60e6), 10, "w", "v", nil, true, 5, "", 2, int64(20_000), 10}, true},
		// A Fair acquisition walks the tenants and reads their due jobs
		// from one index, and sorts its candidates (at most a batch's
		// square over four) by turn.
		{"acquire fair", s.sql.acquireFair, []string{"inbox_jobs_tenant_due_idx", "inbox_fair_pkey"},
			[]any{now, int64(60e6), 10, "w", "v", nil, true, 5, "", 0, int64(0), 0, 104}, true},
		// With priorities, the due jobs of each are read from their
		// index, the others from the due index.
		{"acquire with priorities", s.sql.acquirePrioritized, []string{"inbox_jobs_priority_idx", "inbox_jobs_due_idx"},
			[]any{now, int64(60e6), 10, "w", "v", nil, true, 5, "", []int{10, 5}}, true},
		{"acquire under limits with priorities", s.sql.acquireLimitedPrioritized, []string{"inbox_jobs_priority_idx", "inbox_jobs_due_idx", "inbox_jobs_leased_idx"},
			[]any{now, int64(60e6), 10, "w", "v", nil, true, 5, "", 2, int64(20_000), 10, []int{10}}, true},
		{"acquire with an ID", s.sql.acquire, []string{"inbox_jobs_due_idx"}, []any{now, int64(60e6), 10, "w", "v", "acq-1", true, 5, ""}, true},
		// A repeat looks the leases held under its ID up among the rows
		// not yet due, through the same index, and their Reclaimed in the
		// history.
		{"repeat an acquisition", s.sql.repeat, []string{"Index Cond: ((handler = ''::text) AND (next_attempt_at > ", "inbox_attempts_pkey"},
			[]any{now, "acq-1", ""}, true},
		{"repeat an acquisition, database clock", s.sql.repeat, []string{"Index Cond: ((handler = ''::text) AND (next_attempt_at > ", "inbox_attempts_pkey"},
			[]any{nil, "acq-1", ""}, true},
		{"list dead letters after a cursor", dlSQL, []string{"inbox_jobs_dead_idx"}, dlArgs, false},
		{"list dead letters filtered", dlFilteredSQL, []string{"inbox_jobs_dead_idx"}, dlFilteredArgs, false},
		{"list closed items after a cursor", closedSQL, []string{"inbox_jobs_closed_idx"}, closedArgs, false},
		{"bulk replay: select dead letters after a cursor, down to the end", selectSQL, []string{"inbox_jobs_dead_idx"}, selectArgs, false},
		// The first call sorts only the rows it returns (a batch and one).
		{"bulk replay: first call, select and count dead letters", firstSQL, []string{"inbox_jobs_dead_idx"}, firstArgs, true},
		{"bulk replay: select closed items", selectClosedSQL, []string{"inbox_jobs_closed_idx"}, selectClosedArgs, false},
		// Succeeded items are ordered by completion through their index;
		// ties are sorted, a few rows at a time.
		{"bulk replay: select succeeded items", selectSucceededSQL, []string{"inbox_jobs_succeeded_idx"}, selectSucceededArgs, true},
		// A batch locks its rows in key order: it sorts at most a batch.
		{"bulk replay: a batch", s.sql.replayBatch, []string{"inbox_jobs_pkey"},
			[]any{[]string{"p"}, []string{"t"}, []string{"e"}, []int64{0}, now, false, "replay", "a", "r", "", "dead", []string{""}}, true},
		// Its state, when it replays nothing, is that of one of the event's
		// jobs (at most webhooks.MaxHandlers), sorted.
		{"replay one", s.sql.replayOne, []string{"inbox_jobs_pkey", "inbox_jobs_dead_keys_idx"}, append(slices.Clone(keyArgs), now, false, "replay", "a", "r", "", nil, operatorReplays, ""), true},
		{"close", s.sql.closeOne, []string{"inbox_jobs_pkey"}, append(slices.Clone(keyArgs), now, "a", "r", "", ""), false},
		{"delete succeeded", s.sql.deleteSucceeded, []string{"inbox_jobs_succeeded_idx"}, []any{now, 100}, false},
		{"delete closed", s.sql.deleteClosed, []string{"inbox_jobs_closed_idx"}, []any{now, 100}, false},
		{"delete expired replay keys", s.sql.deleteExpiredReplayKeys, []string{"replay_keys_expires_at_idx"}, []any{now, 100}, false},
		{"get", s.sql.get, []string{"inbox_jobs_pkey"}, keyArgs, false},
		{"get: history", s.sql.history, []string{"inbox_attempts_pkey"}, keyArgs, false},
		{"get: audit trail", s.sql.audit, []string{"inbox_audit_pkey"}, keyArgs, false},
		{"get: quarantine", s.sql.quarantine, []string{"inbox_quarantine_pkey"}, keyArgs, false},
		// The fenced statements reach the row by its key twice: to update
		// it, and to tell a settled token from a stale one.
		{"settle (succeeded)", s.sql.succeed, []string{"inbox_jobs_pkey"}, append(slices.Clone(settleArgs), nil, nil), false},
		// A batch updates its rows in the order of its arrays (sorted by
		// key): a nested loop into the primary key.
		// ... and promotes each ended key's next job from the waiting
		// index, in its order under a Limit: no sort; the dead letter it
		// runs past comes from its own index, backwards.
		{"settle a batch", s.sql.settleBatch, []string{"Nested Loop", "Index Scan using inbox_jobs_pkey", "inbox_keys_pkey", "inbox_jobs_waiting_idx",
			"Index Scan Backward using inbox_jobs_dead_keys_idx"}, settleBatchArgs, false},
		{"lock the keys a batch ends", s.sql.lockKeys, []string{"inbox_keys_pkey"},
			[]any{[]string{"h"}, []string{"p"}, []string{"t"}, []string{"k"}}, true},
		{"extend lease", s.sql.extend, []string{"inbox_jobs_pkey"}, extendArgs, false},
		// Starting held leases, like a settlement batch: into the primary key.
		{"start leases", s.sql.start, []string{"Index Scan using inbox_jobs_pkey"},
			[]any{[]string{"p", "p"}, []string{"t", "t"}, []string{"e", "f"}, []pgtype.UUID{tok, tok}, now, int64(60e6), []string{"", ""}}, false},
		{"lease lost", s.sql.leaseLost, []string{"inbox_attempts_pkey"}, lostArgs, false},
		// A scoped pause parks the jobs it holds, from the index of
		// tenants' due jobs when it names a provider; its resume reads the
		// parked jobs from their own index.
		{"park a tenant's jobs", s.sql.park, []string{"inbox_jobs_tenant_due_idx"}, []any{"h", "p", "t", ""}, false},
		{"park a type's jobs", s.sql.park, []string{"Index Cond: (handler = 'h'::text)"}, []any{"h", "", "", "invoice.*"}, false},
		{"unpark", s.sql.unpark, []string{"inbox_jobs_parked_idx"}, []any{"h", "p", "", "invoice.*"}, false},
		{"pause in force", s.sql.pauseInForce, []string{"inbox_pauses_in_force_idx"}, []any{"h", "p", "t", ""}, false},
		{"stats", s.sql.stats, []string{"inbox_jobs_due_idx", "inbox_jobs_closed_idx", "inbox_jobs_dead_type_idx", "inbox_jobs_succeeded_idx",
			"inbox_jobs_waiting_idx", "inbox_jobs_held_idx"},
			[]any{now, SucceededCountedExactly, quoteSchema(s.schema) + ".inbox_jobs_succeeded_idx", ops.DefaultDeadLetterGroups, ops.DefaultHeldKeys}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := explain(t, s, c.sql, c.args, true)
			for _, index := range c.indexes {
				assert.Contains(t, plan, index, "plan:\n%s", plan)
			}
			assert.NotContains(t, plan, "Seq Scan", "plan:\n%s", plan)
			if !c.sorts {
				assert.NotContains(t, plan, "Sort", "plan:\n%s", plan)
			}
			if c.sql == firstSQL {
				assert.True(t, strings.HasPrefix(plan, "Sort ") && strings.Count(plan, "Sort Key:") == 1,
					"a first call sorts only the rows it returns, last; plan:\n%s", plan)
			}
			if c.sql == s.sql.acquire {
				for _, line := range strings.Split(plan, "\n") {
					if key, ok := strings.CutPrefix(strings.TrimSpace(line), "Sort Key: "); ok {
						assert.Equal(t, `d.due_at, d.provider COLLATE "C", d.tenant COLLATE "C", d.event_id COLLATE "C", d.handler COLLATE "C"`, key, "an acquisition sorts only the rows it locked, to rank them; plan:\n%s", plan)
					}
				}
			}
		})
	}
}

// planStore returns a migrated store on a pool of one connection, for a
// plan test beside a table of rows: quick of them, or long with
// WEBHOOKS_TEST_LONG=1 (.ci/run's long steps).
func planStore(t *testing.T, quick, long int) (*Store, *pgxpool.Pool, int) {
	t.Helper()
	rows := quick
	if os.Getenv("WEBHOOKS_TEST_LONG") == "1" {
		rows = long
	}
	pool := pgtest.NewPool(t, 1)
	return newMigratedStore(t, pool), pool, rows
}

// TestStatsPlanBesideManySucceeded: with many succeeded rows (1,000,000 with
// WEBHOOKS_TEST_LONG=1, 100,000 otherwise, to keep the package's tests
// quick), ANALYZEd, the planner left to itself reads every part of Stats
// through its partial index, never the table; the succeeded count is an
// estimate close to the truth, every other count exact.
func TestStatsPlanBesideManySucceeded(t *testing.T) {
	t.Parallel()
	s, pool, succeeded := planStore(t, 100_000, 1_000_000)
	ctx := t.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	table := quoteSchema(s.schema) + ".inbox_jobs"
	_, err := pool.Exec(ctx, pgtest.InsertItemsSQL(s.schema, `provider, tenant, event_id, event_type, payload, payload_sha256,
			key_id, state, attempts, duplicate_count, last_seen_at, received_at, updated_at, completed_at`, `SELECT 'acme', '', 'evt_' || g, 'invoice.paid', '\x7b7d', decode(repeat('00', 32), 'hex'),
			'k1', 'succeeded', 1, 0, $1::timestamptz, $1::timestamptz, $1::timestamptz, $1::timestamptz
		FROM generate_series(1, $2::int) AS g`), now.Add(-time.Hour), succeeded)
	require.NoError(t, err)
	// A few items in every other state, through the store.
	for i, id := range []string{"pending", "retrying", "leased", "dead", "closed"} {
		env := webhooks.Envelope{Key: webhooks.InboxKey{Provider: "acme", EventID: id}, EventType: "invoice.paid",
			PayloadSHA256: [32]byte{byte(i + 1)}, ReceivedAt: now.Add(time.Duration(i) * time.Second)}
		_, err := s.Enqueue(ctx, env)
		require.NoError(t, err)
	}
	leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: now.Add(time.Minute), LeaseDuration: time.Hour, Max: 5})
	require.NoError(t, err)
	require.Len(t, leases, 5)
	for _, l := range leases {
		st := webhooks.Settlement{Lease: l, Now: now.Add(time.Minute)}
		switch l.Key().EventID {
		case "pending":
			st.Outcome = webhooks.AttemptAbandoned
		case "retrying":
			st.Outcome, st.Failure, st.RetryAt = webhooks.AttemptRetried, webhooks.Failure{Class: webhooks.FailureError}, now.Add(2*time.Minute)
		case "leased":
			continue
		default:
			st.Outcome, st.Failure = webhooks.AttemptDeadLettered, webhooks.Failure{Class: webhooks.FailurePermanent}
		}
		require.NoError(t, s.Settle(ctx, st))
	}
	require.NoError(t, s.CloseDeadLetter(ctx, ops.CloseRequest{Key: webhooks.InboxKey{Provider: "acme", EventID: "closed"}, Actor: "a", Reason: "r", Now: now.Add(time.Minute)}))
	_, err = pool.Exec(ctx, "ANALYZE "+table+", "+quoteSchema(s.schema)+".inbox_events")
	require.NoError(t, err)

	plan := explain(t, s, s.sql.stats, []any{now.Add(time.Minute), SucceededCountedExactly, quoteSchema(s.schema) + ".inbox_jobs_succeeded_idx", ops.DefaultDeadLetterGroups, ops.DefaultHeldKeys}, false)
	t.Logf("Stats beside %d succeeded items:\n%s", succeeded, plan)
	assert.NotContains(t, plan, "Seq Scan on inbox_jobs", "plan:\n%s", plan)
	for _, index := range []string{"inbox_jobs_due_idx", "inbox_jobs_closed_idx", "inbox_jobs_dead_type_idx", "inbox_jobs_succeeded_idx"} {
		assert.Contains(t, plan, index, "plan:\n%s", plan)
	}

	start := time.Now()
	st, err := s.Stats(ctx, ops.StatsRequest{Now: now.Add(time.Minute)})
	took := time.Since(start)
	require.NoError(t, err)
	t.Logf("Stats took %v", took)
	assert.True(t, st.SucceededEstimated)
	assert.InEpsilon(t, float64(succeeded), float64(st.States[webhooks.StateSucceeded]), 0.1, "succeeded estimate")
	assert.Equal(t, int64(2), st.States[webhooks.StatePending])
	assert.Equal(t, int64(1), st.States[webhooks.StateLeased])
	assert.Equal(t, int64(1), st.States[webhooks.StateDead])
	assert.Equal(t, int64(1), st.States[webhooks.StateClosed])
	assert.Equal(t, int64(1), st.Due, "the abandoned item")
	assert.Equal(t, int64(1), st.Retrying)
	assert.Equal(t, int64(1), st.LeasesHeld)
	assert.Equal(t, []ops.Count{{Provider: "acme", EventType: "invoice.paid", N: 1}}, st.DeadLetters)
}

// explain returns the plan of sql with args; with noSeqScan, sequential
// scans are discouraged, so a plan that could use an index does.
func explain(t *testing.T, s *Store, sql string, args []any, noSeqScan bool) string {
	t.Helper()
	var lines []string
	err := pgx.BeginFunc(t.Context(), s.pool, func(tx pgx.Tx) error {
		if noSeqScan {
			if _, err := tx.Exec(t.Context(), "SET LOCAL enable_seqscan = off"); err != nil {
				return err
			}
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

// analyzed runs sql with args under EXPLAIN (ANALYZE, BUFFERS) in a
// transaction it rolls back, and returns the plan and the pages the
// statement touched (its top node's shared buffers, hit and read).
func analyzed(t *testing.T, pool *pgxpool.Pool, sql string, args []any) (plan string, pages int) {
	t.Helper()
	var lines []string
	err := pgx.BeginFunc(t.Context(), pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(t.Context(), "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) "+sql, args...)
		if err != nil {
			return err
		}
		lines, err = pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		return errRollback
	})
	require.ErrorIs(t, err, errRollback)
	plan = strings.Join(lines, "\n")
	if m := regexp.MustCompile(`Buffers: shared hit=(\d+)(?: read=(\d+))?`).FindStringSubmatch(plan); m != nil {
		for _, n := range m[1:] {
			v, _ := strconv.Atoi(n)
			pages += v
		}
	}
	return plan, pages
}

// TestAcquirePlanBesideManySucceeded: with many succeeded rows (1,000,000
// with WEBHOOKS_TEST_LONG=1, 100,000 otherwise), ANALYZEd, the planner
// left to itself reaches the due items through inbox_jobs_due_idx alone
// (and, under Limits, counts the running leases from an index whose
// predicate leaves them out too: inbox_jobs_leased_idx, or, with no lease
// and 50 pending rows, as cheaply inbox_jobs_due_idx, which the planner
// chose once in .ci/run's run beside 1,000,000; beside a backlog of
// pending jobs it must be the first, which
// TestLimitedAcquirePlanBesidePendingBacklog pins): no scan of the table, and
// the pages the statement touches (counted, not timed) do not grow with
// the succeeded rows.
func TestAcquirePlanBesideManySucceeded(t *testing.T) {
	t.Parallel()
	s, pool, succeeded := planStore(t, 100_000, 1_000_000)
	ctx := t.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	table := quoteSchema(s.schema) + ".inbox_jobs"
	_, err := pool.Exec(ctx, pgtest.InsertItemsSQL(s.schema, `provider, tenant, event_id, event_type, payload, payload_sha256,
			key_id, state, attempts, duplicate_count, last_seen_at, received_at, updated_at, completed_at`, `SELECT 'acme', '', 'done_' || g, 'invoice.paid', '\x7b7d', decode(repeat('00', 32), 'hex'),
			'k1', 'succeeded', 1, 0, $1::timestamptz, $1::timestamptz, $1::timestamptz, $1::timestamptz
		FROM generate_series(1, $2::int) AS g`), now.Add(-time.Hour), succeeded)
	require.NoError(t, err)
	for i := range 50 {
		_, err := s.Enqueue(ctx, webhooks.Envelope{Key: webhooks.InboxKey{Provider: "acme", EventID: fmt.Sprint("due_", i)},
			EventType: "invoice.paid", PayloadSHA256: [32]byte{1}, ReceivedAt: now.Add(time.Duration(i) * time.Millisecond)})
		require.NoError(t, err)
	}
	_, err = pool.Exec(ctx, "ANALYZE "+table+", "+quoteSchema(s.schema)+".inbox_events")
	require.NoError(t, err)

	args := []any{now.Add(time.Minute), int64(60e6), 10, "w", "v", "acq-1", true, 5, ""}
	for _, c := range []struct {
		name, sql string
		args      []any
		indexes   []string
	}{
		{"Acquire", s.sql.acquire, args, nil},
		// Under Limits (a cap of 20, 50 tokens a second, a bucket of 100),
		// the bucket is read by its key.
		{"Acquire under Limits", s.sql.acquireLimited, append(slices.Clone(args), 20, int64(20_000), 100),
			[]string{"inbox_limits_pkey"}},
	} {
		plan, total := analyzed(t, pool, c.sql, c.args)
		t.Logf("%s (10 items) beside %d succeeded items:\n%s", c.name, succeeded, plan)
		assert.Contains(t, plan, "Index Scan using inbox_jobs_due_idx on inbox_jobs", "plan:\n%s", plan)
		for _, index := range c.indexes {
			assert.Contains(t, plan, index, "plan:\n%s", plan)
		}
		for _, scan := range []string{"Seq Scan on inbox_jobs", "Bitmap Heap Scan on inbox_jobs", "Seq Scan on inbox_events", "Bitmap Heap Scan on inbox_events"} {
			assert.NotContains(t, plan, scan, "plan:\n%s", plan)
		}
		assert.Contains(t, plan, "rows=10 loops=1", "leased 10 items")
		// The whole statement: ten items leased, each read, locked, updated
		// and looked up by key, touches some dozens of pages, whatever the
		// number of succeeded rows.
		assert.Less(t, total, 400, "pages touched by the statement, beside %d succeeded rows:\n%s", succeeded, plan)
	}
}

var errRollback = errors.New("roll back")

// TestListSelectsNoPayloadOrHeaders: the statements that page dead letters
// and closed items output neither the payload nor the headers column
// (EXPLAIN VERBOSE lists every column a node outputs): a page of large
// dead letters reads no TOASTed value.
func TestListSelectsNoPayloadOrHeaders(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 1)
	s := newMigratedStore(t, pool)
	for _, state := range []webhooks.State{webhooks.StateDead, webhooks.StateClosed} {
		start := s.sql.listDead
		if state == webhooks.StateClosed {
			start = s.sql.listClosed
		}
		sql, args, err := s.listQuery(start, state, ops.Query{State: state, Provider: "p"}, nil, nil, 51)
		require.NoError(t, err)
		plan := explain(t, s, "(VERBOSE) "+sql, args, false)
		var outputs []string
		for line := range strings.Lines(plan) {
			if _, cols, ok := strings.Cut(line, "Output: "); ok {
				outputs = append(outputs, strings.TrimSpace(cols))
			}
		}
		require.NotEmpty(t, outputs, "plan:\n%s", plan)
		for _, cols := range outputs {
			for col := range strings.SplitSeq(cols, ", ") {
				name := col[strings.LastIndexByte(col, '.')+1:] // i.payload or payload
				assert.NotContains(t, []string{"payload", "headers"}, name, "listing %s items outputs %s; plan:\n%s", state, col, plan)
			}
		}
	}
}

// TestPlansBesideManyWaitingJobs: beside 20,000 waiting jobs of an
// ordered handler (200 keys, 100 behind each head; 1,000,000 over 1,000
// keys with WEBHOOKS_TEST_LONG=1), ANALYZEd, the planner left to itself acquires
// the heads through inbox_jobs_due_idx alone (waiting jobs are not in it),
// touching a bounded number of pages, and a settlement that ends heads
// promotes each key's next job through inbox_jobs_waiting_idx under a
// Limit, with no sort.
func TestPlansBesideManyWaitingJobs(t *testing.T) {
	t.Parallel()
	keys, perKey := 200, 100
	if os.Getenv("WEBHOOKS_TEST_LONG") == "1" {
		keys, perKey = 1000, 1000
	}
	pool := pgtest.NewPool(t, 1)
	s := newMigratedStore(t, pool)
	ctx := t.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q := quoteSchema(s.schema)
	_, err := pool.Exec(ctx, pgtest.InsertItemsSQL(s.schema, `provider, tenant, event_id, event_type, payload, payload_sha256,
			key_id, state, next_attempt_at, last_seen_at, received_at, updated_at, ordering_key, order_version`,
		`SELECT 'acme', '', 'w_' || g, 'invoice.paid', '\x7b7d', decode(repeat('00', 32), 'hex'),
			'k1', CASE WHEN g <= $3 THEN 'pending' ELSE 'waiting' END, CASE WHEN g <= $3 THEN $1::timestamptz END,
			$1::timestamptz, $1::timestamptz, $1::timestamptz, 'key_' || (g % $3), g
		FROM generate_series(1, $2::int) AS g`), now.Add(-time.Hour), keys*(perKey+1), keys)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE `+q+`.inbox_jobs SET handler = 'ledger'`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO `+q+`.inbox_keys (handler, provider, tenant, ordering_key, depth, updated_at)
		SELECT 'ledger', 'acme', '', 'key_' || g, $2::int + 1, $1 FROM generate_series(0, $3::int - 1) AS g`, now, perKey, keys)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, "VACUUM ANALYZE "+q+".inbox_jobs, "+q+".inbox_events, "+q+".inbox_keys")
	require.NoError(t, err)

	plan, total := analyzed(t, pool, s.sql.acquire, []any{now, int64(60e6), 10, "w", "v", nil, false, 10, "ledger"})
	t.Logf("Acquire (10 heads) beside %d waiting jobs:\n%s", keys*perKey, plan)
	assert.Contains(t, plan, "Index Scan using inbox_jobs_due_idx on inbox_jobs", "plan:\n%s", plan)
	for _, scan := range []string{"Seq Scan on inbox_jobs", "Bitmap Heap Scan on inbox_jobs"} {
		assert.NotContains(t, plan, scan, "plan:\n%s", plan)
	}
	assert.Less(t, total, 400, "pages touched beside %d waiting jobs", keys*perKey)

	leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: now, LeaseDuration: time.Minute, Max: 10, Handler: "ledger"})
	require.NoError(t, err)
	require.Len(t, leases, 10)
	n := len(leases)
	args := []any{make([]string, n), make([]string, n), make([]string, n), make([]pgtype.UUID, n), make([]string, n),
		make([]*time.Time, n), make([]*time.Time, n), make([]int64, n), make([]*string, n), make([]*string, n), make([]string, n)}
	for i, l := range leases {
		a, err := leaseArgs(l)
		require.NoError(t, err)
		args[0].([]string)[i], args[1].([]string)[i], args[2].([]string)[i] = a[0].(string), a[1].(string), a[2].(string)
		args[3].([]pgtype.UUID)[i], args[4].([]string)[i], args[5].([]*time.Time)[i] = a[3].(pgtype.UUID), "succeeded", &now
		args[10].([]string)[i] = "ledger"
	}
	// EXPLAIN ANALYZE runs the statement, and explain commits it.
	plan = explain(t, s, "(ANALYZE, COSTS OFF, TIMING OFF) "+s.sql.settleBatch, args, false)
	t.Logf("SettleBatch of 10 heads, promoting:\n%s", plan)
	assert.Regexp(t, `Limit[^\n]*\n\s+->\s+Index Scan using inbox_jobs_waiting_idx`, plan, "promotion: the waiting index under a Limit")
	assert.NotContains(t, plan, "Sort", "plan:\n%s", plan)
	assert.NotContains(t, plan, "Seq Scan on inbox_jobs", "plan:\n%s", plan)
	var pending, waiting int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'pending'), count(*) FILTER (WHERE state = 'waiting')
		FROM `+q+`.inbox_jobs`).Scan(&pending, &waiting))
	assert.Equal(t, keys, pending, "the other heads, and one promoted in each key that ended its head")
	assert.Equal(t, keys*perKey-len(leases), waiting, "each settled head promoted its key's next job")
	var leased int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM `+q+`.inbox_jobs WHERE state = 'pending' AND ordering_key IN (SELECT ordering_key FROM `+q+`.inbox_jobs WHERE state = 'succeeded')`).Scan(&leased))
	assert.Equal(t, len(leases), leased, "one new head in each key that ended one")
}

// TestLimitedAcquirePlanBesidePendingBacklog: beside 20,000 pending jobs
// of the handler (200,000 with WEBHOOKS_TEST_LONG=1), half of them
// retries due later, and 100 running leases, ANALYZEd, the planner left
// to itself joins the rows it leases by their key (no scan of
// inbox_jobs: with a LIMIT it could not read, it once planned a tenth of
// the backlog and hashed the table), under a cap counts the running
// leases from inbox_jobs_leased_idx, not by walking the backlog, and the
// statement's pages stay few.
func TestLimitedAcquirePlanBesidePendingBacklog(t *testing.T) {
	t.Parallel()
	s, pool, pending := planStore(t, 20_000, 200_000)
	ctx := t.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q := quoteSchema(s.schema)
	_, err := pool.Exec(ctx, pgtest.InsertItemsSQL(s.schema, `provider, tenant, event_id, event_type, payload, payload_sha256,
			key_id, state, next_attempt_at, lease_expires_at, lease_token, last_seen_at, received_at, updated_at`,
		`SELECT 'acme', '', 'p_' || g, 'invoice.paid', '\x7b7d', decode(repeat('00', 32), 'hex'),
			'k1', CASE WHEN g <= 100 THEN 'leased' ELSE 'pending' END,
			CASE WHEN g <= 100 OR g % 2 = 0 THEN $1::timestamptz + interval '1 hour' ELSE $1::timestamptz - interval '1 hour' END,
			CASE WHEN g <= 100 THEN $1::timestamptz + interval '1 hour' END,
			CASE WHEN g <= 100 THEN gen_random_uuid() END,
			$1::timestamptz, $1::timestamptz, $1::timestamptz
		FROM generate_series(1, $2::int) AS g`), now, pending+100)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, "VACUUM ANALYZE "+q+".inbox_jobs, "+q+".inbox_events")
	require.NoError(t, err)
	args := []any{now, int64(60e6), 10, "w", "v", nil, false, 10, ""}
	for _, c := range []struct {
		name, sql string
		args      []any
		indexes   []string
	}{
		{"Acquire", s.sql.acquire, args, nil},
		{"Acquire under a cap", s.sql.acquireLimited, append(slices.Clone(args), 200, int64(0), 0), []string{"inbox_jobs_leased_idx"}},
	} {
		plan, total := analyzed(t, pool, c.sql, c.args)
		t.Logf("%s beside %d pending jobs and 100 leases:\n%s", c.name, pending, plan)
		for _, index := range c.indexes {
			assert.Contains(t, plan, index, "plan:\n%s", plan)
		}
		assert.NotContains(t, plan, "Seq Scan on inbox_jobs", "plan:\n%s", plan)
		assert.Contains(t, plan, "rows=10 loops=1", "leased 10 items")
		assert.Less(t, total, 400, "%s: pages touched beside %d pending jobs", c.name, pending)
	}
}

// TestFairAcquirePlanBesideBacklogs: beside one tenant's backlog of due
// jobs (50,000, or 1,000,000 with WEBHOOKS_TEST_LONG=1), 2,000 other
// tenants with a due job and retries scheduled, and 200 with only
// running leases, ANALYZEd, a Fair acquisition of 10 walks the tenants
// and reads their due jobs through inbox_jobs_tenant_due_idx: no scan of
// the table, no step that reads a thousand rows, ten leases, and as many
// pages touched whatever the backlog (the walk visits at most 104
// tenants, two probes each).
func TestFairAcquirePlanBesideBacklogs(t *testing.T) {
	t.Parallel()
	s, pool, backlog := planStore(t, 50_000, 1_000_000)
	ctx := t.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q := quoteSchema(s.schema)
	// g <= backlog: tenant big, due; then 2,000 tenants of five jobs, one
	// due and four retries; then 200 tenants of one running lease.
	_, err := pool.Exec(ctx, pgtest.InsertItemsSQL(s.schema, `provider, tenant, event_id, event_type, payload, payload_sha256,
			key_id, state, next_attempt_at, lease_expires_at, lease_token, last_seen_at, received_at, updated_at`,
		`SELECT 'acme', tenant, 'e_' || g, 'invoice.paid', '\x7b7d', decode(repeat('00', 32), 'hex'),
			'k1', CASE WHEN running THEN 'leased' ELSE 'pending' END,
			CASE WHEN due THEN $1::timestamptz - interval '1 hour' ELSE $1::timestamptz + interval '1 hour' END,
			CASE WHEN running THEN $1::timestamptz + interval '1 hour' END,
			CASE WHEN running THEN gen_random_uuid() END,
			$1::timestamptz, $1::timestamptz, $1::timestamptz
		FROM (SELECT g,
				CASE WHEN g <= $2 THEN 'big'
					WHEN g <= $2 + 10000 THEN 't' || lpad(((g - $2 - 1) / 5)::text, 4, '0')
					ELSE 'r' || lpad((g - $2 - 10000)::text, 4, '0') END AS tenant,
				g <= $2 OR (g <= $2 + 10000 AND (g - $2) % 5 = 1) AS due,
				g > $2 + 10000 AS running
			FROM generate_series(1, $2::int + 10200) AS g) AS src`), now, backlog)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, "VACUUM ANALYZE "+q+".inbox_jobs, "+q+".inbox_events")
	require.NoError(t, err)
	for _, c := range []struct {
		name   string
		cursor string // the tenant the last Fair acquisition visited last
	}{
		{"from the first tenant", ""},
		{"past the running tenants, round to the start", "r0150"},
		{"in the middle of the tenants with retries", "t1000"},
	} {
		if c.cursor != "" {
			_, err := pool.Exec(ctx, "INSERT INTO "+q+".inbox_fair (handler, provider, tenant) VALUES ('', 'acme', $1) "+
				"ON CONFLICT (handler) DO UPDATE SET tenant = EXCLUDED.tenant", c.cursor)
			require.NoError(t, err)
		}
		plan, total := analyzed(t, pool, s.sql.acquireFair, []any{now, int64(60e6), 10, "w", "v", nil, false, 10, "", 0, int64(0), 0, 104})
		t.Logf("Fair acquisition %s, beside a backlog of %d: %d pages\n%s", c.name, backlog, total, plan)
		assert.Contains(t, plan, "inbox_jobs_tenant_due_idx", "plan:\n%s", plan)
		// (The probe's look for a due job, run only after a breaker's
		// cool-down, may be planned as a scan that stops at the first due
		// row: most are.)
		assert.NotRegexp(t, `Seq Scan on inbox_jobs \w+ \(actual`, plan, "plan:\n%s", plan)
		assert.Contains(t, plan, "rows=10 loops=1", "leased 10 items")
		for _, m := range regexp.MustCompile(`actual rows=(\d+)`).FindAllStringSubmatch(plan, -1) {
			n, _ := strconv.Atoi(m[1])
			assert.Less(t, n, 1000, "%s: a step of the plan reads %d rows beside a backlog of %d", c.name, n, backlog)
		}
		assert.Less(t, total, 1500, "%s: pages touched beside a backlog of %d", c.name, backlog)
	}
}

// TestAcquirePlanBesideParkedJobs: with a scoped pause of a tenant in
// force, its 20,000 due jobs (1,000,000 with WEBHOOKS_TEST_LONG=1) are
// parked (stored so, as an enqueue would), and 100 expired leases of
// the tenant that began before the pause, which stay in the due range,
// are passed over; beside them, ANALYZEd, every kind of acquisition
// leases 10 of the other tenant's 2,000 due jobs reading few rows and
// pages, without a scan of the parked ones; the resume gives them back
// from inbox_jobs_parked_idx. (The jobs are stored parked, not parked by
// the pause, so that the test does not depend on VACUUM removing the
// versions from before the parking, which it cannot while another test's
// transaction is open: right after a pause parks a backlog, the due index
// holds them until vacuum, and acquisitions pass over them.)
func TestAcquirePlanBesideParkedJobs(t *testing.T) {
	t.Parallel()
	s, pool, backlog := planStore(t, 20_000, 1_000_000)
	ctx := t.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q := quoteSchema(s.schema)
	scope := webhooks.PauseScope{Provider: "acme", Tenant: "held"}
	pause := webhooks.PauseRequest{Scope: scope, Cause: webhooks.PauseOperator, Actor: "op", Reason: "test", Now: now}
	require.NoError(t, s.Pause(ctx, pause))
	// g <= backlog: tenant held, due; then 100 of its expired leases;
	// then 2,000 of tenant free, due.
	_, err := pool.Exec(ctx, pgtest.InsertItemsSQL(s.schema, `provider, tenant, event_id, event_type, payload, payload_sha256,
			key_id, state, next_attempt_at, paused_due, lease_expires_at, lease_token, last_seen_at, received_at, updated_at`,
		`SELECT 'acme', tenant, 'e_' || g, 'invoice.paid', '\x7b7d', decode(repeat('00', 32), 'hex'),
			'k1', CASE WHEN expired THEN 'leased' ELSE 'pending' END,
			CASE WHEN expired THEN $1::timestamptz - interval '2 hours' WHEN tenant = 'held' THEN 'infinity'
				ELSE $1::timestamptz - interval '1 hour' END,
			CASE WHEN tenant = 'held' AND NOT expired THEN $1::timestamptz - interval '1 hour' END,
			CASE WHEN expired THEN $1::timestamptz - interval '2 hours' END,
			CASE WHEN expired THEN gen_random_uuid() END,
			$1::timestamptz, $1::timestamptz, $1::timestamptz
		FROM (SELECT g, CASE WHEN g <= $2 + 100 THEN 'held' ELSE 'free' END AS tenant, g > $2 AND g <= $2 + 100 AS expired
			FROM generate_series(1, $2::int + 2100) AS g) AS src`), now, backlog)
	require.NoError(t, err)
	var parked int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM `+q+`.inbox_jobs WHERE paused_due IS NOT NULL AND next_attempt_at = 'infinity'`).Scan(&parked))
	require.Equal(t, backlog, parked, "the tenant's pending jobs are parked")
	_, err = pool.Exec(ctx, "VACUUM ANALYZE "+q+".inbox_jobs, "+q+".inbox_events")
	require.NoError(t, err)
	args := []any{now, int64(60e6), 10, "w", "v", nil, false, 10, ""}
	for _, c := range []struct {
		name, sql string
		args      []any
		leased    string
	}{
		{"Acquire", s.sql.acquire, args, "rows=10 loops=1"},
		{"Acquire under a cap", s.sql.acquireLimited, append(slices.Clone(args), 200, int64(0), 0), "rows=10 loops=1"},
		// The walk finds the held tenant by its expired leases, and gives
		// it a turn it cannot take: 9 for the other.
		{"Fair acquisition", s.sql.acquireFair, append(slices.Clone(args), 0, int64(0), 0, 104), "rows=9 loops=1"},
	} {
		plan, total := analyzed(t, pool, c.sql, c.args)
		t.Logf("%s beside %d parked jobs: %d pages\n%s", c.name, backlog, total, plan)
		assert.NotRegexp(t, `Seq Scan on inbox_jobs \w+ \(actual`, plan, "plan:\n%s", plan)
		assert.Contains(t, plan, c.leased, "leased items")
		// The planner may join the candidates to the 2,100 due jobs by a
		// hash; no step reads the parked ones. Each of the 100 expired
		// leases passed over is looked up in inbox_pauses (inbox_held: a
		// few pages each).
		for _, m := range regexp.MustCompile(`actual rows=(\d+)`).FindAllStringSubmatch(plan, -1) {
			n, _ := strconv.Atoi(m[1])
			assert.LessOrEqual(t, n, 2100, "%s: a step of the plan reads %d rows beside %d parked jobs", c.name, n, backlog)
		}
		assert.Less(t, total, 1500, "%s: pages touched beside %d parked jobs", c.name, backlog)
	}
	leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: now, LeaseDuration: time.Minute, Max: 100})
	require.NoError(t, err)
	for _, l := range leases {
		require.Equal(t, "free", l.Item.Key.Tenant, "a held job was leased")
	}
	plan := explain(t, s, s.sql.unpark, []any{"", scope.Provider, scope.Tenant, scope.Types}, true)
	assert.Contains(t, plan, "inbox_jobs_parked_idx", "plan:\n%s", plan)
	require.NoError(t, s.Resume(ctx, webhooks.ResumeRequest{Scope: scope, Cause: webhooks.PauseOperator, Actor: "op", Reason: "test", Now: now}))
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM `+q+`.inbox_jobs WHERE paused_due IS NOT NULL OR next_attempt_at = 'infinity'`).Scan(&parked))
	require.Zero(t, parked, "the resume gave every parked job back")
}

// TestPrioritizedAcquirePlanBesideBacklogs: beside a backlog of due jobs
// of priority 0 and one of priority 5 not yet due (20,000 in all in make
// test, 1,000,000 with WEBHOOKS_TEST_LONG=1), and three due jobs of
// priority 10, ANALYZEd, an acquisition of 100 with priorities reads the
// three, nothing of the scheduled backlog, and 97 of the others (past
// the three): no scan of inbox_jobs, no step over a few hundred rows, and
// it touches about as many pages as a plain acquisition of 100, however
// large the backlogs.
func TestPrioritizedAcquirePlanBesideBacklogs(t *testing.T) {
	t.Parallel()
	s, pool, backlog := planStore(t, 20_000, 1_000_000)
	ctx := t.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q := quoteSchema(s.schema)
	// g <= 3: priority 10, due; then half the backlog of priority 5, due
	// in an hour; then the other half of priority 0, due an hour ago.
	_, err := pool.Exec(ctx, pgtest.InsertItemsSQL(s.schema, `provider, tenant, event_id, event_type, payload, payload_sha256,
			key_id, state, next_attempt_at, priority, last_seen_at, received_at, updated_at`,
		`SELECT 'acme', 't', 'e_' || g, 'invoice.paid', '\x7b7d', decode(repeat('00', 32), 'hex'),
			'k1', 'pending',
			CASE WHEN g > 3 AND g <= 3 + $2 / 2 THEN $1::timestamptz + interval '1 hour'
				ELSE $1::timestamptz - interval '1 hour' + g * interval '1 millisecond' END,
			CASE WHEN g <= 3 THEN 10 WHEN g <= 3 + $2 / 2 THEN 5 ELSE 0 END,
			$1::timestamptz, $1::timestamptz, $1::timestamptz
		FROM generate_series(1, $2::int + 3) AS g`), now, backlog)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, "VACUUM ANALYZE "+q+".inbox_jobs, "+q+".inbox_events")
	require.NoError(t, err)
	args := []any{now, int64(60e6), 100, "w", "v", nil, false, 100, ""}
	plain := 0 // the pages of the first, plain, acquisition
	for _, c := range []struct {
		name, sql string
		args      []any
	}{
		{"Acquire", s.sql.acquire, args},
		{"Acquire with priorities 10, 5", s.sql.acquirePrioritized, append(slices.Clone(args), []int{10, 5})},
		{"Acquire with priority 5", s.sql.acquirePrioritized, append(slices.Clone(args), []int{5})},
		{"Acquire under a cap with priorities 10, 5", s.sql.acquireLimitedPrioritized, append(slices.Clone(args), 500, int64(0), 0, []int{10, 5})},
	} {
		plan, total := analyzed(t, pool, c.sql, c.args)
		t.Logf("%s beside %d jobs: %d pages\n%s", c.name, backlog, total, plan)
		assert.NotRegexp(t, `Seq Scan on inbox_jobs \w+ \(actual`, plan, "plan:\n%s", plan)
		assert.Contains(t, plan, "rows=100 loops=1", "%s: leased items", c.name)
		for _, m := range regexp.MustCompile(`actual rows=(\d+)`).FindAllStringSubmatch(plan, -1) {
			n, _ := strconv.Atoi(m[1])
			assert.LessOrEqual(t, n, 300, "%s: a step of the plan reads %d rows beside a backlog of %d", c.name, n, backlog)
		}
		// The leases' writes are most of the pages (about 20 a lease: the
		// row, its event, the indexes): the priorities' reads add few to
		// those of a plain acquisition of as many.
		if plain == 0 {
			plain = total
		}
		assert.Less(t, total, plain+150, "%s: pages touched beside a backlog of %d; a plain acquisition touched %d", c.name, backlog, plain)
		assert.Less(t, total, 3000, "%s: pages touched beside a backlog of %d", c.name, backlog)
	}
	leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: now, LeaseDuration: time.Minute, Max: 100, Priorities: []int{10, 5}})
	require.NoError(t, err)
	require.Len(t, leases, 100)
	for i, l := range leases {
		want := 0
		if i < 3 {
			want = 10
		}
		require.Equal(t, want, l.Item.Priority, "lease %d (%s)", i, l.Key())
	}
}
