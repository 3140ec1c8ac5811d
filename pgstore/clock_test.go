package pgstore_test

import (
	"crypto/sha256"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/ops"
	"github.com/hookinbox/webhooks/pgstore"
)

// TestDatabaseClock runs instances whose clocks are hours apart. With
// WithDatabaseClock their leases follow the server's clock; without it, a
// fast clock takes a lease early, but the token still fences the slow
// worker out.
func TestDatabaseClock(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 3)
	schema := pgtest.NewSchema(t, pool)
	slow := newStoreOn(t, pool, schema, pgstore.WithDatabaseClock())
	fast := newStoreOn(t, pgtest.NewPool(t, 2), schema, pgstore.WithDatabaseClock())
	fastCallerClock := newStoreOn(t, pgtest.NewPool(t, 2), schema)
	ctx := t.Context()
	dbNow := func() time.Time {
		var now time.Time
		require.NoError(t, pool.QueryRow(ctx, "SELECT now()").Scan(&now))
		return now
	}
	const skew = 2 * time.Hour
	slowNow := func() time.Time { return time.Now().Add(-skew) }
	fastNow := func() time.Time { return time.Now().Add(skew) }
	const near = 10 * time.Second

	// A gateway running fast enqueues: the item is due by the server's
	// clock, not in two hours.
	k := testKey("skewed")
	env := testEnvelope(k, "{}", fastNow())
	mustEnqueueNew(t, fast, env)
	it, err := slow.Get(ctx, k)
	require.NoError(t, err)
	assert.WithinDuration(t, dbNow(), it.NextAttemptAt, near, "due at the server's now")
	assert.True(t, it.ReceivedAt.Equal(env.ReceivedAt.Truncate(time.Microsecond)), "ReceivedAt keeps the gateway's time")

	// The slow worker gets it, with an expiry in server time.
	l := acquireOne(t, slow, slowNow(), time.Minute)
	require.NotNil(t, l, "due by the server's clock although the worker's clock is behind")
	assert.WithinDuration(t, dbNow().Add(time.Minute), l.ExpiresAt, near)

	// The fast instance does not see the lease as expired.
	assert.Nil(t, acquireOne(t, fast, fastNow(), time.Minute), "with the database clock, a fast host clock cannot expire a lease early")

	// ExtendLease, too, counts from the server's now.
	require.NoError(t, slow.ExtendLease(ctx, webhooks.ExtendRequest{Lease: l, Now: slowNow(), Duration: 5 * time.Minute}))
	it, err = slow.Get(ctx, k)
	require.NoError(t, err)
	assert.WithinDuration(t, dbNow().Add(5*time.Minute), it.LeaseExpiresAt, near)

	// A retry keeps its delay relative to the caller's now.
	callerNow := slowNow()
	require.NoError(t, slow.Settle(ctx, retried(l, webhooks.Failure{Class: webhooks.FailureError, Message: "503", Transient: true},
		callerNow.Add(10*time.Minute), callerNow)))
	it, err = slow.Get(ctx, k)
	require.NoError(t, err)
	assert.Equal(t, webhooks.StatePending, it.State)
	assert.WithinDuration(t, dbNow().Add(10*time.Minute), it.NextAttemptAt, near)
	assert.WithinDuration(t, dbNow(), it.UpdatedAt, near)
	assert.WithinDuration(t, dbNow(), it.LastError.At, near)

	// Without the database clock, a caller clock two hours fast treats the
	// retry as due now and takes it: the hazard WithDatabaseClock removes.
	stolen := acquireOne(t, fastCallerClock, fastNow(), time.Minute)
	require.NotNil(t, stolen, "a caller clock two hours fast treats the item as due")
	// Tokens do not depend on the clock mode: the database-clock instance
	// may settle it, and the item is due at the server's now.
	require.NoError(t, fast.Settle(ctx, abandoned(stolen, fastNow())))

	// Replay keys: registered by a slow clock, checked by a fast one.
	digest := sha256.Sum256([]byte("body"))
	rk := webhooks.ReplayRegistration{Provider: "acme", Key: "r1"}
	n := slowNow()
	out, err := slow.Register(ctx, replayReg(rk, digest, n, n.Add(5*time.Minute)))
	require.NoError(t, err)
	require.Equal(t, webhooks.ReplayNew, out)
	n = fastNow()
	out, err = fast.Register(ctx, replayReg(rk, digest, n, n.Add(5*time.Minute)))
	require.NoError(t, err)
	assert.Equal(t, webhooks.ReplaySeen, out, "not expired by the server's clock")
	deleted, err := fast.DeleteExpiredReplayKeys(ctx, fastNow(), 10)
	require.NoError(t, err)
	assert.Zero(t, deleted, "cleanup follows the server's clock too")

	// Completing records the server's time.
	l = acquireOne(t, fast, fastNow(), time.Minute)
	require.NotNil(t, l, "abandoned: due at the server's now")
	require.NoError(t, fast.Settle(ctx, succeeded(l, fastNow())))
	it, err = slow.Get(ctx, k)
	require.NoError(t, err)
	assert.WithinDuration(t, dbNow(), it.CompletedAt, near)
}

// TestDatabaseClockConcurrentAcquire: instances with the database clock
// and host clocks hours apart acquire concurrently; each item is leased
// exactly once, since the lease is valid for an hour by the one clock that
// counts.
func TestDatabaseClockConcurrentAcquire(t *testing.T) {
	t.Parallel()
	const items = 300
	seedPool := pgtest.NewPool(t, 2)
	schema := pgtest.NewSchema(t, seedPool)
	seed := newStoreOn(t, seedPool, schema, pgstore.WithDatabaseClock())
	for i := range items {
		mustEnqueueNew(t, seed, testEnvelope(testKey(fmt.Sprintf("e%03d", i)), "{}", baseTime))
	}

	var (
		mu     sync.Mutex
		leased = map[webhooks.InboxKey]int{}
		tokens = map[string]bool{}
		wg     sync.WaitGroup
	)
	for inst, skew := range []time.Duration{-3 * time.Hour, 3 * time.Hour} {
		s := newStoreOn(t, pgtest.NewPool(t, 3), schema, pgstore.WithDatabaseClock())
		for w := range 2 {
			wg.Go(func() {
				for {
					now := time.Now().Add(skew)
					max := 1
					if (inst+w)%2 == 0 {
						max = 7
					}
					ls, err := s.Acquire(t.Context(), acquireReq(now, time.Hour, max))
					if !assert.NoError(t, err) {
						return
					}
					if len(ls) == 0 {
						return
					}
					mu.Lock()
					for _, l := range ls {
						leased[l.Key()]++
						tokens[l.Token] = true
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	require.Len(t, leased, items, "every item was leased")
	for k, n := range leased {
		require.Equal(t, 1, n, "item %s leased %d times", k, n)
	}
	assert.Len(t, tokens, items, "one token per lease")
}

// TestDatabaseClockOperators: with the database clock, the operators'
// calls keep the server's time too, whatever the host's clock says: a
// replay is due at the server's now (spread from it), a closing and the
// audit entries are stamped with it, a redelivery replays a dead letter
// due at it, and Stats counts what is due by it.
func TestDatabaseClockOperators(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 2)
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool), pgstore.WithDatabaseClock())
	ctx := t.Context()
	dbNow := func() time.Time {
		var now time.Time
		require.NoError(t, pool.QueryRow(ctx, "SELECT now()").Scan(&now))
		return now
	}
	const near = 10 * time.Second
	hostNow := func() time.Time { return time.Now().Add(-5 * time.Hour) } // a host clock hours behind
	for _, id := range []string{"a", "b", "c", "d"} {
		env := testEnvelope(testKey(id), id, hostNow())
		mustEnqueueNew(t, s, env)
		l := acquireOne(t, s, hostNow(), time.Minute)
		require.NotNil(t, l)
		require.NoError(t, s.Settle(ctx, deadLettered(l, webhooks.Failure{Class: webhooks.FailurePermanent, Message: "x"}, hostNow())))
	}

	res, err := s.Replay(ctx, ops.ReplayRequest{Query: &ops.Query{Provider: "acme", Limit: 2}, Actor: "ops", Reason: "r", Spread: time.Hour, Now: hostNow()})
	require.NoError(t, err)
	require.Len(t, res.Items, 2)
	assert.WithinDuration(t, dbNow(), res.Items[0].DueAt, near)
	assert.WithinDuration(t, dbNow().Add(30*time.Minute), res.Items[1].DueAt, near)
	d, err := s.Get(ctx, res.Items[0].Key)
	require.NoError(t, err)
	require.Len(t, d.Audit, 1)
	assert.WithinDuration(t, dbNow(), d.Audit[0].At, near)
	assert.WithinDuration(t, dbNow(), d.History[0].FinishedAt, near, "attempts are stamped with the server's time")

	page, err := s.List(ctx, ops.Query{Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Items, 2)
	require.NoError(t, s.CloseDeadLetter(ctx, ops.CloseRequest{Key: page.Items[0].Key, Actor: "ops", Reason: "r", Now: hostNow()}))
	d, err = s.Get(ctx, page.Items[0].Key)
	require.NoError(t, err)
	assert.WithinDuration(t, dbNow(), d.ClosedAt, near)

	redelivery := testEnvelope(page.Items[1].Key, page.Items[1].Key.EventID, hostNow())
	redelivery.ReplayIfDead = true
	out, err := s.Enqueue(ctx, redelivery)
	require.NoError(t, err)
	require.True(t, out.Replayed)
	d, err = s.Get(ctx, redelivery.Key)
	require.NoError(t, err)
	assert.WithinDuration(t, dbNow(), d.NextAttemptAt, near, "due at the server's now, not the host's")

	st, err := s.Stats(ctx, ops.StatsRequest{Now: hostNow()})
	require.NoError(t, err)
	assert.Equal(t, int64(2), st.Due, "the first of the spread and the redelivered item are due by the server's clock")
	assert.Equal(t, int64(3), st.States[webhooks.StatePending])
}
