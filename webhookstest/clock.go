package webhookstest

import (
	"slices"
	"sync"
	"time"
)

// Clock is a settable webhooks.Clock for tests: give it to a verifier
// (HMACOptions.Clock), a Receiver and a Processor (webhooks.WithClock), and
// move time with Set and Advance instead of sleeping. Its AfterFunc times
// what a Processor times on its Clock (the shutdown grace). It is safe for
// concurrent use.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*timer
	waiters []timerWaiter
}

type timer struct {
	at time.Time
	f  func()
}

type timerWaiter struct {
	n    int
	done chan struct{}
}

// NewClock returns a Clock set to t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set sets the clock's time, calling the functions of the timers it
// reaches (see AfterFunc).
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	due := c.dueLocked()
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}

// Advance moves the clock's time by d, calling the functions of the
// timers it reaches (see AfterFunc).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	due := c.dueLocked()
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}

// AfterFunc arranges for f to be called once the clock reaches d after
// its time now: by the Set or Advance that moves it there, in the order
// the timers are due, before that call returns (at once, in AfterFunc's
// caller, when d is not positive). The function it returns stops the
// timer, reporting whether it did so before f was called.
func (c *Clock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	if d <= 0 {
		f()
		return func() bool { return false }
	}
	c.mu.Lock()
	tm := &timer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, tm)
	c.waiters = slices.DeleteFunc(c.waiters, func(w timerWaiter) bool {
		if len(c.timers) >= w.n {
			close(w.done)
			return true
		}
		return false
	})
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		i := slices.Index(c.timers, tm)
		if i < 0 {
			return false
		}
		c.timers = slices.Delete(c.timers, i, i+1)
		return true
	}
}

// Timers returns a channel closed once at least n timers made by
// AfterFunc wait to be called, so that a test can move the clock past a
// timer knowing it is set.
func (c *Clock) Timers(n int) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	done := make(chan struct{})
	if len(c.timers) >= n {
		close(done)
	} else {
		c.waiters = append(c.waiters, timerWaiter{n: n, done: done})
	}
	return done
}

// dueLocked removes the timers due at c.now and returns their functions,
// the earliest first.
func (c *Clock) dueLocked() []func() {
	var due []*timer
	c.timers = slices.DeleteFunc(c.timers, func(tm *timer) bool {
		if tm.at.After(c.now) {
			return false
		}
		due = append(due, tm)
		return true
	})
	slices.SortStableFunc(due, func(a, b *timer) int { return a.at.Compare(b.at) })
	fs := make([]func(), len(due))
	for i, tm := range due {
		fs[i] = tm.f
	}
	return fs
}
