package webhooks_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/webhookstest"
)

// TestHandlerPriority: with one worker and a backlog of both, every job of
// the handler of higher Priority runs before any of the other's, though
// the other is listed first; handlers of one priority take turns.
func TestHandlerPriority(t *testing.T) {
	t.Parallel()
	store := memstore.NewInbox()
	const events = 10
	var (
		mu    sync.Mutex
		order []string
		done  sync.WaitGroup
	)
	record := func(name string) webhooks.Dispatcher {
		return webhooks.DispatcherFunc(func(context.Context, webhooks.Event) error {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			done.Done()
			return nil
		})
	}
	hs := webhooks.Handlers{
		{Name: "analytics", Dispatcher: record("analytics")},
		{Name: "payments", Dispatcher: record("payments"), Priority: 10},
		{Name: "audit", Dispatcher: record("audit"), Priority: 10},
	}
	jobs := []webhooks.Job{{Handler: "analytics"}, {Handler: "payments"}, {Handler: "audit"}}
	for i := range events {
		_, err := store.Enqueue(t.Context(), webhooks.Envelope{Key: webhooks.InboxKey{Provider: "acme", EventID: fmt.Sprint("e", i)},
			EventType: "invoice.paid", Payload: []byte(`{}`), ReceivedAt: time.Now().Add(-time.Minute), Jobs: jobs})
		require.NoError(t, err)
	}
	done.Add(3 * events)
	p, err := webhooks.NewProcessor(store, hs, webhooks.WithWorkers(1), webhooks.WithPollInterval(5*time.Millisecond), webhooks.WithLogger(discard))
	require.NoError(t, err)
	runProcessor(t, p)
	finished := make(chan struct{})
	go func() { done.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(30 * time.Second):
		t.Fatal("not every job ran within 30 s")
	}
	mu.Lock()
	defer mu.Unlock()
	for i, name := range order[:2*events] {
		assert.NotEqual(t, "analytics", name, "job %d ran before the payments and audit backlogs were done: %v", i, order)
	}
	counts := map[string]int{}
	for _, name := range order[:events] {
		counts[name]++
	}
	assert.Greater(t, counts["payments"], 0, "payments and audit, of one priority, take turns: %v", order)
	assert.Greater(t, counts["audit"], 0, "payments and audit, of one priority, take turns: %v", order)
}

// TestTypePriorities: Handlers.Jobs gives each job the priority of the
// most specific of its handler's TypePriorities matching the event's type
// (exact, the longest prefix, "*"), 0 when none does; and Handlers.Check
// refuses what a store could not keep.
func TestTypePriorities(t *testing.T) {
	d := webhooks.DispatcherFunc(func(context.Context, webhooks.Event) error { return nil })
	hs := webhooks.Handlers{
		{Name: "ledger", Dispatcher: d, TypePriorities: map[string]int{
			"invoice.*": 5, "invoice.payment.*": 8, "invoice.payment.failed": 10, "charge.refunded": 0, "*": 2}},
		{Name: "audit", Dispatcher: d, TypePriorities: map[string]int{"payment_intent.succeeded": 7}},
	}
	require.NoError(t, hs.Check())
	for _, c := range []struct {
		eventType     string
		ledger, audit int
	}{
		{"invoice.payment.failed", 10, 0},
		{"invoice.payment.succeeded", 8, 0},
		{"invoice.paid", 5, 0},
		{"invoice", 2, 0}, // "invoice.*" matches nothing without a dot and more
		{"invoice.", 2, 0},
		{"charge.refunded", 0, 0},
		{"payment_intent.succeeded", 2, 7},
		{"push", 2, 0},
	} {
		jobs := hs.Jobs("stripe", c.eventType)
		require.Len(t, jobs, 2, c.eventType)
		assert.Equal(t, webhooks.Job{Handler: "ledger", Priority: c.ledger}, jobs[0], c.eventType)
		assert.Equal(t, webhooks.Job{Handler: "audit", Priority: c.audit}, jobs[1], c.eventType)
	}

	// A Processor keeps a copy: the host's map, changed after, changes
	// none of its jobs.
	mine := map[string]int{"invoice.*": 3}
	proc, err := webhooks.NewProcessor(memstore.NewInbox(), webhooks.Handlers{{Name: "ledger", Dispatcher: d, TypePriorities: mine}})
	require.NoError(t, err)
	mine["invoice.*"] = 9
	assert.Equal(t, []webhooks.Job{{Handler: "ledger", Priority: 3}}, proc.Jobs("stripe", "invoice.paid"))

	levels := map[string]int{}
	for i := range webhooks.MaxTypePriorities + 1 {
		levels[fmt.Sprintf("t%d", i)] = i + 1
	}
	for _, c := range []struct {
		name string
		h    webhooks.Handler
		want string
	}{
		{"bad pattern", webhooks.Handler{TypePriorities: map[string]int{"invoice*": 1}}, "invoice*"},
		{"negative", webhooks.Handler{TypePriorities: map[string]int{"invoice.*": -1}}, "from 0 to 1000"},
		{"too high", webhooks.Handler{TypePriorities: map[string]int{"invoice.*": webhooks.MaxTypePriority + 1}}, "from 0 to 1000"},
		{"too many", webhooks.Handler{TypePriorities: levels}, "33 distinct priorities"},
		{"with Fair", webhooks.Handler{Fair: true, TypePriorities: map[string]int{"invoice.*": 1}}, "Fair"},
	} {
		c.h.Dispatcher = d
		assert.ErrorContains(t, webhooks.Handlers{c.h}.Check(), c.want, c.name)
	}
	delete(levels, "t0")
	assert.NoError(t, webhooks.Handlers{{Dispatcher: d, TypePriorities: levels}}.Check(), "MaxTypePriorities distinct priorities")
	assert.NoError(t, webhooks.Handlers{{Dispatcher: d, Fair: true, TypePriorities: map[string]int{"*": 0}}}.Check(),
		"a Fair handler may name priority 0")
}

// TestAcquireRequestPriorities: AcquireRequest.Check refuses Priorities
// that are not above 0 and at most MaxTypePriority, highest first, once
// each, at most MaxTypePriorities, or given with Fair.
func TestAcquireRequestPriorities(t *testing.T) {
	many := make([]int, webhooks.MaxTypePriorities+1)
	for i := range many {
		many[i] = len(many) - i
	}
	for _, c := range []struct {
		name       string
		priorities []int
		fair       bool
		ok         bool
	}{
		{"none", nil, false, true},
		{"highest first", []int{webhooks.MaxTypePriority, 5, 1}, false, true},
		{"as many as may be", many[1:], false, true},
		{"too many", many, false, false},
		{"zero", []int{5, 0}, false, false},
		{"too high", []int{webhooks.MaxTypePriority + 1}, false, false},
		{"ascending", []int{1, 5}, false, false},
		{"twice", []int{5, 5}, false, false},
		{"with Fair", []int{5}, true, false},
	} {
		req := webhooks.AcquireRequest{LeaseDuration: time.Minute, Max: 1, Priorities: c.priorities, Fair: c.fair}
		err := req.Check()
		assert.Equal(t, c.ok, err == nil, "%s: Check() = %v", c.name, err)
	}
}

// TestTypePrioritiesEndToEnd: a Receiver stores each event's job with the
// priority its type has, and a Processor of one worker runs the payments,
// received after the analytics events, first.
func TestTypePrioritiesEndToEnd(t *testing.T) {
	store, clock := memstore.NewInbox(), webhookstest.NewClock(base)
	var (
		mu  sync.Mutex
		ran []string
	)
	done := make(chan struct{})
	mux := webhooks.NewMux()
	record := func(_ context.Context, ev webhooks.Event) error {
		mu.Lock()
		defer mu.Unlock()
		if ran = append(ran, ev.Type); len(ran) == 6 {
			close(done)
		}
		return nil
	}
	require.NoError(t, mux.HandleFunc("analytics.*", record))
	require.NoError(t, mux.HandleFunc("payment.*", record))
	proc, err := webhooks.NewProcessor(store, webhooks.Handlers{{Dispatcher: mux, TypePriorities: map[string]int{"payment.*": 10}}},
		webhooks.WithWorkers(1), webhooks.WithClock(clock), webhooks.WithPollInterval(10*time.Millisecond), webhooks.WithLogger(discard))
	require.NoError(t, err)
	r := webhooks.NewRegistry()
	r.MustRegister("acme", headerVerifier)
	rcv, err := webhooks.NewReceiver(r, store, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithClock(clock),
		webhooks.WithProcessor(proc), webhooks.WithLogger(discard))
	require.NoError(t, err)
	for i, typ := range []string{"analytics.viewed", "analytics.viewed", "analytics.viewed", "analytics.viewed", "payment.succeeded", "payment.failed"} {
		res, err := rcv.Receive(t.Context(), webhooks.Route{Provider: "acme"}, &webhooks.Request{
			Header: http.Header{"X-Sig": {"ok"}, "X-Id": {fmt.Sprintf("evt_%d", i)}, "X-Type": {typ}}, Body: []byte(`{}`)})
		require.NoError(t, err)
		require.Equal(t, webhooks.StatusAccepted, res.Status)
		d, err := store.Get(t.Context(), res.Key)
		require.NoError(t, err)
		want := 0
		if i >= 4 {
			want = 10
		}
		assert.Equal(t, want, d.Item.Priority, "%s (%s) is stored with its type's priority", res.Key.EventID, typ)
	}
	runProcessor(t, proc)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("not every event ran")
	}
	mu.Lock()
	defer mu.Unlock()
	assert.ElementsMatch(t, []string{"payment.succeeded", "payment.failed"}, ran[:2], "ran %v", ran)
}
