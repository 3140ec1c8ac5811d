package webhooks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// breaker is a Processor's state of one handler's Breaker: the attempts
// it ran that failed in a row, and when it last opened the breaker and
// until when.
type breaker struct {
	cfg                 Breaker
	mu                  sync.Mutex
	failures            int
	openedAt, openUntil time.Time
}

// holdsBack reports whether a lease acquired at acquired must be given
// back unrun at now: the processor opened the breaker after that
// acquisition, and its cool-down has not ended. A lease acquired after it
// opened was granted by the store, which knows whether the handler is
// paused (another processor's probe may have closed the breaker since).
func (b *breaker) holdsBack(acquired, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return now.Before(b.openUntil) && acquired.Before(b.openedAt)
}

// note counts an attempt's outcome against b: it returns true when the
// failure opens the breaker (the failures in a row reached its count
// while it was not open already), and clears the count on any other
// outcome.
func (b *breaker) note(counted bool, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !counted {
		b.failures = 0
		return false
	}
	if now.Before(b.openUntil) {
		return false // an attempt that started before it opened
	}
	b.failures++
	if b.failures < b.cfg.Failures {
		return false
	}
	b.failures = 0
	// Until the store has the pause (confirmed), every lease acquired
	// before the cool-down's end is held back: the store may still grant
	// some meanwhile.
	b.openUntil = now.Add(b.cfg.coolDown())
	b.openedAt = b.openUntil
	return true
}

// confirmed notes that the store holds the breaker's pause from at: the
// leases acquired since were granted by a store that knew of it.
func (b *breaker) confirmed(at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if at.Before(b.openedAt) {
		b.openedAt = at
	}
}

// opened notes that the breaker opened again at now, until until (a
// probe failed).
func (b *breaker) opened(now, until time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures, b.openedAt, b.openUntil = 0, now, until
}

// closed notes that a probe succeeded.
func (b *breaker) closed() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures, b.openUntil = 0, time.Time{}
}

// breakerHolds reports whether lease must be given back unrun: its
// handler's breaker opened here after it was acquired (Item.UpdatedAt is
// the acquisition's time, from this processor's clock), and it is not the
// breaker's probe.
func (p *Processor) breakerHolds(lease *Lease) bool {
	b := p.breakers[lease.Item.Handler]
	return b != nil && !lease.Probe && b.holdsBack(lease.Item.UpdatedAt, p.cfg.clock.Now())
}

// noteBreaker counts the outcome st of lease's attempt against its
// handler's breaker: a failure of the classes it counts that makes the
// failures in a row reach Breaker.Failures pauses the handler in the
// store for the cool-down (PauseBreaker); the probe's outcome ends the
// pause (a success, or a failure the breaker does not count: the
// dependency answered) or starts a new cool-down. A lease given back
// unrun counts for nothing. The store is told with the processor's store
// timeout; its errors are logged, and the breaker then acts on this
// processor only.
//
// It reports whether the lease was a probe that failed and opened the
// breaker again: its attempt is then given back (AttemptAbandoned), not
// counted, since the job ran only to test the dependency; otherwise the
// same job, the longest due, would be the probe of every cool-down and
// spend its whole budget during a long outage.
func (p *Processor) noteBreaker(ctx context.Context, lease *Lease, st Settlement, log *jobLog) (reopened bool) {
	b := p.breakers[lease.Item.Handler]
	if b == nil && !lease.Probe || st.Outcome == AttemptAbandoned {
		return false
	}
	cfg := Breaker{}
	if b != nil {
		cfg = b.cfg
	}
	counted := (st.Outcome == AttemptRetried || st.Outcome == AttemptDeadLettered) && cfg.counts(st.Failure.Class)
	now := p.cfg.clock.Now()
	ps, _ := p.store.(PauseStore)
	handler := lease.Item.Handler
	call := func(f func(ctx context.Context) error) error {
		if ps == nil {
			return nil
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.cfg.storeTimeout)
		defer cancel()
		return f(sctx)
	}
	switch {
	case lease.Probe && counted:
		until := now.Add(cfg.coolDown())
		if b != nil {
			b.opened(now, until)
		}
		err := call(func(ctx context.Context) error {
			return ps.Pause(ctx, PauseRequest{Handler: handler, Cause: PauseBreaker, Actor: p.cfg.worker, Now: now, Until: until,
				Reason: fmt.Sprintf("the probe failed (%s): %s", st.Failure.Class, cutUTF8(st.Failure.Message, 200))})
		})
		log.WarnContext(ctx, "the breaker's probe failed: the handler stays paused, over every processor, for another cool-down; "+
			"the probe's attempt is given back, not counted", "until", until, "failure_class", string(st.Failure.Class), "failure", st.Failure.Message, "err", err)
		return true
	case lease.Probe:
		if b != nil {
			b.closed()
		}
		err := call(func(ctx context.Context) error {
			return ps.Resume(ctx, ResumeRequest{Handler: handler, Cause: PauseBreaker, Actor: p.cfg.worker, Now: now,
				Reason: "the probe " + probeOutcome(st)})
		})
		log.InfoContext(ctx, "the breaker's probe "+probeOutcome(st)+": the handler's jobs run again", "err", err)
	case b != nil && b.note(counted, now):
		until := now.Add(cfg.coolDown())
		err := call(func(ctx context.Context) error {
			return ps.Pause(ctx, PauseRequest{Handler: handler, Cause: PauseBreaker, Actor: p.cfg.worker, Now: now, Until: until,
				Reason: fmt.Sprintf("%d attempts failed in a row, the last (%s): %s", cfg.Failures, st.Failure.Class, cutUTF8(st.Failure.Message, 200))})
		})
		if err == nil || errors.Is(err, ErrPaused) {
			b.confirmed(p.cfg.clock.Now())
		}
		log.WarnContext(ctx, "the handler's breaker opened: its jobs wait, over every processor, without spending attempts, until a probe succeeds after the cool-down",
			"failures", cfg.Failures, "until", until, "err", err)
	}
	return false
}

// probeOutcome says how a probe that closes the breaker ended.
func probeOutcome(st Settlement) string {
	if st.Outcome == AttemptSucceeded {
		return "succeeded"
	}
	return fmt.Sprintf("failed with %s, which the breaker does not count: the dependency answered", st.Failure.Class)
}
