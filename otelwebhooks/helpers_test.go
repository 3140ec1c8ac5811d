package otelwebhooks_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
)

var discard = slog.New(slog.DiscardHandler)

// sdk is an OpenTelemetry SDK whose spans and metrics a test reads.
type sdk struct {
	spans   *tracetest.SpanRecorder
	reader  *sdkmetric.ManualReader
	tracers *sdktrace.TracerProvider
	meters  *sdkmetric.MeterProvider
}

func newSDK(t testing.TB) *sdk {
	t.Helper()
	s := &sdk{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	s.tracers = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(s.spans))
	s.meters = sdkmetric.NewMeterProvider(sdkmetric.WithReader(s.reader))
	t.Cleanup(func() {
		_ = s.tracers.Shutdown(context.Background())
		_ = s.meters.Shutdown(context.Background())
	})
	return s
}

// collect reads every metric.
func (s *sdk) collect(t testing.TB) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, s.reader.Collect(context.Background(), &rm))
	return rm
}

// find returns the metric named name, or fails.
func find(t testing.TB, rm metricdata.ResourceMetrics, name string) metricdata.Metrics {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m
			}
		}
	}
	t.Fatalf("no metric %s", name)
	return metricdata.Metrics{}
}

// labels renders an attribute set as "k=v,k=v", in key order.
func labels(set attribute.Set) string {
	var b strings.Builder
	for i, kv := range set.ToSlice() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(string(kv.Key) + "=" + kv.Value.String())
	}
	return b.String()
}

// counts maps each data point's labels to its value (a sum or gauge) or
// its count (a histogram).
func counts(t testing.TB, m metricdata.Metrics) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			out[labels(p.Attributes)] = float64(p.Value)
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			out[labels(p.Attributes)] = float64(p.Value)
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			out[labels(p.Attributes)] = p.Value
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			out[labels(p.Attributes)] = float64(p.Count)
		}
	default:
		t.Fatalf("metric %s has data of type %T", m.Name, m.Data)
	}
	return out
}

const secret = "SECRET-MARKER-5f2a"

// signed is a GitHub-style delivery of body, signed with secret.
func signed(id, eventType, body string) *http.Request {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	req := httptest.NewRequest(http.MethodPost, "/webhooks/acme/tenant-1", strings.NewReader(body))
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(m.Sum(nil)))
	req.Header.Set("X-GitHub-Event", eventType)
	req.Header.Set("X-GitHub-Delivery", id)
	return req
}

// registry has provider "acme", verified as GitHub is, with secret.
func registry(t testing.TB) *webhooks.Registry {
	t.Helper()
	v, err := webhooks.NewHMACVerifier(providers.GitHubOptions(), webhooks.TenantSecrets(map[string][]string{"tenant-1": {secret}}))
	require.NoError(t, err)
	r := webhooks.NewRegistry()
	r.MustRegister("acme", v)
	return r
}
