package otelwebhooks_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/otelwebhooks"
)

// series counts the data points (label sets) of every metric: a
// histogram's data point is a series per bucket in Prometheus.
func series(rm metricdata.ResourceMetrics) map[string]int {
	out := map[string]int{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				out[m.Name] = len(d.DataPoints)
			case metricdata.Histogram[float64]:
				out[m.Name] = len(d.DataPoints)
			}
		}
	}
	return out
}

// awaitAttempts waits for n attempts to end.
func (p *pipeline) awaitAttempts(t *testing.T, n int) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for i := range n {
		select {
		case <-p.ended:
		case <-timeout:
			t.Fatalf("%d of %d attempts ended within 30s", i, n)
		}
	}
}

// TestAttackerChosenTypesMakeBoundedSeries: a sender who chooses event
// types (GitHub's X-GitHub-Event is not signed) sends 1,000 distinct
// ones. Types no handler takes are all one label value; types a wildcard
// handler takes keep their own only up to the Observer's bound.
func TestAttackerChosenTypesMakeBoundedSeries(t *testing.T) {
	t.Parallel()
	s := newSDK(t)
	obs, err := otelwebhooks.New(otelwebhooks.WithMeterProvider(s.meters))
	require.NoError(t, err)
	mux := webhooks.NewMux()
	ok := func(context.Context, webhooks.Event) error { return nil }
	mux.MustHandleFunc("push", ok)
	mux.MustHandleFunc("order.*", ok)
	// A dispatcher that cannot say what it handles: the receiver stores
	// every type, so each reaches the processor (the worst case).
	p := newPipeline(t, obs, mux.Dispatch)

	require.Equal(t, http.StatusAccepted, p.serve(t, signed("push-1", "push", `{}`)))
	p.awaitAttempts(t, 1)
	const attack = 1000
	for i := range attack {
		// Bodies of their own: GitHub's type is not signed, so one body is
		// refused under a second type (webhooks.UnsignedFields).
		require.Equal(t, http.StatusAccepted, p.serve(t, signed(fmt.Sprintf("u%d", i), fmt.Sprintf("attack-%d", i), fmt.Sprintf(`{"u":%d}`, i))))
		require.Equal(t, http.StatusAccepted, p.serve(t, signed(fmt.Sprintf("o%d", i), fmt.Sprintf("order.x%d", i), fmt.Sprintf(`{"o":%d}`, i))))
	}
	p.awaitAttempts(t, 2*attack)

	rm := s.collect(t)
	got := counts(t, find(t, rm, "webhooks.handler.duration"))
	// push and the first order types up to the bound have their own;
	// every unhandled type, and the order types beyond, are "other".
	ownOrders := otelwebhooks.DefaultMaxEventTypes - 1
	assert.Equal(t, float64(attack+attack-ownOrders), got["event_type=other,outcome=succeeded,provider=acme"], "one label value for the rest")
	assert.Equal(t, float64(1), got["event_type=push,outcome=succeeded,provider=acme"], "a handled type keeps its own")
	orders := 0
	for l := range got {
		if strings.HasPrefix(l, "event_type=order.x") {
			orders++
		}
	}
	assert.Equal(t, ownOrders, orders, "unhandled types take none of the bound's label values")
	for name, n := range series(rm) {
		assert.LessOrEqual(t, n, otelwebhooks.DefaultMaxEventTypes+2, "%s has %d series after %d attacker-chosen types", name, n, 2*attack)
	}
	assert.Equal(t, otelwebhooks.DefaultMaxEventTypes+1, len(got), "the first %d types have a series of their own, then \"other\"", otelwebhooks.DefaultMaxEventTypes)
}

func TestMaxEventTypes(t *testing.T) {
	t.Parallel()
	s := newSDK(t)
	obs, err := otelwebhooks.New(otelwebhooks.WithMeterProvider(s.meters), otelwebhooks.WithMaxEventTypes(2))
	require.NoError(t, err)
	p := newPipeline(t, obs, func(context.Context, webhooks.Event) error { return nil })
	for i, typ := range []string{"a", "b", "c", "a", "d"} {
		require.Equal(t, http.StatusAccepted, p.serve(t, signed(fmt.Sprintf("e%d", i), typ, fmt.Sprintf(`{"n":%d}`, i))))
		p.awaitAttempts(t, 1) // in order, so the first two types are a and b
	}
	assert.Equal(t, map[string]float64{
		"event_type=a,outcome=succeeded,provider=acme":     2,
		"event_type=b,outcome=succeeded,provider=acme":     1,
		"event_type=other,outcome=succeeded,provider=acme": 2,
	}, counts(t, find(t, s.collect(t), "webhooks.handler.duration")))

	_, err = otelwebhooks.New(otelwebhooks.WithMaxEventTypes(-1))
	assert.Error(t, err)
}
