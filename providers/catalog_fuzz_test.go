package providers_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// FuzzCatalogVerifiers gives every catalog verifier arbitrary bodies,
// signature headers and queries: none may panic, and none may accept a
// request its credential did not sign, except the schemes whose
// credential travels in the request itself.
func FuzzCatalogVerifiers(f *testing.F) {
	for _, seed := range [][3]string{
		{`{"id":"evt_1","type":"x"}`, "t=1,v1=00", ""},
		{`{"signature":{"timestamp":"1","token":"t","signature":"00"},"event-data":{"id":"1"}}`, "sha256=AA==", "validationToken=x"},
		{`{"Type":"Notification","MessageId":"1","TopicArn":"arn:aws:sns:x:1:t","SignatureVersion":"2","Signature":"AA==","SigningCertURL":"https://sns.x.amazonaws.com/c.pem","Timestamp":"2025-01-01T00:00:00Z"}`, "", ""},
		{`{"value":[{"clientState":"nope"}]}`, "v0=00", "hub.mode=subscribe&hub.challenge=1"},
		{`[{"event":"delivered"}]`, "MEUCIQ==", "crc_token=a"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	const secret = "fuzz-secret-0123456789"
	verifiers := map[string]webhooks.Verifier{}
	for _, name := range providers.Names() {
		cred := secret
		switch name {
		case "discord", "discord-events":
			cred = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
		case "standardwebhooks-ed25519":
			cred = "whpk_11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="
		case "sendgrid":
			cred = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEEDr2LjtURuePQzplybdC+u4CwrqDqBaWjcMMsTbhdbcwHBcepxo7yAQGhHPTnlvFYPAZFceEu/1FwCM/QmGUhA=="
		case "sns":
			cred = "arn:aws:sns:x:1:t"
		case "msteams", "airtable", "standardwebhooks", "svix", "gitlab-signing", "clerk", "resend", "openai", "replicate":
			cred = "whsec_ZnV6ei1zZWNyZXQtMDEyMzQ1Njc4OWFiY2RlZg=="
			if name == "msteams" || name == "airtable" {
				cred = "ZnV6ei1zZWNyZXQtMDEyMzQ1Njc4OWFiY2RlZg=="
			}
		case "telegram":
			cred = "fuzz-secret_0123456789"
		}
		v, err := providers.New(name, providers.Config{Secrets: webhooks.StaticSecrets(cred), PublicURL: "https://hooks.example.com", VerifyToken: "vt",
			Clock: webhookstest.NewClock(time.Unix(1735689600, 0))})
		if err != nil {
			f.Fatalf("%s: %v", name, err)
		}
		verifiers[name] = v
	}
	headers := []string{"Stripe-Signature", "X-Hub-Signature-256", "X-Hub-Signature", "Webhook-Signature", "X-Slack-Signature", "Authorization",
		"X-Twilio-Email-Event-Webhook-Signature", "Box-Signature-Primary", "X-Hook-Secret", "X-Okta-Verification-Challenge", "X-Telegram-Bot-Api-Secret-Token"}
	f.Fuzz(func(t *testing.T, body, sig, query string) {
		for name, v := range verifiers {
			for _, method := range []string{http.MethodPost, http.MethodGet} {
				h := http.Header{"Content-Type": {"application/json"}}
				for _, k := range headers {
					h.Set(k, sig)
				}
				req := &webhooks.Request{Method: method, URL: &url.URL{Path: "/webhooks/" + name, RawQuery: query}, Header: h, Body: []byte(body)}
				got, err := v.Verify(context.Background(), webhooks.Route{Provider: name}, req)
				if err != nil || got.Handshake != nil {
					continue
				}
				switch name {
				case "gitlab", "okta", "telegram", "figma", "msgraph":
					// Token schemes: the fuzzer may send the token.
				default:
					t.Fatalf("%s accepted a %s request nobody signed: body %q, signature %q", name, method, body, sig)
				}
			}
		}
	})
}
