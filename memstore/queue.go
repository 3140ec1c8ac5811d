package memstore

import (
	"container/heap"
	"time"
)

// entryHeap is a min-heap of entries in the order O gives. Each entry
// keeps its index in the heap, so it can be fixed or removed in place; an
// entry is in one heap at most: the due queue while pending or leased,
// its key's waiting queue while waiting.
type entryHeap[O interface{ less(a, b *entry) bool }] []*entry

func (q entryHeap[O]) Len() int { return len(q) }

func (q entryHeap[O]) Less(i, j int) bool {
	var o O
	return o.less(q[i], q[j])
}

func (q entryHeap[O]) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index = i
	q[j].index = j
}

func (q *entryHeap[O]) Push(x any) {
	e := x.(*entry)
	e.index = len(*q)
	*q = append(*q, e)
}

func (q *entryHeap[O]) Pop() any {
	old := *q
	n := len(old) - 1
	e := old[n]
	old[n] = nil
	e.index = -1
	*q = old[:n]
	return e
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

// dueQueue is a min-heap of one handler's pending and leased entries by
// due time. Succeeded, dead and waiting entries are not in it.
type dueQueue struct{ entryHeap[byDue] }

var _ heap.Interface = (*dueQueue)(nil)

// peekDue returns the entry due the longest if it is due at now, else nil.
func (q dueQueue) peekDue(now time.Time) *entry {
	if len(q.entryHeap) == 0 || q.entryHeap[0].item.NextAttemptAt.After(now) {
		return nil
	}
	return q.entryHeap[0]
}

// update restores heap order after e's due time changed, adding e if it is
// not queued.
func (q *dueQueue) update(e *entry) {
	if e.index < 0 {
		heap.Push(q, e)
		return
	}
	heap.Fix(q, e.index)
}

// remove takes e out of the queue if it is in it.
func (q *dueQueue) remove(e *entry) {
	if e.index >= 0 {
		heap.Remove(q, e.index)
	}
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
