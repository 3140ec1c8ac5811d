package memstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

var _ webhooks.PauseStore = (*Inbox)(nil)

// Pause implements webhooks.PauseStore.
func (s *Inbox) Pause(ctx context.Context, req webhooks.PauseRequest) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if err := req.Check(); err != nil {
		return fmt.Errorf("memstore: Pause: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur := s.pauses[req.Handler]; cur != nil {
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
		s.endPauseLocked(cur, req.Now, req.Actor, why)
	}
	s.pauses[req.Handler] = &webhooks.Pause{Handler: req.Handler, Cause: req.Cause, Actor: req.Actor, Reason: req.Reason, Since: req.Now, Until: req.Until}
	return nil
}

// Resume implements webhooks.PauseStore.
func (s *Inbox) Resume(ctx context.Context, req webhooks.ResumeRequest) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if err := req.Check(); err != nil {
		return fmt.Errorf("memstore: Resume: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.pauses[req.Handler]
	if cur == nil || req.Cause == webhooks.PauseBreaker && cur.Cause != webhooks.PauseBreaker {
		return fmt.Errorf("memstore: Resume(%q, %s): %w", req.Handler, req.Cause, webhooks.ErrNotPaused)
	}
	s.endPauseLocked(cur, req.Now, req.Actor, req.Reason)
	return nil
}

// endPauseLocked ends p, in force, at now, and keeps it in the trail.
func (s *Inbox) endPauseLocked(p *webhooks.Pause, now time.Time, by, why string) {
	delete(s.pauses, p.Handler)
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

// pausedLocked returns the pauses in force, by handler.
func (s *Inbox) pausedLocked() []webhooks.Pause {
	out := make([]webhooks.Pause, 0, len(s.pauses))
	for _, p := range s.pauses {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b webhooks.Pause) int { return strings.Compare(a.Handler, b.Handler) })
	return out
}

// allowedByPauseLocked returns how many of n leases of req's handler its pause
// allows at req.Now: all without one; while a breaker's pause waits for
// its probe, one (the probe) when a job is due and no lease of the
// handler is unexpired; none otherwise. probe reports the one.
func (s *Inbox) allowedByPauseLocked(q *dueQueue, req webhooks.AcquireRequest, n int) (allowed int, probe bool) {
	p := s.pauses[req.Handler]
	switch {
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
