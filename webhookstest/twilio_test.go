package webhookstest_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// twilioDocParams are the parameters of the worked example in Twilio's
// webhook security guide (testdata/twilio/webhooks-security-example.json in
// the root package).
var twilioDocParams = url.Values{
	"CallSid": {"CA1234567890ABCDE"},
	"Caller":  {"+12349013030"},
	"Digits":  {"1234"},
	"From":    {"+12349013030"},
	"To":      {"+18005551212"},
}

func TestTwilioSignatureDocumentedExample(t *testing.T) {
	t.Parallel()
	if got := webhookstest.TwilioSignature("12345", "https://mycompany.com/myapp.php?foo=1&bar=2", twilioDocParams); got != "0/KCTR6DLpKmkAf8muzZqo1nDgQ=" {
		t.Errorf("TwilioSignature = %s", got)
	}
	_, body, h, err := webhookstest.SignTwilio("12345", webhookstest.TwilioMessage{URL: "https://mycompany.com/myapp.php?foo=1&bar=2", Params: twilioDocParams})
	if err != nil {
		t.Fatal(err)
	}
	if h.Get("X-Twilio-Signature") != "0/KCTR6DLpKmkAf8muzZqo1nDgQ=" || h.Get("Content-Type") != "application/x-www-form-urlencoded" {
		t.Errorf("headers %v", h)
	}
	if parsed, err := url.ParseQuery(string(body)); err != nil || parsed.Encode() != twilioDocParams.Encode() {
		t.Errorf("body %q", body)
	}
}

func TestTwilioParams(t *testing.T) {
	t.Parallel()
	got := webhookstest.TwilioParams(url.Values{"b": {"2", "1", "2"}, "a": {""}, "A": {"x"}})
	if want := "Axab1b2"; got != want {
		t.Errorf("TwilioParams = %q, want %q", got, want)
	}
}

func TestSignTwilioKinds(t *testing.T) {
	t.Parallel()
	// JSON: bodySHA256 is added to the URL, before a fragment.
	requestURL, body, h, err := webhookstest.SignTwilio("tok", webhookstest.TwilioMessage{URL: "https://a.example/x?y=1#rc=2", JSON: []byte(`{"a":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(`{"a":1}`))
	if want := "https://a.example/x?y=1&bodySHA256=" + hex.EncodeToString(sum[:]) + "#rc=2"; requestURL != want {
		t.Errorf("URL %s, want %s", requestURL, want)
	}
	if string(body) != `{"a":1}` || h.Get("Content-Type") != "application/json" || h.Get("X-Twilio-Signature") != webhookstest.TwilioSignature("tok", requestURL, nil) {
		t.Errorf("JSON request %q %v", body, h)
	}

	// GET: parameters in the query, the URL alone signed.
	requestURL, body, h, err = webhookstest.SignTwilio("tok", webhookstest.TwilioMessage{Method: http.MethodGet, URL: "https://a.example/x", Params: url.Values{"CallSid": {"CA1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if requestURL != "https://a.example/x?CallSid=CA1" || len(body) != 0 || h.Get("X-Twilio-Signature") != webhookstest.TwilioSignature("tok", requestURL, nil) {
		t.Errorf("GET %s %q %v", requestURL, body, h)
	}

	// SharedKey: HMAC-SHA-256 and the settings header.
	_, _, h, err = webhookstest.SignTwilio("shared", webhookstest.TwilioMessage{URL: "https://a.example/x", Params: url.Values{"a": {"b"}}, SharedKeyID: "KS1", IdempotencyToken: "idem"})
	if err != nil {
		t.Fatal(err)
	}
	if h.Get(providers.TwilioSignatureSettingsHeader) != "key=KS1,algorithm=HMAC_SHA256" || len(h.Get("X-Twilio-Signature")) != 44 || h.Get(providers.TwilioIdempotencyTokenHeader) != "idem" {
		t.Errorf("SharedKey headers %v", h)
	}

	for name, msg := range map[string]webhookstest.TwilioMessage{
		"relative URL":     {URL: "/x"},
		"ftp URL":          {URL: "ftp://a/x"},
		"JSON with params": {URL: "https://a/x", JSON: []byte("{}"), Params: url.Values{"a": {"b"}}},
		"JSON with GET":    {URL: "https://a/x", JSON: []byte("{}"), Method: http.MethodGet},
		"PUT":              {URL: "https://a/x", Method: http.MethodPut},
	} {
		if _, _, _, err := webhookstest.SignTwilio("tok", msg); err == nil {
			t.Errorf("%s: SignTwilio succeeded", name)
		}
	}
	if _, _, _, err := webhookstest.SignTwilio("", webhookstest.TwilioMessage{URL: "https://a/x"}); err == nil {
		t.Error("an empty secret was accepted")
	}
}

func TestNewTwilioRequestVerifies(t *testing.T) {
	t.Parallel()
	v, err := providers.NewTwilioVerifier(providers.TwilioOptions{BaseURL: "https://hooks.example.com"}, webhooks.StaticSecrets("tok"))
	if err != nil {
		t.Fatal(err)
	}
	for name, msg := range map[string]webhookstest.TwilioMessage{
		"form": {URL: "https://hooks.example.com/t?x=%2F", Params: twilioDocParams},
		"json": {URL: "https://hooks.example.com/t", JSON: []byte(`{"k":"v"}`)},
		"get":  {URL: "https://hooks.example.com/t", Method: http.MethodGet, Params: twilioDocParams},
	} {
		req := webhookstest.NewTwilioRequest(t, "tok", msg)
		body, _ := io.ReadAll(req.Body)
		_, err := v.Verify(context.Background(), webhooks.Route{}, &webhooks.Request{Method: req.Method, URL: req.URL, Header: req.Header, Body: body})
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if !strings.HasPrefix(req.URL.String(), msg.URL) {
			t.Errorf("%s: URL %s", name, req.URL)
		}
	}
}
