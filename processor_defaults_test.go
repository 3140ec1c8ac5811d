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
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/webhookstest"
)

// The defaults a service runs with: a handler that hangs is stopped, a
// handler running at SIGTERM may finish, and a panic's attempt record says
// where it happened.

func TestProcessorBoundsHandlersByDefault(t *testing.T) {
	t.Parallel()
	type seen struct {
		deadline, at time.Time
		ok           bool
	}
	handler := make(chan seen, 1)
	store, _, p := newTestProcessor(t, func(ctx context.Context, _ webhooks.Event) error {
		d, ok := ctx.Deadline()
		handler <- seen{d, time.Now(), ok}
		return nil
	})
	enqueue(t, store, "e", "x", base)
	before := time.Now()
	runProcessor(t, p)
	p.Wake()
	h := <-handler
	require.True(t, h.ok, "a handler's context has a deadline by default, so a hung handler cannot hold its item forever")
	// The deadline is the default timeout from the dispatch, which began
	// after before and no later than the handler looked.
	assert.False(t, h.deadline.Before(before.Add(webhooks.DefaultHandlerTimeout)), "deadline %v, run from %v", h.deadline, before)
	assert.False(t, h.deadline.After(h.at.Add(webhooks.DefaultHandlerTimeout)), "deadline %v, seen at %v", h.deadline, h.at)
}

// deadlineStore records the deadline of each acquisition's context.
type deadlineStore struct {
	*memstore.Inbox
	acquired chan [2]time.Time // the deadline, and when Acquire saw it
}

func (d *deadlineStore) Acquire(ctx context.Context, req webhooks.AcquireRequest) ([]*webhooks.Lease, error) {
	dl, _ := ctx.Deadline()
	select {
	case d.acquired <- [2]time.Time{dl, time.Now()}:
	default:
	}
	return d.Inbox.Acquire(ctx, req)
}

// TestProcessorStoreTimeoutDefault: the Processor's store calls are
// bounded by DefaultProcessorStoreTimeout, or by
// WithProcessorStoreTimeout's, counted from the call.
func TestProcessorStoreTimeoutDefault(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		opts []webhooks.ProcessorOption
		want time.Duration
	}{
		{nil, webhooks.DefaultProcessorStoreTimeout},
		{[]webhooks.ProcessorOption{webhooks.WithProcessorStoreTimeout(time.Hour)}, time.Hour},
	} {
		store := &deadlineStore{Inbox: memstore.NewInbox(), acquired: make(chan [2]time.Time, 1)}
		p, err := webhooks.NewProcessor(store, webhooks.NewMux(), append(c.opts, webhooks.WithLogger(discard))...)
		require.NoError(t, err)
		before := time.Now()
		runProcessor(t, p)
		got := <-store.acquired
		dl, at := got[0], got[1]
		assert.False(t, dl.Before(before.Add(c.want)), "deadline %v, want %v after %v", dl, c.want, before)
		assert.False(t, dl.After(at.Add(c.want)), "deadline %v, want %v after at most %v", dl, c.want, at)
	}
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

// TestProcessorDefaultGraceLetsHandlersFinish: the grace, timed on the
// Processor's clock, is DefaultShutdownGrace: a handler running at
// SIGTERM is not cancelled while it lasts, and is once it is over.
func TestProcessorDefaultGraceLetsHandlersFinish(t *testing.T) {
	t.Parallel()
	for _, past := range []bool{false, true} {
		clock := webhookstest.NewClock(base)
		started, release := make(chan struct{}), make(chan struct{})
		var handlerErr error
		store, _, p := newTestProcessor(t, func(ctx context.Context, _ webhooks.Event) error {
			close(started)
			<-release
			handlerErr = ctx.Err()
			return handlerErr
		}, webhooks.WithClock(clock)) // no WithShutdownGrace: the default
		key := enqueue(t, store, "e", "x", base)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }()
		p.Wake()
		<-started
		cancel() // SIGTERM
		select {
		case <-clock.Timers(1):
		case <-time.After(10 * time.Second):
			t.Fatal("no grace timer was set within 10s of the shutdown")
		}
		if past {
			clock.Advance(webhooks.DefaultShutdownGrace)
		} else {
			clock.Advance(webhooks.DefaultShutdownGrace - time.Nanosecond)
		}
		close(release)
		require.NoError(t, <-done)
		if !past {
			assert.NoError(t, handlerErr, "the handler running at shutdown was cancelled within the default grace")
			require.Equal(t, "succeeded", store.next(t).Op)
			assert.Equal(t, webhooks.StateSucceeded, get(t, store, key).State)
			continue
		}
		assert.ErrorIs(t, handlerErr, context.Canceled, "the grace is over: the handler is cancelled")
		require.Equal(t, "abandoned", store.next(t).Op)
		assert.Equal(t, webhooks.StatePending, get(t, store, key).State, "given back, its attempt not counted")
	}
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
