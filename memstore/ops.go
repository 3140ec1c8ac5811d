package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/cursor"
	"github.com/hookinbox/webhooks/ops"
)

// List implements ops.Store. It sorts the matching items on every call.
func (s *Inbox) List(ctx context.Context, q ops.Query) (ops.Page, error) {
	if err := ctxErr(ctx); err != nil {
		return ops.Page{}, err
	}
	state, err := q.ListState()
	if err != nil {
		return ops.Page{}, fmt.Errorf("memstore: List: %w", err)
	}
	var after *cursor.Position
	if q.After != "" {
		c, err := cursor.Parse(q.After, state)
		if err != nil {
			return ops.Page{}, fmt.Errorf("memstore: List: %w", err)
		}
		after = &c
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	matches := s.matchLocked(state, q, after)
	var page ops.Page
	for _, e := range matches[:min(q.Limit, len(matches))] {
		page.Items = append(page.Items, summaryOf(e))
	}
	if len(matches) > q.Limit {
		last := page.Items[q.Limit-1]
		page.Next = cursor.Position{State: state, At: listedAt(&last.Item), Key: last.Key, Handler: last.Handler}.String()
	}
	return page, nil
}

// summaryOf is e's item as a list shows it, without copying its payload
// or headers.
func summaryOf(e *entry) ops.Summary {
	it := e.view()
	sum := ops.Summary{Item: it, PayloadBytes: len(it.Payload)}
	sum.Payload, sum.Headers = nil, nil
	if it.LastError != nil {
		e := *it.LastError
		sum.LastError = &e
	}
	return sum
}

// listedAt is the time a listing orders it by: when it was closed, when
// it succeeded, or when it died.
func listedAt(it *webhooks.Item) time.Time {
	switch it.State {
	case webhooks.StateClosed:
		return it.ClosedAt
	case webhooks.StateSucceeded:
		return it.CompletedAt
	}
	return it.DeadAt
}

// matchLocked returns the jobs in state (dead, closed or succeeded)
// matching q's filters, after the position after when it is not nil,
// newest first (then by key and handler, descending).
func (s *Inbox) matchLocked(state webhooks.State, q ops.Query, after *cursor.Position) []*entry {
	set := s.dead
	switch state {
	case webhooks.StateClosed:
		set = s.closed
	case webhooks.StateSucceeded:
		set = s.jobs
	}
	var found []*entry
	for _, e := range set {
		it := &e.item
		at := listedAt(it)
		if it.State != state || !matches(q, it, at) || (after != nil && !after.Before(at, it.Key, it.Handler)) {
			continue
		}
		found = append(found, e)
	}
	slices.SortFunc(found, func(a, b *entry) int {
		return cmp.Or(listedAt(&b.item).Compare(listedAt(&a.item)), b.job().Compare(a.job()))
	})
	return found
}

// matches reports whether it, listed at at, matches q's filters.
func matches(q ops.Query, it *webhooks.Item, at time.Time) bool {
	return (q.Handler == nil || it.Handler == *q.Handler) &&
		(q.Provider == "" || it.Key.Provider == q.Provider) &&
		(q.Tenant == nil || it.Key.Tenant == *q.Tenant) &&
		(q.EventType == "" || it.EventType == q.EventType) &&
		(q.ErrorClass == "" || (it.LastError != nil && it.LastError.Class == q.ErrorClass)) &&
		(q.APIVersion == "" || it.APIVersion == q.APIVersion) &&
		(q.From.IsZero() || !at.Before(q.From)) &&
		(q.To.IsZero() || at.Before(q.To))
}

// Replay implements ops.Store. Each call runs under the store's lock, so
// no item leaves its state while the call runs; each call of a bulk
// replay sorts every item the query matches.
func (s *Inbox) Replay(ctx context.Context, req ops.ReplayRequest) (ops.ReplayResult, error) {
	if err := ctxErr(ctx); err != nil {
		return ops.ReplayResult{}, err
	}
	if err := req.Check(); err != nil {
		return ops.ReplayResult{}, fmt.Errorf("memstore: Replay: %w", err)
	}
	action := ops.ActionReplay
	if req.Redelivery {
		action = ops.ActionRedelivery
	}
	audit := ops.Audit{Action: action, At: req.Now, Actor: req.Actor, Reason: req.Reason, Ticket: req.Ticket}
	if req.Query != nil {
		return s.replayBulk(req, audit)
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	if req.ToHandler != "" {
		ev := s.events[req.Key]
		target := webhooks.JobKey{InboxKey: req.Key, Handler: req.ToHandler}
		switch {
		case ev == nil:
			return ops.ReplayResult{}, fmt.Errorf("memstore: Replay %s: %w", req.Key, ops.ErrNotFound)
		case s.jobs[target] != nil && !finished(s.jobs[target].item.State):
			return ops.ReplayResult{}, fmt.Errorf("memstore: Replay %s is %s: %w", target, s.jobs[target].item.State, ops.ErrNotFinished)
		}
		if !req.DryRun {
			s.replayToLocked(ev, req, req.Now, audit)
		}
		return ops.ReplayResult{Items: []ops.Replayed{{Key: req.Key, Handler: req.ToHandler, DueAt: req.Now}}, Done: 1, Total: 1}, nil
	}

	job := webhooks.JobKey{InboxKey: req.Key, Handler: req.Handler}
	e := s.jobs[job]
	switch {
	case e == nil:
		return ops.ReplayResult{}, fmt.Errorf("memstore: Replay %s: %w", job, ops.ErrNotFound)
	case !finished(e.item.State):
		return ops.ReplayResult{}, fmt.Errorf("memstore: Replay %s is %s: %w", job, e.item.State, ops.ErrNotFinished)
	}
	if !req.DryRun {
		s.replayLocked(e, req.Now, req.Now, !req.KeepAttempts, audit)
	}
	return ops.ReplayResult{Items: []ops.Replayed{{Key: req.Key, Handler: req.Handler, DueAt: req.Now}}, Done: 1, Total: 1}, nil
}

// replayBulk runs one call of the bulk replay req: the first selects up
// to Query.Limit items and records the last as the end of the selection;
// each call goes through up to ops.ReplayBatch of them after its cursor,
// down to that end.
func (s *Inbox) replayBulk(req ops.ReplayRequest, audit ops.Audit) (ops.ReplayResult, error) {
	q := *req.Query
	state := q.State
	if state == "" {
		state = webhooks.StateDead
	}
	var (
		c     cursor.Replay
		after *cursor.Position
	)
	if q.After != "" {
		var err error
		if c, err = cursor.ParseReplay(q.After, q, req.DryRun); err != nil {
			return ops.ReplayResult{}, fmt.Errorf("memstore: Replay: %w", err)
		}
		after = &c.Position
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	m := s.matchLocked(state, q, after)
	if after == nil {
		c.Total = min(len(m), q.Limit)
		if c.Total == 0 {
			return ops.ReplayResult{}, nil
		}
		m = m[:c.Total]
		end := &m[c.Total-1].item
		c.End = cursor.Position{State: state, At: listedAt(end), Key: end.Key, Handler: end.Handler}
	} else if i := slices.IndexFunc(m, func(e *entry) bool { return c.End.Before(listedAt(&e.item), e.item.Key, e.item.Handler) }); i >= 0 {
		m = m[:i] // keep to the selection
	}
	todo := m[:min(len(m), c.Total-c.Done, ops.ReplayBatch)]
	res := ops.ReplayResult{Items: make([]ops.Replayed, 0, len(todo)), Done: c.Done + len(todo), Total: c.Total}
	if len(m) > len(todo) && res.Done < c.Total {
		last := &todo[len(todo)-1].item // as it is listed before the replay
		next := c
		next.Position = cursor.Position{State: state, At: listedAt(last), Key: last.Key, Handler: last.Handler}
		next.Done, next.DryRun = res.Done, req.DryRun
		res.Next = next.String()
	} else {
		res.Done = c.Total // what is left of the selection left the state
	}
	for i, e := range todo {
		due := req.Now.Add(req.SpreadOffset(c.Done+i, c.Total))
		if req.ToHandler != "" {
			if t := s.jobs[webhooks.JobKey{InboxKey: e.item.Key, Handler: req.ToHandler}]; t != nil && !finished(t.item.State) {
				continue // the event's job of ToHandler is under way: left as it is
			}
			res.Items = append(res.Items, ops.Replayed{Key: e.item.Key, Handler: req.ToHandler, DueAt: due})
			if !req.DryRun {
				s.replayToLocked(e.ev, req, due, audit)
			}
			continue
		}
		res.Items = append(res.Items, ops.Replayed{Key: e.item.Key, Handler: e.item.Handler, DueAt: due})
		if !req.DryRun {
			s.replayLocked(e, req.Now, due, !req.KeepAttempts, audit)
		}
	}
	return res, nil
}

// replayToLocked replays the event ev to req.ToHandler, due at due: its
// job of that handler is created (ordered when req.ToOrdered, of priority
// req.ToPriority) or, finished,
// replayed with a fresh attempt budget; a is recorded on that job.
func (s *Inbox) replayToLocked(ev *event, req ops.ReplayRequest, due time.Time, a ops.Audit) {
	src := ev.jobs[0].item
	if e := s.jobs[webhooks.JobKey{InboxKey: src.Key, Handler: req.ToHandler}]; e != nil {
		s.replayLocked(e, req.Now, due, true, a)
		return
	}
	e := s.addJobLocked(ev, webhooks.Item{
		Key:           src.Key,
		Handler:       req.ToHandler,
		EventType:     src.EventType,
		PayloadSHA256: src.PayloadSHA256,
		KeyID:         src.KeyID,
		APIVersion:    src.APIVersion,
		TraceLink:     src.TraceLink,
		Ordering:      src.Ordering,
		Ordered:       req.ToOrdered,
		Priority:      req.ToPriority,
		OccurredAt:    src.OccurredAt,
		ReceivedAt:    src.ReceivedAt,
	}, req.Now, due, false)
	e.audit = append(e.audit, a)
}

// finished reports whether a job in state st has ended: succeeded, dead
// or closed.
func finished(st webhooks.State) bool {
	return st == webhooks.StateSucceeded || st == webhooks.StateDead || st == webhooks.StateClosed
}

// replayLocked makes the dead, closed or succeeded job e pending, due at
// due (or waiting behind its ordering key's head), and adds a to its
// audit trail.
func (s *Inbox) replayLocked(e *entry, now, due time.Time, resetAttempts bool, a ops.Audit) {
	s.resolveLocked(e)
	delete(s.dead, e.job())
	delete(s.closed, e.job())
	e.item.DeadAt = time.Time{}
	e.item.ClosedAt = time.Time{}
	e.item.CompletedAt = time.Time{}
	e.item.UpdatedAt = now
	if resetAttempts {
		e.item.Attempts = 0
	}
	e.audit = append(e.audit, a)
	s.enterLocked(e, now, due, false)
}

// CloseDeadLetter implements ops.Store.
func (s *Inbox) CloseDeadLetter(ctx context.Context, req ops.CloseRequest) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if err := req.Check(); err != nil {
		return fmt.Errorf("memstore: CloseDeadLetter %s: %w", req.Key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	job := webhooks.JobKey{InboxKey: req.Key, Handler: req.Handler}
	e := s.jobs[job]
	switch {
	case e == nil:
		return fmt.Errorf("memstore: CloseDeadLetter %s: %w", job, ops.ErrNotFound)
	case e.item.State != webhooks.StateDead:
		return fmt.Errorf("memstore: CloseDeadLetter %s is %s: %w", job, e.item.State, ops.ErrNotDead)
	}
	s.resolveLocked(e)
	delete(s.dead, job)
	s.closed[job] = e
	e.item.State = webhooks.StateClosed
	e.item.ClosedAt = req.Now
	e.item.UpdatedAt = req.Now
	e.audit = append(e.audit, ops.Audit{Action: ops.ActionClose, At: req.Now, Actor: req.Actor, Reason: req.Reason, Ticket: req.Ticket})
	return nil
}

// Stats implements ops.Store. It visits every job and every ordering
// key, under the store's lock; every count is exact. Stats.Handlers lists
// the handlers with a job that has not succeeded.
func (s *Inbox) Stats(ctx context.Context, req ops.StatsRequest) (ops.Stats, error) {
	if err := ctxErr(ctx); err != nil {
		return ops.Stats{}, err
	}
	limit, err := req.GroupLimit()
	if err != nil {
		return ops.Stats{}, fmt.Errorf("memstore: Stats: %w", err)
	}
	heldLimit, err := req.HeldKeyLimit()
	if err != nil {
		return ops.Stats{}, fmt.Errorf("memstore: Stats: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	st := ops.Stats{States: map[webhooks.State]int64{
		webhooks.StatePending: 0, webhooks.StateLeased: 0, webhooks.StateSucceeded: 0,
		webhooks.StateDead: 0, webhooks.StateClosed: 0, webhooks.StateWaiting: 0,
	}}
	groups := make(map[ops.Count]int64)
	handlers := make(map[string]*ops.HandlerStats)
	for _, e := range s.jobs {
		it := &e.item
		st.States[it.State]++
		if it.State == webhooks.StateSucceeded {
			continue
		}
		h := handlers[it.Handler]
		if h == nil {
			h = &ops.HandlerStats{Handler: it.Handler, States: map[webhooks.State]int64{
				webhooks.StatePending: 0, webhooks.StateLeased: 0, webhooks.StateDead: 0,
				webhooks.StateClosed: 0, webhooks.StateWaiting: 0,
			}}
			handlers[it.Handler] = h
		}
		h.States[it.State]++
		switch it.State {
		case webhooks.StatePending, webhooks.StateLeased:
			if _, parked := s.parked[e]; parked {
				st.Parked++
				h.Parked++
			} else if !it.NextAttemptAt.After(req.Now) {
				st.Due++
				h.Due++
				if st.OldestDue.IsZero() || it.NextAttemptAt.Before(st.OldestDue) {
					st.OldestDue = it.NextAttemptAt
				}
				if h.OldestDue.IsZero() || it.NextAttemptAt.Before(h.OldestDue) {
					h.OldestDue = it.NextAttemptAt
				}
			} else if it.State == webhooks.StateLeased {
				st.LeasesHeld++
				h.LeasesHeld++
			}
			if it.State == webhooks.StatePending && it.LastError != nil {
				st.Retrying++
				h.Retrying++
			}
		case webhooks.StateDead:
			groups[ops.Count{Handler: it.Handler, Provider: it.Key.Provider, EventType: it.EventType}]++
		}
	}
	for _, h := range handlers {
		st.Handlers = append(st.Handlers, *h)
	}
	slices.SortFunc(st.Handlers, func(a, b ops.HandlerStats) int { return cmp.Compare(a.Handler, b.Handler) })
	for g, n := range groups {
		g.N = n
		st.DeadLetters = append(st.DeadLetters, g)
	}
	slices.SortFunc(st.DeadLetters, compareCounts)
	if len(st.DeadLetters) > limit {
		for _, g := range st.DeadLetters[limit:] {
			st.MoreDeadLetters.Groups++
			st.MoreDeadLetters.N += g.N
		}
		st.DeadLetters = st.DeadLetters[:limit]
	}
	st.HeldKeys = s.heldKeysLocked()
	if len(st.HeldKeys) > heldLimit {
		st.MoreHeldKeys = int64(len(st.HeldKeys) - heldLimit)
		st.HeldKeys = st.HeldKeys[:heldLimit]
	}
	st.Paused = s.pausedLocked()
	return st, nil
}

// heldKeysLocked returns every held key: an ordering key whose head has
// failed (it has a last error) and has jobs waiting behind it, the deepest
// first, then by handler, provider, tenant and key.
func (s *Inbox) heldKeysLocked() []ops.HeldKey {
	var held []ops.HeldKey
	for id, ks := range s.keys {
		head := ks.head
		if head == nil || head.item.LastError == nil || ks.waiting.Len() == 0 {
			continue
		}
		next := ks.waiting[0] // the heap's least: the job that runs next
		rec := *head.item.LastError
		held = append(held, ops.HeldKey{
			Handler: id.handler, Provider: id.provider, Tenant: id.tenant, Key: id.key,
			Depth:          int64(1 + ks.waiting.Len()),
			Head:           head.item.Key,
			HeadAttempts:   head.item.Attempts,
			HeadError:      &rec,
			Next:           next.item.Key,
			NextReceivedAt: next.item.ReceivedAt,
		})
	}
	slices.SortFunc(held, func(a, b ops.HeldKey) int {
		return cmp.Or(cmp.Compare(b.Depth, a.Depth), cmp.Compare(a.Handler, b.Handler), cmp.Compare(a.Provider, b.Provider),
			cmp.Compare(a.Tenant, b.Tenant), cmp.Compare(a.Key, b.Key))
	})
	return held
}

// compareCounts orders dead-letter groups the largest first, then by
// handler, provider and event type.
func compareCounts(a, b ops.Count) int {
	return cmp.Or(cmp.Compare(b.N, a.N), cmp.Compare(a.Handler, b.Handler), cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.EventType, b.EventType))
}
