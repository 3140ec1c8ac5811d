package pgstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/ops"
)

// TestHistoryKeepsTextStorable: a failure PostgreSQL's text cannot hold
// (NUL, invalid UTF-8), from a caller other than the Processor, is made
// storable in the history as in the item, on the settlement's path and on
// a lost lease's.
func TestHistoryKeepsTextStorable(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	env := testEnvelope(testKey("e1"), "{}", baseTime)
	mustEnqueueNew(t, s, env)
	bad := webhooks.Failure{Class: "err\x00or", Message: "a\x00b\xffc", Transient: true}
	l := acquireOne(t, s, baseTime, time.Minute)
	require.NotNil(t, l)
	require.NoError(t, s.Settle(ctx, retried(l, bad, baseTime.Add(time.Second), baseTime)))

	stale := acquireOne(t, s, baseTime.Add(time.Second), time.Second)
	require.NotNil(t, stale)
	require.NotNil(t, acquireOne(t, s, baseTime.Add(2*time.Second), time.Minute), "the expired lease is taken over")
	require.ErrorIs(t, s.Settle(ctx, retried(stale, bad, baseTime.Add(time.Hour), baseTime.Add(3*time.Second))), webhooks.ErrLeaseLost)

	d, err := s.Get(ctx, env.Key)
	require.NoError(t, err)
	require.Len(t, d.History, 2)
	for i, a := range d.History {
		assert.Equal(t, webhooks.FailureClass("error"), a.ErrorClass, "attempt %d", i+1)
		assert.Equal(t, "ab\uFFFDc", a.Error, "attempt %d", i+1)
	}
	assert.Equal(t, ops.OutcomeLeaseLost, d.History[1].Outcome)
}

// TestAcquireRefusesUnstorableWorker: a worker or version PostgreSQL's text
// cannot hold is refused before anything is leased.
func TestAcquireRefusesUnstorableWorker(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	mustEnqueueNew(t, s, testEnvelope(testKey("e1"), "{}", baseTime))
	for _, req := range []webhooks.AcquireRequest{
		{Now: baseTime, LeaseDuration: time.Minute, Max: 1, Worker: "host\x00"},
		{Now: baseTime, LeaseDuration: time.Minute, Max: 1, Version: "v\xff"},
	} {
		leases, err := s.Acquire(t.Context(), req)
		assert.ErrorContains(t, err, "pgstore:")
		assert.Empty(t, leases)
	}
	require.NotNil(t, acquireOne(t, s, baseTime, time.Minute), "the item is still due")
}

// TestBulkReplayInBatches: a bulk replay larger than a batch replays every
// item it selected, a batch a call, newest first, with its place in the
// spread, and audits each once.
func TestBulkReplayInBatches(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, storePoolConns)
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool))
	ctx := t.Context()
	const dead, limit = 1203, 1100
	_, err := pool.Exec(ctx, pgtest.InsertItemsSQL((s.Schema()), `provider, tenant, event_id, event_type, payload,
			payload_sha256, key_id, state, attempts, duplicate_count, last_seen_at, received_at, updated_at, dead_at,
			last_error_class, last_error_message, last_error_at`, `SELECT 'acme', '', 'evt_' || lpad(g::text, 5, '0'), 'invoice.paid', '\x7b7d', decode(repeat('00', 32), 'hex'),
			'k1', 'dead', 1, 0, $1::timestamptz, $1::timestamptz, $1::timestamptz, $1::timestamptz + g * interval '1 second',
			'permanent', 'gone', $1::timestamptz
		FROM generate_series(1, $2::int) AS g`), baseTime, dead)
	require.NoError(t, err)

	now, spread := baseTime.Add(24*time.Hour), time.Hour
	// run calls the bulk replay until it is complete, a batch a call.
	run := func(dryRun bool) ops.ReplayResult {
		q := ops.Query{Limit: limit}
		req := ops.ReplayRequest{Query: &q, Actor: "ops", Reason: "bulk", Spread: spread, DryRun: dryRun, Now: now}
		var all ops.ReplayResult
		for calls := 1; ; calls++ {
			res, err := s.Replay(ctx, req)
			require.NoError(t, err)
			require.LessOrEqual(t, len(res.Items), ops.ReplayBatch)
			assert.Equal(t, min(calls*ops.ReplayBatch, limit), res.Done)
			assert.Equal(t, limit, res.Total)
			all.Items = append(all.Items, res.Items...)
			if res.Next == "" {
				assert.Equal(t, (limit+ops.ReplayBatch-1)/ops.ReplayBatch, calls)
				return all
			}
			q.After = res.Next
		}
	}
	dry := run(true)
	res := run(false)
	require.Len(t, res.Items, limit)
	assert.Equal(t, dry, res, "the dry run reported what the replay did")
	for i, r := range res.Items {
		assert.Equal(t, fmt.Sprintf("evt_%05d", dead-i), r.Key.EventID, "newest first")
		assert.True(t, r.DueAt.Equal(now.Add(spread*time.Duration(i)/limit).Truncate(time.Microsecond)), "item %d due %v", i, r.DueAt)
	}
	var replayed, audited int
	require.NoError(t, pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM `+quote(s.Schema())+`.inbox_jobs WHERE state = 'pending'),
		(SELECT count(*) FROM `+quote(s.Schema())+`.inbox_audit WHERE action = 'replay')`).Scan(&replayed, &audited))
	assert.Equal(t, limit, replayed)
	assert.Equal(t, limit, audited)
	st, err := s.Stats(ctx, ops.StatsRequest{Now: now})
	require.NoError(t, err)
	assert.Equal(t, int64(dead-limit), st.States[webhooks.StateDead])
	assert.Equal(t, int64(1), st.Due, "the first of the spread")
}

// TestDeleteClosed: closed items closed before the cutoff are deleted in
// batches, with their history, audit trail and quarantine; nothing else is.
func TestDeleteClosed(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, storePoolConns)
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool))
	ctx := t.Context()
	const closed = 7
	for i := range closed + 2 {
		env := testEnvelope(testKey(fmt.Sprintf("e%02d", i)), fmt.Sprint(i), baseTime)
		mustEnqueueNew(t, s, env)
		l := acquireOne(t, s, baseTime, time.Minute)
		require.NotNil(t, l)
		require.NoError(t, s.Settle(ctx, deadLettered(l, webhooks.Failure{Class: webhooks.FailurePermanent, Message: "x"}, baseTime)))
		other := testEnvelope(env.Key, "other", baseTime)
		res, err := s.Enqueue(ctx, other)
		require.NoError(t, err)
		require.Equal(t, webhooks.EnqueueConflict, res.Outcome)
		if i < closed {
			require.NoError(t, s.CloseDeadLetter(ctx, ops.CloseRequest{Key: env.Key, Actor: "ops", Reason: "done", Now: baseTime.Add(time.Duration(i) * time.Minute)}))
		}
	}
	_, err := s.DeleteClosed(ctx, baseTime, 0)
	require.ErrorContains(t, err, "batch size")
	n, err := s.DeleteClosed(ctx, baseTime.Add(5*time.Minute), 2)
	require.NoError(t, err)
	assert.Equal(t, int64(5), n, "closed before the cutoff, in batches of 2")
	page, err := s.List(ctx, ops.Query{State: webhooks.StateClosed, Limit: 10})
	require.NoError(t, err)
	assert.Len(t, page.Items, 2)
	page, err = s.List(ctx, ops.Query{Limit: 10})
	require.NoError(t, err)
	assert.Len(t, page.Items, 2, "dead letters are not deleted")
	var rows int
	require.NoError(t, pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM `+quote(s.Schema())+`.inbox_attempts) +
		(SELECT count(*) FROM `+quote(s.Schema())+`.inbox_audit) + (SELECT count(*) FROM `+quote(s.Schema())+`.inbox_quarantine)`).Scan(&rows))
	assert.Equal(t, 4*3-2, rows, "the history of the 4 items kept (2 of them closed): an attempt, a quarantined delivery and, when closed, an audit entry each")
}
