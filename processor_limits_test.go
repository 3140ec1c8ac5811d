package webhooks_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
)

// TestRateLimitedBacklogLeavesOtherHandlersPolled: while a rate-limited
// handler's backlog keeps the processor looking at it every few
// milliseconds, another handler's job stored meanwhile (no wake-up, as
// from another process) is found at the next poll, not after the
// backlog. Mutation: the rounds for the rate-limited handler reset the
// poll (the job then waits until a round asks every handler because the
// slots ran out, 2.6 s here).
func TestRateLimitedBacklogLeavesOtherHandlersPolled(t *testing.T) {
	t.Parallel()
	store := memstore.NewInbox()
	for i := range 500 {
		_, err := store.Enqueue(t.Context(), webhooks.Envelope{Key: webhooks.InboxKey{Provider: "acme", EventID: fmt.Sprint("slow-", i)},
			EventType: "invoice.paid", Payload: []byte(`{}`), ReceivedAt: time.Now(), Jobs: []webhooks.Job{{Handler: "limited"}}})
		require.NoError(t, err)
	}
	plain := make(chan struct{})
	hs := webhooks.Handlers{
		{Name: "limited", Dispatcher: webhooks.DispatcherFunc(func(context.Context, webhooks.Event) error { return nil }),
			Limits: webhooks.Limits{Rate: 50, Burst: 1}},
		{Name: "plain", Dispatcher: webhooks.DispatcherFunc(func(context.Context, webhooks.Event) error { close(plain); return nil })},
	}
	p, err := webhooks.NewProcessor(store, hs, webhooks.WithWorkers(64), webhooks.WithPollInterval(300*time.Millisecond), webhooks.WithLogger(discard))
	require.NoError(t, err)
	runProcessor(t, p)
	time.Sleep(200 * time.Millisecond)
	_, err = store.Enqueue(t.Context(), webhooks.Envelope{Key: webhooks.InboxKey{Provider: "acme", EventID: "plain"},
		EventType: "invoice.paid", Payload: []byte(`{}`), ReceivedAt: time.Now(), Jobs: []webhooks.Job{{Handler: "plain"}}})
	require.NoError(t, err)
	select {
	case <-plain:
	case <-time.After(1500 * time.Millisecond):
		// A round that asks every handler comes at least once per
		// capacity (128 slots) of rate-limited rounds, 2.6 s here, even
		// when the poll is reset; 1.5 s is five polls.
		t.Fatal("the plain handler's job did not run within 1.5 s (five polls)")
	}
}
