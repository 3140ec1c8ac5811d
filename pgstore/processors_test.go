package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/internal/testing/testlog"
	"github.com/hookinbox/webhooks/ops"
	"github.com/hookinbox/webhooks/pgstore"
	"github.com/hookinbox/webhooks/webhookstest"
)

// TestProcessorsOnSeparatePools runs three real webhooks.Processors, each on
// its own pool with its own LISTEN wake source, as three instances of a host
// would, through a few thousand items enqueued while they run. Some items fail
// once (transient) and are retried. Every item must end succeeded, each
// handler run must be the only one of its item in flight, and items that never
// failed must have run exactly once.
func TestProcessorsOnSeparatePools(t *testing.T) {
	t.Parallel()
	const (
		items     = 1500
		instances = 3
		failEach  = 100 // every failEach-th item fails its first attempt
	)
	seedPool := pgtest.NewPool(t, 4)
	schema := pgtest.NewSchema(t, seedPool)
	seed := newStoreOn(t, seedPool, schema)

	var (
		mu       sync.Mutex
		inFlight = map[string]bool{}
		runs     = map[string]int{}
		overlaps atomic.Int32
		done     sync.WaitGroup
	)
	done.Add(items)
	handler := func(ctx context.Context, ev webhooks.Event) error {
		mu.Lock()
		if inFlight[ev.ID] {
			overlaps.Add(1)
		}
		inFlight[ev.ID] = true
		runs[ev.ID]++
		n := runs[ev.ID]
		mu.Unlock()
		defer func() {
			mu.Lock()
			inFlight[ev.ID] = false
			mu.Unlock()
		}()
		var i int
		_, _ = fmt.Sscanf(ev.ID, "evt-%d", &i)
		if i%failEach == 0 && n == 1 {
			return errors.New("first attempt fails")
		}
		done.Done()
		return nil
	}
	// Retries are due at once, so the test needs no clock tricks.
	policy := webhooks.ExponentialPolicy{InitialDelay: time.Microsecond, MaxDelay: time.Microsecond}

	ctx, cancel := context.WithCancel(context.Background())
	var running sync.WaitGroup
	for range instances {
		store := newStoreOn(t, pgtest.NewPool(t, 4), schema)
		mux := webhooks.NewMux()
		require.NoError(t, mux.HandleFunc("*", handler))
		p, err := webhooks.NewProcessor(store, mux,
			webhooks.WithWorkers(3),
			webhooks.WithRetryPolicy(policy),
			webhooks.WithPollInterval(200*time.Millisecond),
			webhooks.WithWakeSource(store.Listener()),
			webhooks.WithLogger(testlog.Logger(t)),
		)
		require.NoError(t, err)
		running.Go(func() { assert.NoError(t, p.Run(ctx)) })
	}

	for i := range items {
		_, err := seed.Enqueue(ctx, testEnvelope(testKey(fmt.Sprintf("evt-%05d", i)), fmt.Sprint(i), time.Now()))
		require.NoError(t, err)
	}
	finished := make(chan struct{})
	go func() { done.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(2 * time.Minute):
		t.Fatal("not every item succeeded within 2 minutes")
	}
	cancel()
	running.Wait()

	assert.Zero(t, overlaps.Load(), "an item's handler ran while another run of it was in flight")
	for i := range items {
		key := testKey(fmt.Sprintf("evt-%05d", i))
		it, err := seed.Get(context.Background(), key)
		require.NoError(t, err)
		require.Equal(t, webhooks.StateSucceeded, it.State, "item %d", i)
		want := 1
		if i%failEach == 0 {
			want = 2
		}
		require.Equal(t, want, it.Attempts, "item %d attempts", i)
		require.Equal(t, want, runs[key.EventID], "item %d handler runs", i)
	}
}

var _ webhooks.WakeSource = (*pgstore.Listener)(nil)

// TestProcessorLosesExpiredLeaseToAnotherInstance: a running Processor's
// handler blocks while the lease lapses (by the processor's own clock) and
// another instance takes the item. The processor's next renewal finds its
// token gone: the handler is cancelled with cause webhooks.ErrLeaseLost and
// the processor settles nothing, so the item stays as the new holder has it.
func TestProcessorLosesExpiredLeaseToAnotherInstance(t *testing.T) {
	t.Parallel()
	poolA := pgtest.NewPool(t, 3)
	schema := pgtest.NewSchema(t, poolA)
	a := newStoreOn(t, poolA, schema)
	b := newStoreOn(t, pgtest.NewPool(t, 2), schema)
	key := testKey("slow")
	mustEnqueueNew(t, a, testEnvelope(key, "{}", baseTime))

	clock := webhookstest.NewClock(baseTime)
	started := make(chan struct{})
	cause := make(chan error, 1)
	mux := webhooks.NewMux()
	require.NoError(t, mux.HandleFunc("*", func(ctx context.Context, _ webhooks.Event) error {
		close(started)
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return ctx.Err()
	}))
	const lease = 150 * time.Millisecond // renewed every 50ms of real time
	p, err := webhooks.NewProcessor(a, mux,
		webhooks.WithClock(clock),
		webhooks.WithLeaseDuration(lease),
		webhooks.WithWorkers(1),
		webhooks.WithPollInterval(time.Hour), // nothing but the start-up acquisition
		webhooks.WithLogger(testlog.Logger(t)),
		webhooks.WithWorkerIdentity("instance-a", "v9"),
	)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	running := make(chan error, 1)
	go func() { running <- p.Run(ctx) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			require.NoError(t, <-running)
		}
	}
	t.Cleanup(stop)

	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not start")
	}
	// Until the processor's clock moves, its lease holds.
	require.Nil(t, acquireOne(t, b, clock.Now().Add(lease-time.Microsecond), time.Hour), "a valid lease is not up for grabs")

	// The processor's clock jumps an hour; renewals extend to at most its
	// now+lease, so at that instant the lease has lapsed whatever renewals
	// happen meanwhile, and the other instance takes it.
	clock.Advance(time.Hour)
	takeover := clock.Now().Add(lease)
	stolen := acquireOne(t, b, takeover, time.Hour)
	require.NotNil(t, stolen, "the lapsed lease is taken over")
	require.Equal(t, 2, stolen.Attempt)
	require.True(t, stolen.Reclaimed)

	select {
	case c := <-cause:
		assert.ErrorIs(t, c, webhooks.ErrLeaseLost)
	case <-time.After(10 * time.Second):
		t.Fatal("the handler was not cancelled after its lease was lost")
	}
	stop() // every settlement the processor would make is done now

	it, err := b.Get(t.Context(), key)
	require.NoError(t, err)
	assert.Equal(t, webhooks.StateLeased, it.State, "the loser settles nothing")
	assert.Equal(t, 2, it.Attempts)
	assert.True(t, it.LeaseExpiresAt.Equal(takeover.Add(time.Hour)), "the new holder's lease, not extended by the loser: %v", it.LeaseExpiresAt)
	assert.True(t, it.UpdatedAt.Equal(takeover), "last changed by the takeover: %v", it.UpdatedAt)
	assert.Nil(t, it.LastError)
	// The processor's attempt, recorded as crashed by the takeover, became
	// lease lost when its renewal was refused, at its clock's now.
	assert.Equal(t, []ops.Attempt{{Number: 1, Outcome: ops.OutcomeLeaseLost, StartedAt: baseTime, FinishedAt: baseTime.Add(time.Hour),
		Worker: "instance-a", Version: "v9"}}, it.History)
	require.NoError(t, b.Settle(t.Context(), succeeded(stolen, takeover)), "the new holder's token still works")
}
