package providers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// serveOne builds the named entry with cfg behind a Receiver and serves
// one request.
func serveOne(t *testing.T, name string, cfg providers.Config, req *http.Request) (*httptest.ResponseRecorder, *memstore.Inbox) {
	t.Helper()
	v, err := providers.New(name, cfg)
	require.NoError(t, err)
	reg := webhooks.NewRegistry()
	require.NoError(t, reg.Register(name, v))
	inbox := memstore.NewInbox()
	rcv, err := webhooks.NewReceiver(reg, inbox, memstore.NewReplay(), webhooks.WithLogger(quietLogger))
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	rcv.ServeHTTP(rec, req)
	return rec, inbox
}

func TestGETChallengesRefused(t *testing.T) {
	t.Parallel()
	cfg := providers.Config{Secrets: webhooks.StaticSecrets("app-secret"), VerifyToken: "the-token"}
	for _, tc := range []struct {
		query  string
		reason webhooks.Reason
	}{
		{"hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=123", webhooks.ReasonBadSignature},
		{"hub.mode=subscribe&hub.challenge=123", webhooks.ReasonMissingSignature},
		{"hub.mode=unsubscribe&hub.verify_token=the-token&hub.challenge=123", webhooks.ReasonMalformedPayload},
		{"hub.mode=subscribe&hub.verify_token=the-token", webhooks.ReasonMalformedPayload},
		{"hub.mode=subscribe&hub.verify_token=the-token&hub.challenge=" + strings.Repeat("9", 2000), webhooks.ReasonMalformedPayload},
	} {
		rec, inbox := serveOne(t, "meta", cfg, httptest.NewRequest(http.MethodGet, "/webhooks/meta?"+tc.query, nil))
		assert.Equal(t, http.StatusUnauthorized, rec.Code, tc.query)
		assert.Contains(t, rec.Body.String(), string(tc.reason), tc.query)
		assert.NotContains(t, rec.Body.String(), "123", "the challenge is not echoed: %s", tc.query)
		assert.Zero(t, inbox.Len())
	}
	rec, _ := serveOne(t, "meta", cfg, httptest.NewRequest(http.MethodGet, "/webhooks/meta?hub.mode=subscribe&hub.verify_token=the-token&hub.challenge=987", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "987", rec.Body.String())
	assert.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))

	// X's CRC uses the route's secret; Dropbox needs a challenge.
	rec, _ = serveOne(t, "twitter", providers.Config{Secrets: webhooks.TenantSecrets(map[string][]string{"acme": {"s"}})}, httptest.NewRequest(http.MethodGet, "/webhooks/twitter?crc_token=abc", nil))
	assert.Equal(t, http.StatusUnauthorized, rec.Code, "a route without a consumer secret")
	assert.Contains(t, rec.Body.String(), "no_credentials")
	rec, _ = serveOne(t, "dropbox", providers.Config{Secrets: webhooks.StaticSecrets("s")}, httptest.NewRequest(http.MethodGet, "/webhooks/dropbox", nil))
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
	rec, _ = serveOne(t, "okta", providers.Config{Secrets: webhooks.StaticSecrets("s")}, httptest.NewRequest(http.MethodGet, "/webhooks/okta", nil))
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
}

// Okta sends its Authorization header on the one-time verification GET
// too: the challenge is echoed only once that header matched a secret.
func TestOktaVerificationAuthenticated(t *testing.T) {
	t.Parallel()
	cfg := providers.Config{Secrets: webhooks.StaticSecrets("okta-shared-secret")}
	get := func(auth ...string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/webhooks/okta", nil)
		r.Header.Set(providers.OktaVerificationHeader, "challenge-4711")
		for _, a := range auth {
			r.Header.Add("Authorization", a)
		}
		return r
	}
	for _, tc := range []struct {
		name   string
		req    *http.Request
		reason webhooks.Reason
	}{
		{"no Authorization", get(), webhooks.ReasonMissingSignature},
		{"a wrong Authorization", get("not-the-secret"), webhooks.ReasonBadSignature},
		{"Authorization twice", get("okta-shared-secret", "okta-shared-secret"), webhooks.ReasonMalformedHeader},
	} {
		rec, inbox := serveOne(t, "okta", cfg, tc.req)
		assert.Equal(t, http.StatusUnauthorized, rec.Code, tc.name)
		assert.Contains(t, rec.Body.String(), string(tc.reason), tc.name)
		assert.NotContains(t, rec.Body.String(), "challenge-4711", "%s: the challenge is not echoed", tc.name)
		assert.NotContains(t, rec.Body.String(), "okta-shared-secret", tc.name)
		assert.Zero(t, inbox.Len(), tc.name)
	}
	rec, inbox := serveOne(t, "okta", cfg, get("okta-shared-secret"))
	assert.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.JSONEq(t, `{"verification":"challenge-4711"}`, rec.Body.String())
	assert.Zero(t, inbox.Len(), "a verification is not stored")
}

func TestHandshakeSecrets(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"asana", "notion"} {
		signer, err := webhookstest.NewKeySigner(name)
		require.NoError(t, err)
		c, err := signer.Challenge("https://hooks.example.com/webhooks/"+name, "")
		require.NoError(t, err)
		req := func() *http.Request {
			r, err := c.Delivery.Request(context.Background())
			require.NoError(t, err)
			return r
		}
		route := webhooks.Route{Provider: name}

		// Static secrets cannot keep a handshake's secret: 503, saying why.
		rec, inbox := serveOne(t, name, providers.Config{Secrets: webhooks.StaticSecrets("existing")}, req())
		assert.Equal(t, http.StatusServiceUnavailable, rec.Code, name)
		assert.Zero(t, inbox.Len())

		// A handshake nobody expects is refused: it could plant a secret.
		clock := webhookstest.NewClock(time.Now())
		secrets := providers.NewHandshakeSecrets(providers.HandshakeSecretsOptions{Clock: clock})
		rec, _ = serveOne(t, name, providers.Config{Secrets: secrets}, req())
		assert.Equal(t, http.StatusUnauthorized, rec.Code, name)
		got, _ := secrets.Secrets(context.Background(), route)
		assert.Empty(t, got)

		// Nor after the window closed.
		secrets.Expect(route, time.Minute)
		clock.Advance(2 * time.Minute)
		rec, _ = serveOne(t, name, providers.Config{Secrets: secrets}, req())
		assert.Equal(t, http.StatusUnauthorized, rec.Code, name)

		// Expected: saved, answered, and only once.
		secrets.Expect(route, time.Minute)
		rec, _ = serveOne(t, name, providers.Config{Secrets: secrets}, req())
		assert.Equal(t, http.StatusOK, rec.Code, "%s: %s", name, rec.Body)
		if name == "asana" {
			assert.Equal(t, signer.Credential(), rec.Header().Get("X-Hook-Secret"))
		}
		rec, _ = serveOne(t, name, providers.Config{Secrets: secrets}, req())
		assert.Equal(t, http.StatusUnauthorized, rec.Code, "%s: a second handshake", name)
		got, _ = secrets.Secrets(context.Background(), route)
		require.Len(t, got, 1)
		assert.NotContains(t, strings.ToLower(fmt.Sprintf("%v %+v %#v", secrets, secrets, secrets)), strings.ToLower(signer.Credential()))

		// The saved secret verifies the provider's deliveries.
		d, err := signer.Sign("https://hooks.example.com/webhooks/"+name, webhookstest.Message{})
		require.NoError(t, err)
		r, err := d.Request(context.Background())
		require.NoError(t, err)
		rec, inbox = serveOne(t, name, providers.Config{Secrets: secrets}, r)
		assert.Equal(t, http.StatusAccepted, rec.Code, "%s: %s", name, rec.Body)
		assert.Equal(t, 1, inbox.Len())
	}
}
