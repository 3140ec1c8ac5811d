package pgstore

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks/pgstore/internal/pgtest"
)

// TestListenerPingKeepsConnection: waiting times out every ping interval;
// the timeout must not break the connection, so the listener keeps its
// backend, does not wake spuriously, and still delivers afterwards.
func TestListenerPingKeepsConnection(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 2)
	s := newMigratedStore(t, pool)
	ctx := t.Context()

	l := s.Listener()
	l.pingEvery = 20 * time.Millisecond
	var wakes atomic.Int64
	woke := make(chan struct{}, 10)
	lctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- l.Listen(lctx, func() {
			wakes.Add(1)
			woke <- struct{}{}
		})
	}()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	select {
	case <-woke:
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up after connecting")
	}

	pid := l.pid.Load()
	require.NotZero(t, pid)

	// Let several ping intervals pass: each one times out the wait and
	// pings on the same connection.
	time.Sleep(15 * l.pingEvery)
	assert.Equal(t, int64(1), wakes.Load(), "timeouts and pings must not wake")
	assert.Equal(t, pid, l.pid.Load(), "the listener kept its connection")
	var query string
	require.NoError(t, pool.QueryRow(ctx, `SELECT query FROM pg_stat_activity WHERE pid = $1`, int32(pid)).Scan(&query))
	assert.Equal(t, "-- ping", query, "the listener pinged its connection")

	_, err := pool.Exec(ctx, "SELECT pg_notify($1, '')", s.channel)
	require.NoError(t, err)
	select {
	case <-woke:
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up for a notification after the pings")
	}
	assert.Equal(t, int64(2), wakes.Load())
}
