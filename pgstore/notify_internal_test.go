package pgstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/pgstore/internal/pgtest"
)

// awaitIdle waits until n owes no notification and has no sender goroutine
// (in that order: a sender may briefly clear running with a request
// pending, and then carries on).
func awaitIdle(t *testing.T, n *notifier) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for n.pending.Load() || n.running.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the notifier's sender did not end")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestNotifierCoalesces: signals that arrive while a notification is being
// sent cost one more notification in all, and the sender ends afterwards.
func TestNotifierCoalesces(t *testing.T) {
	t.Parallel()
	var sends atomic.Int64
	first := make(chan struct{})
	gate := make(chan struct{})
	n := newNotifier(func(context.Context) error {
		if sends.Add(1) == 1 {
			close(first)
			<-gate
		}
		return nil
	}, slog.New(slog.DiscardHandler), "test")

	n.signal()
	<-first // the first signal is sent at once, without waiting
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				n.signal()
			}
		})
	}
	wg.Wait()
	close(gate)
	awaitIdle(t, n)
	assert.Equal(t, int64(2), sends.Load(), "1600 signals during a send cost one more notification")
	assert.False(t, n.pending.Load())

	// Idle again: the next signal starts a new sender.
	n.signal()
	awaitIdle(t, n)
	assert.Equal(t, int64(3), sends.Load())
}

// TestNotifierLosesNoSignal: whatever the interleaving, once the notifier is
// idle the last notification it sent started after every signal was made.
func TestNotifierLosesNoSignal(t *testing.T) {
	t.Parallel()
	var (
		signals  atomic.Int64 // signals made
		lastSeen atomic.Int64 // signals made when the latest send started
		failures atomic.Int64
	)
	n := newNotifier(func(context.Context) error {
		lastSeen.Store(signals.Load())
		if failures.Add(1)%3 == 0 {
			return context.DeadlineExceeded // failures are logged, never stop the notifier
		}
		return nil
	}, slog.New(slog.DiscardHandler), "test")
	n.interval = 50 * time.Microsecond
	for round := range 100 {
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 5 {
					signals.Add(1)
					n.signal()
					if (round+g+i)%3 == 0 {
						time.Sleep(time.Duration(i*20) * time.Microsecond)
					}
				}
			})
		}
		wg.Wait()
		awaitIdle(t, n)
		require.Equal(t, signals.Load(), lastSeen.Load(), "round %d: a signal was not followed by a notification", round)
		require.False(t, n.pending.Load(), "round %d", round)
	}
}

// syncBuffer is an io.Writer safe for concurrent use, for a test logger.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestEnqueueSucceedsWhenNotifyFails: the wake-up is a hint sent after the
// commit, so a failure to send it (such as a full notification queue) is
// logged and never fails the enqueue.
func TestEnqueueSucceedsWhenNotifyFails(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 2)
	var logs syncBuffer
	s := newMigratedStore(t, pool, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	sent := make(chan struct{}, 10)
	s.notifier.send = func(context.Context) error {
		sent <- struct{}{}
		return errors.New("ERROR: too many notifications in the NOTIFY queue (SQLSTATE 54000)")
	}

	env := webhooks.Envelope{
		Key:        webhooks.InboxKey{Provider: "acme", EventID: "e1"},
		EventType:  "x",
		Payload:    []byte("{}"),
		ReceivedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	env.PayloadSHA256 = sha256.Sum256(env.Payload)
	res, err := s.Enqueue(t.Context(), env)
	require.NoError(t, err)
	assert.Equal(t, webhooks.EnqueueNew, res.Outcome)
	select {
	case <-sent:
	case <-time.After(10 * time.Second):
		t.Fatal("no notification was attempted")
	}
	awaitIdle(t, s.notifier)
	assert.Contains(t, logs.String(), "too many notifications")

	res, err = s.Enqueue(t.Context(), env)
	require.NoError(t, err)
	assert.Equal(t, webhooks.EnqueueDuplicate, res.Outcome)
	// A wake-up is sent after Enqueue returns: wait until the notifier
	// has nothing in flight, so one asked for by the duplicate is seen.
	awaitIdle(t, s.notifier)
	assert.Empty(t, sent, "a duplicate asks for no wake-up")
}
