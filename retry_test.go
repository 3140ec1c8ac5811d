package webhooks

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// failed is attempt number attempt failing with f at t0, for an item
// received at t0.
func failed(attempt int, f Failure) FailedAttempt {
	return FailedAttempt{Key: InboxKey{Provider: "p", EventID: "e"}, EventType: "x", Attempt: attempt, ReceivedAt: t0, Failure: f, Now: t0}
}

func TestExponentialPolicyDefaults(t *testing.T) {
	t.Parallel()
	p := ExponentialPolicy{}
	transient := Failure{Class: FailureError, Transient: true}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second}
	for i, d := range want {
		attempt := i + 1
		got := p.Decide(failed(attempt, transient))
		require.False(t, got.DeadLetter, "attempt %d of 5 must be retried", attempt)
		assert.Equal(t, t0.Add(d), got.RetryAt, "attempt %d", attempt)
	}
	assert.True(t, p.Decide(failed(5, transient)).DeadLetter, "the 5th failed attempt exhausts the default budget")
	assert.True(t, p.Decide(failed(6, transient)).DeadLetter)
}

func TestExponentialPolicyCapAndRetryAfter(t *testing.T) {
	t.Parallel()
	p := ExponentialPolicy{MaxAttempts: 100, InitialDelay: time.Second, MaxDelay: time.Minute, Multiplier: 3}
	f := Failure{Transient: true}
	assert.Equal(t, t0.Add(time.Second), p.Decide(failed(1, f)).RetryAt)
	assert.Equal(t, t0.Add(9*time.Second), p.Decide(failed(3, f)).RetryAt)
	assert.Equal(t, t0.Add(time.Minute), p.Decide(failed(5, f)).RetryAt, "3^4 s = 81 s is capped at 1 min")
	assert.Equal(t, t0.Add(time.Minute), p.Decide(failed(99, f)).RetryAt, "huge exponents stay capped")

	f.RetryAfter = 2 * time.Hour
	assert.Equal(t, t0.Add(2*time.Hour), p.Decide(failed(5, f)).RetryAt, "a larger Retry-After wins over the cap")
	f.RetryAfter = 500 * time.Millisecond
	assert.Equal(t, t0.Add(9*time.Second), p.Decide(failed(3, f)).RetryAt, "a smaller Retry-After does not shorten the delay")
}

func TestExponentialPolicyPermanent(t *testing.T) {
	t.Parallel()
	got := ExponentialPolicy{}.Decide(failed(1, Failure{Class: FailurePermanent}))
	assert.True(t, got.DeadLetter)
}

func TestExponentialPolicyJitterIsOptIn(t *testing.T) {
	t.Parallel()
	f := Failure{Transient: true}
	for range 20 {
		assert.Equal(t, t0.Add(5*time.Second), ExponentialPolicy{}.Decide(failed(1, f)).RetryAt, "no randomness unless asked")
	}
	p := ExponentialPolicy{Jitter: 0.5, Rand: func() float64 { return 0.5 }}
	assert.Equal(t, t0.Add(3750*time.Millisecond), p.Decide(failed(1, f)).RetryAt, "5s shortened by 0.5*0.5")
	p.Rand = nil
	for range 50 {
		at := p.Decide(failed(2, f)).RetryAt
		assert.True(t, !at.Before(t0.Add(5*time.Second)) && !at.After(t0.Add(10*time.Second)), "jittered delay %v out of [5s,10s]", at.Sub(t0))
	}
}

func TestExponentialPolicyValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, ExponentialPolicy{}.Validate())
	for _, p := range []ExponentialPolicy{
		{MaxAttempts: -1},
		{InitialDelay: -time.Second},
		{MaxAge: -time.Second},
		{MaxRetryAfter: -time.Second},
		{Multiplier: 0.5},
		{Jitter: 1.5},
	} {
		assert.Error(t, p.Validate(), "%+v", p)
	}
}

func TestExponentialPolicyMaxAge(t *testing.T) {
	t.Parallel()
	p := ExponentialPolicy{MaxAttempts: 100, MaxAge: time.Hour, InitialDelay: time.Minute, Multiplier: 1}
	f := failed(3, Failure{Transient: true})
	f.Now = t0.Add(58 * time.Minute)
	got := p.Decide(f)
	require.False(t, got.DeadLetter, "a retry at 59 min is inside the one-hour budget")
	assert.Equal(t, t0.Add(59*time.Minute), got.RetryAt)

	f.Now = t0.Add(59*time.Minute + time.Second)
	assert.True(t, p.Decide(f).DeadLetter, "a retry at 60 min 1 s is past the budget: dead letter, whatever the count")

	f.Failure.RetryAfter = 2 * time.Hour
	f.Now = t0
	assert.True(t, p.Decide(f).DeadLetter, "a RetryAfter past the age budget dead-letters too")

	f = failed(1, Failure{Transient: true})
	f.ReceivedAt = time.Time{}
	f.Now = t0.Add(100 * time.Hour)
	assert.False(t, p.Decide(f).DeadLetter, "an unknown receive time does not count as old")
}

func TestExponentialPolicyCapsRetryAfter(t *testing.T) {
	t.Parallel()
	year := Failure{Transient: true, RetryAfter: 365 * 24 * time.Hour}
	assert.Equal(t, t0.Add(24*time.Hour), ExponentialPolicy{}.Decide(failed(1, year)).RetryAt,
		"a year-long Retry-After is cut to the documented default of 24 hours")
	p := ExponentialPolicy{MaxRetryAfter: 10 * time.Minute}
	assert.Equal(t, t0.Add(10*time.Minute), p.Decide(failed(1, year)).RetryAt)
	assert.Equal(t, t0.Add(5*time.Second), p.Decide(failed(1, Failure{Transient: true, RetryAfter: time.Second})).RetryAt,
		"a short Retry-After still loses to the backoff")
}

func TestRetryPolicyPerEventType(t *testing.T) {
	t.Parallel()
	// A host gives payouts a short, patient policy of their own.
	payouts := ExponentialPolicy{MaxAttempts: 20, InitialDelay: time.Second, MaxDelay: time.Second}
	var policy RetryPolicy = RetryPolicyFunc(func(f FailedAttempt) RetryDecision {
		if f.Key.Provider == "stripe" && strings.HasPrefix(f.EventType, "payout.") {
			return payouts.Decide(f)
		}
		return ExponentialPolicy{}.Decide(f)
	})
	f := failed(7, Failure{Transient: true})
	f.Key.Provider, f.EventType = "stripe", "payout.failed"
	got := policy.Decide(f)
	require.False(t, got.DeadLetter, "payouts get 20 attempts")
	assert.Equal(t, t0.Add(time.Second), got.RetryAt)
	f.EventType = "invoice.paid"
	assert.True(t, policy.Decide(f).DeadLetter, "other types keep the default 5 attempts")
}

func TestFailureFromError(t *testing.T) {
	t.Parallel()
	plain := failureFromError(errors.New("boom"))
	assert.Equal(t, Failure{Class: FailureError, Message: "boom", Transient: true}, plain)

	perm := failureFromError(fmt.Errorf("wrapped: %w", Permanent(errors.New("bad input"))))
	assert.Equal(t, FailurePermanent, perm.Class)
	assert.False(t, perm.Transient)
	assert.Equal(t, "wrapped: bad input", perm.Message)

	ra := failureFromError(RetryAfter(errors.New("rate limited"), time.Minute))
	assert.True(t, ra.Transient)
	assert.Equal(t, time.Minute, ra.RetryAfter)

	nh := failureFromError(Permanent(fmt.Errorf("%w: %q", ErrNoHandler, "x")))
	assert.Equal(t, FailurePermanent, nh.Class, "a handler's Permanent(…ErrNoHandler…) is a permanent failure")

	assert.NoError(t, Permanent(nil))
	assert.NoError(t, RetryAfter(nil, time.Second))
	inner := errors.New("inner")
	assert.ErrorIs(t, Permanent(inner), inner, "Permanent keeps the chain")
	assert.ErrorIs(t, RetryAfter(inner, time.Second), inner)

	// Hosts test their handlers' classification with errors.As.
	var pe *PermanentError
	require.ErrorAs(t, fmt.Errorf("ctx: %w", Permanent(inner)), &pe)
	assert.Equal(t, inner, pe.Err)
	var rae *RetryAfterError
	require.ErrorAs(t, fmt.Errorf("ctx: %w", RetryAfter(inner, time.Minute)), &rae)
	assert.Equal(t, time.Minute, rae.After)
}

func TestStorableMessage(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "short", storableMessage("short"))
	long := strings.Repeat("x", maxFailureMessageBytes+10)
	assert.Len(t, storableMessage(long), maxFailureMessageBytes)
	// A 3-byte rune straddling the limit is dropped whole.
	s := strings.Repeat("x", maxFailureMessageBytes-1) + "€"
	assert.Len(t, storableMessage(s), maxFailureMessageBytes-1)
	assert.Equal(t, "a\uFFFDb c", storableMessage("a\xffb\x00 c"))
	// Replacement runes may lengthen the text; the limit still holds.
	got := storableMessage(strings.Repeat("\xff", maxFailureMessageBytes))
	assert.LessOrEqual(t, len(got), maxFailureMessageBytes)
	assert.True(t, utf8.ValidString(got))
}
