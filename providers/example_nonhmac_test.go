package providers_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// Twilio signs the public URL it called and the form parameters. Behind a
// proxy the service receives another host, so the verifier is given the
// public base URL. The request is the worked example of Twilio's webhook
// security guide (auth token 12345).
func ExampleNewTwilioVerifier() {
	verifier, err := providers.NewTwilioVerifier(
		providers.TwilioOptions{BaseURL: "https://mycompany.com"},
		webhooks.StaticSecrets("12345"))
	if err != nil {
		fmt.Println(err)
		return
	}
	req := &webhooks.Request{
		Method: http.MethodPost,
		URL:    &url.URL{Path: "/myapp.php", RawQuery: "foo=1&bar=2"},
		Header: http.Header{
			"X-Twilio-Signature": {"0/KCTR6DLpKmkAf8muzZqo1nDgQ="},
			"Content-Type":       {"application/x-www-form-urlencoded"},
		},
		Body: []byte("CallSid=CA1234567890ABCDE&Caller=%2B12349013030&Digits=1234&From=%2B12349013030&To=%2B18005551212"),
	}
	v, err := verifier.Verify(context.Background(), webhooks.Route{Provider: "twilio"}, req)
	fmt.Println(v.KeyID, strings.HasPrefix(v.EventID, "sha256:"), err)

	req.Body = []byte(strings.Replace(string(req.Body), "Digits=1234", "Digits=9999", 1))
	_, err = verifier.Verify(context.Background(), webhooks.Route{Provider: "twilio"}, req)
	fmt.Println(errors.Is(err, webhooks.ReasonBadSignature))
	// Output:
	// static:0 true <nil>
	// true
}

// Discord signs interactions with the app's Ed25519 key; the verifier needs
// only the public key from the developer portal. A signed PING is answered
// by the verifier itself (the Gateway writes the answer and stores
// nothing). The key and signature are those of testdata/discord.
func ExampleNewEd25519Verifier() {
	signedAt := time.Unix(1735689600, 0)
	opts := providers.DiscordInteractionsOptions()
	opts.Clock = webhookstest.NewClock(signedAt.Add(time.Second))
	verifier, err := providers.NewEd25519Verifier(opts,
		webhooks.StaticSecrets("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"))
	if err != nil {
		fmt.Println(err)
		return
	}
	req := &webhooks.Request{
		Method: http.MethodPost,
		Header: http.Header{
			"X-Signature-Ed25519":   {"af2e076bb530b1bbc581e8feca0565506591662991d3ea339dfd1c3029dee72d778c743d2c77054038bc2bac6a4c5d0fa06d4025febefa23ab4c822c21d8760b"},
			"X-Signature-Timestamp": {"1735689600"},
		},
		Body: []byte(`{"application_id":"1234567890","id":"1311111111111111111","token":"aW50ZXJhY3Rpb246MTMxMTExMTExMTExMTExMTExMTpGQUtFVE9LRU4","type":1,"user":{"id":"53908232506183680","username":"mason"},"version":1}`),
	}
	v, err := verifier.Verify(context.Background(), webhooks.Route{Provider: "discord"}, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(v.Handshake.StatusCode, string(v.Handshake.Body))
	// Output:
	// 200 {"type":1}
}

// GitLab sends the webhook's secret token itself in X-Gitlab-Token. Two
// tokens are live while the token is being changed; the verification names
// the one that matched.
func ExampleNewTokenVerifier() {
	verifier, err := providers.NewTokenVerifier(
		providers.GitLabTokenOptions(),
		webhooks.StaticSecrets("old-token", "new-token"))
	if err != nil {
		fmt.Println(err)
		return
	}
	req := &webhooks.Request{
		Method: http.MethodPost,
		Header: http.Header{
			"X-Gitlab-Token":  {"new-token"},
			"X-Gitlab-Event":  {"Push Hook"},
			"Idempotency-Key": {"f5e5f430-f57b-4e6e-9fac-d9128cd7232f"},
		},
		Body: []byte(`{"object_kind":"push"}`),
	}
	v, err := verifier.Verify(context.Background(), webhooks.Route{Provider: "gitlab"}, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(v.EventID, v.EventType, v.KeyID)
	// Output:
	// f5e5f430-f57b-4e6e-9fac-d9128cd7232f Push Hook static:1
}

// A provider that signs nothing, accepted on purpose. Stored items carry
// KeyID INSECURE-UNSIGNED, so nobody mistakes them for verified ones.
func ExampleInsecureAcceptUnsigned() {
	verifier, err := providers.InsecureAcceptUnsigned(providers.UnsignedOptions{
		Event: webhooks.EventSource{IDPath: "event.id", TypePath: "event.kind"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	req := &webhooks.Request{
		Method: http.MethodPost,
		Header: http.Header{},
		Body:   []byte(`{"event":{"id":"42","kind":"contact.updated"}}`),
	}
	v, err := verifier.Verify(context.Background(), webhooks.Route{Provider: "legacy-crm"}, req)
	fmt.Println(v.EventID, v.EventType, v.KeyID, err)
	// Output:
	// 42 contact.updated INSECURE-UNSIGNED <nil>
}
