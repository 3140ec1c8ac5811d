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
	"github.com/hookinbox/webhooks/webhookstest"
)

// The quick start: verify GitHub webhooks, store them in an inbox, and handle
// them on a processor. A real host mounts the gateway on its own server
// (mux.Handle("/webhooks/", receiver)) and reads the secret from its configuration.
func Example() {
	const secret = "It's a Secret to Everybody"
	inbox, replay := memstore.NewInbox(), memstore.NewReplay()

	github, err := webhooks.NewHMACVerifier(providers.GitHubOptions(), webhooks.StaticSecrets(secret))
	if err != nil {
		log.Fatal(err)
	}
	registry := webhooks.NewRegistry()
	registry.MustRegister("github", github)

	handled := make(chan webhooks.Event, 1)
	mux := webhooks.NewMux()
	mux.MustHandleFunc("push", func(ctx context.Context, ev webhooks.Event) error {
		handled <- ev // your business logic; return an error to retry
		return nil
	})

	proc, err := webhooks.NewProcessor(inbox, mux)
	if err != nil {
		log.Fatal(err)
	}
	// The receiver wakes the processor and stores only what it handles.
	gw, err := webhooks.NewReceiver(registry, inbox, webhooks.WithReplayStore(replay), webhooks.WithProcessor(proc))
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- proc.Run(ctx) }()
	srv := httptest.NewServer(gw)
	defer srv.Close()

	// GitHub's documented example delivery: a new webhook's ping, which no
	// handler takes, answered 200 and not stored.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/webhooks/github", strings.NewReader("Hello, World!"))
	req.Header.Set("X-Hub-Signature-256", "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17")
	req.Header.Set("X-GitHub-Event", "ping")
	req.Header.Set("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println("ping:", resp.Status)

	// A push, signed as GitHub signs it.
	push, err := webhookstest.Sign("github", secret, srv.URL+"/webhooks/github",
		webhookstest.Message{Type: "push", ID: "0b989ba4-242f-11e5-81e1-c7b6a1d7b1e6"})
	if err != nil {
		log.Fatal(err)
	}
	req, _ = push.Request(ctx)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println("push:", resp.Status)

	ev := <-handled
	fmt.Println("handled", ev.Provider, ev.Type, ev.ID)

	stop()
	if err := <-done; err != nil {
		log.Fatal(err)
	}
	// Output:
	// ping: 200 OK
	// push: 202 Accepted
	// handled github push 0b989ba4-242f-11e5-81e1-c7b6a1d7b1e6
}
