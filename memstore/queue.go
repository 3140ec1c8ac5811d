package memstore

import (
	"container/heap"
	"slices"
	"strings"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

// entryHeap is a min-heap of entries in the order O gives. Each entry
// keeps its index in the heap, at the field O names, so it can be fixed
// or removed in place: an entry is in one heap of index at most (its
// tenant's in the due queue while pending or leased, its key's waiting
// queue while waiting), and, of a priority above 0, in its priority's
// heap of the due queue (levelIndex) while pending or leased, and in the
// due queue's heap of leases (leaseIndex) while leased.
type entryHeap[O interface {
	less(a, b *entry) bool
	at(e *entry) *int
}] []*entry

func (q entryHeap[O]) Len() int { return len(q) }

func (q entryHeap[O]) Less(i, j int) bool {
	var o O
	return o.less(q[i], q[j])
}

func (q entryHeap[O]) Swap(i, j int) {
	var o O
	q[i], q[j] = q[j], q[i]
	*o.at(q[i]) = i
	*o.at(q[j]) = j
}

func (q *entryHeap[O]) Push(x any) {
	var o O
	e := x.(*entry)
	*o.at(e) = len(*q)
	*q = append(*q, e)
}

func (q *entryHeap[O]) Pop() any {
	var o O
	old := *q
	n := len(old) - 1
	e := old[n]
	old[n] = nil
	*o.at(e) = -1
	*q = old[:n]
	return e
}

// peekDue returns q's first entry if it is due at now, else nil.
func (q entryHeap[O]) peekDue(now time.Time) *entry {
	if len(q) == 0 || q[0].item.NextAttemptAt.After(now) {
		return nil
	}
	return q[0]
}

// byDue orders entries by due time (Item.NextAttemptAt, which equals
// LeaseExpiresAt while leased), ties broken by enqueue order.
type byDue struct{}

func (byDue) less(a, b *entry) bool {
	if !a.item.NextAttemptAt.Equal(b.item.NextAttemptAt) {
		return a.item.NextAttemptAt.Before(b.item.NextAttemptAt)
	}
	return a.seq < b.seq
}

func (byDue) at(e *entry) *int { return &e.index }

// byExpiry orders leased entries by lease expiry, ties broken by enqueue
// order; its heap keeps their index in leaseIndex.
type byExpiry struct{}

func (byExpiry) less(a, b *entry) bool {
	if !a.item.LeaseExpiresAt.Equal(b.item.LeaseExpiresAt) {
		return a.item.LeaseExpiresAt.Before(b.item.LeaseExpiresAt)
	}
	return a.seq < b.seq
}

func (byExpiry) at(e *entry) *int { return &e.leaseIndex }

// levelByDue is byDue for the heaps of one priority, which keep their
// index in levelIndex.
type levelByDue struct{ byDue }

func (levelByDue) at(e *entry) *int { return &e.levelIndex }

// tenantID names a tenant: an event's provider and tenant.
type tenantID struct{ provider, tenant string }

// tenantOf returns the tenant of e's event.
func tenantOf(e *entry) tenantID { return tenantID{e.item.Key.Provider, e.item.Key.Tenant} }

// compare orders tenants by their bytes, provider first.
func (a tenantID) compare(b tenantID) int {
	if c := strings.Compare(a.provider, b.provider); c != 0 {
		return c
	}
	return strings.Compare(a.tenant, b.tenant)
}

// tenantQueue is a min-heap of one tenant's pending and leased entries of
// a handler by due time, with its place in the handler's heap of tenants.
type tenantQueue struct {
	id    tenantID
	jobs  entryHeap[byDue]
	index int // in dueQueue.heads, -1 when not in it
}

// headHeap is a min-heap of tenant queues by their longest-due entry.
type headHeap []*tenantQueue

func (h headHeap) Len() int           { return len(h) }
func (h headHeap) Less(i, j int) bool { return byDue{}.less(h[i].jobs[0], h[j].jobs[0]) }
func (h headHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *headHeap) Push(x any) {
	t := x.(*tenantQueue)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *headHeap) Pop() any {
	old := *h
	n := len(old) - 1
	t := old[n]
	old[n] = nil
	t.index = -1
	*h = old[:n]
	return t
}

// dueQueue is one handler's pending and leased entries by due time, kept
// by tenant: a min-heap of each tenant's entries, a min-heap of the
// tenants by their longest-due entry (so the longest due of all is the
// first tenant's first), and the tenants in byte order, for Fair
// acquisitions, with where the last one ended; and the entries of each
// priority above 0 in a min-heap of their own, for acquisitions with
// Priorities. Succeeded, dead and waiting entries are not in it.
type dueQueue struct {
	tenants map[tenantID]*tenantQueue // those with entries
	heads   headHeap
	sorted  []tenantID // the keys of tenants, in order
	cursor  tenantID   // the tenant the last Fair acquisition visited last
	levels  map[int]*entryHeap[levelByDue]
	// leases are the leased entries by expiry, so that the running ones
	// are counted without going through the pending ones (running).
	leases entryHeap[byExpiry]
}

var (
	_ heap.Interface = (*entryHeap[byDue])(nil)
	_ heap.Interface = (*entryHeap[levelByDue])(nil)
	_ heap.Interface = (*entryHeap[byExpiry])(nil)
	_ heap.Interface = (*headHeap)(nil)
)

// peekDue returns the entry due the longest if it is due at now, else nil.
func (q *dueQueue) peekDue(now time.Time) *entry {
	if len(q.heads) == 0 {
		return nil
	}
	return q.heads[0].peekDue(now)
}

// peekDue returns t's entry due the longest if it is due at now, else nil.
func (t *tenantQueue) peekDue(now time.Time) *entry { return t.jobs.peekDue(now) }

// level returns the heap of q's entries of priority p (above 0), nil when
// it has none.
func (q *dueQueue) level(p int) *entryHeap[levelByDue] { return q.levels[p] }

// update restores heap order after e's due time changed, adding e if it is
// not queued.
func (q *dueQueue) update(e *entry) {
	id := tenantOf(e)
	t := q.tenants[id]
	if t == nil {
		if q.tenants == nil {
			q.tenants = make(map[tenantID]*tenantQueue)
		}
		t = &tenantQueue{id: id, index: -1}
		q.tenants[id] = t
		i, _ := slices.BinarySearchFunc(q.sorted, id, tenantID.compare)
		q.sorted = slices.Insert(q.sorted, i, id)
	}
	if e.index < 0 {
		heap.Push(&t.jobs, e)
	} else {
		heap.Fix(&t.jobs, e.index)
	}
	if t.index < 0 {
		heap.Push(&q.heads, t)
	} else {
		heap.Fix(&q.heads, t.index)
	}
	switch {
	case e.item.State == webhooks.StateLeased && e.leaseIndex < 0:
		heap.Push(&q.leases, e)
	case e.item.State == webhooks.StateLeased:
		heap.Fix(&q.leases, e.leaseIndex)
	case e.leaseIndex >= 0:
		heap.Remove(&q.leases, e.leaseIndex)
	}
	if p := e.item.Priority; p > 0 {
		l := q.levels[p]
		if l == nil {
			if q.levels == nil {
				q.levels = make(map[int]*entryHeap[levelByDue])
			}
			l = new(entryHeap[levelByDue])
			q.levels[p] = l
		}
		if e.levelIndex < 0 {
			heap.Push(l, e)
		} else {
			heap.Fix(l, e.levelIndex)
		}
	}
}

// remove takes e out of the queue if it is in it.
func (q *dueQueue) remove(e *entry) {
	if e.leaseIndex >= 0 {
		heap.Remove(&q.leases, e.leaseIndex)
	}
	if e.index < 0 {
		return
	}
	if l := q.levels[e.item.Priority]; e.levelIndex >= 0 {
		heap.Remove(l, e.levelIndex)
		if len(*l) == 0 {
			delete(q.levels, e.item.Priority)
		}
	}
	id := tenantOf(e)
	t := q.tenants[id]
	heap.Remove(&t.jobs, e.index)
	if len(t.jobs) > 0 {
		heap.Fix(&q.heads, t.index)
		return
	}
	heap.Remove(&q.heads, t.index)
	delete(q.tenants, id)
	if i, ok := slices.BinarySearchFunc(q.sorted, id, tenantID.compare); ok {
		q.sorted = slices.Delete(q.sorted, i, i+1)
	}
}

// running counts the entries leased and unexpired at now: the leases but
// those expired, which are the heap's entries at or before now, a subtree
// at its root (expired leases are few: they are taken over).
func (q *dueQueue) running(now time.Time) int {
	expired := 0
	var visit func(i int)
	visit = func(i int) {
		if i < len(q.leases) && !q.leases[i].item.LeaseExpiresAt.After(now) {
			expired++
			visit(2*i + 1)
			visit(2*i + 2)
		}
	}
	visit(0)
	return len(q.leases) - expired
}

// fairTenants returns the tenants a Fair acquisition of up to max leases
// (what its Limits and pause allow of its Max) at now takes its turns
// among (see webhooks.FlowSupport.Fair): from the
// tenant after q.cursor, coming round to the start, those with a due
// entry, until max are found, every tenant was visited, or visits were;
// and it moves q.cursor to the last tenant visited.
func (q *dueQueue) fairTenants(now time.Time, max, visits int) []*tenantQueue {
	var found []*tenantQueue
	n := len(q.sorted)
	from, ok := slices.BinarySearchFunc(q.sorted, q.cursor, tenantID.compare)
	if ok {
		from++
	}
	for i := 0; i < n && i < visits && len(found) < max; i++ {
		t := q.tenants[q.sorted[(from+i)%n]]
		q.cursor = t.id
		if t.peekDue(now) != nil {
			found = append(found, t)
		}
	}
	return found
}

// expiryQueue is a min-heap of replay registrations by expiry. It may hold
// stale entries for keys that were registered again after expiring; eviction
// checks the live registration before deleting it.
type expiryQueue []expiry

type expiry struct {
	key replayKey
	at  time.Time
}

var _ heap.Interface = (*expiryQueue)(nil)

func (q expiryQueue) Len() int           { return len(q) }
func (q expiryQueue) Less(i, j int) bool { return q[i].at.Before(q[j].at) }
func (q expiryQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *expiryQueue) Push(x any)        { *q = append(*q, x.(expiry)) }

func (q *expiryQueue) Pop() any {
	old := *q
	n := len(old) - 1
	x := old[n]
	old[n] = expiry{}
	*q = old[:n]
	return x
}
