package providers

import (
	"errors"
	"strings"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/sigsyntax"
)

// StandardWebhooksOptions returns the options for senders that follow the
// Standard Webhooks specification (Svix, and the providers built on it).
//
// The webhook-signature header holds space-separated "v1,<base64>" items;
// each is the base64 HMAC-SHA-256 of webhook-id + "." + webhook-timestamp +
// "." + raw body. Items of other schemes — "v1a,<base64>" Ed25519
// signatures among them — are ignored here (verify those with
// StandardWebhooksEd25519Options), and a malformed "v1" item beside a
// valid one is skipped, as the reference libraries do. The secret is
// "whsec_" followed by the base64 key; the key is the decoded bytes (a
// secret without the prefix is decoded the same way, and one that is only
// "whsec_" is unusable). webhook-id is the event ID, the body's "type" the
// event type, and webhook-timestamp (Unix seconds) must lie within
// webhooks.DefaultTolerance (five minutes) of the clock.
//
// Svix's default deployment names the headers svix-id, svix-timestamp and
// svix-signature: they are read when the webhook-* header is absent (see
// HeaderFallbacks), so one registration accepts both. The type is optional
// (Event.TypeOptional), as the specification only recommends a JSON body
// with one.
//
//	webhooks.NewHMACVerifier(providers.StandardWebhooksOptions(), webhooks.StaticSecrets(os.Getenv("CLERK_WEBHOOK_SECRET")))
//
// Sources: https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
// (headers, "msg_id.timestamp.payload", space-delimited versioned
// signatures "v1," and "v1a,", "whsec_" base64 secrets, tolerance) and
// https://docs.svix.com/receiving/verifying-payloads/how-manual (the svix-*
// names, "the webhook- prefix instead of the svix- prefix", five minutes
// past or future).
func StandardWebhooksOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader:   "Webhook-Signature",
			ItemSeparator:     " ",
			KeyValueSeparator: ",",
			SignatureKey:      "v1",
			Encoding:          webhooks.EncodingBase64,
			SignedContent:     "{id}.{timestamp}.{body}",
			Timestamp:         webhooks.TimestampSource{Header: "Webhook-Timestamp", Tolerance: webhooks.DefaultTolerance},
			Event: webhooks.EventSource{
				IDHeader:     "Webhook-Id",
				TypePath:     "type",
				TypeOptional: true, // the spec only recommends a JSON body with a type
			},
			HeaderFallbacks: webhooks.HeaderFallbacks{
				"Webhook-Signature": "Svix-Signature",
				"Webhook-Timestamp": "Svix-Timestamp",
				"Webhook-Id":        "Svix-Id",
			},
		},
		DecodeSecret: decodeStandardWebhooksSecret,
		SecretPrefix: "whsec_",
	}
}

// SvixOptions is StandardWebhooksOptions with the header names swapped:
// svix-id, svix-timestamp and svix-signature first, the webhook-* names as
// fallbacks. It verifies exactly the same requests; it differs only in the
// names webhookstest writes and rejection details mention.
//
//	webhooks.NewHMACVerifier(providers.SvixOptions(), webhooks.StaticSecrets(os.Getenv("RESEND_WEBHOOK_SECRET")))
//
// Source: https://docs.svix.com/receiving/verifying-payloads/how-manual.
func SvixOptions() webhooks.HMACOptions {
	opts := StandardWebhooksOptions()
	opts.SignatureHeader = "Svix-Signature"
	opts.Timestamp.Header = "Svix-Timestamp"
	opts.Event.IDHeader = "Svix-Id"
	opts.HeaderFallbacks = webhooks.HeaderFallbacks{
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
	key, err := sigsyntax.DecodeBase64(s)
	if err != nil {
		return nil, errors.New("a Standard Webhooks secret must be \"whsec_\" followed by base64")
	}
	return key, nil
}

// StandardWebhooksEd25519Options returns the options for the asymmetric
// "v1a" scheme of Standard Webhooks: webhook-signature holds a
// space-separated list of "v1a,<base64 Ed25519 signature>" items (any "v1"
// HMAC items are ignored, malformed "v1a" items beside a valid one are
// skipped) of "<webhook-id>.<webhook-timestamp>.<body>", webhook-timestamp
// is in Unix seconds, and webhook-id is the event ID. The public keys are
// "whpk_" and base64. The svix-* names are read when the webhook-* ones are
// absent. The timestamp must lie within webhooks.DefaultTolerance of the
// clock. The type is not read; set Event.TypePath to "type" where the
// payloads carry one.
//
//	providers.NewEd25519Verifier(providers.StandardWebhooksEd25519Options(), webhooks.StaticSecrets(os.Getenv("ACME_WEBHOOK_PUBLIC_KEY")))
//
// See https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md#signature-scheme.
func StandardWebhooksEd25519Options() Ed25519Options {
	return Ed25519Options{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader:   "Webhook-Signature",
			ItemSeparator:     " ",
			KeyValueSeparator: ",",
			SignatureKey:      "v1a",
			Encoding:          webhooks.EncodingBase64,
			SignedContent:     "{id}.{timestamp}.{body}",
			Timestamp:         webhooks.TimestampSource{Header: "Webhook-Timestamp"},
			Event:             webhooks.EventSource{IDHeader: "Webhook-Id"},
			HeaderFallbacks: webhooks.HeaderFallbacks{
				"Webhook-Signature": "Svix-Signature",
				"Webhook-Timestamp": "Svix-Timestamp",
				"Webhook-Id":        "Svix-Id",
			},
		},
		PublicKeyFormat: Ed25519KeyStandardWebhooks,
	}
}
