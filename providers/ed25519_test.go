package providers_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// rfc8032Vector is testdata/ed25519/rfc8032-test2.json.
type rfc8032Vector struct {
	Source    string `json:"source"`
	SecretKey string `json:"secret_key"`
	PublicKey string `json:"public_key"`
	Message   string `json:"message"`
	Signature string `json:"signature"`
}

// discordVector is testdata/discord/interactions.json.
type discordVector struct {
	Source    string `json:"source"`
	SecretKey string `json:"secret_key"`
	PublicKey string `json:"public_key"`
	Requests  []struct {
		Name      string `json:"name"`
		Timestamp string `json:"timestamp"`
		Body      string `json:"body"`
		Signature string `json:"signature"`
	} `json:"requests"`
}

// v1aVector is testdata/standardwebhooks-v1a/vector.json.
type v1aVector struct {
	Source    string `json:"source"`
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	Body      string `json:"body"`
	Key1      v1aKey `json:"key_1"`
	Key2      v1aKey `json:"key_2"`
}

type v1aKey struct {
	SecretKey string `json:"secret_key"`
	PublicKey string `json:"public_key"`
	Signature string `json:"signature"`
}

func newEd25519Verifier(t *testing.T, opts providers.Ed25519Options, creds webhooks.CredentialResolver, clock webhooks.Clock) *providers.Ed25519Verifier {
	t.Helper()
	opts.Clock = clock
	v, err := providers.NewEd25519Verifier(opts, creds)
	if err != nil {
		t.Fatalf("NewEd25519Verifier: %v", err)
	}
	return v
}

func TestEd25519RFC8032Vector(t *testing.T) {
	t.Parallel()
	var vec rfc8032Vector
	nhLoad(t, "ed25519/rfc8032-test2.json", &vec)
	seed, _ := hex.DecodeString(vec.SecretKey)
	pair, err := webhookstest.Ed25519KeyPairFromSeed(seed)
	if err != nil || pair.PublicKey(providers.Ed25519KeyHex) != vec.PublicKey {
		t.Fatalf("the vector's secret key does not give its public key: %v", err)
	}
	opts := providers.Ed25519Options{SignedRequest: webhooks.SignedRequest{SignatureHeader: "X-Signature", Event: webhooks.EventSource{IDFromBody: true}}}
	v := newEd25519Verifier(t, opts, webhooks.StaticSecrets(vec.PublicKey), nil)
	got := nhVerify(t, v, nhRequest(vec.Message, "X-Signature", vec.Signature))
	if got.EventID != bodyID([]byte(vec.Message)) || got.KeyID != "static:0" || !got.OccurredAt.IsZero() {
		t.Errorf("Verification %+v", got)
	}
	nhReject(t, v, nhRequest("s", "X-Signature", vec.Signature), webhooks.ReasonBadSignature)
	// Upper-case hex is the same signature.
	nhVerify(t, v, nhRequest(vec.Message, "X-Signature", strings.ToUpper(vec.Signature)))
}

func loadDiscord(t *testing.T) discordVector {
	t.Helper()
	var vec discordVector
	nhLoad(t, "discord/interactions.json", &vec)
	if vec.Source == "" || len(vec.Requests) != 2 {
		t.Fatal("incomplete vector")
	}
	return vec
}

func TestDiscordInteractionsVector(t *testing.T) {
	t.Parallel()
	vec := loadDiscord(t)
	ping, command := vec.Requests[0], vec.Requests[1]
	v := newEd25519Verifier(t, providers.DiscordInteractionsOptions(), webhooks.StaticSecrets(vec.PublicKey), nhClock(nhNow.Add(30*time.Second)))

	got := nhVerify(t, v, nhRequest(command.Body, "X-Signature-Ed25519", command.Signature, "X-Signature-Timestamp", command.Timestamp))
	want := webhooks.Verification{
		EventID:    "1312222222222222222",
		EventType:  "2",
		OccurredAt: nhNow,
		KeyID:      "static:0",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("command: %+v, want %+v", got, want)
	}

	got = nhVerify(t, v, nhRequest(ping.Body, "X-Signature-Ed25519", ping.Signature, "X-Signature-Timestamp", ping.Timestamp))
	if got.Handshake == nil {
		t.Fatal("PING was not answered")
	}
	if got.Handshake.StatusCode != http.StatusOK || string(got.Handshake.Body) != `{"type":1}` || got.Handshake.Header.Get("Content-Type") != "application/json" {
		t.Errorf("PONG %+v", got.Handshake)
	}
	if got.KeyID != "static:0" || !got.OccurredAt.Equal(nhNow) {
		t.Errorf("PING verification %+v", got)
	}
}

func TestDiscordInteractionsRejections(t *testing.T) {
	t.Parallel()
	vec := loadDiscord(t)
	cmd := vec.Requests[1]
	clock := nhClock(nhNow)
	v := newEd25519Verifier(t, providers.DiscordInteractionsOptions(), webhooks.StaticSecrets(vec.PublicKey), clock)
	otherKey := newEd25519Verifier(t, providers.DiscordInteractionsOptions(), webhooks.StaticSecrets("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c"), clock)
	late := newEd25519Verifier(t, providers.DiscordInteractionsOptions(), webhooks.StaticSecrets(vec.PublicKey), nhClock(nhNow.Add(5*time.Minute+time.Second)))
	early := newEd25519Verifier(t, providers.DiscordInteractionsOptions(), webhooks.StaticSecrets(vec.PublicKey), nhClock(nhNow.Add(-5*time.Minute-time.Second)))
	sig, ts := "X-Signature-Ed25519", "X-Signature-Timestamp"
	// The signature of the PING, which is of another message.
	other := vec.Requests[0].Signature

	tests := []struct {
		name string
		v    *providers.Ed25519Verifier
		req  *webhooks.Request
		want webhooks.Reason
	}{
		{"tampered body", v, nhRequest(strings.Replace(cmd.Body, "blep", "bleb", 1), sig, cmd.Signature, ts, cmd.Timestamp), webhooks.ReasonBadSignature},
		{"tampered timestamp", v, nhRequest(cmd.Body, sig, cmd.Signature, ts, "1735689601"), webhooks.ReasonBadSignature},
		{"signature of another request", v, nhRequest(cmd.Body, sig, other, ts, cmd.Timestamp), webhooks.ReasonBadSignature},
		{"wrong public key", otherKey, nhRequest(cmd.Body, sig, cmd.Signature, ts, cmd.Timestamp), webhooks.ReasonBadSignature},
		{"stale", late, nhRequest(cmd.Body, sig, cmd.Signature, ts, cmd.Timestamp), webhooks.ReasonTimestampExpired},
		{"from the future", early, nhRequest(cmd.Body, sig, cmd.Signature, ts, cmd.Timestamp), webhooks.ReasonTimestampExpired},
		{"missing signature", v, nhRequest(cmd.Body, ts, cmd.Timestamp), webhooks.ReasonMissingSignature},
		{"missing timestamp", v, nhRequest(cmd.Body, sig, cmd.Signature), webhooks.ReasonMissingTimestamp},
		{"duplicated signature", v, nhRequest(cmd.Body, sig, cmd.Signature, sig, cmd.Signature, ts, cmd.Timestamp), webhooks.ReasonMalformedHeader},
		{"duplicated timestamp", v, nhRequest(cmd.Body, sig, cmd.Signature, ts, cmd.Timestamp, ts, cmd.Timestamp), webhooks.ReasonMalformedHeader},
		{"signature not hex", v, nhRequest(cmd.Body, sig, strings.Repeat("zz", 64), ts, cmd.Timestamp), webhooks.ReasonMalformedHeader},
		{"signature too short", v, nhRequest(cmd.Body, sig, cmd.Signature[:126], ts, cmd.Timestamp), webhooks.ReasonMalformedHeader},
		{"signature in base64", v, nhRequest(cmd.Body, sig, base64.StdEncoding.EncodeToString(make([]byte, 64)), ts, cmd.Timestamp), webhooks.ReasonMalformedHeader},
		{"timestamp not a number", v, nhRequest(cmd.Body, sig, cmd.Signature, ts, "2025-01-01T00:00:00Z"), webhooks.ReasonMalformedTime},
		{"timestamp overflows", v, nhRequest(cmd.Body, sig, cmd.Signature, ts, "99999999999999999999"), webhooks.ReasonMalformedTime},
		{"empty body", v, nhRequest("", sig, cmd.Signature, ts, cmd.Timestamp), webhooks.ReasonEmptyBody},
		// A stale request with a bad signature is a bad signature.
		{"stale and tampered", late, nhRequest(cmd.Body+" ", sig, cmd.Signature, ts, cmd.Timestamp), webhooks.ReasonBadSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			vErr := nhReject(t, tt.v, tt.req, tt.want)
			nhNoLeak(t, vErr, cmd.Signature, other)
		})
	}

	// A signed body without an ID is rejected after the signature.
	pair, _ := webhookstest.Ed25519KeyPairFromSeed(mustHex(t, vec.SecretKey))
	noID := []byte(`{"type":2}`)
	h, err := webhookstest.SignEd25519(providers.DiscordInteractionsOptions(), pair.Private, webhookstest.SignedMessage{Timestamp: nhNow, Body: noID})
	if err != nil {
		t.Fatal(err)
	}
	nhReject(t, v, &webhooks.Request{Header: h, Body: noID}, webhooks.ReasonMissingEventID)
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEd25519KeysFromTheResolver(t *testing.T) {
	t.Parallel()
	vec := loadDiscord(t)
	cmd := vec.Requests[1]
	req := func() *webhooks.Request {
		return nhRequest(cmd.Body, "X-Signature-Ed25519", cmd.Signature, "X-Signature-Timestamp", cmd.Timestamp)
	}
	rfc2 := "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c"

	// Rotation: the key that verified is reported.
	v := newEd25519Verifier(t, providers.DiscordInteractionsOptions(), nhSecrets("next", rfc2, "blank", "", "current", strings.ToUpper(vec.PublicKey)), nhClock(nhNow))
	if got := nhVerify(t, v, req()); got.KeyID != "current" {
		t.Errorf("KeyID %q, want current", got.KeyID)
	}

	none := newEd25519Verifier(t, providers.DiscordInteractionsOptions(), nhSecrets("blank", ""), nhClock(nhNow))
	nhReject(t, none, req(), webhooks.ReasonNoCredentials)

	// A malformed key is a configuration error (503), named by ID only.
	privateKey := hex.EncodeToString(ed25519.NewKeyFromSeed(mustHex(t, vec.SecretKey)))
	for name, value := range map[string]string{
		"short":       vec.PublicKey[:62],
		"not hex":     strings.Repeat("g", 64),
		"private key": privateKey,
	} {
		bad := newEd25519Verifier(t, providers.DiscordInteractionsOptions(), nhSecrets("k1", value), nhClock(nhNow))
		_, err := bad.Verify(context.Background(), nhRoute, req())
		if err == nil || !strings.Contains(err.Error(), `"k1"`) {
			t.Errorf("%s: %v, want an error naming the key", name, err)
		}
		if _, ok := errors.AsType[*webhooks.VerificationError](err); ok {
			t.Errorf("%s: a malformed key became a rejection: %v", name, err)
		}
		nhNoLeak(t, err, value, privateKey[:64])
	}

	down := newEd25519Verifier(t, providers.DiscordInteractionsOptions(), nhErrResolver, nhClock(nhNow))
	if _, err := down.Verify(context.Background(), nhRoute, req()); err == nil {
		t.Error("a failing resolver verified")
	} else if _, ok := errors.AsType[*webhooks.VerificationError](err); ok {
		t.Errorf("a failing resolver gave a rejection: %v", err)
	}
}

func TestDiscordThroughGateway(t *testing.T) {
	t.Parallel()
	vec := loadDiscord(t)
	ping, command := vec.Requests[0], vec.Requests[1]
	clock := nhClock(nhNow)
	v := newEd25519Verifier(t, providers.DiscordInteractionsOptions(), webhooks.StaticSecrets(vec.PublicKey), clock)
	post := func(gw *webhooks.Receiver, body, sig, ts string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/webhooks/discord", strings.NewReader(body))
		if sig != "" {
			req.Header.Set("X-Signature-Ed25519", sig)
		}
		req.Header.Set("X-Signature-Timestamp", ts)
		rec := httptest.NewRecorder()
		gw.ServeHTTP(rec, req)
		return rec
	}

	gw, inbox, replay := nhGateway(t, "discord", v, clock)
	rec := post(gw, ping.Body, ping.Signature, ping.Timestamp)
	if rec.Code != http.StatusOK || rec.Body.String() != `{"type":1}` || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("signed PING: %d %q %q", rec.Code, rec.Body, rec.Header())
	}
	// Discord's routine checks: unsigned and badly signed PINGs get 401.
	for name, sig := range map[string]string{"unsigned": "", "badly signed": command.Signature} {
		if rec := post(gw, ping.Body, sig, ping.Timestamp); rec.Code != http.StatusUnauthorized || strings.Contains(rec.Body.String(), `"type":1`) {
			t.Errorf("%s PING: %d %s", name, rec.Code, rec.Body)
		}
	}
	nhStoredNothing(t, inbox, replay, nhNow)

	if rec := post(gw, command.Body, command.Signature, command.Timestamp); rec.Code != http.StatusAccepted {
		t.Fatalf("command: %d %s", rec.Code, rec.Body)
	}
	item, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: "discord", EventID: "1312222222222222222"})
	if err != nil || item.EventType != "2" || !item.OccurredAt.Equal(nhNow) {
		t.Fatalf("item %+v, %v", item, err)
	}
}

func TestDiscordWebhookEvents(t *testing.T) {
	t.Parallel()
	pair := webhookstest.NewEd25519KeyPair()
	clock := nhClock(nhNow)
	opts := providers.DiscordWebhookEventsOptions()
	v := newEd25519Verifier(t, opts, webhooks.StaticSecrets(pair.PublicKey(providers.Ed25519KeyHex)), clock)
	gw, inbox, replay := nhGateway(t, "discord-events", v, clock)

	ping := []byte(`{"version":1,"application_id":"1234567890","type":0}`)
	rec := httptest.NewRecorder()
	gw.ServeHTTP(rec, webhookstest.NewEd25519Request(t, "/webhooks/discord-events", opts, pair.Private, webhookstest.SignedMessage{Timestamp: nhNow, Body: ping}))
	if rec.Code != http.StatusNoContent || rec.Body.Len() != 0 {
		t.Fatalf("PING: %d %q", rec.Code, rec.Body)
	}
	nhStoredNothing(t, inbox, replay, nhNow)

	event := []byte(`{"version":1,"application_id":"1234567890","type":1,"event":{"type":"APPLICATION_AUTHORIZED","timestamp":"2025-01-01T00:00:00Z","data":{}}}`)
	rec = httptest.NewRecorder()
	gw.ServeHTTP(rec, webhookstest.NewEd25519Request(t, "/webhooks/discord-events", opts, pair.Private, webhookstest.SignedMessage{Timestamp: nhNow, Type: "APPLICATION_AUTHORIZED", Body: event}))
	if rec.Code != http.StatusAccepted {
		t.Fatalf("event: %d %s", rec.Code, rec.Body)
	}
	item, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: "discord-events", EventID: bodyID(event)})
	if err != nil || item.EventType != "APPLICATION_AUTHORIZED" {
		t.Fatalf("item %+v, %v", item, err)
	}

	// A tampered event and a stale one are refused.
	tampered := webhookstest.NewEd25519Request(t, "/webhooks/discord-events", opts, pair.Private, webhookstest.SignedMessage{Timestamp: nhNow, Body: event})
	tampered.Body = io.NopCloser(strings.NewReader(strings.Replace(string(event), "AUTHORIZED", "DEAUTHORIZED", 1)))
	stale := webhookstest.NewEd25519Request(t, "/webhooks/discord-events", opts, pair.Private, webhookstest.SignedMessage{Timestamp: nhNow.Add(-6 * time.Minute), Body: event})
	for reason, req := range map[webhooks.Reason]*http.Request{webhooks.ReasonBadSignature: tampered, webhooks.ReasonTimestampExpired: stale} {
		rec = httptest.NewRecorder()
		gw.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), string(reason)) {
			t.Errorf("want %s: %d %s", reason, rec.Code, rec.Body)
		}
	}
}

func loadV1a(t *testing.T) v1aVector {
	t.Helper()
	var vec v1aVector
	nhLoad(t, "standardwebhooks-v1a/vector.json", &vec)
	if vec.Source == "" || vec.Key1.Signature == "" || vec.Key2.Signature == "" {
		t.Fatal("incomplete vector")
	}
	return vec
}

func TestStandardWebhooksV1aVector(t *testing.T) {
	t.Parallel()
	vec := loadV1a(t)
	signedAt := time.Unix(1614265330, 0)
	clock := nhClock(signedAt.Add(2 * time.Minute))
	opts := providers.StandardWebhooksEd25519Options()
	both := newEd25519Verifier(t, opts, nhSecrets("k1", vec.Key1.PublicKey, "k2", vec.Key2.PublicKey), clock)
	only2 := newEd25519Verifier(t, opts, nhSecrets("k2", vec.Key2.PublicKey), clock)
	hmacItem := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

	for _, tc := range []struct {
		name, signature, keyID string
		v                      *providers.Ed25519Verifier
		names                  [3]string
	}{
		{"key 1", vec.Key1.Signature, "k1", both, [3]string{"Webhook-Id", "Webhook-Timestamp", "Webhook-Signature"}},
		{"key 2", vec.Key2.Signature, "k2", both, [3]string{"webhook-id", "webhook-timestamp", "webhook-signature"}},
		{"both, rotating", vec.Key1.Signature + " " + vec.Key2.Signature, "k2", only2, [3]string{"Webhook-Id", "Webhook-Timestamp", "Webhook-Signature"}},
		{"among v1 items", hmacItem + " " + vec.Key1.Signature + " v2,abc", "k1", both, [3]string{"Webhook-Id", "Webhook-Timestamp", "Webhook-Signature"}},
		// Malformed v1a items beside a valid one are skipped, as the
		// Standard Webhooks libraries skip them.
		{"malformed v1a beside a valid one", "v1a,*** " + vec.Key1.Signature, "k1", both, [3]string{"Webhook-Id", "Webhook-Timestamp", "Webhook-Signature"}},
		{"wrong-length v1a beside a valid one", "v1a," + base64.StdEncoding.EncodeToString(make([]byte, 32)) + " " + vec.Key2.Signature + " v1a", "k2", both, [3]string{"Webhook-Id", "Webhook-Timestamp", "Webhook-Signature"}},
		{"eight valid and a malformed one", strings.Repeat(vec.Key2.Signature+" ", webhooks.MaxSignatures) + "v1a,***", "k2", both, [3]string{"Webhook-Id", "Webhook-Timestamp", "Webhook-Signature"}},
		{"svix names", vec.Key1.Signature, "k1", both, [3]string{"svix-id", "svix-timestamp", "svix-signature"}},
	} {
		got := nhVerify(t, tc.v, nhRequest(vec.Body, tc.names[0], vec.ID, tc.names[1], vec.Timestamp, tc.names[2], tc.signature))
		if got.EventID != vec.ID || got.KeyID != tc.keyID || !got.OccurredAt.Equal(signedAt) || got.EventType != "" {
			t.Errorf("%s: %+v", tc.name, got)
		}
	}

	h := func(kv ...string) []string {
		return append([]string{"Webhook-Id", vec.ID, "Webhook-Timestamp", vec.Timestamp}, kv...)
	}
	nine := strings.TrimSpace(strings.Repeat(vec.Key2.Signature+" ", webhooks.MaxSignatures+1))
	tests := []struct {
		name string
		req  *webhooks.Request
		want webhooks.Reason
	}{
		{"tampered body", nhRequest(`{"test": 2432232315}`, h("Webhook-Signature", vec.Key1.Signature)...), webhooks.ReasonBadSignature},
		{"other ID", nhRequest(vec.Body, "Webhook-Id", "msg_other", "Webhook-Timestamp", vec.Timestamp, "Webhook-Signature", vec.Key1.Signature), webhooks.ReasonBadSignature},
		{"only an HMAC signature", nhRequest(vec.Body, h("Webhook-Signature", hmacItem)...), webhooks.ReasonMissingSignature},
		{"v1a of the wrong length", nhRequest(vec.Body, h("Webhook-Signature", "v1a,"+base64.StdEncoding.EncodeToString(make([]byte, 32)))...), webhooks.ReasonMalformedHeader},
		{"v1a not base64", nhRequest(vec.Body, h("Webhook-Signature", "v1a,***")...), webhooks.ReasonMalformedHeader},
		{"only malformed v1a items", nhRequest(vec.Body, h("Webhook-Signature", "v1a,*** v1a,"+base64.StdEncoding.EncodeToString(make([]byte, 32))+" v1a "+hmacItem)...), webhooks.ReasonMalformedHeader},
		{"malformed v1a and a v1a of another key", nhRequest(vec.Body, h("Webhook-Signature", "v1a,*** "+strings.Replace(vec.Key1.Signature, "A", "B", 1))...), webhooks.ReasonBadSignature},
		{"too many signatures", nhRequest(vec.Body, h("Webhook-Signature", nine)...), webhooks.ReasonMalformedHeader},
		{"missing ID", nhRequest(vec.Body, "Webhook-Timestamp", vec.Timestamp, "Webhook-Signature", vec.Key1.Signature), webhooks.ReasonMissingEventID},
		{"duplicated ID", nhRequest(vec.Body, h("Webhook-Id", vec.ID, "Webhook-Signature", vec.Key1.Signature)...), webhooks.ReasonMalformedHeader},
		{"missing signature", nhRequest(vec.Body, h()...), webhooks.ReasonMissingSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			nhReject(t, both, tt.req, tt.want)
		})
	}
	// Exactly webhooks.MaxSignatures signatures are checked.
	eight := strings.TrimSpace(strings.Repeat(vec.Key2.Signature+" ", webhooks.MaxSignatures))
	nhVerify(t, both, nhRequest(vec.Body, h("Webhook-Signature", eight)...))

	for _, now := range []time.Time{signedAt.Add(6 * time.Minute), signedAt.Add(-6 * time.Minute)} {
		v := newEd25519Verifier(t, opts, webhooks.StaticSecrets(vec.Key1.PublicKey), nhClock(now))
		nhReject(t, v, nhRequest(vec.Body, h("Webhook-Signature", vec.Key1.Signature)...), webhooks.ReasonTimestampExpired)
	}
	wide := opts
	wide.Timestamp.Tolerance = time.Hour
	v := newEd25519Verifier(t, wide, webhooks.StaticSecrets(vec.Key1.PublicKey), nhClock(signedAt.Add(50*time.Minute)))
	nhVerify(t, v, nhRequest(vec.Body, h("Webhook-Signature", vec.Key1.Signature)...))

	// A secret key configured by mistake is refused, without echoing it.
	mistake := newEd25519Verifier(t, opts, nhSecrets("oops", vec.Key1.SecretKey), clock)
	_, err := mistake.Verify(context.Background(), nhRoute, nhRequest(vec.Body, h("Webhook-Signature", vec.Key1.Signature)...))
	if err == nil || !strings.Contains(err.Error(), "whsk_") {
		t.Errorf("secret key as public key: %v", err)
	}
	nhNoLeak(t, err, vec.Key1.SecretKey, strings.TrimPrefix(vec.Key1.SecretKey, "whsk_"))
}

func TestStandardWebhooksV1aRoundTrip(t *testing.T) {
	t.Parallel()
	oldKey, newKey := webhookstest.NewEd25519KeyPair(), webhookstest.NewEd25519KeyPair()
	opts := providers.StandardWebhooksEd25519Options()
	opts.Event.TypePath = "type"
	v := newEd25519Verifier(t, opts, nhSecrets("new", newKey.PublicKey(providers.Ed25519KeyStandardWebhooks)), nil)
	gw, inbox, _ := nhGateway(t, "acme", v, nil)
	body := []byte(`{"type":"invoice.paid","data":{"id":"in_1"}}`)
	msg := webhookstest.SignedMessage{ID: "msg_1", Type: "invoice.paid", Body: body}
	rec := httptest.NewRecorder()
	gw.ServeHTTP(rec, webhookstest.NewEd25519Request(t, "/webhooks/acme", opts, oldKey.Private, msg, newKey.Private))
	if rec.Code != http.StatusAccepted {
		t.Fatalf("status %d %s", rec.Code, rec.Body)
	}
	item, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: "acme", EventID: "msg_1"})
	if err != nil || item.KeyID != "new" || item.EventType != "invoice.paid" {
		t.Fatalf("item %+v, %v", item, err)
	}
	// Signed by the old key only: refused.
	msg.ID = "msg_2"
	rec = httptest.NewRecorder()
	gw.ServeHTTP(rec, webhookstest.NewEd25519Request(t, "/webhooks/acme", opts, oldKey.Private, msg))
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("old key: status %d", rec.Code)
	}
	if got := oldKey.StandardWebhooksSecretKey(); !strings.HasPrefix(got, "whsk_") {
		t.Errorf("secret key %q", got)
	}
}

func TestParseEd25519PublicKey(t *testing.T) {
	t.Parallel()
	pair := webhookstest.NewEd25519KeyPair()
	for _, format := range []providers.Ed25519KeyFormat{providers.Ed25519KeyHex, providers.Ed25519KeyBase64, providers.Ed25519KeyStandardWebhooks} {
		got, err := providers.ParseEd25519PublicKey(format, []byte(" "+pair.PublicKey(format)+"\n"))
		if err != nil || !got.Equal(pair.Public) {
			t.Errorf("%v: %v", format, err)
		}
	}
	// The whpk_ prefix may be left out.
	if _, err := providers.ParseEd25519PublicKey(providers.Ed25519KeyStandardWebhooks, []byte(pair.PublicKey(providers.Ed25519KeyBase64))); err != nil {
		t.Error(err)
	}
	for name, tc := range map[string]struct {
		format providers.Ed25519KeyFormat
		value  string
	}{
		"empty":           {providers.Ed25519KeyHex, ""},
		"odd hex":         {providers.Ed25519KeyHex, pair.PublicKey(providers.Ed25519KeyHex)[:63] + "g"},
		"base64 as hex":   {providers.Ed25519KeyHex, pair.PublicKey(providers.Ed25519KeyBase64)},
		"short base64":    {providers.Ed25519KeyBase64, "AAAA"},
		"whsk":            {providers.Ed25519KeyStandardWebhooks, pair.StandardWebhooksSecretKey()},
		"private key b64": {providers.Ed25519KeyBase64, base64.StdEncoding.EncodeToString(pair.Private)},
		"unknown format":  {providers.Ed25519KeyFormat(9), pair.PublicKey(providers.Ed25519KeyHex)},
		"newline inside":  {providers.Ed25519KeyBase64, pair.PublicKey(providers.Ed25519KeyBase64)[:10] + "\n" + pair.PublicKey(providers.Ed25519KeyBase64)[10:]},
	} {
		if _, err := providers.ParseEd25519PublicKey(tc.format, []byte(tc.value)); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			nhNoLeak(t, err, tc.value)
		}
	}
}

func TestNewEd25519VerifierRejectsInvalidOptions(t *testing.T) {
	t.Parallel()
	creds := webhooks.StaticSecrets("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
	discord := providers.DiscordInteractionsOptions
	mod := func(f func(*providers.Ed25519Options)) providers.Ed25519Options {
		o := discord()
		f(&o)
		return o
	}
	for name, opts := range map[string]providers.Ed25519Options{
		"no signature header":           mod(func(o *providers.Ed25519Options) { o.SignatureHeader = "" }),
		"bad signature header":          mod(func(o *providers.Ed25519Options) { o.SignatureHeader = "X Sig" }),
		"bad timestamp header":          mod(func(o *providers.Ed25519Options) { o.Timestamp.Header = "X:Ts" }),
		"timestamp not signed":          mod(func(o *providers.Ed25519Options) { o.SignedContent = "{body}" }),
		"timestamp not signed, default": mod(func(o *providers.Ed25519Options) { o.SignedContent = "" }),
		"signed timestamp missing":      mod(func(o *providers.Ed25519Options) { o.Timestamp.Header = "" }),
		"ID not from a header":          mod(func(o *providers.Ed25519Options) { o.SignedContent = "{id}.{timestamp}.{body}" }),
		"unknown placeholder":           mod(func(o *providers.Ed25519Options) { o.SignedContent = "{ts}{body}" }),
		"no body":                       mod(func(o *providers.Ed25519Options) { o.SignedContent = "{timestamp}" }),
		"unknown encoding":              mod(func(o *providers.Ed25519Options) { o.Encoding = 7 }),
		"unknown key format":            mod(func(o *providers.Ed25519Options) { o.PublicKeyFormat = 7 }),
		"unknown timestamp format":      mod(func(o *providers.Ed25519Options) { o.Timestamp.Format = 7 }),
		"negative tolerance":            mod(func(o *providers.Ed25519Options) { o.Timestamp.Tolerance = -time.Second }),
		"no ID source":                  mod(func(o *providers.Ed25519Options) { o.Event.IDPath = "" }),
		"list without separator":        mod(func(o *providers.Ed25519Options) { o.ItemSeparator, o.SignatureKey = " ", "v1a" }),
		"key without list":              mod(func(o *providers.Ed25519Options) { o.SignatureKey = "v1a" }),
		"prefix with list": mod(func(o *providers.Ed25519Options) {
			o.ItemSeparator, o.SignatureKey, o.SignaturePrefix = " ", "v1a", "x"
		}),
		"list without key": mod(func(o *providers.Ed25519Options) { o.ItemSeparator = " " }),
		"overlapping separators": mod(func(o *providers.Ed25519Options) {
			o.ItemSeparator, o.KeyValueSeparator, o.SignatureKey = ",", ",", "v1a"
		}),
		"fallback for nothing": mod(func(o *providers.Ed25519Options) { o.HeaderFallbacks = webhooks.HeaderFallbacks{"X-Other": "X-Else"} }),
		"fallback onto a header": mod(func(o *providers.Ed25519Options) {
			o.HeaderFallbacks = webhooks.HeaderFallbacks{"X-Signature-Ed25519": "X-Signature-Timestamp"}
		}),
		"bad fallback name": mod(func(o *providers.Ed25519Options) {
			o.HeaderFallbacks = webhooks.HeaderFallbacks{"X-Signature-Ed25519": "X Sig"}
		}),
		"two fallbacks for one header": mod(func(o *providers.Ed25519Options) {
			o.HeaderFallbacks = webhooks.HeaderFallbacks{"X-Signature-Ed25519": "X-Sig-A", "x-signature-ed25519": "X-Sig-B"}
		}),
	} {
		if _, err := providers.NewEd25519Verifier(opts, creds); err == nil {
			t.Errorf("%s: NewEd25519Verifier succeeded", name)
		}
	}
	if _, err := providers.NewEd25519Verifier(discord(), nil); err == nil {
		t.Error("nil creds accepted")
	}
	// Static keys are checked at construction, named by ID only.
	for name, keys := range map[string][]string{
		"none":       nil,
		"empty":      {""},
		"short":      {"00"},
		"whpk":       {"whpk_11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="},
		"one of two": {"d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "zz"},
	} {
		_, err := providers.NewEd25519Verifier(discord(), webhooks.StaticSecrets(keys...))
		if err == nil {
			t.Errorf("static keys %s: accepted", name)
		}
		nhNoLeak(t, err, "11qYAYKxCrfVS")
	}
	if _, err := providers.NewEd25519Verifier(providers.StandardWebhooksEd25519Options(), webhooks.StaticSecrets("whsk_nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=")); err == nil || !strings.Contains(err.Error(), "whsk_") {
		t.Errorf("a static whsk_ key: %v", err)
	}
	for _, opts := range []providers.Ed25519Options{discord(), providers.DiscordWebhookEventsOptions(), providers.StandardWebhooksEd25519Options()} {
		key := webhookstest.NewEd25519KeyPair().PublicKey(opts.PublicKeyFormat)
		if _, err := providers.NewEd25519Verifier(opts, webhooks.StaticSecrets(key)); err != nil {
			t.Errorf("preset: %v", err)
		}
	}
}

func TestEd25519HandshakeHookErrors(t *testing.T) {
	t.Parallel()
	pair := webhookstest.NewEd25519KeyPair()
	opts := providers.Ed25519Options{SignedRequest: webhooks.SignedRequest{SignatureHeader: "X-Sig", Event: webhooks.EventSource{IDFromBody: true}}}
	body := []byte("hello")
	sig := hex.EncodeToString(ed25519.Sign(pair.Private, body))
	for name, tc := range map[string]struct {
		err       error
		rejection bool
	}{
		"rejection": {webhooks.Reject(webhooks.ReasonMalformedPayload, "no"), true},
		"failure":   {errors.New("boom"), false},
	} {
		opts.Handshake = func(_ *webhooks.Request, _ webhooks.Verification, key []byte) (*webhooks.Response, error) {
			if key != nil {
				t.Errorf("an Ed25519 handshake was given a key")
			}
			return nil, tc.err
		}
		v := newEd25519Verifier(t, opts, webhooks.StaticSecrets(pair.PublicKey(providers.Ed25519KeyHex)), nil)
		_, err := v.Verify(context.Background(), nhRoute, nhRequest(string(body), "X-Sig", sig))
		_, isRejection := errors.AsType[*webhooks.VerificationError](err)
		if err == nil || isRejection != tc.rejection {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestEd25519EnumStrings(t *testing.T) {
	t.Parallel()
	for got, want := range map[string]string{
		providers.Ed25519KeyHex.String():              "hex",
		providers.Ed25519KeyBase64.String():           "base64",
		providers.Ed25519KeyStandardWebhooks.String(): "whpk",
		providers.Ed25519KeyFormat(9).String():        "Ed25519KeyFormat(9)",
	} {
		if got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}

// FuzzEd25519Verify feeds arbitrary Standard Webhooks v1a headers to an
// Ed25519 verifier: it must never panic and never accept a forgery.
func FuzzEd25519Verify(f *testing.F) {
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
	good := base64.StdEncoding.EncodeToString(ed25519.Sign(key, []byte("msg_1.1614265330.{}")))
	f.Add("msg_1", "1614265330", "v1a,"+good, "{}")
	f.Add("msg_1", "1614265330", "v1,abc v1a,"+good+" v1a,"+good, "{}")
	f.Add("", "x", "v1a", "")
	f.Add("msg_1", "99999999999999999999", "v1a,====", "{}")
	f.Add("msg_1", "1614265330", strings.Repeat("v1a,"+good+" ", 12), "{}")
	opts := providers.StandardWebhooksEd25519Options()
	opts.Clock = webhookstest.NewClock(time.Unix(1614265330, 0))
	v, err := providers.NewEd25519Verifier(opts, webhooks.StaticSecrets("whpk_"+base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey))))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, id, timestamp, signature, body string) {
		h := http.Header{}
		h.Set("Webhook-Id", id)
		h.Set("Webhook-Timestamp", timestamp)
		h.Set("Webhook-Signature", signature)
		got, err := v.Verify(context.Background(), webhooks.Route{Provider: "sw"}, &webhooks.Request{Method: http.MethodPost, Header: h, Body: []byte(body)})
		if err != nil {
			if _, ok := errors.AsType[*webhooks.VerificationError](err); !ok {
				t.Fatalf("not a rejection: %v", err)
			}
			return
		}
		// Only the seeded message is signed.
		if strings.TrimSpace(id) != "msg_1" || strings.TrimSpace(timestamp) != "1614265330" || body != "{}" || got.EventID != "msg_1" {
			t.Fatalf("forgery verified: id %q ts %q body %q", id, timestamp, body)
		}
	})
}
