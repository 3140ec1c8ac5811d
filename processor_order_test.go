package webhooks_test

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
	"github.com/hookinbox/webhooks/memstore"
)

// TestOrderedHandlerAcrossProcessors runs two Processors of 32 workers
// each on one store, with an ordered handler that takes a random time:
// the events of one key never run at once (a compare-and-swap per key at
// the handler's entry and exit), each key's events are handled in the
// order they arrived, and every event is handled, while the handler of
// another name, unordered, takes the same events in parallel.
func TestOrderedHandlerAcrossProcessors(t *testing.T) {
	t.Parallel()
	events, keys := 2000, 50
	if os.Getenv("WEBHOOKS_TEST_LONG") != "" {
		events, keys = 10_000, 100
	}
	runOrderedAcrossProcessors(t, memstore.NewInbox(), events, keys)
}

// runOrderedAcrossProcessors is the test's body on store, which must
// support ordering keys.
func runOrderedAcrossProcessors(t *testing.T, store webhooks.InboxStore, events, keys int) {
	ctx := context.Background()
	running := make([]atomic.Int32, keys)
	var mu sync.Mutex
	order := make([][]int, keys) // per key, the sequence numbers handled
	var overlaps, audited atomic.Int32
	var done sync.WaitGroup
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
	for i := range events {
		k, n := i%keys, i/keys
		_, err := store.Enqueue(ctx, webhooks.Envelope{
			Key: webhooks.InboxKey{Provider: "acme", EventID: fmt.Sprintf("k%d-n%d", k, n)}, EventType: "order.updated",
			Payload: []byte(`{}`), ReceivedAt: time.Now(), Jobs: []webhooks.Job{{Handler: "ledger", Ordered: true}, {Handler: "audit"}},
			Ordering: webhooks.Ordering{Key: fmt.Sprintf("order-%d", k)},
		})
		require.NoError(t, err)
	}
	// The processors start once the whole backlog is stored, so every key
	// has events queued to race through (enqueued while they run, each
	// event could be handled before the next arrived, in order by luck).
	for range 2 {
		p, err := webhooks.NewProcessor(store, hs, webhooks.WithWorkers(32), webhooks.WithPollInterval(5*time.Millisecond), webhooks.WithLogger(discard))
		require.NoError(t, err)
		runProcessor(t, p)
	}
	finished := make(chan struct{})
	go func() { done.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(2 * time.Minute):
		t.Fatalf("not every event was handled within 2 minutes: audit %d of %d", audited.Load(), events)
	}
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
