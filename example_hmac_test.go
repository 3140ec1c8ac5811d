package webhooks_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/hookinbox/webhooks"
)

// A GitHub verifier checks X-Hub-Signature-256 and reads the delivery ID and
// event name from GitHub's headers. The request here is GitHub's documented
// test delivery.
func ExampleNewHMACVerifier() {
	verifier, err := webhooks.NewHMACVerifier("github",
		webhooks.GitHubOptions(),
		webhooks.StaticSecrets("It's a Secret to Everybody"),
		nil, // SystemClock
	)
	if err != nil {
		fmt.Println(err)
		return
	}

	req := &webhooks.Request{
		Method: http.MethodPost,
		Header: http.Header{
			"X-Hub-Signature-256": {"sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"},
			"X-Github-Delivery":   {"72d3162e-cc78-11e3-81ab-4c9367dc0958"},
			"X-Github-Event":      {"ping"},
		},
		Body: []byte("Hello, World!"),
	}
	v, err := verifier.Verify(context.Background(), webhooks.Route{Provider: "github"}, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("event:", v.EventID, v.EventType)
	fmt.Println("verified with:", v.KeyID)

	// A tampered body is rejected with a reason code and no secret.
	req.Body = []byte("Hello, World?")
	_, err = verifier.Verify(context.Background(), webhooks.Route{Provider: "github"}, req)
	fmt.Println(errors.Is(err, webhooks.ErrBadSignature))
	fmt.Println(err)
	// Output:
	// event: 72d3162e-cc78-11e3-81ab-4c9367dc0958 ping
	// verified with: static:0
	// true
	// webhooks: verification failed: bad_signature: no signature in X-Hub-Signature-256 matches
}

// Options describe other schemes by hand. This is Stripe's: the
// Stripe-Signature header holds "t=<unix seconds>" and one or more
// "v1=<hex>" signatures of "<t>.<body>"; the event ID and type are in the
// JSON body.
func ExampleHMACOptions_stripeStyle() {
	opts := webhooks.HMACOptions{
		SignatureHeader: "Stripe-Signature",
		ItemSeparator:   ",",
		SignatureKey:    "v1",
		TimestampKey:    "t",
		SignedContent:   webhooks.SignTimestampBody,
		EventIDPath:     "id",
		EventTypePath:   "type",
	}
	_, err := webhooks.NewHMACVerifier("stripe", opts, webhooks.StaticSecrets("whsec_…"), nil)
	fmt.Println(err)

	// A timestamp the signature does not cover is refused.
	opts.SignedContent = webhooks.SignBody
	_, err = webhooks.NewHMACVerifier("stripe", opts, webhooks.StaticSecrets("whsec_…"), nil)
	fmt.Println(err != nil)
	// Output:
	// <nil>
	// true
}
