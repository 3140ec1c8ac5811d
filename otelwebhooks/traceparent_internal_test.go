package otelwebhooks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/otel/trace"
)

func TestTraceparentRoundTrip(t *testing.T) {
	t.Parallel()
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	})
	const want = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	assert.Equal(t, want, traceparent(sc), "the W3C specification's example")
	got, ok := parseTraceparent(want)
	assert.True(t, ok)
	assert.Equal(t, sc.TraceID(), got.TraceID())
	assert.Equal(t, sc.SpanID(), got.SpanID())
	assert.True(t, got.IsSampled())
	assert.True(t, got.IsRemote())
	assert.Empty(t, traceparent(trace.SpanContext{}), "no span, no link")

	got, ok = parseTraceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-future")
	assert.True(t, ok, "a later version's first fields are read")
	assert.False(t, got.IsSampled())
	for _, bad := range []string{
		"",
		"trace-of-acme",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", // version 00 has nothing more
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",       // an invalid version
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",       // an invalid trace ID
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",       // an invalid span ID
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",       // upper case
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-zz",       // not hex
		"00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",       // not dashes
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",      // a later version, no dash
	} {
		_, ok := parseTraceparent(bad)
		assert.False(t, ok, bad)
	}
}

func FuzzParseTraceparent(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		sc, ok := parseTraceparent(s)
		if !ok {
			return
		}
		if !sc.IsValid() {
			t.Fatalf("parseTraceparent(%q) accepted an invalid span context", s)
		}
		if back := traceparent(sc); back[3:52] != s[3:52] {
			t.Fatalf("parseTraceparent(%q) then traceparent = %q", s, back)
		}
	})
}
