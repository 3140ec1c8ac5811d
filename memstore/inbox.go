package memstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// Inbox is an in-memory webhooks.InboxStore and ops.Store. It is safe for
// concurrent use; it is not durable (see the package documentation).
//
// Acquisition takes O(log n) time per item through a heap of the items by
// due time. List and bulk Replay sort the matching dead (or closed) items
// on every call, and Stats visits every item: fine for the numbers memstore
// is meant for.
type Inbox struct {
	mu     sync.Mutex
	items  map[webhooks.InboxKey]*entry
	due    dueQueue                     // pending and leased entries
	dead   map[webhooks.InboxKey]*entry // dead entries
	closed map[webhooks.InboxKey]*entry // closed entries
	seq    uint64                       // last entry.seq handed out
	// byAcquisition maps an acquisition ID (AcquireRequest.ID) to the
	// entries leased under it, in the order they were leased, until each
	// is settled or leased again.
	byAcquisition map[string][]*entry
}

// entry is one stored item with its lease and its history. Its item is
// owned by the Inbox and only leaves it as a copy.
type entry struct {
	item  webhooks.Item
	token string // current lease token; "" unless leased
	// settledBy is the token of the lease that settled the item, so a
	// settlement tried again under it reports ErrAlreadySettled; "" while
	// leased, since a new lease makes every earlier token stale.
	settledBy string
	// acquisition is the ID of the acquisition that granted the current
	// lease, if it had one.
	acquisition string
	// unstarted is set while the current lease is held, its attempt not
	// started (webhooks.LeaseStarter).
	unstarted bool
	// reclaimed is the current lease's Lease.Reclaimed, which a lease
	// taking over an unstarted one inherits; once the lease is settled,
	// it stays set only if the lease was given back unstarted: its crash
	// is still to be judged. Any other settlement judged it.
	reclaimed bool
	seq       uint64 // enqueue order, breaks ties between equal due times
	index     int    // position in Inbox.due, -1 when not queued

	// The current (or last) started lease, as the attempt history
	// records it: its number, when it started and by whom.
	attempt         int // the last attempt number handed out
	leasedAt        time.Time
	worker, version string

	history    []attempt
	audit      []ops.Audit
	quarantine []ops.Delivery
	conflicts  int
}

// attempt is an entry of the history with the token of its lease, by
// which a refused settlement finds the attempt it belonged to.
type attempt struct {
	ops.Attempt
	token string
}

var (
	_ webhooks.InboxStore          = (*Inbox)(nil)
	_ webhooks.BatchSettler        = (*Inbox)(nil)
	_ webhooks.LeaseStarter        = (*Inbox)(nil)
	_ webhooks.AcquisitionRepeater = (*Inbox)(nil)
	_ ops.Store                    = (*Inbox)(nil)
)

// NewInbox returns an empty in-memory inbox.
func NewInbox() *Inbox {
	return &Inbox{
		items:         make(map[webhooks.InboxKey]*entry),
		dead:          make(map[webhooks.InboxKey]*entry),
		closed:        make(map[webhooks.InboxKey]*entry),
		byAcquisition: make(map[string][]*entry),
	}
}

// Enqueue implements webhooks.Enqueuer. It keeps the envelope's payload
// and headers as they are, for the item and for a quarantined delivery
// alike, as the contract allows; what the store hands out are copies.
func (s *Inbox) Enqueue(ctx context.Context, env webhooks.Envelope) (webhooks.EnqueueResult, error) {
	if err := ctxErr(ctx); err != nil {
		return webhooks.EnqueueResult{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	if e, ok := s.items[env.Key]; ok {
		if e.item.PayloadSHA256 != env.PayloadSHA256 {
			e.conflicts++
			if len(e.quarantine) < ops.QuarantineLimit {
				e.quarantine = append(e.quarantine, ops.Delivery{
					Payload:       env.Payload,
					Headers:       env.Headers,
					PayloadSHA256: env.PayloadSHA256,
					KeyID:         env.KeyID,
					ReceivedAt:    env.ReceivedAt,
				})
			}
			return webhooks.EnqueueResult{Outcome: webhooks.EnqueueConflict, State: e.item.State}, nil
		}
		e.item.DuplicateCount++
		e.item.LastSeenAt = env.ReceivedAt
		res := webhooks.EnqueueResult{Outcome: webhooks.EnqueueDuplicate, State: e.item.State}
		if env.ReplayIfDead && e.item.State == webhooks.StateDead {
			s.replayLocked(e, env.ReceivedAt, env.ReceivedAt, false, ops.Audit{
				Action: ops.ActionRedelivery,
				At:     env.ReceivedAt,
				Actor:  redeliveryActor,
				Reason: redeliveryReason,
			})
			res.State, res.Replayed = e.item.State, true
		}
		return res, nil
	}
	s.seq++
	e := &entry{
		seq:   s.seq,
		index: -1,
		item: webhooks.Item{
			Key:           env.Key,
			EventType:     env.EventType,
			Payload:       env.Payload,
			Headers:       env.Headers,
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
		},
	}
	s.items[env.Key] = e
	s.due.update(e)
	return webhooks.EnqueueResult{Outcome: webhooks.EnqueueNew, State: webhooks.StatePending}, nil
}

// The audit entry of a provider's redelivery that replayed a dead letter.
const (
	redeliveryActor  = "provider"
	redeliveryReason = "the provider delivered the dead-lettered event again (Envelope.ReplayIfDead)"
)

// Acquire implements webhooks.LeaseStore: it leases up to req.Max due
// items, the longest due first, each with its own token; asked for held
// leases (req.Hold), it starts only the first req.Start, except the
// Reclaimed ones (see webhooks.LeaseStarter). Ties in due time keep the
// order of enqueueing. An item taken from an expired started lease has
// that lease's attempt recorded as crashed. The leases are granted under
// req.ID, for RepeatAcquisition.
func (s *Inbox) Acquire(ctx context.Context, req webhooks.AcquireRequest) ([]*webhooks.Lease, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if err := req.Check(); err != nil {
		return nil, fmt.Errorf("memstore: Acquire: %w", err)
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
		leases = append(leases, s.leaseLocked(e, req, !req.Hold || len(leases) < req.Start))
	}
	return leases, nil
}

// RepeatAcquisition implements webhooks.AcquisitionRepeater: it returns
// the leases granted under req.ID and unexpired at req.Now, in the order
// they were leased.
func (s *Inbox) RepeatAcquisition(ctx context.Context, req webhooks.RepeatRequest) ([]*webhooks.Lease, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if req.ID == "" {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acquiredLocked(req.ID, req.Now), nil
}

// acquiredLocked returns the leases granted under the acquisition ID id
// and unexpired at now, as they are, and forgets the entries no longer
// leased under it.
func (s *Inbox) acquiredLocked(id string, now time.Time) []*webhooks.Lease {
	var (
		leases []*webhooks.Lease
		still  []*entry
	)
	for _, e := range s.byAcquisition[id] {
		if e.acquisition != id || e.item.State != webhooks.StateLeased {
			continue // settled or leased again (forgetAcquisitionLocked missed none, but be sure)
		}
		still = append(still, e)
		if e.item.LeaseExpiresAt.After(now) {
			leases = append(leases, e.leaseLocked())
		}
	}
	if len(still) == 0 {
		delete(s.byAcquisition, id)
	} else {
		s.byAcquisition[id] = still
	}
	return leases
}

// forgetAcquisitionLocked ends e's tie to the acquisition that leased it:
// its lease was settled, or it is being leased again.
func (s *Inbox) forgetAcquisitionLocked(e *entry) {
	id := e.acquisition
	if id == "" {
		return
	}
	e.acquisition = ""
	list := s.byAcquisition[id]
	for i, h := range list {
		if h == e {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(s.byAcquisition, id)
	} else {
		s.byAcquisition[id] = list
	}
}

// leaseLocked leases the due entry e with a fresh token, started or held
// (webhooks.LeaseStarter): held when start is false, or when the caller
// asked for held leases (req.Hold) and e is taken over from an expired
// lease.
func (s *Inbox) leaseLocked(e *entry, req webhooks.AcquireRequest, start bool) *webhooks.Lease {
	now := req.Now
	expires := now.Add(req.LeaseDuration)
	expired := e.item.State == webhooks.StateLeased
	// Taking over an expired lease: a started one's attempt crashed; an
	// unstarted one was no attempt, and the item stays as reclaimed as
	// that lease was (as it does after a lease given back unstarted).
	reclaimed := expired && !e.unstarted || e.reclaimed
	if expired && !e.unstarted {
		e.record(ops.OutcomeCrashed, e.item.LeaseExpiresAt, webhooks.Failure{})
	}
	s.forgetAcquisitionLocked(e)
	if req.ID != "" {
		e.acquisition = req.ID
		s.byAcquisition[req.ID] = append(s.byAcquisition[req.ID], e)
	}
	e.token = rand.Text() // at least 128 random bits
	e.settledBy = ""
	e.unstarted, e.reclaimed = true, reclaimed
	e.worker, e.version = req.Worker, req.Version
	e.item.State = webhooks.StateLeased
	e.item.LeaseExpiresAt = expires
	e.item.NextAttemptAt = expires
	e.item.UpdatedAt = now
	if start && !(req.Hold && reclaimed) {
		e.startLocked(now)
	}
	s.due.update(e)
	return e.leaseLocked()
}

// startLocked starts e's held lease at now: its attempt is counted and
// numbered, and the history will say it started at now.
func (e *entry) startLocked(now time.Time) {
	e.unstarted = false
	e.attempt++
	e.leasedAt = now
	e.item.Attempts++
}

// leaseLocked returns e's current lease as Acquire reports it.
func (e *entry) leaseLocked() *webhooks.Lease {
	attempt := e.item.Attempts
	if e.unstarted {
		attempt++ // the number it will have
	}
	return &webhooks.Lease{
		Token:     e.token,
		ExpiresAt: e.item.LeaseExpiresAt,
		Attempt:   attempt,
		Reclaimed: e.reclaimed,
		Held:      e.unstarted,
		Item:      cloneItem(e.item),
	}
}

// StartLeases implements webhooks.LeaseStarter.
func (s *Inbox) StartLeases(ctx context.Context, req webhooks.StartRequest) []error {
	errs := make([]error, len(req.Leases))
	if err := ctxErr(ctx); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	if err := req.Check(); err != nil {
		for i := range errs {
			errs[i] = fmt.Errorf("memstore: StartLeases: %w", err)
		}
		return errs
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, l := range req.Leases {
		e, err := s.currentLocked("StartLeases", l, req.Now, webhooks.Failure{})
		if err != nil {
			errs[i] = err
			continue
		}
		if e.unstarted {
			e.startLocked(req.Now)
		}
		expires := req.Now.Add(req.Duration)
		e.item.LeaseExpiresAt = expires
		e.item.NextAttemptAt = expires
		e.item.UpdatedAt = req.Now
		s.due.update(e)
	}
	return errs
}

// record adds the current lease's attempt to the history.
func (e *entry) record(outcome webhooks.AttemptOutcome, finished time.Time, f webhooks.Failure) {
	e.history = append(e.history, attempt{
		Attempt: ops.Attempt{
			Number:     e.attempt,
			Outcome:    outcome,
			StartedAt:  e.leasedAt,
			FinishedAt: finished,
			ErrorClass: f.Class,
			Error:      f.Message,
			Worker:     e.worker,
			Version:    e.version,
		},
		token: e.token,
	})
}

// Settle implements webhooks.LeaseStore, recording the attempt in the
// item's history.
func (s *Inbox) Settle(ctx context.Context, st webhooks.Settlement) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settleLocked(st)
}

// SettleBatch implements webhooks.BatchSettler: it settles each settlement
// in order as Settle would, under one lock, and returns their errors.
func (s *Inbox) SettleBatch(ctx context.Context, settlements []webhooks.Settlement) []error {
	errs := make([]error, len(settlements))
	if err := ctxErr(ctx); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, st := range settlements {
		errs[i] = s.settleLocked(st)
	}
	return errs
}

// settleLocked is Settle with s.mu held.
func (s *Inbox) settleLocked(st webhooks.Settlement) error {
	if err := st.Check(); err != nil {
		return fmt.Errorf("memstore: Settle: %w", err)
	}
	var failure webhooks.Failure
	if st.Outcome == webhooks.AttemptRetried || st.Outcome == webhooks.AttemptDeadLettered {
		failure = st.Failure
	}
	e, err := s.currentLocked("Settle", st.Lease, st.Now, failure)
	if err != nil {
		return err
	}
	now := st.Now
	if e.unstarted {
		if st.Outcome == webhooks.AttemptSucceeded || st.Outcome == webhooks.AttemptRetried {
			e.startLocked(now) // settled without a start: it ran
		}
	}
	// An unstarted lease settled dead-lettered or abandoned is no
	// attempt: nothing is counted or recorded.
	unrun := e.unstarted
	switch st.Outcome {
	case webhooks.AttemptSucceeded:
		e.item.State = webhooks.StateSucceeded
		e.item.CompletedAt = now
		e.item.NextAttemptAt = time.Time{}
		e.item.LastError = nil
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
		if !unrun {
			e.item.Attempts--
		}
		e.item.NextAttemptAt = now
		s.due.update(e)
	}
	if st.Outcome == webhooks.AttemptSucceeded {
		failure = st.Failure // a note for the history (FailureNoHandler), never LastError
	}
	if !unrun {
		e.record(st.Outcome, now, failure)
	}
	// Given back unstarted, a reclaimed lease's crash is still to be
	// judged; any other settlement judged it.
	e.reclaimed = e.reclaimed && unrun && st.Outcome == webhooks.AttemptAbandoned
	e.unstarted = false
	s.forgetAcquisitionLocked(e)
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
	if err := req.Check(); err != nil {
		return fmt.Errorf("memstore: ExtendLease: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	e, err := s.currentLocked("ExtendLease", req.Lease, req.Now, webhooks.Failure{})
	if err != nil {
		return err
	}
	expires := req.Now.Add(req.Duration)
	e.item.LeaseExpiresAt = expires
	e.item.NextAttemptAt = expires
	e.item.UpdatedAt = req.Now
	s.due.update(e)
	return nil
}

// currentLocked returns the entry lease refers to if lease holds its current
// token, or an error wrapping webhooks.ErrAlreadySettled or
// webhooks.ErrLeaseLost. A lost lease whose attempt the history holds as
// crashed (another acquisition took the item over) is recorded as lease
// lost, finished at now with the failure the refused call carried.
func (s *Inbox) currentLocked(op string, lease *webhooks.Lease, now time.Time, f webhooks.Failure) (*entry, error) {
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
	if e != nil && lease.Token != "" {
		for i := range e.history {
			if a := &e.history[i]; a.token == lease.Token && a.Outcome == ops.OutcomeCrashed {
				a.Outcome, a.FinishedAt = ops.OutcomeLeaseLost, now
				if f.Class != "" || f.Message != "" {
					a.ErrorClass, a.Error = f.Class, f.Message
				}
			}
		}
	}
	return nil, fmt.Errorf("memstore: %s %s: %w", op, lease.Item.Key, webhooks.ErrLeaseLost)
}

// Get implements ops.Store. The detail is a copy.
func (s *Inbox) Get(ctx context.Context, key webhooks.InboxKey) (ops.Detail, error) {
	if err := ctxErr(ctx); err != nil {
		return ops.Detail{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	e := s.items[key]
	if e == nil {
		return ops.Detail{}, fmt.Errorf("memstore: Get %s: %w", key, ops.ErrNotFound)
	}
	d := ops.Detail{
		Item:      cloneItem(e.item),
		History:   make([]ops.Attempt, len(e.history)),
		Audit:     append([]ops.Audit{}, e.audit...),
		Conflicts: e.conflicts,
	}
	for i, a := range e.history {
		d.History[i] = a.Attempt
	}
	for _, q := range e.quarantine {
		q.Payload = bytes.Clone(q.Payload)
		q.Headers = q.Headers.Clone()
		d.Quarantine = append(d.Quarantine, q)
	}
	return d, nil
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

var errNilContext = errors.New("memstore: nil context; pass context.Background() or a request context")

// ctxErr returns ctx.Err(), or an error for a nil ctx.
func ctxErr(ctx context.Context) error {
	if ctx == nil {
		return errNilContext
	}
	return ctx.Err()
}
