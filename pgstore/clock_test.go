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
	"github.com/hookinbox/webhooks/pgstore"
	"github.com/hookinbox/webhooks/pgstore/internal/pgtest"
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
	assert.WithinDuration(t, dbNow().Add(5*time.Minute), l.ExpiresAt, near)

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
	rk := webhooks.ReplayKey{Provider: "acme", Tenant: "t1", Key: "r1"}
	n := slowNow()
	out, err := slow.Register(ctx, webhooks.ReplayRegistration{Key: rk, PayloadSHA256: digest, Now: n, ExpiresAt: n.Add(5 * time.Minute)})
	require.NoError(t, err)
	require.Equal(t, webhooks.ReplayNew, out)
	n = fastNow()
	out, err = fast.Register(ctx, webhooks.ReplayRegistration{Key: rk, PayloadSHA256: digest, Now: n, ExpiresAt: n.Add(5 * time.Minute)})
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
