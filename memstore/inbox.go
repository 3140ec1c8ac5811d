package memstore

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// Inbox is an in-memory webhooks.InboxStore, webhooks.FanOutStore and
// ops.Store. It is safe for concurrent use; it is not durable (see the
// package documentation).
//
// An event is stored once, with its payload, and its work once per
// handler, as jobs (see webhooks.FanOutStore). Acquisition takes O(log n)
// time per job through one heap per handler of its jobs by due time. List
// and bulk Replay sort the matching dead (or closed) jobs on every call,
// and Stats visits every job: fine for the numbers memstore is meant for.
type Inbox struct {
	mu     sync.Mutex
	events map[webhooks.InboxKey]*event
	jobs   map[webhooks.JobKey]*entry
	due    map[string]*dueQueue       // by handler: its pending and leased jobs
	dead   map[webhooks.JobKey]*entry // dead jobs
	closed map[webhooks.JobKey]*entry // closed jobs
	keys   map[keyID]*keyState        // ordering keys with unfinished jobs or a memory (see order.go)
	seq    uint64                     // last entry.seq handed out
	// byAcquisition maps an acquisition ID (AcquireRequest.ID) to the
	// entries leased under it, in the order they were leased, until each
	// is settled or leased again.
	byAcquisition map[string][]*entry
	// buckets holds, by handler, when the next token of its rate limit
	// is due (see allowedLocked).
	buckets map[string]time.Time
	// pauses are the handlers' pauses in force; pauseTrail those that
	// ended, in the order they did.
	pauses     map[pauseKey]*webhooks.Pause
	pauseTrail []webhooks.Pause
	// parked are the pending jobs a scoped pause holds, out of their
	// due queues (see dueLocked).
	parked map[*entry]struct{}
}

// event is one stored event: what its jobs share. Its payload and headers
// are kept once, whatever the number of jobs.
type event struct {
	payload    []byte
	headers    http.Header
	duplicates int       // Item.DuplicateCount
	lastSeenAt time.Time // Item.LastSeenAt
	quarantine []ops.Delivery
	conflicts  int
	jobs       []*entry // ordered by handler
}

// entry is one job with its lease and its history. Its item holds the
// job's state and the event's fixed fields; the payload, headers,
// duplicate count and last delivery time are the event's (see view). It
// is owned by the Inbox and only leaves it as a copy.
type entry struct {
	ev    *event
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
	// leased is set once e is first leased, started or held, and stays
	// set: a key's head that was never leased has not started, and an
	// older version of its key arriving after it takes its place
	// (demoteLocked).
	leased bool
	seq    uint64 // enqueue order, breaks ties between equal due times
	index  int    // position in its handler's due queue or its key's waiting queue, -1 when in neither
	// levelIndex is the position in its priority's heap of its handler's
	// due queue (see dueQueue), -1 when in none; leaseIndex in the due
	// queue's heap of leases, -1 unless leased.
	levelIndex, leaseIndex int

	// The current (or last) started lease, as the attempt history
	// records it: its number, when it started and by whom.
	attempt         int // the last attempt number handed out
	leasedAt        time.Time
	worker, version string

	history []attempt
	audit   []ops.Audit
}

// job returns e's job key.
func (e *entry) job() webhooks.JobKey {
	return webhooks.JobKey{InboxKey: e.item.Key, Handler: e.item.Handler}
}

// view returns e's item with the event's shared fields, sharing the
// payload and headers: copy it (cloneItem) before it leaves the store.
func (e *entry) view() webhooks.Item {
	it := e.item
	it.Payload, it.Headers = e.ev.payload, e.ev.headers
	it.DuplicateCount, it.LastSeenAt = e.ev.duplicates, e.ev.lastSeenAt
	return it
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
	_ webhooks.FanOutStore         = (*Inbox)(nil)
	_ webhooks.FlowStore           = (*Inbox)(nil)
	_ ops.Store                    = (*Inbox)(nil)
)

// NewInbox returns an empty in-memory inbox.
func NewInbox() *Inbox {
	return &Inbox{
		events:        make(map[webhooks.InboxKey]*event),
		jobs:          make(map[webhooks.JobKey]*entry),
		due:           make(map[string]*dueQueue),
		dead:          make(map[webhooks.JobKey]*entry),
		closed:        make(map[webhooks.JobKey]*entry),
		keys:          make(map[keyID]*keyState),
		byAcquisition: make(map[string][]*entry),
		buckets:       make(map[string]time.Time),
		pauses:        make(map[pauseKey]*webhooks.Pause),
		parked:        make(map[*entry]struct{}),
	}
}

// FanOut implements webhooks.FanOutStore: the Inbox keeps one job per
// handler of an event and runs ordered jobs in key order.
func (s *Inbox) FanOut() webhooks.FanOutSupport {
	return webhooks.FanOutSupport{Handlers: true, OrderingKeys: orderingKeys}
}

// queue returns the due queue of handler's jobs, made when it has none.
func (s *Inbox) queue(handler string) *dueQueue {
	q := s.due[handler]
	if q == nil {
		q = &dueQueue{}
		s.due[handler] = q
	}
	return q
}

// Enqueue implements webhooks.Enqueuer. It keeps the envelope's payload
// and headers as they are, once for all the event's jobs, and for a
// quarantined delivery alike, as the contract allows; what the store hands
// out are copies. An envelope whose jobs env.CheckJobs refuses is refused
// before anything is stored.
func (s *Inbox) Enqueue(ctx context.Context, env webhooks.Envelope) (webhooks.EnqueueResult, error) {
	if err := ctxErr(ctx); err != nil {
		return webhooks.EnqueueResult{}, err
	}
	if err := env.CheckJobs(); err != nil {
		return webhooks.EnqueueResult{}, fmt.Errorf("memstore: Enqueue: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	if ev, ok := s.events[env.Key]; ok {
		if ev.jobs[0].item.PayloadSHA256 != env.PayloadSHA256 {
			ev.conflicts++
			if len(ev.quarantine) < ops.QuarantineLimit {
				ev.quarantine = append(ev.quarantine, ops.Delivery{
					Payload:       env.Payload,
					Headers:       env.Headers,
					PayloadSHA256: env.PayloadSHA256,
					KeyID:         env.KeyID,
					ReceivedAt:    env.ReceivedAt,
				})
			}
			return webhooks.EnqueueResult{Outcome: webhooks.EnqueueConflict, State: ev.state()}, nil
		}
		ev.duplicates++
		ev.lastSeenAt = env.ReceivedAt
		res := webhooks.EnqueueResult{Outcome: webhooks.EnqueueDuplicate, State: ev.state()}
		if env.ReplayIfDead && res.State == webhooks.StateDead {
			for _, e := range ev.jobs {
				if e.item.State != webhooks.StateDead {
					continue
				}
				s.replayLocked(e, env.ReceivedAt, env.ReceivedAt, false, ops.Audit{
					Action: ops.ActionRedelivery,
					At:     env.ReceivedAt,
					Actor:  redeliveryActor,
					Reason: redeliveryReason,
				})
			}
			res.State, res.Replayed = ev.state(), true
		}
		return res, nil
	}
	ev := &event{payload: env.Payload, headers: env.Headers, lastSeenAt: env.ReceivedAt}
	s.events[env.Key] = ev
	jobs := slices.Clone(webhooks.EnvelopeJobs(&env))
	slices.SortFunc(jobs, func(a, b webhooks.Job) int { return cmp.Compare(a.Handler, b.Handler) })
	for _, j := range jobs {
		s.addJobLocked(ev, webhooks.Item{
			Key:           env.Key,
			Handler:       j.Handler,
			EventType:     env.EventType,
			PayloadSHA256: env.PayloadSHA256,
			KeyID:         env.KeyID,
			APIVersion:    env.APIVersion,
			TraceLink:     env.TraceLink,
			Ordering:      env.Ordering,
			Ordered:       j.Ordered,
			Priority:      j.Priority,
			OccurredAt:    env.OccurredAt,
			ReceivedAt:    env.ReceivedAt,
		}, env.ReceivedAt, env.ReceivedAt, true)
	}
	return webhooks.EnqueueResult{Outcome: webhooks.EnqueueNew, State: ev.state()}, nil
}

// addJobLocked adds to ev the job of it (its event's fields, handler and
// ordering set) at now, pending and due at due, or waiting behind its
// ordering key's head, and returns it. An enqueued job (arrived) demotes
// an unstarted head of a newer version (see demoteLocked).
func (s *Inbox) addJobLocked(ev *event, it webhooks.Item, now, due time.Time, arrived bool) *entry {
	s.seq++
	it.Seq = int64(s.seq)
	it.UpdatedAt = now
	e := &entry{ev: ev, seq: s.seq, index: -1, levelIndex: -1, leaseIndex: -1, item: it}
	s.jobs[e.job()] = e
	i, _ := slices.BinarySearchFunc(ev.jobs, it.Handler, func(e *entry, h string) int { return cmp.Compare(e.item.Handler, h) })
	ev.jobs = slices.Insert(ev.jobs, i, e)
	s.enterLocked(e, now, due, arrived)
	return e
}

// state sums up the states of ev's jobs, as EnqueueResult.State does: dead
// if one is, else leased, else pending (or waiting), else succeeded, else
// closed.
func (ev *event) state() webhooks.State {
	rank := func(st webhooks.State) int {
		switch st {
		case webhooks.StateDead:
			return 5
		case webhooks.StateLeased:
			return 4
		case webhooks.StatePending, webhooks.StateWaiting:
			return 3
		case webhooks.StateSucceeded:
			return 2
		}
		return 1
	}
	best := webhooks.StateClosed
	for _, e := range ev.jobs {
		if rank(e.item.State) > rank(best) {
			best = e.item.State
		}
	}
	if best == webhooks.StateWaiting {
		best = webhooks.StatePending
	}
	return best
}

// The audit entry of a provider's redelivery that replayed a dead letter.
const (
	redeliveryActor  = "provider"
	redeliveryReason = "the provider delivered the dead-lettered event again (Envelope.ReplayIfDead)"
)

// Acquire implements webhooks.LeaseStore: it leases up to req.Max due
// jobs of req.Handler, the longest due first (or, with req.Fair, by
// tenant in turns: see webhooks.FlowSupport.Fair), each with its own token; asked for held
// leases (req.Hold), it starts only the first req.Start, except the
// Reclaimed ones (see webhooks.LeaseStarter), and no more than
// req.Limits allow (see webhooks.FlowSupport). Ties in due time keep the
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
	q := s.due[req.Handler]
	// next returns the entry of from due the longest at now. A pending
	// job a scoped pause holds is parked, not queued, but one leased when
	// the pause began is in the queue: once its lease expired, it is set
	// aside until the acquisition ends.
	var aside []*entry
	defer func() {
		for _, e := range aside {
			q.update(e)
		}
	}()
	next := func(from interface{ peekDue(time.Time) *entry }) *entry {
		for {
			e := from.peekDue(req.Now)
			if e == nil || !s.heldLocked(e) {
				return e
			}
			q.remove(e)
			aside = append(aside, e)
		}
	}
	if q != nil {
		next(q) // so that the pause's probe sees only the jobs it may lease
	}
	n := req.Max
	if !req.Limits.IsZero() {
		n = s.allowedLocked(q, req, n)
	}
	n, probe := s.allowedByPauseLocked(q, req, n)
	lease := func(e *entry) {
		leases = append(leases, s.leaseLocked(e, req, !req.Hold || len(leases) < req.Start))
	}
	switch {
	case q == nil || n == 0:
	case req.Fair:
		// Turns among the tenants found: a leased entry is due again only
		// at now+leaseDuration, after now, so each turn takes the
		// tenant's next.
		tenants := q.fairTenants(req.Now, n, req.FairVisits())
		for len(leases) < n && len(tenants) > 0 {
			left := tenants[:0]
			for _, t := range tenants {
				if e := next(t); e != nil && len(leases) < n {
					lease(e)
					left = append(left, t)
				}
			}
			tenants = left
		}
	default:
		// The longest due first, of each of req.Priorities in turn (those
		// of a priority left are the due ones of the others), then of
		// all; as above, the loop never takes one entry twice.
		for _, p := range req.Priorities {
			for len(leases) < n {
				l := q.level(p)
				if l == nil {
					break
				}
				e := next(l)
				if e == nil {
					break
				}
				lease(e)
			}
		}
		for len(leases) < n {
			e := next(q)
			if e == nil {
				break
			}
			lease(e)
		}
	}
	s.spendLocked(req, len(leases))
	if probe && len(leases) == 1 {
		leases[0].Probe = true
	}
	return leases, nil
}

// RepeatAcquisition implements webhooks.AcquisitionRepeater: it returns
// the leases granted under req.ID and unexpired at req.Now, the higher
// priorities first, each in the order they were leased.
func (s *Inbox) RepeatAcquisition(ctx context.Context, req webhooks.RepeatRequest) ([]*webhooks.Lease, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if req.ID == "" {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acquiredLocked(req.ID, req.Handler, req.Now), nil
}

// acquiredLocked returns the leases of handler's jobs granted under the
// acquisition ID id and unexpired at now, as they are, and forgets the
// entries no longer leased under it.
func (s *Inbox) acquiredLocked(id, handler string, now time.Time) []*webhooks.Lease {
	var (
		leases []*webhooks.Lease
		still  []*entry
	)
	for _, e := range s.byAcquisition[id] {
		if e.acquisition != id || e.item.State != webhooks.StateLeased {
			continue // settled or leased again (forgetAcquisitionLocked missed none, but be sure)
		}
		still = append(still, e)
		if e.item.LeaseExpiresAt.After(now) && e.item.Handler == handler {
			l := s.leaseOf(e)
			// The probe's lease expires when the pause's claim of it
			// does, until it is extended.
			p := s.pauses[pauseKey{handler: handler}]
			l.Probe = p != nil && p.Cause == webhooks.PauseBreaker && p.ProbeUntil.Equal(e.item.LeaseExpiresAt)
			leases = append(leases, l)
		}
	}
	if len(still) == 0 {
		delete(s.byAcquisition, id)
	} else {
		s.byAcquisition[id] = still
	}
	slices.SortStableFunc(leases, func(a, b *webhooks.Lease) int { return cmp.Compare(b.Item.Priority, a.Item.Priority) })
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
	e.leased = true
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
	s.queue(e.item.Handler).update(e)
	return s.leaseOf(e)
}

// startLocked starts e's held lease at now: its attempt is counted and
// numbered, and the history will say it started at now.
func (e *entry) startLocked(now time.Time) {
	e.unstarted = false
	e.attempt++
	e.leasedAt = now
	e.item.Attempts++
}

// leaseOf returns e's current lease as Acquire reports it, with the
// applied version of its ordering key.
func (s *Inbox) leaseOf(e *entry) *webhooks.Lease {
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
		Applied:   s.appliedLocked(e),
		Item:      cloneItem(e.view()),
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
		s.queue(e.item.Handler).update(e)
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
// job's history. A succeeded or dead-lettered head of an ordering key
// hands the key to the next job (see webhooks.FanOutSupport).
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
		s.queue(e.item.Handler).remove(e)
	case webhooks.AttemptRetried, webhooks.AttemptDeadLettered:
		e.item.LastError = &webhooks.ErrorRecord{Class: st.Failure.Class, Message: st.Failure.Message, At: now}
		if st.Outcome == webhooks.AttemptDeadLettered {
			e.item.State = webhooks.StateDead
			e.item.DeadAt = now
			e.item.NextAttemptAt = time.Time{}
			s.queue(e.item.Handler).remove(e)
			s.dead[e.job()] = e
		} else {
			e.item.State = webhooks.StatePending
			e.item.NextAttemptAt = st.RetryAt
			s.dueLocked(e)
		}
	case webhooks.AttemptAbandoned:
		e.item.State = webhooks.StatePending
		if !unrun {
			e.item.Attempts--
		}
		e.item.NextAttemptAt = now
		s.dueLocked(e)
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
	if st.Outcome == webhooks.AttemptSucceeded || st.Outcome == webhooks.AttemptDeadLettered {
		s.leaveLocked(e, now, st.Outcome == webhooks.AttemptSucceeded && failure.Class != webhooks.FailureSkipped)
	}
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
	s.queue(e.item.Handler).update(e)
	return nil
}

// currentLocked returns the job lease refers to if lease holds its current
// token, or an error wrapping webhooks.ErrAlreadySettled or
// webhooks.ErrLeaseLost. A lost lease whose attempt the history holds as
// crashed (another acquisition took the item over) is recorded as lease
// lost, finished at now with the failure the refused call carried.
func (s *Inbox) currentLocked(op string, lease *webhooks.Lease, now time.Time, f webhooks.Failure) (*entry, error) {
	if lease == nil {
		return nil, fmt.Errorf("memstore: %s: the lease is nil; pass a lease returned by Acquire", op)
	}
	e := s.jobs[lease.Job()]
	switch {
	case e != nil && e.item.State == webhooks.StateLeased && e.token == lease.Token:
		return e, nil
	case e != nil && lease.Token != "" && e.settledBy == lease.Token:
		return nil, fmt.Errorf("memstore: %s %s: %w", op, lease.Job(), webhooks.ErrAlreadySettled)
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
	return nil, fmt.Errorf("memstore: %s %s: %w", op, lease.Job(), webhooks.ErrLeaseLost)
}

// Get implements ops.Store: the item, history and audit trail of the
// event's first job (by handler: the default handler's when it has one),
// and every job in Detail.Jobs. The detail is a copy.
func (s *Inbox) Get(ctx context.Context, key webhooks.InboxKey) (ops.Detail, error) {
	if err := ctxErr(ctx); err != nil {
		return ops.Detail{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	ev := s.events[key]
	if ev == nil {
		return ops.Detail{}, fmt.Errorf("memstore: Get %s: %w", key, ops.ErrNotFound)
	}
	d := ops.Detail{Conflicts: ev.conflicts}
	for _, e := range ev.jobs {
		j := ops.Job{
			Item:    cloneItem(e.view()),
			History: make([]ops.Attempt, len(e.history)),
			Audit:   append([]ops.Audit{}, e.audit...),
		}
		for i, a := range e.history {
			j.History[i] = a.Attempt
		}
		if len(d.Jobs) == 0 {
			d.Item, d.History, d.Audit = j.Item, j.History, j.Audit
		}
		j.Payload, j.Headers = nil, nil
		j.History, j.Audit = slices.Clone(j.History), slices.Clone(j.Audit)
		d.Jobs = append(d.Jobs, j)
	}
	for _, q := range ev.quarantine {
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
