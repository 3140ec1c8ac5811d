package webhooks_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
)

const (
	ghSecret    = "It's a Secret to Everybody"
	ghPayload   = "Hello, World!"
	ghSignature = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
)

func githubRequest(body string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/hooks", strings.NewReader(body))
	req.Header.Set("X-Hub-Signature-256", ghSignature)
	req.Header.Set("X-GitHub-Event", "ping")
	req.Header.Set("X-GitHub-Delivery", "d-1")
	return req
}

func githubVerifier(t *testing.T, secrets ...string) webhooks.Verifier {
	t.Helper()
	v, err := webhooks.NewHMACVerifier(providers.GitHubOptions(), webhooks.StaticSecrets(secrets...))
	require.NoError(t, err)
	return v
}

func TestVerifyHTTPRequestRestoresBody(t *testing.T) {
	t.Parallel()
	req := githubRequest(ghPayload)
	ver, err := webhooks.VerifyHTTPRequest(context.Background(), githubVerifier(t, "old", ghSecret), webhooks.Route{Provider: "github"}, req, 0)
	require.NoError(t, err)
	assert.Equal(t, "d-1", ver.EventID)
	assert.Equal(t, "ping", ver.EventType)
	assert.Equal(t, "static:1", ver.KeyID, "the rotated-in secret matched")
	again, err := io.ReadAll(req.Body)
	require.NoError(t, err)
	assert.Equal(t, ghPayload, string(again), "the next handler reads the same body")

	_, err = webhooks.VerifyHTTPRequest(context.Background(), githubVerifier(t, ghSecret), webhooks.Route{Provider: "github"}, githubRequest(ghPayload), 5)
	var tooLarge *http.MaxBytesError
	require.ErrorAs(t, err, &tooLarge)
	assert.Equal(t, int64(5), tooLarge.Limit)

	_, err = webhooks.VerifyHTTPRequest(context.Background(), githubVerifier(t, ghSecret), webhooks.Route{Provider: "github"}, githubRequest("Hello, World?"), 0)
	assert.ErrorIs(t, err, webhooks.ReasonBadSignature)
}

func TestVerifyMiddleware(t *testing.T) {
	t.Parallel()
	var seen []string
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ver, ok := webhooks.VerificationFromContext(r.Context())
		require.True(t, ok)
		body, _ := io.ReadAll(r.Body)
		seen = append(seen, ver.EventID+":"+string(body))
		w.WriteHeader(http.StatusNoContent)
	})
	var tenants []string
	h := webhooks.VerifyMiddleware("github", webhooks.VerifierFunc(func(ctx context.Context, route webhooks.Route, req *webhooks.Request) (webhooks.Verification, error) {
		tenants = append(tenants, route.Tenant)
		return githubVerifier(t, ghSecret).Verify(ctx, route, req)
	}), webhooks.WithMaxBodyBytes(64), webhooks.WithTenants("github"))(next)

	// The tenant is the route pattern's {tenant} wildcard (served here
	// because WithTenants names the provider).
	mux := http.NewServeMux()
	mux.Handle("POST /hooks/github/{tenant}", h)
	req := githubRequest(ghPayload)
	req.URL.Path = "/hooks/github/acme"
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusNoContent, rec.Code)
	assert.Equal(t, []string{"d-1:" + ghPayload}, seen)
	assert.Equal(t, []string{"acme"}, tenants)
	h.ServeHTTP(httptest.NewRecorder(), githubRequest(ghPayload))
	assert.Equal(t, []string{"acme", ""}, tenants, "no {tenant} wildcard, no tenant")

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, githubRequest("Hello, World?"))
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
	assert.JSONEq(t, `{"status":"rejected","reason":"bad_signature"}`, rec.Body.String())

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, githubRequest(strings.Repeat("x", 65)))
	assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
	assert.Len(t, seen, 2, "refused requests never reach the next handler")
}

// TestVerifyMiddlewareTenantNeedsTenantCredentials: as at a Receiver, a
// {tenant} path segment is served only where the credentials are per
// tenant or WithTenants names the provider; with shared secrets the
// sender would choose the tenant the next handler sees.
func TestVerifyMiddlewareTenantNeedsTenantCredentials(t *testing.T) {
	t.Parallel()
	perTenant, err := webhooks.NewHMACVerifier(providers.GitHubOptions(), webhooks.TenantSecrets(map[string][]string{"acme": {ghSecret}}))
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		v    webhooks.Verifier
		opts []webhooks.ReceiverOption
		want int
	}{
		{"shared secrets", githubVerifier(t, ghSecret), nil, http.StatusNotFound},
		{"shared secrets, WithTenants", githubVerifier(t, ghSecret), []webhooks.ReceiverOption{webhooks.WithTenants("github")}, http.StatusNoContent},
		{"TenantSecrets", perTenant, nil, http.StatusNoContent},
	} {
		var reached []string
		next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			reached = append(reached, r.PathValue("tenant"))
			w.WriteHeader(http.StatusNoContent)
		})
		v := &countingVerifier{Verifier: c.v}
		mux := http.NewServeMux()
		mux.Handle("POST /hooks/github/{tenant}", webhooks.VerifyMiddleware("github", v, c.opts...)(next))
		req := githubRequest(ghPayload)
		req.URL.Path = "/hooks/github/acme"
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		assert.Equal(t, c.want, rec.Code, c.name)
		if c.want == http.StatusNotFound {
			assert.JSONEq(t, `{"status":"not_found"}`, rec.Body.String(), c.name)
			assert.Empty(t, reached, "%s: an invented tenant never reaches the next handler", c.name)
			assert.Zero(t, v.calls, "%s: refused before it is verified (the body is not even read)", c.name)
		} else {
			assert.Equal(t, []string{"acme"}, reached, c.name)
		}
	}
}

// countingVerifier counts its verifications and says what the verifier it
// wraps says of its credentials.
type countingVerifier struct {
	webhooks.Verifier
	calls int
}

func (c *countingVerifier) Verify(ctx context.Context, route webhooks.Route, req *webhooks.Request) (webhooks.Verification, error) {
	c.calls++
	return c.Verifier.Verify(ctx, route, req)
}

func (c *countingVerifier) PerTenant() bool { return webhooks.PerTenant(c.Verifier) }

func TestVerifyMiddlewareHandshakeAndOutage(t *testing.T) {
	t.Parallel()
	called := false
	next := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true })
	handshake := webhooks.VerifyMiddleware("chat", webhooks.VerifierFunc(func(context.Context, webhooks.Route, *webhooks.Request) (webhooks.Verification, error) {
		return webhooks.Verification{Handshake: &webhooks.Response{Body: []byte(`{"challenge":"c"}`)}}, nil
	}))(next)
	rec := httptest.NewRecorder()
	handshake.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader("{}")))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, `{"challenge":"c"}`, rec.Body.String())
	assert.False(t, called, "a handshake is answered by the middleware")

	down := webhooks.VerifyMiddleware("x", webhooks.VerifierFunc(func(context.Context, webhooks.Route, *webhooks.Request) (webhooks.Verification, error) {
		return webhooks.Verification{}, errors.New("vault sealed")
	}), webhooks.WithUnavailableRetryAfter(9*time.Second))(next)
	rec = httptest.NewRecorder()
	down.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader("{}")))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Equal(t, "9", rec.Header().Get("Retry-After"))
	assert.NotContains(t, rec.Body.String(), "vault")
	assert.False(t, called)
}

// TestVerifyMiddlewareLogsByDefault is not parallel: it swaps the process's
// default logger, which the middleware uses unless given another, so that
// a wrong secret is visible without extra wiring.
func TestVerifyMiddlewareLogsByDefault(t *testing.T) {
	var logs bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })

	h := webhooks.VerifyMiddleware("github", githubVerifier(t, ghSecret))(http.NotFoundHandler())
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, githubRequest("Hello, World?"))
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
	assert.Contains(t, logs.String(), `"msg":"webhook rejected"`)
	assert.Contains(t, logs.String(), `"reason":"bad_signature"`)
	assert.NotContains(t, logs.String(), ghSecret)

	// WithLogger replaces it.
	logs.Reset()
	var own bytes.Buffer
	h = webhooks.VerifyMiddleware("github", githubVerifier(t, ghSecret), webhooks.WithLogger(slog.New(slog.NewJSONHandler(&own, nil))))(http.NotFoundHandler())
	h.ServeHTTP(httptest.NewRecorder(), githubRequest("Hello, World?"))
	assert.Empty(t, logs.String())
	assert.Contains(t, own.String(), `"reason":"bad_signature"`)
}
