package providers

import "github.com/hookinbox/webhooks"

// StripeOptions returns the options for Stripe webhook endpoints.
//
// The Stripe-Signature header holds "t=<unix seconds>" and one or more
// "v1=<hex>" items; each v1 is the HMAC-SHA-256 of t + "." + raw body keyed
// with the endpoint's signing secret, and any one may match (Stripe sends
// several while an endpoint secret is rolled). Other schemes, such as the
// "v0" Stripe adds in test mode, are ignored, and so is a malformed v1
// beside a valid one. The secret ("whsec_…") is the key as it is, prefix
// included; a secret that is only "whsec_" is unusable, and a Stripe API
// key (sk_…, rk_…, pk_…) is refused at construction. The event ID is the
// body's "id" (evt_…) and the type its "type" ("invoice.paid"). The signed
// t must lie within webhooks.DefaultTolerance (five minutes) of the clock
// in either direction; it becomes OccurredAt.
//
// The ordering key (for ordered handlers) is the body's "data.object.id",
// the object the event is about ("in_…", "sub_…"), and its version the
// event's "created" (Unix seconds): Stripe documents that it does not
// deliver events in the order they were generated
// (https://docs.stripe.com/webhooks#event-ordering). Events of one second
// keep their received order.
//
//	webhooks.NewHMACVerifier(providers.StripeOptions(), webhooks.StaticSecrets(os.Getenv("STRIPE_WEBHOOK_SECRET")))
//
// Source: https://docs.stripe.com/webhooks#verify-manually — the header's
// t and v1 elements, the signed payload "timestamp, the character '.', the
// JSON payload", HMAC with SHA-256 and the endpoint secret, "discard all
// other elements", and the libraries' default tolerance of five minutes.
func StripeOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader:   "Stripe-Signature",
			ItemSeparator:     ",",
			KeyValueSeparator: "=",
			SignatureKey:      "v1",
			Encoding:          webhooks.EncodingHex,
			SignedContent:     "{timestamp}.{body}",
			Timestamp:         webhooks.TimestampSource{Key: "t", Tolerance: webhooks.DefaultTolerance},
			Event: webhooks.EventSource{IDPath: "id", TypePath: "type", Order: webhooks.OrderSource{
				KeyPaths:     []string{"data.object.id"},
				VersionPaths: []string{"created"},
			}},
		},
		SecretPrefix: "whsec_",
		CheckSecret:  stripeWrongKind,
	}
}
