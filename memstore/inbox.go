package memstore

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/cursor"
)

// Inbox is an in-memory webhooks.InboxStore. It is safe for concurrent use;
// it is not durable (see the package documentation).
//
// Acquisition takes O(log n) time per item through a heap of the items by
// due time; DeadLetters sorts the matching dead items on every call.
type Inbox struct {
	mu    sync.Mutex
	items map[webhooks.InboxKey]*entry
	due   dueQueue                     // pending and leased entries
	dead  map[webhooks.InboxKey]*entry // dead entries
	seq   uint64                       // last entry.seq handed out
}

// entry is one stored item with its lease token. Its item is owned by the
// Inbox and only leaves it as a copy.
type entry struct {
	item  webhooks.Item
	token string // current lease token; "" unless leased
	// settledBy is the token of the lease that settled the item, so a
	// settlement tried again under it reports ErrAlreadySettled; "" while
	// leased, since a new lease makes every earlier token stale.
	settledBy string
	seq       uint64 // enqueue order, breaks ties between equal due times
	index     int    // position in Inbox.due, -1 when not queued
}

var _ webhooks.InboxStore = (*Inbox)(nil)

// NewInbox returns an empty in-memory inbox.
func NewInbox() *Inbox {
	return &Inbox{
		items: make(map[webhooks.InboxKey]*entry),
		dead:  make(map[webhooks.InboxKey]*entry),
	}
}

// Enqueue implements webhooks.Enqueuer. The envelope's payload and headers
// are copied.
func (s *Inbox) Enqueue(ctx context.Context, env webhooks.Envelope) (webhooks.EnqueueResult, error) {
	if err := ctxErr(ctx); err != nil {
		return webhooks.EnqueueResult{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	if e, ok := s.items[env.Key]; ok {
		if e.item.PayloadSHA256 != env.PayloadSHA256 {
			return webhooks.EnqueueResult{Outcome: webhooks.EnqueueConflict, State: e.item.State}, nil
		}
		e.item.DuplicateCount++
		e.item.LastSeenAt = env.ReceivedAt
		return webhooks.EnqueueResult{Outcome: webhooks.EnqueueDuplicate, State: e.item.State}, nil
	}

	s.seq++
	e := &entry{
		seq:   s.seq,
		index: -1,
		item: webhooks.Item{
			Key:           env.Key,
			EventType:     env.EventType,
			Payload:       bytes.Clone(env.Payload),
			Headers:       env.Headers.Clone(),
			PayloadSHA256: env.PayloadSHA256,
			KeyID:         env.KeyID,
			State:         webhooks.StatePending,
			NextAttemptAt: env.ReceivedAt,
			LastSeenAt:    env.ReceivedAt,
			OccurredAt:    env.OccurredAt,
			ReceivedAt:    env.ReceivedAt,
			UpdatedAt:     env.ReceivedAt,
		},
	}
	s.items[env.Key] = e
	s.due.update(e)
	return webhooks.EnqueueResult{Outcome: webhooks.EnqueueNew, State: webhooks.StatePending}, nil
}

// Acquire implements webhooks.LeaseStore: it leases up to req.Max due
// items, the longest due first, each with its own token.
func (s *Inbox) Acquire(ctx context.Context, req webhooks.AcquireRequest) ([]*webhooks.Lease, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if err := checkLeaseDuration("Acquire", req.LeaseDuration); err != nil {
		return nil, err
	}
	if req.Max <= 0 {
		return nil, fmt.Errorf("memstore: Acquire: Max is %d; it must be at least 1", req.Max)
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	var leases []*webhooks.Lease
	for len(leases) < req.Max {
		// A leased entry is due again only at now+leaseDuration, after now,
		// so the loop never takes one entry twice.
		e := s.due.peekDue(req.Now)
		if e == nil {
			break
		}
		l, err := s.leaseLocked(e, req.Now, req.LeaseDuration)
		if err != nil {
			return leases, err
		}
		leases = append(leases, l)
	}
	return leases, nil
}

// leaseLocked leases the due entry e with a fresh token.
func (s *Inbox) leaseLocked(e *entry, now time.Time, d time.Duration) (*webhooks.Lease, error) {
	token, err := uuid.NewRandom()
	if err != nil {
		return nil, fmt.Errorf("memstore: generating a lease token failed (the system's random source is broken): %w", err)
	}
	expires := now.Add(d)
	reclaimed := e.item.State == webhooks.StateLeased
	e.token = token.String()
	e.settledBy = ""
	e.item.State = webhooks.StateLeased
	e.item.Attempts++
	e.item.LeaseExpiresAt = expires
	e.item.NextAttemptAt = expires
	e.item.UpdatedAt = now
	s.due.update(e)
	return &webhooks.Lease{
		Token:     e.token,
		ExpiresAt: expires,
		Attempt:   e.item.Attempts,
		Reclaimed: reclaimed,
		Item:      cloneItem(e.item),
	}, nil
}

// Settle implements webhooks.LeaseStore.
func (s *Inbox) Settle(ctx context.Context, st webhooks.Settlement) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	e, err := s.currentLocked("Settle", st.Lease)
	if err != nil {
		return err
	}
	now := st.Now
	switch st.Outcome {
	case webhooks.AttemptSucceeded:
		e.item.State = webhooks.StateSucceeded
		e.item.CompletedAt = now
		e.item.NextAttemptAt = time.Time{}
		s.due.remove(e)
	case webhooks.AttemptRetried, webhooks.AttemptDeadLettered:
		e.item.LastError = &webhooks.ErrorRecord{Class: st.Failure.Class, Message: st.Failure.Message, At: now}
		if st.Outcome == webhooks.AttemptDeadLettered {
			e.item.State = webhooks.StateDead
			e.item.DeadAt = now
			e.item.NextAttemptAt = time.Time{}
			s.due.remove(e)
			s.dead[e.item.Key] = e
		} else {
			e.item.State = webhooks.StatePending
			e.item.NextAttemptAt = st.RetryAt
			s.due.update(e)
		}
	case webhooks.AttemptAbandoned:
		e.item.State = webhooks.StatePending
		e.item.Attempts--
		e.item.NextAttemptAt = now
		s.due.update(e)
	default:
		return fmt.Errorf("memstore: Settle %s: unknown outcome %q; use AttemptSucceeded, AttemptRetried, AttemptDeadLettered or AttemptAbandoned", e.item.Key, st.Outcome)
	}
	e.settledBy = e.token
	e.token = ""
	e.item.LeaseExpiresAt = time.Time{}
	e.item.UpdatedAt = now
	return nil
}

// ExtendLease implements webhooks.LeaseStore.
func (s *Inbox) ExtendLease(ctx context.Context, req webhooks.ExtendRequest) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if err := checkLeaseDuration("ExtendLease", req.Duration); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	e, err := s.currentLocked("ExtendLease", req.Lease)
	if err != nil {
		return err
	}
	expires := req.Now.Add(req.Duration)
	e.item.LeaseExpiresAt = expires
	e.item.NextAttemptAt = expires
	e.item.UpdatedAt = req.Now
	s.due.update(e)
	req.Lease.ExpiresAt = expires
	return nil
}

// currentLocked returns the entry lease refers to if lease holds its current
// token, or an error wrapping webhooks.ErrAlreadySettled or
// webhooks.ErrLeaseLost.
func (s *Inbox) currentLocked(op string, lease *webhooks.Lease) (*entry, error) {
	if lease == nil {
		return nil, fmt.Errorf("memstore: %s: the lease is nil; pass a lease returned by Acquire", op)
	}
	e := s.items[lease.Item.Key]
	switch {
	case e != nil && e.item.State == webhooks.StateLeased && e.token == lease.Token:
		return e, nil
	case e != nil && lease.Token != "" && e.settledBy == lease.Token:
		return nil, fmt.Errorf("memstore: %s %s: %w", op, lease.Item.Key, webhooks.ErrAlreadySettled)
	}
	return nil, fmt.Errorf("memstore: %s %s: %w", op, lease.Item.Key, webhooks.ErrLeaseLost)
}

// Get implements webhooks.InboxStore. The item is a copy.
func (s *Inbox) Get(ctx context.Context, key webhooks.InboxKey) (webhooks.Item, error) {
	if err := ctxErr(ctx); err != nil {
		return webhooks.Item{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	e := s.items[key]
	if e == nil {
		return webhooks.Item{}, fmt.Errorf("memstore: Get %s: %w", key, webhooks.ErrNotFound)
	}
	return cloneItem(e.item), nil
}

// ReplayDeadLetter implements webhooks.OperatorStore.
func (s *Inbox) ReplayDeadLetter(ctx context.Context, req webhooks.ReplayRequest) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	e := s.items[req.Key]
	switch {
	case e == nil:
		return fmt.Errorf("memstore: ReplayDeadLetter %s: %w", req.Key, webhooks.ErrNotFound)
	case e.item.State != webhooks.StateDead:
		return fmt.Errorf("memstore: ReplayDeadLetter %s is %s: %w", req.Key, e.item.State, webhooks.ErrNotDead)
	}
	delete(s.dead, req.Key)
	e.item.State = webhooks.StatePending
	e.item.NextAttemptAt = req.Now
	e.item.DeadAt = time.Time{}
	e.item.UpdatedAt = req.Now
	if req.ResetAttempts {
		e.item.Attempts = 0
	}
	s.due.update(e)
	return nil
}

// DeadLetters implements webhooks.OperatorStore. It sorts the matching dead
// items on every call, which is fine for the numbers memstore is meant for.
func (s *Inbox) DeadLetters(ctx context.Context, q webhooks.DeadLetterQuery) (webhooks.DeadLetterPage, error) {
	if err := ctxErr(ctx); err != nil {
		return webhooks.DeadLetterPage{}, err
	}
	if q.Limit <= 0 {
		return webhooks.DeadLetterPage{}, fmt.Errorf("memstore: DeadLetters: Limit is %d; it must be at least 1", q.Limit)
	}
	var after *cursor.DeadLetter
	if q.After != "" {
		c, err := cursor.Parse(q.After)
		if err != nil {
			return webhooks.DeadLetterPage{}, fmt.Errorf("memstore: DeadLetters: %w", err)
		}
		after = &c
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	var matches []*entry
	for _, e := range s.dead {
		it := &e.item
		if (q.Provider != "" && it.Key.Provider != q.Provider) ||
			(q.Tenant != "" && it.Key.Tenant != q.Tenant) ||
			(q.EventType != "" && it.EventType != q.EventType) {
			continue
		}
		if after != nil && !after.Before(it.DeadAt, it.Key) {
			continue
		}
		matches = append(matches, e)
	}
	slices.SortFunc(matches, func(a, b *entry) int { return newestFirst(&a.item, &b.item) })

	var page webhooks.DeadLetterPage
	for _, e := range matches[:min(q.Limit, len(matches))] {
		page.Items = append(page.Items, cloneItem(e.item))
	}
	if len(matches) > q.Limit {
		last := page.Items[q.Limit-1]
		page.Next = cursor.DeadLetter{DeadAt: last.DeadAt, Key: last.Key}.String()
	}
	return page, nil
}

// newestFirst orders dead items by DeadAt, then key, both descending.
func newestFirst(a, b *webhooks.Item) int {
	return cmp.Or(b.DeadAt.Compare(a.DeadAt), b.Key.Compare(a.Key))
}

// cloneItem returns a deep copy of it.
func cloneItem(it webhooks.Item) webhooks.Item {
	it.Payload = bytes.Clone(it.Payload)
	it.Headers = it.Headers.Clone()
	if it.LastError != nil {
		rec := *it.LastError
		it.LastError = &rec
	}
	return it
}

func checkLeaseDuration(op string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("memstore: %s lease duration is %v; it must be positive", op, d)
	}
	return nil
}

var errNilContext = errors.New("memstore: nil context; pass context.Background() or a request context")

// ctxErr returns ctx.Err(), or an error for a nil ctx.
func ctxErr(ctx context.Context) error {
	if ctx == nil {
		return errNilContext
	}
	return ctx.Err()
}
