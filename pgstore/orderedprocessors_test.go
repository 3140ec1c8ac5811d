package pgstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/internal/testing/testlog"
)

// TestOrderedHandlerAcrossInstances runs two real Processors, each on its
// own pool (two instances of a host), of 16 workers, with an ordered
// handler that takes a random time and an unordered one: the events of
// one key never run at once (a compare-and-swap per key at the handler's
// entry and exit), each key's events are handled in the order they were
// enqueued (one enqueuer per key group, each waiting for its Enqueue, all
// before the processors start, so every key has a backlog to race
// through), and every event is handled by both handlers. 600 events over 20 keys;
// 10,000 over 100 with WEBHOOKS_TEST_LONG=1.
func TestOrderedHandlerAcrossInstances(t *testing.T) {
	t.Parallel()
	events, keys := 600, 20
	if os.Getenv("WEBHOOKS_TEST_LONG") == "1" {
		events, keys = 10_000, 100
	}
	seedPool := pgtest.NewPool(t, 4)
	schema := pgtest.NewSchema(t, seedPool)
	seed := newStoreOn(t, seedPool, schema)

	running := make([]atomic.Int32, keys)
	var (
		mu                sync.Mutex
		order             = make([][]int, keys)
		overlaps, audited atomic.Int32
		done              sync.WaitGroup
	)
	done.Add(2 * events)
	ledger := webhooks.DispatcherFunc(func(_ context.Context, ev webhooks.Event) error {
		var k, n int
		if _, err := fmt.Sscanf(ev.ID, "k%d-n%d", &k, &n); err != nil {
			return webhooks.Permanent(err)
		}
		if !running[k].CompareAndSwap(0, 1) {
			overlaps.Add(1)
		}
		if d := rand.N(500); d > 0 {
			time.Sleep(time.Duration(d) * time.Microsecond)
		}
		mu.Lock()
		order[k] = append(order[k], n)
		mu.Unlock()
		if !running[k].CompareAndSwap(1, 0) {
			overlaps.Add(1)
		}
		done.Done()
		return nil
	})
	audit := webhooks.DispatcherFunc(func(context.Context, webhooks.Event) error {
		audited.Add(1)
		done.Done()
		return nil
	})
	hs := webhooks.Handlers{{Name: "ledger", Dispatcher: ledger, Ordered: true}, {Name: "audit", Dispatcher: audit}}
	// Four enqueuers, each owning a quarter of the keys, so each key's
	// arrival order is its events' order.
	var enqueuers sync.WaitGroup
	for e := range 4 {
		enqueuers.Go(func() {
			for i := range events {
				k, n := i%keys, i/keys
				if k%4 != e {
					continue
				}
				_, err := seed.Enqueue(context.Background(), webhooks.Envelope{
					Key: testKey(fmt.Sprintf("k%d-n%d", k, n)), EventType: "order.updated", Payload: []byte(`{}`),
					ReceivedAt: time.Now(), Jobs: []webhooks.Job{{Handler: "ledger", Ordered: true}, {Handler: "audit"}},
					Ordering: webhooks.Ordering{Key: fmt.Sprintf("order-%d", k)},
				})
				if err != nil {
					t.Errorf("enqueue k%d-n%d: %v", k, n, err)
					return
				}
			}
		})
	}
	enqueuers.Wait()
	ctx, cancel := context.WithCancel(context.Background())
	var instances sync.WaitGroup
	for range 2 {
		store := newStoreOn(t, pgtest.NewPool(t, 4), schema)
		p, err := webhooks.NewProcessor(store, hs, webhooks.WithWorkers(16), webhooks.WithPollInterval(20*time.Millisecond),
			webhooks.WithWakeSource(store.Listener()), webhooks.WithLogger(testlog.Logger(t)))
		require.NoError(t, err)
		instances.Go(func() { assert.NoError(t, p.Run(ctx)) })
	}
	finished := make(chan struct{})
	go func() { done.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(2 * time.Minute):
		t.Fatalf("not every event was handled within 2 minutes: audit %d of %d", audited.Load(), events)
	}
	cancel()
	instances.Wait()
	assert.Zero(t, overlaps.Load(), "two events of one key ran at once")
	assert.EqualValues(t, events, audited.Load())
	for k := range keys {
		want := make([]int, events/keys)
		for n := range want {
			want[n] = n
		}
		assert.Equal(t, want, order[k], "key %d ran out of arrival order", k)
	}
}
