package memstore

import (
	"context"
	"slices"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

// DeleteSucceeded removes succeeded jobs completed before olderThan, with
// their history, and returns how many it removed, so a long-running
// development server does not grow without bound. An event is removed
// with its last job; a delivery of a removed event's ID is then new
// again. It takes time proportional to the number of jobs, under the
// store's lock.
//
// It also forgets the ordering keys (see webhooks.FanOutSupport) with no
// job left unfinished or dead that changed last before olderThan, so the
// stale guard (Lease.Applied) remembers a key for the retention period.
//
// It has pgstore's shape without the batch size: a memstore has no
// transactions to keep short.
func (s *Inbox) DeleteSucceeded(ctx context.Context, olderThan time.Time) (int64, error) {
	return s.deleteWhere(ctx, olderThan, func(it *webhooks.Item) bool {
		return it.State == webhooks.StateSucceeded && it.CompletedAt.Before(olderThan)
	})
}

// DeleteClosed removes jobs an operator closed before olderThan (see
// ops.Store.CloseDeadLetter), with their history and audit trail, and returns how
// many it removed, like DeleteSucceeded. Closed items are kept until it
// removes them, for a retention period of their own.
func (s *Inbox) DeleteClosed(ctx context.Context, olderThan time.Time) (int64, error) {
	return s.deleteWhere(ctx, olderThan, func(it *webhooks.Item) bool {
		return it.State == webhooks.StateClosed && it.ClosedAt.Before(olderThan)
	})
}

func (s *Inbox) deleteWhere(ctx context.Context, olderThan time.Time, old func(*webhooks.Item) bool) (int64, error) {
	if err := ctxErr(ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for k, e := range s.jobs {
		if !old(&e.item) {
			continue
		}
		delete(s.jobs, k)
		delete(s.closed, k)
		ev := e.ev
		ev.jobs = slices.DeleteFunc(ev.jobs, func(j *entry) bool { return j == e })
		if len(ev.jobs) == 0 {
			delete(s.events, k.InboxKey)
		}
		n++
	}
	s.forgetKeysLocked(olderThan)
	return n, nil
}

// Len returns the number of stored events, whatever the states of their
// jobs.
func (s *Inbox) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.events)
}
