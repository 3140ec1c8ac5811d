package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// TestMetricsExposition: /metrics writes each kind of instrument as
// Prometheus reads it (the text was checked line for line against the
// OpenTelemetry Prometheus exporter's, but for 1000000, which the
// exporter writes 1e+06): counters as …_total, up-down counters and
// gauges as gauges, histograms as cumulative buckets, sum and count; the
// unit "s" as _seconds; label values and help text escaped; families
// sorted by name and lines by labels.
func TestMetricsExposition(t *testing.T) {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	meters := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { require.NoError(t, meters.Shutdown(ctx)) }()
	m := meters.Meter("test")

	received, err := m.Int64Counter("webhooks.received", metric.WithUnit("{webhook}"), metric.WithDescription("Received, with a \\ and a\nnewline."))
	require.NoError(t, err)
	received.Add(ctx, 2, metric.WithAttributes(attribute.String("status", "accepted"), attribute.String("provider", "demo")))
	received.Add(ctx, 1, metric.WithAttributes(attribute.String("provider", `we"ird\`+"\n"), attribute.String("status", "rejected")))
	received.Add(ctx, 1000000, metric.WithAttributes(attribute.String("provider", "big")))
	duration, err := m.Float64Histogram("webhooks.handler.duration", metric.WithUnit("s"), metric.WithDescription("Time."), metric.WithExplicitBucketBoundaries(0.0005, 0.5, 120))
	require.NoError(t, err)
	duration.Record(ctx, 3, metric.WithAttributes(attribute.String("event_type", "a.b")))
	duration.Record(ctx, 0.0007, metric.WithAttributes(attribute.String("event_type", "a.b")))
	duration.Record(ctx, 0.25, metric.WithAttributes(attribute.String("event_type", "a")))
	held, err := m.Int64UpDownCounter("webhooks.leases_held", metric.WithUnit("{lease}"), metric.WithDescription("Held."))
	require.NoError(t, err)
	held.Add(ctx, 4)
	held.Add(ctx, -1)
	age, err := m.Float64ObservableGauge("webhooks.oldest_due.age", metric.WithUnit("s"), metric.WithDescription("Age."))
	require.NoError(t, err)
	_, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveFloat64(age, 1.25)
		return nil
	}, age)
	require.NoError(t, err)
	_, err = m.Int64Counter("webhooks.leases_lost", metric.WithDescription("Never added to: not shown."))
	require.NoError(t, err)

	rec := httptest.NewRecorder()
	metricsHandler(reader).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "text/plain; version=0.0.4; charset=utf-8", rec.Header().Get("Content-Type"))
	assert.Equal(t, `# HELP webhooks_handler_duration_seconds Time.
# TYPE webhooks_handler_duration_seconds histogram
webhooks_handler_duration_seconds_bucket{event_type="a",le="0.0005"} 0
webhooks_handler_duration_seconds_bucket{event_type="a",le="0.5"} 1
webhooks_handler_duration_seconds_bucket{event_type="a",le="120"} 1
webhooks_handler_duration_seconds_bucket{event_type="a",le="+Inf"} 1
webhooks_handler_duration_seconds_sum{event_type="a"} 0.25
webhooks_handler_duration_seconds_count{event_type="a"} 1
webhooks_handler_duration_seconds_bucket{event_type="a.b",le="0.0005"} 0
webhooks_handler_duration_seconds_bucket{event_type="a.b",le="0.5"} 1
webhooks_handler_duration_seconds_bucket{event_type="a.b",le="120"} 2
webhooks_handler_duration_seconds_bucket{event_type="a.b",le="+Inf"} 2
webhooks_handler_duration_seconds_sum{event_type="a.b"} 3.0007
webhooks_handler_duration_seconds_count{event_type="a.b"} 2
# HELP webhooks_leases_held Held.
# TYPE webhooks_leases_held gauge
webhooks_leases_held 3
# HELP webhooks_oldest_due_age_seconds Age.
# TYPE webhooks_oldest_due_age_seconds gauge
webhooks_oldest_due_age_seconds 1.25
# HELP webhooks_received_total Received, with a \\ and a\nnewline.
# TYPE webhooks_received_total counter
webhooks_received_total{provider="big"} 1000000
webhooks_received_total{provider="demo",status="accepted"} 2
webhooks_received_total{provider="we\"ird\\\n",status="rejected"} 1
`, rec.Body.String())
}
