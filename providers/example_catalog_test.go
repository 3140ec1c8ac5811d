package providers_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/providers"
)

// Providers are wired by catalog name. Meta checks the endpoint with a GET
// carrying the verify token the host chose; the verifier answers it with
// the challenge, and the Receiver stores nothing.
func ExampleNew() {
	meta, err := providers.New("meta", providers.Config{
		Secrets:     webhooks.StaticSecrets("the-app-secret"),
		VerifyToken: "the-verify-token",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	registry := webhooks.NewRegistry()
	registry.MustRegister("meta", meta)
	receiver, err := webhooks.NewReceiver(registry, memstore.NewInbox(), webhooks.WithReplayStore(memstore.NewReplay()))
	if err != nil {
		fmt.Println(err)
		return
	}

	req := httptest.NewRequest(http.MethodGet, "/webhooks/meta?hub.mode=subscribe&hub.verify_token=the-verify-token&hub.challenge=1158201444", nil)
	rec := httptest.NewRecorder()
	receiver.ServeHTTP(rec, req)
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())

	e, _ := providers.Lookup("meta")
	fmt.Println(e.SecretEnv(), e.VerifyTokenEnv())
	// Output:
	// 200 text/plain; charset=utf-8 1158201444
	// META_WEBHOOK_SECRET META_WEBHOOK_VERIFY_TOKEN
}

// Asana hands each webhook's secret over in an unauthenticated handshake
// while the host's call that creates the webhook is in flight. The host
// expects it, creates the webhook, and confirms once that call succeeded:
// only then does the secret verify deliveries.
func ExampleHandshakeSecrets() {
	secrets := providers.NewHandshakeSecrets(providers.HandshakeSecretsOptions{})
	asana, err := providers.New("asana", providers.Config{Secrets: secrets})
	if err != nil {
		fmt.Println(err)
		return
	}
	registry := webhooks.NewRegistry()
	registry.MustRegister("asana", asana)
	receiver, err := webhooks.NewReceiver(registry, memstore.NewInbox(), webhooks.WithReplayStore(memstore.NewReplay()))
	if err != nil {
		fmt.Println(err)
		return
	}

	pending, err := secrets.Expect(webhooks.Route{Provider: "asana"}, time.Minute)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pending.Discard() // when the create call fails; nothing once confirmed

	// createAsanaWebhook(ctx, "https://hooks.example.com/webhooks/asana"):
	// Asana sends its handshake during the call.
	req := httptest.NewRequest(http.MethodPost, "/webhooks/asana", nil)
	req.Header.Set("X-Hook-Secret", "the-webhook-secret")
	rec := httptest.NewRecorder()
	receiver.ServeHTTP(rec, req)
	fmt.Println(rec.Code)

	// The call returned the new webhook: keep its secret.
	if err := pending.Confirm(); err != nil {
		fmt.Println(err) // delete the webhook at Asana and create it again
		return
	}
	fmt.Println(secrets)
	// Output:
	// 200
	// providers.HandshakeSecrets{1 secrets}
}
