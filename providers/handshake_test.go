package providers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
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
	rcv, err := webhooks.NewReceiver(reg, inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithLogger(quietLogger))
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
		secrets := providers.NewHandshakeSecrets(providers.HandshakeSecretsOptions{Clock: clock, Logger: quietLogger})
		rec, _ = serveOne(t, name, providers.Config{Secrets: secrets}, req())
		assert.Equal(t, http.StatusUnauthorized, rec.Code, name)
		got, _ := secrets.Secrets(context.Background(), route)
		assert.Empty(t, got)

		// Nor after the window closed.
		pending, err := secrets.Expect(route, time.Minute)
		require.NoError(t, err)
		clock.Advance(2 * time.Minute)
		rec, _ = serveOne(t, name, providers.Config{Secrets: secrets}, req())
		assert.Equal(t, http.StatusUnauthorized, rec.Code, name)
		assert.ErrorIs(t, pending.Confirm(), providers.ErrHandshakeSettled, "%s: the closed window was dropped", name)

		// Expected: answered and held aside, unused until confirmed.
		pending, err = secrets.Expect(route, time.Minute)
		require.NoError(t, err)
		rec, _ = serveOne(t, name, providers.Config{Secrets: secrets}, req())
		assert.Equal(t, http.StatusOK, rec.Code, "%s: %s", name, rec.Body)
		if name == "asana" {
			assert.Equal(t, signer.Credential(), rec.Header().Get("X-Hook-Secret"))
		}
		got, _ = secrets.Secrets(context.Background(), route)
		assert.Empty(t, got, "%s: a held secret verifies nothing before Confirm", name)
		d, err := signer.Sign("https://hooks.example.com/webhooks/"+name, webhookstest.Message{})
		require.NoError(t, err)
		delivery := func() *http.Request {
			r, err := d.Request(context.Background())
			require.NoError(t, err)
			return r
		}
		rec, inbox = serveOne(t, name, providers.Config{Secrets: secrets}, delivery())
		assert.Equal(t, http.StatusUnauthorized, rec.Code, "%s: a delivery before Confirm", name)
		assert.Zero(t, inbox.Len())
		held, err := pending.HeldSecret()
		require.NoError(t, err)
		assert.Equal(t, signer.Credential(), string(held), "%s: the operator can read the held secret (Notion's is pasted back)", name)

		// Confirmed: kept, once.
		require.NoError(t, pending.Confirm())
		assert.ErrorIs(t, pending.Confirm(), providers.ErrHandshakeSettled)
		pending.Discard() // does nothing once confirmed
		rec, _ = serveOne(t, name, providers.Config{Secrets: secrets}, req())
		assert.Equal(t, http.StatusUnauthorized, rec.Code, "%s: a handshake after Confirm", name)
		got, _ = secrets.Secrets(context.Background(), route)
		require.Len(t, got, 1)
		assert.NotContains(t, strings.ToLower(fmt.Sprintf("%v %+v %#v %v", secrets, secrets, secrets, pending)), strings.ToLower(signer.Credential()))

		// The kept secret verifies the provider's deliveries.
		rec, inbox = serveOne(t, name, providers.Config{Secrets: secrets}, delivery())
		assert.Equal(t, http.StatusAccepted, rec.Code, "%s: %s", name, rec.Body)
		assert.Equal(t, 1, inbox.Len())
	}
}

// Asana's and Notion's handshakes are unauthenticated, so an attacker who
// knows the route can race the provider's. Whatever the order, the
// attacker's secret is never kept: two handshakes in one window discard
// both and log an error, and the host's Confirm fails.
func TestHandshakeSecretsRace(t *testing.T) {
	t.Parallel()
	const attacker = "attacker-planted-secret"
	for _, name := range []string{"asana", "notion"} {
		for _, attackerFirst := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/attacker first %v", name, attackerFirst), func(t *testing.T) {
				t.Parallel()
				signer, err := webhookstest.NewKeySigner(name)
				require.NoError(t, err)
				logs := &recordedLogs{}
				secrets := providers.NewHandshakeSecrets(providers.HandshakeSecretsOptions{Clock: webhookstest.NewClock(time.Now()), Logger: slog.New(logs)})
				route := webhooks.Route{Provider: name}
				handshake := func(secret string) int {
					t.Helper()
					rec, inbox := serveOne(t, name, providers.Config{Secrets: secrets}, handshakeRequest(t, name, secret))
					assert.Zero(t, inbox.Len())
					return rec.Code
				}

				pending, err := secrets.Expect(route, time.Minute)
				require.NoError(t, err)
				_, err = secrets.Expect(route, time.Minute)
				assert.ErrorIs(t, err, providers.ErrHandshakePending, "one expectation per route at a time")
				first, second := attacker, signer.Credential()
				if !attackerFirst {
					first, second = second, first
				}
				assert.Equal(t, http.StatusOK, handshake(first), "the first handshake is answered")
				assert.Equal(t, http.StatusUnauthorized, handshake(second), "the second is refused")
				assert.Equal(t, http.StatusUnauthorized, handshake("a-third-one"), "and any after it")

				// The provider's create call may still have succeeded (the
				// genuine handshake came first): Confirm tells the host.
				assert.ErrorIs(t, pending.Confirm(), providers.ErrHandshakeConflict)
				got, err := secrets.Secrets(context.Background(), route)
				require.NoError(t, err)
				assert.Empty(t, got, "neither secret is kept")
				for _, secret := range []string{attacker, signer.Credential()} {
					d, err := webhookstest.Sign(name, secret, "https://hooks.example.com/webhooks/"+name, webhookstest.Message{})
					require.NoError(t, err)
					r, err := d.Request(context.Background())
					require.NoError(t, err)
					rec, inbox := serveOne(t, name, providers.Config{Secrets: secrets}, r)
					assert.Equal(t, http.StatusUnauthorized, rec.Code, "a delivery signed with a discarded secret")
					assert.Zero(t, inbox.Len())
				}

				records := logs.all()
				require.Len(t, records, 1, "the conflict is logged once")
				assert.Equal(t, slog.LevelError, records[0].Level)
				assert.Contains(t, records[0].Message, "two handshakes")
				assert.Equal(t, name, records[0].attrs["provider"])
				for _, secret := range []string{attacker, signer.Credential()} {
					assert.NotContains(t, records[0].String(), secret, "no secret in the log")
				}

				// Once settled, the host can expect again.
				pending, err = secrets.Expect(route, time.Minute)
				require.NoError(t, err)
				assert.Equal(t, http.StatusOK, handshake(signer.Credential()))
				require.NoError(t, pending.Confirm())
				got, _ = secrets.Secrets(context.Background(), route)
				require.Len(t, got, 1)
				assert.Equal(t, signer.Credential(), string(got[0].Value))
			})
		}
	}
}

// A held secret is dropped when the host's create call failed, and when
// it does not confirm in time; an expectation nobody called fails too.
func TestHandshakeSecretsDiscarded(t *testing.T) {
	t.Parallel()
	clock := webhookstest.NewClock(time.Now())
	secrets := providers.NewHandshakeSecrets(providers.HandshakeSecretsOptions{Clock: clock, Logger: quietLogger})
	route := webhooks.Route{Provider: "asana"}
	handshake := func(secret string) int {
		t.Helper()
		rec, _ := serveOne(t, "asana", providers.Config{Secrets: secrets}, handshakeRequest(t, "asana", secret))
		return rec.Code
	}
	kept := func() int {
		got, err := secrets.Secrets(context.Background(), route)
		require.NoError(t, err)
		return len(got)
	}

	// The create call failed.
	pending, err := secrets.Expect(route, time.Minute)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, handshake("s1"))
	pending.Discard()
	assert.ErrorIs(t, pending.Confirm(), providers.ErrHandshakeSettled)
	_, err = pending.HeldSecret()
	assert.ErrorIs(t, err, providers.ErrHandshakeSettled)
	assert.Zero(t, kept())
	assert.Equal(t, http.StatusUnauthorized, handshake("s1"), "the window is closed")

	// The host did not confirm in time.
	pending, err = secrets.Expect(route, time.Minute)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, handshake("s2"))
	clock.Advance(time.Minute + time.Second)
	_, err = pending.HeldSecret()
	assert.ErrorIs(t, err, providers.ErrHandshakeExpired)
	assert.ErrorIs(t, pending.Confirm(), providers.ErrHandshakeExpired)
	assert.Zero(t, kept())

	// An expired expectation does not block the next one.
	_, err = secrets.Expect(route, time.Minute)
	require.NoError(t, err)
	clock.Advance(2 * time.Minute)
	pending, err = secrets.Expect(route, time.Minute)
	require.NoError(t, err)

	// No handshake arrived.
	_, err = pending.HeldSecret()
	assert.ErrorIs(t, err, providers.ErrNoHandshake)
	assert.ErrorIs(t, pending.Confirm(), providers.ErrNoHandshake)
	assert.Zero(t, kept())
}

// handshakeRequest is the named provider's handshake handing secret over.
func handshakeRequest(t *testing.T, name, secret string) *http.Request {
	t.Helper()
	url := "https://hooks.example.com/webhooks/" + name
	var r *http.Request
	switch name {
	case "asana":
		r = httptest.NewRequest(http.MethodPost, url, nil)
		r.Header.Set(providers.AsanaSecretHeader, secret)
	case "notion":
		b, err := json.Marshal(map[string]string{"verification_token": secret})
		require.NoError(t, err)
		r = httptest.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	default:
		t.Fatalf("no handshake for %s", name)
	}
	r.Header.Set("Content-Type", "application/json")
	return r
}

// recordedLogs is a slog.Handler that keeps every record.
type recordedLogs struct {
	mu      sync.Mutex
	records []loggedRecord
}

type loggedRecord struct {
	slog.Record
	attrs map[string]any
}

// String is the record's message and attributes, to search for values.
func (r loggedRecord) String() string { return fmt.Sprint(r.Message, r.attrs) }

func (h *recordedLogs) Enabled(context.Context, slog.Level) bool { return true }

func (h *recordedLogs) Handle(_ context.Context, r slog.Record) error {
	attrs := map[string]any{}
	r.Attrs(func(a slog.Attr) bool {
		attrs[a.Key] = a.Value.Resolve().Any()
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, loggedRecord{Record: r.Clone(), attrs: attrs})
	return nil
}

func (h *recordedLogs) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordedLogs) WithGroup(string) slog.Handler      { return h }

func (h *recordedLogs) all() []loggedRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.records)
}
