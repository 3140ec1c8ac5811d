package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/pgstore"
	"github.com/hookinbox/webhooks/webhookstest"
)

// lostAcquireReply is a pgstore.Store whose first acquisition that leases
// anything commits and then answers with an error, as when the connection
// dies between the commit and the reply.
type lostAcquireReply struct {
	*pgstore.Store
	lost atomic.Bool
}

func (s *lostAcquireReply) Acquire(ctx context.Context, req webhooks.AcquireRequest) ([]*webhooks.Lease, error) {
	leases, err := s.Store.Acquire(ctx, req)
	if err == nil && len(leases) > 0 && s.lost.CompareAndSwap(false, true) {
		return nil, errors.New("pgstore: acquire: read tcp 127.0.0.1:5432: connection reset by peer")
	}
	return leases, err
}

// TestProcessorRecoversALostAcquisitionReply: a Processor on PostgreSQL
// whose acquisition committed but whose reply was lost asks for the same
// acquisition again and runs its items once each, on the attempt the lost
// acquisition counted, while their leases are valid (the clock never
// moves); no attempt is recorded as crashed.
func TestProcessorRecoversALostAcquisitionReply(t *testing.T) {
	t.Parallel()
	store := &lostAcquireReply{Store: newStore(t)}
	clock := webhookstest.NewClock(baseTime.Add(time.Second))
	const items = 5
	var (
		mu      sync.Mutex
		runs    = map[string]int{}
		allRan  = make(chan struct{})
		ranOnce sync.Once
	)
	mux := webhooks.NewMux()
	require.NoError(t, mux.HandleFunc("*", func(_ context.Context, ev webhooks.Event) error {
		mu.Lock()
		defer mu.Unlock()
		runs[ev.ID]++
		if len(runs) == items {
			ranOnce.Do(func() { close(allRan) })
		}
		return nil
	}))
	var logs lockedBuffer
	p, err := webhooks.NewProcessor(store, mux, webhooks.WithClock(clock), webhooks.WithPollInterval(5*time.Millisecond),
		webhooks.WithLeaseDuration(30*time.Second), webhooks.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	require.NoError(t, err)
	for i := range items {
		mustEnqueueNew(t, store.Store, testEnvelope(testKey(fmt.Sprint("e", i)), "{}", baseTime.Add(time.Duration(i)*time.Microsecond)))
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	select {
	case <-allRan:
	case <-time.After(30 * time.Second):
		t.Fatal("the items of the lost acquisition did not run within 30s; they wait out their leases")
	}
	cancel() // Run settles what its workers handed over before it returns
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30s of cancellation")
	}

	require.True(t, store.lost.Load(), "an acquisition's reply was lost")
	require.Equal(t, baseTime.Add(time.Second), clock.Now(), "the leases never expired: the clock did not move")
	for i := range items {
		k := testKey(fmt.Sprint("e", i))
		d, err := store.Get(t.Context(), k)
		require.NoError(t, err)
		assert.Equal(t, webhooks.StateSucceeded, d.State, k)
		assert.Equal(t, 1, d.Attempts, "%s: the attempt the lost acquisition counted is the one that ran", k)
		if assert.Len(t, d.History, 1, k) {
			assert.Equal(t, 1, d.History[0].Number, k)
			assert.Equal(t, webhooks.AttemptSucceeded, d.History[0].Outcome, k)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for id, n := range runs {
		assert.Equal(t, 1, n, "%s ran %d times; want once", id, n)
	}
	assert.Contains(t, logs.String(), "retrying after the poll interval with the same acquisition ID")
}

// TestRepeatAcquisitionIgnoresLeasesTakenByAnOlderVersion: during a rolling
// upgrade an instance of the previous version may take an expired lease
// over without writing acquisition_id; the ID of the acquisition that
// granted the expired lease must not return the new holder's lease.
func TestRepeatAcquisitionIgnoresLeasesTakenByAnOlderVersion(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 2)
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool))
	ctx := t.Context()
	mustEnqueueNew(t, s, testEnvelope(testKey("e"), "{}", baseTime))
	req := webhooks.AcquireRequest{Now: baseTime, LeaseDuration: 10 * time.Second, Max: 1, ID: "acq-1"}
	leases, err := s.Acquire(ctx, req)
	require.NoError(t, err)
	require.Len(t, leases, 1)

	// The takeover as version 3's acquisition makes it, at the expiry.
	takenAt := baseTime.Add(10 * time.Second)
	tag, err := pool.Exec(ctx, `UPDATE `+quote(s.Schema())+`.inbox_jobs SET
			attempts = attempts + 1, attempt_seq = attempt_seq + 1, lease_token = gen_random_uuid(), settled_token = NULL,
			lease_started_at = $1, lease_expires_at = $1::timestamptz + interval '1 hour',
			next_attempt_at = $1::timestamptz + interval '1 hour', updated_at = $1
		WHERE event_id = 'e'`, takenAt)
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected())

	again, err := s.RepeatAcquisition(ctx, webhooks.RepeatRequest{ID: req.ID, Now: takenAt.Add(time.Second)})
	require.NoError(t, err)
	assert.Empty(t, again, "the ID's lease was taken over by another instance: nothing is held under it")
}
