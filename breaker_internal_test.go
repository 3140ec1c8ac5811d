package webhooks

import (
	"testing"
	"time"
)

// TestBreakerHoldsBackOnlyEarlierLeases: once a processor has opened a
// breaker, it gives back every lease until the store holds the pause,
// then those acquired before that, until the cool-down ends; a lease
// acquired after the store held it was granted by a store that knew
// (another processor's probe may have resumed the handler), and runs. A probe closes it; a failed probe opens it again from then.
func TestBreakerHoldsBackOnlyEarlierLeases(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := &breaker{cfg: Breaker{Failures: 2, CoolDown: time.Minute}}
	if b.note(true, t0) || !b.note(true, t0.Add(time.Second)) {
		t.Fatal("two counted failures in a row: want the second to open the breaker")
	}
	opened := t0.Add(time.Second)
	if !b.holdsBack(opened.Add(time.Millisecond), opened.Add(time.Second)) {
		t.Error("before the store holds the pause, a lease acquired after the breaker opened: want it held back (the store may have granted it)")
	}
	b.confirmed(opened)
	for _, c := range []struct {
		acquired, now time.Time
		want          bool
	}{
		{opened.Add(-time.Millisecond), opened.Add(time.Second), true},
		{opened.Add(time.Millisecond), opened.Add(time.Second), false},
		{opened.Add(-time.Millisecond), opened.Add(time.Minute), false},
	} {
		if got := b.holdsBack(c.acquired, c.now); got != c.want {
			t.Errorf("holdsBack(acquired %v after opening, at %v after) = %t; want %t", c.acquired.Sub(opened), c.now.Sub(opened), got, c.want)
		}
	}
	if b.note(true, opened.Add(2*time.Second)) {
		t.Error("a failure while the breaker is open (an attempt begun before) opened it again")
	}
	b.opened(opened.Add(2*time.Minute), opened.Add(3*time.Minute))
	if !b.holdsBack(opened.Add(time.Minute), opened.Add(2*time.Minute+time.Second)) {
		t.Error("after a failed probe, a lease acquired before it: want it held back")
	}
	b.closed()
	if b.holdsBack(opened, opened.Add(2*time.Minute+time.Second)) {
		t.Error("closed: want nothing held back")
	}
	if b.note(false, opened) || b.note(true, opened.Add(3*time.Minute)) {
		t.Error("a success clears the count: one failure after it must not open the breaker")
	}
}
