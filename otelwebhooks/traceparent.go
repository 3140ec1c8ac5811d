package otelwebhooks

import (
	"encoding/hex"

	"go.opentelemetry.io/otel/trace"
)

// traceparent formats sc as a W3C traceparent (version 00), or "" when it
// is not valid (no span, as with a no-op tracer and no parent).
func traceparent(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	tid, sid := sc.TraceID(), sc.SpanID()
	var b [55]byte
	copy(b[:], "00-")
	hex.Encode(b[3:35], tid[:])
	b[35] = '-'
	hex.Encode(b[36:52], sid[:])
	b[52] = '-'
	hex.Encode(b[53:55], []byte{byte(sc.TraceFlags())})
	return string(b[:])
}

// parseTraceparent reads a W3C traceparent as a remote span context. It
// accepts version 00 and, as the specification asks, the first 55
// characters of a later version; anything else is no link.
func parseTraceparent(s string) (trace.SpanContext, bool) {
	if len(s) < 55 || s[2] != '-' || s[35] != '-' || s[52] != '-' || (len(s) > 55 && (s[:2] == "00" || s[55] != '-')) {
		return trace.SpanContext{}, false
	}
	var version [1]byte
	if _, err := hex.Decode(version[:], []byte(s[:2])); err != nil || version[0] == 0xff || !lowerHex(s[:55]) {
		return trace.SpanContext{}, false
	}
	var cfg trace.SpanContextConfig
	var flags [1]byte
	if _, err := hex.Decode(cfg.TraceID[:], []byte(s[3:35])); err != nil {
		return trace.SpanContext{}, false
	}
	if _, err := hex.Decode(cfg.SpanID[:], []byte(s[36:52])); err != nil {
		return trace.SpanContext{}, false
	}
	if _, err := hex.Decode(flags[:], []byte(s[53:55])); err != nil {
		return trace.SpanContext{}, false
	}
	cfg.TraceFlags = trace.TraceFlags(flags[0]) & trace.FlagsSampled
	cfg.Remote = true
	sc := trace.NewSpanContext(cfg)
	return sc, sc.IsValid()
}

// lowerHex reports whether s holds only lower-case hex digits and dashes,
// as a traceparent does.
func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') && c != '-' {
			return false
		}
	}
	return true
}
