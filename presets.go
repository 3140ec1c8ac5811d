package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"
)

// Provider presets: HMACOptions that match each provider's documented
// scheme byte for byte. Every preset cites the documentation it follows; the
// tests in presets_test.go check each against the provider's published test
// vector where one exists (testdata/<provider>/) and against a vector
// computed with openssl where none does.
//
// A preset is a plain value: adjust any field before passing it to
// NewHMACVerifier, for example a wider Tolerance or another event ID
// header.

// Timestamp windows that differ from DefaultTolerance because the provider
// documents another.
const (
	// PaddleTolerance is the window PaddleOptions uses: Paddle's SDKs reject
	// a Paddle-Signature ts more than five seconds from the current time.
	PaddleTolerance = 5 * time.Second
	// LinearTolerance is the window LinearOptions uses: Linear's guide and
	// SDK reject a webhookTimestamp more than a minute from the current
	// time.
	LinearTolerance = time.Minute
)

// StripeOptions returns the options for Stripe webhook endpoints.
//
// The Stripe-Signature header holds "t=<unix seconds>" and one or more
// "v1=<hex>" items; each v1 is the HMAC-SHA-256 of t + "." + raw body keyed
// with the endpoint's signing secret, and any one may match (Stripe sends
// several while an endpoint secret is rolled). Other schemes, such as the
// "v0" Stripe adds in test mode, are ignored. The secret ("whsec_…") is the
// key as it is, prefix included; a secret that is only "whsec_" is unusable.
// The event ID is the body's "id" (evt_…) and the type its "type"
// ("invoice.paid"). The signed t must lie within DefaultTolerance (five
// minutes) of the clock in either direction; it becomes OccurredAt.
//
//	webhooks.NewHMACVerifier("stripe", webhooks.StripeOptions(), webhooks.StaticSecrets(os.Getenv("STRIPE_WEBHOOK_SECRET")), nil)
//
// Source: https://docs.stripe.com/webhooks#verify-manually — the header's
// t and v1 elements, the signed payload "timestamp, the character '.', the
// JSON payload", HMAC with SHA-256 and the endpoint secret, "discard all
// other elements", and the libraries' default tolerance of five minutes.
func StripeOptions() HMACOptions {
	return HMACOptions{
		SignatureHeader:   "Stripe-Signature",
		ItemSeparator:     ",",
		KeyValueSeparator: "=",
		SignatureKey:      "v1",
		TimestampKey:      "t",
		TimestampFormat:   TimestampUnixSeconds,
		Tolerance:         DefaultTolerance,
		Algorithm:         HMACSHA256,
		Encoding:          EncodingHex,
		SignedContent:     SignTimestampBody,
		SecretPrefix:      "whsec_",
		EventIDPath:       "id",
		EventTypePath:     "type",
	}
}

// GitHubOptions returns the options for GitHub webhooks: the signature is
// "sha256=" and the lower-case hex HMAC-SHA-256 of the raw body in
// X-Hub-Signature-256, the delivery GUID in X-GitHub-Delivery is the event
// ID and X-GitHub-Event is the event type ("push", "pull_request").
//
// GitHub signs only the body: neither the delivery ID, nor the event type,
// nor a time is covered by the signature. Someone who captured a delivery can
// send its body again, at any time, under a new delivery ID (stored as a new
// event) or another event type. If that matters, key events on the signed
// body instead: set EventIDHeader to "" and EventIDFunc to a function
// returning BodySHA256ID(req.Body) (then two genuinely different deliveries
// with byte-identical bodies are stored once).
//
// To have the body's action in the type ("pull_request.opened"), set
// EventTypeSuffixPath; events without an action, and form-encoded
// deliveries, keep the plain type:
//
//	opts := webhooks.GitHubOptions()
//	opts.EventTypeSuffixPath = "action"
//
//	webhooks.NewHMACVerifier("github", webhooks.GitHubOptions(), webhooks.StaticSecrets(os.Getenv("GITHUB_WEBHOOK_SECRET")), nil)
//
// See https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
// (the X-Hub-Signature-256 header, "sha256=" prefix, HMAC hex digest of the
// payload, and the test values used in testdata/github) and
// https://docs.github.com/en/webhooks/webhook-events-and-payloads#delivery-headers
// (X-GitHub-Event, X-GitHub-Delivery; many payloads carry an "action").
func GitHubOptions() HMACOptions {
	return HMACOptions{
		SignatureHeader: "X-Hub-Signature-256",
		SignaturePrefix: "sha256=",
		Algorithm:       HMACSHA256,
		Encoding:        EncodingHex,
		SignedContent:   SignBody,
		EventIDHeader:   "X-GitHub-Delivery",
		EventTypeHeader: "X-GitHub-Event",
	}
}

// StandardWebhooksOptions returns the options for senders that follow the
// Standard Webhooks specification (Svix, and the providers built on it).
//
// The webhook-signature header holds space-separated "v1,<base64>" items;
// each is the base64 HMAC-SHA-256 of webhook-id + "." + webhook-timestamp +
// "." + raw body. Items of other schemes — "v1a,<base64>" Ed25519
// signatures among them — are ignored here: verify those with the Ed25519
// verifier. The secret is "whsec_" followed by the base64 key; the key is
// the decoded bytes (a secret without the prefix is decoded the same way,
// and one that is only "whsec_" is unusable). webhook-id is the event ID,
// the body's "type" the event type, and webhook-timestamp (Unix seconds)
// must lie within DefaultTolerance (five minutes) of the clock.
//
// Svix's default deployment names the headers svix-id, svix-timestamp and
// svix-signature: they are read when the webhook-* header is absent (see
// HeaderFallbacks), so one registration accepts both. For payloads without
// a "type", set EventTypePath to "".
//
//	webhooks.NewHMACVerifier("clerk", webhooks.StandardWebhooksOptions(), webhooks.StaticSecrets(os.Getenv("CLERK_WEBHOOK_SECRET")), nil)
//
// Sources: https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
// (headers, "msg_id.timestamp.payload", space-delimited versioned
// signatures "v1," and "v1a,", "whsec_" base64 secrets, tolerance) and
// https://docs.svix.com/receiving/verifying-payloads/how-manual (the svix-*
// names, "the webhook- prefix instead of the svix- prefix", five minutes
// past or future).
func StandardWebhooksOptions() HMACOptions {
	return HMACOptions{
		SignatureHeader:   "Webhook-Signature",
		ItemSeparator:     " ",
		KeyValueSeparator: ",",
		SignatureKey:      "v1",
		TimestampHeader:   "Webhook-Timestamp",
		TimestampFormat:   TimestampUnixSeconds,
		Tolerance:         DefaultTolerance,
		Algorithm:         HMACSHA256,
		Encoding:          EncodingBase64,
		SignedContent:     SignIDTimestampBody,
		DecodeSecret:      decodeStandardWebhooksSecret,
		SecretPrefix:      "whsec_",
		HeaderFallbacks: map[string]string{
			"Webhook-Signature": "Svix-Signature",
			"Webhook-Timestamp": "Svix-Timestamp",
			"Webhook-Id":        "Svix-Id",
		},
		EventIDHeader:     "Webhook-Id",
		EventTypePath:     "type",
		EventTypeOptional: true, // the spec only recommends a JSON body with a type
	}
}

// SvixOptions is StandardWebhooksOptions with the header names swapped:
// svix-id, svix-timestamp and svix-signature first, the webhook-* names as
// fallbacks. It verifies exactly the same requests; it differs only in the
// names webhookstest writes and rejection details mention.
//
//	webhooks.NewHMACVerifier("resend", webhooks.SvixOptions(), webhooks.StaticSecrets(os.Getenv("RESEND_WEBHOOK_SECRET")), nil)
func SvixOptions() HMACOptions {
	opts := StandardWebhooksOptions()
	opts.SignatureHeader = "Svix-Signature"
	opts.TimestampHeader = "Svix-Timestamp"
	opts.EventIDHeader = "Svix-Id"
	opts.HeaderFallbacks = map[string]string{
		"Svix-Signature": "Webhook-Signature",
		"Svix-Timestamp": "Webhook-Timestamp",
		"Svix-Id":        "Webhook-Id",
	}
	return opts
}

// decodeStandardWebhooksSecret turns "whsec_<base64>" into the key. The
// error names no part of the secret.
func decodeStandardWebhooksSecret(secret []byte) ([]byte, error) {
	s, _ := strings.CutPrefix(strings.TrimSpace(string(secret)), "whsec_")
	key, err := decodeBase64(s)
	if err != nil {
		return nil, errors.New("a Standard Webhooks secret must be \"whsec_\" followed by base64")
	}
	return key, nil
}

// SlackOptions returns the options for the Slack Events API.
//
// X-Slack-Signature is "v0=" and the hex HMAC-SHA-256 of "v0:" +
// X-Slack-Request-Timestamp + ":" + raw body, keyed with the app's signing
// secret; the timestamp (Unix seconds) must lie within DefaultTolerance
// (five minutes) of the clock. The event ID is the envelope's "event_id"
// (Ev…) and the type the inner "event.type" ("app_mention", "message").
//
// Two Events API requests carry no event and are answered directly, after
// their signature verified, and never stored: the url_verification
// challenge Slack sends when a Request URL is saved (answered 200 with the
// challenge as text/plain), and the app_rate_limited notice (answered 200,
// since Slack counts failed deliveries when it disables subscriptions). An
// unsigned or stale challenge is rejected like any request.
//
// Slash commands and interactive components are signed the same way but
// expect an answer in the response, so they do not belong in an inbox;
// their form-encoded bodies have no event_id and are rejected with
// ReasonMalformedPayload.
//
//	webhooks.NewHMACVerifier("slack", webhooks.SlackOptions(), webhooks.StaticSecrets(os.Getenv("SLACK_SIGNING_SECRET")), nil)
//
// Sources: https://api.slack.com/authentication/verifying-requests-from-slack
// (now docs.slack.dev/authentication/verifying-requests-from-slack): the
// basestring "v0:timestamp:body", HMAC SHA256 with the signing secret, the
// "v0=" prefix, rejecting timestamps more than five minutes from local time,
// and the worked example in testdata/slack;
// https://api.slack.com/events/url_verification ("verify the request's
// authenticity and then respond in plaintext with the challenge attribute
// value"); https://api.slack.com/events/app_rate_limited (no inner event;
// subscriptions may be disabled when deliveries are not answered with 200);
// https://api.slack.com/apis/events-api (the outer envelope's event_id and
// event).
func SlackOptions() HMACOptions {
	return HMACOptions{
		SignatureHeader:        "X-Slack-Signature",
		SignaturePrefix:        "v0=",
		TimestampHeader:        "X-Slack-Request-Timestamp",
		TimestampFormat:        TimestampUnixSeconds,
		Tolerance:              DefaultTolerance,
		Algorithm:              HMACSHA256,
		Encoding:               EncodingHex,
		SignedContent:          SignTimestampBody,
		SignedContentPrefix:    "v0",
		SignedContentSeparator: ":",
		EventIDPath:            "event_id",
		EventTypePath:          "event.type",
		Handshake:              slackHandshake,
	}
}

// slackHandshake answers url_verification and acknowledges app_rate_limited.
// Any other body, JSON or not, goes on as an event.
func slackHandshake(req *Request, _ Verification, _ []byte) (*HandshakeResponse, error) {
	var msg struct {
		Type      string          `json:"type"`
		Challenge json.RawMessage `json:"challenge"`
	}
	if json.Unmarshal(req.Body, &msg) != nil {
		return nil, nil
	}
	switch msg.Type {
	case "url_verification":
		var challenge string
		if json.Unmarshal(msg.Challenge, &challenge) != nil || challenge == "" {
			return nil, Reject(ReasonMalformedPayload, "the url_verification request has no challenge string")
		}
		return &HandshakeResponse{
			StatusCode: http.StatusOK,
			Header:     http.Header{"Content-Type": {"text/plain; charset=utf-8"}},
			Body:       []byte(challenge),
		}, nil
	case "app_rate_limited":
		return &HandshakeResponse{StatusCode: http.StatusOK}, nil
	}
	return nil, nil
}

// ShopifyOptions returns the options for Shopify webhooks delivered over
// HTTPS.
//
// X-Shopify-Hmac-Sha256 is the base64 HMAC-SHA-256 of the raw body, keyed
// with the app's client secret (or, for a webhook made in a store's admin,
// the signing key shown there). Shopify signs no timestamp. The event ID
// is X-Shopify-Webhook-Id, which identifies one webhook and is repeated
// when Shopify retries it; the type is X-Shopify-Topic ("orders/create").
//
// Shopify also sends X-Shopify-Event-Id, shared by every webhook one
// merchant action causes (one per subscription to the topic). To store
// such an event once however many subscriptions deliver it, use it as the
// ID instead:
//
//	opts := webhooks.ShopifyOptions()
//	opts.EventIDHeader = "X-Shopify-Event-Id"
//
//	webhooks.NewHMACVerifier("shopify", webhooks.ShopifyOptions(), webhooks.StaticSecrets(os.Getenv("SHOPIFY_CLIENT_SECRET")), nil)
//
// Sources: https://shopify.dev/docs/apps/build/webhooks/verify-deliveries
// ("a base64-encoded HMAC signature in the X-Shopify-Hmac-SHA256 header,
// generated using your app's client secret and the raw request body";
// "ignore duplicate deliveries using X-Shopify-Webhook-Id"; after a secret
// rotation "it can take up to an hour" for the new secret to sign, so keep
// both configured) and https://shopify.dev/docs/apps/build/webhooks/ignore-duplicates
// (X-Shopify-Event-Id is the same across webhooks for one event, "one per
// subscription").
func ShopifyOptions() HMACOptions {
	return HMACOptions{
		SignatureHeader: "X-Shopify-Hmac-Sha256",
		Algorithm:       HMACSHA256,
		Encoding:        EncodingBase64,
		SignedContent:   SignBody,
		EventIDHeader:   "X-Shopify-Webhook-Id",
		EventTypeHeader: "X-Shopify-Topic",
	}
}

// PaddleOptions returns the options for Paddle Billing notification
// destinations (not Paddle Classic, which signs with a public key).
//
// Paddle-Signature is "ts=<unix seconds>;h1=<hex>"; h1 is the HMAC-SHA-256
// of ts + ":" + raw body keyed with the destination's secret key, used as
// it is, "pdl_ntfset_" prefix included (a secret that is only the prefix is
// unusable). Several h1 items may appear while a secret rotates; any one
// may match. The event ID is the body's "event_id" (one per event; each
// destination gets its own notification_id) and the type its "event_type"
// ("transaction.completed"). The ts must lie within PaddleTolerance (five
// seconds, as Paddle's SDKs check) of the clock; widen Tolerance if the
// host's clock or a proxy queue may be slower.
//
//	webhooks.NewHMACVerifier("paddle", webhooks.PaddleOptions(), webhooks.StaticSecrets(os.Getenv("PADDLE_WEBHOOK_SECRET")), nil)
//
// Sources: https://developer.paddle.com/webhooks/signature-verification
// (the header "ts=1671552777;h1=eb4d…", "concatenating the timestamp (ts)
// with the body of the request, joined with a colon (:)", HMAC with SHA256
// and the destination's secret key, "more than one h1" during secret
// rotation, "default tolerance of five seconds", the endpoint_secret_key
// example "pdl_ntfset_01gkpjp8…") and
// https://developer.paddle.com/webhooks/about/how-webhooks-work (event_id
// as the deduplication key; one notification_id per destination).
func PaddleOptions() HMACOptions {
	return HMACOptions{
		SignatureHeader:        "Paddle-Signature",
		ItemSeparator:          ";",
		KeyValueSeparator:      "=",
		SignatureKey:           "h1",
		TimestampKey:           "ts",
		TimestampFormat:        TimestampUnixSeconds,
		Tolerance:              PaddleTolerance,
		Algorithm:              HMACSHA256,
		Encoding:               EncodingHex,
		SignedContent:          SignTimestampBody,
		SignedContentSeparator: ":",
		SecretPrefix:           "pdl_ntfset_",
		EventIDPath:            "event_id",
		EventTypePath:          "event_type",
	}
}

// LinearOptions returns the options for Linear webhooks.
//
// Linear-Signature is the hex HMAC-SHA-256 of the raw body keyed with the
// webhook's signing secret. The body's "webhookTimestamp" (Unix
// milliseconds) is signed with it and must lie within LinearTolerance (one
// minute) of the clock, as Linear's SDK checks. The event ID is the
// Linear-Delivery header (a UUID per delivery) and the type the
// Linear-Event header, the entity type ("Issue", "Comment"). For
// "Issue.create" and the like, add the body's action:
//
//	opts := webhooks.LinearOptions()
//	opts.EventTypeSuffixPath = "action"
//
//	webhooks.NewHMACVerifier("linear", webhooks.LinearOptions(), webhooks.StaticSecrets(os.Getenv("LINEAR_WEBHOOK_SECRET")), nil)
//
// Sources: https://linear.app/developers/webhooks#securing-webhooks (the
// Linear-Signature header, HMAC SHA256 of the raw body, the
// webhookTimestamp field to guard against replay; the Linear-Delivery and
// Linear-Event headers) and Linear's SDK,
// https://github.com/linear/linear/blob/master/packages/sdk/src/webhooks/client.ts
// (LINEAR_WEBHOOK_TS_FIELD "webhookTimestamp", rejected when "more than
// one minute delta between provided ts and current time").
func LinearOptions() HMACOptions {
	return HMACOptions{
		SignatureHeader: "Linear-Signature",
		TimestampPath:   "webhookTimestamp",
		TimestampFormat: TimestampUnixMillis,
		Tolerance:       LinearTolerance,
		Algorithm:       HMACSHA256,
		Encoding:        EncodingHex,
		SignedContent:   SignBody,
		EventIDHeader:   "Linear-Delivery",
		EventTypeHeader: "Linear-Event",
	}
}

// ZoomOptions returns the options for Zoom webhooks (event subscriptions
// verified with the webhook secret token).
//
// x-zm-signature is "v0=" and the hex HMAC-SHA-256 of "v0:" +
// x-zm-request-timestamp + ":" + raw body keyed with the secret token; the
// timestamp (Unix seconds) must lie within DefaultTolerance (five minutes;
// Zoom documents no window) of the clock. The type is the body's "event"
// ("meeting.started").
//
// Zoom sends no event ID, so the ID is BodySHA256ID(body), "sha256:" and
// the hex SHA-256 of the raw body: a redelivery of the same body is a
// duplicate. Zoom retries
// after 5, 20 and 60 minutes and does not document whether a retry is
// signed anew; if retries arrive with their first timestamp, raise
// Tolerance to about 90 minutes (a replay inside the window has the same
// body, hence the same ID, and is stored once).
//
// The endpoint.url_validation challenge (sent when the endpoint is saved
// and every 72 hours) is signed like any event; after its signature
// verified it is answered with {"plainToken": …, "encryptedToken": …}, the
// encrypted token being the hex HMAC-SHA-256 of the plain token under the
// secret that verified the request, and never stored.
//
//	webhooks.NewHMACVerifier("zoom", webhooks.ZoomOptions(), webhooks.StaticSecrets(os.Getenv("ZOOM_WEBHOOK_SECRET_TOKEN")), nil)
//
// Sources: https://developers.zoom.us/docs/api/webhooks/#verify-webhook-events
// (the message "v0:{x-zm-request-timestamp}:{request body}", HMAC SHA-256
// with the secret token, hex, prefixed "v0=", compared to x-zm-signature),
// https://developers.zoom.us/docs/api/webhooks/#validate-your-webhook-endpoint
// (the endpoint.url_validation body with payload.plainToken, the response
// {"plainToken", "encryptedToken"} with the token hashed with HMAC SHA-256
// under the secret token in hex, within 3 seconds, 200 or 204), Zoom's
// sample https://github.com/zoom/webhook-sample (verifies x-zm-signature
// before answering the challenge) and
// https://devsupport.zoom.us/hc/en-us/articles/360059893812-Webhook-delays
// (retries after 5, 20 and 60 minutes).
func ZoomOptions() HMACOptions {
	return HMACOptions{
		SignatureHeader:        "X-Zm-Signature",
		SignaturePrefix:        "v0=",
		TimestampHeader:        "X-Zm-Request-Timestamp",
		TimestampFormat:        TimestampUnixSeconds,
		Tolerance:              DefaultTolerance,
		Algorithm:              HMACSHA256,
		Encoding:               EncodingHex,
		SignedContent:          SignTimestampBody,
		SignedContentPrefix:    "v0",
		SignedContentSeparator: ":",
		EventIDFunc:            payloadDigestEventID,
		EventTypePath:          "event",
		Handshake:              zoomHandshake,
	}
}

// payloadDigestEventID is the event ID of providers that send none:
// BodySHA256ID of the raw body, from the digest Verify already computed.
func payloadDigestEventID(_ *Request, v Verification) (string, error) {
	return BodySHA256IDPrefix + hex.EncodeToString(v.PayloadSHA256[:]), nil
}

// zoomHandshake answers Zoom's endpoint.url_validation challenge with the
// plain token and its HMAC under the key that verified the request.
func zoomHandshake(req *Request, _ Verification, key []byte) (*HandshakeResponse, error) {
	var msg struct {
		Event   string `json:"event"`
		Payload struct {
			PlainToken json.RawMessage `json:"plainToken"`
		} `json:"payload"`
	}
	if json.Unmarshal(req.Body, &msg) != nil || msg.Event != "endpoint.url_validation" {
		return nil, nil
	}
	var plainToken string
	if json.Unmarshal(msg.Payload.PlainToken, &plainToken) != nil || plainToken == "" {
		return nil, Reject(ReasonMalformedPayload, "the endpoint.url_validation request has no payload.plainToken string")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(plainToken))
	body, err := json.Marshal(struct {
		PlainToken     string `json:"plainToken"`
		EncryptedToken string `json:"encryptedToken"`
	}{plainToken, hex.EncodeToString(mac.Sum(nil))})
	if err != nil {
		return nil, err
	}
	return &HandshakeResponse{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"application/json"}},
		Body:       body,
	}, nil
}
