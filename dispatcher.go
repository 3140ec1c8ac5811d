package webhooks

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Event is an inbox item handed to a Dispatcher.
type Event struct {
	Provider string
	Tenant   string
	ID       string
	Type     string
	// Payload is the raw body as received. Dispatchers must not modify it.
	Payload []byte
	Headers http.Header
	// Attempt is the number of this processing attempt, starting at 1.
	Attempt    int
	OccurredAt time.Time
	ReceivedAt time.Time
	// KeyID names the secret that verified the webhook.
	KeyID string
	// LeaseToken is the token of the lease the Processor runs this event
	// under ("" for an event that did not come from a Processor). A store
	// that lets a handler settle its item inside the handler's own
	// transaction (pgstore's CompleteTx) fences that settlement with it.
	LeaseToken string
	// TraceLink ties the event to the trace of its receive (see Observer).
	TraceLink string
	// Handler is the name of the handler the event is run for ("" the
	// default handler).
	Handler string
	// Ordering is the event's ordering key and version; Seq its arrival
	// order (see Item).
	Ordering Ordering
	Seq      int64
	// Applied is, for an ordered handler, the newest version of the key
	// it applied (see Lease.Applied): an event with a Version not above
	// it is stale, and the handler may return Skip.
	Applied int64
	// Overtook is the event ID of an earlier dead letter of the key that
	// this event runs past (see Item.Overtook).
	Overtook string
}

// Key returns the event's inbox key.
func (e Event) Key() InboxKey {
	return InboxKey{Provider: e.Provider, Tenant: e.Tenant, EventID: e.ID}
}

func eventFromLease(l *Lease) Event { return l.Event() }

// Event returns the event a Processor hands to its Dispatcher for the
// lease: the item's fields, the attempt and the lease token. Store tests
// use it to complete a lease as a handler would (CompleteTx).
func (l *Lease) Event() Event {
	it := l.Item
	return Event{
		Provider:   it.Key.Provider,
		Tenant:     it.Key.Tenant,
		ID:         it.Key.EventID,
		Type:       it.EventType,
		Payload:    it.Payload,
		Headers:    it.Headers,
		Attempt:    l.Attempt,
		OccurredAt: it.OccurredAt,
		ReceivedAt: it.ReceivedAt,
		KeyID:      it.KeyID,
		LeaseToken: l.Token,
		TraceLink:  it.TraceLink,
		Handler:    it.Handler,
		Ordering:   it.Ordering,
		Seq:        it.Seq,
		Applied:    l.Applied,
		Overtook:   it.Overtook,
	}
}

// Dispatcher hands an event to the host's code. Return nil when the event
// is handled; an error marked with Permanent to dead-letter it; an error
// made with RetryAfter to ask for a minimum wait; any other error to retry
// it with backoff. The context is cancelled when the processor shuts down or
// loses the lease; a dispatcher that returns because of that is not counted
// as failed.
//
// Delivery is at least once: a dispatcher may see the same event again
// (after a crash, or a replay) and must be idempotent in its own effects.
// A *Mux routes events to a Dispatcher per event type.
//
// An error wrapping ErrNoHandler, unclassified (not Permanent nor
// RetryAfter, which keep their meaning), says that nothing handles the
// event's type: the Processor acknowledges the event (its attempt
// succeeds, noted FailureNoHandler in the history). A dispatcher
// that can tell which types it handles before it is given an event, as a
// Mux can, says so by being a [HandledTypes] too, which Processor.Handles
// reports to a Receiver (see WithProcessor).
type Dispatcher interface {
	Dispatch(ctx context.Context, ev Event) error
}

// DispatcherFunc adapts a function to the Dispatcher interface.
type DispatcherFunc func(ctx context.Context, ev Event) error

// Dispatch calls f(ctx, ev).
func (f DispatcherFunc) Dispatch(ctx context.Context, ev Event) error { return f(ctx, ev) }

// Mux is a Dispatcher that routes events by type, as http.ServeMux routes
// requests by path. Patterns are an exact event type ("push"), a prefix
// wildcard ("invoice.*", matching "invoice.paid" and
// "invoice.payment.failed" but not "invoice"), or "*" for everything. The
// most specific pattern wins: exact, then the longest prefix, then "*".
//
// An event no pattern matches is answered with ErrNoHandler, and the
// Processor acknowledges it: GitHub's ping, and every type the host never
// handles, ends succeeded rather than as a dead letter, with its attempt
// noted FailureNoHandler. A Receiver given the Processor (WithProcessor)
// does not even store such events. To keep them for later instead, register
// "*" with a handler that returns a Permanent error (wrapping ErrNoHandler
// or not), and replay the dead letters once their handler exists.
// Patterns apply to every provider; route by provider in a DispatcherFunc
// in front of one Mux per provider. A Mux is safe for concurrent use; the
// zero Mux is ready to use.
type Mux struct {
	mu       sync.RWMutex
	patterns patterns[Dispatcher]
}

// NewMux returns an empty Mux.
func NewMux() *Mux { return new(Mux) }

// Handle registers d for pattern. It returns an error for a nil
// dispatcher, a pattern that is not an event type, "prefix.*" or "*" (an
// empty pattern, surrounding or control white space, invalid UTF-8, more
// than 512 bytes, or a '*' anywhere else), and, wrapping
// ErrDuplicatePattern, for a pattern already registered.
func (m *Mux) Handle(pattern string, d Dispatcher) error {
	if d == nil {
		return fmt.Errorf("webhooks: Mux.Handle(%q): nil dispatcher", pattern)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.patterns.add(pattern, d)
}

// HandleFunc registers f for pattern; see Handle.
func (m *Mux) HandleFunc(pattern string, f func(ctx context.Context, ev Event) error) error {
	if f == nil {
		return fmt.Errorf("webhooks: Mux.HandleFunc(%q): nil function", pattern)
	}
	return m.Handle(pattern, DispatcherFunc(f))
}

// MustHandle is like Handle but panics on error. It is meant for wiring
// code at start-up, where a bad or duplicate pattern is a programming
// mistake.
func (m *Mux) MustHandle(pattern string, d Dispatcher) {
	if err := m.Handle(pattern, d); err != nil {
		panic(err)
	}
}

// MustHandleFunc is like HandleFunc but panics on error.
func (m *Mux) MustHandleFunc(pattern string, f func(ctx context.Context, ev Event) error) {
	if err := m.HandleFunc(pattern, f); err != nil {
		panic(err)
	}
}

// Dispatcher returns the dispatcher for an event type and whether one
// matched.
func (m *Mux) Dispatcher(eventType string) (Dispatcher, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.patterns.match(eventType)
}

// Handles reports whether a pattern matches eventType, so that a
// Dispatch of an event of that type reaches a handler.
func (m *Mux) Handles(eventType string) bool {
	_, ok := m.Dispatcher(eventType)
	return ok
}

// Dispatch implements Dispatcher.
func (m *Mux) Dispatch(ctx context.Context, ev Event) error {
	if d, ok := m.Dispatcher(ev.Type); ok {
		return d.Dispatch(ctx, ev)
	}
	return fmt.Errorf("%w: %q", ErrNoHandler, ev.Type)
}
