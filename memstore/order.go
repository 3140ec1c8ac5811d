package memstore

import (
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

// orderingKeys says whether the Inbox runs ordered jobs in key order
// (webhooks.FanOutSupport.OrderingKeys).
const orderingKeys = false

// keyID names an ordering key: a handler's jobs of one provider, tenant
// and Ordering.Key.
type keyID struct{}

// keyState is an ordering key's bookkeeping.
type keyState struct{}

// enterLocked makes the job e, new or replayed, pending and due at due.
func (s *Inbox) enterLocked(e *entry, now, due time.Time) {
	e.item.State = webhooks.StatePending
	e.item.NextAttemptAt = due
	e.item.UpdatedAt = now
	s.queue(e.item.Handler).update(e)
}

// leaveLocked is called when the job e has succeeded (applied: and was
// not skipped) or died, at now.
func (s *Inbox) leaveLocked(e *entry, now time.Time, applied bool) {}

// appliedLocked returns the applied version of e's ordering key.
func (s *Inbox) appliedLocked(e *entry) int64 { return 0 }

// resolveLocked is called before the job e is replayed or closed.
func (s *Inbox) resolveLocked(e *entry) {}

// forgetKeysLocked drops the bookkeeping of keys with nothing left to
// remember.
func (s *Inbox) forgetKeysLocked() {}
