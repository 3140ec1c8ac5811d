package webhooks

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMuxRouting(t *testing.T) {
	t.Parallel()
	m := NewMux()
	var got string
	reg := func(pattern string) {
		require.NoError(t, m.HandleFunc(pattern, func(context.Context, Event) error { got = pattern; return nil }))
	}
	reg("invoice.paid")
	reg("invoice.*")
	reg("invoice.payment.*")
	reg("*")
	for typ, want := range map[string]string{
		"invoice.paid":           "invoice.paid",
		"invoice.created":        "invoice.*",
		"invoice.payment.failed": "invoice.payment.*",
		"invoice":                "*",
		"invoice.":               "*",
		"push":                   "*",
		"":                       "*",
	} {
		got = ""
		require.NoError(t, m.Dispatch(context.Background(), Event{Type: typ}))
		assert.Equal(t, want, got, "event type %q", typ)
	}
}

func TestMuxUnhandled(t *testing.T) {
	t.Parallel()
	m := NewMux()
	require.NoError(t, m.HandleFunc("push", func(context.Context, Event) error { return nil }))
	err := m.Dispatch(context.Background(), Event{Type: "issues"})
	require.ErrorIs(t, err, ErrNoHandler)
	assert.True(t, unhandled(err), "an unhandled type is acknowledged by the Processor")
	var pe *PermanentError
	assert.False(t, errors.As(err, &pe), "the Mux's answer is unclassified, so the Processor acknowledges it")
	assert.False(t, unhandled(Permanent(err)), "a handler's Permanent(…ErrNoHandler…) keeps the event as a dead letter")
	assert.False(t, unhandled(RetryAfter(err, time.Minute)), "and RetryAfter retries it")

	// "*" takes everything else; a no-op there acknowledges it.
	m.MustHandleFunc("*", func(context.Context, Event) error { return nil })
	assert.NoError(t, m.Dispatch(context.Background(), Event{Type: "issues"}))
}

func TestMuxHandleErrors(t *testing.T) {
	t.Parallel()
	m := NewMux()
	h := DispatcherFunc(func(context.Context, Event) error { return nil })
	require.NoError(t, m.Handle("a.*", h))
	assert.ErrorIs(t, m.Handle("a.*", h), ErrDuplicatePattern)
	require.NoError(t, m.Handle("*", h))
	assert.ErrorIs(t, m.Handle("*", h), ErrDuplicatePattern)
	require.NoError(t, m.Handle("x", h))
	assert.ErrorIs(t, m.Handle("x", h), ErrDuplicatePattern)
	for _, bad := range []string{"", ".*", "a*", "*.b", "a.*.*", "a.*b", "invoice.paid ", " invoice.paid", "invoice.\npaid", "a\xff", strings.Repeat("a", maxKeyBytes+1)} {
		err := m.Handle(bad, h)
		assert.Error(t, err, "pattern %q", bad)
		assert.False(t, errors.Is(err, ErrDuplicatePattern), "pattern %q is invalid, not a duplicate", bad)
	}
	assert.Error(t, m.Handle("y", nil))
	assert.Error(t, m.HandleFunc("y", nil))
	assert.PanicsWithError(t, `webhooks: handler pattern already registered: "x"`, func() { m.MustHandle("x", h) })
	assert.Panics(t, func() { m.MustHandleFunc("invoice.paid ", func(context.Context, Event) error { return nil }) },
		"a trailing space would never match an event type")
	m.MustHandleFunc("z.*", func(context.Context, Event) error { return nil })
	_, ok := m.Dispatcher("z.y")
	assert.True(t, ok)
}

func TestMuxHandlerErrorPassesThrough(t *testing.T) {
	t.Parallel()
	m := NewMux()
	boom := errors.New("boom")
	require.NoError(t, m.HandleFunc("e", func(context.Context, Event) error { return boom }))
	assert.ErrorIs(t, m.Dispatch(context.Background(), Event{Type: "e"}), boom)
}

// TestLeaseEvent checks that Lease.Event, the one mapping from a lease to
// the event its handler gets, fills in every field of Event from a lease
// whose item has every field set: a field added to Event and forgotten
// here, as storetest's former copy forgot TraceLink, fails it.
func TestLeaseEvent(t *testing.T) {
	t.Parallel()
	at := time.Unix(1767225600, 0).UTC()
	l := &Lease{Token: "tok", Attempt: 3, Applied: 41, Item: Item{
		Key: InboxKey{Provider: "p", Tenant: "t", EventID: "e"}, EventType: "x.y", Payload: []byte("{}"),
		Headers: http.Header{"A": {"b"}}, KeyID: "k", TraceLink: "00-trace", OccurredAt: at, ReceivedAt: at.Add(time.Second),
		Handler: "ledger", Ordering: Ordering{Key: "cus_1", Version: 42}, Ordered: true, Seq: 7, Overtook: "e0",
	}}
	ev := l.Event()
	v := reflect.ValueOf(ev)
	for i := range v.NumField() {
		assert.False(t, v.Field(i).IsZero(), "Event.%s is not set from the lease", v.Type().Field(i).Name)
	}
	assert.Equal(t, Event{Provider: "p", Tenant: "t", ID: "e", Type: "x.y", Payload: []byte("{}"), Headers: http.Header{"A": {"b"}},
		Attempt: 3, OccurredAt: at, ReceivedAt: at.Add(time.Second), KeyID: "k", LeaseToken: "tok", TraceLink: "00-trace",
		Handler: "ledger", Ordering: Ordering{Key: "cus_1", Version: 42}, Seq: 7, Applied: 41, Overtook: "e0"}, ev)
	assert.Equal(t, ev, eventFromLease(l), "the processor hands over the same event")
}
