package webhooks_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
)

// TestHandlerPriority: with one worker and a backlog of both, every job of
// the handler of higher Priority runs before any of the other's, though
// the other is listed first; handlers of one priority take turns.
func TestHandlerPriority(t *testing.T) {
	t.Parallel()
	store := memstore.NewInbox()
	const events = 10
	var (
		mu    sync.Mutex
		order []string
		done  sync.WaitGroup
	)
	record := func(name string) webhooks.Dispatcher {
		return webhooks.DispatcherFunc(func(context.Context, webhooks.Event) error {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			done.Done()
			return nil
		})
	}
	hs := webhooks.Handlers{
		{Name: "analytics", Dispatcher: record("analytics")},
		{Name: "payments", Dispatcher: record("payments"), Priority: 10},
		{Name: "audit", Dispatcher: record("audit"), Priority: 10},
	}
	jobs := []webhooks.Job{{Handler: "analytics"}, {Handler: "payments"}, {Handler: "audit"}}
	for i := range events {
		_, err := store.Enqueue(t.Context(), webhooks.Envelope{Key: webhooks.InboxKey{Provider: "acme", EventID: fmt.Sprint("e", i)},
			EventType: "invoice.paid", Payload: []byte(`{}`), ReceivedAt: time.Now().Add(-time.Minute), Jobs: jobs})
		require.NoError(t, err)
	}
	done.Add(3 * events)
	p, err := webhooks.NewProcessor(store, hs, webhooks.WithWorkers(1), webhooks.WithPollInterval(5*time.Millisecond), webhooks.WithLogger(discard))
	require.NoError(t, err)
	runProcessor(t, p)
	finished := make(chan struct{})
	go func() { done.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(30 * time.Second):
		t.Fatal("not every job ran within 30 s")
	}
	mu.Lock()
	defer mu.Unlock()
	for i, name := range order[:2*events] {
		assert.NotEqual(t, "analytics", name, "job %d ran before the payments and audit backlogs were done: %v", i, order)
	}
	counts := map[string]int{}
	for _, name := range order[:events] {
		counts[name]++
	}
	assert.Greater(t, counts["payments"], 0, "payments and audit, of one priority, take turns: %v", order)
	assert.Greater(t, counts["audit"], 0, "payments and audit, of one priority, take turns: %v", order)
}
