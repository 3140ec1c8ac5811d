package webhooks

import "context"

// Observer is told what a Receiver and a Processor do, for metrics and
// traces; package otelwebhooks implements it with OpenTelemetry. Without one
// (the default) nothing is measured and nothing is called. Methods are
// called on the goroutine doing the work, so they must be quick, and safe
// for concurrent use. They are given keys, types and outcomes, never a
// payload, a header or a secret.
type Observer interface {
	// StartReceive is called when a Receiver begins to receive a webhook
	// for route. It returns the context for the rest of the receive (one
	// carrying a span, say) and a link to it that is stored with the item,
	// so the item's attempts can point back to its receive (a W3C
	// traceparent, say; "" for none).
	StartReceive(ctx context.Context, route Route) (context.Context, string)
	// EndReceive is called with what the receive did (res.Route says
	// where it was delivered, even for a rejected request) and the error
	// Receive returns, on the context StartReceive returned.
	EndReceive(ctx context.Context, res ReceiveResult, err error)
	// StartAttempt is called before an event is dispatched; ev.TraceLink
	// is its receive's link. It returns the context for the dispatch.
	StartAttempt(ctx context.Context, ev Event) context.Context
	// EndAttempt is called when the dispatch is over, with the settlement
	// the Processor asks of the store (its outcome and failure); for an
	// attempt whose lease was lost while it ran, Outcome is "lease_lost"
	// and nothing is settled. It also comes without a StartAttempt, on a
	// context of no attempt's, for an item dead-lettered without a
	// dispatch because its earlier attempts crashed and the retry policy
	// allows no more.
	EndAttempt(ctx context.Context, ev Event, s Settlement)
}

// WithObserver sets the Observer of a Receiver and a Processor. Defaults to
// none.
func WithObserver(o Observer) interface {
	ReceiverOption
	ProcessorOption
} {
	return sharedOption{
		receiver:  func(c *receiverConfig) { c.observer = o },
		processor: func(c *processorConfig) { c.observer = o },
	}
}
