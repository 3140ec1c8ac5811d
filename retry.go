package webhooks

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// FailureClass says what kind of failure a handler attempt had.
type FailureClass string

// Failure classes recorded by the Processor.
const (
	// FailureError is an ordinary (transient) error from a handler.
	FailureError FailureClass = "error"
	// FailurePermanent is an error marked with Permanent.
	FailurePermanent FailureClass = "permanent"
	// FailurePanic is a recovered handler panic. It is transient: a panic
	// is usually a bug that a fix and a retry (or replay) resolve.
	FailurePanic FailureClass = "panic"
	// FailureTimeout is a handler that overran the processor's handler
	// timeout.
	FailureTimeout FailureClass = "timeout"
	// FailureNoHandler notes an event whose type no handler accepts. It
	// is no failure: the Processor acknowledges such an event, and its
	// attempt, succeeded, carries this class in the history.
	FailureNoHandler FailureClass = "no_handler"
	// FailureLeaseExpired is an attempt that ended without being settled:
	// its lease expired because the worker crashed, stalled, lost its
	// lease or never received it (the reply of its acquisition was lost).
	// It is transient; the Processor asks the RetryPolicy
	// about it when it takes the item over (see Lease.Reclaimed), and
	// dead-letters the item with this class, without running the handler
	// again, when the policy allows no more attempts.
	FailureLeaseExpired FailureClass = "lease_expired"
	// FailureSkipped notes an event its handler skipped as stale (see
	// Skip). Like FailureNoHandler it is no failure: the attempt
	// succeeded, and the key's applied version stays as it was.
	FailureSkipped FailureClass = "skipped"
	// FailureHandlerGone is a job whose handler was retired (see
	// Handler.Retired): it is dead-lettered without running, and can be
	// replayed if the handler comes back.
	FailureHandlerGone FailureClass = "handler_gone"
)

// Failure describes one failed processing attempt.
type Failure struct {
	Class FailureClass
	// Message is the error text.
	Message string
	// Transient failures may succeed on retry; others are dead-lettered at
	// once.
	Transient bool
	// RetryAfter is the wait the handler asked for (see RetryAfter); zero
	// when it asked for none.
	RetryAfter time.Duration
}

// failureFromError classifies a handler error: Permanent errors are not
// transient, RetryAfter errors carry their delay, anything else is a
// transient FailureError.
func failureFromError(err error) Failure {
	f := Failure{Class: FailureError, Message: err.Error(), Transient: true}
	if ra, ok := errors.AsType[*RetryAfterError](err); ok {
		f.RetryAfter = ra.After
	}
	if _, ok := errors.AsType[*PermanentError](err); ok {
		f.Class = FailurePermanent
		f.Transient = false
	}
	return f
}

// maxFailureMessageBytes is how much of a failure message the Processor
// hands to the store.
const maxFailureMessageBytes = 2048

// storableMessage makes a failure message storable everywhere: invalid
// UTF-8 becomes U+FFFD, NUL bytes are dropped, and the result is cut to at
// most maxFailureMessageBytes bytes without splitting a UTF-8 sequence.
func storableMessage(msg string) string {
	msg = strings.ReplaceAll(strings.ToValidUTF8(msg, "\uFFFD"), "\x00", "")
	return cutUTF8(msg, maxFailureMessageBytes)
}

// FailedAttempt is what a RetryPolicy decides about: which item failed, on
// which attempt, and how.
type FailedAttempt struct {
	Key InboxKey
	// Handler is the job's handler ("" the default), so a policy can give
	// an ordered handler, whose failing head holds its key, a shorter
	// budget.
	Handler   string
	EventType string
	// Attempt is the number of the attempt that failed, starting at 1.
	Attempt int
	// ReceivedAt is when the webhook was first received.
	ReceivedAt time.Time
	Failure    Failure
	// Now is the current time of the Processor's clock.
	Now time.Time
}

// RetryDecision is what happens after a failed attempt.
type RetryDecision struct {
	// DeadLetter ends processing: the item becomes dead.
	DeadLetter bool
	// RetryAt is when the item is due again, unless DeadLetter. A time
	// before the failure's Now is taken as Now.
	RetryAt time.Time
}

// RetryPolicy decides what happens after a failed attempt. A policy sees
// the item's provider, tenant and event type, so a host can give one kind
// of event its own rules (see RetryPolicyFunc). Implementations must be
// safe for concurrent use.
type RetryPolicy interface {
	Decide(f FailedAttempt) RetryDecision
}

// RetryPolicyFunc adapts a function to the RetryPolicy interface.
type RetryPolicyFunc func(f FailedAttempt) RetryDecision

// Decide calls p(f).
func (p RetryPolicyFunc) Decide(f FailedAttempt) RetryDecision { return p(f) }

// Defaults of ExponentialPolicy's fields, which its documentation gives.
const (
	defaultMaxAttempts   = 5
	defaultInitialDelay  = 5 * time.Second
	defaultMaxDelay      = time.Hour
	defaultMultiplier    = 2.0
	defaultMaxRetryAfter = 24 * time.Hour
)

// ExponentialPolicy retries transient failures after
// InitialDelay × Multiplier^(attempt−1), capped at MaxDelay; a larger
// Failure.RetryAfter (itself capped at MaxRetryAfter) wins. Non-transient
// failures, failures of attempt MaxAttempts, and failures whose retry would
// fall more than MaxAge after the webhook was received are dead-lettered.
// The zero value uses the defaults. There is no randomness unless Jitter is
// set.
type ExponentialPolicy struct {
	// MaxAttempts is the total number of attempts, the first included.
	// Defaults to 5.
	MaxAttempts int
	// MaxAge bounds retries by time as MaxAttempts does by count: a retry
	// that would start later than MaxAge after the webhook was received
	// is not made, and the item is dead-lettered instead. Defaults to 0:
	// no limit by age.
	MaxAge time.Duration
	// InitialDelay is the wait after the first failure. Defaults to 5
	// seconds.
	InitialDelay time.Duration
	// MaxDelay caps the computed delay (not a RetryAfter). Defaults to one
	// hour.
	MaxDelay time.Duration
	// Multiplier is the growth factor per attempt. Defaults to 2.
	Multiplier float64
	// MaxRetryAfter caps the wait a handler asks for with RetryAfter, so a
	// buggy or hostile value (a downstream's "Retry-After: 31536000")
	// cannot park an item for a year. Defaults to 24 hours.
	MaxRetryAfter time.Duration
	// Jitter, between 0 and 1, shortens each computed delay by a random
	// fraction of up to Jitter, spreading retries of events that failed
	// together. Defaults to 0: no randomness.
	Jitter float64
	// Rand returns a number in [0, 1) for jitter. Defaults to math/rand/v2.
	Rand func() float64
}

// Validate reports a configuration error, such as a negative delay.
func (p ExponentialPolicy) Validate() error {
	switch {
	case p.MaxAttempts < 0:
		return fmt.Errorf("webhooks: ExponentialPolicy.MaxAttempts is %d; it must be >= 0 (0 means %d)", p.MaxAttempts, defaultMaxAttempts)
	case p.InitialDelay < 0 || p.MaxDelay < 0 || p.MaxAge < 0 || p.MaxRetryAfter < 0:
		return errors.New("webhooks: ExponentialPolicy durations (InitialDelay, MaxDelay, MaxAge, MaxRetryAfter) must not be negative")
	case p.Multiplier != 0 && p.Multiplier < 1:
		return fmt.Errorf("webhooks: ExponentialPolicy.Multiplier is %v; it must be >= 1", p.Multiplier)
	case p.Jitter < 0 || p.Jitter > 1 || math.IsNaN(p.Jitter):
		return fmt.Errorf("webhooks: ExponentialPolicy.Jitter is %v; it must be between 0 and 1", p.Jitter)
	}
	return nil
}

// Decide implements RetryPolicy.
func (p ExponentialPolicy) Decide(f FailedAttempt) RetryDecision {
	if !f.Failure.Transient || f.Attempt >= cmp0(p.MaxAttempts, defaultMaxAttempts) {
		return RetryDecision{DeadLetter: true}
	}
	delay := p.Delay(f.Attempt)
	if ra := min(f.Failure.RetryAfter, cmp0(p.MaxRetryAfter, defaultMaxRetryAfter)); ra > delay {
		delay = ra
	}
	at := f.Now.Add(delay)
	if p.MaxAge > 0 && !f.ReceivedAt.IsZero() && at.After(f.ReceivedAt.Add(p.MaxAge)) {
		return RetryDecision{DeadLetter: true}
	}
	return RetryDecision{RetryAt: at}
}

// Delay returns the computed delay after failed attempt number attempt,
// before any RetryAfter, with jitter applied when configured.
func (p ExponentialPolicy) Delay(attempt int) time.Duration {
	initial := cmp0(p.InitialDelay, defaultInitialDelay)
	maxDelay := cmp0(p.MaxDelay, defaultMaxDelay)
	mult := cmp0(p.Multiplier, defaultMultiplier)
	if attempt < 1 {
		attempt = 1
	}
	d := float64(initial) * math.Pow(mult, float64(attempt-1))
	if d > float64(maxDelay) || math.IsInf(d, 0) || math.IsNaN(d) {
		d = float64(maxDelay)
	}
	if p.Jitter > 0 {
		r := p.Rand
		if r == nil {
			r = rand.Float64
		}
		d -= d * p.Jitter * r()
	}
	return time.Duration(d)
}

// cmp0 returns v, or def when v is the zero value.
func cmp0[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
