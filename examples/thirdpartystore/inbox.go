// Package thirdpartystore is a webhooks.InboxStore written outside the
// webhooks module, against its public contract only, to show a store
// author what the pipeline asks of a store and how to run the public
// conformance suite (package storetest) from a module of their own.
//
// Its Inbox keeps items in memory and implements the pipeline only:
// Enqueue, Acquire, Settle and ExtendLease. It has none of the optional
// capabilities (ops.Store for operators, webhooks.BatchSettler,
// webhooks.LeaseStarter, webhooks.AcquisitionRepeater), so the suite
// skips their cases. It finds due items by looking at every item, which
// is what makes it short, not fast; a store for production keeps them
// durable and indexed by due time.
package thirdpartystore

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"sync"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

// Inbox is an in-memory webhooks.InboxStore. It is safe for concurrent
// use; it is not durable.
type Inbox struct {
	mu    sync.Mutex
	items map[webhooks.InboxKey]*item
}

// item is a stored item and its lease.
type item struct {
	webhooks.Item
	token     string // the current lease's token; "" unless leased
	settledBy string // the token that settled the item, until it is leased again
}

var _ webhooks.InboxStore = (*Inbox)(nil)

// New returns an empty Inbox.
func New() *Inbox {
	return &Inbox{items: make(map[webhooks.InboxKey]*item)}
}

// Enqueue implements webhooks.Enqueuer.
func (s *Inbox) Enqueue(ctx context.Context, env webhooks.Envelope) (webhooks.EnqueueResult, error) {
	if err := ctx.Err(); err != nil {
		return webhooks.EnqueueResult{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if it, ok := s.items[env.Key]; ok {
		if it.PayloadSHA256 != env.PayloadSHA256 {
			return webhooks.EnqueueResult{Outcome: webhooks.EnqueueConflict, State: it.State}, nil
		}
		it.DuplicateCount++
		it.LastSeenAt = env.ReceivedAt
		res := webhooks.EnqueueResult{Outcome: webhooks.EnqueueDuplicate, State: it.State}
		if env.ReplayIfDead && it.State == webhooks.StateDead {
			it.State, it.NextAttemptAt, it.DeadAt, it.UpdatedAt = webhooks.StatePending, env.ReceivedAt, time.Time{}, env.ReceivedAt
			res.State, res.Replayed = it.State, true
		}
		return res, nil
	}
	s.items[env.Key] = &item{Item: webhooks.Item{
		Key:           env.Key,
		EventType:     env.EventType,
		Payload:       bytes.Clone(env.Payload), // the caller reuses env's buffers
		Headers:       env.Headers.Clone(),
		PayloadSHA256: env.PayloadSHA256,
		KeyID:         env.KeyID,
		APIVersion:    env.APIVersion,
		TraceLink:     env.TraceLink,
		State:         webhooks.StatePending,
		NextAttemptAt: env.ReceivedAt,
		LastSeenAt:    env.ReceivedAt,
		OccurredAt:    env.OccurredAt,
		ReceivedAt:    env.ReceivedAt,
		UpdatedAt:     env.ReceivedAt,
	}}
	return webhooks.EnqueueResult{Outcome: webhooks.EnqueueNew, State: webhooks.StatePending}, nil
}

// Acquire implements webhooks.LeaseStore. Items due at the same time are
// leased in key order. It ignores req.ID (it is no AcquisitionRepeater).
func (s *Inbox) Acquire(ctx context.Context, req webhooks.AcquireRequest) ([]*webhooks.Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := req.Check(); err != nil {
		return nil, fmt.Errorf("thirdpartystore: Acquire: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var due []*item
	for _, it := range s.items {
		// A leased item is due when its lease expired: NextAttemptAt is
		// its expiry.
		if (it.State == webhooks.StatePending || it.State == webhooks.StateLeased) && !it.NextAttemptAt.After(req.Now) {
			due = append(due, it)
		}
	}
	slices.SortFunc(due, func(a, b *item) int { return cmp.Or(a.NextAttemptAt.Compare(b.NextAttemptAt), a.Key.Compare(b.Key)) })
	var leases []*webhooks.Lease
	for _, it := range due[:min(len(due), req.Max)] {
		reclaimed := it.State == webhooks.StateLeased // its lease expired unsettled
		it.token, it.settledBy = rand.Text(), ""
		it.State = webhooks.StateLeased
		it.Attempts++
		it.LeaseExpiresAt = req.Now.Add(req.LeaseDuration)
		it.NextAttemptAt = it.LeaseExpiresAt
		it.UpdatedAt = req.Now
		leases = append(leases, &webhooks.Lease{Token: it.token, ExpiresAt: it.LeaseExpiresAt, Attempt: it.Attempts, Reclaimed: reclaimed, Item: it.clone()})
	}
	return leases, nil
}

// Settle implements webhooks.LeaseStore.
func (s *Inbox) Settle(ctx context.Context, st webhooks.Settlement) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := st.Check(); err != nil {
		return fmt.Errorf("thirdpartystore: Settle: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it, err := s.current("Settle", st.Lease)
	if err != nil {
		return err
	}
	failure := &webhooks.ErrorRecord{Class: st.Failure.Class, Message: st.Failure.Message, At: st.Now}
	switch st.Outcome {
	case webhooks.AttemptSucceeded:
		it.State, it.CompletedAt, it.NextAttemptAt, it.LastError = webhooks.StateSucceeded, st.Now, time.Time{}, nil
	case webhooks.AttemptRetried:
		it.State, it.NextAttemptAt, it.LastError = webhooks.StatePending, st.RetryAt, failure
	case webhooks.AttemptDeadLettered:
		it.State, it.DeadAt, it.NextAttemptAt, it.LastError = webhooks.StateDead, st.Now, time.Time{}, failure
	case webhooks.AttemptAbandoned: // given back: the attempt is not counted
		it.State, it.NextAttemptAt = webhooks.StatePending, st.Now
		it.Attempts--
	}
	it.settledBy, it.token = it.token, ""
	it.LeaseExpiresAt, it.UpdatedAt = time.Time{}, st.Now
	return nil
}

// ExtendLease implements webhooks.LeaseStore.
func (s *Inbox) ExtendLease(ctx context.Context, req webhooks.ExtendRequest) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := req.Check(); err != nil {
		return fmt.Errorf("thirdpartystore: ExtendLease: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it, err := s.current("ExtendLease", req.Lease)
	if err != nil {
		return err
	}
	it.LeaseExpiresAt = req.Now.Add(req.Duration)
	it.NextAttemptAt, it.UpdatedAt = it.LeaseExpiresAt, req.Now
	return nil
}

// current returns the item lease holds, fenced by its token: an error
// wrapping ErrAlreadySettled when that token settled it, or ErrLeaseLost
// when it is not the item's current token. A lease that expired but that
// nobody took over is still current.
func (s *Inbox) current(op string, lease *webhooks.Lease) (*item, error) {
	it := s.items[lease.Key()]
	switch {
	case it != nil && it.State == webhooks.StateLeased && it.token == lease.Token:
		return it, nil
	case it != nil && it.settledBy != "" && it.settledBy == lease.Token:
		return nil, fmt.Errorf("thirdpartystore: %s %s: %w", op, lease.Key(), webhooks.ErrAlreadySettled)
	}
	return nil, fmt.Errorf("thirdpartystore: %s %s: %w", op, lease.Key(), webhooks.ErrLeaseLost)
}

// clone returns a copy of the item that shares nothing with it.
func (it *item) clone() webhooks.Item {
	c := it.Item
	c.Payload, c.Headers = bytes.Clone(c.Payload), c.Headers.Clone()
	if c.LastError != nil {
		e := *c.LastError
		c.LastError = &e
	}
	return c
}
