package providers

import (
	"context"
	"crypto"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/hookinbox/webhooks"
)

// Presets for commerce and payments: Square, WooCommerce, Lemon Squeezy,
// Coinbase Commerce, Razorpay and Mux.

// SquareOptions returns the options for Square webhook subscriptions:
// x-square-hmacsha256-signature is the base64 HMAC-SHA-256 of the
// notification URL (as configured at Square, byte for byte) followed by the
// raw body, keyed with the subscription's signature key. publicURL is the
// public base under which Square reaches this service; the notification
// URL is publicURL followed by the request's path and query. The event ID
// is the body's "event_id" (Square's documented idempotency value) and the
// type its "type" ("payment.updated"), both signed. Square signs no time.
//
// Source: https://developer.squareup.com/docs/webhooks/step3validate (the
// signature over the notification URL and the body) and
// https://developer.squareup.com/docs/webhooks (event_id as the
// idempotency value).
func SquareOptions(publicURL string) webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader:   "X-Square-Hmacsha256-Signature",
			Encoding:          webhooks.EncodingBase64,
			SignedContentFunc: urlThenBody(publicURL),
			Event:             webhooks.EventSource{IDPath: "event_id", TypePath: "type"},
		},
	}
}

// urlThenBody signs the public URL followed by the body (Square).
func urlThenBody(publicURL string) func(*webhooks.Request, string, string) ([]byte, error) {
	base := strings.TrimRight(publicURL, "/")
	return func(req *webhooks.Request, _, _ string) ([]byte, error) {
		u, err := publicRequestURL(base, req)
		if err != nil {
			return nil, err
		}
		return append([]byte(u), req.Body...), nil
	}
}

// publicRequestURL is the base followed by the request's path and query.
func publicRequestURL(base string, req *webhooks.Request) (string, error) {
	if req.URL == nil {
		return "", webhooks.Reject(webhooks.ReasonMalformedPayload, "the request has no URL")
	}
	return base + req.URL.RequestURI(), nil
}

// WooCommerceOptions returns the options for WooCommerce webhooks:
// X-WC-Webhook-Signature is the base64 HMAC-SHA-256 of the raw body keyed
// with the webhook's secret. The event ID is X-WC-Webhook-Delivery-ID and
// the type X-WC-Webhook-Topic ("order.created"); neither is signed, and no
// time is. (The catalog entry also answers the unsigned ping WooCommerce
// sends when a webhook is saved, a form body "webhook_id=<n>", with 200,
// storing nothing.)
//
// Source: https://woocommerce.github.io/woocommerce-rest-api-docs/#webhooks
// (the X-WC-Webhook-* delivery headers, "a base64 encoded HMAC-SHA256 hash
// of the payload").
func WooCommerceOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Wc-Webhook-Signature",
			Encoding:        webhooks.EncodingBase64,
			Event:           webhooks.EventSource{IDHeader: "X-Wc-Webhook-Delivery-Id", TypeHeader: "X-Wc-Webhook-Topic"},
		},
	}
}

var wooPing = regexp.MustCompile(`^webhook_id=[0-9]+$`)

// wooCommercePing answers the unsigned ping WooCommerce sends when a
// webhook is created or its URL changes: nothing is stored, and nothing
// in it is trusted.
func wooCommercePing(_ context.Context, _ webhooks.Route, req *webhooks.Request) (*webhooks.Response, error) {
	if req.Method != http.MethodPost || len(req.Header.Values("X-Wc-Webhook-Signature")) > 0 || !wooPing.Match(req.Body) {
		return nil, nil
	}
	return &webhooks.Response{StatusCode: http.StatusOK}, nil
}

// LemonSqueezyOptions returns the options for Lemon Squeezy webhooks:
// X-Signature is the hex HMAC-SHA-256 of the raw body keyed with the
// webhook's signing secret. The type is X-Event-Name ("order_created"),
// which the body repeats in "meta.event_name". Lemon Squeezy sends no
// event ID, so the ID is derived from the signed body (Event.IDFromBody).
// No time is signed.
//
// Source: https://docs.lemonsqueezy.com/help/webhooks/signing-requests.
func LemonSqueezyOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Signature",
			Event:           webhooks.EventSource{IDFromBody: true, TypeHeader: "X-Event-Name"},
		},
	}
}

// CoinbaseCommerceOptions returns the options for Coinbase Commerce
// webhooks: X-CC-Webhook-Signature is the hex HMAC-SHA-256 of the raw body
// keyed with the shared secret. The event ID is the body's "event.id" and
// the type "event.type" ("charge:confirmed"), both signed. No time is
// signed.
//
// Source: https://docs.cdp.coinbase.com/commerce/docs/webhooks-security.
func CoinbaseCommerceOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Cc-Webhook-Signature",
			Event:           webhooks.EventSource{IDPath: "event.id", TypePath: "event.type"},
		},
	}
}

// RazorpayOptions returns the options for Razorpay webhooks:
// X-Razorpay-Signature is the hex HMAC-SHA-256 of the raw body keyed with
// the webhook secret. The event ID is the x-razorpay-event-id header, which
// Razorpay keeps across retries and does not sign; the type is the body's
// "event" ("payment.captured"). No time is signed.
//
// Source: https://razorpay.com/docs/webhooks/validate-test/ (signature) and
// https://razorpay.com/docs/webhooks/#idempotency (x-razorpay-event-id).
func RazorpayOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Razorpay-Signature",
			Event:           webhooks.EventSource{IDHeader: "X-Razorpay-Event-Id", TypePath: "event"},
		},
	}
}

// MuxOptions returns the options for Mux webhooks: Mux-Signature is
// "t=<unix seconds>,v1=<hex>", v1 the HMAC-SHA-256 of t + "." + raw body
// keyed with the webhook's signing secret. The event ID is the body's "id"
// and the type its "type" ("video.asset.ready"); t must lie within
// webhooks.DefaultTolerance of the clock.
//
// Source: https://docs.mux.com/core/verify-webhook-signatures.
func MuxOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader:   "Mux-Signature",
			ItemSeparator:     ",",
			KeyValueSeparator: "=",
			SignatureKey:      "v1",
			SignedContent:     "{timestamp}.{body}",
			Timestamp:         webhooks.TimestampSource{Key: "t", Tolerance: webhooks.DefaultTolerance},
			Event:             webhooks.EventSource{IDPath: "id", TypePath: "type"},
		},
	}
}

// HubSpotTolerance is the window HubSpotOptions uses: HubSpot says to
// reject a X-HubSpot-Request-Timestamp older than five minutes.
const HubSpotTolerance = 5 * time.Minute

// HubSpotOptions returns the options for HubSpot's v3 request signature:
// X-HubSpot-Signature-v3 is the base64 HMAC-SHA-256 of the request method,
// the public request URI, the raw body and X-HubSpot-Request-Timestamp
// (Unix milliseconds), concatenated, keyed with the app's client secret.
// In the URI, the percent-encodings HubSpot lists (of : / ? @ ! $ ' ( ) * ,
// ;) are decoded. publicURL is the public base HubSpot calls. The
// timestamp must lie within HubSpotTolerance of the clock. A delivery is a
// JSON array of up to 100 events, each with its own "eventId": the event
// ID is derived from the signed body (Event.IDFromBody), and the type is
// the first event's "subscriptionType" ("contact.creation").
//
// Source: https://developers.hubspot.com/docs/api/webhooks/validating-requests
// (v3: requestMethod + requestUri + requestBody + timestamp, HMAC SHA-256
// with the client secret, base64; reject timestamps older than 5 minutes;
// the list of decoded characters; the older X-HubSpot-Signature sent for
// backward compatibility, a SHA-256 of the secret and the body that signs
// no time, which is not checked and never stored).
func HubSpotOptions(publicURL string) webhooks.HMACOptions {
	base := strings.TrimRight(publicURL, "/")
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Hubspot-Signature-V3",
			Encoding:        webhooks.EncodingBase64,
			SignedContentFunc: func(req *webhooks.Request, timestamp, _ string) ([]byte, error) {
				u, err := publicRequestURL(base, req)
				if err != nil {
					return nil, err
				}
				return []byte(req.Method + HubSpotURI(u) + string(req.Body) + timestamp), nil
			},
			Timestamp:             webhooks.TimestampSource{Header: "X-Hubspot-Request-Timestamp", Format: webhooks.TimestampUnixMillis, Tolerance: HubSpotTolerance},
			Event:                 webhooks.EventSource{IDFromBody: true, TypePath: "0.subscriptionType", TypeOptional: true},
			OtherSignatureHeaders: []string{"X-Hubspot-Signature"},
		},
	}
}

// hubSpotDecoded are the percent-encodings HubSpot decodes in the signed
// URI.
var hubSpotDecoded = strings.NewReplacer(
	"%3A", ":", "%2F", "/", "%3F", "?", "%40", "@", "%21", "!", "%24", "$",
	"%27", "'", "%28", "(", "%29", ")", "%2A", "*", "%2C", ",", "%3B", ";",
	"%3a", ":", "%2f", "/", "%3f", "?", "%2a", "*", "%2c", ",", "%3b", ";",
)

// HubSpotURI returns a URL as HubSpot's v3 signature covers it, with the
// percent-encodings HubSpot lists decoded.
func HubSpotURI(u string) string { return hubSpotDecoded.Replace(u) }

// TypeformOptions returns the options for Typeform webhooks:
// Typeform-Signature is "sha256=" and the base64 HMAC-SHA-256 of the raw
// body keyed with the webhook's secret. The event ID is the body's
// "event_id" and the type its "event_type" ("form_response"), both signed.
// No time is signed.
//
// Source: https://www.typeform.com/developers/webhooks/secure-your-webhooks/.
func TypeformOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "Typeform-Signature",
			SignaturePrefix: "sha256=",
			Encoding:        webhooks.EncodingBase64,
			Event:           webhooks.EventSource{IDPath: "event_id", TypePath: "event_type"},
		},
	}
}

// CalendlyTolerance is the window CalendlyOptions uses: Calendly's guide
// rejects a signature t older than three minutes.
const CalendlyTolerance = 3 * time.Minute

// CalendlyOptions returns the options for Calendly webhook subscriptions
// with a signing key: Calendly-Webhook-Signature is "t=<unix
// seconds>,v1=<hex>", v1 the HMAC-SHA-256 of t + "." + raw body. t must lie
// within CalendlyTolerance of the clock. The type is the body's "event"
// ("invitee.created"); Calendly sends no event ID, so the ID is derived
// from the signed body (Event.IDFromBody).
//
// Source: https://developer.calendly.com/api-docs/4c305798a61d3-webhook-signatures.
func CalendlyOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader:   "Calendly-Webhook-Signature",
			ItemSeparator:     ",",
			KeyValueSeparator: "=",
			SignatureKey:      "v1",
			SignedContent:     "{timestamp}.{body}",
			Timestamp:         webhooks.TimestampSource{Key: "t", Tolerance: CalendlyTolerance},
			Event:             webhooks.EventSource{IDFromBody: true, TypePath: "event"},
		},
	}
}

// TrelloOptions returns the options for Trello webhooks: X-Trello-Webhook
// is the base64 HMAC-SHA-1 of the raw body followed by the webhook's
// callback URL, keyed with the application's secret. publicURL is the
// public base Trello calls; the callback URL is publicURL followed by the
// request's path and query. The event ID is the body's "action.id" and the
// type "action.type" ("updateCard"), both signed. No time is signed.
//
// Trello checks a new callback URL with a HEAD request, which the
// webhooks.Receiver answers 405: answer HEAD for the route in front of it
// (see the package doc).
//
// Source: https://developer.atlassian.com/cloud/trello/guides/rest-api/webhooks/#webhook-signatures.
func TrelloOptions(publicURL string) webhooks.HMACOptions {
	base := strings.TrimRight(publicURL, "/")
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Trello-Webhook",
			Encoding:        webhooks.EncodingBase64,
			SignedContentFunc: func(req *webhooks.Request, _, _ string) ([]byte, error) {
				u, err := publicRequestURL(base, req)
				if err != nil {
					return nil, err
				}
				return append(append([]byte{}, req.Body...), u...), nil
			},
			Event: webhooks.EventSource{IDPath: "action.id", TypePath: "action.type"},
		},
		Algorithm: crypto.SHA1,
	}
}

// parseQuery reads a request's query string, nil when it has none.
func parseQuery(req *webhooks.Request) url.Values {
	if req.URL == nil {
		return nil
	}
	q, err := url.ParseQuery(req.URL.RawQuery)
	if err != nil {
		return nil
	}
	return q
}
