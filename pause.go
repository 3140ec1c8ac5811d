package webhooks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// PauseCause says who paused a handler.
type PauseCause string

// Pause causes.
const (
	// PauseOperator: an operator paused the handler; it holds until
	// resumed.
	PauseOperator PauseCause = "operator"
	// PauseBreaker: the handler's Breaker opened after consecutive
	// failures; it holds for a cool-down, then lets one probe run, and
	// ends when the probe succeeds.
	PauseBreaker PauseCause = "breaker"
)

// Pause stops the acquisition of one handler's jobs over every processor
// sharing the store (a PauseStore): while it holds, Acquire with that
// Handler leases nothing, so the handler's jobs keep being received and
// stored, keep their order, and spend no attempts. A breaker's pause
// holds until Until, its cool-down's end; then, once no lease of the
// handler is unexpired (one granted before the pause may still run), one
// acquisition (of any caller) may lease one job, the probe (Lease.Probe),
// and no other acquisition leases one while the probe's lease, or any
// other of the handler's, is unexpired, however often it is extended.
type Pause struct {
	Handler string
	Cause   PauseCause
	// Actor and Reason say who paused the handler and why; for a
	// breaker, the processor's worker identity and the failures that
	// opened it.
	Actor, Reason string
	// Since is when the pause began.
	Since time.Time
	// Until is, for a breaker's pause, when its cool-down ends; zero for
	// an operator's.
	Until time.Time
	// ProbeUntil is, while a breaker's probe runs, when its lease first
	// expires (its acquisition's Now plus LeaseDuration; extending the
	// lease does not move it); zero otherwise.
	ProbeUntil time.Time
	// EndedAt, EndedBy and EndReason say when, by whom and why the
	// pause ended; zero while it holds.
	EndedAt            time.Time
	EndedBy, EndReason string
}

// PauseRequest pauses Handler: Cause, Actor and Reason as in Pause, at
// Now; a breaker's pause holds until Until.
type PauseRequest struct {
	Handler       string
	Cause         PauseCause
	Actor, Reason string
	Now           time.Time
	Until         time.Time
}

// Check reports what makes req invalid: a handler name CheckHandlerName
// refuses, an unknown cause, no actor or reason, or, for a breaker's
// pause, an Until not after Now (an operator's has none).
func (req *PauseRequest) Check() error {
	if err := CheckHandlerName(req.Handler); err != nil {
		return err
	}
	switch {
	case req.Cause != PauseOperator && req.Cause != PauseBreaker:
		return fmt.Errorf("webhooks: PauseRequest.Cause is %q; it must be %q or %q", req.Cause, PauseOperator, PauseBreaker)
	case req.Actor == "" || req.Reason == "":
		return errors.New("webhooks: PauseRequest needs an Actor and a Reason, for the audit trail")
	case req.Cause == PauseBreaker && !req.Until.After(req.Now):
		return fmt.Errorf("webhooks: a breaker's PauseRequest.Until (%v) must be after Now (%v)", req.Until, req.Now)
	case req.Cause == PauseOperator && !req.Until.IsZero():
		return errors.New("webhooks: an operator's PauseRequest has no Until: it holds until resumed")
	}
	return nil
}

// ResumeRequest ends Handler's pause at Now, recording Actor and Reason.
// With Cause PauseBreaker, it ends only a breaker's pause (a probe's
// success closing the breaker leaves an operator's pause in force); with
// PauseOperator, any.
type ResumeRequest struct {
	Handler       string
	Cause         PauseCause
	Actor, Reason string
	Now           time.Time
}

// Check reports what makes req invalid, as PauseRequest.Check does.
func (req *ResumeRequest) Check() error {
	if err := CheckHandlerName(req.Handler); err != nil {
		return err
	}
	switch {
	case req.Cause != PauseOperator && req.Cause != PauseBreaker:
		return fmt.Errorf("webhooks: ResumeRequest.Cause is %q; it must be %q or %q", req.Cause, PauseOperator, PauseBreaker)
	case req.Actor == "" || req.Reason == "":
		return errors.New("webhooks: ResumeRequest needs an Actor and a Reason, for the audit trail")
	}
	return nil
}

// ErrNotPaused is wrapped by the error of a Resume of a handler that has
// no pause it ends.
var ErrNotPaused = errors.New("webhooks: the handler is not paused")

// PauseStore is an optional LeaseStore capability: pauses of handlers,
// kept in the store so that they hold over every processor (see Pause).
// A handler has one pause in force at most. NewProcessor refuses a
// Breaker on a store without it.
type PauseStore interface {
	// Pause pauses req.Handler. A handler already paused stays paused:
	// by an operator, the pause is kept, and req is refused with an
	// error wrapping ErrPaused if it is a breaker's; by a breaker, an
	// operator's pause takes its place, and a breaker's (its probe
	// failed) starts a new cool-down. Each pause and each end is kept,
	// with its actor and reason: Pauses lists them.
	Pause(ctx context.Context, req PauseRequest) error
	// Resume ends req.Handler's pause (see ResumeRequest), or returns an
	// error wrapping ErrNotPaused.
	Resume(ctx context.Context, req ResumeRequest) error
	// Pauses returns the pauses in force, by handler, then up to ended of
	// those that ended, the latest first: the pauses' audit trail.
	Pauses(ctx context.Context, ended int) ([]Pause, error)
}

// ErrPaused is wrapped by the error of a breaker's Pause of a handler an
// operator paused.
var ErrPaused = errors.New("webhooks: the handler is paused by an operator")

// Breaker pauses a handler whose dependency is down, so that its jobs
// wait instead of spending their retries: after Failures consecutive
// attempts of the handler failed with one of Classes, the Processor
// pauses it (PauseBreaker) over every processor for CoolDown; then one
// job runs as a probe: its success resumes the handler, its failure (of
// one of Classes) pauses it for another CoolDown and is given back
// (AttemptAbandoned: its history shows an abandoned attempt and its
// budget is not spent, as the job ran only to test the dependency; the
// pause's reason has the failure). Each Processor counts the attempts it
// runs. The zero Breaker is off.
type Breaker struct {
	// Failures opens the breaker; 0 is off.
	Failures int
	// Classes are the failures counted; none means FailureError and
	// FailureTimeout, a dependency's usual signs.
	Classes []FailureClass
	// CoolDown is how long the breaker stays open before its probe; 0
	// means DefaultBreakerCoolDown.
	CoolDown time.Duration
}

// DefaultBreakerCoolDown is a Breaker's CoolDown when it sets none.
const DefaultBreakerCoolDown = 30 * time.Second

// counts reports whether b counts a failure of class c.
func (b Breaker) counts(c FailureClass) bool {
	if len(b.Classes) == 0 {
		return c == FailureError || c == FailureTimeout
	}
	return slices.Contains(b.Classes, c)
}

// coolDown is b's CoolDown or the default.
func (b Breaker) coolDown() time.Duration {
	if b.CoolDown > 0 {
		return b.CoolDown
	}
	return DefaultBreakerCoolDown
}

// Check reports what makes b invalid: negative Failures or CoolDown, or
// Classes without Failures.
func (b Breaker) Check() error {
	switch {
	case b.Failures < 0:
		return fmt.Errorf("webhooks: Breaker.Failures is %d; it must not be negative (0 is off)", b.Failures)
	case b.CoolDown < 0:
		return fmt.Errorf("webhooks: Breaker.CoolDown is %v; it must not be negative", b.CoolDown)
	case b.Failures == 0 && (len(b.Classes) > 0 || b.CoolDown > 0):
		return errors.New("webhooks: a Breaker with Classes or a CoolDown needs Failures, how many consecutive failures open it")
	}
	return nil
}
