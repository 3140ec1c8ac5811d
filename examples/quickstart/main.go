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
	inbox, replay := memstore.NewInbox(), memstore.NewReplay() // pgstore in production
	receiver, processor, err := wire(inbox, replay)
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		if err := processor.Run(context.Background()); err != nil {
			log.Fatal(err)
		}
	}()
	http.Handle("/webhooks/", receiver) // POST /webhooks/{provider}[/{tenant}]
	log.Fatal(http.ListenAndServe(":8080", nil))
}

// wire builds the receiver and the processor over the stores.
func wire(inbox *memstore.Inbox, replay *memstore.Replay) (*webhooks.Receiver, *webhooks.Processor, error) {
	// 1. Verifiers, by catalog name, with their secrets.
	github, err := providers.New("github", providers.Config{Secrets: webhooks.StaticSecrets(os.Getenv("GITHUB_WEBHOOK_SECRET"))})
	if err != nil {
		return nil, nil, err
	}
	stripe, err := providers.New("stripe", providers.Config{Secrets: webhooks.StaticSecrets(os.Getenv("STRIPE_WEBHOOK_SECRET"))})
	if err != nil {
		return nil, nil, err
	}
	// 2. A registry: the provider key is the path segment.
	registry := webhooks.NewRegistry()
	registry.MustRegister("github", github) // POST /webhooks/github
	registry.MustRegister("stripe", stripe) // POST /webhooks/stripe
	// Handlers by event type. Other types (GitHub's ping, say) are
	// answered 200 and not stored: the receiver asks the processor.
	mux := webhooks.NewMux()
	mux.MustHandleFunc("invoice.paid", func(ctx context.Context, ev webhooks.Event) error {
		log.Printf("invoice paid: %s (%d bytes)", ev.ID, len(ev.Payload))
		return nil // an error retries with backoff; webhooks.Permanent(err) dead-letters
	})
	mux.MustHandleFunc("push", func(ctx context.Context, ev webhooks.Event) error {
		log.Printf("push %s", ev.ID)
		return nil
	})
	// 3. The stores are memstore's (above); 4. the processor runs the
	// handlers; 5. the receiver verifies, stores and wakes the processor.
	processor, err := webhooks.NewProcessor(inbox, mux)
	if err != nil {
		return nil, nil, err
	}
	receiver, err := webhooks.NewReceiver(registry, inbox, webhooks.WithReplayStore(replay), webhooks.WithProcessor(processor))
	return receiver, processor, err
}
