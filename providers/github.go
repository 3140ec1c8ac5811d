package providers

import "github.com/hookinbox/webhooks"

// GitHubOptions returns the options for GitHub webhooks: the signature is
// "sha256=" and the lower-case hex HMAC-SHA-256 of the raw body in
// X-Hub-Signature-256, the delivery GUID in X-GitHub-Delivery is the event
// ID and X-GitHub-Event is the event type ("push", "pull_request").
//
// GitHub signs only the body: neither the delivery ID, nor the event type,
// nor a time is covered by the signature. Someone who captured a delivery can
// send its body again, at any time, under a new delivery ID (stored as a new
// event) or another event type. If that matters, key events on the signed
// body instead: set Event.IDHeader to "" and Event.IDFromBody to true (then
// two genuinely different deliveries with byte-identical bodies are stored
// once).
//
// To have the body's action in the type ("pull_request.opened"), set
// Event.TypeSuffixPath; events without an action, and form-encoded
// deliveries, keep the plain type:
//
//	opts := providers.GitHubOptions()
//	opts.Event.TypeSuffixPath = "action"
//
//	webhooks.NewHMACVerifier(providers.GitHubOptions(), webhooks.StaticSecrets(os.Getenv("GITHUB_WEBHOOK_SECRET")))
//
// See https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
// (the X-Hub-Signature-256 header, "sha256=" prefix, HMAC hex digest of the
// payload, and the test values used in testdata/github) and
// https://docs.github.com/en/webhooks/webhook-events-and-payloads#delivery-headers
// (X-GitHub-Event, X-GitHub-Delivery; many payloads carry an "action";
// X-Hub-Signature, the SHA-1 signature GitHub still sends beside the
// SHA-256 one, is not checked and never stored).
func GitHubOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader:       "X-Hub-Signature-256",
			SignaturePrefix:       "sha256=",
			Encoding:              webhooks.EncodingHex,
			SignedContent:         "{body}",
			Event:                 webhooks.EventSource{IDHeader: "X-GitHub-Delivery", TypeHeader: "X-GitHub-Event"},
			OtherSignatureHeaders: []string{"X-Hub-Signature"},
		},
	}
}
