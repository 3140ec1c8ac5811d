package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"
)

// VerifyHTTPRequest verifies an *http.Request with v, for hosts that want
// verification without the inbox pipeline. It reads the body once, at most
// maxBytes of it (DefaultMaxBodyBytes when maxBytes <= 0), and puts the bytes
// back in r.Body so the next handler can read them again.
//
// A body over the limit yields an error wrapping an *http.MaxBytesError,
// as http.MaxBytesReader reports it; a rejection, a *VerificationError;
// anything else means the verifier could not decide (answer 503). Verification alone does not deduplicate or guard
// against replays beyond the verifier's timestamp window: the Gateway does.
func VerifyHTTPRequest(ctx context.Context, v Verifier, route Route, r *http.Request, maxBytes int64) (Verification, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBodyBytes
	}
	maxBytes = min(maxBytes, math.MaxInt64-1) // the reader below allows one more
	var body []byte
	if r.Body != nil {
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, maxBytes+1))
		_ = r.Body.Close()
		if err != nil {
			return Verification{}, fmt.Errorf("webhooks: reading the request body: %w", err)
		}
		if int64(len(body)) > maxBytes {
			return Verification{}, fmt.Errorf("webhooks: reading the request body: %w", &http.MaxBytesError{Limit: maxBytes})
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return v.Verify(ctx, route, &Request{Method: r.Method, URL: r.URL, Header: r.Header, Body: body, RemoteAddr: r.RemoteAddr})
}

type verificationKey struct{}

// VerificationFromContext returns the Verification that VerifyMiddleware
// stored in the request's context.
func VerificationFromContext(ctx context.Context) (Verification, bool) {
	v, ok := ctx.Value(verificationKey{}).(Verification)
	return v, ok
}

type verifyConfig struct {
	maxBytes int64
	tenant   func(*http.Request) string
	logger   *slog.Logger
}

// VerifyOption configures VerifyMiddleware.
type VerifyOption func(*verifyConfig)

// WithVerifyMaxBodyBytes limits request bodies; larger ones are answered 413.
// Defaults to DefaultMaxBodyBytes (1 MiB).
func WithVerifyMaxBodyBytes(n int64) VerifyOption { return func(c *verifyConfig) { c.maxBytes = n } }

// WithVerifyTenant tells the middleware which tenant a request is for, so
// per-tenant secrets are used. Defaults to the empty tenant.
func WithVerifyTenant(f func(*http.Request) string) VerifyOption {
	return func(c *verifyConfig) { c.tenant = f }
}

// WithVerifyLogger sets the logger of rejections (never secrets) and
// verifier failures. Defaults to slog.Default(), so a wrong secret shows
// without extra wiring.
func WithVerifyLogger(l *slog.Logger) VerifyOption { return func(c *verifyConfig) { c.logger = l } }

// VerifyMiddleware returns middleware that verifies each request with v as
// the given provider and passes verified requests on, with the body restored
// and the Verification in the context (see VerificationFromContext). It
// answers provider challenges (Verification.Handshake) itself, 401 with the
// reason code to rejected requests, 413 to bodies over the limit, and 503
// when the verifier cannot decide; the answers are the Gateway's JSON bodies.
func VerifyMiddleware(provider string, v Verifier, opts ...VerifyOption) func(http.Handler) http.Handler {
	cfg := verifyConfig{maxBytes: DefaultMaxBodyBytes}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.logger == nil {
		cfg.logger = slog.Default()
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			route := Route{Provider: provider}
			if cfg.tenant != nil {
				route.Tenant = cfg.tenant(r)
			}
			ver, err := VerifyHTTPRequest(r.Context(), v, route, r, cfg.maxBytes)
			var (
				ve       *VerificationError
				tooLarge *http.MaxBytesError
			)
			switch {
			case err == nil && ver.Handshake != nil:
				writeHandshake(w, ver.Handshake)
			case err == nil:
				next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), verificationKey{}, ver)))
			case errors.As(err, &tooLarge):
				cfg.logger.WarnContext(r.Context(), "webhook body over the limit", "provider", provider, "limit_bytes", cfg.maxBytes)
				writeJSON(w, http.StatusRequestEntityTooLarge, responseBody{Status: "too_large"})
			case errors.As(err, &ve):
				cfg.logger.WarnContext(r.Context(), "webhook rejected", "provider", provider, "tenant", route.Tenant, "reason", string(ve.Reason), "err", err)
				writeJSON(w, http.StatusUnauthorized, responseBody{Status: StatusRejected.String(), Reason: string(ve.Reason)})
			default:
				cfg.logger.ErrorContext(r.Context(), "webhook verification failed", "provider", provider, "tenant", route.Tenant, "err", err)
				w.Header().Set("Retry-After", strconv.Itoa(int(DefaultUnavailableRetryAfter/time.Second)))
				writeJSON(w, http.StatusServiceUnavailable, responseBody{Status: StatusUnavailable.String()})
			}
		})
	}
}
