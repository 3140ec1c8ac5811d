package webhooks_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/ops"
	"github.com/hookinbox/webhooks/webhookstest"
)

// (pipelineOnly, in processor_test.go, is an inbox without FanOutStore:
// it keeps one job per event.)

// handlersOnly keeps jobs per handler but runs no ordering keys.
type handlersOnly struct{ webhooks.InboxStore }

func (handlersOnly) FanOut() webhooks.FanOutSupport { return webhooks.FanOutSupport{Handlers: true} }

func okDispatcher() webhooks.Dispatcher {
	return webhooks.DispatcherFunc(func(context.Context, webhooks.Event) error { return nil })
}

func TestNewProcessorChecksHandlers(t *testing.T) {
	t.Parallel()
	store := memstore.NewInbox()
	d := okDispatcher()
	for name, hs := range map[string]webhooks.Handlers{
		"empty":         {},
		"bad name":      {{Name: "Ledger", Dispatcher: d}},
		"named twice":   {{Name: "a", Dispatcher: d}, {Name: "a", Dispatcher: d}},
		"no dispatcher": {{Name: "a"}},
		"nil mux":       {{Name: "a", Dispatcher: (*webhooks.Mux)(nil)}},
		"all retired":   {{Name: "a", Dispatcher: d, Retired: true}},
	} {
		_, err := webhooks.NewProcessor(store, hs)
		assert.Error(t, err, name)
	}
	_, err := webhooks.NewProcessor(store, webhooks.Handlers{{Name: "ledger", Dispatcher: d, Ordered: true}, {Name: "audit", Dispatcher: d}})
	assert.NoError(t, err)

	// A store that cannot keep the jobs is refused when the processor is
	// built, naming what is missing, never degraded at run time.
	_, err = webhooks.NewProcessor(pipelineOnly{store}, webhooks.Handlers{{Name: "ledger", Dispatcher: d}, {Name: "audit", Dispatcher: d}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"ledger", "audit"`)
	assert.Contains(t, err.Error(), "one job per event")
	_, err = webhooks.NewProcessor(pipelineOnly{store}, webhooks.Handlers{{Dispatcher: d, Ordered: true}})
	assert.ErrorContains(t, err, "ordering keys", "one ordered default handler needs ordering keys")
	_, err = webhooks.NewProcessor(handlersOnly{store}, webhooks.Handlers{{Name: "ledger", Dispatcher: d, Ordered: true}})
	assert.ErrorContains(t, err, `handlers "ledger" are Ordered`)
	_, err = webhooks.NewProcessor(handlersOnly{store}, webhooks.Handlers{{Name: "ledger", Dispatcher: d}, {Name: "old", Dispatcher: d, Ordered: true, Retired: true}})
	assert.NoError(t, err, "a retired handler runs nothing in order")
	_, err = webhooks.NewProcessor(pipelineOnly{store}, webhooks.Handlers{{Dispatcher: d}})
	assert.NoError(t, err, "the default handler alone needs nothing")
	_, err = webhooks.NewProcessor(pipelineOnly{store}, d)
	assert.NoError(t, err)

	// Flow control kept in the store, likewise.
	for _, c := range []struct {
		h    webhooks.Handler
		want string
	}{
		{webhooks.Handler{Name: "ledger", Limits: webhooks.Limits{MaxRunning: 2}}, `handlers "ledger" have them`},
		{webhooks.Handler{Name: "ledger", Breaker: webhooks.Breaker{Failures: 3}}, `handlers "ledger" have a Breaker`},
		{webhooks.Handler{Name: "ledger", Fair: true}, `handlers "ledger" are Fair`},
		{webhooks.Handler{Name: "ledger", TypePriorities: map[string]int{"payment.*": 10}}, `handlers "ledger" have TypePriorities`},
	} {
		c.h.Dispatcher = d
		_, err = webhooks.NewProcessor(handlersOnly{store}, webhooks.Handlers{c.h})
		assert.ErrorContains(t, err, c.want)
		c.h.Retired = true
		_, err = webhooks.NewProcessor(handlersOnly{store}, webhooks.Handlers{c.h, {Name: "audit", Dispatcher: d}})
		assert.NoError(t, err, "a retired handler's flow control is not kept")
	}
	_, err = webhooks.NewProcessor(store, webhooks.Handlers{{Name: "ledger", Dispatcher: d, Fair: true, Limits: webhooks.Limits{MaxRunning: 2}, Breaker: webhooks.Breaker{Failures: 3}}})
	assert.NoError(t, err, "memstore keeps them all")
}

// jobsOf returns the jobs of key's event by handler.
func jobsOf(t *testing.T, s ops.Store, key webhooks.InboxKey) map[string]ops.Job {
	t.Helper()
	d, err := s.Get(context.Background(), key)
	require.NoError(t, err)
	jobs := make(map[string]ops.Job)
	for _, j := range d.Jobs {
		jobs[j.Handler] = j
	}
	return jobs
}

// TestFailingHandlerNeverRerunsAnother: an event goes to two handlers;
// audit fails until its budget is spent, and ledger, which succeeded, is
// never run again; each job has its own history and only audit's is a
// dead letter.
func TestFailingHandlerNeverRerunsAnother(t *testing.T) {
	t.Parallel()
	store, clock := newObservedStore(), webhookstest.NewClock(base)
	var ledger, audit atomic.Int32
	hs := webhooks.Handlers{
		{Name: "ledger", Dispatcher: webhooks.DispatcherFunc(func(_ context.Context, ev webhooks.Event) error {
			assert.Equal(t, "ledger", ev.Handler)
			ledger.Add(1)
			return nil
		})},
		{Name: "audit", Dispatcher: webhooks.DispatcherFunc(func(_ context.Context, ev webhooks.Event) error {
			assert.Equal(t, "audit", ev.Handler)
			audit.Add(1)
			return errors.New("audit log unavailable")
		})},
	}
	p, err := webhooks.NewProcessor(store, hs, webhooks.WithClock(clock), webhooks.WithPollInterval(time.Hour), webhooks.WithLogger(discard),
		webhooks.WithRetryPolicy(webhooks.ExponentialPolicy{MaxAttempts: 3, InitialDelay: time.Second, Multiplier: 1}))
	require.NoError(t, err)
	r := webhooks.NewRegistry()
	r.MustRegister("acme", headerVerifier)
	rcv, err := webhooks.NewReceiver(r, store, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithClock(clock), webhooks.WithProcessor(p), webhooks.WithLogger(discard))
	require.NoError(t, err)
	res, err := rcv.Receive(context.Background(), webhooks.Route{Provider: "acme"}, &webhooks.Request{
		Header: http.Header{"X-Sig": {"ok"}, "X-Id": {"e1"}, "X-Type": {"invoice.paid"}}, Body: []byte(`{"amount":1}`)})
	require.NoError(t, err)
	require.Equal(t, webhooks.StatusAccepted, res.Status)
	key := res.Key

	runProcessor(t, p)
	outcomes := map[string]int{}
	for range 4 { // ledger succeeds; audit retried twice, then dead
		e := store.next(t)
		outcomes[e.Op]++
		clock.Advance(time.Second)
		p.Wake()
	}
	assert.Equal(t, map[string]int{"succeeded": 1, "retried": 2, "dead_lettered": 1}, outcomes)
	assert.EqualValues(t, 1, ledger.Load(), "ledger ran once, whatever audit did")
	assert.EqualValues(t, 3, audit.Load())

	jobs := jobsOf(t, store, key)
	require.Len(t, jobs, 2)
	assert.Equal(t, webhooks.StateSucceeded, jobs["ledger"].State)
	assert.Len(t, jobs["ledger"].History, 1)
	assert.Equal(t, webhooks.StateDead, jobs["audit"].State)
	assert.Len(t, jobs["audit"].History, 3)
	page, err := store.List(context.Background(), ops.Query{Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Items, 1, "one dead letter: audit's")
	assert.Equal(t, "audit", page.Items[0].Handler)
}

// TestRetiredHandler: a retired handler's pending jobs are dead-lettered
// unrun with FailureHandlerGone; it gets no new jobs; a handler left out
// of Handlers keeps its jobs pending, never leased.
func TestRetiredHandler(t *testing.T) {
	t.Parallel()
	store, clock := newObservedStore(), webhookstest.NewClock(base)
	ctx := context.Background()
	for _, id := range []string{"e1", "e2"} {
		_, err := store.Enqueue(ctx, webhooks.Envelope{Key: webhooks.InboxKey{Provider: "acme", EventID: id}, EventType: "t", Payload: []byte(`{}`), ReceivedAt: base,
			Jobs: []webhooks.Job{{Handler: "ledger"}, {Handler: "old"}, {Handler: "gone"}}})
		require.NoError(t, err)
	}
	var oldRan atomic.Int32
	hs := webhooks.Handlers{
		{Name: "ledger", Dispatcher: okDispatcher()},
		{Name: "old", Retired: true, Dispatcher: webhooks.DispatcherFunc(func(context.Context, webhooks.Event) error { oldRan.Add(1); return nil })},
	}
	p, err := webhooks.NewProcessor(store, hs, webhooks.WithClock(clock), webhooks.WithPollInterval(time.Hour), webhooks.WithLogger(discard))
	require.NoError(t, err)
	assert.Equal(t, []webhooks.Job{{Handler: "ledger"}}, p.Jobs("acme", "t"), "no new jobs for a retired handler")
	runProcessor(t, p)
	outcomes := map[string]int{}
	for range 4 {
		outcomes[store.next(t).Op]++
	}
	assert.Equal(t, map[string]int{"succeeded": 2, "dead_lettered": 2}, outcomes)
	assert.Zero(t, oldRan.Load(), "a retired handler runs nothing")
	for _, id := range []string{"e1", "e2"} {
		jobs := jobsOf(t, store, webhooks.InboxKey{Provider: "acme", EventID: id})
		assert.Equal(t, webhooks.StateSucceeded, jobs["ledger"].State)
		old := jobs["old"]
		assert.Equal(t, webhooks.StateDead, old.State)
		require.NotNil(t, old.LastError)
		assert.Equal(t, webhooks.FailureHandlerGone, old.LastError.Class)
		for _, a := range old.History { // an attempt that started with its acquisition is recorded, unrun
			assert.Equal(t, webhooks.FailureHandlerGone, a.ErrorClass)
		}
		assert.Equal(t, webhooks.StatePending, jobs["gone"].State, "a handler no processor knows keeps its jobs pending")
		assert.Zero(t, jobs["gone"].Attempts)
	}
	st, err := store.Stats(ctx, ops.StatsRequest{Now: base})
	require.NoError(t, err)
	var gone *ops.HandlerStats
	for i := range st.Handlers {
		if st.Handlers[i].Handler == "gone" {
			gone = &st.Handlers[i]
		}
	}
	require.NotNil(t, gone, "the unserved handler's work is visible in the stats")
	assert.EqualValues(t, 2, gone.Due)
}

// TestSkipSettlesSucceededAndSkipped: a handler's Skip succeeds the job,
// the history notes FailureSkipped, and the key's applied version stays.
func TestSkipSettlesSucceededAndSkipped(t *testing.T) {
	t.Parallel()
	store, clock := newObservedStore(), webhookstest.NewClock(base)
	ctx := context.Background()
	enq := func(id string, version int64) webhooks.InboxKey {
		key := webhooks.InboxKey{Provider: "acme", EventID: id}
		_, err := store.Enqueue(ctx, webhooks.Envelope{Key: key, EventType: "t", Payload: []byte(`{}`), ReceivedAt: base,
			Jobs: []webhooks.Job{{Handler: "ledger", Ordered: true}}, Ordering: webhooks.Ordering{Key: "cus_1", Version: version}})
		require.NoError(t, err)
		return key
	}
	seen := make(chan webhooks.Event, 3)
	hs := webhooks.Handlers{{Name: "ledger", Ordered: true, Dispatcher: webhooks.DispatcherFunc(func(_ context.Context, ev webhooks.Event) error {
		seen <- ev
		if ev.Ordering.Version <= ev.Applied {
			return webhooks.Skip("a newer version is applied")
		}
		return nil
	})}}
	p, err := webhooks.NewProcessor(store, hs, webhooks.WithClock(clock), webhooks.WithPollInterval(time.Hour), webhooks.WithLogger(discard))
	require.NoError(t, err)
	k5 := enq("v5", 5)
	// v5 is the head, and starts (a lease given back) before v3 arrives:
	// an older version arriving behind a head that started waits behind it.
	leases, err := store.Inbox.Acquire(ctx, webhooks.AcquireRequest{Now: base, LeaseDuration: time.Minute, Max: 1, Handler: "ledger"})
	require.NoError(t, err)
	require.Len(t, leases, 1)
	require.NoError(t, store.Inbox.Settle(ctx, webhooks.Settlement{Lease: leases[0], Outcome: webhooks.AttemptAbandoned, Now: base}))
	k3 := enq("v3-late", 3)
	enq("v7", 7)
	runProcessor(t, p)
	for range 3 {
		require.Equal(t, "succeeded", store.next(t).Op)
	}
	var evs []webhooks.Event
	for range 3 {
		evs = append(evs, <-seen)
	}
	require.Equal(t, []string{"v5", "v3-late", "v7"}, []string{evs[0].ID, evs[1].ID, evs[2].ID}, "v5 was the head; v3 and v7 waited in version order")
	assert.EqualValues(t, 0, evs[0].Applied)
	assert.EqualValues(t, 5, evs[1].Applied, "v3 is told v5 was applied")
	assert.EqualValues(t, 5, evs[2].Applied, "the skipped v3 did not lower or raise the applied version")
	h3 := jobsOf(t, store, k3)["ledger"].History
	require.Len(t, h3, 1)
	assert.Equal(t, webhooks.AttemptSucceeded, h3[0].Outcome)
	assert.Equal(t, webhooks.FailureSkipped, h3[0].ErrorClass)
	assert.Contains(t, h3[0].Error, "a newer version is applied")
	assert.Empty(t, jobsOf(t, store, k5)["ledger"].History[0].ErrorClass)
}

// recordingInbox records the envelopes it is given.
type recordingInbox struct {
	webhooks.InboxStore
	mu   sync.Mutex
	envs []webhooks.Envelope
}

func (r *recordingInbox) Enqueue(ctx context.Context, env webhooks.Envelope) (webhooks.EnqueueResult, error) {
	r.mu.Lock()
	r.envs = append(r.envs, env)
	r.mu.Unlock()
	return r.InboxStore.Enqueue(ctx, env)
}

func (r *recordingInbox) FanOut() webhooks.FanOutSupport { return webhooks.FanOutOf(r.InboxStore) }
func (r *recordingInbox) Flow() webhooks.FlowSupport     { return webhooks.FlowOf(r.InboxStore) }

func (r *recordingInbox) last() webhooks.Envelope {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.envs[len(r.envs)-1]
}

// routerFunc is a JobRouter of the host's own.
type routerFunc func(provider, eventType string) []webhooks.Job

func (f routerFunc) Jobs(provider, eventType string) []webhooks.Job { return f(provider, eventType) }
func (f routerFunc) Handles(eventType string) bool                  { return len(f("", eventType)) > 0 }

func TestReceiverStoresTheJobsOfTheHandlersThatTakeTheType(t *testing.T) {
	t.Parallel()
	ledgerMux, auditMux := webhooks.NewMux(), webhooks.NewMux()
	ledgerMux.MustHandleFunc("invoice.*", func(context.Context, webhooks.Event) error { return nil })
	auditMux.MustHandleFunc("*", func(context.Context, webhooks.Event) error { return nil })
	hs := webhooks.Handlers{{Name: "ledger", Dispatcher: ledgerMux, Ordered: true}, {Name: "audit", Dispatcher: auditMux},
		{Name: "old", Dispatcher: auditMux, Retired: true}}
	inbox := &recordingInbox{InboxStore: memstore.NewInbox()}
	reg := webhooks.NewRegistry()
	reg.MustRegister("acme", headerVerifier)
	rcv, err := webhooks.NewReceiver(reg, inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithHandledTypes(hs), webhooks.WithLogger(discard),
		webhooks.WithOrdering("acme", func(req *webhooks.Request, v webhooks.Verification) (webhooks.Ordering, error) {
			return webhooks.Ordering{Key: "cus_" + v.EventID, Version: 9}, nil
		}))
	require.NoError(t, err)
	receive := func(id, typ string) webhooks.ReceiveResult {
		res, err := rcv.Receive(context.Background(), webhooks.Route{Provider: "acme"}, &webhooks.Request{
			Header: http.Header{"X-Sig": {"ok"}, "X-Id": {id}, "X-Type": {typ}}, Body: []byte(`{}`)})
		require.NoError(t, err)
		return res
	}
	assert.Equal(t, webhooks.StatusAccepted, receive("e1", "invoice.paid").Status)
	env := inbox.last()
	assert.Equal(t, []webhooks.Job{{Handler: "ledger", Ordered: true}, {Handler: "audit"}}, env.Jobs)
	assert.Equal(t, webhooks.Ordering{Key: "cus_e1", Version: 9}, env.Ordering)
	assert.Equal(t, webhooks.StatusAccepted, receive("e2", "customer.created").Status)
	assert.Equal(t, []webhooks.Job{{Handler: "audit"}}, inbox.last().Jobs, "ledger does not take customer.*")

	// Built with Handlers the store cannot keep: refused at construction.
	_, err = webhooks.NewReceiver(reg, pipelineOnly{memstore.NewInbox()}, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithHandledTypes(hs))
	assert.ErrorContains(t, err, "one job per event")
	prioritized := webhooks.Handlers{{Dispatcher: auditMux, TypePriorities: map[string]int{"invoice.*": 3}}}
	_, err = webhooks.NewReceiver(reg, pipelineOnly{memstore.NewInbox()}, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithHandledTypes(prioritized))
	assert.ErrorContains(t, err, "does not keep jobs' priorities")
	_, err = webhooks.NewReceiver(reg, memstore.NewInbox(), webhooks.WithReplayStore(memstore.NewReplay()),
		webhooks.WithHandledTypes(webhooks.Handlers{{Dispatcher: auditMux, TypePriorities: map[string]int{"payment.*": 5000}}}))
	assert.ErrorContains(t, err, `TypePriorities["payment.*"] is 5000`, "a Receiver checks the priorities it gives")

	// The Receiver keeps a copy of the Handlers' TypePriorities: the host's
	// map, changed after, changes nothing of it.
	mine := map[string]int{"invoice.*": 3}
	kept := &recordingInbox{InboxStore: memstore.NewInbox()}
	rcv3, err := webhooks.NewReceiver(reg, kept, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithLogger(discard),
		webhooks.WithHandledTypes(webhooks.Handlers{{Dispatcher: auditMux, TypePriorities: mine}}))
	require.NoError(t, err)
	mine["invoice.*"] = 9
	_, err = rcv3.Receive(context.Background(), webhooks.Route{Provider: "acme"}, &webhooks.Request{
		Header: http.Header{"X-Sig": {"ok"}, "X-Id": {"kept"}, "X-Type": {"invoice.paid"}}, Body: []byte(`{}`)})
	require.NoError(t, err)
	assert.Equal(t, []webhooks.Job{{Priority: 3}}, kept.last().Jobs)

	// A JobRouter of the host's own is checked at each receive: no job is
	// ignored; jobs the store cannot keep are a 500, never fewer jobs.
	router := routerFunc(func(_, typ string) []webhooks.Job {
		switch typ {
		case "none":
			return nil
		case "default":
			return []webhooks.Job{{}}
		case "bad":
			return []webhooks.Job{{Handler: "x"}, {Handler: "x"}}
		case "prioritized":
			return []webhooks.Job{{Priority: 3}}
		}
		return []webhooks.Job{{Handler: "ledger"}, {Handler: "audit"}}
	})
	plain := &recordingInbox{InboxStore: pipelineOnly{memstore.NewInbox()}}
	rcv2, err := webhooks.NewReceiver(reg, plain, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithHandledTypes(router), webhooks.WithLogger(discard))
	require.NoError(t, err)
	for typ, want := range map[string]webhooks.ReceiveStatus{"none": webhooks.StatusIgnored, "default": webhooks.StatusAccepted,
		"bad": webhooks.StatusInternalError, "two": webhooks.StatusInternalError, "prioritized": webhooks.StatusInternalError} {
		res, err := rcv2.Receive(context.Background(), webhooks.Route{Provider: "acme"}, &webhooks.Request{
			Header: http.Header{"X-Sig": {"ok"}, "X-Id": {"id-" + typ}, "X-Type": {typ}}, Body: []byte(`{}`)})
		assert.Equal(t, want, res.Status, "type %q: %v", typ, err)
	}
	require.Len(t, plain.envs, 1)
	assert.Nil(t, plain.envs[0].Jobs, "the default job alone is stored as nil Jobs, which every store keeps")
}

func TestWithOrdering(t *testing.T) {
	t.Parallel()
	inbox := &recordingInbox{InboxStore: memstore.NewInbox()}
	reg := webhooks.NewRegistry()
	reg.MustRegister("acme", webhooks.VerifierFunc(func(ctx context.Context, route webhooks.Route, r *webhooks.Request) (webhooks.Verification, error) {
		v, err := headerVerifier.Verify(ctx, route, r)
		v.Ordering = webhooks.Ordering{Key: "from-the-catalog", Version: 1}
		return v, err
	}))
	reg.MustRegister("beta", headerVerifier)
	receive := func(rcv *webhooks.Receiver, provider, id string) (webhooks.ReceiveResult, error) {
		return rcv.Receive(context.Background(), webhooks.Route{Provider: provider}, &webhooks.Request{
			Header: http.Header{"X-Sig": {"ok"}, "X-Id": {id}, "X-Type": {"t"}}, Body: []byte(`{}`)})
	}
	rcv, err := webhooks.NewReceiver(reg, inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithLogger(discard))
	require.NoError(t, err)
	_, err = receive(rcv, "acme", "e1")
	require.NoError(t, err)
	assert.Equal(t, webhooks.Ordering{Key: "from-the-catalog", Version: 1}, inbox.last().Ordering, "the verifier's ordering by default")

	rcv, err = webhooks.NewReceiver(reg, inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithLogger(discard),
		webhooks.WithOrdering("acme", nil),
		webhooks.WithOrdering("beta", func(req *webhooks.Request, v webhooks.Verification) (webhooks.Ordering, error) {
			switch v.EventID {
			case "down":
				return webhooks.Ordering{}, errors.New("lookup failed")
			case "long":
				return webhooks.Ordering{Key: string(make([]byte, webhooks.MaxOrderingKeyBytes+1))}, nil
			}
			return webhooks.Ordering{Key: "k-" + v.EventID, Version: 2}, nil
		}))
	require.NoError(t, err)
	_, err = receive(rcv, "acme", "e2")
	require.NoError(t, err)
	assert.Zero(t, inbox.last().Ordering, "WithOrdering(provider, nil) turns keys off")
	_, err = receive(rcv, "beta", "e3")
	require.NoError(t, err)
	assert.Equal(t, webhooks.Ordering{Key: "k-e3", Version: 2}, inbox.last().Ordering)
	n := len(inbox.envs)
	res, err := receive(rcv, "beta", "down")
	assert.Equal(t, webhooks.StatusUnavailable, res.Status, "a failed ordering function is a 503: the provider delivers again")
	assert.ErrorContains(t, err, "lookup failed")
	res, _ = receive(rcv, "beta", "long")
	assert.Equal(t, webhooks.StatusInternalError, res.Status)
	assert.Len(t, inbox.envs, n, "nothing stored without its ordering")
}
