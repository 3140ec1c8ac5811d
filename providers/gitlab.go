package providers

import "github.com/hookinbox/webhooks"

// GitLab delivery headers, from
// https://docs.gitlab.com/user/project/integrations/webhooks/#delivery-headers.
const (
	// GitLabTokenHeader carries the webhook's secret token, verbatim.
	GitLabTokenHeader = "X-Gitlab-Token"
	// GitLabEventHeader names the hook type, for example "Push Hook".
	GitLabEventHeader = "X-Gitlab-Event"
	// GitLabIdempotencyKeyHeader is "a unique ID consistent across webhook
	// retries" (GitLab 17.4 and later): the dedup key of a delivery.
	GitLabIdempotencyKeyHeader = "Idempotency-Key"
	// GitLabEventUUIDHeader is a "unique ID for non-recursive webhooks";
	// webhooks triggered by earlier webhooks share the value, so it can
	// name several different events (GitLab 14.8 and later).
	GitLabEventUUIDHeader = "X-Gitlab-Event-UUID"
	// GitLabWebhookUUIDHeader is a "unique ID for each webhook" request
	// (GitLab 16.2 and later), meant for correlating logs.
	GitLabWebhookUUIDHeader = "X-Gitlab-Webhook-UUID"
)

// GitLabTokenOptions returns the TokenOptions for GitLab webhooks secured
// with a secret token: GitLab sends the token itself in X-Gitlab-Token, it
// signs nothing, and the hook type (such as "Push Hook") is in
// X-Gitlab-Event. Register it with NewTokenVerifier and the webhook's secret
// token; several tokens may be live during a change:
//
//	providers.NewTokenVerifier(providers.GitLabTokenOptions(), webhooks.StaticSecrets(os.Getenv("GITLAB_WEBHOOK_TOKEN")))
//
// The event ID is the Idempotency-Key header, which GitLab keeps across the
// retries of one delivery. Of the other two IDs GitLab sends, neither is a
// dedup key: X-Gitlab-Webhook-UUID is new on every request, and
// X-Gitlab-Event-UUID is shared by webhooks that one webhook's handler
// triggered in turn, so two different events can carry the same value. For
// GitLab before 17.4, which sends no Idempotency-Key, set Event.IDFromBody
// (resends of a delivery carry the same body) or, knowing the caveat,
// Event.IDHeader GitLabEventUUIDHeader.
//
// A token is weaker than a signature (see TokenOptions). Where the GitLab
// instance offers webhook signing tokens, use GitLabSigningOptions instead.
//
// Source: https://docs.gitlab.com/user/project/integrations/webhooks/#delivery-headers
// (X-Gitlab-Token, Idempotency-Key, X-Gitlab-Event).
func GitLabTokenOptions() TokenOptions {
	return TokenOptions{
		Header: GitLabTokenHeader,
		Event:  webhooks.EventSource{IDHeader: GitLabIdempotencyKeyHeader, TypeHeader: GitLabEventHeader},
	}
}

// GitLabSigningOptions returns the HMACOptions for GitLab webhooks that have
// a signing token. GitLab then signs each request the Standard Webhooks
// way: webhook-signature holds "v1,<base64 HMAC-SHA-256>" of
// "<webhook-id>.<webhook-timestamp>.<body>", webhook-timestamp is in Unix
// seconds, and webhook-id equals the Idempotency-Key, so items keep the
// same event ID as with GitLabTokenOptions and a move from one to the other
// deduplicates across it. The signing token is "whsec_" and the base64 of a
// 32-byte key; pass it as GitLab shows it. The event type is X-Gitlab-Event;
// the timestamp must lie within webhooks.DefaultTolerance of the clock.
//
//	webhooks.NewHMACVerifier(providers.GitLabSigningOptions(), webhooks.StaticSecrets(os.Getenv("GITLAB_SIGNING_TOKEN")))
//
// It is StandardWebhooksOptions without the svix-* names and with the event
// type from X-Gitlab-Event. A webhook may have a secret token too, which
// GitLab then sends in X-Gitlab-Token beside the signature: the options
// name that header in OtherSignatureHeaders, so a Receiver never stores it.
//
// The feature is new: it was added behind the webhook_signing_token feature
// flag (https://gitlab.com/gitlab-org/gitlab/-/merge_requests/230944,
// rollout https://gitlab.com/gitlab-org/gitlab/-/issues/596374), and
// instances without it send only X-Gitlab-Token.
func GitLabSigningOptions() webhooks.HMACOptions {
	opts := StandardWebhooksOptions()
	opts.HeaderFallbacks = nil // GitLab sends the webhook-* names only
	opts.Event.TypePath = ""
	opts.Event.TypeHeader = GitLabEventHeader
	opts.OtherSignatureHeaders = append(opts.OtherSignatureHeaders, GitLabTokenHeader)
	return opts
}
