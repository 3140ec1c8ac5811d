package providers

import (
	"time"

	"github.com/hookinbox/webhooks"
)

// PaddleTolerance is the window PaddleOptions uses: Paddle's SDKs reject a
// Paddle-Signature ts more than five seconds from the current time.
const PaddleTolerance = 5 * time.Second

// PaddleOptions returns the options for Paddle Billing notification
// destinations (not Paddle Classic, which signs with a public key).
//
// Paddle-Signature is "ts=<unix seconds>;h1=<hex>"; h1 is the HMAC-SHA-256
// of ts + ":" + raw body keyed with the destination's secret key, used as
// it is, "pdl_ntfset_" prefix included (a secret that is only the prefix is
// unusable, and an API key or client-side token is refused at
// construction). Several h1 items may appear while a secret rotates; any one
// may match. The event ID is the body's "event_id" (one per event; each
// destination gets its own notification_id) and the type its "event_type"
// ("transaction.completed"). The ts must lie within PaddleTolerance (five
// seconds, as Paddle's SDKs check) of the clock; widen Timestamp.Tolerance
// if the host's clock or a proxy queue may be slower.
//
//	webhooks.NewHMACVerifier(providers.PaddleOptions(), webhooks.StaticSecrets(os.Getenv("PADDLE_WEBHOOK_SECRET")))
//
// Sources: https://developer.paddle.com/webhooks/signature-verification
// (the header "ts=1671552777;h1=eb4d…", "concatenating the timestamp (ts)
// with the body of the request, joined with a colon (:)", HMAC with SHA256
// and the destination's secret key, "more than one h1" during secret
// rotation, "default tolerance of five seconds", the endpoint_secret_key
// example "pdl_ntfset_01gkpjp8…") and
// https://developer.paddle.com/webhooks/about/how-webhooks-work (event_id
// as the deduplication key; one notification_id per destination).
func PaddleOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader:   "Paddle-Signature",
			ItemSeparator:     ";",
			KeyValueSeparator: "=",
			SignatureKey:      "h1",
			Encoding:          webhooks.EncodingHex,
			SignedContent:     "{timestamp}:{body}",
			Timestamp:         webhooks.TimestampSource{Key: "ts", Tolerance: PaddleTolerance},
			Event:             webhooks.EventSource{IDPath: "event_id", TypePath: "event_type"},
		},
		SecretPrefix: "pdl_ntfset_",
		CheckSecret:  paddleWrongKind,
	}
}
