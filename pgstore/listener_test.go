package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/ops"
	"github.com/hookinbox/webhooks/pgstore"
)

// startListener runs s.Listener().Listen until the test ends and returns
// its wake-ups.
func startListener(t *testing.T, s *pgstore.Store) <-chan struct{} {
	t.Helper()
	wakes := make(chan struct{}, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.Listener().Listen(ctx, func() { wakes <- struct{}{} })
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err, "Listen returns nil when its context ends")
		case <-time.After(10 * time.Second):
			t.Error("Listen did not return within 10s of its context ending")
		}
	})
	return wakes
}

func awaitWake(t *testing.T, wakes <-chan struct{}, why string) {
	t.Helper()
	select {
	case <-wakes:
	case <-time.After(15 * time.Second):
		t.Fatalf("no wake-up within 15s: %s", why)
	}
}

func drain(wakes <-chan struct{}) {
	for {
		select {
		case <-wakes:
		default:
			return
		}
	}
}

// listenerPID returns the backend PID of the connection listening on s's
// channel, waiting for it to appear.
func listenerPID(t *testing.T, s *pgstore.Store, admin *pgx.Conn, not int32) int32 {
	t.Helper()
	listen := "LISTEN " + pgx.Identifier{s.NotifyChannel()}.Sanitize()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		var pid int32
		err := admin.QueryRow(t.Context(),
			`SELECT pid FROM pg_stat_activity WHERE query = $1 AND pid <> $2`, listen, not).Scan(&pid)
		if err == nil {
			return pid
		}
		require.ErrorIs(t, err, pgx.ErrNoRows)
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no backend is listening on %s", s.NotifyChannel())
	return 0
}

func TestListenerWakesOnEnqueueAndReconnects(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	admin, err := pgx.Connect(ctx, pgtest.DSN(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close(context.Background()) })

	wakes := startListener(t, s)
	awaitWake(t, wakes, "Listen wakes once it listens")
	drain(wakes)

	mustEnqueueNew(t, s, testEnvelope(testKey("e1"), "{}", baseTime))
	awaitWake(t, wakes, "enqueue of a new item")

	// Kill the listener's backend: it must reconnect, wake (notifications
	// may have been missed) and deliver again.
	pid := listenerPID(t, s, admin, 0)
	var killed bool
	require.NoError(t, admin.QueryRow(ctx, "SELECT pg_terminate_backend($1)", pid).Scan(&killed))
	require.True(t, killed)
	newPID := listenerPID(t, s, admin, pid)
	require.NotEqual(t, pid, newPID)
	awaitWake(t, wakes, "Listen wakes after reconnecting")
	drain(wakes)

	mustEnqueueNew(t, s, testEnvelope(testKey("e2"), "{}", baseTime))
	awaitWake(t, wakes, "enqueue after the reconnection")

	// A replay of a dead item makes it due: a wake-up too.
	l := acquireOne(t, s, baseTime, time.Minute)
	require.NotNil(t, l)
	require.NoError(t, s.Settle(ctx, deadLettered(l, webhooks.Failure{Class: webhooks.FailurePermanent, Message: "x"}, baseTime)))
	drain(wakes)
	_, err = s.Replay(ctx, ops.ReplayRequest{Key: l.Key(), Actor: "a", Reason: "r", Now: baseTime})
	require.NoError(t, err)
	awaitWake(t, wakes, "replay of a dead letter")
}

func TestListenerStopsWithContext(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	require.Error(t, s.Listener().Listen(t.Context(), nil), "nil wake")

	ctx, cancel := context.WithCancel(t.Context())
	woke := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() { done <- s.Listener().Listen(ctx, func() { woke <- struct{}{} }) }()
	awaitWake(t, woke, "first connection")
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Listen did not return after cancel")
	}

	// An already cancelled context returns at once.
	require.NoError(t, s.Listener().Listen(ctx, func() {}))
}
