package webhooks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
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
//
// A pause with a Scope holds only the jobs of the events in it (see
// PauseScope), and its Handler may be EveryHandler.
type Pause struct {
	// Handler is the handler paused, or EveryHandler.
	Handler string
	// Scope narrows the pause to some of the handler's jobs; the zero
	// Scope holds all of them.
	Scope PauseScope
	Cause PauseCause
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

// PauseRequest pauses Handler's jobs in Scope (all of them for the zero
// Scope): Cause, Actor and Reason as in Pause, at Now; a breaker's pause
// holds until Until. An operator's Handler may be EveryHandler.
type PauseRequest struct {
	Handler       string
	Scope         PauseScope
	Cause         PauseCause
	Actor, Reason string
	Now           time.Time
	Until         time.Time
}

// Check reports what makes req invalid: a handler name CheckHandlerName
// refuses (other than an operator's EveryHandler), a Scope its Check
// refuses, an unknown cause, no actor or reason, or, for a breaker's
// pause, a Scope or an Until not after Now (an operator's has no Until).
func (req *PauseRequest) Check() error {
	if err := checkPaused(req.Handler, req.Scope, req.Cause); err != nil {
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

// ResumeRequest ends the pause of Handler and Scope (exactly: a pause of
// a wider or narrower scope is another pause) at Now, recording Actor and
// Reason. With Cause PauseBreaker, it ends only a breaker's pause (a
// probe's success closing the breaker leaves an operator's pause in
// force); with PauseOperator, any.
type ResumeRequest struct {
	Handler       string
	Scope         PauseScope
	Cause         PauseCause
	Actor, Reason string
	Now           time.Time
}

// Check reports what makes req invalid, as PauseRequest.Check does.
func (req *ResumeRequest) Check() error {
	if err := checkPaused(req.Handler, req.Scope, req.Cause); err != nil {
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

// checkPaused reports what makes handler and scope invalid for a pause
// or resume by cause: see PauseRequest.Check.
func checkPaused(handler string, scope PauseScope, cause PauseCause) error {
	if cause == PauseBreaker && (handler == EveryHandler || !scope.IsZero()) {
		return errors.New("webhooks: a breaker pauses one handler, all of its jobs: its PauseRequest and ResumeRequest have a handler's name and no Scope")
	}
	if handler != EveryHandler {
		if err := CheckHandlerName(handler); err != nil {
			return err
		}
	}
	return scope.Check()
}

// EveryHandler, as the Handler of an operator's PauseRequest or
// ResumeRequest, pauses or resumes the jobs of every handler (in its
// Scope): with the zero Scope, no job is acquired while it holds.
const EveryHandler = "*"

// PauseScope narrows a pause to the jobs of some events: those of
// Provider, of its Tenant, and of the event types Types matches; an empty
// field narrows nothing, and the zero PauseScope holds all of a handler's
// jobs.
//
// The store parks the jobs a scoped pause holds: a parked job is pending
// and keeps its attempts and its due time (Item.NextAttemptAt), but no
// acquisition leases it, while the handler's other jobs run as before.
// Jobs that become due while the pause holds (new events, retries, the
// next job of an ordering key, replays) are parked as they do. A job
// leased when the pause began runs on; retried, or with its lease expired,
// it waits. When no pause in force holds a parked job, it is due again at
// its due time, so jobs keep their order. An ordering key whose next job
// is held waits behind it, whatever the type of its later jobs.
type PauseScope struct {
	// Provider is the provider of the events held, as in InboxKey.
	Provider string
	// Tenant narrows Provider to one of its tenants; it needs Provider.
	Tenant string
	// Types is an event-type pattern as Mux.Handle takes ("invoice.paid",
	// "invoice.*"; leave it empty for every type, not "*").
	Types string
}

// maxScopeBytes bounds each field of a PauseScope.
const maxScopeBytes = 512

// IsZero reports whether s holds all of a handler's jobs.
func (s PauseScope) IsZero() bool { return s == PauseScope{} }

// Check reports what makes s invalid: a Tenant without a Provider, a
// field longer than 512 bytes, not valid UTF-8 or holding a NUL byte, or
// Types that is not a pattern Mux.Handle takes, or is "*".
func (s PauseScope) Check() error {
	for _, f := range []struct{ what, v string }{{"Provider", s.Provider}, {"Tenant", s.Tenant}, {"Types", s.Types}} {
		switch {
		case len(f.v) > maxScopeBytes:
			return fmt.Errorf("webhooks: PauseScope.%s is %d bytes; at most %d", f.what, len(f.v), maxScopeBytes)
		case !utf8.ValidString(f.v) || strings.ContainsRune(f.v, 0):
			return fmt.Errorf("webhooks: PauseScope.%s is not valid UTF-8 or holds a NUL byte", f.what)
		}
	}
	switch {
	case s.Tenant != "" && s.Provider == "":
		return errors.New("webhooks: PauseScope.Tenant needs a Provider: a tenant is one of a provider's")
	case s.Types == "*":
		return errors.New(`webhooks: PauseScope.Types "*" is every type: leave it empty`)
	case s.Types != "":
		return checkPattern(s.Types)
	}
	return nil
}

// Holds reports whether s holds the jobs of an event of provider and
// tenant, of type eventType.
func (s PauseScope) Holds(provider, tenant, eventType string) bool {
	return (s.Provider == "" || s.Provider == provider) &&
		(s.Tenant == "" || s.Tenant == tenant) &&
		(s.Types == "" || typeMatches(s.Types, eventType))
}

// String describes s for messages: "stripe/acme invoice.*", "every job".
func (s PauseScope) String() string {
	if s.IsZero() {
		return "every job"
	}
	var b strings.Builder
	if s.Provider != "" {
		b.WriteString(s.Provider)
		if s.Tenant != "" {
			b.WriteString("/" + s.Tenant)
		}
	}
	if s.Types != "" {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s.Types)
	}
	return b.String()
}

// ErrNotPaused is wrapped by the error of a Resume of a handler that has
// no pause it ends.
var ErrNotPaused = errors.New("webhooks: the handler is not paused")

// PauseStore is an optional LeaseStore capability: pauses of handlers,
// kept in the store so that they hold over every processor (see Pause),
// whole or narrowed to a PauseScope. A handler has one pause in force of
// each scope at most (pauses of EveryHandler are others). NewProcessor
// refuses a Breaker on a store without it.
type PauseStore interface {
	// Pause pauses req.Handler's jobs in req.Scope. A handler already
	// paused in that scope stays paused: by an operator, the pause is
	// kept, and req is refused with an error wrapping ErrPaused if it is
	// a breaker's; by a breaker, an operator's pause takes its place, and
	// a breaker's (its probe failed) starts a new cool-down. Each pause and each end is kept,
	// with its actor and reason: Pauses lists them.
	Pause(ctx context.Context, req PauseRequest) error
	// Resume ends req.Handler's pause (see ResumeRequest), or returns an
	// error wrapping ErrNotPaused.
	Resume(ctx context.Context, req ResumeRequest) error
	// Pauses returns the pauses in force, by handler, then scope
	// (provider, tenant, types), then up to ended of those that ended,
	// the latest first: the pauses' audit trail.
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
