package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	webhooks "github.com/hookinbox/webhooks"
)

// Listener reconnection backoff: Listen waits ListenerMinBackoff after a
// connection failure, doubling the wait on each failure in a row up to
// ListenerMaxBackoff.
const (
	ListenerMinBackoff = 100 * time.Millisecond
	ListenerMaxBackoff = 10 * time.Second
)

// An idle listening connection is pinged every listenerPingInterval, so a
// silently dead one is noticed.
const (
	listenerPingInterval = 30 * time.Second
	listenerPingTimeout  = 5 * time.Second
)

// Listener wakes a Processor when work is enqueued, through PostgreSQL's
// LISTEN/NOTIFY. It implements webhooks.WakeSource. Get one from
// (*Store).Listener.
type Listener struct {
	store     *Store
	pingEvery time.Duration // listenerPingInterval; shorter in tests
	pid       atomic.Uint32 // backend PID of the current connection, 0 when none
}

var _ webhooks.WakeSource = (*Listener)(nil)

// Listener returns a webhooks.WakeSource listening on NotifyChannel, which
// the store notifies when Enqueue, EnqueueTx (unless WithoutNotifyInTx) or
// Replay make an item due, and when a host calls Notify.
func (s *Store) Listener() *Listener {
	return &Listener{store: s, pingEvery: listenerPingInterval}
}

// Listen implements webhooks.WakeSource. It takes a connection out of the
// store's pool for as long as it runs (the pool may open one more to replace
// it), LISTENs on the store's channel and calls wake once per notification.
// It also calls wake after every (re)connection, because notifications sent
// while it was not listening are lost. wake runs on Listen's goroutine and
// should return quickly.
//
// When the connection fails Listen logs it (see WithLogger) and reconnects
// after a backoff from ListenerMinBackoff doubling to ListenerMaxBackoff; it
// pings an idle connection every 30 seconds to notice a dead one. It returns
// nil when ctx is done, and an error only for a nil wake.
func (l *Listener) Listen(ctx context.Context, wake func()) error {
	if wake == nil {
		return errors.New("pgstore: Listen needs a wake function; got nil")
	}
	backoff := ListenerMinBackoff
	for {
		connected, err := l.session(ctx, wake)
		if ctx.Err() != nil {
			return nil
		}
		if connected {
			backoff = ListenerMinBackoff
		}
		l.store.logger.WarnContext(ctx, "pgstore: listener lost its connection; reconnecting",
			"channel", l.store.channel, "listened", connected, "retry_in", backoff, "error", err)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		backoff = min(2*backoff, ListenerMaxBackoff)
	}
}

// session listens on one connection until it fails or ctx is done. It
// reports whether it got as far as listening.
func (l *Listener) session(ctx context.Context, wake func()) (connected bool, err error) {
	pc, err := l.store.pool.Acquire(ctx)
	if err != nil {
		return false, fmt.Errorf("pgstore: listener: acquiring a connection: %w", err)
	}
	// The connection leaves the pool for good: its LISTEN state must not
	// reach other users, and it is closed when the session ends.
	conn := pc.Hijack()
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{l.store.channel}.Sanitize()); err != nil {
		return false, fmt.Errorf("pgstore: listener: LISTEN: %w", err)
	}
	l.pid.Store(conn.PgConn().PID())
	defer l.pid.Store(0)
	wake()
	for {
		wctx, cancel := context.WithTimeout(ctx, l.pingEvery)
		_, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			wake()
		case ctx.Err() != nil:
			return true, ctx.Err()
		case errors.Is(err, context.DeadlineExceeded) && !conn.IsClosed():
			pctx, cancel := context.WithTimeout(ctx, listenerPingTimeout)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				return true, fmt.Errorf("pgstore: listener: ping: %w", err)
			}
		default:
			return true, fmt.Errorf("pgstore: listener: waiting for notifications: %w", err)
		}
	}
}
