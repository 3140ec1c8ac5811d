package webhooks_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/webhookstest"
)

// An item whose type no handler takes (a receiver that does not filter
// stored it) is acknowledged, not dead-lettered: GitHub's ping must not
// fire the dead-letter alert.
func TestProcessorAcknowledgesUnhandledTypes(t *testing.T) {
	t.Parallel()
	store, clock := newObservedStore(), webhookstest.NewClock(base)
	logs := &syncBuffer{}
	mux := webhooks.NewMux()
	mux.MustHandleFunc("push", func(context.Context, webhooks.Event) error { return nil })
	p, err := webhooks.NewProcessor(store, mux, webhooks.WithClock(clock),
		webhooks.WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))))
	require.NoError(t, err)
	ping := enqueue(t, store, "ping-1", "ping", base)
	runProcessor(t, p)
	p.Wake()
	require.Equal(t, "succeeded", store.next(t).Op)

	it := get(t, store, ping)
	assert.Equal(t, webhooks.StateSucceeded, it.State, "an unhandled type is acknowledged")
	assert.Nil(t, it.LastError, "it is no failure")
	assert.Equal(t, 1, it.Attempts)
	require.Len(t, it.History, 1)
	a := it.History[0]
	assert.Equal(t, webhooks.AttemptSucceeded, a.Outcome)
	assert.Equal(t, webhooks.FailureNoHandler, a.ErrorClass, "its attempt says no handler ran")
	assert.Contains(t, a.Error, `no handler for event type "ping"`)
	logs.waitFor(t, "level=INFO msg=\"event acknowledged without a handler")
	assert.NotContains(t, logs.String(), "level=ERROR")
}

// A handler that classifies an error wrapping ErrNoHandler decides for
// itself: Permanent keeps the event as a dead letter (the Mux's recipe
// for keeping unhandled types to replay later), RetryAfter retries it.
// Only an unclassified ErrNoHandler, as a Mux answers, is acknowledged.
func TestProcessorClassifiedNoHandlerIsAFailure(t *testing.T) {
	t.Parallel()
	store, clock := newObservedStore(), webhookstest.NewClock(base)
	mux := webhooks.NewMux()
	mux.MustHandleFunc("keep.*", func(context.Context, webhooks.Event) error {
		return webhooks.Permanent(fmt.Errorf("kept for later: %w", webhooks.ErrNoHandler))
	})
	mux.MustHandleFunc("later.*", func(context.Context, webhooks.Event) error {
		return webhooks.RetryAfter(fmt.Errorf("not yet: %w", webhooks.ErrNoHandler), time.Hour)
	})
	p, err := webhooks.NewProcessor(store, mux, webhooks.WithClock(clock), webhooks.WithLogger(discard))
	require.NoError(t, err)
	kept := enqueue(t, store, "kept", "keep.x", base)
	later := enqueue(t, store, "later", "later.x", base)
	unhandled := enqueue(t, store, "unhandled", "other", base)
	runProcessor(t, p)
	p.Wake()
	ops := map[webhooks.InboxKey]string{}
	for range 3 {
		s := store.next(t)
		ops[s.Key] = s.Op
	}
	assert.Equal(t, map[webhooks.InboxKey]string{
		kept:      string(webhooks.AttemptDeadLettered),
		later:     string(webhooks.AttemptRetried),
		unhandled: string(webhooks.AttemptSucceeded),
	}, ops)
	it := get(t, store, kept)
	assert.Equal(t, webhooks.StateDead, it.State, "Permanent(…ErrNoHandler…) keeps the event as a dead letter")
	if assert.NotNil(t, it.LastError) {
		assert.Equal(t, webhooks.FailurePermanent, it.LastError.Class)
	}
	it = get(t, store, later)
	assert.Equal(t, webhooks.StatePending, it.State)
	assert.Equal(t, base.Add(time.Hour), it.NextAttemptAt, "RetryAfter(…ErrNoHandler…) is retried after its wait")
}
