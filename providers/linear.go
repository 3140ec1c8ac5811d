package providers

import (
	"time"

	"github.com/hookinbox/webhooks"
)

// LinearTolerance is the window LinearOptions uses: Linear's guide and SDK
// reject a webhookTimestamp more than a minute from the current time.
const LinearTolerance = time.Minute

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
//	opts := providers.LinearOptions()
//	opts.Event.TypeSuffixPath = "action"
//
//	webhooks.NewHMACVerifier(providers.LinearOptions(), webhooks.StaticSecrets(os.Getenv("LINEAR_WEBHOOK_SECRET")))
//
// Sources: https://linear.app/developers/webhooks#securing-webhooks (the
// Linear-Signature header, HMAC SHA256 of the raw body, the
// webhookTimestamp field to guard against replay; the Linear-Delivery and
// Linear-Event headers) and Linear's SDK,
// https://github.com/linear/linear/blob/master/packages/sdk/src/webhooks/client.ts
// (LINEAR_WEBHOOK_TS_FIELD "webhookTimestamp", rejected when "more than
// one minute delta between provided ts and current time").
func LinearOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "Linear-Signature",
			Encoding:        webhooks.EncodingHex,
			SignedContent:   "{body}",
			Timestamp: webhooks.TimestampSource{
				Path:      "webhookTimestamp",
				Format:    webhooks.TimestampUnixMillis,
				Tolerance: LinearTolerance,
			},
			Event: webhooks.EventSource{IDHeader: "Linear-Delivery", TypeHeader: "Linear-Event"},
		},
	}
}
