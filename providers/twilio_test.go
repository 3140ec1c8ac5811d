package providers_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// twilioFormVector is testdata/twilio/webhooks-security-example.json.
type twilioFormVector struct {
	Source    string            `json:"source"`
	AuthToken string            `json:"auth_token"`
	URL       string            `json:"url"`
	Params    map[string]string `json:"params"`
	Signature string            `json:"signature"`
}

// twilioJSONVector is testdata/twilio/json-body.json.
type twilioJSONVector struct {
	Source    string `json:"source"`
	AuthToken string `json:"auth_token"`
	URL       string `json:"url"`
	Body      string `json:"body"`
	Signature string `json:"signature"`
}

func newTwilioVerifier(t *testing.T, opts providers.TwilioOptions, creds webhooks.CredentialResolver) *providers.TwilioVerifier {
	t.Helper()
	v, err := providers.NewTwilioVerifier(opts, creds)
	if err != nil {
		t.Fatalf("NewTwilioVerifier: %v", err)
	}
	return v
}

// twilioRequest builds a request as a server behind a proxy receives it:
// the path and query of fullURL, the body and the header pairs.
func twilioRequest(t *testing.T, fullURL, body string, kv ...string) *webhooks.Request {
	t.Helper()
	u, err := url.Parse(fullURL)
	if err != nil {
		t.Fatal(err)
	}
	req := nhRequest(body, kv...)
	req.URL = &url.URL{Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery}
	return req
}

const formType = "application/x-www-form-urlencoded"

func loadTwilioFormVector(t *testing.T) (twilioFormVector, url.Values) {
	t.Helper()
	var vec twilioFormVector
	nhLoad(t, "twilio/webhooks-security-example.json", &vec)
	if vec.Source == "" || vec.Signature == "" || len(vec.Params) == 0 {
		t.Fatal("incomplete vector")
	}
	params := url.Values{}
	for k, v := range vec.Params {
		params.Set(k, v)
	}
	return vec, params
}

func TestTwilioDocumentedVector(t *testing.T) {
	t.Parallel()
	vec, params := loadTwilioFormVector(t)
	if got := webhookstest.TwilioSignature(vec.AuthToken, vec.URL, params); got != vec.Signature {
		t.Fatalf("webhookstest.TwilioSignature = %s, the vector says %s", got, vec.Signature)
	}
	// Twilio's parameter order is not the signing order: shuffle it.
	body := "To=%2B18005551212&Digits=1234&CallSid=CA1234567890ABCDE&From=%2B12349013030&Caller=%2B12349013030"

	base := newTwilioVerifier(t, providers.TwilioOptions{BaseURL: "https://mycompany.com/"}, webhooks.StaticSecrets(vec.AuthToken))
	public := newTwilioVerifier(t, providers.TwilioOptions{PublicURL: func(*webhooks.Request) (string, error) { return vec.URL, nil }}, webhooks.StaticSecrets(vec.AuthToken))
	for _, v := range []*providers.TwilioVerifier{base, public} {
		got := nhVerify(t, v, twilioRequest(t, vec.URL, body, "X-Twilio-Signature", vec.Signature, "Content-Type", formType+"; charset=utf-8"))
		want := webhooks.Verification{
			EventID:       bodyID([]byte("CallSidCA1234567890ABCDECaller+12349013030Digits1234From+12349013030To+18005551212")),
			PayloadSHA256: sha256.Sum256([]byte(body)),
			KeyID:         "static:0",
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Verification = %+v, want %+v", got, want)
		}
	}
}

func TestTwilioRejections(t *testing.T) {
	t.Parallel()
	vec, params := loadTwilioFormVector(t)
	body := params.Encode()
	v := newTwilioVerifier(t, providers.TwilioOptions{BaseURL: "https://mycompany.com"}, webhooks.StaticSecrets(vec.AuthToken))
	wrongToken := newTwilioVerifier(t, providers.TwilioOptions{BaseURL: "https://mycompany.com"}, webhooks.StaticSecrets("54321"))
	otherHost := newTwilioVerifier(t, providers.TwilioOptions{BaseURL: "https://staging.mycompany.com"}, webhooks.StaticSecrets(vec.AuthToken))
	httpScheme := newTwilioVerifier(t, providers.TwilioOptions{BaseURL: "http://mycompany.com"}, webhooks.StaticSecrets(vec.AuthToken))
	sig, ct := "X-Twilio-Signature", "Content-Type"
	sha256Sig := "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="

	tests := []struct {
		name string
		v    *providers.TwilioVerifier
		req  *webhooks.Request
		want webhooks.Reason
	}{
		{"wrong auth token", wrongToken, twilioRequest(t, vec.URL, body, sig, vec.Signature, ct, formType), webhooks.ReasonBadSignature},
		{"tampered parameter", v, twilioRequest(t, vec.URL, strings.Replace(body, "Digits=1234", "Digits=9999", 1), sig, vec.Signature, ct, formType), webhooks.ReasonBadSignature},
		{"added parameter", v, twilioRequest(t, vec.URL, body+"&Extra=1", sig, vec.Signature, ct, formType), webhooks.ReasonBadSignature},
		{"dropped parameter", v, twilioRequest(t, vec.URL, strings.Replace(body, "Digits=1234&", "", 1), sig, vec.Signature, ct, formType), webhooks.ReasonBadSignature},
		{"tampered query", v, twilioRequest(t, "https://mycompany.com/myapp.php?foo=1&bar=3", body, sig, vec.Signature, ct, formType), webhooks.ReasonBadSignature},
		{"other path", v, twilioRequest(t, "https://mycompany.com/other.php?foo=1&bar=2", body, sig, vec.Signature, ct, formType), webhooks.ReasonBadSignature},
		{"replayed to another host", otherHost, twilioRequest(t, vec.URL, body, sig, vec.Signature, ct, formType), webhooks.ReasonBadSignature},
		{"scheme rewritten by a proxy", httpScheme, twilioRequest(t, vec.URL, body, sig, vec.Signature, ct, formType), webhooks.ReasonBadSignature},
		{"missing signature", v, twilioRequest(t, vec.URL, body, ct, formType), webhooks.ReasonMissingSignature},
		{"empty signature", v, twilioRequest(t, vec.URL, body, sig, "", ct, formType), webhooks.ReasonMissingSignature},
		{"duplicated signature", v, twilioRequest(t, vec.URL, body, sig, vec.Signature, sig, vec.Signature, ct, formType), webhooks.ReasonMalformedHeader},
		{"signature not base64", v, twilioRequest(t, vec.URL, body, sig, "0/KCTR6DLpKmkAf8muzZqo1nDg!=", ct, formType), webhooks.ReasonMalformedHeader},
		{"signature too short", v, twilioRequest(t, vec.URL, body, sig, vec.Signature[:20], ct, formType), webhooks.ReasonMalformedHeader},
		{"SHA-256 length without settings", v, twilioRequest(t, vec.URL, body, sig, sha256Sig, ct, formType), webhooks.ReasonMalformedHeader},
		{"form body without content type", v, twilioRequest(t, vec.URL, body, sig, vec.Signature), webhooks.ReasonMalformedPayload},
		{"JSON body without bodySHA256", v, twilioRequest(t, vec.URL, `{"a":1}`, sig, vec.Signature, ct, "application/json"), webhooks.ReasonMalformedPayload},
		{"form body with bad escape", v, twilioRequest(t, vec.URL, "Digits=%zz", sig, vec.Signature, ct, formType), webhooks.ReasonMalformedPayload},
		{"bodySHA256 not hex", v, twilioRequest(t, "https://mycompany.com/a?bodySHA256=xyz", `{}`, sig, vec.Signature), webhooks.ReasonMalformedHeader},
		{"bodySHA256 twice", v, twilioRequest(t, "https://mycompany.com/a?bodySHA256="+strings.Repeat("0", 64)+"&bodySHA256="+strings.Repeat("0", 64), `{}`, sig, vec.Signature), webhooks.ReasonMalformedHeader},
		{"unknown settings algorithm", v, twilioRequest(t, vec.URL, body, sig, vec.Signature, ct, formType, providers.TwilioSignatureSettingsHeader, "key=KS1,algorithm=HMAC_MD5"), webhooks.ReasonMalformedHeader},
		{"settings without algorithm", v, twilioRequest(t, vec.URL, body, sig, vec.Signature, ct, formType, providers.TwilioSignatureSettingsHeader, "key=KS1"), webhooks.ReasonMalformedHeader},
		{"duplicated settings", v, twilioRequest(t, vec.URL, body, sig, vec.Signature, ct, formType, providers.TwilioSignatureSettingsHeader, "algorithm=HMAC_SHA1", providers.TwilioSignatureSettingsHeader, "algorithm=HMAC_SHA1"), webhooks.ReasonMalformedHeader},
		// Signed with a SharedKey but no SharedKeys configured: the auth
		// token is not tried.
		{"settings without SharedKeys", v, twilioRequest(t, vec.URL, body, sig, vec.Signature, ct, formType, providers.TwilioSignatureSettingsHeader, "key=KS1,algorithm=HMAC_SHA1"), webhooks.ReasonNoCredentials},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			nhNoLeak(t, nhReject(t, tt.v, tt.req, tt.want), vec.AuthToken, "CA1234567890ABCDE", vec.Signature)
		})
	}
}

func TestTwilioJSONBody(t *testing.T) {
	t.Parallel()
	var vec twilioJSONVector
	nhLoad(t, "twilio/json-body.json", &vec)
	if vec.Source == "" || vec.Signature == "" {
		t.Fatal("incomplete vector")
	}
	// The published bodySHA256 is the body's digest.
	sum := sha256.Sum256([]byte(vec.Body))
	if !strings.HasSuffix(vec.URL, "bodySHA256="+hex.EncodeToString(sum[:])) {
		t.Fatalf("the vector's bodySHA256 is not the SHA-256 of its body")
	}
	if got := webhookstest.TwilioSignature(vec.AuthToken, vec.URL, nil); got != vec.Signature {
		t.Fatalf("webhookstest.TwilioSignature = %s, vector %s", got, vec.Signature)
	}
	v := newTwilioVerifier(t, providers.TwilioOptions{BaseURL: "https://example.com"}, webhooks.StaticSecrets(vec.AuthToken))
	got := nhVerify(t, v, twilioRequest(t, vec.URL, vec.Body, "X-Twilio-Signature", vec.Signature, "Content-Type", "application/json"))
	if got.EventID != bodyID([]byte(vec.Body)) || got.KeyID != "static:0" {
		t.Errorf("Verification %+v", got)
	}

	tampered := strings.Replace(vec.Body, "CA1234567890ABCDE", "CA1234567890ABCDF", 1)
	nhReject(t, v, twilioRequest(t, vec.URL, tampered, "X-Twilio-Signature", vec.Signature, "Content-Type", "application/json"), webhooks.ReasonBadSignature)
	// A bodySHA256 changed to match a tampered body breaks the URL's
	// signature instead.
	tsum := sha256.Sum256([]byte(tampered))
	forged := "https://example.com/myapp?bodySHA256=" + hex.EncodeToString(tsum[:])
	nhReject(t, v, twilioRequest(t, forged, tampered, "X-Twilio-Signature", vec.Signature, "Content-Type", "application/json"), webhooks.ReasonBadSignature)
}

func TestTwilioDefaultPortVariants(t *testing.T) {
	t.Parallel()
	params := url.Values{"MessageSid": {"SM1"}, "MessageStatus": {"delivered"}}
	body := params.Encode()
	for _, tc := range []struct{ signed, base string }{
		{"https://hooks.example.com:443/twilio", "https://hooks.example.com"},
		{"https://hooks.example.com/twilio", "https://hooks.example.com:443"},
		{"http://hooks.example.com:80/twilio", "http://hooks.example.com"},
		{"https://[2001:db8::1]:443/twilio", "https://[2001:db8::1]"},
	} {
		v := newTwilioVerifier(t, providers.TwilioOptions{BaseURL: tc.base}, webhooks.StaticSecrets("tok"))
		sig := webhookstest.TwilioSignature("tok", tc.signed, params)
		nhVerify(t, v, twilioRequest(t, "https://x/twilio", body, "X-Twilio-Signature", sig, "Content-Type", formType))
	}
	// Another port is not a variant.
	v := newTwilioVerifier(t, providers.TwilioOptions{BaseURL: "https://hooks.example.com"}, webhooks.StaticSecrets("tok"))
	sig := webhookstest.TwilioSignature("tok", "https://hooks.example.com:8443/twilio", params)
	nhReject(t, v, twilioRequest(t, "https://x/twilio", body, "X-Twilio-Signature", sig, "Content-Type", formType), webhooks.ReasonBadSignature)
}

func TestTwilioRotationAndSharedKeys(t *testing.T) {
	t.Parallel()
	const publicURL = "https://hooks.example.com/webhooks/twilio"
	params := url.Values{"MessageSid": {"SM1"}, "MessageStatus": {"sent"}}
	opts := providers.TwilioOptions{
		BaseURL:    "https://hooks.example.com",
		SharedKeys: nhSecrets("KS-old", "old shared secret", "KS-new", "new shared secret"),
	}
	v := newTwilioVerifier(t, opts, nhSecrets("primary", "primary-token", "secondary", "secondary-token"))
	send := func(secret string, msg webhookstest.TwilioMessage) (webhooks.Verification, error) {
		t.Helper()
		msg.URL, msg.Params = publicURL, params
		requestURL, body, h, err := webhookstest.SignTwilio(secret, msg)
		if err != nil {
			t.Fatal(err)
		}
		req := twilioRequest(t, requestURL, string(body))
		req.Header = h
		return v.Verify(context.Background(), nhRoute, req)
	}
	for secret, want := range map[string]string{"primary-token": "primary", "secondary-token": "secondary"} {
		got, err := send(secret, webhookstest.TwilioMessage{})
		if err != nil || got.KeyID != want {
			t.Errorf("auth token %s: KeyID %q, %v; want %q", want, got.KeyID, err, want)
		}
	}
	for secret, want := range map[string]string{"old shared secret": "KS-old", "new shared secret": "KS-new"} {
		got, err := send(secret, webhookstest.TwilioMessage{SharedKeyID: want})
		if err != nil || got.KeyID != want {
			t.Errorf("shared key %s: KeyID %q, %v", want, got.KeyID, err)
		}
	}
	// The header names another key: any configured key still verifies.
	if got, err := send("new shared secret", webhookstest.TwilioMessage{SharedKeyID: "KS-unknown"}); err != nil || got.KeyID != "KS-new" {
		t.Errorf("unnamed shared key: %q, %v", got.KeyID, err)
	}
	// A request marked as signed with a SharedKey is not verified with the
	// auth token, nor the other way round.
	_, err := send("primary-token", webhookstest.TwilioMessage{SharedKeyID: "KS-new"})
	if !errors.Is(err, webhooks.ReasonBadSignature) {
		t.Errorf("auth token under a SharedKey header: %v", err)
	}
	_, err = send("new shared secret", webhookstest.TwilioMessage{})
	if !errors.Is(err, webhooks.ReasonBadSignature) {
		t.Errorf("SharedKey without its header: %v", err)
	}
	nhNoLeak(t, err, "primary-token", "new shared secret")

	// HMAC_SHA1 named explicitly with a SharedKey.
	requestURL, body, h, err := webhookstest.SignTwilio("old shared secret", webhookstest.TwilioMessage{URL: publicURL, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	h.Set(providers.TwilioSignatureSettingsHeader, " Key = KS-old , algorithm = hmac_sha1 ")
	req := twilioRequest(t, requestURL, string(body))
	req.Header = h
	if got := nhVerify(t, v, req); got.KeyID != "KS-old" {
		t.Errorf("HMAC_SHA1 SharedKey: KeyID %q", got.KeyID)
	}

	empty := newTwilioVerifier(t, providers.TwilioOptions{BaseURL: "https://hooks.example.com"}, nhSecrets("blank", ""))
	requestURL, body, h, _ = webhookstest.SignTwilio("x", webhookstest.TwilioMessage{URL: publicURL, Params: params})
	req = twilioRequest(t, requestURL, string(body))
	req.Header = h
	nhReject(t, empty, req, webhooks.ReasonNoCredentials)

	down := newTwilioVerifier(t, providers.TwilioOptions{BaseURL: "https://hooks.example.com"}, nhErrResolver)
	if _, err := down.Verify(context.Background(), nhRoute, req); err == nil || errors.Is(err, webhooks.ReasonNoCredentials) {
		t.Errorf("failing resolver: %v, want a non-rejection error", err)
	} else if _, ok := errors.AsType[*webhooks.VerificationError](err); ok {
		t.Errorf("failing resolver gave a rejection: %v", err)
	}
}

func TestTwilioEventIDAndType(t *testing.T) {
	t.Parallel()
	const publicURL = "https://hooks.example.com/webhooks/twilio"
	status := url.Values{"MessageSid": {"SM123"}, "MessageStatus": {"delivered"}, "AccountSid": {"AC1"}}
	opts := providers.TwilioOptions{
		BaseURL:         "https://hooks.example.com",
		EventIDHeader:   providers.TwilioIdempotencyTokenHeader,
		EventIDParams:   [][]string{{"CallSid", "CallStatus"}, {"MessageSid", "MessageStatus"}},
		EventTypeParams: []string{"CallStatus", "MessageStatus"},
	}
	v := newTwilioVerifier(t, opts, webhooks.StaticSecrets("tok"))
	verify := func(msg webhookstest.TwilioMessage) webhooks.Verification {
		t.Helper()
		msg.URL = publicURL
		requestURL, body, h, err := webhookstest.SignTwilio("tok", msg)
		if err != nil {
			t.Fatal(err)
		}
		req := twilioRequest(t, requestURL, string(body))
		req.Header, req.Method = h, msg.Method
		return nhVerify(t, v, req)
	}
	if got := verify(webhookstest.TwilioMessage{Params: status, IdempotencyToken: "idem-1"}); got.EventID != "idem-1" || got.EventType != "delivered" {
		t.Errorf("with token: %+v", got)
	}
	if got := verify(webhookstest.TwilioMessage{Params: status}); got.EventID != "SM123:delivered" {
		t.Errorf("from params: %q", got.EventID)
	}
	other := url.Values{"From": {"+1"}, "Body": {"hi"}}
	if got := verify(webhookstest.TwilioMessage{Params: other}); got.EventID != bodyID([]byte("BodyhiFrom+1")) {
		t.Errorf("default: %q", got.EventID)
	}
	// A GET carries its parameters in the query.
	get := verify(webhookstest.TwilioMessage{Method: http.MethodGet, Params: url.Values{"CallSid": {"CA9"}, "CallStatus": {"ringing"}}})
	if get.EventID != "CA9:ringing" || get.EventType != "ringing" {
		t.Errorf("GET: %+v", get)
	}

	// Without EventIDHeader a replay with a fresh token is the same event.
	plain := newTwilioVerifier(t, providers.TwilioOptions{BaseURL: "https://hooks.example.com"}, webhooks.StaticSecrets("tok"))
	requestURL, body, h, err := webhookstest.SignTwilio("tok", webhookstest.TwilioMessage{URL: publicURL, Params: other, IdempotencyToken: "a"})
	if err != nil {
		t.Fatal(err)
	}
	req := twilioRequest(t, requestURL, string(body))
	req.Header = h
	first := nhVerify(t, plain, req)
	req.Header.Set(providers.TwilioIdempotencyTokenHeader, "b")
	if again := nhVerify(t, plain, req); again.EventID != first.EventID {
		t.Errorf("a fresh idempotency token changed the default ID")
	}
}

func TestTwilioThroughGateway(t *testing.T) {
	t.Parallel()
	v := newTwilioVerifier(t, providers.TwilioOptions{BaseURL: "https://hooks.example.com"}, webhooks.TenantSecrets(map[string][]string{"tenant-1": {"the-auth-token"}}))
	gw, inbox, _ := nhGateway(t, "twilio", v, nil)
	msg := webhookstest.TwilioMessage{
		URL:    "https://hooks.example.com/webhooks/twilio/tenant-1?source=sms",
		Params: url.Values{"MessageSid": {"SM1"}, "MessageStatus": {"delivered"}, "Body": {"a + b = c & d"}},
	}
	for i, want := range []int{http.StatusAccepted, http.StatusOK} { // a replay is a duplicate
		rec := httptest.NewRecorder()
		gw.ServeHTTP(rec, webhookstest.NewTwilioRequest(t, "the-auth-token", msg))
		if rec.Code != want {
			t.Fatalf("request %d: status %d %s, want %d", i, rec.Code, rec.Body, want)
		}
	}
	jsonMsg := webhookstest.TwilioMessage{URL: "https://hooks.example.com/webhooks/twilio/tenant-1", JSON: []byte(`{"MessageSid":"SM2"}`)}
	rec := httptest.NewRecorder()
	gw.ServeHTTP(rec, webhookstest.NewTwilioRequest(t, "the-auth-token", jsonMsg))
	if rec.Code != http.StatusAccepted {
		t.Fatalf("JSON: status %d %s", rec.Code, rec.Body)
	}
	item, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: "twilio", Tenant: "tenant-1", EventID: bodyID(jsonMsg.JSON)})
	if err != nil || item.KeyID != "tenant:tenant-1:0" {
		t.Fatalf("JSON item %+v, %v", item, err)
	}
	rec = httptest.NewRecorder()
	gw.ServeHTTP(rec, webhookstest.NewTwilioRequest(t, "not-the-token", msg))
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("wrong token: status %d", rec.Code)
	}
}

// TestTwilioGETThroughGateway: a Receiver serves Twilio's GET deliveries
// (webhooks configured for GET, signed over the URL with its query), the
// verifier's and the catalog entry's alike: a signed GET is stored (its
// event ID the SHA-256 of the signed query parameters), its replay is a
// duplicate, and a changed, added or dropped query parameter, a wrong
// token, a missing or repeated signature are refused; a GET to another
// provider's path is still 405. Mutation: the Receiver answers every GET
// without a GETDeliverer 405; it stores no GET event (the challenge-only
// guard); the entry's preset refuses GETs.
func TestTwilioGETThroughGateway(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		v    webhooks.Verifier
	}{
		{"verifier", newTwilioVerifier(t, providers.TwilioOptions{BaseURL: "https://hooks.example.com"}, webhooks.StaticSecrets("the-auth-token"))},
		{"catalog entry", catalogTwilio(t)},
	} {
		t.Run(c.name, func(t *testing.T) {
			gw, inbox, _ := nhGateway(t, "twilio", c.v, nil)
			params := url.Values{"CallSid": {"CA1"}, "CallStatus": {"ringing"}, "From": {"+15550100"}}
			msg := webhookstest.TwilioMessage{Method: http.MethodGet, URL: "https://hooks.example.com/webhooks/twilio", Params: params}
			for i, want := range []int{http.StatusAccepted, http.StatusOK} {
				rec := httptest.NewRecorder()
				gw.ServeHTTP(rec, webhookstest.NewTwilioRequest(t, "the-auth-token", msg))
				if rec.Code != want {
					t.Fatalf("GET %d: status %d %s; want %d", i, rec.Code, rec.Body, want)
				}
			}
			id := bodyID([]byte(webhookstest.TwilioParams(params)))
			if _, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: "twilio", EventID: id}); err != nil {
				t.Fatalf("the GET delivery is not stored as %s: %v", id, err)
			}
			signed := webhookstest.NewTwilioRequest(t, "the-auth-token", msg)
			for name, edit := range map[string]func(r *http.Request){
				"changed parameter": func(r *http.Request) { r.URL.RawQuery = strings.Replace(r.URL.RawQuery, "ringing", "completed", 1) },
				"added parameter":   func(r *http.Request) { r.URL.RawQuery += "&Extra=1" },
				"dropped parameter": func(r *http.Request) { r.URL.RawQuery = strings.Replace(r.URL.RawQuery, "CallSid=CA1&", "", 1) },
				"no signature":      func(r *http.Request) { r.Header.Del(providers.TwilioSignatureHeader) },
				"two signatures": func(r *http.Request) {
					r.Header.Add(providers.TwilioSignatureHeader, r.Header.Get(providers.TwilioSignatureHeader))
				},
			} {
				r := signed.Clone(context.Background())
				u := *signed.URL
				r.URL = &u
				r.Header = signed.Header.Clone()
				edit(r)
				rec := httptest.NewRecorder()
				gw.ServeHTTP(rec, r)
				if rec.Code != http.StatusUnauthorized {
					t.Errorf("GET, %s: status %d %s; want 401", name, rec.Code, rec.Body)
				}
			}
			rec := httptest.NewRecorder()
			gw.ServeHTTP(rec, webhookstest.NewTwilioRequest(t, "not-the-token", msg))
			if rec.Code != http.StatusUnauthorized {
				t.Errorf("GET, wrong token: status %d; want 401", rec.Code)
			}
		})
	}
	// Another provider's GET is refused before anything is read.
	plain, err := providers.New("stripe", providers.Config{Secrets: webhooks.StaticSecrets("whsec_x")})
	if err != nil {
		t.Fatal(err)
	}
	gw, _, _ := nhGateway(t, "plain", plain, nil)
	rec := httptest.NewRecorder()
	gw.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/webhooks/plain?CallSid=CA1", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET to a provider that is no GETDeliverer: status %d; want 405", rec.Code)
	}
}

// catalogTwilio returns the catalog's twilio entry for the public URL
// https://hooks.example.com and the auth token "the-auth-token".
func catalogTwilio(t *testing.T) webhooks.Verifier {
	t.Helper()
	v, err := providers.New("twilio", providers.Config{PublicURL: "https://hooks.example.com", Secrets: webhooks.StaticSecrets("the-auth-token")})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestTwilioPublicURLErrors(t *testing.T) {
	t.Parallel()
	down := newTwilioVerifier(t, providers.TwilioOptions{PublicURL: func(*webhooks.Request) (string, error) {
		return "", errors.New("no route")
	}}, webhooks.StaticSecrets("tok"))
	req := nhRequest("", "X-Twilio-Signature", webhookstest.TwilioSignature("tok", "https://a/b", nil))
	if _, err := down.Verify(context.Background(), nhRoute, req); err == nil {
		t.Error("PublicURL error ignored")
	} else if _, ok := errors.AsType[*webhooks.VerificationError](err); ok {
		t.Errorf("PublicURL error became a rejection: %v", err)
	}
	refuse := newTwilioVerifier(t, providers.TwilioOptions{PublicURL: func(*webhooks.Request) (string, error) {
		return "", webhooks.Reject(webhooks.ReasonMalformedHeader, "unknown host")
	}}, webhooks.StaticSecrets("tok"))
	nhReject(t, refuse, req, webhooks.ReasonMalformedHeader)
	relative := newTwilioVerifier(t, providers.TwilioOptions{PublicURL: func(*webhooks.Request) (string, error) { return "/b", nil }}, webhooks.StaticSecrets("tok"))
	if _, err := relative.Verify(context.Background(), nhRoute, req); err == nil {
		t.Error("a relative public URL was accepted")
	}
	base := newTwilioVerifier(t, providers.TwilioOptions{BaseURL: "https://a"}, webhooks.StaticSecrets("tok"))
	if _, err := base.Verify(context.Background(), nhRoute, req); err == nil {
		t.Error("a request without URL was accepted")
	}
	// A bodiless request signs the URL alone.
	req.URL = &url.URL{Path: "/b"}
	nhVerify(t, base, req)
}

func TestNewTwilioVerifierRejectsInvalidOptions(t *testing.T) {
	t.Parallel()
	pub := func(*webhooks.Request) (string, error) { return "", nil }
	for name, opts := range map[string]providers.TwilioOptions{
		"no URL":             {},
		"both URLs":          {BaseURL: "https://a", PublicURL: pub},
		"relative base":      {BaseURL: "/webhooks"},
		"ftp base":           {BaseURL: "ftp://a"},
		"base with query":    {BaseURL: "https://a/?x=1"},
		"base with fragment": {BaseURL: "https://a/#x"},
		"base with user":     {BaseURL: "https://u:p@a"},
		"bad ID header":      {BaseURL: "https://a", EventIDHeader: "I Token"},
		"empty param group":  {BaseURL: "https://a", EventIDParams: [][]string{{}}},
		"empty param name":   {BaseURL: "https://a", EventIDParams: [][]string{{"CallSid", ""}}},
		"empty type param":   {BaseURL: "https://a", EventTypeParams: []string{""}},
	} {
		if _, err := providers.NewTwilioVerifier(opts, webhooks.StaticSecrets("x")); err == nil {
			t.Errorf("%s: NewTwilioVerifier succeeded", name)
		}
	}
	if _, err := providers.NewTwilioVerifier(providers.TwilioOptions{BaseURL: "https://a"}, nil); err == nil {
		t.Error("nil creds accepted")
	}
	if _, err := providers.NewTwilioVerifier(providers.TwilioOptions{BaseURL: "https://a"}, webhooks.StaticSecrets("")); err == nil {
		t.Error("an empty static auth token accepted")
	}
	if _, err := providers.NewTwilioVerifier(providers.TwilioOptions{BaseURL: "https://a", SharedKeys: webhooks.StaticSecrets()}, webhooks.StaticSecrets("t")); err == nil {
		t.Error("empty static SharedKeys accepted")
	}
}
