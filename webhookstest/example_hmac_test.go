package webhookstest_test

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// A host tests its Stripe endpoint end to end: the event is signed as
// Stripe signs it and goes through the same verifier and gateway as in
// production. In a test, NewHMACRequest(t, …) does the signing and builds
// the request in one call.
func ExampleSignHMAC() {
	const secret = "whsec_test_only"
	now := time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)
	clock := webhookstest.NewClock(now)

	opts := providers.StripeOptions()
	opts.Clock = clock
	verifier, err := webhooks.NewHMACVerifier(opts, webhooks.StaticSecrets(secret))
	if err != nil {
		fmt.Println(err)
		return
	}
	resolver := webhooks.NewRegistry()
	resolver.MustRegister("stripe", verifier)
	gateway, err := webhooks.NewReceiver(resolver, memstore.NewInbox(), webhooks.WithReplayStore(memstore.NewReplay()))
	if err != nil {
		fmt.Println(err)
		return
	}

	msg := webhookstest.SignedMessage{
		Timestamp: now,
		Body:      []byte(`{"id":"evt_1","object":"event","type":"invoice.paid"}`),
	}
	header, err := webhookstest.SignHMAC(providers.StripeOptions(), secret, msg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("Stripe-Signature:", header.Get("Stripe-Signature")[:16]+"…")

	for range 2 {
		req := httptest.NewRequest("POST", "/webhooks/stripe", bytes.NewReader(msg.Body))
		req.Header = header.Clone()
		rec := httptest.NewRecorder()
		gateway.ServeHTTP(rec, req)
		fmt.Print(rec.Code, " ", rec.Body.String())
	}
	// Output:
	// Stripe-Signature: t=1741964966,v1=…
	// 202 {"status":"accepted","event_id":"evt_1"}
	// 200 {"status":"duplicate","event_id":"evt_1"}
}
