// Command quickstart is the README's quick start: the smallest host program.
package main

import (
	"context"
	"log"
	"net/http"
	"os"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/providers"
)

func main() {
	ctx := context.Background()
	inbox, replay := memstore.NewInbox(), memstore.NewReplay() // pgstore in production

	github, err := webhooks.NewHMACVerifier(providers.GitHubOptions(),
		webhooks.StaticSecrets(os.Getenv("GITHUB_WEBHOOK_SECRET")))
	if err != nil {
		log.Fatal(err)
	}
	registry := webhooks.NewRegistry()
	registry.MustRegister("github", github)

	mux := webhooks.NewMux()
	mux.MustHandleFunc("push", func(ctx context.Context, ev webhooks.Event) error {
		log.Printf("push %s: %d bytes", ev.ID, len(ev.Payload))
		return nil // an error retries with backoff; webhooks.Permanent(err) dead-letters
	})

	proc, err := webhooks.NewProcessor(inbox, mux)
	if err != nil {
		log.Fatal(err)
	}
	receiver, err := webhooks.NewReceiver(registry, inbox, replay, webhooks.WithWaker(proc))
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		if err := proc.Run(ctx); err != nil {
			log.Fatal(err)
		}
	}()

	http.Handle("/webhooks/", receiver) // POST /webhooks/{provider}[/{tenant}]
	log.Fatal(http.ListenAndServe(":8080", nil))
}
