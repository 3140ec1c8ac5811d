package otelwebhooks_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/otelwebhooks"
)

// signalling passes every call on to an Observer and reports each ended
// attempt, so a test waits for the Processor instead of sleeping.
type signalling struct {
	*otelwebhooks.Observer
	ended chan string
}

func (s signalling) EndAttempt(ctx context.Context, data webhooks.AttemptEndData) {
	s.Observer.EndAttempt(ctx, data)
	s.ended <- data.Event.ID + ":" + string(data.Settlement.Outcome)
}

// pipeline runs a Receiver and a Processor on memstore with an Observer on
// s, and handler as the dispatcher.
type pipeline struct {
	store    *memstore.Inbox
	receiver *webhooks.Receiver
	ended    chan string
}

func newPipeline(t *testing.T, obs *otelwebhooks.Observer, handler webhooks.DispatcherFunc) *pipeline {
	t.Helper()
	p := &pipeline{store: memstore.NewInbox(), ended: make(chan string, 100)}
	sig := signalling{Observer: obs, ended: p.ended}
	proc, err := webhooks.NewProcessor(p.store, handler,
		webhooks.WithObserver(sig),
		webhooks.WithLogger(discard),
		webhooks.WithPollInterval(5*time.Millisecond),
		webhooks.WithRetryPolicy(webhooks.ExponentialPolicy{MaxAttempts: 3, InitialDelay: time.Millisecond}),
	)
	require.NoError(t, err)
	p.receiver, err = webhooks.NewReceiver(registry(t), p.store, webhooks.WithReplayStore(memstore.NewReplay()),
		webhooks.WithObserver(sig), webhooks.WithLogger(discard), webhooks.WithProcessor(proc))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- proc.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return p
}

func (p *pipeline) serve(t *testing.T, req *http.Request) int {
	t.Helper()
	rec := httptest.NewRecorder()
	p.receiver.ServeHTTP(rec, req)
	return rec.Code
}

// wait waits for the attempts want ("id:outcome"), in any order.
func (p *pipeline) wait(t *testing.T, want ...string) {
	t.Helper()
	var got []string
	timeout := time.After(10 * time.Second)
	for len(got) < len(want) {
		select {
		case e := <-p.ended:
			got = append(got, e)
		case <-timeout:
			t.Fatalf("attempts ended: %v; want %v", got, want)
		}
	}
	assert.ElementsMatch(t, want, got)
}

// handler succeeds for "ok", fails once then succeeds for "flaky", and
// fails for good for "bad", quoting the payload in its error as handlers
// sometimes do.
func handler() webhooks.DispatcherFunc {
	flaked := false
	return func(ctx context.Context, ev webhooks.Event) error {
		switch ev.Type {
		case "flaky":
			if !flaked {
				flaked = true
				return fmt.Errorf("downstream refused %s", ev.Payload)
			}
		case "bad":
			return webhooks.Permanent(fmt.Errorf("cannot parse %s", ev.Payload))
		}
		return nil
	}
}

func TestMetricsAndSpans(t *testing.T) {
	t.Parallel()
	s := newSDK(t)
	obs, err := otelwebhooks.New(otelwebhooks.WithMeterProvider(s.meters), otelwebhooks.WithTracerProvider(s.tracers))
	require.NoError(t, err)
	p := newPipeline(t, obs, handler())

	assert.Equal(t, http.StatusAccepted, p.serve(t, signed("d1", "ok", `{"n":1}`)))
	assert.Equal(t, http.StatusAccepted, p.serve(t, signed("d2", "flaky", `{"n":2}`)))
	assert.Equal(t, http.StatusAccepted, p.serve(t, signed("d3", "bad", `{"n":3}`)))
	assert.Equal(t, http.StatusOK, p.serve(t, signed("d1", "ok", `{"n":1}`)), "a duplicate")
	forged := signed("d4", "ok", `{"n":4}`)
	forged.Header.Set("X-Hub-Signature-256", "sha256="+strings.Repeat("00", 32))
	assert.Equal(t, http.StatusUnauthorized, p.serve(t, forged))
	unknown := signed("d5", "ok", `{}`)
	unknown.URL.Path = "/webhooks/made-up-name"
	assert.Equal(t, http.StatusNotFound, p.serve(t, unknown))
	p.wait(t, "d1:succeeded", "d2:retried", "d2:succeeded", "d3:dead_lettered")

	rm := s.collect(t)
	assert.Equal(t, map[string]float64{
		"provider=acme,status=accepted":     3,
		"provider=acme,status=duplicate":    1,
		"provider=acme,status=rejected":     1,
		"provider=,status=unknown_provider": 1,
	}, counts(t, find(t, rm, "webhooks.received")))
	assert.Equal(t, map[string]float64{"provider=acme,reason=bad_signature": 1}, counts(t, find(t, rm, "webhooks.verification.failures")))
	assert.Equal(t, map[string]float64{"provider=acme,status=accepted": 3, "provider=acme,status=duplicate": 1},
		counts(t, find(t, rm, "webhooks.enqueue.duration")), "the store's time, for each receive that reached it")
	assert.Equal(t, map[string]float64{
		"event_type=ok,outcome=succeeded,provider=acme":      1,
		"event_type=flaky,outcome=retried,provider=acme":     1,
		"event_type=flaky,outcome=succeeded,provider=acme":   1,
		"event_type=bad,outcome=dead_lettered,provider=acme": 1,
	}, counts(t, find(t, rm, "webhooks.handler.duration")))
	assert.Equal(t, map[string]float64{"error_class=error,event_type=flaky,provider=acme": 1}, counts(t, find(t, rm, "webhooks.retried")))
	assert.Equal(t, map[string]float64{"error_class=permanent,event_type=bad,provider=acme": 1}, counts(t, find(t, rm, "webhooks.dead_lettered")))
	for _, name := range []string{"webhooks.enqueue.duration", "webhooks.handler.duration"} {
		assert.Equal(t, "s", find(t, rm, name).Unit, name)
	}

	// Spans: one per receive, one per attempt, each attempt linked to the
	// receive that stored its item.
	receives := map[string]sdktrace.ReadOnlySpan{}
	var attempts []sdktrace.ReadOnlySpan
	for _, sp := range s.spans.Ended() {
		switch sp.Name() {
		case otelwebhooks.SpanReceive:
			assert.Equal(t, trace.SpanKindProducer, sp.SpanKind())
			if id := attr(sp, otelwebhooks.AttrEventID); id != "" && attr(sp, otelwebhooks.AttrStatus) == "accepted" {
				receives[id] = sp
			}
		case otelwebhooks.SpanAttempt:
			assert.Equal(t, trace.SpanKindConsumer, sp.SpanKind())
			attempts = append(attempts, sp)
		default:
			t.Errorf("unexpected span %q", sp.Name())
		}
	}
	assert.Len(t, s.spans.Ended(), 6+4)
	require.Len(t, receives, 3)
	r1 := receives["d1"]
	assert.Equal(t, map[attribute.Key]string{
		otelwebhooks.AttrProvider:  "acme",
		otelwebhooks.AttrTenant:    "tenant-1",
		otelwebhooks.AttrEventID:   "d1",
		otelwebhooks.AttrEventType: "ok",
		otelwebhooks.AttrStatus:    "accepted",
	}, attrs(r1))
	d1, err := p.store.Get(t.Context(), webhooks.InboxKey{Provider: "acme", Tenant: "tenant-1", EventID: "d1"})
	require.NoError(t, err)
	sc := r1.SpanContext()
	assert.Equal(t, fmt.Sprintf("00-%s-%s-01", sc.TraceID(), sc.SpanID()), d1.TraceLink, "the item keeps its receive's traceparent")

	require.Len(t, attempts, 4)
	for _, a := range attempts {
		id := attr(a, otelwebhooks.AttrEventID)
		require.Len(t, a.Links(), 1, id)
		link := a.Links()[0].SpanContext
		assert.Equal(t, receives[id].SpanContext().TraceID(), link.TraceID(), "%s: the attempt links to its receive", id)
		assert.Equal(t, receives[id].SpanContext().SpanID(), link.SpanID(), id)
		assert.NotEqual(t, link.TraceID(), a.SpanContext().TraceID(), "%s: an attempt is a trace of its own", id)
		assert.Equal(t, "acme", attr(a, otelwebhooks.AttrProvider))
		assert.Equal(t, "tenant-1", attr(a, otelwebhooks.AttrTenant))
		switch attr(a, otelwebhooks.AttrOutcome) {
		case "dead_lettered":
			assert.Equal(t, "d3", id)
			assert.Equal(t, "permanent", attr(a, otelwebhooks.AttrErrorClass))
			assert.Equal(t, codes.Error, a.Status().Code)
			assert.Equal(t, "dead_lettered: permanent", a.Status().Description)
		case "retried":
			assert.Equal(t, "d2", id)
			assert.Equal(t, "1", attr(a, otelwebhooks.AttrAttempt))
		case "succeeded":
			assert.Equal(t, codes.Unset, a.Status().Code)
		}
	}
}

func attr(sp sdktrace.ReadOnlySpan, k attribute.Key) string {
	for _, kv := range sp.Attributes() {
		if kv.Key == k {
			return kv.Value.String()
		}
	}
	return ""
}

func attrs(sp sdktrace.ReadOnlySpan) map[attribute.Key]string {
	out := map[attribute.Key]string{}
	for _, kv := range sp.Attributes() {
		out[kv.Key] = kv.Value.String()
	}
	return out
}

// TestUnavailable marks a receive the store failed as an error span.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	s := newSDK(t)
	obs, err := otelwebhooks.New(otelwebhooks.WithMeterProvider(s.meters), otelwebhooks.WithTracerProvider(s.tracers))
	require.NoError(t, err)
	rcv, err := webhooks.NewReceiver(registry(t), brokenInbox{}, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithObserver(obs), webhooks.WithLogger(discard))
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	rcv.ServeHTTP(rec, signed("u1", "ok", `{}`))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	spans := s.spans.Ended()
	require.Len(t, spans, 1)
	assert.Equal(t, codes.Error, spans[0].Status().Code)
	assert.Contains(t, spans[0].Status().Description, "disk on fire")
	assert.Equal(t, map[string]float64{"provider=acme,status=unavailable": 1}, counts(t, find(t, s.collect(t), "webhooks.received")))
}

type brokenInbox struct{ webhooks.Enqueuer }

func (brokenInbox) Enqueue(context.Context, webhooks.Envelope) (webhooks.EnqueueResult, error) {
	return webhooks.EnqueueResult{}, errors.New("disk on fire")
}

// TestAttemptsWithoutDispatch covers what the Processor reports without a
// handler run: a lost lease, and a dead letter for a crash loop (no
// StartAttempt), which gets a span of its own, still linked.
func TestAttemptsWithoutDispatch(t *testing.T) {
	t.Parallel()
	s := newSDK(t)
	obs, err := otelwebhooks.New(otelwebhooks.WithMeterProvider(s.meters), otelwebhooks.WithTracerProvider(s.tracers))
	require.NoError(t, err)
	ctx := context.Background()
	link := obs.TraceLink(obs.StartReceive(ctx, webhooks.ReceiveStartData{Route: webhooks.Route{Provider: "acme"}}))
	require.NotEmpty(t, link)
	ev := webhooks.Event{Provider: "acme", ID: "e1", Type: "t", Attempt: 3, TraceLink: link}

	actx := obs.StartAttempt(ctx, webhooks.AttemptStartData{Event: ev})
	obs.EndAttempt(actx, webhooks.AttemptEndData{Event: ev, LeaseLost: true})
	obs.EndAttempt(ctx, webhooks.AttemptEndData{Event: ev, Settlement: webhooks.Settlement{Outcome: webhooks.AttemptDeadLettered, Failure: webhooks.Failure{Class: webhooks.FailureLeaseExpired}}})

	rm := s.collect(t)
	assert.Equal(t, map[string]float64{"event_type=t,provider=acme": 1}, counts(t, find(t, rm, "webhooks.leases_lost")))
	assert.Equal(t, map[string]float64{"error_class=lease_expired,event_type=t,provider=acme": 1}, counts(t, find(t, rm, "webhooks.dead_lettered")))
	assert.Equal(t, map[string]float64{"event_type=t,outcome=lease_lost,provider=acme": 1}, counts(t, find(t, rm, "webhooks.handler.duration")),
		"only a dispatched attempt has a duration")
	spans := s.spans.Ended()
	require.Len(t, spans, 2)
	for _, sp := range spans {
		assert.Equal(t, otelwebhooks.SpanAttempt, sp.Name())
		require.Len(t, sp.Links(), 1)
		assert.Equal(t, link, fmt.Sprintf("00-%s-%s-01", sp.Links()[0].SpanContext.TraceID(), sp.Links()[0].SpanContext.SpanID()))
		assert.Equal(t, codes.Error, sp.Status().Code)
	}
	assert.Equal(t, "lease_lost", attr(spans[0], otelwebhooks.AttrOutcome))
	assert.Equal(t, "lease_expired", attr(spans[1], otelwebhooks.AttrErrorClass))
}

// TestNoPayloadOrSecret sends a body, a header and a secret with markers
// through every path (accepted, duplicate, conflict, rejected, retried,
// dead-lettered with the payload quoted in the handler's error) and scans
// every span and metric field for them.
func TestNoPayloadOrSecret(t *testing.T) {
	t.Parallel()
	s := newSDK(t)
	obs, err := otelwebhooks.New(otelwebhooks.WithMeterProvider(s.meters), otelwebhooks.WithTracerProvider(s.tracers))
	require.NoError(t, err)
	p := newPipeline(t, obs, handler())
	const payload = `{"card":"PAYLOAD-MARKER-91c3"}`
	send := func(id, typ, body string, mutate func(*http.Request)) {
		req := signed(id, typ, body)
		req.Header.Set("X-Custom", "HEADER-MARKER-77d0")
		req.Header.Set("Authorization", "Bearer "+secret)
		if mutate != nil {
			mutate(req)
		}
		p.serve(t, req)
	}
	send("m1", "flaky", payload, nil)
	send("m2", "bad", payload, nil)
	send("m2", "bad", payload, nil)
	send("m2", "bad", payload+" ", nil) // a conflict
	send("m3", "ok", payload, func(r *http.Request) { r.Header.Set("X-Hub-Signature-256", "sha256="+strings.Repeat("ab", 32)) })
	p.wait(t, "m1:retried", "m1:succeeded", "m2:dead_lettered")

	markers := []string{"PAYLOAD-MARKER", "HEADER-MARKER", secret, "sha256=", "abababab"}
	check := func(where, s string) {
		for _, m := range markers {
			assert.NotContains(t, s, m, "%s holds %q", where, m)
		}
	}
	spans := s.spans.Ended()
	require.NotEmpty(t, spans)
	for _, sp := range spans {
		where := "span " + sp.Name()
		check(where+" name", sp.Name())
		check(where+" status", sp.Status().Description)
		for _, kv := range sp.Attributes() {
			check(where+" attribute "+string(kv.Key), string(kv.Key)+"="+kv.Value.String())
		}
		for _, e := range sp.Events() {
			check(where+" event", e.Name)
			for _, kv := range e.Attributes {
				check(where+" event attribute", string(kv.Key)+"="+kv.Value.String())
			}
		}
		for _, l := range sp.Links() {
			for _, kv := range l.Attributes {
				check(where+" link attribute", string(kv.Key)+"="+kv.Value.String())
			}
		}
		for _, kv := range sp.Resource().Attributes() {
			check(where+" resource", kv.Value.String())
		}
	}
	rm := s.collect(t)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			check("metric "+m.Name, m.Name+" "+m.Description)
			for k := range counts(t, m) {
				check("metric "+m.Name+" attributes", k)
			}
		}
	}
}

// TestNoopTracer: with OpenTelemetry's no-op tracer provider the Observer
// starts no span, never ends the caller's, and still counts.
func TestNoopTracer(t *testing.T) {
	t.Parallel()
	s := newSDK(t)
	obs, err := otelwebhooks.New(otelwebhooks.WithMeterProvider(s.meters), otelwebhooks.WithTracerProvider(tracenoop.NewTracerProvider()))
	require.NoError(t, err)
	ctx, parent := s.tracers.Tracer("host").Start(context.Background(), "host request")
	rctx := obs.StartReceive(ctx, webhooks.ReceiveStartData{Route: webhooks.Route{Provider: "acme"}})
	assert.Empty(t, obs.TraceLink(rctx), "no span, no link")
	obs.EndReceive(rctx, webhooks.ReceiveEndData{Route: webhooks.Route{Provider: "acme"}, Result: webhooks.ReceiveResult{Status: webhooks.StatusRejected, Reason: webhooks.ReasonBadSignature}})
	ev := webhooks.Event{Provider: "acme", ID: "e", Type: "t", Attempt: 1}
	dead := webhooks.AttemptEndData{Event: ev, Settlement: webhooks.Settlement{Outcome: webhooks.AttemptDeadLettered, Failure: webhooks.Failure{Class: webhooks.FailurePermanent}}}
	obs.EndAttempt(obs.StartAttempt(ctx, webhooks.AttemptStartData{Event: ev}), dead)
	obs.EndAttempt(ctx, dead)
	assert.Empty(t, s.spans.Ended(), "the host's span is the host's to end")
	parent.End()

	rm := s.collect(t)
	assert.Equal(t, map[string]float64{"provider=acme,status=rejected": 1}, counts(t, find(t, rm, "webhooks.received")))
	assert.Equal(t, map[string]float64{"error_class=permanent,event_type=t,provider=acme": 2}, counts(t, find(t, rm, "webhooks.dead_lettered")))
	assert.Equal(t, map[string]float64{"event_type=t,outcome=dead_lettered,provider=acme": 1}, counts(t, find(t, rm, "webhooks.handler.duration")))

	// With neither spans nor metrics, the context passes through as it is.
	quiet, err := otelwebhooks.New(otelwebhooks.WithMeterProvider(metricnoop.NewMeterProvider()), otelwebhooks.WithTracerProvider(tracenoop.NewTracerProvider()))
	require.NoError(t, err)
	rctx = quiet.StartReceive(ctx, webhooks.ReceiveStartData{Route: webhooks.Route{Provider: "acme"}})
	assert.Equal(t, ctx, rctx)
	assert.Empty(t, quiet.TraceLink(rctx))
	assert.Equal(t, ctx, quiet.StartAttempt(ctx, webhooks.AttemptStartData{Event: ev}))
}

// TestNoopProvidersAllocateNothing holds the claim that OpenTelemetry off
// costs nothing: on the no-op meter and tracer providers every Observer
// call, for every outcome, allocates nothing (BenchmarkObserverCalls
// measures the time).
func TestNoopProvidersAllocateNothing(t *testing.T) {
	// Not parallel: AllocsPerRun counts the whole process's allocations.
	obs, err := otelwebhooks.New(otelwebhooks.WithMeterProvider(metricnoop.NewMeterProvider()), otelwebhooks.WithTracerProvider(tracenoop.NewTracerProvider()))
	require.NoError(t, err)
	ctx := context.Background()
	route := webhooks.Route{Provider: "acme", Tenant: "t"}
	key := webhooks.InboxKey{Provider: "acme", Tenant: "t", EventID: "e"}
	ev := webhooks.Event{Provider: "acme", Tenant: "t", ID: "e", Type: "push", Attempt: 2, TraceLink: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	failed := webhooks.Failure{Class: webhooks.FailureError, Message: "boom", Transient: true}
	for _, end := range []webhooks.ReceiveEndData{
		{Route: route, Result: webhooks.ReceiveResult{Status: webhooks.StatusAccepted, Key: key, EventType: "push"}, StoreTime: time.Millisecond},
		{Route: route, Result: webhooks.ReceiveResult{Status: webhooks.StatusDuplicate, Key: key, EventType: "push"}, StoreTime: time.Millisecond},
		{Route: route, Result: webhooks.ReceiveResult{Status: webhooks.StatusRejected, Reason: webhooks.ReasonBadSignature}, Err: webhooks.ReasonBadSignature},
		{Route: route, Result: webhooks.ReceiveResult{Status: webhooks.StatusUnavailable}, Err: errors.New("down"), StoreTime: 2 * time.Second},
	} {
		allocs := testing.AllocsPerRun(1000, func() {
			rctx := obs.StartReceive(ctx, webhooks.ReceiveStartData{Route: route})
			_ = obs.TraceLink(rctx)
			obs.EndReceive(rctx, end)
		})
		assert.Zero(t, allocs, "allocations per receive answered %v", end.Result.Status)
	}
	for _, end := range []webhooks.AttemptEndData{
		{Event: ev, Settlement: webhooks.Settlement{Outcome: webhooks.AttemptSucceeded}},
		{Event: ev, Settlement: webhooks.Settlement{Outcome: webhooks.AttemptRetried, Failure: failed, RetryAt: time.Now()}},
		{Event: ev, Settlement: webhooks.Settlement{Outcome: webhooks.AttemptDeadLettered, Failure: webhooks.Failure{Class: webhooks.FailurePermanent, Message: "no"}}},
		{Event: ev, LeaseLost: true},
	} {
		allocs := testing.AllocsPerRun(1000, func() {
			obs.EndAttempt(obs.StartAttempt(ctx, webhooks.AttemptStartData{Event: ev}), end)
		})
		assert.Zero(t, allocs, "allocations per attempt %s (lease lost: %v)", end.Settlement.Outcome, end.LeaseLost)
		allocs = testing.AllocsPerRun(1000, func() { obs.EndAttempt(ctx, end) })
		assert.Zero(t, allocs, "allocations per attempt %s (lease lost: %v) settled without a dispatch", end.Settlement.Outcome, end.LeaseLost)
	}
}
