package webhooks

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Event is an inbox item handed to a handler.
type Event struct {
	Provider string
	Tenant   string
	ID       string
	Type     string
	// Payload is the raw body as received. Handlers must not modify it.
	Payload []byte
	Headers http.Header
	// Attempt is the number of this processing attempt, starting at 1.
	Attempt    int
	OccurredAt time.Time
	ReceivedAt time.Time
	// KeyID names the secret that verified the webhook.
	KeyID string
}

// Key returns the event's inbox key.
func (e Event) Key() InboxKey {
	return InboxKey{Provider: e.Provider, Tenant: e.Tenant, EventID: e.ID}
}

func eventFromLease(l *Lease) Event {
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
	}
}

// Handler processes events. Return nil when the event is handled; an error
// marked with Permanent to dead-letter it; an error wrapped with RetryAfter to
// ask for a minimum wait; any other error to retry it with backoff. The
// context is cancelled when the processor shuts down or loses the lease; a
// handler that returns because of that is not counted as failed.
//
// Delivery is at least once: a handler may see the same event again (after a
// crash, or a replay) and must be idempotent in its own effects.
type Handler interface {
	HandleEvent(ctx context.Context, ev Event) error
}

// HandlerFunc adapts a function to the Handler interface.
type HandlerFunc func(ctx context.Context, ev Event) error

// HandleEvent calls f(ctx, ev).
func (f HandlerFunc) HandleEvent(ctx context.Context, ev Event) error { return f(ctx, ev) }

// Dispatcher hands an event to the host's code. *Mux is the usual one.
type Dispatcher interface {
	Dispatch(ctx context.Context, ev Event) error
}

// DispatcherFunc adapts a function to the Dispatcher interface.
type DispatcherFunc func(ctx context.Context, ev Event) error

// Dispatch calls f(ctx, ev).
func (f DispatcherFunc) Dispatch(ctx context.Context, ev Event) error { return f(ctx, ev) }

// UnhandledPolicy says what a Mux does with an event no pattern matches.
type UnhandledPolicy int

const (
	// UnhandledDeadLetter fails the event permanently with ErrNoHandler, so
	// it is dead-lettered and can be replayed once a handler exists. This is
	// the default.
	UnhandledDeadLetter UnhandledPolicy = iota
	// UnhandledIgnore completes the event without running anything.
	UnhandledIgnore
)

// Mux is a Dispatcher that routes events by type. Patterns are an exact event
// type ("push"), a prefix wildcard ("invoice.*", matching "invoice.paid" and
// "invoice.payment.failed" but not "invoice"), or "*" for everything. The most
// specific pattern wins: exact, then the longest prefix, then "*".
// Patterns apply to every provider; a host that needs per-provider routing
// checks Event.Provider in its handler or uses one Mux per provider behind a
// DispatcherFunc. A Mux is safe for concurrent use.
type Mux struct {
	mu        sync.RWMutex
	exact     map[string]Handler
	prefixes  map[string]Handler // "invoice." → handler
	any       Handler
	unhandled UnhandledPolicy
}

// NewMux returns an empty Mux with the UnhandledDeadLetter policy. The zero
// Mux is ready to use too.
func NewMux() *Mux { return new(Mux) }

// SetUnhandled sets what happens to events no pattern matches.
func (m *Mux) SetUnhandled(p UnhandledPolicy) {
	m.mu.Lock()
	m.unhandled = p
	m.mu.Unlock()
}

// Handle registers h for pattern. It returns an error for an empty or
// malformed pattern (a '*' anywhere but as the whole pattern or after a final
// '.') and, wrapping ErrDuplicatePattern, for a pattern already registered.
func (m *Mux) Handle(pattern string, h Handler) error {
	if h == nil {
		return fmt.Errorf("webhooks: nil handler for pattern %q", pattern)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.exact == nil {
		m.exact = make(map[string]Handler)
		m.prefixes = make(map[string]Handler)
	}
	switch {
	case pattern == "*":
		if m.any != nil {
			return fmt.Errorf("%w: %q", ErrDuplicatePattern, pattern)
		}
		m.any = h
	case strings.HasSuffix(pattern, ".*") && len(pattern) > 2 && !strings.Contains(pattern[:len(pattern)-1], "*"):
		prefix := pattern[:len(pattern)-1]
		if _, dup := m.prefixes[prefix]; dup {
			return fmt.Errorf("%w: %q", ErrDuplicatePattern, pattern)
		}
		m.prefixes[prefix] = h
	case pattern != "" && !strings.Contains(pattern, "*"):
		if _, dup := m.exact[pattern]; dup {
			return fmt.Errorf("%w: %q", ErrDuplicatePattern, pattern)
		}
		m.exact[pattern] = h
	default:
		return fmt.Errorf("webhooks: invalid handler pattern %q: use an event type, \"prefix.*\" or \"*\"", pattern)
	}
	return nil
}

// HandleFunc registers f for pattern; see Handle.
func (m *Mux) HandleFunc(pattern string, f func(ctx context.Context, ev Event) error) error {
	if f == nil {
		return fmt.Errorf("webhooks: nil handler for pattern %q", pattern)
	}
	return m.Handle(pattern, HandlerFunc(f))
}

// Handler returns the handler for an event type and whether one matched.
func (m *Mux) Handler(eventType string) (Handler, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if h, ok := m.exact[eventType]; ok {
		return h, true
	}
	// Longest prefix first: walk back through the dots of the type.
	for i := len(eventType) - 1; i > 0; i-- {
		if eventType[i] != '.' {
			continue
		}
		if h, ok := m.prefixes[eventType[:i+1]]; ok && i+1 < len(eventType) {
			return h, true
		}
	}
	if m.any != nil {
		return m.any, true
	}
	return nil, false
}

// Dispatch implements Dispatcher.
func (m *Mux) Dispatch(ctx context.Context, ev Event) error {
	h, ok := m.Handler(ev.Type)
	if ok {
		return h.HandleEvent(ctx, ev)
	}
	m.mu.RLock()
	policy := m.unhandled
	m.mu.RUnlock()
	if policy == UnhandledIgnore {
		return nil
	}
	return Permanent(fmt.Errorf("%w: %q", ErrNoHandler, ev.Type))
}
