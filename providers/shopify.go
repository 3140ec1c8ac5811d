package providers

import "github.com/hookinbox/webhooks"

// ShopifyOptions returns the options for Shopify webhooks delivered over
// HTTPS.
//
// X-Shopify-Hmac-Sha256 is the base64 HMAC-SHA-256 of the raw body, keyed
// with the app's client secret (or, for a webhook made in a store's admin,
// the signing key shown there); an access token (shpat_…, shpca_…,
// shppa_…) is refused at construction. Shopify signs no timestamp. The
// event ID
// is X-Shopify-Webhook-Id, which identifies one webhook and is repeated
// when Shopify retries it; the type is X-Shopify-Topic ("orders/create").
//
// The ordering key (for ordered handlers) is the body's
// "admin_graphql_api_id" ("gid://shopify/Order/820982911946154508"),
// which names the resource across types, and its version the resource's
// "updated_at" (RFC 3339); Shopify does not deliver webhooks in order. The
// payloads of deletions carry only the resource's "id", and the resource
// type is only in the unsigned X-Shopify-Topic, so they have no key: use
// webhooks.WithOrdering to key them yourself.
//
// Shopify also sends X-Shopify-Event-Id, shared by every webhook one
// merchant action causes (one per subscription to the topic). To store
// such an event once however many subscriptions deliver it, use it as the
// ID instead:
//
//	opts := providers.ShopifyOptions()
//	opts.Event.IDHeader = "X-Shopify-Event-Id"
//
//	webhooks.NewHMACVerifier(providers.ShopifyOptions(), webhooks.StaticSecrets(os.Getenv("SHOPIFY_CLIENT_SECRET")))
//
// Sources: https://shopify.dev/docs/apps/build/webhooks/verify-deliveries
// ("a base64-encoded HMAC signature in the X-Shopify-Hmac-SHA256 header,
// generated using your app's client secret and the raw request body";
// "ignore duplicate deliveries using X-Shopify-Webhook-Id"; after a secret
// rotation "it can take up to an hour" for the new secret to sign, so keep
// both configured) and https://shopify.dev/docs/apps/build/webhooks/ignore-duplicates
// (X-Shopify-Event-Id is the same across webhooks for one event, "one per
// subscription").
func ShopifyOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Shopify-Hmac-Sha256",
			Encoding:        webhooks.EncodingBase64,
			SignedContent:   "{body}",
			Event: webhooks.EventSource{IDHeader: "X-Shopify-Webhook-Id", TypeHeader: "X-Shopify-Topic", Order: webhooks.OrderSource{
				KeyPaths:      []string{"admin_graphql_api_id"},
				VersionPaths:  []string{"updated_at"},
				VersionFormat: webhooks.TimestampRFC3339,
			}},
		},
		CheckSecret: shopifyWrongKind,
	}
}
