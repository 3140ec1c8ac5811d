package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/ops"
	"github.com/hookinbox/webhooks/pgstore"
)

// orderedEnvelope is an event with one ordered job, of handler "ledger",
// in the ordering key key at version.
func orderedEnvelope(id, key string, version int64, received time.Time) webhooks.Envelope {
	env := testEnvelope(testKey(id), `{"id":"`+id+`"}`, received)
	env.Jobs = []webhooks.Job{{Handler: "ledger", Ordered: true}}
	env.Ordering = webhooks.Ordering{Key: key, Version: version}
	return env
}

// ledgerLeases acquires the due jobs of handler "ledger" at now, by event ID.
func ledgerLeases(t *testing.T, s *pgstore.Store, now time.Time) map[string]*webhooks.Lease {
	t.Helper()
	req := acquireReq(now, time.Minute, 10)
	req.Handler = "ledger"
	leases, err := s.Acquire(t.Context(), req)
	require.NoError(t, err)
	m := map[string]*webhooks.Lease{}
	for _, l := range leases {
		m[l.Key().EventID] = l
	}
	return m
}

func ids(m map[string]*webhooks.Lease) []string {
	var out []string
	for id := range m {
		out = append(out, id)
	}
	return out
}

// TestOrderingKeysRunOneAtATimeInOrder: of an ordered handler's jobs of
// one key, only the head is acquired; the others wait. A retried head
// holds its key (and no other key); a succeeded head promotes the key's
// next job in (version, arrival) order, not arrival order; the stale
// guard reports the newest version applied, which a skipped success does
// not raise; a dead head releases its key, and the jobs promoted while it
// is dead are flagged as overtakers, until it is closed.
func TestOrderingKeysRunOneAtATimeInOrder(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	now := baseTime
	// Key K: a3 (version 3) arrives first and is the head, and starts
	// (leased) before a2 and a1 arrive, which wait behind it (an older
	// version demotes only a head that has not started). Key L: b1 alone.
	// An unkeyed event runs beside them.
	mustEnqueueNew(t, s, orderedEnvelope("a3", "K", 3, now))
	started := ledgerLeases(t, s, now.Add(time.Second))
	require.Equal(t, []string{"a3"}, ids(started))
	for _, env := range []webhooks.Envelope{
		orderedEnvelope("a2", "K", 2, now.Add(time.Millisecond)),
		orderedEnvelope("a1", "K", 1, now.Add(2*time.Millisecond)), orderedEnvelope("b1", "L", 1, now.Add(3*time.Millisecond)),
		orderedEnvelope("free", "", 0, now.Add(4*time.Millisecond)),
	} {
		mustEnqueueNew(t, s, env)
	}
	d, err := s.Get(ctx, testKey("a1"))
	require.NoError(t, err)
	assert.Equal(t, webhooks.StateWaiting, d.State)
	assert.True(t, d.Ordered)
	assert.Equal(t, webhooks.Ordering{Key: "K", Version: 1}, d.Ordering)
	st, err := s.Stats(ctx, ops.StatsRequest{Now: now})
	require.NoError(t, err)
	assert.Equal(t, int64(2), st.States[webhooks.StateWaiting])

	now = now.Add(time.Second)
	got := ledgerLeases(t, s, now)
	assert.ElementsMatch(t, []string{"b1", "free"}, ids(got), "one head per key (a3 is leased), and the unkeyed job")
	got["a3"] = started["a3"]
	assert.True(t, got["a3"].Item.Ordered)
	assert.False(t, got["free"].Item.Ordered, "no key: unordered")
	assert.Zero(t, got["a3"].Applied)

	// a3 retries: it holds K; b1 succeeds.
	fail := webhooks.Failure{Class: webhooks.FailureError, Message: "later"}
	require.NoError(t, s.Settle(ctx, retried(got["a3"], fail, now.Add(time.Second), now)))
	require.NoError(t, s.Settle(ctx, succeeded(got["b1"], now)))
	require.NoError(t, s.Settle(ctx, succeeded(got["free"], now)))
	now = now.Add(time.Second)
	got = ledgerLeases(t, s, now)
	assert.Equal(t, []string{"a3"}, ids(got), "the retried head holds K: a1 and a2 wait")
	// K is held: in Stats with its depth, failing head and next job.
	st, err = s.Stats(ctx, ops.StatsRequest{Now: now})
	require.NoError(t, err)
	require.Len(t, st.HeldKeys, 1)
	hk := st.HeldKeys[0]
	assert.Equal(t, ops.HeldKey{Handler: "ledger", Provider: "acme", Tenant: "t1", Key: "K", Depth: 3,
		Head: testKey("a3"), HeadAttempts: 2, HeadError: hk.HeadError,
		Next: testKey("a1"), NextReceivedAt: baseTime.Add(2 * time.Millisecond)}, hk)
	require.NotNil(t, hk.HeadError)
	assert.Equal(t, webhooks.FailureError, hk.HeadError.Class)
	assert.Zero(t, st.MoreHeldKeys)
	require.Len(t, st.Handlers, 1)
	assert.Equal(t, "ledger", st.Handlers[0].Handler)
	assert.Equal(t, map[webhooks.State]int64{webhooks.StatePending: 0, webhooks.StateLeased: 1, webhooks.StateWaiting: 2,
		webhooks.StateDead: 0, webhooks.StateClosed: 0}, st.Handlers[0].States)
	st, err = s.Stats(ctx, ops.StatsRequest{Now: now, HeldKeys: -1})
	require.Error(t, err)
	require.NoError(t, s.Settle(ctx, succeeded(got["a3"], now)))

	// a3 succeeded (version 3): K's next is a1 (version 1), not a2.
	now = now.Add(time.Second)
	got = ledgerLeases(t, s, now)
	require.Equal(t, []string{"a1"}, ids(got), "promoted by version, not arrival")
	assert.Equal(t, int64(3), got["a1"].Applied, "version 3 was applied: a1 is stale")
	skip := succeeded(got["a1"], now)
	skip.Failure = webhooks.Failure{Class: webhooks.FailureSkipped, Message: "stale"}
	require.NoError(t, s.Settle(ctx, skip))
	got = ledgerLeases(t, s, now)
	require.Equal(t, []string{"a2"}, ids(got))
	assert.Equal(t, int64(3), got["a2"].Applied)

	// a2 is dead-lettered: K is released, and its next head overtakes it.
	require.NoError(t, s.Settle(ctx, deadLettered(got["a2"], webhooks.Failure{Class: webhooks.FailurePermanent}, now)))
	mustEnqueueNew(t, s, orderedEnvelope("a4", "K", 4, now))
	mustEnqueueNew(t, s, orderedEnvelope("a5", "K", 5, now))
	got = ledgerLeases(t, s, now)
	require.Equal(t, []string{"a4"}, ids(got), "the dead head released K")
	assert.Equal(t, "a2", got["a4"].Item.Overtook, "a4 became K's head, by its enqueue, past the dead a2")
	require.NoError(t, s.CloseDeadLetter(ctx, ops.CloseRequest{Key: testKey("a2"), Handler: "ledger", Actor: "ops", Reason: "r", Now: now}))
	require.NoError(t, s.Settle(ctx, succeeded(got["a4"], now)))
	got = ledgerLeases(t, s, now)
	require.Equal(t, []string{"a5"}, ids(got))
	assert.Empty(t, got["a5"].Item.Overtook, "closed: no longer overtaken")
	assert.Equal(t, int64(4), got["a5"].Applied)

	// A replay into the busy key waits behind its head, and runs next.
	_, err = s.Replay(ctx, ops.ReplayRequest{Key: testKey("a3"), Handler: "ledger", Actor: "ops", Reason: "again", Now: now})
	require.NoError(t, err)
	d, err = s.Get(ctx, testKey("a3"))
	require.NoError(t, err)
	assert.Equal(t, webhooks.StateWaiting, d.State, "a5 is K's head")
	assert.Empty(t, ledgerLeases(t, s, now), "nothing else of K runs while a5 is leased")
	skip = succeeded(got["a5"], now)
	skip.Failure = webhooks.Failure{Class: webhooks.FailureSkipped}
	require.NoError(t, s.Settle(ctx, skip))
	got = ledgerLeases(t, s, now)
	require.Equal(t, []string{"a3"}, ids(got))
	assert.Equal(t, int64(4), got["a3"].Applied, "a5 was skipped: 4 is the newest applied")
}

// TestSettlePromotesJobEnqueuedWhileKeyLocked: a job enqueued behind a
// head in a transaction that still holds its key's row when the head's
// settlement starts is promoted once that transaction commits: the
// settlement waits for the key's lock before it reads the waiting jobs.
func TestSettlePromotesJobEnqueuedWhileKeyLocked(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 4)
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool))
	ctx := t.Context()
	mustEnqueueNew(t, s, orderedEnvelope("k1", "K", 0, baseTime))
	now := baseTime.Add(time.Second)
	head := ledgerLeases(t, s, now)["k1"]
	require.NotNil(t, head)

	tx := pgtest.Begin(t, pool)
	res, err := s.EnqueueTx(ctx, tx, orderedEnvelope("k2", "K", 0, baseTime))
	require.NoError(t, err)
	require.Equal(t, webhooks.EnqueueNew, res.Outcome)

	settled := make(chan error, 1)
	go func() { settled <- s.Settle(context.Background(), succeeded(head, now)) }()
	waitForLockWaiters(t, pool, s, 1, "the settlement waits for the key row the transaction holds")
	require.NoError(t, tx.Commit(ctx))
	require.NoError(t, <-settled)

	got := ledgerLeases(t, s, now)
	require.Contains(t, got, "k2", "the job enqueued while the key was locked was promoted")
	d, err := s.Get(ctx, testKey("k2"))
	require.NoError(t, err)
	assert.Equal(t, webhooks.StateLeased, d.State)
}

// waitForLockWaiters waits until n statements on s's schema wait for a
// lock, failing t after 10 s.
func waitForLockWaiters(t *testing.T, pool *pgxpool.Pool, s *pgstore.Store, n int, why string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var waiting int
		require.NoError(t, pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND state = 'active' AND position($1 in query) > 0`, s.Schema()).Scan(&waiting))
		if waiting >= n {
			return
		}
		require.True(t, time.Now().Before(deadline), "timed out: want %d statements waiting for a lock: %s", n, why)
		time.Sleep(5 * time.Millisecond)
	}
}

// TestOvertookSeesADeathAfterItsSnapshot: a job enqueued while its key's
// head is being dead-lettered, whose statement took its snapshot before
// that settlement committed and then waited for the key row, becomes the
// head flagged Overtook with that dead letter, which its snapshot shows
// still leased: the key row it locked names it (last_dead_event_id). Both
// enqueue statements (the group commit's and one per Enqueue) are run.
// Mutation: overtookSQL without its lastDead branch (the new head is not
// flagged).
func TestOvertookSeesADeathAfterItsSnapshot(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		opts []pgstore.Option
	}{{"group commit", nil}, {"one statement", []pgstore.Option{pgstore.WithEnqueueBatch(1)}}} {
		t.Run(c.name, func(t *testing.T) {
			pool := pgtest.NewPool(t, 6)
			s := newStoreOn(t, pool, pgtest.NewSchema(t, pool), c.opts...)
			ctx := t.Context()
			mustEnqueueNew(t, s, orderedEnvelope("k1", "K", 1, baseTime))
			now := baseTime.Add(time.Second)
			head := ledgerLeases(t, s, now)["k1"]
			require.NotNil(t, head)

			// The key row is held while the settlement, then the enqueue,
			// queue for it: the enqueue's snapshot is taken while k1 is
			// still leased.
			tx := pgtest.Begin(t, pool)
			_, err := tx.Exec(ctx, `SELECT 1 FROM `+quote(s.Schema())+`.inbox_keys WHERE ordering_key = 'K' FOR UPDATE`)
			require.NoError(t, err)
			settled := make(chan error, 1)
			go func() {
				settled <- s.Settle(context.Background(), deadLettered(head, webhooks.Failure{Class: webhooks.FailurePermanent}, now))
			}()
			waitForLockWaiters(t, pool, s, 1, "the settlement waits for the key row")
			enqueued := make(chan error, 1)
			go func() {
				_, err := s.Enqueue(context.Background(), orderedEnvelope("k2", "K", 2, now))
				enqueued <- err
			}()
			waitForLockWaiters(t, pool, s, 2, "the enqueue waits for the key row too")
			require.NoError(t, tx.Commit(ctx))
			require.NoError(t, <-settled)
			require.NoError(t, <-enqueued)

			got := ledgerLeases(t, s, now)
			require.Contains(t, got, "k2", "k1 died: k2 is K's head")
			assert.Equal(t, "k1", got["k2"].Item.Overtook, "k2 became K's head past the dead k1")
		})
	}
}

// TestDeleteSucceededSweepsIdleKeys: retention deletes the rows of keys
// with no unfinished job, unchanged since the cutoff, in batches, and
// keeps a key with a job still to run: the stale guard is forgotten
// after the retention period, and only then.
func TestDeleteSucceededSweepsIdleKeys(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, storePoolConns)
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool))
	ctx := t.Context()
	for i, key := range []string{"A", "B", "C", "D", "E"} {
		mustEnqueueNew(t, s, orderedEnvelope("done-"+key, key, int64(i+1), baseTime))
	}
	mustEnqueueNew(t, s, orderedEnvelope("busy", "E", 9, baseTime))
	for _, l := range ledgerLeases(t, s, baseTime) {
		require.NoError(t, s.Settle(ctx, succeeded(l, baseTime)))
	}
	keys := func() []string {
		rows, err := pool.Query(ctx, `SELECT ordering_key FROM `+quote(s.Schema())+`.inbox_keys ORDER BY 1`)
		require.NoError(t, err)
		var out []string
		for rows.Next() {
			var k string
			require.NoError(t, rows.Scan(&k))
			out = append(out, k)
		}
		require.NoError(t, rows.Err())
		return out
	}
	_, err := s.DeleteSucceeded(ctx, baseTime, 2)
	require.NoError(t, err)
	assert.Equal(t, []string{"A", "B", "C", "D", "E"}, keys(), "changed at the cutoff, not before: kept")
	n, err := s.DeleteSucceeded(ctx, baseTime.Add(time.Second), 2)
	require.NoError(t, err)
	assert.Equal(t, int64(5), n)
	assert.Equal(t, []string{"E"}, keys(), "E has a job to run")
	got := ledgerLeases(t, s, baseTime.Add(time.Second))
	require.Contains(t, got, "busy")
	assert.Equal(t, int64(5), got["busy"].Applied, "E's guard is kept")
}

// TestOrderingKeysDemoteOneStatement: an enqueue of its own statement
// (enqueueSQL with WithEnqueueBatch(1), enqueueNotifySQL in EnqueueTx)
// demotes its key's head that has not started when it brings an older
// version: the older job runs first, the demoted head next. (The
// conformance suite's enqueues go through the group commit statement.)
// Mutation: no demotion in jobsCTE.
func TestOrderingKeysDemoteOneStatement(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, storePoolConns)
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool), pgstore.WithEnqueueBatch(1))
	ctx := t.Context()
	mustEnqueueNew(t, s, orderedEnvelope("k200", "K", 200, baseTime))
	mustEnqueueNew(t, s, orderedEnvelope("k100", "K", 100, baseTime))
	mustEnqueueNew(t, s, orderedEnvelope("l200", "L", 200, baseTime))
	tx := pgtest.Begin(t, pool)
	res, err := s.EnqueueTx(ctx, tx, orderedEnvelope("l100", "L", 100, baseTime))
	require.NoError(t, err)
	require.Equal(t, webhooks.EnqueueNew, res.Outcome)
	require.NoError(t, tx.Commit(ctx))
	for _, id := range []string{"k200", "l200"} {
		d, err := s.Get(ctx, testKey(id))
		require.NoError(t, err)
		assert.Equal(t, webhooks.StateWaiting, d.State, "%s was demoted", id)
	}
	now := baseTime.Add(time.Second)
	got := ledgerLeases(t, s, now)
	require.ElementsMatch(t, []string{"k100", "l100"}, ids(got), "the older versions demoted the unstarted heads")
	for _, l := range got {
		require.NoError(t, s.Settle(ctx, succeeded(l, now)))
	}
	got = ledgerLeases(t, s, now)
	require.ElementsMatch(t, []string{"k200", "l200"}, ids(got), "the demoted heads run next")
	assert.Equal(t, int64(100), got["k200"].Applied)
}
