package pgstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/ops"
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

// listen LISTENs on channel on a connection of its own and returns the
// payloads received, in the order PostgreSQL delivers them.
func listen(t *testing.T, channel string) <-chan string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), pgtest.DSN(t))
	require.NoError(t, err)
	_, err = conn.Exec(t.Context(), "LISTEN "+pgx.Identifier{channel}.Sanitize())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan string, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				return
			}
			out <- n.Payload
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = conn.Close(context.Background())
	})
	return out
}

// TestEnqueueCommitsWithoutTheNotificationLock: a transaction that sends
// NOTIFY takes PostgreSQL's cluster-wide notification-queue lock when it
// commits and holds it until its commit record is flushed, so notifying
// commits in the whole cluster run one at a time; a transaction that sends
// none never takes it (PreCommit_Notify returns at once). Enqueue and
// Replay must therefore send no NOTIFY in their own transactions: the
// store's notifier sends the wake-up in a statement of its own.
//
// Watching pg_locks can miss a short hold. A listener cannot miss a
// notification, and it gets them in commit order: with the notifier
// silenced, a marker sent after a call returned is the next notification
// exactly when the call's transaction sent none. EnqueueTx, which notifies
// inside the host's transaction by default, is the control: its
// notification comes before the marker.
func TestEnqueueCommitsWithoutTheNotificationLock(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 3)
	s := newMigratedStore(t, pool)
	var asked atomic.Int64
	s.notifier.send = func(context.Context) error {
		asked.Add(1)
		return nil
	}
	note := listen(t, s.channel)
	ctx := t.Context()
	next := func() string {
		t.Helper()
		select {
		case p := <-note:
			return p
		case <-time.After(10 * time.Second):
			t.Fatal("no notification within 10s")
			return ""
		}
	}
	markers := 0
	// sentNothing fails unless the next notification is a marker sent now.
	sentNothing := func(what string) {
		t.Helper()
		markers++
		marker := fmt.Sprint("marker-", markers)
		_, err := pool.Exec(ctx, "SELECT pg_notify($1, $2)", s.channel, marker)
		require.NoError(t, err)
		require.Equal(t, marker, next(), "%s sent a notification in its own transaction", what)
	}
	env := func(id, payload string) webhooks.Envelope {
		e := webhooks.Envelope{Key: webhooks.InboxKey{Provider: "acme", EventID: id}, EventType: "x", Payload: []byte(payload),
			ReceivedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		e.PayloadSHA256 = sha256.Sum256(e.Payload)
		return e
	}

	// The control: EnqueueTx's notification, committed with the host's
	// transaction, comes before a marker sent afterwards.
	tx := pgtest.Begin(t, pool)
	res, err := s.EnqueueTx(ctx, tx, env("tx", "{}"))
	require.NoError(t, err)
	require.Equal(t, webhooks.EnqueueNew, res.Outcome)
	require.NoError(t, tx.Commit(ctx))
	_, err = pool.Exec(ctx, "SELECT pg_notify($1, 'marker-0')", s.channel)
	require.NoError(t, err)
	require.Equal(t, "", next(), "EnqueueTx notifies in the host's transaction")
	require.Equal(t, "marker-0", next())

	for _, c := range []struct {
		what    string
		payload string
		want    webhooks.EnqueueOutcome
	}{
		{"Enqueue of a new item", "{}", webhooks.EnqueueNew},
		{"Enqueue of a duplicate", "{}", webhooks.EnqueueDuplicate},
		{"Enqueue of a conflict", `{"other":1}`, webhooks.EnqueueConflict},
	} {
		res, err := s.Enqueue(ctx, env("e1", c.payload))
		require.NoError(t, err, c.what)
		require.Equal(t, c.want, res.Outcome, c.what)
		sentNothing(c.what)
	}
	awaitIdle(t, s.notifier)
	assert.Equal(t, int64(1), asked.Load(), "the new item asked the notifier for a wake-up; the duplicate and the conflict did not")

	// Replay of a dead letter makes it due: a wake-up, through the
	// notifier too.
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: now, LeaseDuration: time.Minute, Max: 10})
	require.NoError(t, err)
	require.NotEmpty(t, leases)
	for _, l := range leases {
		require.NoError(t, s.Settle(ctx, webhooks.Settlement{Lease: l, Outcome: webhooks.AttemptDeadLettered, Now: now,
			Failure: webhooks.Failure{Class: webhooks.FailurePermanent, Message: "x"}}))
	}
	sentNothing("Acquire and Settle")
	_, err = s.Replay(ctx, ops.ReplayRequest{Key: webhooks.InboxKey{Provider: "acme", EventID: "e1"}, Actor: "a", Reason: "r", Now: now})
	require.NoError(t, err)
	sentNothing("Replay")
	awaitIdle(t, s.notifier)
	assert.Equal(t, int64(2), asked.Load(), "the replay asked the notifier for a wake-up")
}
