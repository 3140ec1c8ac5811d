package webhookstest_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

var edAt = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func edClock() webhooks.Clock { return webhookstest.NewClock(edAt) }

func TestEd25519KeyPair(t *testing.T) {
	t.Parallel()
	// RFC 8032 section 7.1, TEST 1.
	seed, _ := hex.DecodeString("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
	pair, err := webhookstest.Ed25519KeyPairFromSeed(seed)
	if err != nil {
		t.Fatal(err)
	}
	for format, want := range map[providers.Ed25519KeyFormat]string{
		providers.Ed25519KeyHex:              "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
		providers.Ed25519KeyBase64:           "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=",
		providers.Ed25519KeyStandardWebhooks: "whpk_11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=",
	} {
		if got := pair.PublicKey(format); got != want {
			t.Errorf("%v: %s, want %s", format, got, want)
		}
	}
	if got := pair.StandardWebhooksSecretKey(); got != "whsk_nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=" {
		t.Errorf("secret key %s", got)
	}
	if _, err := webhookstest.Ed25519KeyPairFromSeed(seed[:31]); err == nil {
		t.Error("a short seed was accepted")
	}
	a, b := webhookstest.NewEd25519KeyPair(), webhookstest.NewEd25519KeyPair()
	if a.Public.Equal(b.Public) || len(a.Private) != ed25519.PrivateKeySize {
		t.Error("NewEd25519KeyPair does not make fresh 64-byte keys")
	}
}

func TestSignEd25519Presets(t *testing.T) {
	t.Parallel()
	pair := webhookstest.NewEd25519KeyPair()
	sw := providers.StandardWebhooksEd25519Options()
	sw.Event.TypePath = "type"
	tests := []struct {
		name    string
		opts    providers.Ed25519Options
		msg     webhookstest.SignedMessage
		wantID  string
		headers []string
	}{
		{"discord", providers.DiscordInteractionsOptions(), webhookstest.SignedMessage{ID: "42", Type: "2", Timestamp: edAt, Body: []byte(`{"id":"42","type":2}`)}, "42",
			[]string{"X-Signature-Ed25519", "X-Signature-Timestamp", "Content-Type"}},
		{"discord events", providers.DiscordWebhookEventsOptions(), webhookstest.SignedMessage{Timestamp: edAt, Body: []byte(`{"type":1,"event":{"type":"ENTITLEMENT_CREATE"}}`)}, bodySHA256ID(`{"type":1,"event":{"type":"ENTITLEMENT_CREATE"}}`),
			[]string{"X-Signature-Ed25519", "X-Signature-Timestamp"}},
		{"standard webhooks", sw, webhookstest.SignedMessage{ID: "msg_1", Type: "a.b", Timestamp: edAt, Body: []byte(`{"type":"a.b"}`)}, "msg_1",
			[]string{"Webhook-Signature", "Webhook-Timestamp", "Webhook-Id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := webhookstest.SignEd25519(tt.opts, pair.Private, tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range tt.headers {
				if h.Get(name) == "" {
					t.Errorf("header %s missing from %v", name, h)
				}
			}
			v, err := providers.NewEd25519Verifier(withEdClock(tt.opts, edClock()), webhooks.StaticSecrets(pair.PublicKey(tt.opts.PublicKeyFormat)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := v.Verify(context.Background(), webhooks.Route{Provider: "t"}, &webhooks.Request{Method: http.MethodPost, Header: h, Body: tt.msg.Body})
			if err != nil {
				t.Fatal(err)
			}
			if got.EventID != tt.wantID || !got.OccurredAt.Equal(edAt) {
				t.Errorf("Verification %+v", got)
			}
		})
	}
}

func TestSignEd25519MoreKeys(t *testing.T) {
	t.Parallel()
	a, b := webhookstest.NewEd25519KeyPair(), webhookstest.NewEd25519KeyPair()
	opts := providers.StandardWebhooksEd25519Options()
	h, err := webhookstest.SignEd25519(opts, a.Private, webhookstest.SignedMessage{ID: "m", Timestamp: edAt, Body: []byte("x")}, b.Private)
	if err != nil {
		t.Fatal(err)
	}
	items := strings.Fields(h.Get("Webhook-Signature"))
	if len(items) != 2 || !strings.HasPrefix(items[0], "v1a,") || !strings.HasPrefix(items[1], "v1a,") {
		t.Fatalf("signature header %q", h.Get("Webhook-Signature"))
	}
	v, err := providers.NewEd25519Verifier(withEdClock(opts, edClock()), webhooks.StaticSecrets(b.PublicKey(providers.Ed25519KeyStandardWebhooks)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), webhooks.Route{}, &webhooks.Request{Header: h, Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
}

func TestSignEd25519Errors(t *testing.T) {
	t.Parallel()
	pair := webhookstest.NewEd25519KeyPair()
	discord := providers.DiscordInteractionsOptions()
	body := []byte(`{"id":"1","type":2}`)
	broken := discord
	broken.SignatureHeader = ""
	for name, tc := range map[string]struct {
		opts providers.Ed25519Options
		key  ed25519.PrivateKey
		msg  webhookstest.SignedMessage
		more []ed25519.PrivateKey
	}{
		"short key":                 {discord, pair.Private[:32], webhookstest.SignedMessage{Body: body}, nil},
		"invalid options":           {broken, pair.Private, webhookstest.SignedMessage{Body: body}, nil},
		"more keys on a single one": {discord, pair.Private, webhookstest.SignedMessage{Body: body}, []ed25519.PrivateKey{pair.Private}},
		"bad extra key":             {providers.StandardWebhooksEd25519Options(), pair.Private, webhookstest.SignedMessage{ID: "m", Body: body}, []ed25519.PrivateKey{{1}}},
		"ID missing for v1a":        {providers.StandardWebhooksEd25519Options(), pair.Private, webhookstest.SignedMessage{Body: body}, nil},
		"ID differs from body":      {discord, pair.Private, webhookstest.SignedMessage{ID: "2", Body: body}, nil},
		"type differs from body":    {discord, pair.Private, webhookstest.SignedMessage{Type: "3", Body: body}, nil},
		"ID not in body":            {discord, pair.Private, webhookstest.SignedMessage{ID: "1", Body: []byte(`{}`)}, nil},
		"ID is not the body digest": {providers.DiscordWebhookEventsOptions(), pair.Private, webhookstest.SignedMessage{ID: "x", Body: body}, nil},
	} {
		if _, err := webhookstest.SignEd25519(tc.opts, tc.key, tc.msg, tc.more...); err == nil {
			t.Errorf("%s: SignEd25519 succeeded", name)
		}
	}
}

func TestNewEd25519Request(t *testing.T) {
	t.Parallel()
	pair := webhookstest.NewEd25519KeyPair()
	body := []byte(`{"id":"1","type":2}`)
	req := webhookstest.NewEd25519Request(t, "/webhooks/discord", providers.DiscordInteractionsOptions(), pair.Private, webhookstest.SignedMessage{Body: body})
	got := new(bytes.Buffer)
	if _, err := got.ReadFrom(req.Body); err != nil || !bytes.Equal(got.Bytes(), body) {
		t.Fatalf("body %q, %v", got, err)
	}
	if req.Method != http.MethodPost || req.URL.Path != "/webhooks/discord" || req.Header.Get("X-Signature-Ed25519") == "" {
		t.Errorf("request %s %s %v", req.Method, req.URL, req.Header)
	}
	// A zero timestamp is now.
	ts := req.Header.Get("X-Signature-Timestamp")
	if ts == "" || ts[0] != '1' {
		t.Errorf("timestamp %q", ts)
	}
}
