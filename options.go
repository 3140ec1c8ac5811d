package webhooks

import (
	"log/slog"
	"time"
)

// SharedOption is an option of both a Receiver and a Processor, so that
// one clock, logger or observer serves both: WithClock, WithLogger and
// WithObserver. It is a ReceiverOption and a ProcessorOption.
type SharedOption struct {
	receiver  func(*receiverConfig)
	processor func(*processorConfig)
}

func (o SharedOption) applyReceiver(c *receiverConfig) {
	if o.receiver != nil {
		o.receiver(c)
	}
}

func (o SharedOption) applyProcessor(c *processorConfig) {
	if o.processor != nil {
		o.processor(c)
	}
}

// WithClock sets the clock for receive times, replay expiry, lease and retry
// times. Tests pass a settable clock (webhookstest.Clock) to drive time
// without sleeping. Defaults to the system clock.
func WithClock(clock Clock) SharedOption {
	return SharedOption{
		receiver:  func(c *receiverConfig) { c.clock = clock },
		processor: func(c *processorConfig) { c.clock = clock },
	}
}

// WithLogger sets the logger for rejected and failed webhooks, retries,
// dead letters and store errors. Logs never hold a secret or a payload.
// Defaults to slog.Default(), so a wrong secret or a store outage is
// visible without extra wiring.
func WithLogger(l *slog.Logger) SharedOption {
	return SharedOption{
		receiver:  func(c *receiverConfig) { c.logger = l },
		processor: func(c *processorConfig) { c.logger = l },
	}
}

// clockOrSystem returns c, or the system clock when c is nil.
func clockOrSystem(c Clock) Clock {
	if c == nil {
		return SystemClock{}
	}
	return c
}

// afterFunc calls f once d has passed on c: by c's own timers when it has
// them (see Clock), by the system's otherwise. stop stops the timer.
func afterFunc(c Clock, d time.Duration, f func()) (stop func() bool) {
	if tc, ok := c.(interface {
		AfterFunc(d time.Duration, f func()) (stop func() bool)
	}); ok {
		return tc.AfterFunc(d, f)
	}
	return time.AfterFunc(d, f).Stop
}

// loggerOrDefault returns l, or slog.Default() when l is nil.
func loggerOrDefault(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}
