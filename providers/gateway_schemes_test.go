package providers_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// The cases the catalog promises for every scheme (CATALOG.md): a round
// trip through a Receiver (202, then a duplicate 200), a rotation of
// credentials, a missing and a duplicated header, and timestamps out of
// the window either way, for the two schemes the catalog harness does not
// cover them all for: HTTP Basic credentials, which no catalog entry uses,
// and Discord webhook events, whose harness entry has no rotation.

// rotatingSecrets is a credential source whose secrets change while the
// Receiver runs, as a host's do during a rotation.
type rotatingSecrets struct {
	mu   sync.Mutex
	list []webhooks.Secret
}

// set replaces the secrets with the given ID/value pairs.
func (r *rotatingSecrets) set(idValue ...string) {
	var list []webhooks.Secret
	for i := 0; i+1 < len(idValue); i += 2 {
		list = append(list, webhooks.Secret{ID: idValue[i], Value: []byte(idValue[i+1])})
	}
	r.mu.Lock()
	r.list = list
	r.mu.Unlock()
}

func (r *rotatingSecrets) Secrets(context.Context, webhooks.Route) ([]webhooks.Secret, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.list, nil
}

// quietGateway returns a Receiver serving provider with v on fresh
// memstores, logging nothing.
func quietGateway(t *testing.T, provider string, v webhooks.Verifier, clock webhooks.Clock) (*webhooks.Receiver, *memstore.Inbox, *memstore.Replay) {
	t.Helper()
	registry := webhooks.NewRegistry()
	registry.MustRegister(provider, v)
	inbox, replay := memstore.NewInbox(), memstore.NewReplay()
	gw, err := webhooks.NewReceiver(registry, inbox, webhooks.WithReplayStore(replay), webhooks.WithClock(clock), webhooks.WithLogger(quietLogger))
	if err != nil {
		t.Fatal(err)
	}
	return gw, inbox, replay
}

// serve sends req through gw and returns the answer.
func serve(gw *webhooks.Receiver, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	gw.ServeHTTP(rec, req)
	return rec
}

// wantAnswer fails t unless rec has the status and, for a 401, the reason.
func wantAnswer(t *testing.T, rec *httptest.ResponseRecorder, status int, reason webhooks.Reason, what string) {
	t.Helper()
	if rec.Code != status {
		t.Errorf("%s: status %d, want %d: %s", what, rec.Code, status, rec.Body)
		return
	}
	if reason != "" && !strings.Contains(rec.Body.String(), `"reason":"`+string(reason)+`"`) {
		t.Errorf("%s: %s, want reason %s", what, rec.Body, reason)
	}
}

// stored returns the item of event id, failing t when the event is not
// stored.
func stored(t *testing.T, inbox *memstore.Inbox, provider, id string) webhooks.Item {
	t.Helper()
	item, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: provider, EventID: id})
	if err != nil {
		t.Fatalf("event %s is not stored: %v", id, err)
	}
	return item.Item
}

func TestBasicAuthThroughGateway(t *testing.T) {
	t.Parallel()
	secrets := &rotatingSecrets{}
	secrets.set("2025", "hooks:old-pass")
	v, err := providers.NewBasicAuthVerifier(providers.BasicAuthOptions{Event: webhooks.EventSource{IDPath: "id", TypePath: "type"}}, secrets)
	if err != nil {
		t.Fatal(err)
	}
	clock := webhookstest.NewClock(nhNow)
	gw, inbox, replay := quietGateway(t, "basic", v, clock)
	post := func(body string, authorization ...string) *http.Request {
		req := httptest.NewRequest(http.MethodPost, "/webhooks/basic", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Request-Id", "r1")
		for _, a := range authorization {
			req.Header.Add("Authorization", a)
		}
		return req
	}
	event := func(id string) string { return `{"id":"` + id + `","type":"order.created"}` }
	oldCred, newCred := basicHeader("hooks", "old-pass"), basicHeader("hooks", "new-pass")

	// Missing and duplicated credentials, and a header that is not Basic.
	wantAnswer(t, serve(gw, post(event("e0"))), http.StatusUnauthorized, webhooks.ReasonMissingSignature, "no Authorization")
	wantAnswer(t, serve(gw, post(event("e0"), oldCred, oldCred)), http.StatusUnauthorized, webhooks.ReasonMalformedHeader, "Authorization twice")
	wantAnswer(t, serve(gw, post(event("e0"), oldCred, newCred)), http.StatusUnauthorized, webhooks.ReasonMalformedHeader, "two credentials")
	wantAnswer(t, serve(gw, post(event("e0"), "Bearer "+base64.StdEncoding.EncodeToString([]byte("hooks:old-pass")))), http.StatusUnauthorized, webhooks.ReasonMalformedHeader, "a Bearer token")
	wantAnswer(t, serve(gw, post(event("e0"), newCred)), http.StatusUnauthorized, webhooks.ReasonBadSignature, "a credential not yet configured")
	nhStoredNothing(t, inbox, replay, clock.Now())

	// The round trip: 202, then 200 for the duplicate; the credential is
	// never stored with the item.
	wantAnswer(t, serve(gw, post(event("e1"), oldCred)), http.StatusAccepted, "", "a delivery")
	wantAnswer(t, serve(gw, post(event("e1"), oldCred)), http.StatusOK, "", "its duplicate")
	item := stored(t, inbox, "basic", "e1")
	if item.KeyID != "2025" || item.EventType != "order.created" || item.Headers.Get("X-Request-Id") != "r1" {
		t.Errorf("stored item: key %q, type %q, headers %v", item.KeyID, item.EventType, item.Headers)
	}
	if _, ok := item.Headers["Authorization"]; ok {
		t.Error("the Authorization header, which holds the password, was stored")
	}

	// Rotation: both credentials are accepted while both are configured,
	// each reported by its ID; then the old one is refused.
	secrets.set("2025", "hooks:old-pass", "2026", "hooks:new-pass")
	wantAnswer(t, serve(gw, post(event("e2"), newCred)), http.StatusAccepted, "", "the new credential during the rotation")
	wantAnswer(t, serve(gw, post(event("e3"), oldCred)), http.StatusAccepted, "", "the old credential during the rotation")
	if k2, k3 := stored(t, inbox, "basic", "e2").KeyID, stored(t, inbox, "basic", "e3").KeyID; k2 != "2026" || k3 != "2025" {
		t.Errorf("key IDs during the rotation: %q and %q, want 2026 and 2025", k2, k3)
	}
	secrets.set("2026", "hooks:new-pass")
	wantAnswer(t, serve(gw, post(event("e4"), oldCred)), http.StatusUnauthorized, webhooks.ReasonBadSignature, "the old credential after the rotation")
	wantAnswer(t, serve(gw, post(event("e4"), newCred)), http.StatusAccepted, "", "the new credential after the rotation")

	// Basic credentials carry no time, so there is no window to be
	// outside of: a captured delivery sent again hours later verifies,
	// and only the inbox's deduplication by event ID stops it.
	clock.Set(nhNow.Add(6 * time.Hour))
	wantAnswer(t, serve(gw, post(event("e1"), oldCred)), http.StatusUnauthorized, webhooks.ReasonBadSignature, "a replay with the retired credential")
	wantAnswer(t, serve(gw, post(event("e4"), newCred)), http.StatusOK, "", "a replay hours later is a duplicate")
	if n := inbox.Len(); n != 4 {
		t.Errorf("the inbox holds %d items, want 4", n)
	}
}

func TestDiscordWebhookEventsThroughGateway(t *testing.T) {
	t.Parallel()
	oldKey, newKey := webhookstest.NewEd25519KeyPair(), webhookstest.NewEd25519KeyPair()
	opts := providers.DiscordWebhookEventsOptions()
	secrets := &rotatingSecrets{}
	secrets.set("old", oldKey.PublicKey(providers.Ed25519KeyHex))
	v := newEd25519Verifier(t, opts, secrets, nhClock(nhNow))
	gw, inbox, replay := quietGateway(t, "discord-events", v, nhClock(nhNow))
	const url = "/webhooks/discord-events"
	ping := []byte(`{"version":1,"application_id":"1234567890","type":0}`)
	event := func(guild string) []byte {
		return []byte(`{"version":1,"application_id":"1234567890","type":1,"event":{"type":"APPLICATION_AUTHORIZED","timestamp":"2025-01-01T00:00:00Z","data":{"guild":"` + guild + `"}}}`)
	}
	sign := func(key ed25519.PrivateKey, at time.Time, body []byte) *http.Request {
		msg := webhookstest.SignedMessage{Timestamp: at, Body: body}
		if !strings.Contains(string(body), `"type":0`) {
			msg.Type = "APPLICATION_AUTHORIZED"
		}
		return webhookstest.NewEd25519Request(t, url, opts, key, msg)
	}
	edit := func(req *http.Request, f func(http.Header)) *http.Request {
		f(req.Header)
		return req
	}

	// Missing and duplicated headers.
	const sigHeader, tsHeader = "X-Signature-Ed25519", "X-Signature-Timestamp"
	for what, c := range map[string]struct {
		edit   func(http.Header)
		reason webhooks.Reason
	}{
		"no signature":       {func(h http.Header) { h.Del(sigHeader) }, webhooks.ReasonMissingSignature},
		"no timestamp":       {func(h http.Header) { h.Del(tsHeader) }, webhooks.ReasonMissingTimestamp},
		"signature twice":    {func(h http.Header) { h.Add(sigHeader, h.Get(sigHeader)) }, webhooks.ReasonMalformedHeader},
		"timestamp twice":    {func(h http.Header) { h.Add(tsHeader, h.Get(tsHeader)) }, webhooks.ReasonMalformedHeader},
		"empty signature":    {func(h http.Header) { h.Set(sigHeader, "") }, webhooks.ReasonMissingSignature},
		"signature not hex":  {func(h http.Header) { h.Set(sigHeader, strings.Repeat("zz", 64)) }, webhooks.ReasonMalformedHeader},
		"timestamp not Unix": {func(h http.Header) { h.Set(tsHeader, "2025-01-01T00:00:00Z") }, webhooks.ReasonMalformedTime},
	} {
		wantAnswer(t, serve(gw, edit(sign(oldKey.Private, nhNow, event("g0")), c.edit)), http.StatusUnauthorized, c.reason, what)
		wantAnswer(t, serve(gw, edit(sign(oldKey.Private, nhNow, ping), c.edit)), http.StatusUnauthorized, c.reason, "PING: "+what)
	}

	// Timestamps: 5 minutes either way are accepted, beyond refused, PING
	// included (Discord's security checks send such PINGs).
	for _, skew := range []time.Duration{-6 * time.Minute, 6 * time.Minute, 2 * time.Hour} {
		wantAnswer(t, serve(gw, sign(oldKey.Private, nhNow.Add(skew), event("g0"))), http.StatusUnauthorized, webhooks.ReasonTimestampExpired, "an event signed at "+skew.String())
		wantAnswer(t, serve(gw, sign(oldKey.Private, nhNow.Add(skew), ping)), http.StatusUnauthorized, webhooks.ReasonTimestampExpired, "a PING signed at "+skew.String())
	}
	nhStoredNothing(t, inbox, replay, nhNow)
	wantAnswer(t, serve(gw, sign(oldKey.Private, nhNow.Add(4*time.Minute), event("g-future"))), http.StatusAccepted, "", "an event signed 4 minutes ahead")
	wantAnswer(t, serve(gw, sign(oldKey.Private, nhNow.Add(-4*time.Minute), event("g-past"))), http.StatusAccepted, "", "an event signed 4 minutes ago")

	// The round trip: 202, a duplicate 200, the PING answered 204.
	wantAnswer(t, serve(gw, sign(oldKey.Private, nhNow, event("g1"))), http.StatusAccepted, "", "an event")
	wantAnswer(t, serve(gw, sign(oldKey.Private, nhNow.Add(time.Second), event("g1"))), http.StatusOK, "", "its redelivery, signed again")
	wantAnswer(t, serve(gw, sign(oldKey.Private, nhNow, ping)), http.StatusNoContent, "", "a PING")
	if item := stored(t, inbox, "discord-events", bodyID(event("g1"))); item.KeyID != "old" || item.EventType != "APPLICATION_AUTHORIZED" {
		t.Errorf("stored item: key %q, type %q", item.KeyID, item.EventType)
	}

	// Rotation: the new key verifies once configured; both do meanwhile,
	// each reported by its ID; the old one is refused afterwards.
	wantAnswer(t, serve(gw, sign(newKey.Private, nhNow, event("g2"))), http.StatusUnauthorized, webhooks.ReasonBadSignature, "the new key before the rotation")
	secrets.set("old", oldKey.PublicKey(providers.Ed25519KeyHex), "new", newKey.PublicKey(providers.Ed25519KeyHex))
	wantAnswer(t, serve(gw, sign(newKey.Private, nhNow, event("g2"))), http.StatusAccepted, "", "the new key during the rotation")
	wantAnswer(t, serve(gw, sign(oldKey.Private, nhNow, event("g3"))), http.StatusAccepted, "", "the old key during the rotation")
	if k2, k3 := stored(t, inbox, "discord-events", bodyID(event("g2"))).KeyID, stored(t, inbox, "discord-events", bodyID(event("g3"))).KeyID; k2 != "new" || k3 != "old" {
		t.Errorf("key IDs during the rotation: %q and %q, want new and old", k2, k3)
	}
	secrets.set("new", newKey.PublicKey(providers.Ed25519KeyHex))
	wantAnswer(t, serve(gw, sign(oldKey.Private, nhNow, event("g4"))), http.StatusUnauthorized, webhooks.ReasonBadSignature, "the old key after the rotation")
	wantAnswer(t, serve(gw, sign(oldKey.Private, nhNow, ping)), http.StatusUnauthorized, webhooks.ReasonBadSignature, "a PING with the old key after the rotation")
	wantAnswer(t, serve(gw, sign(newKey.Private, nhNow, ping)), http.StatusNoContent, "", "a PING with the new key")
	if n := inbox.Len(); n != 5 {
		t.Errorf("the inbox holds %d items, want 5", n)
	}
}
