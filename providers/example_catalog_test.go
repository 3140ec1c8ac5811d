package providers_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

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
	receiver, err := webhooks.NewReceiver(registry, memstore.NewInbox(), memstore.NewReplay())
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
