package memstore

import (
	"container/heap"
	"slices"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

// orderingKeys says whether the Inbox runs ordered jobs in key order
// (webhooks.FanOutSupport.OrderingKeys).
const orderingKeys = true

// keyID names an ordering key: a handler's jobs of one provider, tenant
// and Ordering.Key.
type keyID struct{ handler, provider, tenant, key string }

// keyState is an ordering key's bookkeeping: its head (the one job of the
// key that is pending or leased), the jobs waiting behind it, the stale
// guard's applied version, and the dead letters the key's later jobs run
// past.
type keyState struct {
	head    *entry
	waiting waitQueue
	applied int64 // the newest Ordering.Version that succeeded, not skipped; 0 none
	// dead are the key's dead jobs that are neither replayed nor closed:
	// a job that becomes the head runs past those before it in key order
	// (Item.Overtook names the nearest, see overtaken).
	dead      []*entry
	updatedAt time.Time
}

// keyOf returns the ordering key of e, and false when e runs in none: it
// is not ordered, or its event has no key.
func keyOf(e *entry) (keyID, bool) {
	if !e.item.Ordered || e.item.Ordering.Key == "" {
		return keyID{}, false
	}
	return keyID{e.item.Handler, e.item.Key.Provider, e.item.Key.Tenant, e.item.Ordering.Key}, true
}

// enterLocked makes the job e, new or replayed, pending and due at due;
// or, if it runs in an ordering key that has a head, waiting behind it,
// unless e arrived (a new event's job) and demotes that head
// (demoteLocked).
func (s *Inbox) enterLocked(e *entry, now, due time.Time, arrived bool) {
	e.item.UpdatedAt = now
	id, keyed := keyOf(e)
	if !keyed {
		e.item.State = webhooks.StatePending
		e.item.NextAttemptAt = due
		s.dueLocked(e)
		return
	}
	ks := s.keys[id]
	if ks == nil {
		ks = &keyState{}
		s.keys[id] = ks
	}
	ks.updatedAt = now
	if arrived && demotes(e, ks.head) {
		s.demoteLocked(ks, now)
	}
	if ks.head != nil {
		e.item.State = webhooks.StateWaiting
		e.item.NextAttemptAt = time.Time{}
		heap.Push(&ks.waiting, e)
		return
	}
	s.headLocked(ks, e, due)
}

// demotes reports whether the arriving job e takes the place of its
// key's head: e has a version (Ordering.Version above 0), older than the
// head's, and the head has not started: it is pending and was never
// leased, started or held. A head that has started keeps its key; the
// stale guard (Lease.Applied) tells the older job, which runs after it.
func demotes(e, head *entry) bool {
	return head != nil && e.item.Ordering.Version > 0 && head.item.Ordering.Version > e.item.Ordering.Version &&
		head.item.State == webhooks.StatePending && !head.leased && head.attempt == 0
}

// demoteLocked puts the head of ks back among the key's waiting jobs at
// now, leaving the key without a head; the head's version and arrival
// keep its place in line.
func (s *Inbox) demoteLocked(ks *keyState, now time.Time) {
	h := ks.head
	s.queue(h.item.Handler).remove(h)
	delete(s.parked, h)
	h.item.State = webhooks.StateWaiting
	h.item.NextAttemptAt = time.Time{}
	h.item.Overtook = ""
	h.item.UpdatedAt = now
	heap.Push(&ks.waiting, h)
	ks.head = nil
}

// headLocked makes e the head of its key ks, pending and due at due,
// flagged when it runs past a dead letter of the key.
func (s *Inbox) headLocked(ks *keyState, e *entry, due time.Time) {
	ks.head = e
	e.item.State = webhooks.StatePending
	e.item.NextAttemptAt = due
	e.item.Overtook = ""
	if d := overtaken(ks, e); d != nil {
		e.item.Overtook = d.item.Key.EventID
	}
	s.dueLocked(e)
}

// overtaken returns the dead letter of ks that the job e, becoming the
// head, runs past: the one nearest before e in key order (byVersion), nil
// when none is before it.
func overtaken(ks *keyState, e *entry) *entry {
	var (
		order   byVersion
		nearest *entry
	)
	for _, d := range ks.dead {
		if order.less(d, e) && (nearest == nil || order.less(nearest, d)) {
			nearest = d
		}
	}
	return nearest
}

// leaveLocked hands the key of the job e, which succeeded (applied: and
// was not skipped) or died at now, to the next waiting job, by (version,
// arrival); a succeeded job raises the key's applied version, a dead one
// is remembered until it is replayed or closed.
func (s *Inbox) leaveLocked(e *entry, now time.Time, applied bool) {
	id, keyed := keyOf(e)
	ks := s.keys[id]
	if !keyed || ks == nil || ks.head != e {
		return
	}
	if applied {
		ks.applied = max(ks.applied, e.item.Ordering.Version)
	}
	if e.item.State == webhooks.StateDead {
		ks.dead = append(ks.dead, e)
	}
	ks.head = nil
	ks.updatedAt = now
	if ks.waiting.Len() > 0 {
		next := heap.Pop(&ks.waiting).(*entry)
		next.item.UpdatedAt = now
		s.headLocked(ks, next, now)
	}
}

// resolveLocked is called before the job e, finished, is replayed or
// closed: a dead letter of an ordering key is no longer run past.
func (s *Inbox) resolveLocked(e *entry) {
	id, keyed := keyOf(e)
	ks := s.keys[id]
	if !keyed || ks == nil || e.item.State != webhooks.StateDead {
		return
	}
	if i := slices.Index(ks.dead, e); i >= 0 {
		ks.dead = slices.Delete(ks.dead, i, i+1)
	}
}

// appliedLocked returns the applied version of e's ordering key (the
// stale guard), 0 when it runs in none.
func (s *Inbox) appliedLocked(e *entry) int64 {
	if id, keyed := keyOf(e); keyed && s.keys[id] != nil {
		return s.keys[id].applied
	}
	return 0
}

// forgetKeysLocked drops the bookkeeping of the keys that have no
// unfinished job and no dead letter and did not change since before: the
// stale guard forgets a key after the retention period of its jobs.
func (s *Inbox) forgetKeysLocked(before time.Time) {
	for id, ks := range s.keys {
		if ks.head == nil && ks.waiting.Len() == 0 && len(ks.dead) == 0 && ks.updatedAt.Before(before) {
			delete(s.keys, id)
		}
	}
}

// byVersion orders a key's waiting jobs by (Ordering.Version, arrival).
type byVersion struct{}

func (byVersion) less(a, b *entry) bool {
	if a.item.Ordering.Version != b.item.Ordering.Version {
		return a.item.Ordering.Version < b.item.Ordering.Version
	}
	return a.seq < b.seq
}

func (byVersion) at(e *entry) *int { return &e.index }

// waitQueue is a min-heap of a key's waiting jobs, the next to run first.
type waitQueue = entryHeap[byVersion]

var _ heap.Interface = (*waitQueue)(nil)
