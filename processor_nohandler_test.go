package webhooks_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
)

// An item whose type no handler takes (a receiver that does not filter
// stored it) is acknowledged, not dead-lettered: GitHub's ping must not
// fire the dead-letter alert.
func TestProcessorAcknowledgesUnhandledTypes(t *testing.T) {
	t.Parallel()
	store, clock := newObservedStore(), newFakeClock(base)
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
