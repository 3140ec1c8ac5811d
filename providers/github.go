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
// The ordering key (for ordered handlers) is the repository's "id", then
// "/" and the number of the issue or pull request the event is about where
// it has one ("1296269/1347"): GitHub numbers issues and pull requests in
// one sequence per repository, so a pull request's own events and the
// comments on it (issue_comment, whose "issue" is the pull request) share
// a key. Its version is that or pull request's "updated_at" (RFC
// 3339). Events of a repository that name neither, such as push, have the
// repository's key and no version: they run in received order. Form-encoded
// deliveries have no key. Turn keys off for GitHub with
// webhooks.WithOrdering("github", nil) where one repository's events
// should not wait for each other.
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
			SignatureHeader: "X-Hub-Signature-256",
			SignaturePrefix: "sha256=",
			Encoding:        webhooks.EncodingHex,
			SignedContent:   "{body}",
			Event: webhooks.EventSource{IDHeader: "X-GitHub-Delivery", TypeHeader: "X-GitHub-Event", Order: webhooks.OrderSource{
				ScopePath:     "repository.id",
				KeyPaths:      []string{"issue.number", "pull_request.number"},
				VersionPaths:  []string{"issue.updated_at", "pull_request.updated_at"},
				VersionFormat: webhooks.TimestampRFC3339,
			}},
			OtherSignatureHeaders: []string{"X-Hub-Signature"},
		},
	}
}
