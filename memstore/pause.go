package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

var _ webhooks.PauseStore = (*Inbox)(nil)

// pauseKey names a pause in force: at most one per handler (or
// webhooks.EveryHandler) and scope.
type pauseKey struct {
	handler string
	scope   webhooks.PauseScope
}

// Pause implements webhooks.PauseStore. A scoped pause parks the pending
// jobs it holds at once (see dueLocked for those that become due later).
func (s *Inbox) Pause(ctx context.Context, req webhooks.PauseRequest) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if err := req.Check(); err != nil {
		return fmt.Errorf("memstore: Pause: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := pauseKey{req.Handler, req.Scope}
	if cur := s.pauses[k]; cur != nil {
		if cur.Cause == webhooks.PauseOperator {
			if req.Cause == webhooks.PauseBreaker {
				return fmt.Errorf("memstore: Pause(%q) by its breaker: %w", req.Handler, webhooks.ErrPaused)
			}
			return nil // paused already, by an operator: kept
		}
		why := "its probe failed: paused again for a cool-down"
		if req.Cause == webhooks.PauseOperator {
			why = "an operator paused the handler"
		}
		s.endPauseLocked(k, cur, req.Now, req.Actor, why)
	}
	s.pauses[k] = &webhooks.Pause{Handler: req.Handler, Scope: req.Scope, Cause: req.Cause, Actor: req.Actor, Reason: req.Reason, Since: req.Now, Until: req.Until}
	if !req.Scope.IsZero() {
		s.parkLocked(k)
	}
	return nil
}

// parkLocked parks the pending jobs the scoped pause k holds.
func (s *Inbox) parkLocked(k pauseKey) {
	var held []*entry
	for handler, q := range s.due {
		if k.handler != webhooks.EveryHandler && handler != k.handler {
			continue
		}
		for id, t := range q.tenants {
			if k.scope.Provider != "" && id.provider != k.scope.Provider || k.scope.Tenant != "" && id.tenant != k.scope.Tenant {
				continue
			}
			for _, e := range t.jobs {
				if e.item.State == webhooks.StatePending && k.scope.Holds(id.provider, id.tenant, e.item.EventType) {
					held = append(held, e)
				}
			}
		}
	}
	for _, e := range held {
		s.dueLocked(e)
	}
}

// dueLocked queues the pending job e at its due time, or parks it, out of
// its due queue, while a scoped pause in force holds it.
func (s *Inbox) dueLocked(e *entry) {
	if s.heldLocked(e) {
		s.queue(e.item.Handler).remove(e)
		s.parked[e] = struct{}{}
		return
	}
	delete(s.parked, e)
	s.queue(e.item.Handler).update(e)
}

// heldLocked reports whether a scoped pause in force holds e's job.
func (s *Inbox) heldLocked(e *entry) bool {
	for k := range s.pauses {
		if !k.scope.IsZero() && (k.handler == e.item.Handler || k.handler == webhooks.EveryHandler) &&
			k.scope.Holds(e.item.Key.Provider, e.item.Key.Tenant, e.item.EventType) {
			return true
		}
	}
	return false
}

// Resume implements webhooks.PauseStore. Ending a scoped pause queues the
// parked jobs that no other pause holds, at their due times.
func (s *Inbox) Resume(ctx context.Context, req webhooks.ResumeRequest) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if err := req.Check(); err != nil {
		return fmt.Errorf("memstore: Resume: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := pauseKey{req.Handler, req.Scope}
	cur := s.pauses[k]
	if cur == nil || req.Cause == webhooks.PauseBreaker && cur.Cause != webhooks.PauseBreaker {
		return fmt.Errorf("memstore: Resume(%q, %s, %s): %w", req.Handler, req.Scope, req.Cause, webhooks.ErrNotPaused)
	}
	s.endPauseLocked(k, cur, req.Now, req.Actor, req.Reason)
	if !req.Scope.IsZero() {
		for e := range s.parked {
			s.dueLocked(e)
		}
	}
	return nil
}

// endPauseLocked ends p, in force as k, at now, and keeps it in the trail.
func (s *Inbox) endPauseLocked(k pauseKey, p *webhooks.Pause, now time.Time, by, why string) {
	delete(s.pauses, k)
	p.EndedAt, p.EndedBy, p.EndReason, p.ProbeUntil = now, by, why, time.Time{}
	s.pauseTrail = append(s.pauseTrail, *p)
}

// Pauses implements webhooks.PauseStore.
func (s *Inbox) Pauses(ctx context.Context, ended int) ([]webhooks.Pause, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.pausedLocked()
	for i := len(s.pauseTrail) - 1; i >= 0 && ended > 0; i-- {
		out = append(out, s.pauseTrail[i])
		ended--
	}
	return out, nil
}

// pausedLocked returns the pauses in force, by handler, then scope.
func (s *Inbox) pausedLocked() []webhooks.Pause {
	out := make([]webhooks.Pause, 0, len(s.pauses))
	for _, p := range s.pauses {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b webhooks.Pause) int {
		return cmp.Or(strings.Compare(a.Handler, b.Handler), strings.Compare(a.Scope.Provider, b.Scope.Provider),
			strings.Compare(a.Scope.Tenant, b.Scope.Tenant), strings.Compare(a.Scope.Types, b.Scope.Types))
	})
	return out
}

// allowedByPauseLocked returns how many of n leases of req's handler its pause
// allows at req.Now: all without one; while a breaker's pause waits for
// its probe, one (the probe) when a job is due and no lease of the
// handler is unexpired; none otherwise. probe reports the one.
func (s *Inbox) allowedByPauseLocked(q *dueQueue, req webhooks.AcquireRequest, n int) (allowed int, probe bool) {
	p := s.pauses[pauseKey{handler: req.Handler}]
	switch {
	case s.pauses[pauseKey{handler: webhooks.EveryHandler}] != nil:
		return 0, false
	case p == nil:
		return n, false
	case p.Cause != webhooks.PauseBreaker || req.Now.Before(p.Until) || req.Now.Before(p.ProbeUntil):
		return 0, false
	case n == 0 || q == nil || q.peekDue(req.Now) == nil || q.running(req.Now) > 0:
		return 0, false // nothing to probe, or a lease (the probe's, or one from before the pause) runs
	}
	p.ProbeUntil = req.Now.Add(req.LeaseDuration)
	return min(n, 1), true
}
