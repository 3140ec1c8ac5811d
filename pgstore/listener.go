package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
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

// After LISTEN the listener notifies itself, through the store's pool, and
// waits listenerCheckTimeout for that notification: behind a pooler that
// hands its connection to others between transactions (PgBouncer's
// transaction pooling) none arrives, so it says so and stops. Its own
// notifications carry checkPayloadPrefix and wake no listener.
const (
	listenerCheckTimeout = 2 * time.Second
	checkPayloadPrefix   = "pgstore-listener-check:"
)

// errNotificationsLost is a session's report that the listener's own
// notification did not come back.
var errNotificationsLost = errors.New("pgstore: listener: its own notification did not arrive")

// Listener wakes a Processor when work is enqueued, through PostgreSQL's
// LISTEN/NOTIFY. It implements webhooks.WakeSource. Get one from
// (*Store).Listener.
type Listener struct {
	store     *Store
	pingEvery time.Duration // listenerPingInterval; shorter in tests
	checkWait time.Duration // listenerCheckTimeout; shorter in tests
	pid       atomic.Uint32 // backend PID of the current connection, 0 when none
}

var _ webhooks.WakeSource = (*Listener)(nil)

// Listener returns a webhooks.WakeSource listening on NotifyChannel, which
// the store notifies when Enqueue, EnqueueTx (unless WithoutNotifyInTx) or
// Replay make an item due, and when a host calls Notify.
func (s *Store) Listener() *Listener {
	return &Listener{store: s, pingEvery: listenerPingInterval, checkWait: listenerCheckTimeout}
}

// Listen implements webhooks.WakeSource. It takes a connection out of the
// store's pool for as long as it runs (the pool may open one more to replace
// it), LISTENs on the store's channel and calls wake once per notification.
// It also calls wake once it listens after every (re)connection, because
// notifications sent while it was not listening are lost. wake runs on
// Listen's goroutine and should return quickly.
//
// When the connection fails Listen logs it (see WithLogger) and reconnects
// after a backoff from ListenerMinBackoff doubling to ListenerMaxBackoff; it
// pings an idle connection every 30 seconds to notice a dead one.
//
// On each connection Listen first sends a notification to itself through
// the store's pool, and listens (and wakes) once it arrives. If it has not
// arrived after 2 seconds and a ping answered, the connection is not a
// session of its own (the store's pool goes through a pooler in
// transaction mode, such as PgBouncer's transaction pooling, where LISTEN
// does not outlive its statement): Listen logs one warning, stops
// listening and waits for ctx, calling wake no more, and the Processor
// finds work by polling (webhooks.WithPollInterval). To be woken there,
// give the Listener a store of its own on a pool straight to PostgreSQL,
// in the same schema. (A ping that fails is a lost connection, as above.)
//
// It returns nil when ctx is done, and an error only for a nil wake.
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
		if errors.Is(err, errNotificationsLost) {
			l.store.logger.WarnContext(ctx, "pgstore: notifications do not reach the listener (is it behind a transaction-pooling PgBouncer?); "+
				"processors fall back to polling every WithPollInterval; give the Listener a store on a direct connection — see docs/postgresql.md",
				"channel", l.store.channel, "waited", l.checkWait)
			<-ctx.Done()
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
	if err := l.checkDelivery(ctx, conn, wake); err != nil {
		if errors.Is(err, errNotificationsLost) {
			// Best effort: the server connection that ran LISTEN is
			// someone else's now; this reaches it when the pooler hands
			// out the one it got back last, as PgBouncer does.
			uctx, cancel := context.WithTimeout(ctx, time.Second)
			_, _ = conn.Exec(uctx, "UNLISTEN *")
			cancel()
		}
		return false, err
	}
	wake()
	for {
		wctx, cancel := context.WithTimeout(ctx, l.pingEvery)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			if !strings.HasPrefix(n.Payload, checkPayloadPrefix) {
				wake()
			}
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

// checkDelivery sends a notification with a payload of its own on the
// store's channel, through the store's pool, and waits l.checkWait for it
// on conn. Other notifications that arrive meanwhile wake as usual. It
// returns errNotificationsLost when its own does not arrive though conn
// answers a ping.
func (l *Listener) checkDelivery(ctx context.Context, conn *pgx.Conn, wake func()) error {
	var b [16]byte
	_, _ = rand.Read(b[:])
	payload := checkPayloadPrefix + hex.EncodeToString(b[:])
	sctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	_, err := l.store.pool.Exec(sctx, "SELECT pg_notify($1, $2)", l.store.channel, payload)
	cancel()
	if err != nil {
		return fmt.Errorf("pgstore: listener: sending itself a notification, to check that notifications arrive: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, l.checkWait)
	defer cancel()
	pinged := false
	for {
		n, err := conn.WaitForNotification(wctx)
		switch {
		case err == nil && n.Payload == payload:
			return nil
		case err == nil:
			if !strings.HasPrefix(n.Payload, checkPayloadPrefix) {
				wake()
			}
		case ctx.Err() != nil:
			return ctx.Err()
		case conn.IsClosed():
			return fmt.Errorf("pgstore: listener: waiting for its own notification: %w", err)
		case pinged:
			return errNotificationsLost
		default:
			// A stalled connection is a failure to reconnect from, not a
			// pooler: ping it. A session that answers has sent every
			// notification due to it before the answer, and pgx keeps
			// them, so the next wait (its deadline passed) returns them at
			// once, if there were any.
			pctx, cancel := context.WithTimeout(ctx, listenerPingTimeout)
			err := conn.Ping(pctx)
			cancel()
			if err != nil {
				return fmt.Errorf("pgstore: listener: ping while waiting for its own notification: %w", err)
			}
			pinged = true
		}
	}
}
