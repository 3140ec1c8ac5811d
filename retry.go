package webhooks

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
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
	// FailureNoHandler is an event type no handler accepts.
	FailureNoHandler FailureClass = "no_handler"
	// FailureAttemptsExhausted is an item leased more times than the
	// policy's AttemptLimit because earlier attempts were never settled
	// (its worker crashed or lost the lease each time). It is dead-lettered
	// without running the handler again.
	FailureAttemptsExhausted FailureClass = "attempts_exhausted"
)

// Failure describes one failed processing attempt.
type Failure struct {
	Class FailureClass
	// Message is the error text. Stores truncate it (TruncateErrorMessage).
	Message string
	// Transient failures may succeed on retry; others are dead-lettered at
	// once.
	Transient bool
	// RetryAfter is the wait the handler asked for (see RetryAfter); zero
	// when it asked for none.
	RetryAfter time.Duration
}

// FailureFromError classifies a handler error: Permanent errors are not
// transient, RetryAfter errors carry their delay, anything else is a
// transient FailureError.
func FailureFromError(err error) Failure {
	f := Failure{Class: FailureError, Message: err.Error(), Transient: true}
	var ra *retryAfterError
	if errors.As(err, &ra) {
		f.RetryAfter = ra.after
	}
	if IsPermanent(err) {
		f.Class = FailurePermanent
		f.Transient = false
		if errors.Is(err, ErrNoHandler) {
			f.Class = FailureNoHandler
		}
	}
	return f
}

// RetryDecision is what happens after a failed attempt.
type RetryDecision struct {
	// DeadLetter ends processing: the item becomes dead.
	DeadLetter bool
	// RetryAt is when the item is due again, unless DeadLetter.
	RetryAt time.Time
}

// RetryAtTime returns a decision to retry at t.
func RetryAtTime(t time.Time) RetryDecision { return RetryDecision{RetryAt: t} }

// DeadLetterDecision returns a decision to dead-letter.
func DeadLetterDecision() RetryDecision { return RetryDecision{DeadLetter: true} }

// RetryPolicy decides what happens after a failed attempt. attempt is the
// number of the attempt that failed, starting at 1. Implementations must be
// safe for concurrent use.
type RetryPolicy interface {
	Decide(attempt int, failure Failure, now time.Time) RetryDecision
}

// AttemptLimiter is an optional RetryPolicy capability: the most attempts an
// item may have. The Processor dead-letters, without running it, an item
// leased for an attempt beyond the limit, which only happens when earlier
// attempts were never settled (crash loops).
type AttemptLimiter interface {
	AttemptLimit() int
}

// Defaults of ExponentialPolicy.
const (
	DefaultMaxAttempts  = 5
	DefaultInitialDelay = 5 * time.Second
	DefaultMaxDelay     = time.Hour
	DefaultMultiplier   = 2.0
)

// ExponentialPolicy retries transient failures after
// InitialDelay × Multiplier^(attempt−1), capped at MaxDelay; a larger
// Failure.RetryAfter wins. Non-transient failures, and failures of attempt
// MaxAttempts, are dead-lettered. The zero value uses the defaults. There is
// no randomness unless Jitter is set.
type ExponentialPolicy struct {
	// MaxAttempts is the total number of attempts, the first included.
	// Defaults to DefaultMaxAttempts.
	MaxAttempts int
	// InitialDelay is the wait after the first failure. Defaults to
	// DefaultInitialDelay.
	InitialDelay time.Duration
	// MaxDelay caps the computed delay (not a RetryAfter). Defaults to
	// DefaultMaxDelay.
	MaxDelay time.Duration
	// Multiplier is the growth factor per attempt. Defaults to
	// DefaultMultiplier.
	Multiplier float64
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
		return fmt.Errorf("webhooks: ExponentialPolicy.MaxAttempts is %d; it must be >= 0 (0 means %d)", p.MaxAttempts, DefaultMaxAttempts)
	case p.InitialDelay < 0 || p.MaxDelay < 0:
		return errors.New("webhooks: ExponentialPolicy delays must not be negative")
	case p.Multiplier != 0 && p.Multiplier < 1:
		return fmt.Errorf("webhooks: ExponentialPolicy.Multiplier is %v; it must be >= 1", p.Multiplier)
	case p.Jitter < 0 || p.Jitter > 1 || math.IsNaN(p.Jitter):
		return fmt.Errorf("webhooks: ExponentialPolicy.Jitter is %v; it must be between 0 and 1", p.Jitter)
	}
	return nil
}

// AttemptLimit implements AttemptLimiter: MaxAttempts, or its default.
func (p ExponentialPolicy) AttemptLimit() int { return cmpOr(p.MaxAttempts, DefaultMaxAttempts) }

// Decide implements RetryPolicy.
func (p ExponentialPolicy) Decide(attempt int, failure Failure, now time.Time) RetryDecision {
	maxAttempts := cmpOr(p.MaxAttempts, DefaultMaxAttempts)
	if !failure.Transient || attempt >= maxAttempts {
		return DeadLetterDecision()
	}
	delay := p.Delay(attempt)
	if failure.RetryAfter > delay {
		delay = failure.RetryAfter
	}
	return RetryAtTime(now.Add(delay))
}

// Delay returns the computed delay after failed attempt number attempt,
// before any RetryAfter, with jitter applied when configured.
func (p ExponentialPolicy) Delay(attempt int) time.Duration {
	initial := cmpOr(p.InitialDelay, DefaultInitialDelay)
	maxDelay := cmpOr(p.MaxDelay, DefaultMaxDelay)
	mult := cmpOr(p.Multiplier, DefaultMultiplier)
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

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks err as permanent: the event is dead-lettered at once,
// without retries. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err, or any error it wraps, was marked with
// Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

type retryAfterError struct {
	err   error
	after time.Duration
}

func (e *retryAfterError) Error() string { return e.err.Error() }
func (e *retryAfterError) Unwrap() error { return e.err }

// RetryAfter marks err as transient with a requested wait of at least d before
// the next attempt (for example a downstream's Retry-After). The policy uses
// d when it is longer than its own delay. RetryAfter(nil, d) is nil.
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &retryAfterError{err: err, after: d}
}
