package memstore

import (
	"context"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

// DeleteSucceeded removes succeeded items completed before olderThan and
// returns how many it removed, so a long-running development server does not
// grow without bound. A delivery of a removed event's ID is then new again.
// It takes time proportional to the number of items, under the store's lock.
func (s *Inbox) DeleteSucceeded(ctx context.Context, olderThan time.Time) (int, error) {
	if err := ctxErr(ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, e := range s.items {
		if e.item.State == webhooks.StateSucceeded && e.item.CompletedAt.Before(olderThan) {
			delete(s.items, k)
			n++
		}
	}
	return n, nil
}

// Len returns the number of stored items, in any state.
func (s *Inbox) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.items)
}
