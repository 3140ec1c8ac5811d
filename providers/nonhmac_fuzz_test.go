package providers

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/hookinbox/webhooks"
)

// Rejection details of the parsers below are fixed strings: a detail that
// depended on the input could echo it (and a secret with it).

var twilioSettingsDetails = map[string]bool{
	"header X-Twilio-Webhooks-Signature-Settings has an item without \"=\"":                               true,
	"header X-Twilio-Webhooks-Signature-Settings names more than one key":                                 true,
	"header X-Twilio-Webhooks-Signature-Settings names more than one algorithm":                           true,
	"header X-Twilio-Webhooks-Signature-Settings names an algorithm other than HMAC_SHA1 and HMAC_SHA256": true,
	"header X-Twilio-Webhooks-Signature-Settings names no algorithm":                                      true,
}

func FuzzTwilioSignatureSettings(f *testing.F) {
	for _, s := range []string{
		"key=KS123,algorithm=HMAC_SHA256",
		"algorithm=hmac_sha1",
		" key = a , algorithm = HMAC_SHA256 , future=1 ",
		"key=a,key=b,algorithm=HMAC_SHA256",
		"algorithm=HMAC_SHA256,algorithm=HMAC_SHA1",
		"algorithm",
		"key=,algorithm=",
		"=,=",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		got, rej := parseTwilioSettings(value)
		if rej != nil {
			if rej.Reason != webhooks.ReasonMalformedHeader || !twilioSettingsDetails[rej.Detail] {
				t.Fatalf("unexpected rejection %v", rej)
			}
			return
		}
		if got.algorithm.name != twilioSHA1.name && got.algorithm.name != twilioSHA256.name {
			t.Fatalf("algorithm %q", got.algorithm.name)
		}
		if !strings.Contains(strings.ToUpper(value), got.algorithm.name) {
			t.Fatalf("%q parsed as %s", value, got.algorithm.name)
		}
	})
}

func FuzzTwilioPortVariant(f *testing.F) {
	for _, s := range []string{
		"https://example.com/a?b=c",
		"https://example.com:443/a",
		"http://example.com:80",
		"http://example.com:8080/",
		"https://user:pa@ss@example.com/x",
		"https://[2001:db8::1]/x",
		"https://[2001:db8::1]:443#f",
		"HTTPS://Example.COM?x",
		"https://2001:db8::1/x",
		"https://",
		"ftp://example.com/",
		"https://host:/x",
		"https://[::1/x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		alt, ok := twilioPortVariant(raw)
		if !ok {
			return
		}
		if alt == raw {
			t.Fatalf("variant of %q is itself", raw)
		}
		back, ok := twilioPortVariant(alt)
		if !ok || back != raw {
			t.Fatalf("variant of %q is %q, whose variant is %q (%v)", raw, alt, back, ok)
		}
	})
}

var basicAuthDetails = map[string]bool{
	"header Authorization does not use the Basic scheme":                                    true,
	"header Authorization has no Basic credentials":                                         true,
	"header Authorization does not hold base64 Basic credentials":                           true,
	"the Basic credentials in header Authorization have no colon between user and password": true,
}

func FuzzBasicAuthHeader(f *testing.F) {
	for _, s := range []string{
		"Basic " + base64.StdEncoding.EncodeToString([]byte("user:pass")),
		"basic " + base64.RawURLEncoding.EncodeToString([]byte("u:p:q")),
		"Basic  \tdXNlcjpwYXNz",
		"Basic",
		"Basic dXNlcnBhc3M=",
		"Basic dXNlcjpwYXNz\n",
		"Bearer x",
		"Basic ====",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		cred, rej := parseBasicAuth(value)
		if rej != nil {
			if !basicAuthDetails[rej.Detail] || (rej.Reason != webhooks.ReasonMalformedHeader && rej.Reason != webhooks.ReasonMissingSignature) {
				t.Fatalf("unexpected rejection %v", rej)
			}
			return
		}
		if bytes.IndexByte(cred, ':') < 0 {
			t.Fatalf("credentials %q without a colon accepted", cred)
		}
	})
}

func FuzzBearerScheme(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer\tabc", "Bearer", "Bearerabc", "Basic abc", "Bearer  a b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		token, rej := cutScheme(value, "Bearer", "Authorization")
		if rej != nil {
			switch rej.Detail {
			case "header Authorization has no token after Bearer", "header Authorization does not use the Bearer scheme":
			default:
				t.Fatalf("unexpected rejection %v", rej)
			}
			return
		}
		if !strings.HasSuffix(value, token) || strings.HasPrefix(token, " ") || strings.HasPrefix(token, "\t") {
			t.Fatalf("token %q from %q", token, value)
		}
	})
}

// FuzzTwilioVerify feeds arbitrary requests to a Twilio verifier: it must
// never panic, never answer anything but a rejection, and never accept a
// request not signed with the token.
func FuzzTwilioVerify(f *testing.F) {
	f.Add("0/KCTR6DLpKmkAf8muzZqo1nDgQ=", "", "/myapp.php", "foo=1&bar=2", formMediaType, "CallSid=CA1&Digits=1")
	f.Add("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "key=a,algorithm=HMAC_SHA256", "/a", "bodySHA256="+strings.Repeat("a", 64), "application/json", "{}")
	f.Add("x", "algorithm=HMAC_MD5", "/%zz", "a=%zz", "", "")
	f.Add("0/KCTR6DLpKmkAf8muzZqo1nDgQ=", "", "/", "", "application/x-www-form-urlencoded; charset=utf-8", "a=%zz&b")
	v, err := NewTwilioVerifier(TwilioOptions{
		BaseURL:       "https://hooks.example.com",
		SharedKeys:    webhooks.StaticSecrets("shared"),
		EventIDParams: [][]string{{"CallSid", "Digits"}},
	}, webhooks.StaticSecrets("12345"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, sig, settings, path, query, contentType, body string) {
		h := http.Header{}
		h.Set(TwilioSignatureHeader, sig)
		if settings != "" {
			h.Set(TwilioSignatureSettingsHeader, settings)
		}
		h.Set("Content-Type", contentType)
		req := &webhooks.Request{Method: http.MethodPost, URL: &url.URL{Path: path, RawQuery: query}, Header: h, Body: []byte(body)}
		_, err := v.Verify(context.Background(), webhooks.Route{Provider: "twilio"}, req)
		if err == nil {
			t.Fatalf("an unsigned request verified: %q", sig)
		}
		var vErr *webhooks.VerificationError
		if !errors.As(err, &vErr) && !strings.Contains(err.Error(), "public URL") {
			t.Fatalf("not a rejection: %v", err)
		}
		if strings.Contains(err.Error(), "12345") || strings.Contains(err.Error(), "shared") {
			t.Fatalf("error %q contains a secret", err)
		}
	})
}

const formMediaType = "application/x-www-form-urlencoded"
