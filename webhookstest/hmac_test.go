package webhookstest_test

import (
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"hash"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

var at = time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)

func mac(newHash func() hash.Hash, key string, parts ...string) []byte {
	m := hmac.New(newHash, []byte(key))
	for _, p := range parts {
		m.Write([]byte(p))
	}
	return m.Sum(nil)
}

func hexMAC(key string, parts ...string) string {
	return hex.EncodeToString(mac(sha256.New, key, parts...))
}

func TestSignHMACHeaders(t *testing.T) {
	t.Parallel()
	ts := strconv.FormatInt(at.Unix(), 10)
	stripeBody := `{"id":"evt_1","type":"invoice.paid"}`
	swKey := []byte("0123456789abcdef0123456789abcdef")
	swSecret := "whsec_" + base64.StdEncoding.EncodeToString(swKey)
	swBody := `{"type":"user.created"}`
	paddleBody := `{"event_id":"evt_1","event_type":"t"}`
	slackBody := `{"event_id":"Ev1","event":{"type":"message"}}`
	tests := []struct {
		name   string
		opts   webhooks.HMACOptions
		secret string
		msg    webhookstest.SignedMessage
		want   map[string]string
	}{
		{"stripe", providers.StripeOptions(), "whsec_s", webhookstest.SignedMessage{ID: "evt_1", Type: "invoice.paid", Timestamp: at, Body: []byte(stripeBody)}, map[string]string{
			"Stripe-Signature": "t=" + ts + ",v1=" + hexMAC("whsec_s", ts, ".", stripeBody),
			"Content-Type":     "application/json",
		}},
		{"github", providers.GitHubOptions(), "It's a Secret to Everybody", webhookstest.SignedMessage{ID: "d-1", Type: "ping", Body: []byte("Hello, World!")}, map[string]string{
			// GitHub's documented test values.
			"X-Hub-Signature-256": "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
			"X-Github-Delivery":   "d-1",
			"X-Github-Event":      "ping",
		}},
		{"standard webhooks", providers.StandardWebhooksOptions(), swSecret, webhookstest.SignedMessage{ID: "msg_1", Timestamp: at, Body: []byte(swBody)}, map[string]string{
			"Webhook-Id":        "msg_1",
			"Webhook-Timestamp": ts,
			"Webhook-Signature": "v1," + base64.StdEncoding.EncodeToString(mac(sha256.New, string(swKey), "msg_1.", ts, ".", swBody)),
		}},
		{"svix", providers.SvixOptions(), swSecret, webhookstest.SignedMessage{ID: "msg_1", Timestamp: at, Body: []byte(swBody)}, map[string]string{
			"Svix-Id":        "msg_1",
			"Svix-Timestamp": ts,
			"Svix-Signature": "v1," + base64.StdEncoding.EncodeToString(mac(sha256.New, string(swKey), "msg_1.", ts, ".", swBody)),
		}},
		{"paddle", providers.PaddleOptions(), "pdl_ntfset_x", webhookstest.SignedMessage{Timestamp: at, Body: []byte(paddleBody)}, map[string]string{
			"Paddle-Signature": "ts=" + ts + ";h1=" + hexMAC("pdl_ntfset_x", ts, ":", paddleBody),
		}},
		{"slack", providers.SlackOptions(), "slack", webhookstest.SignedMessage{Timestamp: at, Body: []byte(slackBody)}, map[string]string{
			"X-Slack-Signature":         "v0=" + hexMAC("slack", "v0:", ts, ":", slackBody),
			"X-Slack-Request-Timestamp": ts,
		}},
		{"shopify", providers.ShopifyOptions(), "shpss", webhookstest.SignedMessage{ID: "w", Type: "orders/create", Body: []byte(`{}`)}, map[string]string{
			"X-Shopify-Hmac-Sha256": base64.StdEncoding.EncodeToString(mac(sha256.New, "shpss", `{}`)),
			"X-Shopify-Webhook-Id":  "w",
			"X-Shopify-Topic":       "orders/create",
		}},
		{"sha1 rfc3339 timestamp header", webhooks.HMACOptions{
			SignedRequest: webhooks.SignedRequest{
				SignatureHeader: "X-Sig",
				Timestamp:       webhooks.TimestampSource{Header: "X-Ts", Format: webhooks.TimestampRFC3339},
				SignedContent:   "{timestamp}.{body}",
				Event:           webhooks.EventSource{IDHeader: "X-Id"},
			},
			Algorithm: crypto.SHA1,
		}, "k", webhookstest.SignedMessage{ID: "1", Timestamp: at.Add(500 * time.Millisecond), Body: []byte("a=b")}, map[string]string{
			"X-Sig": hex.EncodeToString(mac(sha1.New, "k", "2025-03-14T15:09:26Z.a=b")),
			"X-Ts":  "2025-03-14T15:09:26Z",
		}},
		{"sha512 millis func", webhooks.HMACOptions{
			SignedRequest: webhooks.SignedRequest{
				SignatureHeader: "X-Sig",
				Timestamp:       webhooks.TimestampSource{Header: "X-Ts", Format: webhooks.TimestampUnixMillis},
				Encoding:        webhooks.EncodingBase64,
				Event:           webhooks.EventSource{IDHeader: "X-Id"},
				SignedContentFunc: func(r *webhooks.Request, ts, id string) ([]byte, error) {
					return []byte(r.Method + "|" + id + "|" + ts + "|" + r.Header.Get("X-Id") + "|" + string(r.Body)), nil
				},
			},
			Algorithm: crypto.SHA512,
		}, "k", webhookstest.SignedMessage{ID: "7", Timestamp: at, Body: []byte("x")}, map[string]string{
			"X-Sig": base64.StdEncoding.EncodeToString(mac(sha512.New, "k", "POST|7|"+strconv.FormatInt(at.UnixMilli(), 10)+"|7|x")),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := webhookstest.SignHMAC(tt.opts, tt.secret, tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range tt.want {
				if got := h.Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			// And the verifier accepts it.
			v, err := webhooks.NewHMACVerifier(withClock(tt.opts, webhookstest.NewClock(at)), webhooks.StaticSecrets(tt.secret))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := v.Verify(context.Background(), webhooks.Route{Provider: "p"}, &webhooks.Request{Method: http.MethodPost, Header: h, Body: tt.msg.Body}); err != nil {
				t.Errorf("Verify: %v", err)
			}
		})
	}
}

func TestSignHMACContentType(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{`{"a":1}`: "application/json", `a=1&b=2`: "", ``: ""} {
		opts := providers.GitHubOptions()
		opts.AllowEmptyBody = true
		h, err := webhookstest.SignHMAC(opts, "s", webhookstest.SignedMessage{ID: "1", Body: []byte(body)})
		if err != nil {
			t.Fatal(err)
		}
		if got := h.Get("Content-Type"); got != want {
			t.Errorf("body %q: Content-Type %q, want %q", body, got, want)
		}
	}

	// The message says what a provider sends when its body is not JSON.
	form := webhookstest.SignedMessage{ID: "1", Body: []byte(`payload=%7B%7D`), ContentType: "application/x-www-form-urlencoded"}
	h, err := webhookstest.SignHMAC(providers.GitHubOptions(), "s", form)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Get("Content-Type"); got != form.ContentType {
		t.Errorf("form body: Content-Type %q, want %q", got, form.ContentType)
	}
	// NewHMACRequest carries it too, and JSON by default.
	if got := webhookstest.NewHMACRequest(t, "/webhooks/github", providers.GitHubOptions(), "s", form).Header.Get("Content-Type"); got != form.ContentType {
		t.Errorf("NewHMACRequest: Content-Type %q", got)
	}
	jsonMsg := webhookstest.SignedMessage{ID: "1", Body: []byte(`{"a":1}`)}
	if got := webhookstest.NewHMACRequest(t, "/webhooks/github", providers.GitHubOptions(), "s", jsonMsg).Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("NewHMACRequest with JSON: Content-Type %q", got)
	}
}

// TestNewHMACRequestSignsTheURL signs a scheme that covers the method and
// the URL as the server receives it, served directly and over HTTP.
func TestNewHMACRequestSignsTheURL(t *testing.T) {
	t.Parallel()
	opts := webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Sig",
			SignedContent:   "{method} {url}\n{body}",
			Event:           webhooks.EventSource{IDHeader: "X-Id"},
		},
	}
	v, err := webhooks.NewHMACVerifier(opts, webhooks.StaticSecrets("k"))
	if err != nil {
		t.Fatal(err)
	}
	r := webhooks.NewRegistry()
	r.MustRegister("signed-url", v)
	gw, err := webhooks.NewReceiver(r, memstore.NewInbox(), webhooks.WithReplayStore(memstore.NewReplay()))
	if err != nil {
		t.Fatal(err)
	}
	msg := webhookstest.SignedMessage{ID: "u1", Body: []byte(`{}`)}
	h, err := webhookstest.SignHMAC(opts, "k", webhookstest.SignedMessage{ID: "u1", Body: msg.Body, URL: "/webhooks/signed-url?a=1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := hexMAC("k", "POST /webhooks/signed-url?a=1\n{}"); h.Get("X-Sig") != want {
		t.Errorf("X-Sig %q, want %q", h.Get("X-Sig"), want)
	}
	rec := httptest.NewRecorder()
	gw.ServeHTTP(rec, webhookstest.NewHMACRequest(t, "/webhooks/signed-url?a=1", opts, "k", msg))
	if rec.Code != http.StatusAccepted {
		t.Errorf("served directly: %d %s", rec.Code, rec.Body)
	}
	srv := httptest.NewServer(gw)
	defer srv.Close()
	msg.ID = "u2"
	resp, err := srv.Client().Do(webhookstest.NewHMACRequest(t, srv.URL+"/webhooks/signed-url?a=2", opts, "k", msg))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("over HTTP: %d", resp.StatusCode)
	}
	// {url} needs a URL.
	if _, err := webhookstest.SignHMAC(opts, "k", webhookstest.SignedMessage{ID: "u3", Body: msg.Body}); err == nil || !strings.Contains(err.Error(), "SignedMessage.URL is required") {
		t.Errorf("SignHMAC without a URL: %v", err)
	}
}

func TestSignHMACDefaultsToNow(t *testing.T) {
	t.Parallel()
	before := time.Now().Unix()
	h, err := webhookstest.SignHMAC(providers.SlackOptions(), "s", webhookstest.SignedMessage{Body: []byte(`{"event_id":"E","event":{"type":"t"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := strconv.ParseInt(h.Get("X-Slack-Request-Timestamp"), 10, 64)
	if err != nil || ts < before || ts > time.Now().Unix() {
		t.Errorf("timestamp %d, %v; want now", ts, err)
	}
}

func TestSignHMACErrors(t *testing.T) {
	t.Parallel()
	const secretText = "TOP-SECRET-value-9d1c"
	broken := providers.StandardWebhooksOptions()
	broken.DecodeSecret = func([]byte) ([]byte, error) { return nil, errors.New("not base64") }
	empty := providers.StandardWebhooksOptions()
	empty.DecodeSecret = func([]byte) ([]byte, error) { return nil, nil }
	tests := []struct {
		name   string
		opts   webhooks.HMACOptions
		secret string
		msg    webhookstest.SignedMessage
		want   string
	}{
		{"invalid options", webhooks.HMACOptions{SignedRequest: webhooks.SignedRequest{SignatureHeader: "X-Sig"}}, secretText, webhookstest.SignedMessage{Body: []byte("x")}, "no event ID source"},
		{"empty secret", providers.GitHubOptions(), "", webhookstest.SignedMessage{Body: []byte("x")}, "secret static:0 is empty"},
		{"prefix-only secret", providers.StripeOptions(), "whsec_", webhookstest.SignedMessage{Body: []byte(`{"id":"e","type":"t"}`)}, "is only the prefix"},
		{"undecodable secret", broken, secretText, webhookstest.SignedMessage{Body: []byte("x")}, "DecodeSecret refused it"},
		{"secret decodes to nothing", empty, secretText, webhookstest.SignedMessage{Body: []byte("x")}, "DecodeSecret refused it"},
		{"ID differs from the body", providers.StripeOptions(), secretText, webhookstest.SignedMessage{ID: "evt_2", Body: []byte(`{"id":"evt_1","type":"t"}`)}, `the body's "id" is "evt_1" but SignedMessage.ID is "evt_2"`},
		{"ID not in the body", providers.StripeOptions(), secretText, webhookstest.SignedMessage{ID: "evt_2", Body: []byte(`{"type":"t"}`)}, `the body at "id", but the body has none there`},
		{"type differs from the body", providers.PaddleOptions(), secretText, webhookstest.SignedMessage{Type: "b", Body: []byte(`{"event_id":"e","event_type":"a"}`)}, `SignedMessage.Type is "b"`},
		{"ID for a computed ID", providers.ZoomOptions(), secretText, webhookstest.SignedMessage{ID: "x", Body: []byte(`{"event":"e"}`)}, "SignedMessage.ID must be empty"},
		{"no timestamp in the body", providers.LinearOptions(), secretText, webhookstest.SignedMessage{Body: []byte(`{"action":"create"}`)}, `timestamp from the body at "webhookTimestamp"`},
		{"timestamp differs from the body", providers.LinearOptions(), secretText, webhookstest.SignedMessage{Timestamp: at, Body: []byte(`{"webhookTimestamp":1}`)}, "differs from SignedMessage.Timestamp"},
		{"failing SignedContentFunc", webhooks.HMACOptions{
			SignedRequest: webhooks.SignedRequest{
				SignatureHeader: "X-Sig",
				Event:           webhooks.EventSource{IDHeader: "X-Id"},
				SignedContentFunc: func(*webhooks.Request, string, string) ([]byte, error) {
					return nil, errors.New("boom")
				},
			},
		}, secretText, webhookstest.SignedMessage{Body: []byte("x")}, "SignedContentFunc: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, err := webhookstest.SignHMAC(tt.opts, tt.secret, tt.msg)
			if err == nil || h != nil {
				t.Fatalf("SignHMAC = %v, %v; want an error", h, err)
			}
			if !strings.HasPrefix(err.Error(), "webhookstest: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), secretText) {
				t.Errorf("error %q contains the secret", err)
			}
		})
	}
	// A body without the ID is fine when no ID is given: the verifier
	// will reject it, which is what such a test wants.
	if _, err := webhookstest.SignHMAC(providers.StripeOptions(), secretText, webhookstest.SignedMessage{Body: []byte(`{}`)}); err != nil {
		t.Errorf("SignHMAC without an ID: %v", err)
	}
}

func TestNewHMACRequest(t *testing.T) {
	t.Parallel()
	const secret = "whsec_gateway_test"
	r := webhooks.NewRegistry()
	v, err := webhooks.NewHMACVerifier(providers.StripeOptions(), webhooks.StaticSecrets(secret))
	if err != nil {
		t.Fatal(err)
	}
	r.MustRegister("stripe", v)
	inbox := memstore.NewInbox()
	gw, err := webhooks.NewReceiver(r, inbox, webhooks.WithReplayStore(memstore.NewReplay()))
	if err != nil {
		t.Fatal(err)
	}
	msg := webhookstest.SignedMessage{Body: []byte(`{"id":"evt_req","type":"charge.succeeded"}`)}

	// Served directly.
	req := webhookstest.NewHMACRequest(t, "/webhooks/stripe", providers.StripeOptions(), secret, msg)
	if req.Method != http.MethodPost || req.ContentLength != int64(len(msg.Body)) || req.Context().Err() != nil {
		t.Errorf("request %s, length %d, ctx err %v", req.Method, req.ContentLength, req.Context().Err())
	}
	rec := httptest.NewRecorder()
	gw.ServeHTTP(rec, req)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("ServeHTTP: %d %s", rec.Code, rec.Body)
	}

	// Sent to a server.
	srv := httptest.NewServer(gw)
	defer srv.Close()
	msg = webhookstest.SignedMessage{Body: []byte(`{"id":"evt_http","type":"charge.succeeded"}`)}
	resp, err := srv.Client().Do(webhookstest.NewHMACRequest(t, srv.URL+"/webhooks/stripe", providers.StripeOptions(), secret, msg))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("over HTTP: %d", resp.StatusCode)
	}
	if _, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: "stripe", EventID: "evt_http"}); err != nil {
		t.Error(err)
	}
}
