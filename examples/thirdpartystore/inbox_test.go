package thirdpartystore_test

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/storetest"

	"example.com/thirdpartystore"
)

// TestInbox runs the public conformance suite: the pipeline's cases. The
// store has none of the optional capabilities, so their cases are
// skipped, each group with a message saying why.
func TestInbox(t *testing.T) {
	storetest.RunInbox(t, func(*testing.T) webhooks.InboxStore {
		return thirdpartystore.New()
	}, storetest.Features{})
}

// TestProcessorRunsOnIt: a Processor runs the host's handler for an item
// enqueued in the store, and settles it.
func TestProcessorRunsOnIt(t *testing.T) {
	s := thirdpartystore.New()
	ran := make(chan webhooks.Event, 1)
	mux := webhooks.NewMux()
	mux.MustHandleFunc("invoice.paid", func(_ context.Context, ev webhooks.Event) error {
		ran <- ev
		return nil
	})
	p, err := webhooks.NewProcessor(s, mux, webhooks.WithPollInterval(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	env := webhooks.Envelope{
		Key:           webhooks.InboxKey{Provider: "acme", EventID: "evt_1"},
		EventType:     "invoice.paid",
		Payload:       []byte(`{"id":"evt_1"}`),
		PayloadSHA256: sha256.Sum256([]byte(`{"id":"evt_1"}`)),
		ReceivedAt:    time.Now(),
	}
	if _, err := s.Enqueue(t.Context(), env); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	select {
	case ev := <-ran:
		if ev.ID != "evt_1" || string(ev.Payload) != `{"id":"evt_1"}` {
			t.Errorf("the handler got event %q with payload %q; want evt_1 and the enqueued payload", ev.ID, ev.Payload)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not run within 10s")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	// Settled succeeded: a duplicate says so.
	res, err := s.Enqueue(t.Context(), env)
	if err != nil || res.State != webhooks.StateSucceeded {
		t.Errorf("Enqueue duplicate after the run = %+v, %v; want the item succeeded", res, err)
	}
}
