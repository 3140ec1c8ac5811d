package webhooks_test

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
	"fmt"
	"hash"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// fixedNow is the clock of every timestamped test.
var fixedNow = time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)

var testRoute = webhooks.Route{Provider: "test", Tenant: "acme"}

// newVerifier returns the verifier of opts with the clock (nil: the
// system clock).
func newVerifier(t *testing.T, opts webhooks.HMACOptions, creds webhooks.CredentialResolver, clock webhooks.Clock) *webhooks.HMACVerifier {
	t.Helper()
	opts.Clock = clock
	v, err := webhooks.NewHMACVerifier(opts, creds)
	if err != nil {
		t.Fatalf("NewHMACVerifier: %v", err)
	}
	return v
}

// request builds a request from a body and header name/value pairs; a name
// given twice becomes two header lines.
func request(body string, kv ...string) *webhooks.Request {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return &webhooks.Request{Method: http.MethodPost, Header: h, Body: []byte(body)}
}

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

// wantReason fails unless err is a *VerificationError with the reason, seen
// through both errors.Is and errors.As.
func wantReason(t *testing.T, err error, reason webhooks.Reason) {
	t.Helper()
	if err == nil {
		t.Fatalf("Verify succeeded, want rejection %q", reason)
	}
	var vErr *webhooks.VerificationError
	if !errors.As(err, &vErr) {
		t.Fatalf("error %q (%T) is not a *VerificationError, want reason %q", err, err, reason)
	}
	if vErr.Reason != reason {
		t.Fatalf("reason %q (%v), want %q", vErr.Reason, err, reason)
	}
	if !errors.Is(err, reason) || !errors.Is(err, &webhooks.VerificationError{Reason: reason}) {
		t.Fatalf("errors.Is(%v, reason %q) is false", err, reason)
	}
}

// verified returns a function that fails t unless Verify succeeded, for use
// as verified(t)(v.Verify(…)).
func verified(t *testing.T) func(webhooks.Verification, error) webhooks.Verification {
	t.Helper()
	return func(got webhooks.Verification, err error) webhooks.Verification {
		t.Helper()
		return wantOK(t, got, err)
	}
}

func wantOK(t *testing.T, got webhooks.Verification, err error) webhooks.Verification {
	t.Helper()
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return got
}

const (
	ghDelivery = "72d3162e-cc78-11e3-81ab-4c9367dc0958"
	ghEvent    = "push"
)

func TestHMACGitHubRejections(t *testing.T) {
	t.Parallel()
	// GitHub's documented test delivery (see middleware_test.go).
	vec := struct{ Secret, Payload string }{ghSecret, ghPayload}
	good := ghSignature
	v := newVerifier(t, providers.GitHubOptions(), webhooks.StaticSecrets(vec.Secret), nil)
	wrongSecret := newVerifier(t, providers.GitHubOptions(), webhooks.StaticSecrets("not the secret"), nil)

	tests := []struct {
		name     string
		verifier *webhooks.HMACVerifier
		req      *webhooks.Request
		want     webhooks.Reason
	}{
		{"tampered body", v, request("Hello, World?", "X-Hub-Signature-256", good, "X-GitHub-Delivery", ghDelivery), webhooks.ReasonBadSignature},
		{"wrong secret", wrongSecret, request(vec.Payload, "X-Hub-Signature-256", good, "X-GitHub-Delivery", ghDelivery), webhooks.ReasonBadSignature},
		{"signature of another body", v, request(vec.Payload, "X-Hub-Signature-256", "sha256="+hexMAC(vec.Secret, "other"), "X-GitHub-Delivery", ghDelivery), webhooks.ReasonBadSignature},
		{"missing signature header", v, request(vec.Payload, "X-GitHub-Delivery", ghDelivery), webhooks.ReasonMissingSignature},
		{"empty signature header", v, request(vec.Payload, "X-Hub-Signature-256", "", "X-GitHub-Delivery", ghDelivery), webhooks.ReasonMissingSignature},
		{"duplicated signature header", v, request(vec.Payload, "X-Hub-Signature-256", good, "X-Hub-Signature-256", good, "X-GitHub-Delivery", ghDelivery), webhooks.ReasonMalformedHeader},
		{"sha1 prefix", v, request(vec.Payload, "X-Hub-Signature-256", "sha1="+strings.TrimPrefix(good, "sha256="), "X-GitHub-Delivery", ghDelivery), webhooks.ReasonMalformedHeader},
		{"no prefix", v, request(vec.Payload, "X-Hub-Signature-256", strings.TrimPrefix(good, "sha256="), "X-GitHub-Delivery", ghDelivery), webhooks.ReasonMalformedHeader},
		{"prefix only", v, request(vec.Payload, "X-Hub-Signature-256", "sha256=", "X-GitHub-Delivery", ghDelivery), webhooks.ReasonMalformedHeader},
		{"non-hex", v, request(vec.Payload, "X-Hub-Signature-256", "sha256="+strings.Repeat("zz", 32), "X-GitHub-Delivery", ghDelivery), webhooks.ReasonMalformedHeader},
		{"too short", v, request(vec.Payload, "X-Hub-Signature-256", good[:len(good)-2], "X-GitHub-Delivery", ghDelivery), webhooks.ReasonMalformedHeader},
		{"too long", v, request(vec.Payload, "X-Hub-Signature-256", good+"00", "X-GitHub-Delivery", ghDelivery), webhooks.ReasonMalformedHeader},
		{"odd length", v, request(vec.Payload, "X-Hub-Signature-256", good+"0", "X-GitHub-Delivery", ghDelivery), webhooks.ReasonMalformedHeader},
		{"sha1 digest length", v, request(vec.Payload, "X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac(sha1.New, vec.Secret, vec.Payload)), "X-GitHub-Delivery", ghDelivery), webhooks.ReasonMalformedHeader},
		{"blank inside", v, request(vec.Payload, "X-Hub-Signature-256", "sha256= "+strings.TrimPrefix(good, "sha256="), "X-GitHub-Delivery", ghDelivery), webhooks.ReasonMalformedHeader},
		{"empty body", v, request("", "X-Hub-Signature-256", "sha256="+hexMAC(vec.Secret), "X-GitHub-Delivery", ghDelivery), webhooks.ReasonEmptyBody},
		{"missing delivery ID", v, request(vec.Payload, "X-Hub-Signature-256", good, "X-GitHub-Event", ghEvent), webhooks.ReasonMissingEventID},
		{"duplicated delivery ID", v, request(vec.Payload, "X-Hub-Signature-256", good, "X-GitHub-Delivery", ghDelivery, "X-GitHub-Delivery", "other", "X-GitHub-Event", ghEvent), webhooks.ReasonMalformedHeader},
		{"missing event type", v, request(vec.Payload, "X-Hub-Signature-256", good, "X-GitHub-Delivery", ghDelivery), webhooks.ReasonMissingEventType},
		{"duplicated event type", v, request(vec.Payload, "X-Hub-Signature-256", good, "X-GitHub-Delivery", ghDelivery, "X-GitHub-Event", "push", "X-GitHub-Event", "ping"), webhooks.ReasonMalformedHeader},
		// A bad signature wins over metadata problems: nothing about the
		// request is revealed before the signature verified.
		{"bad signature and no delivery ID", v, request("tampered", "X-Hub-Signature-256", good), webhooks.ReasonBadSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.verifier.Verify(context.Background(), testRoute, tt.req)
			wantReason(t, err, tt.want)
			if !reflect.DeepEqual(got, webhooks.Verification{}) {
				t.Errorf("rejected request returned metadata %+v", got)
			}
		})
	}
}

func TestHMACAllowEmptyBody(t *testing.T) {
	t.Parallel()
	opts := providers.GitHubOptions()
	opts.AllowEmptyBody = true
	v := newVerifier(t, opts, webhooks.StaticSecrets("s3cr3t"), nil)
	got := verified(t)(v.Verify(context.Background(), testRoute, request("",
		"X-Hub-Signature-256", "sha256="+hexMAC("s3cr3t"),
		"X-GitHub-Delivery", ghDelivery, "X-GitHub-Event", "ping")))
	if got.EventID != ghDelivery || got.EventType != "ping" {
		t.Errorf("empty body verified as %q / %q; want %q / ping", got.EventID, got.EventType, ghDelivery)
	}
}

func TestHMACRotation(t *testing.T) {
	t.Parallel()
	creds := webhooks.CredentialResolverFunc(func(_ context.Context, r webhooks.Route) ([]webhooks.Secret, error) {
		if r != testRoute {
			return nil, fmt.Errorf("unexpected route %+v", r)
		}
		return []webhooks.Secret{
			{ID: "2024-old", Value: []byte("old-secret")},
			{ID: "2025-new", Value: []byte("new-secret")},
		}, nil
	})
	v := newVerifier(t, providers.GitHubOptions(), creds, nil)
	body := `{"zen":"Keep it logically awesome."}`
	for _, tt := range []struct{ secret, keyID string }{
		{"old-secret", "2024-old"},
		{"new-secret", "2025-new"},
	} {
		got := verified(t)(v.Verify(context.Background(), testRoute, request(body,
			"X-Hub-Signature-256", "sha256="+hexMAC(tt.secret, body),
			"X-GitHub-Delivery", ghDelivery, "X-GitHub-Event", "ping")))
		if got.KeyID != tt.keyID {
			t.Errorf("signed with %s: KeyID = %q, want %q", tt.keyID, got.KeyID, tt.keyID)
		}
	}
	_, err := v.Verify(context.Background(), testRoute, request(body,
		"X-Hub-Signature-256", "sha256="+hexMAC("retired-secret", body),
		"X-GitHub-Delivery", ghDelivery, "X-GitHub-Event", "ping"))
	wantReason(t, err, webhooks.ReasonBadSignature)
}

func TestHMACStripeStyle(t *testing.T) {
	t.Parallel()
	const secret = "whsec_stripe_test_secret"
	v := newVerifier(t, providers.StripeOptions(), webhooks.StaticSecrets(secret), webhookstest.NewClock(fixedNow))
	body := `{"id":"evt_1","type":"invoice.paid","data":{"object":{"id":"in_1"}}}`
	ts := strconv.FormatInt(fixedNow.Unix()-30, 10)
	good := hexMAC(secret, ts, ".", body)
	other := hexMAC("another-endpoint-secret", ts, ".", body)

	got := verified(t)(v.Verify(context.Background(), testRoute, request(body,
		"Stripe-Signature", "t="+ts+",v1="+other+",v1="+good+",v0="+strings.Repeat("0", 64))))
	want := webhooks.Verification{
		EventID:    "evt_1",
		EventType:  "invoice.paid",
		OccurredAt: time.Unix(fixedNow.Unix()-30, 0).UTC(),
		KeyID:      "static:0",
		Ordering:   webhooks.Ordering{Key: "in_1"}, // the body has no "created"
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Verification = %+v, want %+v", got, want)
	}

	tests := []struct {
		name, header, body string
		want               webhooks.Reason
	}{
		{"blanks around items", " t=" + ts + " , v1=" + good + " ", body, ""},
		{"timestamp last", "v1=" + good + ",t=" + ts, body, ""},
		{"only the other secret", "t=" + ts + ",v1=" + other, body, webhooks.ReasonBadSignature},
		{"timestamp changed", "t=" + strconv.FormatInt(fixedNow.Unix()-31, 10) + ",v1=" + good, body, webhooks.ReasonBadSignature},
		{"body changed", "t=" + ts + ",v1=" + good, body + " ", webhooks.ReasonBadSignature},
		{"only v0", "t=" + ts + ",v0=" + good, body, webhooks.ReasonMissingSignature},
		{"no timestamp", "v1=" + good, body, webhooks.ReasonMissingTimestamp},
		{"empty timestamp", "t=,v1=" + good, body, webhooks.ReasonMissingTimestamp},
		{"two timestamps", "t=" + ts + ",t=" + ts + ",v1=" + good, body, webhooks.ReasonMalformedHeader},
		{"item without =", "t=" + ts + ",v1" + good, body, webhooks.ReasonMalformedHeader},
		{"empty v1", "t=" + ts + ",v1=", body, webhooks.ReasonMalformedHeader},
		// A malformed signature item is skipped, as the reference
		// libraries do: the request verifies if a well-formed one matches,
		// and is refused as malformed only when none is well formed.
		{"one malformed v1 after a valid one", "t=" + ts + ",v1=" + good + ",v1=xyz", body, ""},
		{"one malformed v1 before a valid one", "t=" + ts + ",v1=xyz,v1=" + good, body, ""},
		{"a short v1 beside a valid one", "t=" + ts + ",v1=" + good[:40] + ",v1=" + good, body, ""},
		{"a sha512-length v1 beside a valid one", "t=" + ts + ",v1=" + good + good + ",v1=" + good, body, ""},
		{"an item without = beside a valid one", "t=" + ts + ",v1" + good + ",v1=" + good, body, ""},
		{"only malformed v1 items", "t=" + ts + ",v1=xyz,v1=" + good[:40] + ",v1", body, webhooks.ReasonMalformedHeader},
		{"malformed v1 and a mismatching one", "t=" + ts + ",v1=xyz,v1=" + other, body, webhooks.ReasonBadSignature},
		{"malformed v0 and no v1", "t=" + ts + ",v0=xyz", body, webhooks.ReasonMissingSignature},
		{"eight v1 items", "t=" + ts + strings.Repeat(",v1="+other, 7) + ",v1=" + good, body, ""},
		{"nine v1 items", "t=" + ts + strings.Repeat(",v1="+other, 8) + ",v1=" + good, body, webhooks.ReasonMalformedHeader},
		{"nine items of which eight well formed", "t=" + ts + strings.Repeat(",v1="+other, 7) + ",v1=xyz,v1=" + good, body, ""},
		{"non-numeric timestamp", "t=yesterday,v1=" + good, body, webhooks.ReasonMalformedTime},
		{"signed non-JSON body", "t=" + ts + ",v1=" + hexMAC(secret, ts, ".", "not json"), "not json", webhooks.ReasonMalformedPayload},
		{"bad signature over non-JSON body", "t=" + ts + ",v1=" + good, "not json", webhooks.ReasonBadSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := v.Verify(context.Background(), testRoute, request(tt.body, "Stripe-Signature", tt.header))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			wantReason(t, err, tt.want)
		})
	}
}

func TestHMACStandardWebhooksStyle(t *testing.T) {
	t.Parallel()
	key := []byte("0123456789abcdef0123456789abcdef")
	secret := "whsec_" + base64.StdEncoding.EncodeToString(key)
	v := newVerifier(t, providers.StandardWebhooksOptions(), webhooks.StaticSecrets(secret), webhookstest.NewClock(fixedNow))

	const id = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"
	body := `{"type":"user.created","data":{"id":"u_1"}}`
	ts := strconv.FormatInt(fixedNow.Unix(), 10)
	sign := func(k []byte, id, ts, body string) string {
		return base64.StdEncoding.EncodeToString(mac(sha256.New, string(k), id, ".", ts, ".", body))
	}
	good := sign(key, id, ts, body)
	other := sign([]byte("rotated-away-key"), id, ts, body)
	goodURL := base64.RawURLEncoding.EncodeToString(mac(sha256.New, string(key), id, ".", ts, ".", body))

	tests := []struct {
		name     string
		req      *webhooks.Request
		want     webhooks.Reason
		wantType string
	}{
		{"second of two matches", request(body, "Webhook-Id", id, "Webhook-Timestamp", ts, "Webhook-Signature", "v1,"+other+" v1,"+good), "", "user.created"},
		{"unknown scheme ignored", request(body, "Webhook-Id", id, "Webhook-Timestamp", ts, "Webhook-Signature", "v1a,"+other+"  v1,"+good), "", "user.created"},
		{"url-safe unpadded base64", request(body, "Webhook-Id", id, "Webhook-Timestamp", ts, "Webhook-Signature", "v1,"+goodURL), "", "user.created"},
		{"none matches", request(body, "Webhook-Id", id, "Webhook-Timestamp", ts, "Webhook-Signature", "v1,"+other), webhooks.ReasonBadSignature, ""},
		{"id changed", request(body, "Webhook-Id", "msg_other", "Webhook-Timestamp", ts, "Webhook-Signature", "v1,"+good), webhooks.ReasonBadSignature, ""},
		{"missing id", request(body, "Webhook-Timestamp", ts, "Webhook-Signature", "v1,"+good), webhooks.ReasonMissingEventID, ""},
		{"missing timestamp", request(body, "Webhook-Id", id, "Webhook-Signature", "v1,"+good), webhooks.ReasonMissingTimestamp, ""},
		{"duplicated timestamp", request(body, "Webhook-Id", id, "Webhook-Timestamp", ts, "Webhook-Timestamp", ts, "Webhook-Signature", "v1,"+good), webhooks.ReasonMalformedHeader, ""},
		{"bad base64", request(body, "Webhook-Id", id, "Webhook-Timestamp", ts, "Webhook-Signature", "v1,!!!!"+good[4:]), webhooks.ReasonMalformedHeader, ""},
		{"base64 of wrong length", request(body, "Webhook-Id", id, "Webhook-Timestamp", ts, "Webhook-Signature", "v1,"+base64.StdEncoding.EncodeToString(make([]byte, 20))), webhooks.ReasonMalformedHeader, ""},
		{"stripe-style separators", request(body, "Webhook-Id", id, "Webhook-Timestamp", ts, "Webhook-Signature", "v1="+good), webhooks.ReasonMalformedHeader, ""},
		// Malformed items beside a valid one are skipped, as the Standard
		// Webhooks and Svix libraries skip them.
		{"bad base64 beside a valid one", request(body, "Webhook-Id", id, "Webhook-Timestamp", ts, "Webhook-Signature", "v1,!!!!"+good[4:]+" v1,"+good), "", "user.created"},
		{"wrong length beside a valid one", request(body, "Webhook-Id", id, "Webhook-Timestamp", ts, "Webhook-Signature", "v1,"+base64.StdEncoding.EncodeToString(make([]byte, 20))+" v1,"+good), "", "user.created"},
		{"item without a comma beside a valid one", request(body, "Webhook-Id", id, "Webhook-Timestamp", ts, "Webhook-Signature", "v1 v1,"+good+" garbage"), "", "user.created"},
		{"other version beside a valid one", request(body, "Webhook-Id", id, "Webhook-Timestamp", ts, "Webhook-Signature", "v2,"+good+" v1,"+good), "", "user.created"},
		{"only malformed items", request(body, "Webhook-Id", id, "Webhook-Timestamp", ts, "Webhook-Signature", "v1,!!!! v1,"+good[:20]+" v1"), webhooks.ReasonMalformedHeader, ""},
		{"malformed items and a mismatching one", request(body, "Webhook-Id", id, "Webhook-Timestamp", ts, "Webhook-Signature", "v1,!!!! v1,"+other), webhooks.ReasonBadSignature, ""},
		{"signed body without type", func() *webhooks.Request {
			b := `{"data":{}}`
			return request(b, "Webhook-Id", id, "Webhook-Timestamp", ts, "Webhook-Signature", "v1,"+sign(key, id, ts, b))
		}(), "", ""}, // the type is optional in Standard Webhooks
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := v.Verify(context.Background(), testRoute, tt.req)
			if tt.want != "" {
				wantReason(t, err, tt.want)
				return
			}
			wantOK(t, got, err)
			if got.EventID != id || got.EventType != tt.wantType || !got.OccurredAt.Equal(fixedNow) || got.KeyID != "static:0" {
				t.Errorf("Verification = %+v", got)
			}
		})
	}
}

func TestHMACTimestampWindow(t *testing.T) {
	t.Parallel()
	const secret = "window-secret"
	body := `{"id":"evt_window"}`
	opts := webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Signature",
			SignedContent:   "{timestamp}.{body}",
			Timestamp:       webhooks.TimestampSource{Header: "X-Timestamp"},
			Event:           webhooks.EventSource{IDPath: "id"},
		},
	}
	v := newVerifier(t, opts, webhooks.StaticSecrets(secret), webhookstest.NewClock(fixedNow))
	short := opts
	short.Timestamp.Tolerance = 10 * time.Second
	vShort := newVerifier(t, short, webhooks.StaticSecrets(secret), webhookstest.NewClock(fixedNow))

	tests := []struct {
		name     string
		verifier *webhooks.HMACVerifier
		offset   time.Duration // timestamp minus now
		want     webhooks.Reason
	}{
		{"now", v, 0, ""},
		{"stale, just inside", v, -webhooks.DefaultTolerance + time.Second, ""},
		{"stale, on the edge", v, -webhooks.DefaultTolerance, ""},
		{"stale, just outside", v, -webhooks.DefaultTolerance - time.Second, webhooks.ReasonTimestampExpired},
		{"future, just inside", v, webhooks.DefaultTolerance - time.Second, ""},
		{"future, on the edge", v, webhooks.DefaultTolerance, ""},
		{"future, just outside", v, webhooks.DefaultTolerance + time.Second, webhooks.ReasonTimestampExpired},
		{"custom tolerance inside", vShort, -10 * time.Second, ""},
		{"custom tolerance stale", vShort, -11 * time.Second, webhooks.ReasonTimestampExpired},
		{"custom tolerance future", vShort, 11 * time.Second, webhooks.ReasonTimestampExpired},
		{"a day stale", v, -24 * time.Hour, webhooks.ReasonTimestampExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			at := fixedNow.Add(tt.offset)
			ts := strconv.FormatInt(at.Unix(), 10)
			got, err := tt.verifier.Verify(context.Background(), testRoute, request(body,
				"X-Signature", hexMAC(secret, ts, ".", body), "X-Timestamp", ts))
			if tt.want != "" {
				wantReason(t, err, tt.want)
				return
			}
			wantOK(t, got, err)
			if !got.OccurredAt.Equal(at) {
				t.Errorf("OccurredAt = %v, want %v", got.OccurredAt, at)
			}
		})
	}

	// The window is checked only after the signature: a stale request with a
	// bad signature reports the signature.
	stale := strconv.FormatInt(fixedNow.Add(-time.Hour).Unix(), 10)
	_, err := v.Verify(context.Background(), testRoute, request(body,
		"X-Signature", hexMAC("wrong", stale, ".", body), "X-Timestamp", stale))
	wantReason(t, err, webhooks.ReasonBadSignature)

	// Timestamps far outside time.Duration's range are still refused in
	// both directions.
	for _, ts := range []string{"0", "253402300799"} {
		_, err := v.Verify(context.Background(), testRoute, request(body,
			"X-Signature", hexMAC(secret, ts, ".", body), "X-Timestamp", ts))
		wantReason(t, err, webhooks.ReasonTimestampExpired)
	}
}

func TestHMACTimestampFormats(t *testing.T) {
	t.Parallel()
	const secret = "format-secret"
	body := `{"id":"evt_fmt"}`
	tests := []struct {
		name   string
		format webhooks.TimestampFormat
		ts     string
		want   webhooks.Reason
		at     time.Time
	}{
		{"seconds", webhooks.TimestampUnixSeconds, strconv.FormatInt(fixedNow.Unix(), 10), "", fixedNow},
		{"seconds with leading zero", webhooks.TimestampUnixSeconds, "0" + strconv.FormatInt(fixedNow.Unix(), 10), "", fixedNow},
		{"millis", webhooks.TimestampUnixMillis, strconv.FormatInt(fixedNow.UnixMilli()-1500, 10), "", fixedNow.Add(-1500 * time.Millisecond)},
		{"millis read as seconds", webhooks.TimestampUnixSeconds, strconv.FormatInt(fixedNow.UnixMilli(), 10), webhooks.ReasonMalformedTime, time.Time{}},
		{"rfc3339", webhooks.TimestampRFC3339, fixedNow.Add(-time.Minute).Format(time.RFC3339), "", fixedNow.Add(-time.Minute)},
		{"rfc3339 offset and fraction", webhooks.TimestampRFC3339, "2025-03-14T16:09:25.5+01:00", "", fixedNow.Add(-500 * time.Millisecond)},
		{"rfc3339 given seconds", webhooks.TimestampRFC3339, strconv.FormatInt(fixedNow.Unix(), 10), webhooks.ReasonMalformedTime, time.Time{}},
		{"seconds given rfc3339", webhooks.TimestampUnixSeconds, fixedNow.Format(time.RFC3339), webhooks.ReasonMalformedTime, time.Time{}},
		{"words", webhooks.TimestampUnixSeconds, "yesterday", webhooks.ReasonMalformedTime, time.Time{}},
		{"negative", webhooks.TimestampUnixSeconds, "-1", webhooks.ReasonMalformedTime, time.Time{}},
		{"plus sign", webhooks.TimestampUnixSeconds, "+" + strconv.FormatInt(fixedNow.Unix(), 10), webhooks.ReasonMalformedTime, time.Time{}},
		{"fraction", webhooks.TimestampUnixSeconds, strconv.FormatInt(fixedNow.Unix(), 10) + ".5", webhooks.ReasonMalformedTime, time.Time{}},
		{"overflow", webhooks.TimestampUnixMillis, "99999999999999999999", webhooks.ReasonMalformedTime, time.Time{}},
		{"after year 9999", webhooks.TimestampUnixSeconds, "253402300800", webhooks.ReasonMalformedTime, time.Time{}},
		{"max int64 seconds", webhooks.TimestampUnixSeconds, "9223372036854775807", webhooks.ReasonMalformedTime, time.Time{}},
		{"millis after year 9999", webhooks.TimestampUnixMillis, "253402300800000", webhooks.ReasonMalformedTime, time.Time{}},
		{"rfc3339 year 1", webhooks.TimestampRFC3339, "0001-01-01T00:00:00Z", webhooks.ReasonTimestampExpired, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := webhooks.HMACOptions{
				SignedRequest: webhooks.SignedRequest{
					SignatureHeader: "X-Signature",
					SignedContent:   "{timestamp}.{body}",
					Timestamp:       webhooks.TimestampSource{Header: "X-Timestamp", Format: tt.format},
					Event:           webhooks.EventSource{IDPath: "id"},
				},
			}
			v := newVerifier(t, opts, webhooks.StaticSecrets(secret), webhookstest.NewClock(fixedNow))
			got, err := v.Verify(context.Background(), testRoute, request(body,
				"X-Signature", hexMAC(secret, tt.ts, ".", body), "X-Timestamp", tt.ts))
			if tt.want != "" {
				wantReason(t, err, tt.want)
				return
			}
			wantOK(t, got, err)
			if !got.OccurredAt.Equal(tt.at) {
				t.Errorf("OccurredAt = %v, want %v", got.OccurredAt, tt.at)
			}
		})
	}
}

func TestHMACAlgorithmsAndEncodings(t *testing.T) {
	t.Parallel()
	const secret = "algo-secret"
	body := `{"id":"evt_algo"}`
	tests := []struct {
		name      string
		algorithm crypto.Hash
		encoding  webhooks.SignatureEncoding
		signature string
		want      webhooks.Reason
	}{
		{"sha256 by default", 0, webhooks.EncodingHex, hex.EncodeToString(mac(sha256.New, secret, body)), ""},
		{"sha1 hex", crypto.SHA1, webhooks.EncodingHex, hex.EncodeToString(mac(sha1.New, secret, body)), ""},
		{"sha512 hex", crypto.SHA512, webhooks.EncodingHex, hex.EncodeToString(mac(sha512.New, secret, body)), ""},
		{"sha512 upper hex", crypto.SHA512, webhooks.EncodingHex, strings.ToUpper(hex.EncodeToString(mac(sha512.New, secret, body))), ""},
		{"sha256 base64", crypto.SHA256, webhooks.EncodingBase64, base64.StdEncoding.EncodeToString(mac(sha256.New, secret, body)), ""},
		{"sha256 raw base64", crypto.SHA256, webhooks.EncodingBase64, base64.RawStdEncoding.EncodeToString(mac(sha256.New, secret, body)), ""},
		{"sha256 url base64", crypto.SHA256, webhooks.EncodingBase64, base64.URLEncoding.EncodeToString(mac(sha256.New, secret, body)), ""},
		{"sha512 base64", crypto.SHA512, webhooks.EncodingBase64, base64.StdEncoding.EncodeToString(mac(sha512.New, secret, body)), ""},
		{"sha1 wrong secret", crypto.SHA1, webhooks.EncodingHex, hex.EncodeToString(mac(sha1.New, "nope", body)), webhooks.ReasonBadSignature},
		{"sha512 given sha256", crypto.SHA512, webhooks.EncodingHex, hex.EncodeToString(mac(sha256.New, secret, body)), webhooks.ReasonMalformedHeader},
		{"sha1 given sha256", crypto.SHA1, webhooks.EncodingHex, hex.EncodeToString(mac(sha256.New, secret, body)), webhooks.ReasonMalformedHeader},
		{"base64 given hex", crypto.SHA256, webhooks.EncodingBase64, hex.EncodeToString(mac(sha256.New, secret, body)), webhooks.ReasonMalformedHeader},
		{"hex given base64", crypto.SHA256, webhooks.EncodingHex, base64.StdEncoding.EncodeToString(mac(sha256.New, secret, body)), webhooks.ReasonMalformedHeader},
		{"base64 bad padding", crypto.SHA256, webhooks.EncodingBase64, base64.StdEncoding.EncodeToString(mac(sha256.New, secret, body)) + "=", webhooks.ReasonMalformedHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := webhooks.HMACOptions{
				SignedRequest: webhooks.SignedRequest{
					SignatureHeader: "X-Signature",
					Encoding:        tt.encoding,
					Event:           webhooks.EventSource{IDPath: "id"},
				},
				Algorithm: tt.algorithm,
			}
			v := newVerifier(t, opts, webhooks.StaticSecrets(secret), nil)
			got, err := v.Verify(context.Background(), testRoute, request(body, "X-Signature", tt.signature))
			if tt.want != "" {
				wantReason(t, err, tt.want)
				return
			}
			wantOK(t, got, err)
			if got.EventID != "evt_algo" {
				t.Errorf("EventID = %q", got.EventID)
			}
		})
	}
}

func TestHMACSignedContentFunc(t *testing.T) {
	t.Parallel()
	// Slack's layout: "v0:" + timestamp + ":" + body, header "v0=<hex>".
	const secret = "slack-signing-secret"
	var calls sync.Map
	opts := webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Slack-Signature",
			SignaturePrefix: "v0=",
			Timestamp:       webhooks.TimestampSource{Header: "X-Slack-Request-Timestamp"},
			Event:           webhooks.EventSource{IDPath: "event_id", TypePath: "event.type"},
			SignedContentFunc: func(req *webhooks.Request, timestamp, id string) ([]byte, error) {
				calls.Store(timestamp, id)
				switch req.Header.Get("X-Test") {
				case "reject":
					return nil, webhooks.Reject(webhooks.ReasonMalformedHeader, "cannot build")
				case "fail":
					return nil, errors.New("content builder unavailable")
				}
				return []byte("v0:" + timestamp + ":" + string(req.Body)), nil
			},
		},
	}
	v := newVerifier(t, opts, webhooks.StaticSecrets(secret), webhookstest.NewClock(fixedNow))
	body := `{"event_id":"Ev1","event":{"type":"app_mention"}}`
	ts := strconv.FormatInt(fixedNow.Unix(), 10)
	sig := "v0=" + hexMAC(secret, "v0:", ts, ":", body)

	got := verified(t)(v.Verify(context.Background(), testRoute, request(body,
		"X-Slack-Signature", sig, "X-Slack-Request-Timestamp", ts)))
	if got.EventID != "Ev1" || got.EventType != "app_mention" || !got.OccurredAt.Equal(fixedNow) {
		t.Errorf("Verification = %+v", got)
	}
	if id, ok := calls.Load(ts); !ok || id != "" {
		t.Errorf("SignedContentFunc called with (%q, %v), want the raw timestamp and no ID", ts, id)
	}

	_, err := v.Verify(context.Background(), testRoute, request(body,
		"X-Slack-Signature", sig, "X-Slack-Request-Timestamp", ts, "X-Test", "reject"))
	wantReason(t, err, webhooks.ReasonMalformedHeader)

	_, err = v.Verify(context.Background(), testRoute, request(body,
		"X-Slack-Signature", sig, "X-Slack-Request-Timestamp", ts, "X-Test", "fail"))
	var vErr *webhooks.VerificationError
	if err == nil || errors.As(err, &vErr) || !strings.Contains(err.Error(), "content builder unavailable") {
		t.Errorf("plain builder error: got %v, want a wrapped non-rejection error", err)
	}

	stale := strconv.FormatInt(fixedNow.Add(-time.Hour).Unix(), 10)
	_, err = v.Verify(context.Background(), testRoute, request(body,
		"X-Slack-Signature", "v0="+hexMAC(secret, "v0:", stale, ":", body), "X-Slack-Request-Timestamp", stale))
	wantReason(t, err, webhooks.ReasonTimestampExpired)
}

func TestHMACJSONPaths(t *testing.T) {
	t.Parallel()
	const secret = "json-secret"
	tests := []struct {
		name             string
		idPath, typePath string
		body             string
		want             webhooks.Reason
		wantID, wantType string
	}{
		{"nested", "data.object.id", "type", `{"type":"charge.succeeded","data":{"object":{"id":"ch_1"}}}`, "", "ch_1", "charge.succeeded"},
		{"numeric id", "id", "", `{"id":12345678901234567890}`, "", "12345678901234567890", ""},
		{"array index", "events.1.id", "events.1.kind", `{"events":[{"id":"a"},{"id":"b","kind":"k"}]}`, "", "b", "k"},
		{"no type source", "id", "", `{"id":"x","type":"ignored"}`, "", "x", ""},
		{"missing id", "data.object.id", "", `{"data":{}}`, webhooks.ReasonMissingEventID, "", ""},
		{"id under a string", "data.object.id", "", `{"data":"flat"}`, webhooks.ReasonMissingEventID, "", ""},
		{"null id", "id", "", `{"id":null}`, webhooks.ReasonMissingEventID, "", ""},
		{"empty id", "id", "", `{"id":""}`, webhooks.ReasonMissingEventID, "", ""},
		{"index out of range", "events.5.id", "", `{"events":[]}`, webhooks.ReasonMissingEventID, "", ""},
		{"negative index", "events.-1.id", "", `{"events":[{"id":"a"}]}`, webhooks.ReasonMissingEventID, "", ""},
		{"plus-signed index", "events.+1.id", "", `{"events":[{"id":"a"},{"id":"b"}]}`, webhooks.ReasonMissingEventID, "", ""},
		{"object id", "id", "", `{"id":{"v":1}}`, webhooks.ReasonMalformedPayload, "", ""},
		{"bool id", "id", "", `{"id":true}`, webhooks.ReasonMalformedPayload, "", ""},
		{"missing type", "id", "type", `{"id":"x"}`, webhooks.ReasonMissingEventType, "", ""},
		{"array type", "id", "type", `{"id":"x","type":["a"]}`, webhooks.ReasonMalformedPayload, "", ""},
		{"not json", "id", "", `id=1`, webhooks.ReasonMalformedPayload, "", ""},
		{"trailing data", "id", "", `{"id":"x"} {"id":"y"}`, webhooks.ReasonMalformedPayload, "", ""},
		{"top-level array", "id", "", `[{"id":"x"}]`, webhooks.ReasonMissingEventID, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := webhooks.HMACOptions{SignedRequest: webhooks.SignedRequest{SignatureHeader: "X-Signature", Event: webhooks.EventSource{IDPath: tt.idPath, TypePath: tt.typePath}}}
			v := newVerifier(t, opts, webhooks.StaticSecrets(secret), nil)
			got, err := v.Verify(context.Background(), testRoute, request(tt.body, "X-Signature", hexMAC(secret, tt.body)))
			if tt.want != "" {
				wantReason(t, err, tt.want)
				return
			}
			wantOK(t, got, err)
			if got.EventID != tt.wantID || got.EventType != tt.wantType {
				t.Errorf("EventID, EventType = %q, %q; want %q, %q", got.EventID, got.EventType, tt.wantID, tt.wantType)
			}
		})
	}
}

func TestHMACCredentials(t *testing.T) {
	t.Parallel()
	body := `{"id":"evt_creds"}`
	opts := webhooks.HMACOptions{SignedRequest: webhooks.SignedRequest{SignatureHeader: "X-Signature", Event: webhooks.EventSource{IDPath: "id"}}}
	req := func() *webhooks.Request { return request(body, "X-Signature", hexMAC("s", body)) }

	t.Run("resolver error is not a rejection", func(t *testing.T) {
		t.Parallel()
		storeDown := errors.New("secret store unavailable")
		v := newVerifier(t, opts, webhooks.CredentialResolverFunc(func(context.Context, webhooks.Route) ([]webhooks.Secret, error) {
			return nil, storeDown
		}), nil)
		_, err := v.Verify(context.Background(), testRoute, req())
		var vErr *webhooks.VerificationError
		if err == nil || errors.As(err, &vErr) {
			t.Fatalf("err = %v, want a plain error", err)
		}
		if !errors.Is(err, storeDown) {
			t.Errorf("err = %v does not wrap the resolver's error", err)
		}
	})
	t.Run("resolver sees the context and route", func(t *testing.T) {
		t.Parallel()
		type ctxKey struct{}
		ctx := context.WithValue(context.Background(), ctxKey{}, "v")
		v := newVerifier(t, opts, webhooks.CredentialResolverFunc(func(c context.Context, r webhooks.Route) ([]webhooks.Secret, error) {
			if c.Value(ctxKey{}) != "v" || r != testRoute {
				return nil, errors.New("wrong context or route")
			}
			return []webhooks.Secret{{ID: "k", Value: []byte("s")}}, nil
		}), nil)
		verified(t)(v.Verify(ctx, testRoute, req()))
	})
	for name, creds := range map[string]webhooks.CredentialResolver{
		"no secrets": webhooks.CredentialResolverFunc(func(context.Context, webhooks.Route) ([]webhooks.Secret, error) { return nil, nil }),
		"only empty secrets": webhooks.CredentialResolverFunc(func(context.Context, webhooks.Route) ([]webhooks.Secret, error) {
			return []webhooks.Secret{{ID: "blank"}}, nil
		}),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			v := newVerifier(t, opts, creds, nil)
			_, err := v.Verify(context.Background(), testRoute, req())
			wantReason(t, err, webhooks.ReasonNoCredentials)
		})
	}
	t.Run("secret decoding error is not a rejection", func(t *testing.T) {
		t.Parallel()
		o := opts
		o.DecodeSecret = func(b []byte) ([]byte, error) { return nil, errors.New("not base64") }
		v := newVerifier(t, o, webhooks.CredentialResolverFunc(func(context.Context, webhooks.Route) ([]webhooks.Secret, error) {
			return []webhooks.Secret{{ID: "k1", Value: []byte("super-secret-value")}}, nil
		}), nil)
		_, err := v.Verify(context.Background(), testRoute, req())
		var vErr *webhooks.VerificationError
		if err == nil || errors.As(err, &vErr) || !strings.Contains(err.Error(), `"k1"`) || strings.Contains(err.Error(), "super-secret-value") {
			t.Errorf("err = %v, want a plain error naming the secret ID only", err)
		}
	})
	t.Run("nil request", func(t *testing.T) {
		t.Parallel()
		v := newVerifier(t, opts, webhooks.StaticSecrets("s"), nil)
		if _, err := v.Verify(context.Background(), testRoute, nil); err == nil {
			t.Error("nil request accepted")
		}
	})
}

func TestHMACNoSecretInErrors(t *testing.T) {
	t.Parallel()
	const secret = "TOP-SECRET-do-not-log-3f9a"
	body := `{"id":"evt_secret","type":"t"}`
	ts := strconv.FormatInt(fixedNow.Unix(), 10)
	realSig := hexMAC(secret, ts, ".", body)
	otherSig := hexMAC("another", ts, ".", body)
	forbidden := []string{
		secret,
		hex.EncodeToString([]byte(secret)),
		base64.StdEncoding.EncodeToString([]byte(secret)),
		realSig, otherSig,
		strings.ToUpper(realSig),
	}
	opts := providers.StripeOptions()
	v := newVerifier(t, opts, webhooks.StaticSecrets(secret), webhookstest.NewClock(fixedNow))
	stale := strconv.FormatInt(fixedNow.Add(-time.Hour).Unix(), 10)
	requests := []*webhooks.Request{
		request(body, "Stripe-Signature", "t="+ts+",v1="+otherSig),
		request(body+" ", "Stripe-Signature", "t="+ts+",v1="+realSig),
		request(body, "Stripe-Signature", "t="+ts+",v1="+otherSig+",v1="+realSig[:40]),
		request(body, "Stripe-Signature", "t="+ts+",v1="+realSig, "Stripe-Signature", "t="+ts+",v1="+otherSig),
		request(body, "Stripe-Signature", "t="+stale+",v1="+hexMAC(secret, stale, ".", body)),
		request(body, "Stripe-Signature", "t=x"+realSig+",v1="+realSig),
		request("", "Stripe-Signature", "t="+ts+",v1="+realSig),
		request("{}", "Stripe-Signature", "t="+ts+",v1="+hexMAC(secret, ts, ".", "{}")),
		request("nope", "Stripe-Signature", "t="+ts+",v1="+hexMAC(secret, ts, ".", "nope")),
		request(body, "Stripe-Signature", "v1"+realSig),
		request(body, "Stripe-Signature", "t="+ts+",v0="+realSig),
	}
	for i, req := range requests {
		_, err := v.Verify(context.Background(), testRoute, req)
		if err == nil {
			t.Fatalf("request %d accepted", i)
		}
		var vErr *webhooks.VerificationError
		if !errors.As(err, &vErr) {
			t.Fatalf("request %d: %v is not a rejection", i, err)
		}
		for _, text := range []string{err.Error(), vErr.Detail, fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", vErr)} {
			for _, f := range forbidden {
				if strings.Contains(text, f) {
					t.Errorf("request %d: error %q leaks secret material or a signature", i, text)
				}
			}
		}
	}
	// Nor does the verifier itself print the secret.
	if s := fmt.Sprintf("%v %+v %#v", v, v, v); strings.Contains(s, secret) {
		t.Errorf("verifier formatting leaks the secret: %s", s)
	}
}

func TestHMACConcurrentVerify(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, providers.StripeOptions(), webhooks.StaticSecrets("a", "b"), webhookstest.NewClock(fixedNow))
	ts := strconv.FormatInt(fixedNow.Unix(), 10)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				body := fmt.Sprintf(`{"id":"evt_%d_%d","type":"t"}`, i, j)
				secret := []string{"a", "b"}[j%2]
				got, err := v.Verify(context.Background(), testRoute, request(body, "Stripe-Signature", "t="+ts+",v1="+hexMAC(secret, ts, ".", body)))
				if err != nil || got.EventID != fmt.Sprintf("evt_%d_%d", i, j) || got.KeyID != fmt.Sprintf("static:%d", j%2) {
					t.Errorf("worker %d request %d: %+v, %v", i, j, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestNewHMACVerifierRejectsInvalidOptions(t *testing.T) {
	t.Parallel()
	valid := webhooks.HMACOptions{SignedRequest: webhooks.SignedRequest{SignatureHeader: "X-Signature", Event: webhooks.EventSource{IDHeader: "X-Id"}}}
	with := func(f func(*webhooks.HMACOptions)) webhooks.HMACOptions {
		o := valid
		f(&o)
		return o
	}
	list := func(o *webhooks.HMACOptions) { o.ItemSeparator, o.KeyValueSeparator, o.SignatureKey = ",", "=", "v1" }
	tsHeader := func(o *webhooks.HMACOptions) { o.Timestamp.Header, o.SignedContent = "X-Ts", "{timestamp}.{body}" }
	creds := webhooks.CredentialResolverFunc(func(context.Context, webhooks.Route) ([]webhooks.Secret, error) {
		return []webhooks.Secret{{ID: "s", Value: []byte("s")}}, nil
	})
	idFunc := func(*webhooks.Request, webhooks.Verification) (string, error) { return "x", nil }
	contentFunc := func(*webhooks.Request, string, string) ([]byte, error) { return nil, nil }

	tests := []struct {
		name  string
		opts  webhooks.HMACOptions
		creds webhooks.CredentialResolver
		want  string // in the error message
	}{
		{"nil creds", valid, nil, "creds is nil"},
		{"zero options", webhooks.HMACOptions{}, creds, "SignatureHeader is empty"},
		{"zero options need an ID", webhooks.HMACOptions{}, creds, "no event ID source"},
		{"bad header name", with(func(o *webhooks.HMACOptions) { o.SignatureHeader = "X Signature" }), creds, "SignatureHeader \"X Signature\" is not a valid header name"},
		{"bad ID header name", with(func(o *webhooks.HMACOptions) { o.Event.IDHeader = "X-Id:" }), creds, "Event.IDHeader"},
		{"bad timestamp header name", with(func(o *webhooks.HMACOptions) { tsHeader(o); o.Timestamp.Header = "X:Ts" }), creds, "Timestamp.Header \"X:Ts\" is not a valid header name"},
		{"unsupported algorithm", with(func(o *webhooks.HMACOptions) { o.Algorithm = crypto.MD5 }), creds, "Algorithm MD5 is not supported"},
		{"unknown algorithm", with(func(o *webhooks.HMACOptions) { o.Algorithm = 99 }), creds, "is not supported: use crypto.SHA256, crypto.SHA1 or crypto.SHA512"},
		{"unknown encoding", with(func(o *webhooks.HMACOptions) { o.Encoding = 9 }), creds, "Encoding SignatureEncoding(9) is unknown"},
		{"unknown timestamp format", with(func(o *webhooks.HMACOptions) { tsHeader(o); o.Timestamp.Format = 9 }), creds, "Timestamp.Format TimestampFormat(9) is unknown"},
		{"unknown placeholder", with(func(o *webhooks.HMACOptions) { o.SignedContent = "{timestamp}.{bogus}.{body}" }), creds, "unknown placeholder {bogus}"},
		{"no body in the template", with(func(o *webhooks.HMACOptions) { tsHeader(o); o.SignedContent = "{timestamp}" }), creds, "has no {body}"},
		{"body twice", with(func(o *webhooks.HMACOptions) { o.SignedContent = "{body}.{body}" }), creds, "has {body} 2 times"},
		{"unclosed placeholder", with(func(o *webhooks.HMACOptions) { o.SignedContent = "{body}.{timestamp" }), creds, "without a closing"},
		{"negative tolerance", with(func(o *webhooks.HMACOptions) { tsHeader(o); o.Timestamp.Tolerance = -time.Second }), creds, "Timestamp.Tolerance -1s is negative"},
		{"tolerance without a timestamp", with(func(o *webhooks.HMACOptions) { o.Timestamp.Tolerance = time.Minute }), creds, "without a timestamp source"},
		{"timestamp header not signed", with(func(o *webhooks.HMACOptions) { o.Timestamp.Header = "X-Ts" }), creds, "so the signature would not cover it"},
		{"timestamp key not signed", with(func(o *webhooks.HMACOptions) { list(o); o.Timestamp.Key = "t" }), creds, "so the signature would not cover it"},
		{"signed timestamp without source", with(func(o *webhooks.HMACOptions) { o.SignedContent = "{timestamp}.{body}" }), creds, "but no timestamp is read from a header"},
		{"id.timestamp.body with ID path", with(func(o *webhooks.HMACOptions) {
			tsHeader(o)
			o.Event.IDHeader, o.Event.IDPath, o.SignedContent = "", "id", "{id}.{timestamp}.{body}"
		}), creds, "set Event.IDHeader (not Event.IDPath or Event.IDFunc)"},
		{"two ID sources", with(func(o *webhooks.HMACOptions) { o.Event.IDPath = "id" }), creds, "more than one of Event.IDHeader, Event.IDPath and Event.IDFunc is set"},
		{"two type sources", with(func(o *webhooks.HMACOptions) { o.Event.TypeHeader, o.Event.TypePath = "X-Type", "type" }), creds, "Event.TypeHeader and Event.TypePath are both set"},
		{"bad ID path", with(func(o *webhooks.HMACOptions) { o.Event.IDHeader, o.Event.IDPath = "", "data..id" }), creds, "Event.IDPath \"data..id\" is not a dotted path"},
		{"bad type path", with(func(o *webhooks.HMACOptions) { o.Event.TypePath = ".type" }), creds, "Event.TypePath"},
		{"signature key without list", with(func(o *webhooks.HMACOptions) { o.SignatureKey = "v1" }), creds, "SignatureKey is set but ItemSeparator is empty"},
		{"timestamp key without list", with(func(o *webhooks.HMACOptions) { o.Timestamp.Key, o.SignedContent = "t", "{timestamp}.{body}" }), creds, "Timestamp.Key is set but ItemSeparator is empty"},
		{"kv separator without list", with(func(o *webhooks.HMACOptions) { o.KeyValueSeparator = "=" }), creds, "KeyValueSeparator is set but ItemSeparator is empty"},
		{"list without key", with(func(o *webhooks.HMACOptions) { o.ItemSeparator, o.KeyValueSeparator = ",", "=" }), creds, "SignatureKey is empty"},
		{"list without kv separator", with(func(o *webhooks.HMACOptions) { o.ItemSeparator, o.SignatureKey = ",", "v1" }), creds, "KeyValueSeparator is empty"},
		{"list with prefix", with(func(o *webhooks.HMACOptions) { list(o); o.SignaturePrefix = "sha256=" }), creds, "leave SignaturePrefix empty"},
		{"same separators", with(func(o *webhooks.HMACOptions) { list(o); o.KeyValueSeparator = "," }), creds, "overlap"},
		{"key contains separator", with(func(o *webhooks.HMACOptions) { list(o); o.SignatureKey = "v=1" }), creds, "SignatureKey \"v=1\" contains a separator"},
		{"same keys", with(func(o *webhooks.HMACOptions) {
			list(o)
			o.Timestamp.Key, o.SignatureKey, o.SignedContent = "v1", "v1", "{timestamp}.{body}"
		}), creds, "Timestamp.Key and SignatureKey are both \"v1\""},
		{"two timestamp sources", with(func(o *webhooks.HMACOptions) {
			list(o)
			tsHeader(o)
			o.Timestamp.Key = "t"
		}), creds, "choose one timestamp source"},
		{"timestamp path and header", with(func(o *webhooks.HMACOptions) { tsHeader(o); o.Timestamp.Path = "ts" }), creds, "choose one timestamp source"},
		{"timestamp path with {timestamp}", with(func(o *webhooks.HMACOptions) {
			o.Timestamp.Path, o.SignedContent = "ts", "{timestamp}.{body}"
		}), creds, "but no timestamp is read from a header"},
		{"bad timestamp path", with(func(o *webhooks.HMACOptions) { o.Timestamp.Path = "a..b" }), creds, "Timestamp.Path \"a..b\" is not a dotted path"},
		{"template and func", with(func(o *webhooks.HMACOptions) {
			o.SignedContent = "{body}"
			o.SignedContentFunc = contentFunc
		}), creds, "SignedContent and SignedContentFunc are both set"},
		{"ID func and header", with(func(o *webhooks.HMACOptions) { o.Event.IDFunc = idFunc }), creds, "more than one of Event.IDHeader, Event.IDPath and Event.IDFunc is set"},
		{"suffix without type", with(func(o *webhooks.HMACOptions) { o.Event.TypeSuffixPath = "action" }), creds, "Event.TypeSuffixPath is set without an event type"},
		{"bad suffix path", with(func(o *webhooks.HMACOptions) { o.Event.TypeHeader, o.Event.TypeSuffixPath = "X-Type", "action." }), creds, "Event.TypeSuffixPath \"action.\" is not a dotted path"},
		{"fallback for unknown header", with(func(o *webhooks.HMACOptions) { o.HeaderFallbacks = webhooks.HeaderFallbacks{"X-Other": "X-Alt"} }), creds, "which is not a header these options read"},
		{"fallback with bad name", with(func(o *webhooks.HMACOptions) { o.HeaderFallbacks = webhooks.HeaderFallbacks{"x-signature": "X Alt"} }), creds, "is not a valid header name"},
		{"two fallbacks for one header", with(func(o *webhooks.HMACOptions) {
			o.HeaderFallbacks = webhooks.HeaderFallbacks{"X-Signature": "X-Alt-1", "x-signature": "X-Alt-2"}
		}), creds, "two fallbacks for \"X-Signature\""},
		{"fallback to a configured header", with(func(o *webhooks.HMACOptions) { o.HeaderFallbacks = webhooks.HeaderFallbacks{"X-Signature": "x-id"} }), creds, "which is itself a header these options read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, err := webhooks.NewHMACVerifier(tt.opts, tt.creds)
			if err == nil || v != nil {
				t.Fatalf("NewHMACVerifier accepted invalid options (verifier %v)", v)
			}
			if !strings.HasPrefix(err.Error(), "webhooks: invalid HMAC options: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not start with \"webhooks: invalid HMAC options: \" or lacks %q", err, tt.want)
			}
			var vErr *webhooks.VerificationError
			if errors.As(err, &vErr) {
				t.Errorf("configuration error %v is a VerificationError", err)
			}
		})
	}

	// Every problem is reported, not only the first.
	_, err := webhooks.NewHMACVerifier(webhooks.HMACOptions{SignedRequest: webhooks.SignedRequest{Encoding: 9, SignedContent: "{x}"}}, nil)
	for _, want := range []string{"SignatureHeader is empty", "Encoding", "unknown placeholder {x}", "no event ID source", "creds is nil"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}

	// The documented configurations are accepted.
	for name, opts := range map[string]webhooks.HMACOptions{
		"valid":            valid,
		"github":           providers.GitHubOptions(),
		"stripe":           providers.StripeOptions(),
		"standardwebhooks": providers.StandardWebhooksOptions(),
		"svix":             providers.SvixOptions(),
		"slack":            providers.SlackOptions(),
		"shopify":          providers.ShopifyOptions(),
		"paddle":           providers.PaddleOptions(),
		"linear":           providers.LinearOptions(),
		"zoom":             providers.ZoomOptions(),
		"gitlab":           providers.GitLabSigningOptions(),
		"func with timestamp": with(func(o *webhooks.HMACOptions) {
			o.Timestamp.Header = "X-Ts"
			o.SignedContentFunc = contentFunc
		}),
		"method and url": with(func(o *webhooks.HMACOptions) { o.SignedContent = "{method}\n{url}\n{body}" }),
		"ID from the body": with(func(o *webhooks.HMACOptions) {
			o.Event.IDHeader, o.Event.IDFromBody = "", true
		}),
		"ID header with a body fallback": with(func(o *webhooks.HMACOptions) { o.Event.IDFromBody = true }),
	} {
		if _, err := webhooks.NewHMACVerifier(opts, creds); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestHMACEnumStrings(t *testing.T) {
	t.Parallel()
	for got, want := range map[fmt.Stringer]string{
		webhooks.EncodingHex:          "hex",
		webhooks.EncodingBase64:       "base64",
		webhooks.SignatureEncoding(9): "SignatureEncoding(9)",
		webhooks.TimestampFormat(9):   "TimestampFormat(9)",
		webhooks.TimestampUnixSeconds: "unix_seconds",
		webhooks.TimestampUnixMillis:  "unix_millis",
		webhooks.TimestampRFC3339:     "rfc3339",
	} {
		if got.String() != want {
			t.Errorf("%#v.String() = %q, want %q", got, got.String(), want)
		}
	}
}

func TestHMACSignedContentTemplates(t *testing.T) {
	t.Parallel()
	const secret = "layout-secret"
	body := `{"id":"evt_layout"}`
	ts := strconv.FormatInt(fixedNow.Unix(), 10)
	base := webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Signature",
			Timestamp:       webhooks.TimestampSource{Header: "X-Timestamp"},
			Event:           webhooks.EventSource{IDHeader: "X-Id"},
		},
	}
	tests := []struct {
		name            string
		template        string
		signedParts     []string
		wrongSignedPart []string
	}{
		{"timestamp.body (Stripe)", "{timestamp}.{body}", []string{ts, ".", body}, []string{ts, ":", body}},
		{"ts:body (Paddle)", "{timestamp}:{body}", []string{ts, ":", body}, []string{ts, ".", body}},
		{"v0:ts:body (Slack, Zoom)", "v0:{timestamp}:{body}", []string{"v0:", ts, ":", body}, []string{ts, ":", body}},
		{"v0.ts.body", "v0.{timestamp}.{body}", []string{"v0.", ts, ".", body}, []string{"v0:", ts, ":", body}},
		{"id.ts.body (Standard Webhooks)", "{id}.{timestamp}.{body}", []string{"evt_layout.", ts, ".", body}, []string{ts, ".", body}},
		{"p|id|ts|body", "p|{id}|{timestamp}|{body}", []string{"p|evt_layout|", ts, "|", body}, []string{"evt_layout.", ts, ".", body}},
		{"body first", "{body}.{timestamp}", []string{body, ".", ts}, []string{ts, ".", body}},
		{"method and url", "{method} {url}\n{timestamp}\n{body}", []string{"POST /hooks/acme?x=1\n", ts, "\n", body}, []string{"POST /hooks/acme\n", ts, "\n", body}},
		{"id twice", "{id}:{timestamp}:{id}:{body}", []string{"evt_layout:", ts, ":evt_layout:", body}, []string{"evt_layout:", ts, ":", body}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := base
			opts.SignedContent = tt.template
			v := newVerifier(t, opts, webhooks.StaticSecrets(secret), webhookstest.NewClock(fixedNow))
			send := func(sig string) (webhooks.Verification, error) {
				req := request(body, "X-Signature", sig, "X-Timestamp", ts, "X-Id", "evt_layout")
				req.URL = &url.URL{Path: "/hooks/acme", RawQuery: "x=1"}
				return v.Verify(context.Background(), testRoute, req)
			}
			verified(t)(send(hexMAC(secret, tt.signedParts...)))
			_, err := send(hexMAC(secret, tt.wrongSignedPart...))
			wantReason(t, err, webhooks.ReasonBadSignature)
		})
	}

	// {id} is read before the signature: an absent ID is refused up front.
	opts := base
	opts.SignedContent = "{id}.{timestamp}.{body}"
	v := newVerifier(t, opts, webhooks.StaticSecrets(secret), webhookstest.NewClock(fixedNow))
	_, err := v.Verify(context.Background(), testRoute, request(body, "X-Signature", hexMAC(secret, ".", ts, ".", body), "X-Timestamp", ts))
	wantReason(t, err, webhooks.ReasonMissingEventID)
	// {url} of a request without a URL cannot be built: not a rejection.
	opts.SignedContent = "{url}{timestamp}{body}"
	v = newVerifier(t, opts, webhooks.StaticSecrets(secret), webhookstest.NewClock(fixedNow))
	_, err = v.Verify(context.Background(), testRoute, request(body, "X-Signature", hexMAC(secret, ts, body), "X-Timestamp", ts, "X-Id", "i"))
	var vErr *webhooks.VerificationError
	if err == nil || errors.As(err, &vErr) {
		t.Errorf("{url} without a URL: %v, want a plain error", err)
	}
}

func TestHMACHeaderFallbacks(t *testing.T) {
	t.Parallel()
	const secret = "fallback-secret"
	body := `{"type":"t"}`
	ts := strconv.FormatInt(fixedNow.Unix(), 10)
	opts := webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-New-Signature",
			SignedContent:   "{id}.{timestamp}.{body}",
			Timestamp:       webhooks.TimestampSource{Header: "X-New-Timestamp"},
			Event:           webhooks.EventSource{IDHeader: "X-New-Id", TypeHeader: "X-New-Type"},
			HeaderFallbacks: webhooks.HeaderFallbacks{
				"x-new-signature": "X-Old-Signature",
				"X-New-Timestamp": "x-old-timestamp",
				"X-New-Id":        "X-Old-Id",
				"X-New-Type":      "X-Old-Type",
			},
		},
	}
	v := newVerifier(t, opts, webhooks.StaticSecrets(secret), webhookstest.NewClock(fixedNow))
	good := hexMAC(secret, "id1.", ts, ".", body)
	other := hexMAC(secret, "id2.", ts, ".", body)

	// Fallbacks are checked at construction and not shared with the caller.
	opts.HeaderFallbacks["X-New-Id"] = "X-Changed"

	tests := []struct {
		name     string
		req      *webhooks.Request
		want     webhooks.Reason
		wantID   string
		wantType string
	}{
		{"new names", request(body, "X-New-Signature", good, "X-New-Timestamp", ts, "X-New-Id", "id1", "X-New-Type", "new"), "", "id1", "new"},
		{"old names", request(body, "X-Old-Signature", good, "X-Old-Timestamp", ts, "X-Old-Id", "id1", "X-Old-Type", "old"), "", "id1", "old"},
		{"mixed names", request(body, "X-Old-Signature", good, "X-New-Timestamp", ts, "X-Old-Id", "id1", "X-New-Type", "new"), "", "id1", "new"},
		{"new name wins", request(body, "X-New-Signature", good, "X-Old-Signature", other, "X-New-Timestamp", ts, "X-New-Id", "id1", "X-Old-Id", "id2", "X-New-Type", "t"), "", "id1", "t"},
		{"new name wins even when wrong", request(body, "X-New-Signature", other, "X-Old-Signature", good, "X-New-Timestamp", ts, "X-New-Id", "id1", "X-New-Type", "t"), webhooks.ReasonBadSignature, "", ""},
		{"old name sent twice", request(body, "X-Old-Signature", good, "X-Old-Signature", good, "X-New-Timestamp", ts, "X-New-Id", "id1"), webhooks.ReasonMalformedHeader, "", ""},
		{"neither", request(body, "X-New-Timestamp", ts, "X-New-Id", "id1"), webhooks.ReasonMissingSignature, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := v.Verify(context.Background(), testRoute, tt.req)
			if tt.want != "" {
				wantReason(t, err, tt.want)
				return
			}
			wantOK(t, got, err)
			if got.EventID != tt.wantID || got.EventType != tt.wantType {
				t.Errorf("EventID, EventType = %q, %q; want %q, %q", got.EventID, got.EventType, tt.wantID, tt.wantType)
			}
		})
	}
	// A missing header is reported under its configured name.
	_, err := v.Verify(context.Background(), testRoute, request(body, "X-New-Id", "id1"))
	if err == nil || !strings.Contains(err.Error(), "X-New-Signature") {
		t.Errorf("err = %v, want it to name X-New-Signature", err)
	}
}

func TestHMACTimestampPath(t *testing.T) {
	t.Parallel()
	const secret = "path-secret"
	opts := webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Signature",
			Timestamp:       webhooks.TimestampSource{Path: "meta.sentAt", Format: webhooks.TimestampUnixMillis, Tolerance: time.Minute},
			Event:           webhooks.EventSource{IDPath: "id"},
		},
	}
	v := newVerifier(t, opts, webhooks.StaticSecrets(secret), webhookstest.NewClock(fixedNow))
	ms := func(d time.Duration) string { return strconv.FormatInt(fixedNow.Add(d).UnixMilli(), 10) }
	tests := []struct {
		name string
		body string
		sig  string // "" signs the body with the secret
		want webhooks.Reason
		at   time.Time
	}{
		{"number", `{"id":"a","meta":{"sentAt":` + ms(-30*time.Second) + `}}`, "", "", fixedNow.Add(-30 * time.Second)},
		{"string", `{"id":"a","meta":{"sentAt":"` + ms(time.Second) + `"}}`, "", "", fixedNow.Add(time.Second)},
		{"stale", `{"id":"a","meta":{"sentAt":` + ms(-61*time.Second) + `}}`, "", webhooks.ReasonTimestampExpired, time.Time{}},
		{"future", `{"id":"a","meta":{"sentAt":` + ms(61*time.Second) + `}}`, "", webhooks.ReasonTimestampExpired, time.Time{}},
		{"missing", `{"id":"a","meta":{}}`, "", webhooks.ReasonMissingTimestamp, time.Time{}},
		{"null", `{"id":"a","meta":{"sentAt":null}}`, "", webhooks.ReasonMissingTimestamp, time.Time{}},
		{"fraction", `{"id":"a","meta":{"sentAt":1.5e12}}`, "", webhooks.ReasonMalformedTime, time.Time{}},
		{"object", `{"id":"a","meta":{"sentAt":{}}}`, "", webhooks.ReasonMalformedPayload, time.Time{}},
		{"not json", `sentAt=1`, "", webhooks.ReasonMalformedPayload, time.Time{}},
		{"stale with bad signature", `{"id":"a","meta":{"sentAt":` + ms(-time.Hour) + `}}`, hexMAC("wrong", "x"), webhooks.ReasonBadSignature, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sig := tt.sig
			if sig == "" {
				sig = hexMAC(secret, tt.body)
			}
			got, err := v.Verify(context.Background(), testRoute, request(tt.body, "X-Signature", sig))
			if tt.want != "" {
				wantReason(t, err, tt.want)
				return
			}
			wantOK(t, got, err)
			if !got.OccurredAt.Equal(tt.at) {
				t.Errorf("OccurredAt = %v, want %v", got.OccurredAt, tt.at)
			}
		})
	}
}

func TestHMACEventIDFunc(t *testing.T) {
	t.Parallel()
	const secret = "func-secret"
	body := `{"kind":"k"}`
	storeDown := errors.New("lookup failed")
	tests := []struct {
		name   string
		fn     func(*webhooks.Request, webhooks.Verification) (string, error)
		want   webhooks.Reason
		plain  error
		wantID string
	}{
		{"from verification", func(r *webhooks.Request, v webhooks.Verification) (string, error) {
			if v.EventType != "k" || v.KeyID != "static:0" || v.PayloadSHA256 != ([sha256.Size]byte{}) || len(r.Body) == 0 {
				return "", fmt.Errorf("incomplete verification %+v", v)
			}
			return "id-" + v.EventType, nil
		}, "", nil, "id-k"},
		{"empty", func(*webhooks.Request, webhooks.Verification) (string, error) { return "", nil }, webhooks.ReasonMissingEventID, nil, ""},
		{"rejection", func(*webhooks.Request, webhooks.Verification) (string, error) {
			return "", webhooks.Reject(webhooks.ReasonMalformedPayload, "no id")
		}, webhooks.ReasonMalformedPayload, nil, ""},
		{"other error", func(*webhooks.Request, webhooks.Verification) (string, error) { return "", storeDown }, "", storeDown, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := webhooks.HMACOptions{SignedRequest: webhooks.SignedRequest{SignatureHeader: "X-Signature", Event: webhooks.EventSource{IDFunc: tt.fn, TypePath: "kind"}}}
			v := newVerifier(t, opts, webhooks.StaticSecrets(secret), nil)
			got, err := v.Verify(context.Background(), testRoute, request(body, "X-Signature", hexMAC(secret, body)))
			switch {
			case tt.want != "":
				wantReason(t, err, tt.want)
			case tt.plain != nil:
				var vErr *webhooks.VerificationError
				if !errors.Is(err, tt.plain) || errors.As(err, &vErr) {
					t.Errorf("err = %v, want a plain error wrapping %v", err, tt.plain)
				}
			default:
				wantOK(t, got, err)
				if got.EventID != tt.wantID {
					t.Errorf("EventID = %q, want %q", got.EventID, tt.wantID)
				}
			}
		})
	}
	// Never called for a request that does not verify.
	called := false
	opts := webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Signature",
			Event: webhooks.EventSource{IDFunc: func(*webhooks.Request, webhooks.Verification) (string, error) {
				called = true
				return "x", nil
			}},
		},
	}
	v := newVerifier(t, opts, webhooks.StaticSecrets(secret), nil)
	_, err := v.Verify(context.Background(), testRoute, request(body, "X-Signature", hexMAC("wrong", body)))
	wantReason(t, err, webhooks.ReasonBadSignature)
	if called {
		t.Error("Event.IDFunc called for an unverified request")
	}
}

func TestHMACEventTypeSuffix(t *testing.T) {
	t.Parallel()
	const secret = "suffix-secret"
	opts := providers.GitHubOptions()
	opts.Event.TypeSuffixPath = "action"
	v := newVerifier(t, opts, webhooks.StaticSecrets(secret), nil)
	plain := newVerifier(t, providers.GitHubOptions(), webhooks.StaticSecrets(secret), nil)
	tests := []struct {
		name, event, body, want string
	}{
		{"action", "pull_request", `{"action":"opened","number":1}`, "pull_request.opened"},
		{"no action", "push", `{"ref":"refs/heads/main"}`, "push"},
		{"empty action", "push", `{"action":""}`, "push"},
		{"numeric action", "push", `{"action":7}`, "push"},
		{"object action", "push", `{"action":{"a":1}}`, "push"},
		{"form-encoded delivery", "issues", `payload=%7B%22action%22%3A%22opened%22%7D`, "issues"},
		{"array body", "push", `[1,2]`, "push"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := request(tt.body, "X-Hub-Signature-256", "sha256="+hexMAC(secret, tt.body), "X-GitHub-Delivery", ghDelivery, "X-GitHub-Event", tt.event)
			got := verified(t)(v.Verify(context.Background(), testRoute, req))
			if got.EventType != tt.want {
				t.Errorf("EventType = %q, want %q", got.EventType, tt.want)
			}
			// Off by default.
			if got := verified(t)(plain.Verify(context.Background(), testRoute, req)); got.EventType != tt.event {
				t.Errorf("default EventType = %q, want %q", got.EventType, tt.event)
			}
		})
	}
}

func TestHMACHandshakeHook(t *testing.T) {
	t.Parallel()
	creds := webhooks.CredentialResolverFunc(func(context.Context, webhooks.Route) ([]webhooks.Secret, error) {
		return []webhooks.Secret{{ID: "old", Value: []byte("old-key")}, {ID: "new", Value: []byte("new-key")}}, nil
	})
	type call struct {
		key string
		v   webhooks.Verification
	}
	var (
		mu    sync.Mutex
		calls []call
	)
	hookErr := errors.New("challenge store down")
	opts := webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Signature",
			SignedContent:   "{timestamp}.{body}",
			Timestamp:       webhooks.TimestampSource{Header: "X-Timestamp"},
			Event:           webhooks.EventSource{IDPath: "id"},
		},
		Handshake: func(req *webhooks.Request, v webhooks.Verification, key []byte) (*webhooks.Response, error) {
			mu.Lock()
			calls = append(calls, call{string(key), v})
			mu.Unlock()
			switch string(req.Body) {
			case `{"challenge":"c"}`:
				return &webhooks.Response{Body: []byte("c")}, nil
			case `{"challenge":""}`:
				return nil, webhooks.Reject(webhooks.ReasonMalformedPayload, "empty challenge")
			case `{"challenge":"fail"}`:
				return nil, hookErr
			}
			return nil, nil
		},
	}
	v := newVerifier(t, opts, creds, webhookstest.NewClock(fixedNow))
	ts := strconv.FormatInt(fixedNow.Unix(), 10)
	stale := strconv.FormatInt(fixedNow.Add(-time.Hour).Unix(), 10)
	send := func(key, ts, body string) (webhooks.Verification, error) {
		return v.Verify(context.Background(), testRoute, request(body, "X-Signature", hexMAC(key, ts, ".", body), "X-Timestamp", ts))
	}

	// A signed challenge is answered, with the key that verified it.
	got := verified(t)(send("new-key", ts, `{"challenge":"c"}`))
	if got.Handshake == nil || string(got.Handshake.Body) != "c" || got.EventID != "" || got.KeyID != "new" {
		t.Errorf("Verification = %+v", got)
	}
	if len(calls) != 1 || calls[0].key != "new-key" || calls[0].v.KeyID != "new" || !calls[0].v.OccurredAt.Equal(fixedNow) {
		t.Errorf("hook calls = %+v", calls)
	}
	// An ordinary event goes on to the ID lookup.
	if got := verified(t)(send("old-key", ts, `{"id":"evt"}`)); got.Handshake != nil || got.EventID != "evt" {
		t.Errorf("Verification = %+v", got)
	}
	calls = nil
	// Rejections and errors from the hook.
	_, err := send("new-key", ts, `{"challenge":""}`)
	wantReason(t, err, webhooks.ReasonMalformedPayload)
	_, err = send("new-key", ts, `{"challenge":"fail"}`)
	var vErr *webhooks.VerificationError
	if !errors.Is(err, hookErr) || errors.As(err, &vErr) {
		t.Errorf("err = %v, want a plain error wrapping the hook's", err)
	}
	calls = nil
	// Unsigned, wrongly signed and stale challenges never reach the hook.
	_, err = v.Verify(context.Background(), testRoute, request(`{"challenge":"c"}`, "X-Timestamp", ts))
	wantReason(t, err, webhooks.ReasonMissingSignature)
	_, err = send("retired-key", ts, `{"challenge":"c"}`)
	wantReason(t, err, webhooks.ReasonBadSignature)
	_, err = send("new-key", stale, `{"challenge":"c"}`)
	wantReason(t, err, webhooks.ReasonTimestampExpired)
	if len(calls) != 0 {
		t.Errorf("hook called for rejected requests: %+v", calls)
	}
}

func TestHMACSecretPrefix(t *testing.T) {
	t.Parallel()
	opts := providers.StripeOptions()
	body := `{"id":"evt_p","type":"t"}`
	ts := strconv.FormatInt(fixedNow.Unix(), 10)
	for name, tt := range map[string]struct {
		secrets []webhooks.Secret
		signKey string
		want    webhooks.Reason
		keyID   string
	}{
		"prefix only":            {[]webhooks.Secret{{ID: "cut", Value: []byte("whsec_")}}, "whsec_", webhooks.ReasonNoCredentials, ""},
		"empty and prefix only":  {[]webhooks.Secret{{ID: "a"}, {ID: "b", Value: []byte("whsec_")}}, "whsec_", webhooks.ReasonNoCredentials, ""},
		"prefix only and a real": {[]webhooks.Secret{{ID: "cut", Value: []byte("whsec_")}, {ID: "real", Value: []byte("whsec_real")}}, "whsec_real", "", "real"},
		"without the prefix":     {[]webhooks.Secret{{ID: "bare", Value: []byte("bare-secret")}}, "bare-secret", "", "bare"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			creds := webhooks.CredentialResolverFunc(func(context.Context, webhooks.Route) ([]webhooks.Secret, error) { return tt.secrets, nil })
			v := newVerifier(t, opts, creds, webhookstest.NewClock(fixedNow))
			got, err := v.Verify(context.Background(), testRoute, request(body, "Stripe-Signature", "t="+ts+",v1="+hexMAC(tt.signKey, ts, ".", body)))
			if tt.want != "" {
				wantReason(t, err, tt.want)
				return
			}
			wantOK(t, got, err)
			if got.KeyID != tt.keyID {
				t.Errorf("KeyID = %q, want %q", got.KeyID, tt.keyID)
			}
		})
	}
	// Static secrets are checked up front: NewHMACVerifier refuses an empty
	// list, an empty secret and a prefix-only one, naming the secret by ID.
	for name, tt := range map[string]struct {
		creds webhooks.CredentialResolver
		want  string // in the error message
	}{
		"prefix only": {webhooks.StaticSecrets("whsec_real", "whsec_"), `secret static:1 is unusable: it is only the prefix "whsec_"`},
		"empty":       {webhooks.StaticSecrets(""), "secret static:0 is empty"},
		"none":        {webhooks.StaticSecrets(), "StaticSecrets has no secrets"},
	} {
		_, err := webhooks.NewHMACVerifier(opts, tt.creds)
		if err == nil {
			t.Errorf("%s: NewHMACVerifier accepted unusable static secrets", name)
		} else if strings.Contains(err.Error(), "whsec_real") {
			t.Errorf("%s: the error %q shows a secret", name, err)
		} else if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: the error %q lacks %q", name, err, tt.want)
		}
	}
}

// TestHMACVerifyAllocations counts the allocations of a verification in
// the shapes of the HMAC presets: at most 2, the event ID and type copied
// out of a JSON body.
func TestHMACVerifyAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	now := time.Unix(1700000000, 0)
	ts := strconv.FormatInt(now.Unix(), 10)
	clock := webhookstest.NewClock(now)
	body := `{"id":"evt_1","object":"event","data":{"object":{"id":"in_1","lines":[1,2]}},"type":"invoice.paid"}`
	key := "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	rawKey := "0123456789abcdef0123456789abcdef"
	b64 := func(content string) string {
		m := hmac.New(sha256.New, []byte(rawKey))
		m.Write([]byte(content))
		return base64.StdEncoding.EncodeToString(m.Sum(nil))
	}
	for _, c := range []struct {
		name   string
		opts   webhooks.HMACOptions
		secret string
		header http.Header
		allocs float64
	}{
		{"body only, headers", webhooks.HMACOptions{
			SignedRequest: webhooks.SignedRequest{
				SignatureHeader: "X-Hub-Signature-256",
				SignaturePrefix: "sha256=",
				Event:           webhooks.EventSource{IDHeader: "X-GitHub-Delivery", TypeHeader: "X-GitHub-Event"},
			},
		}, "gh", http.Header{"X-Hub-Signature-256": {"sha256=" + hexMAC("gh", body)}, "X-Github-Delivery": {"d-1"}, "X-Github-Event": {"push"}}, 0},
		{"list header, JSON ID and type", webhooks.HMACOptions{
			SignedRequest: webhooks.SignedRequest{
				SignatureHeader:   "Stripe-Signature",
				ItemSeparator:     ",",
				KeyValueSeparator: "=",
				SignatureKey:      "v1",
				SignedContent:     "{timestamp}.{body}",
				Timestamp:         webhooks.TimestampSource{Key: "t"},
				Event:             webhooks.EventSource{IDPath: "id", TypePath: "type"},
			},
			SecretPrefix: "whsec_",
		}, "whsec_x", http.Header{"Stripe-Signature": {"t=" + ts + ",v1=" + hexMAC("whsec_x", ts+"."+body) + ",v0=00"}}, 2},
		{"base64 list, decoded secret, JSON type", webhooks.HMACOptions{
			SignedRequest: webhooks.SignedRequest{
				SignatureHeader:   "Webhook-Signature",
				ItemSeparator:     " ",
				KeyValueSeparator: ",",
				SignatureKey:      "v1",
				Encoding:          webhooks.EncodingBase64,
				SignedContent:     "{id}.{timestamp}.{body}",
				Timestamp:         webhooks.TimestampSource{Header: "Webhook-Timestamp"},
				Event:             webhooks.EventSource{IDHeader: "Webhook-Id", TypePath: "type"},
			},
			SecretPrefix: "whsec_",
			DecodeSecret: func(s []byte) ([]byte, error) {
				return base64.StdEncoding.DecodeString(strings.TrimPrefix(string(s), "whsec_"))
			},
		}, key, http.Header{"Webhook-Signature": {"v1a,x v1," + b64("msg_1."+ts+"."+body)}, "Webhook-Timestamp": {ts}, "Webhook-Id": {"msg_1"}}, 1},
	} {
		c.opts.Clock = clock
		v, err := webhooks.NewHMACVerifier(c.opts, webhooks.StaticSecrets(c.secret))
		if err != nil {
			t.Fatal(err)
		}
		req := &webhooks.Request{Method: http.MethodPost, Header: c.header, Body: []byte(body)}
		if _, err := v.Verify(context.Background(), webhooks.Route{}, req); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		allocs := testing.AllocsPerRun(100, func() {
			if _, err := v.Verify(context.Background(), webhooks.Route{}, req); err != nil {
				panic(fmt.Sprintf("%s: %v", c.name, err))
			}
		})
		if allocs > c.allocs {
			t.Errorf("%s: %v allocations per verification, want at most %v", c.name, allocs, c.allocs)
		}
	}
}

// FuzzHMACVerify runs whole requests through a Standard-Webhooks-style
// verifier: it must never panic, must reject with a *webhooks.VerificationError, and
// may accept only a correctly signed request.
func FuzzHMACVerify(f *testing.F) {
	key := []byte("fuzz-key-0123456789abcdef")
	now := time.Unix(1700000000, 0).UTC()
	opts := webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader:   "Webhook-Signature",
			ItemSeparator:     " ",
			KeyValueSeparator: ",",
			SignatureKey:      "v1",
			Encoding:          webhooks.EncodingBase64,
			SignedContent:     "{id}.{timestamp}.{body}",
			Timestamp:         webhooks.TimestampSource{Header: "Webhook-Timestamp"},
			Event:             webhooks.EventSource{IDHeader: "Webhook-Id", TypePath: "type"},
		},
		DecodeSecret: func(b []byte) ([]byte, error) {
			return base64.StdEncoding.DecodeString(strings.TrimPrefix(string(b), "whsec_"))
		},
		Clock: webhookstest.NewClock(now),
	}
	v, err := webhooks.NewHMACVerifier(opts, webhooks.StaticSecrets("whsec_"+base64.StdEncoding.EncodeToString(key)))
	if err != nil {
		f.Fatal(err)
	}
	sign := func(id, ts string, body []byte) string {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(id + "." + ts + "."))
		m.Write(body)
		return base64.StdEncoding.EncodeToString(m.Sum(nil))
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	body := []byte(`{"type":"user.created","data":{"id":1}}`)
	f.Add(body, "v1,"+sign("msg_1", ts, body), ts, "msg_1")
	f.Add(body, "v1,"+sign("msg_1", ts, body)+" v1,AAAA", ts, "msg_1")
	f.Add([]byte("{"), "v1,"+sign("msg_1", ts, []byte("{")), ts, "msg_1")
	f.Add([]byte(`{"type":7}`), "v1,"+sign("m", "1", []byte(`{"type":7}`)), "1", "m")
	f.Add([]byte{}, "", "", "")

	f.Fuzz(func(t *testing.T, body []byte, sig, ts, id string) {
		h := http.Header{}
		for name, val := range map[string]string{"Webhook-Signature": sig, "Webhook-Timestamp": ts, "Webhook-Id": id} {
			if val != "" {
				h[name] = []string{val}
			}
		}
		got, err := v.Verify(context.Background(), webhooks.Route{Provider: "fuzz"}, &webhooks.Request{Header: h, Body: body})
		if err != nil {
			var vErr *webhooks.VerificationError
			if !errors.As(err, &vErr) {
				t.Fatalf("Verify returned a non-rejection error: %v", err)
			}
			if !reflect.DeepEqual(got, webhooks.Verification{}) {
				t.Fatalf("rejected request returned metadata %+v", got)
			}
			return
		}
		if got.EventID != strings.TrimSpace(id) || got.KeyID != "static:0" || got.EventType == "" || got.PayloadSHA256 != ([sha256.Size]byte{}) {
			t.Fatalf("accepted request returned %+v", got)
		}
		if got.OccurredAt.Before(now.Add(-webhooks.DefaultTolerance)) || got.OccurredAt.After(now.Add(webhooks.DefaultTolerance)) {
			t.Fatalf("accepted timestamp %v outside the window", got.OccurredAt)
		}
	})
}
