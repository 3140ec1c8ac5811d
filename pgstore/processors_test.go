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
	"github.com/hookinbox/webhooks/pgstore"
	"github.com/hookinbox/webhooks/pgstore/internal/pgtest"
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
			webhooks.WithBatchSize(4),
			webhooks.WithRetryPolicy(policy),
			webhooks.WithPollInterval(200*time.Millisecond),
			webhooks.WithWakeSource(store.Listener()),
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
