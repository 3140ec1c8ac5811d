package webhooks_test

import (
	"log/slog"
	"sync/atomic"
	"time"
)

var base = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// fakeClock is a settable clock for tests.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.ns.Store(t.UnixNano())
	return c
}
func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }
func (c *fakeClock) Set(t time.Time)         { c.ns.Store(t.UnixNano()) }

// discard is a logger for tests that do not look at logs.
var discard = slog.New(slog.DiscardHandler)
