package pgstore

import (
	"bytes"
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks/internal/testing/pgtest"
)

// pingSpy is a connection that reports each ping (pgconn's "-- ping"
// query) it sends.
type pingSpy struct {
	net.Conn
	pings chan<- struct{}
}

func (c pingSpy) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if bytes.Contains(p[:n], []byte("-- ping\x00")) {
		select {
		case c.pings <- struct{}{}:
		default:
		}
	}
	return n, err
}

// TestListenerPingKeepsConnection: waiting times out every ping interval;
// the timeout must not break the connection, so the listener keeps its
// backend, does not wake spuriously, and still delivers afterwards. The
// test waits for the pings themselves, seen on the wire, rather than for a
// time in which some should have happened.
func TestListenerPingKeepsConnection(t *testing.T) {
	t.Parallel()
	pings := make(chan struct{}, 100)
	spied := pgtest.NewPoolWith(t, 2, func(cfg *pgxpool.Config) {
		dial := cfg.ConnConfig.DialFunc
		cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return pingSpy{Conn: c, pings: pings}, nil
		}
		// The pool pings idle connections it hands out; only the
		// listener's own pings are counted.
		cfg.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
	})
	s := newMigratedStore(t, spied)
	plain := pgtest.NewPool(t, 2)
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
			select { // never block the listener, whatever it does
			case woke <- struct{}{}:
			default:
			}
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
	for len(pings) > 0 { // the pool's own, such as NewPoolWith's first
		<-pings
	}

	// Each wait times out and pings on the same connection. A wake-up for
	// a timeout would come before its ping; and once the fourth ping is
	// sent, the third was answered.
	for i := range 4 {
		select {
		case <-pings:
		case <-time.After(10 * time.Second):
			t.Fatalf("ping %d was not sent within 10s (ping interval %v)", i+1, l.pingEvery)
		}
	}
	assert.Equal(t, int64(1), wakes.Load(), "timeouts and pings must not wake")
	assert.Equal(t, pid, l.pid.Load(), "the listener kept its connection")
	var query string
	require.NoError(t, plain.QueryRow(ctx, `SELECT query FROM pg_stat_activity WHERE pid = $1`, int32(pid)).Scan(&query))
	assert.Equal(t, "-- ping", query, "the listener pinged its connection")

	_, err := plain.Exec(ctx, "SELECT pg_notify($1, '')", s.channel)
	require.NoError(t, err)
	select {
	case <-woke:
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up for a notification after the pings")
	}
	assert.Equal(t, int64(2), wakes.Load())
	assert.Equal(t, pid, l.pid.Load(), "still the same connection")
}

// TestListenerCheckAfterPing: the listener's own notification comes back
// before the answer to a ping on its session, so with no time at all to
// wait for it the check still passes on a direct connection: the wait
// ends at once, the ping is answered, and the notification is there. (A
// listener behind transaction pooling has it nowhere: see
// TestListenerBehindTransactionPooling.)
func TestListenerCheckAfterPing(t *testing.T) {
	t.Parallel()
	s := newMigratedStore(t, pgtest.NewPool(t, 2))
	l := s.Listener()
	l.checkWait = time.Nanosecond
	woke := make(chan struct{}, 10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- l.Listen(ctx, func() {
			select {
			case woke <- struct{}{}:
			default:
			}
		})
	}()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	select {
	case <-woke:
	case <-time.After(10 * time.Second):
		t.Fatal("the check did not pass within 10s: it took the unanswered wait for a pooler")
	}
}
