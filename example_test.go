package webhooks_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/providers"
)

// The quick start: verify GitHub webhooks, store them in an inbox, and handle
// them on a processor. A real host mounts the gateway on its own server
// (mux.Handle("/webhooks/", receiver)) and reads the secret from its configuration.
func Example() {
	inbox, replay := memstore.NewInbox(), memstore.NewReplay()

	github, err := webhooks.NewHMACVerifier(providers.GitHubOptions(),
		webhooks.StaticSecrets("It's a Secret to Everybody"))
	if err != nil {
		log.Fatal(err)
	}
	registry := webhooks.NewRegistry()
	registry.MustRegister("github", github)

	handled := make(chan webhooks.Event, 1)
	mux := webhooks.NewMux()
	mux.MustHandleFunc("ping", func(ctx context.Context, ev webhooks.Event) error {
		handled <- ev // your business logic; return an error to retry
		return nil
	})

	proc, err := webhooks.NewProcessor(inbox, mux)
	if err != nil {
		log.Fatal(err)
	}
	gw, err := webhooks.NewReceiver(registry, inbox, replay, webhooks.WithWaker(proc))
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- proc.Run(ctx) }()
	srv := httptest.NewServer(gw)
	defer srv.Close()

	// GitHub's documented example delivery.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/webhooks/github", strings.NewReader("Hello, World!"))
	req.Header.Set("X-Hub-Signature-256", "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17")
	req.Header.Set("X-GitHub-Event", "ping")
	req.Header.Set("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Status)

	ev := <-handled
	fmt.Println("handled", ev.Provider, ev.Type, ev.ID)

	stop()
	if err := <-done; err != nil {
		log.Fatal(err)
	}
	// Output:
	// 202 Accepted
	// handled github ping 72d3162e-cc78-11e3-81ab-4c9367dc0958
}
