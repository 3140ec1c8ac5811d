package otelwebhooks_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/otelwebhooks"
)

// attempt runs one attempt of ev through the Observer, ending with outcome.
func attempt(obs *otelwebhooks.Observer, ev webhooks.Event, outcome webhooks.AttemptOutcome) {
	ctx := obs.StartAttempt(context.Background(), webhooks.AttemptStartData{Event: ev})
	s := webhooks.Settlement{Outcome: outcome}
	if outcome != webhooks.AttemptSucceeded {
		s.Failure = webhooks.Failure{Class: webhooks.FailureError}
	}
	obs.EndAttempt(ctx, webhooks.AttemptEndData{Event: ev, Settlement: s})
}

// TestHandlerLabelIsBoundedAndKeysAreNot: attempts carry their handler
// (named handlers only, so a host with one handler keeps its series), at
// most webhooks.MaxHandlers names of them, and never their ordering key,
// which senders choose: 3,000 attempts over 1,000 keys and 40 handler
// names make no series per key.
func TestHandlerLabelIsBoundedAndKeysAreNot(t *testing.T) {
	t.Parallel()
	s := newSDK(t)
	obs, err := otelwebhooks.New(otelwebhooks.WithMeterProvider(s.meters), otelwebhooks.WithTracerProvider(s.tracers))
	require.NoError(t, err)
	ev := func(handler string, i int) webhooks.Event {
		return webhooks.Event{Provider: "acme", Tenant: "t", ID: fmt.Sprintf("e%d", i), Type: "order.paid", Attempt: 1,
			Handler: handler, Ordering: webhooks.Ordering{Key: fmt.Sprintf("key-%d", i%1000), Version: int64(i)}}
	}
	attempt(obs, ev("", 0), webhooks.AttemptSucceeded)
	attempt(obs, ev("ledger", 1), webhooks.AttemptSucceeded)
	attempt(obs, ev("ledger", 2), webhooks.AttemptRetried)
	attempt(obs, ev("audit", 3), webhooks.AttemptDeadLettered)
	for i := range 3000 {
		attempt(obs, ev(fmt.Sprintf("h%d", i%40), i), webhooks.AttemptSucceeded)
	}
	rm := s.collect(t)
	got := counts(t, find(t, rm, "webhooks.handler.duration"))
	assert.Equal(t, 1.0, got["event_type=order.paid,outcome=succeeded,provider=acme"], "the default handler's attempt has no handler label")
	assert.Equal(t, 1.0, got["event_type=order.paid,handler=ledger,outcome=succeeded,provider=acme"])
	assert.Equal(t, map[string]float64{"error_class=error,event_type=order.paid,handler=ledger,provider=acme": 1},
		counts(t, find(t, rm, "webhooks.retried")))
	assert.Equal(t, map[string]float64{"error_class=error,event_type=order.paid,handler=audit,provider=acme": 1},
		counts(t, find(t, rm, "webhooks.dead_lettered")))
	handlers := map[string]bool{}
	for l := range got {
		for kv := range strings.SplitSeq(l, ",") {
			if name, ok := strings.CutPrefix(kv, "handler="); ok {
				handlers[name] = true
			}
		}
		assert.NotContains(t, l, "key-", "an ordering key is never a label")
	}
	assert.Len(t, handlers, webhooks.MaxHandlers+1, "the first %d handler names, then %q", webhooks.MaxHandlers, otelwebhooks.HandlerOther)
	assert.True(t, handlers[otelwebhooks.HandlerOther])
	for name, n := range series(rm) {
		assert.LessOrEqual(t, n, webhooks.MaxHandlers+4, "%s has %d series", name, n)
	}

	var named int
	for _, span := range s.spans.Ended() {
		for _, kv := range span.Attributes() {
			assert.NotContains(t, kv.Value.String(), "key-", "nor a span attribute")
			if kv.Key == otelwebhooks.AttrHandler {
				named++
				assert.NotEmpty(t, kv.Value.AsString())
			}
		}
	}
	assert.Equal(t, 3003, named, "every named handler's attempt span has its handler, the default handler's none")
}

func TestHandlerAndHeldKeyGauges(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	inbox := memstore.NewInbox()
	at := time.Now().Add(-time.Minute)
	jobs := []webhooks.Job{{Handler: "ledger", Ordered: true}, {Handler: "audit"}}
	for i, id := range []string{"a", "b", "c"} {
		_, err := inbox.Enqueue(ctx, webhooks.Envelope{Key: webhooks.InboxKey{Provider: "acme", EventID: id}, EventType: "order.paid",
			ReceivedAt: at.Add(time.Duration(i) * time.Millisecond), Jobs: jobs, Ordering: webhooks.Ordering{Key: "secret-customer-1"}})
		require.NoError(t, err)
	}
	leases, err := inbox.Acquire(ctx, webhooks.AcquireRequest{Now: at.Add(time.Second), LeaseDuration: time.Minute, Max: 1, Handler: "ledger"})
	require.NoError(t, err)
	require.Len(t, leases, 1)
	require.NoError(t, inbox.Settle(ctx, webhooks.Settlement{Lease: leases[0], Outcome: webhooks.AttemptRetried, RetryAt: at.Add(time.Hour),
		Failure: webhooks.Failure{Class: webhooks.FailureError}, Now: at.Add(time.Second)}))

	s := newSDK(t)
	_, err = otelwebhooks.New(otelwebhooks.WithMeterProvider(s.meters), otelwebhooks.WithStats(inbox))
	require.NoError(t, err)
	rm := s.collect(t)
	assert.Equal(t, 2.0, counts(t, find(t, rm, "webhooks.items"))["state=waiting"])
	jobsGauge := counts(t, find(t, rm, "webhooks.handler.jobs"))
	assert.Equal(t, 2.0, jobsGauge["handler=ledger,state=waiting"], "b and c wait behind a")
	assert.Equal(t, 1.0, jobsGauge["handler=ledger,state=pending"])
	assert.Equal(t, 3.0, jobsGauge["handler=audit,state=pending"])
	assert.Equal(t, map[string]float64{"handler=ledger": 0, "handler=audit": 3}, counts(t, find(t, rm, "webhooks.handler.backlog")))
	assert.Equal(t, map[string]float64{"handler=ledger": 1, "handler=audit": 0}, counts(t, find(t, rm, "webhooks.held_keys")))
	age := counts(t, find(t, rm, "webhooks.handler.oldest_due.age"))
	assert.InDelta(t, 60, age["handler=audit"], 30)
	assert.Zero(t, age["handler=ledger"], "ledger's head is not due until its retry")
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if g, ok := m.Data.(metricdata.Gauge[int64]); ok {
				for _, p := range g.DataPoints {
					assert.NotContains(t, labels(p.Attributes), "secret-customer", m.Name)
				}
			}
		}
	}
}

// TestPausedGauge: the paused gauge counts the pauses in force by
// handler, cause and whether a scope narrows them (two scopes of one
// handler: 2, with no scope value as a label); the parked gauge counts
// the jobs a scoped pause holds.
func TestPausedGauge(t *testing.T) {
	t.Parallel()
	inbox := memstore.NewInbox()
	now := time.Now()
	for _, tenant := range []string{"acct_1", "acct_2"} {
		_, err := inbox.Enqueue(t.Context(), webhooks.Envelope{Key: webhooks.InboxKey{Provider: "stripe", Tenant: tenant, EventID: "e"},
			EventType: "invoice.paid", Payload: []byte(`{}`), ReceivedAt: now, Jobs: []webhooks.Job{{Handler: "ledger"}}})
		require.NoError(t, err)
	}
	require.NoError(t, inbox.Pause(t.Context(), webhooks.PauseRequest{Handler: "audit", Cause: webhooks.PauseBreaker, Actor: "w", Reason: "r",
		Now: now, Until: now.Add(time.Minute)}))
	require.NoError(t, inbox.Pause(t.Context(), webhooks.PauseRequest{Handler: "ledger", Cause: webhooks.PauseOperator, Actor: "w", Reason: "r", Now: now}))
	for _, tenant := range []string{"acct_1", "acct_9"} {
		require.NoError(t, inbox.Pause(t.Context(), webhooks.PauseRequest{Handler: "ledger", Scope: webhooks.PauseScope{Provider: "stripe", Tenant: tenant},
			Cause: webhooks.PauseOperator, Actor: "w", Reason: "r", Now: now}))
	}
	s := newSDK(t)
	_, err := otelwebhooks.New(otelwebhooks.WithMeterProvider(s.meters), otelwebhooks.WithStats(inbox))
	require.NoError(t, err)
	metrics := s.collect(t)
	assert.Equal(t, map[string]float64{"cause=breaker,handler=audit,scoped=false": 1, "cause=operator,handler=ledger,scoped=false": 1,
		"cause=operator,handler=ledger,scoped=true": 2},
		counts(t, find(t, metrics, "webhooks.handler.paused")))
	assert.Equal(t, map[string]float64{"": 1}, counts(t, find(t, metrics, "webhooks.parked")), "acct_1's job is held")
}
