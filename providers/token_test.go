package providers_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

func newTokenVerifier(t *testing.T, opts providers.TokenOptions, creds webhooks.CredentialResolver) *providers.TokenVerifier {
	t.Helper()
	v, err := providers.NewTokenVerifier(opts, creds)
	if err != nil {
		t.Fatalf("NewTokenVerifier: %v", err)
	}
	return v
}

func bearerOptions() providers.TokenOptions {
	o := providers.BearerTokenOptions()
	o.Event.IDPath = "id"
	o.Event.TypePath = "type"
	return o
}

const tokenBody = `{"id":"evt_1","type":"order.created"}`

func TestTokenBearer(t *testing.T) {
	t.Parallel()
	v := newTokenVerifier(t, bearerOptions(), webhooks.StaticSecrets("s3cret-token"))
	for _, header := range []string{"Bearer s3cret-token", "bearer s3cret-token", "BEARER \t s3cret-token", "  Bearer s3cret-token  "} {
		got := nhVerify(t, v, nhRequest(tokenBody, "Authorization", header))
		want := webhooks.Verification{
			EventID:   "evt_1",
			EventType: "order.created",
			KeyID:     "static:0",
			// A token signs nothing.
			Unsigned: webhooks.UnsignedFields{EventID: true, EventType: true, Body: true},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: Verification = %+v, want %+v", header, got, want)
		}
	}
}

func TestTokenRejections(t *testing.T) {
	t.Parallel()
	v := newTokenVerifier(t, bearerOptions(), webhooks.StaticSecrets("s3cret-token"))
	plain := newTokenVerifier(t, providers.TokenOptions{Header: "X-Hook-Token", Event: webhooks.EventSource{IDHeader: "X-Hook-Id"}}, webhooks.StaticSecrets("s3cret-token"))
	tests := []struct {
		name string
		v    webhooks.Verifier
		req  *webhooks.Request
		want webhooks.Reason
	}{
		{"wrong token", v, nhRequest(tokenBody, "Authorization", "Bearer s3cret-tokem"), webhooks.ReasonBadSignature},
		{"token prefix", v, nhRequest(tokenBody, "Authorization", "Bearer s3cret"), webhooks.ReasonBadSignature},
		{"token with suffix", v, nhRequest(tokenBody, "Authorization", "Bearer s3cret-token2"), webhooks.ReasonBadSignature},
		{"missing header", v, nhRequest(tokenBody), webhooks.ReasonMissingSignature},
		{"empty header", v, nhRequest(tokenBody, "Authorization", ""), webhooks.ReasonMissingSignature},
		{"scheme only", v, nhRequest(tokenBody, "Authorization", "Bearer"), webhooks.ReasonMissingSignature},
		{"other scheme", v, nhRequest(tokenBody, "Authorization", "Basic s3cret-token"), webhooks.ReasonMalformedHeader},
		{"no scheme", v, nhRequest(tokenBody, "Authorization", "s3cret-token"), webhooks.ReasonMalformedHeader},
		{"scheme glued", v, nhRequest(tokenBody, "Authorization", "Bearers3cret-token"), webhooks.ReasonMalformedHeader},
		{"duplicated header", v, nhRequest(tokenBody, "Authorization", "Bearer s3cret-token", "Authorization", "Bearer s3cret-token"), webhooks.ReasonMalformedHeader},
		{"empty body", v, nhRequest("", "Authorization", "Bearer s3cret-token"), webhooks.ReasonEmptyBody},
		{"body not JSON", v, nhRequest("id=evt_1", "Authorization", "Bearer s3cret-token"), webhooks.ReasonMalformedPayload},
		{"no ID in body", v, nhRequest(`{"type":"x"}`, "Authorization", "Bearer s3cret-token"), webhooks.ReasonMissingEventID},
		{"bad token and no ID", v, nhRequest(`{}`, "Authorization", "Bearer nope"), webhooks.ReasonBadSignature},
		{"plain: wrong token", plain, nhRequest(tokenBody, "X-Hook-Token", "s3cret-toke", "X-Hook-Id", "1"), webhooks.ReasonBadSignature},
		{"plain: missing ID header", plain, nhRequest(tokenBody, "X-Hook-Token", "s3cret-token"), webhooks.ReasonMissingEventID},
		{"plain: duplicated ID header", plain, nhRequest(tokenBody, "X-Hook-Token", "s3cret-token", "X-Hook-Id", "1", "X-Hook-Id", "2"), webhooks.ReasonMalformedHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			vErr := nhReject(t, tt.v, tt.req, tt.want)
			nhNoLeak(t, vErr, "s3cret-token", "s3cret")
		})
	}
}

func TestTokenRotationAndCredentials(t *testing.T) {
	t.Parallel()
	opts := providers.TokenOptions{Header: "X-Hook-Token", Event: webhooks.EventSource{IDHeader: "X-Hook-Id"}}
	v := newTokenVerifier(t, opts, nhSecrets("old", "first-token", "empty", "", "new", "second-token"))
	for token, keyID := range map[string]string{"first-token": "old", "second-token": "new"} {
		got := nhVerify(t, v, nhRequest(tokenBody, "X-Hook-Token", token, "X-Hook-Id", "1"))
		if got.KeyID != keyID {
			t.Errorf("token %s: KeyID %q, want %q", token, got.KeyID, keyID)
		}
	}

	none := newTokenVerifier(t, opts, nhSecrets("empty", ""))
	nhReject(t, none, nhRequest(tokenBody, "X-Hook-Token", "x", "X-Hook-Id", "1"), webhooks.ReasonNoCredentials)

	down := newTokenVerifier(t, opts, nhErrResolver)
	_, err := down.Verify(context.Background(), nhRoute, nhRequest(tokenBody, "X-Hook-Token", "x", "X-Hook-Id", "1"))
	if _, ok := err.(*webhooks.VerificationError); err == nil || ok {
		t.Fatalf("Verify with a failing resolver = %v, want a non-rejection error", err)
	}

	var sv webhooks.SecretHeaderVerifier = v
	if got := sv.SecretHeaders(); len(got) != 1 || got[0] != "X-Hook-Token" {
		t.Errorf("SecretHeaders() = %q", got)
	}
}

func TestTokenEventIDFromBody(t *testing.T) {
	t.Parallel()
	opts := providers.TokenOptions{Header: "X-Hook-Token", Event: webhooks.EventSource{IDFromBody: true}}
	v := newTokenVerifier(t, opts, webhooks.StaticSecrets("tok"))
	got := nhVerify(t, v, nhRequest("payload", "X-Hook-Token", "tok"))
	sum := sha256.Sum256([]byte("payload"))
	if want := bodyID([]byte("payload")); got.EventID != want || !strings.HasPrefix(want, "sha256:") || got.PayloadSHA256 != sum {
		t.Errorf("EventID %q, want %q", got.EventID, want)
	}

	// As a fallback: the header wins when present.
	opts.Event.IDHeader = "X-Hook-Id"
	v = newTokenVerifier(t, opts, webhooks.StaticSecrets("tok"))
	if got := nhVerify(t, v, nhRequest("payload", "X-Hook-Token", "tok", "X-Hook-Id", "id-1")); got.EventID != "id-1" {
		t.Errorf("EventID %q, want the header's", got.EventID)
	}
	if got := nhVerify(t, v, nhRequest("payload", "X-Hook-Token", "tok")); got.EventID != bodyID([]byte("payload")) {
		t.Errorf("EventID %q, want the body digest", got.EventID)
	}
	// A duplicated header is malformed, not absent.
	nhReject(t, v, nhRequest("payload", "X-Hook-Token", "tok", "X-Hook-Id", "1", "X-Hook-Id", "2"), webhooks.ReasonMalformedHeader)
}

func TestTokenRoundTripThroughGateway(t *testing.T) {
	t.Parallel()
	v := newTokenVerifier(t, bearerOptions(), webhooks.StaticSecrets("s3cret-token"))
	gw, inbox, replay := nhGateway(t, "shop", v, nhClock(nhNow))

	req := webhookstest.NewTokenRequest(t, "/webhooks/shop", bearerOptions(), "wrong", webhookstest.TokenMessage{Body: []byte(tokenBody)})
	rec := httptest.NewRecorder()
	gw.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "bad_signature") || strings.Contains(rec.Body.String(), "wrong") {
		t.Fatalf("wrong token: status %d %s", rec.Code, rec.Body)
	}
	nhStoredNothing(t, inbox, replay, nhNow)

	req = webhookstest.NewTokenRequest(t, "/webhooks/shop", bearerOptions(), "s3cret-token", webhookstest.TokenMessage{ID: "evt_1", Type: "order.created", Body: []byte(tokenBody)})
	rec = httptest.NewRecorder()
	gw.ServeHTTP(rec, req)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("status %d %s, want 202", rec.Code, rec.Body)
	}
	item, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: "shop", EventID: "evt_1"})
	if err != nil {
		t.Fatal(err)
	}
	if item.KeyID != "static:0" || item.EventType != "order.created" {
		t.Errorf("item KeyID %q type %q", item.KeyID, item.EventType)
	}
	if _, ok := item.Headers["Authorization"]; ok {
		t.Errorf("the token was stored with the item")
	}

	// A custom token header is not stored either (SecretHeaderVerifier).
	custom := providers.TokenOptions{Header: "X-Hook-Token", Event: webhooks.EventSource{IDHeader: "X-Hook-Id"}}
	gw, inbox, _ = nhGateway(t, "hook", newTokenVerifier(t, custom, webhooks.StaticSecrets("s3cret-token")), nil)
	rec = httptest.NewRecorder()
	gw.ServeHTTP(rec, webhookstest.NewTokenRequest(t, "/webhooks/hook", custom, "s3cret-token", webhookstest.TokenMessage{ID: "h1", Body: []byte(tokenBody)}))
	if rec.Code != http.StatusAccepted {
		t.Fatalf("custom header: status %d %s", rec.Code, rec.Body)
	}
	item, err = inbox.Get(context.Background(), webhooks.InboxKey{Provider: "hook", EventID: "h1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := item.Headers["X-Hook-Token"]; ok || item.Headers.Get("X-Hook-Id") != "h1" {
		t.Errorf("stored headers %v", item.Headers)
	}
}

func basicHeader(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

func TestBasicAuth(t *testing.T) {
	t.Parallel()
	opts := providers.BasicAuthOptions{Event: webhooks.EventSource{IDPath: "id", TypePath: "type"}}
	v, err := providers.NewBasicAuthVerifier(opts, nhSecrets("2024", "hooks:old-pass", "2025", "hooks:new:pass"))
	if err != nil {
		t.Fatal(err)
	}
	got := nhVerify(t, v, nhRequest(tokenBody, "Authorization", basicHeader("hooks", "new:pass")))
	if got.KeyID != "2025" || got.EventID != "evt_1" || got.EventType != "order.created" {
		t.Errorf("Verification %+v", got)
	}
	if got := nhVerify(t, v, nhRequest(tokenBody, "Authorization", "basic "+base64.RawURLEncoding.EncodeToString([]byte("hooks:old-pass")))); got.KeyID != "2024" {
		t.Errorf("KeyID %q, want 2024", got.KeyID)
	}

	tests := []struct {
		name   string
		header []string
		want   webhooks.Reason
	}{
		{"wrong password", []string{"Authorization", basicHeader("hooks", "old-pas")}, webhooks.ReasonBadSignature},
		{"wrong user", []string{"Authorization", basicHeader("hook", "old-pass")}, webhooks.ReasonBadSignature},
		{"user and password swapped across the colon", []string{"Authorization", basicHeader("hooks:old", "pass")}, webhooks.ReasonBadSignature},
		{"missing", nil, webhooks.ReasonMissingSignature},
		{"scheme only", []string{"Authorization", "Basic"}, webhooks.ReasonMissingSignature},
		{"bearer", []string{"Authorization", "Bearer aG9va3M6b2xkLXBhc3M="}, webhooks.ReasonMalformedHeader},
		{"not base64", []string{"Authorization", "Basic %%%"}, webhooks.ReasonMalformedHeader},
		{"newline in base64", []string{"Authorization", "Basic aG9va3M6\nb2xkLXBhc3M="}, webhooks.ReasonMalformedHeader},
		{"no colon", []string{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte("hooksold-pass"))}, webhooks.ReasonMalformedHeader},
		{"duplicated", []string{"Authorization", basicHeader("hooks", "old-pass"), "Authorization", basicHeader("hooks", "old-pass")}, webhooks.ReasonMalformedHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			vErr := nhReject(t, v, nhRequest(tokenBody, tt.header...), tt.want)
			nhNoLeak(t, vErr, "old-pass", "new:pass", "aG9va3M6b2xkLXBhc3M=")
		})
	}

	// A secret that is not "user:password" is a configuration error,
	// reported by ID only.
	bad, err := providers.NewBasicAuthVerifier(opts, nhSecrets("legacy", "justapassword"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Verify(context.Background(), nhRoute, nhRequest(tokenBody, "Authorization", basicHeader("a", "b")))
	if _, ok := err.(*webhooks.VerificationError); err == nil || ok || !strings.Contains(err.Error(), `"legacy"`) {
		t.Fatalf("Verify with a malformed secret = %v, want a configuration error naming the secret", err)
	}
	nhNoLeak(t, err, "justapassword")

	h, err := webhookstest.SignBasicAuth(opts, "hooks", "old-pass", webhookstest.TokenMessage{ID: "evt_1", Body: []byte(tokenBody)})
	if err != nil {
		t.Fatal(err)
	}
	if got := nhVerify(t, v, &webhooks.Request{Header: h, Body: []byte(tokenBody)}); got.KeyID != "2024" {
		t.Errorf("round trip KeyID %q", got.KeyID)
	}
}

func TestInsecureAcceptUnsigned(t *testing.T) {
	t.Parallel()
	v, err := providers.InsecureAcceptUnsigned(providers.UnsignedOptions{Event: webhooks.EventSource{IDHeader: "X-Event-Id", TypePath: "type"}})
	if err != nil {
		t.Fatal(err)
	}
	got := nhVerify(t, v, nhRequest(tokenBody, "X-Event-Id", "e1"))
	if got.EventID != "e1" || got.EventType != "order.created" || got.KeyID != providers.UnsignedKeyID {
		t.Errorf("Verification %+v", got)
	}
	nhReject(t, v, nhRequest(tokenBody), webhooks.ReasonMissingEventID)
	nhReject(t, v, nhRequest("", "X-Event-Id", "e1"), webhooks.ReasonEmptyBody)

	if _, err := providers.InsecureAcceptUnsigned(providers.UnsignedOptions{}); err == nil {
		t.Error("InsecureAcceptUnsigned without an ID source succeeded")
	}
	// The provider key is given once, at registration: the options are all
	// the verifier needs.
	if _, err := providers.InsecureAcceptUnsigned(providers.UnsignedOptions{Event: webhooks.EventSource{IDFromBody: true}}); err != nil {
		t.Errorf("InsecureAcceptUnsigned with a body-digest ID: %v", err)
	}

	// Through a gateway the item says that nothing verified it.
	gw, inbox, _ := nhGateway(t, "legacy", v, nil)
	req := httptest.NewRequest(http.MethodPost, "/webhooks/legacy", strings.NewReader(tokenBody))
	req.Header.Set("X-Event-Id", "e1")
	rec := httptest.NewRecorder()
	gw.ServeHTTP(rec, req)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("status %d %s", rec.Code, rec.Body)
	}
	item, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: "legacy", EventID: "e1"})
	if err != nil || item.KeyID != providers.UnsignedKeyID {
		t.Fatalf("item %+v, %v", item, err)
	}
}

func TestNewTokenAndBasicVerifierRejectInvalidOptions(t *testing.T) {
	t.Parallel()
	creds := webhooks.StaticSecrets("x")
	tokenCases := []struct {
		name string
		opts providers.TokenOptions
	}{
		{"no header", providers.TokenOptions{Event: webhooks.EventSource{IDHeader: "X-Id"}}},
		{"bad header", providers.TokenOptions{Header: "X Token", Event: webhooks.EventSource{IDHeader: "X-Id"}}},
		{"bad scheme", providers.TokenOptions{Header: "Authorization", Scheme: "Bearer token", Event: webhooks.EventSource{IDHeader: "X-Id"}}},
		{"no ID source", providers.TokenOptions{Header: "X-Token"}},
		{"two ID sources", providers.TokenOptions{Header: "X-Token", Event: webhooks.EventSource{IDHeader: "X-Id", IDPath: "id"}}},
		{"two type sources", providers.TokenOptions{Header: "X-Token", Event: webhooks.EventSource{IDHeader: "X-Id", TypeHeader: "X-Type", TypePath: "type"}}},
		{"bad path", providers.TokenOptions{Header: "X-Token", Event: webhooks.EventSource{IDPath: "a..b"}}},
		{"bad ID header", providers.TokenOptions{Header: "X-Token", Event: webhooks.EventSource{IDHeader: "X:Id"}}},
		{"bearer preset without ID", providers.BearerTokenOptions()},
	}
	for _, tt := range tokenCases {
		if _, err := providers.NewTokenVerifier(tt.opts, creds); err == nil {
			t.Errorf("%s: NewTokenVerifier succeeded", tt.name)
		}
	}
	if _, err := providers.NewTokenVerifier(providers.GitLabTokenOptions(), nil); err == nil {
		t.Error("nil creds accepted")
	}
	if _, err := providers.NewBasicAuthVerifier(providers.BasicAuthOptions{}, creds); err == nil {
		t.Error("basic auth without an ID source accepted")
	}
	if _, err := providers.NewBasicAuthVerifier(providers.BasicAuthOptions{Event: webhooks.EventSource{IDFromBody: true}}, nil); err == nil {
		t.Error("basic auth with nil creds accepted")
	}

	// Static secrets that could never verify are refused before any
	// request, named by ID only.
	for name, creds := range map[string]webhooks.CredentialResolver{
		"no secrets":   webhooks.StaticSecrets(),
		"empty secret": webhooks.StaticSecrets("good", ""),
	} {
		if _, err := providers.NewTokenVerifier(providers.GitLabTokenOptions(), creds); err == nil {
			t.Errorf("token, %s: accepted", name)
		}
	}
	_, err := providers.NewBasicAuthVerifier(providers.BasicAuthOptions{Event: webhooks.EventSource{IDFromBody: true}}, webhooks.StaticSecrets("user:pass", "no-colon-password"))
	if err == nil || !strings.Contains(err.Error(), "static:1") {
		t.Errorf("basic auth with a secret without a colon: %v", err)
	}
	nhNoLeak(t, err, "no-colon-password")
}

func TestTokenConcurrentVerify(t *testing.T) {
	t.Parallel()
	v := newTokenVerifier(t, bearerOptions(), webhooks.StaticSecrets("a", "b"))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			token := "a"
			if i%2 == 1 {
				token = "b"
			}
			for range 50 {
				if _, err := v.Verify(context.Background(), nhRoute, nhRequest(tokenBody, "Authorization", "Bearer "+token)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
