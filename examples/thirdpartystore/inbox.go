// Package thirdpartystore is a webhooks.InboxStore (with the operators'
// ops.Store) written outside the webhooks module, to show a store author
// running the public conformance suite (package storetest) from a module of
// their own.
//
// Its Inbox adds one thing to an existing store, memstore's: it counts
// settlements by outcome. Everything else is delegated.
package thirdpartystore

import (
	"context"
	"sync"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/ops"
)

// Inbox is a webhooks.InboxStore and ops.Store that delegates to a
// memstore.Inbox and counts the settlements that went through, by outcome.
// It is safe for concurrent use.
type Inbox struct {
	inner *memstore.Inbox

	mu      sync.Mutex
	settled map[webhooks.AttemptOutcome]int
}

var (
	_ webhooks.InboxStore = (*Inbox)(nil)
	_ ops.Store           = (*Inbox)(nil)
)

// New returns an empty Inbox.
func New() *Inbox {
	return &Inbox{inner: memstore.NewInbox(), settled: make(map[webhooks.AttemptOutcome]int)}
}

// Settled returns how many settlements with outcome o went through.
func (s *Inbox) Settled(o webhooks.AttemptOutcome) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settled[o]
}

// Enqueue implements webhooks.Enqueuer.
func (s *Inbox) Enqueue(ctx context.Context, env webhooks.Envelope) (webhooks.EnqueueResult, error) {
	return s.inner.Enqueue(ctx, env)
}

// Acquire implements webhooks.LeaseStore. memstore keeps acquisition IDs
// (webhooks.AcquireRequest.ID), so a request asked for again by its ID
// returns the leases still held under it, as the suite requires.
func (s *Inbox) Acquire(ctx context.Context, req webhooks.AcquireRequest) ([]*webhooks.Lease, error) {
	return s.inner.Acquire(ctx, req)
}

// Settle implements webhooks.LeaseStore, counting the settlements that
// went through.
func (s *Inbox) Settle(ctx context.Context, st webhooks.Settlement) error {
	if err := s.inner.Settle(ctx, st); err != nil {
		return err
	}
	s.mu.Lock()
	s.settled[st.Outcome]++
	s.mu.Unlock()
	return nil
}

// ExtendLease implements webhooks.LeaseStore.
func (s *Inbox) ExtendLease(ctx context.Context, req webhooks.ExtendRequest) error {
	return s.inner.ExtendLease(ctx, req)
}

// Get implements ops.Store.
func (s *Inbox) Get(ctx context.Context, key webhooks.InboxKey) (ops.Detail, error) {
	return s.inner.Get(ctx, key)
}

// List implements ops.Store.
func (s *Inbox) List(ctx context.Context, q ops.Query) (ops.Page, error) {
	return s.inner.List(ctx, q)
}

// Replay implements ops.Store.
func (s *Inbox) Replay(ctx context.Context, req ops.ReplayRequest) (ops.ReplayResult, error) {
	return s.inner.Replay(ctx, req)
}

// CloseDeadLetter implements ops.Store.
func (s *Inbox) CloseDeadLetter(ctx context.Context, req ops.CloseRequest) error {
	return s.inner.CloseDeadLetter(ctx, req)
}

// Stats implements ops.Store.
func (s *Inbox) Stats(ctx context.Context, req ops.StatsRequest) (ops.Stats, error) {
	return s.inner.Stats(ctx, req)
}
