package pgstore

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// Wake-ups for Enqueue and Replay are sent by the store's notifier,
// outside the statement that stores the item, at most one every
// notifyInterval, each bounded by notifyTimeout.
const (
	notifyInterval = 5 * time.Millisecond
	notifyTimeout  = 5 * time.Second
)

// notifier coalesces wake-ups. Enqueue used to send NOTIFY inside its own
// statement; PostgreSQL then holds its cluster-wide notification-queue lock
// from the commit's pre-commit step until the commit record is flushed, so
// every notifying commit in the cluster waited for the one before it to
// reach disk, and a full notification queue failed the enqueue itself.
// Instead, a successful enqueue calls signal, and the notifier sends one
// pg_notify of its own, in its own statement: at once when it is idle, then
// at most once per interval while signals keep coming. A NOTIFY-only
// transaction writes no WAL before its commit, so it never waits for a
// flush and holds that lock only briefly.
//
// There is no goroutine to stop: a sender goroutine starts on demand, at
// most one at a time, and ends once an interval passes with no signal.
type notifier struct {
	pending atomic.Bool // a wake-up was asked for and not yet sent
	running atomic.Bool // a sender goroutine is active

	interval time.Duration
	send     func(ctx context.Context) error
	logger   *slog.Logger
	channel  string
}

func newNotifier(send func(ctx context.Context) error, logger *slog.Logger, channel string) *notifier {
	return &notifier{interval: notifyInterval, send: send, logger: logger, channel: channel}
}

// signal asks for a wake-up after everything the caller has committed so
// far. It never blocks.
func (n *notifier) signal() {
	n.pending.Store(true)
	if n.running.CompareAndSwap(false, true) {
		go n.run()
	}
}

// run sends wake-ups while they are asked for. Each send follows the Swap
// that consumed the request, and a request follows its caller's commit, so
// the notification reaches listeners after the item is visible.
func (n *notifier) run() {
	for {
		for n.pending.Swap(false) {
			n.sendOne()
			time.Sleep(n.interval)
		}
		n.running.Store(false)
		// A signal that came after the Swap above and before the Store saw
		// a running sender and started none: serve it, unless a new sender
		// has already taken over.
		if !n.pending.Load() || !n.running.CompareAndSwap(false, true) {
			return
		}
	}
}

func (n *notifier) sendOne() {
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	if err := n.send(ctx); err != nil {
		// A missed wake-up only delays work until the next poll.
		n.logger.WarnContext(ctx, "pgstore: sending a wake-up notification failed; processors will find the work by polling",
			"channel", n.channel, "error", err)
	}
}
