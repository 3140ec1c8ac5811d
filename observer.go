package webhooks

import (
	"context"
	"time"
)

// Observer is told what a Receiver and a Processor do, for metrics and
// traces; package otelwebhooks implements it with OpenTelemetry. Without one
// (the default) nothing is measured and nothing is called. Methods are
// called on the goroutine doing the work, so they must be quick, and safe
// for concurrent use. They are given keys, types and outcomes, never a
// payload, a header or a secret.
//
// Each method takes a data struct, which later versions may give more
// fields without breaking an implementation; hooks added later are
// interfaces of their own that an Observer may also implement, found by
// type assertion, as [TraceLinker] is.
type Observer interface {
	// StartReceive is called when a Receiver begins to receive a webhook.
	// It returns the context for the rest of the receive (one carrying a
	// span, say).
	StartReceive(ctx context.Context, data ReceiveStartData) context.Context
	// EndReceive is called with what the receive did, on the context
	// StartReceive returned.
	EndReceive(ctx context.Context, data ReceiveEndData)
	// StartAttempt is called before an event is dispatched. It returns
	// the context for the dispatch.
	StartAttempt(ctx context.Context, data AttemptStartData) context.Context
	// EndAttempt is called when the dispatch is over, on the context
	// StartAttempt returned. It also comes without a StartAttempt, on a
	// context of no attempt's, for an item dead-lettered without a
	// dispatch because its earlier attempts crashed and the retry policy
	// allows no more.
	EndAttempt(ctx context.Context, data AttemptEndData)
}

// TraceLinker is an optional [Observer] capability: links from items to
// the receives that stored them. TraceLink is called with the context
// StartReceive returned and returns a link to that receive (a W3C
// traceparent, say; "" for none), which the Receiver stores with the item
// (Item.TraceLink) and the Processor hands to each attempt
// (Event.TraceLink), so that an attempt can point back to its receive. A
// link that could not be stored (over 512 bytes, not UTF-8) is left out.
// Without it, items are stored without a link.
type TraceLinker interface {
	TraceLink(ctx context.Context) string
}

// ReceiveStartData is what [Observer.StartReceive] is told.
type ReceiveStartData struct {
	// Route is where the webhook was delivered.
	Route Route
}

// ReceiveEndData is what [Observer.EndReceive] is told.
type ReceiveEndData struct {
	// Route is where the webhook was delivered, even for a request that
	// never verified.
	Route Route
	// Result and Err are what Receive returns.
	Result ReceiveResult
	Err    error
	// StoreTime is how long the replay and inbox stores took, together;
	// zero when the receive ended before it called them.
	StoreTime time.Duration
}

// AttemptStartData is what [Observer.StartAttempt] is told.
type AttemptStartData struct {
	// Event is the event about to be dispatched; its TraceLink is its
	// receive's link.
	Event Event
}

// AttemptEndData is what [Observer.EndAttempt] is told.
type AttemptEndData struct {
	// Event is the event that was dispatched.
	Event Event
	// Settlement is what the Processor asks of the store: the attempt's
	// outcome and failure. It is zero when LeaseLost.
	Settlement Settlement
	// LeaseLost reports an attempt whose lease was lost while it ran (or
	// before its handler started): nothing is settled, and the item's new
	// holder records the attempt as lost (ops.OutcomeLeaseLost).
	LeaseLost bool
}

// WithObserver sets the Observer of a Receiver and a Processor. Defaults to
// none.
func WithObserver(o Observer) SharedOption {
	return SharedOption{
		receiver:  func(c *receiverConfig) { c.observer = o },
		processor: func(c *processorConfig) { c.observer = o },
	}
}
