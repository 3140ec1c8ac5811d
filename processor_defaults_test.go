package webhooks_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
)

// The defaults a service runs with: a handler that hangs is stopped, a
// handler running at SIGTERM may finish, and a panic's attempt record says
// where it happened.

func TestProcessorBoundsHandlersByDefault(t *testing.T) {
	t.Parallel()
	deadline := make(chan time.Duration, 1)
	store, _, p := newTestProcessor(t, func(ctx context.Context, _ webhooks.Event) error {
		d, ok := ctx.Deadline()
		if !ok {
			deadline <- 0
			return nil
		}
		deadline <- time.Until(d)
		return nil
	})
	enqueue(t, store, "e", "x", base)
	runProcessor(t, p)
	p.Wake()
	left := <-deadline
	require.NotZero(t, left, "a handler's context has a deadline by default, so a hung handler cannot hold its item forever")
	assert.LessOrEqual(t, left, webhooks.DefaultHandlerTimeout)
	assert.Greater(t, left, webhooks.DefaultHandlerTimeout-time.Minute, "the deadline is the default timeout from the handler's start")
}

func TestProcessorHungHandlerSettlesAsARetry(t *testing.T) {
	t.Parallel()
	store, _, p := newTestProcessor(t, func(ctx context.Context, _ webhooks.Event) error {
		<-ctx.Done() // hung: it only returns because its context ends
		return ctx.Err()
	}, webhooks.WithHandlerTimeout(time.Millisecond))
	key := enqueue(t, store, "e", "x", base)
	runProcessor(t, p)
	p.Wake()
	require.Equal(t, "retried", store.next(t).Op)
	it := get(t, store, key)
	assert.Equal(t, webhooks.StatePending, it.State, "the hung handler's item is free again, due for a retry")
	assert.Equal(t, webhooks.FailureTimeout, it.LastError.Class)
	assert.Contains(t, it.LastError.Message, "did not finish within 1ms")
}

func TestProcessorHandlerTimeoutZeroMeansNone(t *testing.T) {
	t.Parallel()
	hasDeadline := make(chan bool, 1)
	store, _, p := newTestProcessor(t, func(ctx context.Context, _ webhooks.Event) error {
		_, ok := ctx.Deadline()
		hasDeadline <- ok
		return nil
	}, webhooks.WithHandlerTimeout(0))
	enqueue(t, store, "e", "x", base)
	runProcessor(t, p)
	p.Wake()
	assert.False(t, <-hasDeadline, "WithHandlerTimeout(0) removes the bound")
}

func TestProcessorDefaultGraceLetsHandlersFinish(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}), make(chan struct{})
	shutdownSeen := make(chan struct{})
	ws := &fakeWakeSource{listening: make(chan struct{}), stopped: shutdownSeen}
	var handlerErr error
	store, _, p := newTestProcessor(t, func(ctx context.Context, _ webhooks.Event) error {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
		}
		handlerErr = ctx.Err()
		return handlerErr
	}, webhooks.WithWakeSource(ws)) // no WithShutdownGrace: the default
	key := enqueue(t, store, "e", "x", base)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	<-ws.listening
	p.Wake()
	<-started
	cancel()       // SIGTERM
	<-shutdownSeen // the wake source's Listen returned: Run saw the shutdown
	close(release)
	require.NoError(t, <-done)
	assert.NoError(t, handlerErr, "the handler running at shutdown was cancelled at once; by default it has a grace period")
	require.Equal(t, "succeeded", store.next(t).Op)
	assert.Equal(t, webhooks.StateSucceeded, get(t, store, key).State)
}

// explodeInHandler is the panicking function whose frame the attempt's
// error must name.
//
//go:noinline
func explodeInHandler(m map[string]int) { m["x"] = 1 }

func TestProcessorPanicRecordsABoundedStack(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	secret := strings.Repeat("payload-secret-", 400) // 6 KB of panic value
	store, _, p := newTestProcessor(t, func(_ context.Context, ev webhooks.Event) error {
		if ev.ID == "long" {
			panic(errors.New(secret))
		}
		explodeInHandler(nil) // assignment to entry in nil map
		return nil
	}, webhooks.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	key := enqueue(t, store, "e", "x", base)
	long := enqueue(t, store, "long", "x", base)
	runProcessor(t, p)
	p.Wake()
	require.Equal(t, "retried", store.next(t).Op)
	require.Equal(t, "retried", store.next(t).Op)

	it := get(t, store, key)
	require.NotNil(t, it.LastError)
	msg := it.LastError.Message
	assert.Equal(t, webhooks.FailurePanic, it.LastError.Class)
	assert.Contains(t, msg, "assignment to entry in nil map")
	assert.Contains(t, msg, "webhooks_test.explodeInHandler", "the attempt's error names the panicking function")
	assert.Contains(t, msg, "processor_defaults_test.go:", "and where it is")
	assert.NotContains(t, msg, "runtime/panic.go", "the runtime's own frames are left out")
	assert.NotContains(t, msg, "(*Processor).dispatch", "the processor's own frames are left out")
	assert.LessOrEqual(t, len(msg), 2048)
	require.Len(t, it.History, 1)
	assert.Equal(t, msg, it.History[0].Error, "the history keeps the stack too")

	it = get(t, store, long)
	msg = it.LastError.Message
	assert.LessOrEqual(t, len(msg), 2048, "a long panic value is cut")
	assert.Contains(t, msg, "processor_defaults_test.go:", "and still leaves room for the stack")
	logs.waitFor(t, "handler panicked")
}
