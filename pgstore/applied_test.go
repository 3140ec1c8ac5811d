package pgstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/ops"
	"github.com/hookinbox/webhooks/pgstore"
)

// onlyLease acquires the due jobs of handler at now and requires exactly
// the one of event id.
func onlyLease(t *testing.T, s *pgstore.Store, handler, id string, now time.Time) *webhooks.Lease {
	t.Helper()
	req := acquireReq(now, time.Minute, 10)
	req.Handler = handler
	leases, err := s.Acquire(t.Context(), req)
	require.NoError(t, err)
	require.Len(t, leases, 1, "one head due")
	require.Equal(t, id, leases[0].Key().EventID)
	return leases[0]
}

// TestAppliedCopiedWhenJobBecomesHead: Lease.Applied is the key's applied
// version as of the job becoming its key's head, which is every way a job
// becomes one: enqueued into an idle key (by each enqueue statement: the
// group commit's batch, one statement, EnqueueTx), enqueued older than an
// unstarted head it demotes, promoted by the settlement of the head
// before it, replayed into an idle key, and replayed to a new handler.
func TestAppliedCopiedWhenJobBecomesHead(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		opts []pgstore.Option
		inTx bool
	}{
		{name: "group commit"},
		{name: "one statement", opts: []pgstore.Option{pgstore.WithEnqueueBatch(1)}},
		{name: "EnqueueTx", inTx: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			pool := pgtest.NewPool(t, 2)
			s := newStoreOn(t, pool, pgtest.NewSchema(t, pool), c.opts...)
			ctx := t.Context()
			enqueue := func(env webhooks.Envelope) {
				t.Helper()
				if !c.inTx {
					mustEnqueueNew(t, s, env)
					return
				}
				tx := pgtest.Begin(t, pool)
				res, err := s.EnqueueTx(ctx, tx, env)
				require.NoError(t, err)
				require.Equal(t, webhooks.EnqueueNew, res.Outcome)
				require.NoError(t, tx.Commit(ctx))
			}
			now := baseTime.Add(time.Second)
			mustEnqueueNew(t, s, orderedEnvelope("v5", "K", 5, baseTime))
			require.NoError(t, s.Settle(ctx, succeeded(onlyLease(t, s, "ledger", "v5", now), now)))

			// K is idle, applied 5: v7 is its head at once.
			enqueue(orderedEnvelope("v7", "K", 7, baseTime))
			l := onlyLease(t, s, "ledger", "v7", now)
			assert.Equal(t, int64(5), l.Applied, "enqueued as the head of an idle key")
			require.NoError(t, s.Settle(ctx, succeeded(l, now)))

			// v9 is K's head, unstarted; v8 demotes it.
			enqueue(orderedEnvelope("v9", "K", 9, baseTime))
			enqueue(orderedEnvelope("v8", "K", 8, baseTime))
			l = onlyLease(t, s, "ledger", "v8", now)
			assert.Equal(t, int64(7), l.Applied, "enqueued as the head in place of an unstarted one")
			require.NoError(t, s.Settle(ctx, succeeded(l, now)))

			l = onlyLease(t, s, "ledger", "v9", now)
			assert.Equal(t, int64(8), l.Applied, "promoted by the settlement of the head before it")
			require.NoError(t, s.Settle(ctx, succeeded(l, now)))
		})
	}

	t.Run("replay", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := t.Context()
		now := baseTime.Add(time.Second)
		// r1 dies; r2 (version 2) succeeds behind it: R is idle, applied 2.
		mustEnqueueNew(t, s, orderedEnvelope("r1", "R", 1, baseTime))
		l := onlyLease(t, s, "ledger", "r1", now)
		require.NoError(t, s.Settle(ctx, deadLettered(l, webhooks.Failure{Class: webhooks.FailurePermanent}, now)))
		mustEnqueueNew(t, s, orderedEnvelope("r2", "R", 2, baseTime))
		require.NoError(t, s.Settle(ctx, succeeded(onlyLease(t, s, "ledger", "r2", now), now)))

		_, err := s.Replay(ctx, ops.ReplayRequest{Key: testKey("r1"), Handler: "ledger", Actor: "ops", Reason: "again", Now: now})
		require.NoError(t, err)
		l = onlyLease(t, s, "ledger", "r1", now)
		assert.Equal(t, int64(2), l.Applied, "replayed into an idle key")
	})

	t.Run("replay to a new handler", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := t.Context()
		now := baseTime.Add(time.Second)
		// audit's key Q has applied 4; y (Q, version 6) has a ledger job only.
		a := orderedEnvelope("a4", "Q", 4, baseTime)
		a.Jobs = []webhooks.Job{{Handler: "audit", Ordered: true}}
		mustEnqueueNew(t, s, a)
		require.NoError(t, s.Settle(ctx, succeeded(onlyLease(t, s, "audit", "a4", now), now)))
		mustEnqueueNew(t, s, orderedEnvelope("y", "Q", 6, baseTime))
		require.NoError(t, s.Settle(ctx, succeeded(onlyLease(t, s, "ledger", "y", now), now)))

		_, err := s.Replay(ctx, ops.ReplayRequest{Key: testKey("y"), ToHandler: "audit", ToOrdered: true,
			Actor: "ops", Reason: "new handler", Now: now})
		require.NoError(t, err)
		l := onlyLease(t, s, "audit", "y", now)
		assert.True(t, l.Item.Ordered)
		assert.Equal(t, int64(4), l.Applied, "replayed to a new handler, into its idle key")
	})
}
