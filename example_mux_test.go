package webhooks_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// A Mux routes events by type, as http.ServeMux routes paths: an exact
// type wins over a prefix wildcard, and a longer prefix over a shorter one.
// A type no pattern takes is ErrNoHandler, which the Processor acknowledges
// instead of retrying, and which a Receiver given the Processor never stores.
func ExampleMux() {
	mux := webhooks.NewMux()
	handler := func(name string) func(context.Context, webhooks.Event) error {
		return func(_ context.Context, ev webhooks.Event) error {
			fmt.Printf("%-30s -> %s\n", ev.Type, name)
			return nil
		}
	}
	mux.MustHandleFunc("invoice.paid", handler("markPaid"))
	mux.MustHandleFunc("invoice.*", handler("syncInvoice"))
	mux.MustHandleFunc("customer.subscription.*", handler("syncSubscription"))

	for _, typ := range []string{"invoice.paid", "invoice.payment_failed", "customer.subscription.deleted", "charge.refunded"} {
		err := mux.Dispatch(context.Background(), webhooks.Event{Provider: "stripe", Type: typ})
		if errors.Is(err, webhooks.ErrNoHandler) {
			fmt.Printf("%-30s -> no handler\n", typ)
		}
	}
	fmt.Println("handles invoice.created:", mux.Handles("invoice.created"))

	// A pattern registered twice is a wiring mistake: MustHandleFunc
	// panics on it, HandleFunc says so.
	err := mux.HandleFunc("invoice.paid", handler("again"))
	fmt.Println(errors.Is(err, webhooks.ErrDuplicatePattern))
	// Output:
	// invoice.paid                   -> markPaid
	// invoice.payment_failed         -> syncInvoice
	// customer.subscription.deleted  -> syncSubscription
	// charge.refunded                -> no handler
	// handles invoice.created: true
	// true
}

// A Mux's patterns apply to every provider. A host whose providers share
// event type names (GitHub and GitLab both send "push") routes by provider
// first, with a DispatcherFunc in front of one Mux per provider.
func ExampleDispatcherFunc() {
	github, gitlab := webhooks.NewMux(), webhooks.NewMux()
	github.MustHandleFunc("push", func(_ context.Context, ev webhooks.Event) error {
		fmt.Println("github push", ev.ID)
		return nil
	})
	gitlab.MustHandleFunc("push", func(_ context.Context, ev webhooks.Event) error {
		fmt.Println("gitlab push", ev.ID)
		return nil
	})
	byProvider := map[string]*webhooks.Mux{"github": github, "gitlab": gitlab}
	dispatcher := webhooks.DispatcherFunc(func(ctx context.Context, ev webhooks.Event) error {
		if mux, ok := byProvider[ev.Provider]; ok {
			return mux.Dispatch(ctx, ev)
		}
		return fmt.Errorf("%w: provider %q", webhooks.ErrNoHandler, ev.Provider)
	})
	// NewProcessor(inbox, dispatcher) runs it like a Mux.

	ctx := context.Background()
	_ = dispatcher.Dispatch(ctx, webhooks.Event{Provider: "gitlab", Type: "push", ID: "e1"})
	_ = dispatcher.Dispatch(ctx, webhooks.Event{Provider: "github", Type: "push", ID: "e2"})
	err := dispatcher.Dispatch(ctx, webhooks.Event{Provider: "bitbucket", Type: "push", ID: "e3"})
	fmt.Println(err)
	// Output:
	// gitlab push e1
	// github push e2
	// webhooks: no handler registered for this event type: provider "bitbucket"
}

// One Receiver serves every provider of its Registry, each under its key:
// POST /webhooks/github goes to GitHub's verifier, /webhooks/stripe to
// Stripe's. A verifier whose secrets are per tenant also serves
// /webhooks/{key}/{tenant}, with that tenant's secrets only; other
// verifiers serve no tenant path, and an unregistered key is refused.
func ExampleRegistry() {
	githubSecret := "It's a Secret to Everybody"
	acmeSecret, globexSecret := webhookstest.NewSecret("stripe"), webhookstest.NewSecret("stripe")

	github, err := providers.New("github", providers.Config{Secrets: webhooks.StaticSecrets(githubSecret)})
	if err != nil {
		fmt.Println(err)
		return
	}
	stripe, err := providers.New("stripe", providers.Config{Secrets: webhooks.TenantSecrets(map[string][]string{
		"acme":   {acmeSecret},
		"globex": {globexSecret},
	})})
	if err != nil {
		fmt.Println(err)
		return
	}
	registry := webhooks.NewRegistry()
	registry.MustRegister("github", github)
	registry.MustRegister("stripe", stripe)

	inbox := memstore.NewInbox()
	receiver, err := webhooks.NewReceiver(registry, inbox, webhooks.WithReplayStore(memstore.NewReplay()))
	if err != nil {
		fmt.Println(err)
		return
	}

	// send signs event id as provider signs it with secret, and posts it to
	// path.
	send := func(provider, secret, path, id string) {
		d, err := webhookstest.Sign(provider, secret, "https://hooks.example.com"+path, webhookstest.Message{ID: id})
		if err != nil {
			fmt.Println(err)
			return
		}
		req, err := d.Request(context.Background())
		if err != nil {
			fmt.Println(err)
			return
		}
		rec := httptest.NewRecorder()
		receiver.ServeHTTP(rec, req)
		fmt.Println(path, rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	send("github", githubSecret, "/webhooks/github", "d1")
	send("stripe", acmeSecret, "/webhooks/stripe/acme", "evt_1")
	send("stripe", acmeSecret, "/webhooks/stripe/globex", "evt_2") // acme's secret on globex's path
	send("github", githubSecret, "/webhooks/github/acme", "d2")
	send("gitlab", webhookstest.NewSecret("gitlab"), "/webhooks/gitlab", "d3")
	fmt.Println("stored:", inbox.Len())
	// Output:
	// /webhooks/github 202 {"status":"accepted","event_id":"d1"}
	// /webhooks/stripe/acme 202 {"status":"accepted","event_id":"evt_1"}
	// /webhooks/stripe/globex 401 {"status":"rejected","reason":"bad_signature"}
	// /webhooks/github/acme 404 {"status":"not_found"}
	// /webhooks/gitlab 404 {"status":"unknown_provider"}
	// stored: 2
}
