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

func TestExponentialPolicyDefaults(t *testing.T) {
	t.Parallel()
	p := ExponentialPolicy{}
	transient := Failure{Class: FailureError, Transient: true}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second}
	for i, d := range want {
		attempt := i + 1
		got := p.Decide(attempt, transient, t0)
		require.False(t, got.DeadLetter, "attempt %d of 5 must be retried", attempt)
		assert.Equal(t, t0.Add(d), got.RetryAt, "attempt %d", attempt)
	}
	assert.True(t, p.Decide(5, transient, t0).DeadLetter, "the 5th failed attempt exhausts the default budget")
	assert.True(t, p.Decide(6, transient, t0).DeadLetter)
}

func TestExponentialPolicyCapAndRetryAfter(t *testing.T) {
	t.Parallel()
	p := ExponentialPolicy{MaxAttempts: 100, InitialDelay: time.Second, MaxDelay: time.Minute, Multiplier: 3}
	f := Failure{Transient: true}
	assert.Equal(t, t0.Add(time.Second), p.Decide(1, f, t0).RetryAt)
	assert.Equal(t, t0.Add(9*time.Second), p.Decide(3, f, t0).RetryAt)
	assert.Equal(t, t0.Add(time.Minute), p.Decide(5, f, t0).RetryAt, "3^4 s = 81 s is capped at 1 min")
	assert.Equal(t, t0.Add(time.Minute), p.Decide(99, f, t0).RetryAt, "huge exponents stay capped")

	f.RetryAfter = 2 * time.Hour
	assert.Equal(t, t0.Add(2*time.Hour), p.Decide(5, f, t0).RetryAt, "a larger Retry-After wins over the cap")
	f.RetryAfter = 500 * time.Millisecond
	assert.Equal(t, t0.Add(9*time.Second), p.Decide(3, f, t0).RetryAt, "a smaller Retry-After does not shorten the delay")
}

func TestExponentialPolicyPermanent(t *testing.T) {
	t.Parallel()
	got := ExponentialPolicy{}.Decide(1, Failure{Class: FailurePermanent}, t0)
	assert.True(t, got.DeadLetter)
}

func TestExponentialPolicyJitterIsOptIn(t *testing.T) {
	t.Parallel()
	f := Failure{Transient: true}
	for range 20 {
		assert.Equal(t, t0.Add(5*time.Second), ExponentialPolicy{}.Decide(1, f, t0).RetryAt, "no randomness unless asked")
	}
	p := ExponentialPolicy{Jitter: 0.5, Rand: func() float64 { return 0.5 }}
	assert.Equal(t, t0.Add(3750*time.Millisecond), p.Decide(1, f, t0).RetryAt, "5s shortened by 0.5*0.5")
	p.Rand = nil
	for range 50 {
		at := p.Decide(2, f, t0).RetryAt
		assert.True(t, !at.Before(t0.Add(5*time.Second)) && !at.After(t0.Add(10*time.Second)), "jittered delay %v out of [5s,10s]", at.Sub(t0))
	}
}

func TestExponentialPolicyValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, ExponentialPolicy{}.Validate())
	for _, p := range []ExponentialPolicy{
		{MaxAttempts: -1},
		{InitialDelay: -time.Second},
		{Multiplier: 0.5},
		{Jitter: 1.5},
	} {
		assert.Error(t, p.Validate(), "%+v", p)
	}
}

func TestFailureFromError(t *testing.T) {
	t.Parallel()
	plain := FailureFromError(errors.New("boom"))
	assert.Equal(t, Failure{Class: FailureError, Message: "boom", Transient: true}, plain)

	perm := FailureFromError(fmt.Errorf("wrapped: %w", Permanent(errors.New("bad input"))))
	assert.Equal(t, FailurePermanent, perm.Class)
	assert.False(t, perm.Transient)
	assert.Equal(t, "wrapped: bad input", perm.Message)

	ra := FailureFromError(RetryAfter(errors.New("rate limited"), time.Minute))
	assert.True(t, ra.Transient)
	assert.Equal(t, time.Minute, ra.RetryAfter)

	nh := FailureFromError(Permanent(fmt.Errorf("%w: %q", ErrNoHandler, "x")))
	assert.Equal(t, FailureNoHandler, nh.Class)

	assert.NoError(t, Permanent(nil))
	assert.NoError(t, RetryAfter(nil, time.Second))
	inner := errors.New("inner")
	assert.ErrorIs(t, Permanent(inner), inner, "Permanent keeps the chain")
	assert.ErrorIs(t, RetryAfter(inner, time.Second), inner)
}

func TestTruncateErrorMessage(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "short", TruncateErrorMessage("short"))
	long := strings.Repeat("x", MaxErrorMessageBytes+10)
	assert.Len(t, TruncateErrorMessage(long), MaxErrorMessageBytes)
	// A 3-byte rune straddling the limit is dropped whole.
	s := strings.Repeat("x", MaxErrorMessageBytes-1) + "€"
	got := TruncateErrorMessage(s)
	assert.Len(t, got, MaxErrorMessageBytes-1)
}

func TestDeadLetterCursorRoundTrip(t *testing.T) {
	t.Parallel()
	c := DeadLetterCursor{DeadAt: t0.Add(123456 * time.Microsecond), Key: InboxKey{Provider: "p", Tenant: "", EventID: "e/1"}}
	got, err := ParseDeadLetterCursor(c.String())
	require.NoError(t, err)
	assert.True(t, got.DeadAt.Equal(c.DeadAt))
	assert.Equal(t, c.Key, got.Key)
	for _, bad := range []string{"", "!!!", "e30", "bm90IGpzb24"} { // "", junk, "{}", "not json"
		_, err := ParseDeadLetterCursor(bad)
		assert.ErrorIs(t, err, ErrInvalidCursor, "cursor %q", bad)
	}
	assert.True(t, c.Before(c.DeadAt.Add(-time.Nanosecond), c.Key), "older items come after the cursor")
	assert.True(t, c.Before(c.DeadAt, InboxKey{Provider: "a"}), "same time, smaller key: after the cursor")
	assert.False(t, c.Before(c.DeadAt, c.Key), "the cursor's own item is not after it")
	assert.Equal(t, -1, InboxKey{Provider: "a", Tenant: "z"}.Compare(InboxKey{Provider: "b"}), "provider first")
	assert.Equal(t, 1, InboxKey{Provider: "a", Tenant: "t", EventID: "a"}.Compare(InboxKey{Provider: "a", EventID: "z"}), "then tenant")
	assert.Equal(t, 0, c.Key.Compare(c.Key))
}

func TestTruncateErrorMessageSanitizes(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "a\uFFFDb c", TruncateErrorMessage("a\xffb\x00 c"))
	// Replacement runes may lengthen the text; the limit still holds.
	got := TruncateErrorMessage(strings.Repeat("\xff", MaxErrorMessageBytes))
	assert.LessOrEqual(t, len(got), MaxErrorMessageBytes)
	assert.True(t, utf8.ValidString(got))
}
