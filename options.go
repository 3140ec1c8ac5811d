package webhooks

import (
	"log/slog"
	"time"
)

// sharedOption is an option of both a Receiver and a Processor, so one
// clock, logger or timeout can be given to both.
type sharedOption struct {
	receiver  func(*receiverConfig)
	processor func(*processorConfig)
}

func (o sharedOption) applyReceiver(c *receiverConfig)   { o.receiver(c) }
func (o sharedOption) applyProcessor(c *processorConfig) { o.processor(c) }

// WithClock sets the clock for receive times, replay expiry, lease and retry
// times. Tests pass a settable clock (webhookstest.Clock) to drive time
// without sleeping. Defaults to the system clock.
func WithClock(clock Clock) interface {
	ReceiverOption
	ProcessorOption
} {
	return sharedOption{
		receiver:  func(c *receiverConfig) { c.clock = clock },
		processor: func(c *processorConfig) { c.clock = clock },
	}
}

// WithLogger sets the logger for rejected and failed webhooks, retries,
// dead letters and store errors. Logs never hold a secret or a payload.
// Defaults to slog.Default(), so a wrong secret or a store outage is
// visible without extra wiring.
func WithLogger(l *slog.Logger) interface {
	ReceiverOption
	ProcessorOption
} {
	return sharedOption{
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
