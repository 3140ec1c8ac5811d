package pgstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/ops"
)

// fanOutEnvelope is testEnvelope with a job for each of handlers.
func fanOutEnvelope(id string, received time.Time, handlers ...string) webhooks.Envelope {
	env := testEnvelope(testKey(id), `{"id":"`+id+`"}`, received)
	for _, h := range handlers {
		env.Jobs = append(env.Jobs, webhooks.Job{Handler: h})
	}
	return env
}

// TestFanOutJobsPerHandler: an event with two handlers is stored once,
// with one job each; an acquisition by handler leases only that
// handler's job; the two jobs succeed and fail independently, each with
// its own attempts, history and dead letter; a token of one job does not
// settle the other; both jobs of one event settle in one batch; a
// duplicate adds no job.
func TestFanOutJobsPerHandler(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, storePoolConns)
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool))
	ctx := t.Context()
	require.Equal(t, webhooks.FanOutSupport{Handlers: true, OrderingKeys: true}, webhooks.FanOutOf(s))

	mustEnqueueNew(t, s, fanOutEnvelope("e1", baseTime, "ledger", "audit"))
	res, err := s.Enqueue(ctx, fanOutEnvelope("e1", baseTime, "ledger", "audit", "third"))
	require.NoError(t, err)
	assert.Equal(t, webhooks.EnqueueDuplicate, res.Outcome)
	var events, jobs int
	require.NoError(t, pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM `+quote(s.Schema())+`.inbox_events),
		(SELECT count(*) FROM `+quote(s.Schema())+`.inbox_jobs)`).Scan(&events, &jobs))
	assert.Equal(t, 1, events, "the payload is stored once")
	assert.Equal(t, 2, jobs, "one job per handler; the duplicate added none")

	acquire := func(handler string, now time.Time) []*webhooks.Lease {
		t.Helper()
		req := acquireReq(now, time.Minute, 10)
		req.Handler = handler
		leases, err := s.Acquire(ctx, req)
		require.NoError(t, err)
		return leases
	}
	assert.Empty(t, acquire("", baseTime), "the default handler has no job")
	ledger := acquire("ledger", baseTime)
	require.Len(t, ledger, 1)
	assert.Equal(t, "ledger", ledger[0].Item.Handler)
	assert.Equal(t, `{"id":"e1"}`, string(ledger[0].Item.Payload))
	assert.Empty(t, acquire("ledger", baseTime), "ledger's job is leased")
	audit := acquire("audit", baseTime)
	require.Len(t, audit, 1)
	assert.Equal(t, webhooks.JobKey{InboxKey: testKey("e1"), Handler: "audit"}, audit[0].Job())

	// A ledger token does not settle the audit job.
	crossed := &webhooks.Lease{Token: ledger[0].Token, Item: audit[0].Item}
	assert.ErrorIs(t, s.Settle(ctx, succeeded(crossed, baseTime)), webhooks.ErrLeaseLost)
	assert.ErrorIs(t, s.ExtendLease(ctx, webhooks.ExtendRequest{Lease: crossed, Now: baseTime, Duration: time.Minute}), webhooks.ErrLeaseLost)

	// Both jobs of the event in one batch: ledger succeeds, audit retries.
	fail := webhooks.Failure{Class: webhooks.FailureError, Message: "audit down"}
	errs := s.SettleBatch(ctx, []webhooks.Settlement{
		succeeded(ledger[0], baseTime),
		retried(audit[0], fail, baseTime.Add(time.Second), baseTime),
	})
	require.Equal(t, []error{nil, nil}, errs)

	later := baseTime.Add(time.Second)
	assert.Empty(t, acquire("ledger", later.Add(time.Hour)), "ledger succeeded: never leased again")
	audit = acquire("audit", later)
	require.Len(t, audit, 1)
	assert.Equal(t, 2, audit[0].Attempt)
	require.NoError(t, s.Settle(ctx, deadLettered(audit[0], webhooks.Failure{Class: webhooks.FailurePermanent, Message: "gone"}, later)))

	d, err := s.Get(ctx, testKey("e1"))
	require.NoError(t, err)
	require.Len(t, d.Jobs, 2)
	byHandler := map[string]ops.Job{}
	for _, j := range d.Jobs {
		byHandler[j.Handler] = j
	}
	assert.Equal(t, "audit", d.Jobs[0].Handler, "jobs by handler")
	assert.Equal(t, webhooks.StateSucceeded, byHandler["ledger"].State)
	assert.Equal(t, 1, byHandler["ledger"].Attempts)
	require.Len(t, byHandler["ledger"].History, 1)
	assert.Equal(t, webhooks.AttemptSucceeded, byHandler["ledger"].History[0].Outcome)
	assert.Equal(t, webhooks.StateDead, byHandler["audit"].State)
	assert.Equal(t, 2, byHandler["audit"].Attempts)
	require.Len(t, byHandler["audit"].History, 2)
	assert.Equal(t, webhooks.AttemptRetried, byHandler["audit"].History[0].Outcome)
	assert.Equal(t, webhooks.AttemptDeadLettered, byHandler["audit"].History[1].Outcome)

	// The dead-letter list shows the audit job only; replaying it touches
	// ledger's job not at all.
	page, err := s.List(ctx, ops.Query{Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	assert.Equal(t, "audit", page.Items[0].Handler)
	ledgerName := "ledger"
	page, err = s.List(ctx, ops.Query{Limit: 10, Handler: &ledgerName})
	require.NoError(t, err)
	assert.Empty(t, page.Items, "no ledger dead letter")
	_, err = s.Replay(ctx, ops.ReplayRequest{Key: testKey("e1"), Handler: "ledger", Actor: "ops", Reason: "r", Now: later})
	require.NoError(t, err, "a succeeded ledger job may be replayed on its own")
	rep, err := s.Replay(ctx, ops.ReplayRequest{Key: testKey("e1"), Handler: "audit", Actor: "ops", Reason: "r", Now: later})
	require.NoError(t, err)
	require.Len(t, rep.Items, 1)
	assert.Equal(t, "audit", rep.Items[0].Handler)
	d, err = s.Get(ctx, testKey("e1"))
	require.NoError(t, err)
	for _, j := range d.Jobs {
		assert.Equal(t, webhooks.StatePending, j.State, j.Handler)
		assert.Len(t, j.Audit, 1, "%s: its own replay only", j.Handler)
	}
	st, err := s.Stats(ctx, ops.StatsRequest{Now: later})
	require.NoError(t, err)
	assert.Equal(t, int64(2), st.States[webhooks.StatePending])
}

// TestFanOutRedeliveryReplaysDeadJobs: a provider's redelivery of an
// event (ReplayIfDead) replays every dead job of it, and only those.
func TestFanOutRedeliveryReplaysDeadJobs(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	mustEnqueueNew(t, s, fanOutEnvelope("e1", baseTime, "a", "b", "c"))
	for _, h := range []string{"a", "b", "c"} {
		req := acquireReq(baseTime, time.Minute, 1)
		req.Handler = h
		l, err := s.Acquire(ctx, req)
		require.NoError(t, err)
		require.Len(t, l, 1)
		st := deadLettered(l[0], webhooks.Failure{Class: webhooks.FailurePermanent}, baseTime)
		if h == "b" {
			st = succeeded(l[0], baseTime)
		}
		require.NoError(t, s.Settle(ctx, st))
	}
	env := fanOutEnvelope("e1", baseTime.Add(time.Minute), "a", "b", "c")
	env.ReplayIfDead = true
	res, err := s.Enqueue(ctx, env)
	require.NoError(t, err)
	assert.True(t, res.Replayed)
	d, err := s.Get(ctx, testKey("e1"))
	require.NoError(t, err)
	got := map[string]webhooks.State{}
	for _, j := range d.Jobs {
		got[j.Handler] = j.State
	}
	assert.Equal(t, map[string]webhooks.State{"a": webhooks.StatePending, "b": webhooks.StateSucceeded, "c": webhooks.StatePending}, got)
}

// TestFanOutListPagesJobsOfOneEvent: two dead jobs of one event, dead at
// the same time, are two entries of the dead-letter list, and a page of
// one ends between them: the cursor holds the handler.
func TestFanOutListPagesJobsOfOneEvent(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	mustEnqueueNew(t, s, fanOutEnvelope("e1", baseTime, "a", "b"))
	var sts []webhooks.Settlement
	for _, h := range []string{"a", "b"} {
		req := acquireReq(baseTime, time.Minute, 1)
		req.Handler = h
		l, err := s.Acquire(ctx, req)
		require.NoError(t, err)
		require.Len(t, l, 1)
		sts = append(sts, deadLettered(l[0], webhooks.Failure{Class: webhooks.FailurePermanent}, baseTime))
	}
	for _, err := range s.SettleBatch(ctx, sts) {
		require.NoError(t, err)
	}
	var got []string
	q := ops.Query{Limit: 1}
	for range 3 {
		page, err := s.List(ctx, q)
		require.NoError(t, err)
		for _, it := range page.Items {
			got = append(got, it.Handler)
		}
		if page.Next == "" {
			break
		}
		q.After = page.Next
	}
	assert.Equal(t, []string{"b", "a"}, got, "newest first, then by key and handler, descending")
}
