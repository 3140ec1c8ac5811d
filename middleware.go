package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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
// anything else means the verifier could not decide (answer 503).
// Verification alone does not deduplicate or guard against replays beyond
// the verifier's timestamp window: the Receiver does. Nor does it judge
// route.Tenant: a tenant taken from the request's path is the sender's
// choice, so set it only where v's credentials are per tenant (PerTenant),
// as VerifyMiddleware and the Receiver do.
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

// VerifyMiddleware returns middleware that verifies each request with v as
// the given provider and passes verified requests on, with the body restored
// and the Verification in the context (see VerificationFromContext). It
// answers provider challenges (Verification.Handshake) itself, 401 with the
// reason code to rejected requests, 413 to bodies over the limit, and 503
// when the verifier cannot decide; the answers are the Receiver's JSON
// bodies.
//
// It takes the Receiver's options: WithMaxBodyBytes, WithLogger,
// WithTenants and WithUnavailableRetryAfter apply (rejections are logged to slog.Default()
// unless WithLogger says otherwise); options about storing have no effect.
// The tenant, whose secrets apply, is the request's {tenant} path wildcard
// when the route pattern has one (mux.Handle("POST /hooks/acme/{tenant}",
// …)), and none otherwise. As at a Receiver, a tenant is served only where
// v's credentials are per tenant (TenantScoped) or WithTenants names the
// provider: with shared secrets the sender would choose the tenant the
// handler after it sees, so such requests are answered 404
// {"status":"not_found"} before they are verified.
func VerifyMiddleware(provider string, v Verifier, opts ...ReceiverOption) func(http.Handler) http.Handler {
	cfg := receiverConfig{maxBodyBytes: DefaultMaxBodyBytes, retryAfter: DefaultUnavailableRetryAfter, dropped: map[string]bool{}, tenants: map[string]bool{}}
	for _, o := range opts {
		o.applyReceiver(&cfg)
	}
	cfg.logger = loggerOrDefault(cfg.logger)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			route := Route{Provider: provider, Tenant: r.PathValue("tenant")}
			if err := checkTenant(cfg.tenants, route, v); err != nil {
				cfg.logger.WarnContext(r.Context(), "webhook refused", "provider", provider, "tenant", route.Tenant, "err", err)
				writeJSON(w, StatusNotFound.HTTPStatus(), responseBody{Status: StatusNotFound.String()})
				return
			}
			ver, err := VerifyHTTPRequest(r.Context(), v, route, r, cfg.maxBodyBytes)
			var (
				ve       *VerificationError
				tooLarge *http.MaxBytesError
			)
			switch {
			case err == nil && ver.Handshake != nil:
				writeResponse(w, ver.Handshake)
			case err == nil:
				next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), verificationKey{}, ver)))
			case errors.As(err, &tooLarge):
				cfg.logger.WarnContext(r.Context(), "webhook body over the limit", "provider", provider, "limit_bytes", cfg.maxBodyBytes)
				writeJSON(w, http.StatusRequestEntityTooLarge, responseBody{Status: "too_large"})
			case errors.As(err, &ve):
				cfg.logger.WarnContext(r.Context(), "webhook rejected", append([]any{"provider", provider, "tenant", route.Tenant}, rejectionAttrs(ve.Reason, err)...)...)
				writeJSON(w, http.StatusUnauthorized, responseBody{Status: StatusRejected.String(), Reason: string(ve.Reason)})
			default:
				cfg.logger.ErrorContext(r.Context(), "webhook verification failed", "provider", provider, "tenant", route.Tenant, "err", err)
				w.Header().Set("Retry-After", strconv.Itoa(int(cfg.retryAfter/time.Second)))
				writeJSON(w, http.StatusServiceUnavailable, responseBody{Status: StatusUnavailable.String()})
			}
		})
	}
}
