package webhookstest_test

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"net/url"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// A host tests its Discord interactions endpoint: a generated key pair
// stands in for the app's, the public key is what the host registers, and
// the requests are signed as Discord signs them. The signed PING is
// answered with a PONG and stored nowhere; a command is accepted. In a test,
// NewEd25519Request(t, …) signs and builds the request in one call.
func ExampleSignEd25519() {
	keys := webhookstest.NewEd25519KeyPair()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := webhookstest.NewClock(now)

	opts := providers.DiscordInteractionsOptions()
	opts.Clock = clock
	verifier, err := providers.NewEd25519Verifier(opts, webhooks.StaticSecrets(keys.PublicKey(providers.Ed25519KeyHex)))
	if err != nil {
		fmt.Println(err)
		return
	}
	resolver := webhooks.NewRegistry()
	resolver.MustRegister("discord", verifier)
	gateway, err := webhooks.NewReceiver(resolver, memstore.NewInbox(), webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithClock(clock))
	if err != nil {
		fmt.Println(err)
		return
	}

	for _, body := range []string{
		`{"id":"1311111111111111111","type":1}`,
		`{"id":"1312222222222222222","type":2,"data":{"name":"blep"}}`,
	} {
		msg := webhookstest.SignedMessage{Timestamp: now, Body: []byte(body)}
		h, err := webhookstest.SignEd25519(providers.DiscordInteractionsOptions(), keys.Private, msg)
		if err != nil {
			fmt.Println(err)
			return
		}
		req := httptest.NewRequest("POST", "/webhooks/discord", bytes.NewReader(msg.Body))
		req.Header = h
		rec := httptest.NewRecorder()
		gateway.ServeHTTP(rec, req)
		fmt.Print(rec.Code, " ", rec.Body.String(), "\n")
	}
	// Output:
	// 200 {"type":1}
	// 202 {"status":"accepted","event_id":"1312222222222222222"}
}

// A Twilio status callback, signed with the auth token as Twilio signs it:
// the verifier is told the public base URL, as it would be behind a proxy.
func ExampleSignTwilio() {
	verifier, err := providers.NewTwilioVerifier(
		providers.TwilioOptions{
			BaseURL:         "https://hooks.example.com",
			EventIDParams:   [][]string{{"MessageSid", "MessageStatus"}},
			EventTypeParams: []string{"MessageStatus"},
		},
		webhooks.StaticSecrets("test-auth-token"))
	if err != nil {
		fmt.Println(err)
		return
	}
	resolver := webhooks.NewRegistry()
	resolver.MustRegister("twilio", verifier)
	gateway, err := webhooks.NewReceiver(resolver, memstore.NewInbox(), webhooks.WithReplayStore(memstore.NewReplay()))
	if err != nil {
		fmt.Println(err)
		return
	}

	requestURL, body, h, err := webhookstest.SignTwilio("test-auth-token", webhookstest.TwilioMessage{
		URL:    "https://hooks.example.com/webhooks/twilio",
		Params: url.Values{"MessageSid": {"SM123"}, "MessageStatus": {"delivered"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	req := httptest.NewRequest("POST", requestURL, bytes.NewReader(body))
	req.Header = h
	rec := httptest.NewRecorder()
	gateway.ServeHTTP(rec, req)
	fmt.Print(rec.Code, " ", rec.Body.String())
	// Output:
	// 202 {"status":"accepted","event_id":"SM123:delivered"}
}

// A GitLab push, sent with the webhook's secret token and GitLab's
// headers.
func ExampleSignToken() {
	verifier, err := providers.NewTokenVerifier(providers.GitLabTokenOptions(), webhooks.StaticSecrets("test-token"))
	if err != nil {
		fmt.Println(err)
		return
	}
	resolver := webhooks.NewRegistry()
	resolver.MustRegister("gitlab", verifier)
	gateway, err := webhooks.NewReceiver(resolver, memstore.NewInbox(), webhooks.WithReplayStore(memstore.NewReplay()))
	if err != nil {
		fmt.Println(err)
		return
	}

	msg := webhookstest.TokenMessage{
		ID:   "f5e5f430-f57b-4e6e-9fac-d9128cd7232f",
		Type: "Push Hook",
		Body: []byte(`{"object_kind":"push"}`),
	}
	h, err := webhookstest.SignToken(providers.GitLabTokenOptions(), "test-token", msg)
	if err != nil {
		fmt.Println(err)
		return
	}
	req := httptest.NewRequest("POST", "/webhooks/gitlab", bytes.NewReader(msg.Body))
	req.Header = h
	rec := httptest.NewRecorder()
	gateway.ServeHTTP(rec, req)
	fmt.Print(rec.Code, " ", rec.Body.String())
	// Output:
	// 202 {"status":"accepted","event_id":"f5e5f430-f57b-4e6e-9fac-d9128cd7232f"}
}
