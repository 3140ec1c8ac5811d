package providers

import (
	"crypto"

	"github.com/hookinbox/webhooks"
)

// Presets for developer tools: Jira Cloud, Bitbucket Cloud, Sentry,
// Vercel, PagerDuty and Intercom. Each is the root package's HMAC verifier
// with the provider's documented headers and signed content.

// JiraOptions returns the options for Jira Cloud admin webhooks registered
// with a secret (System > WebHooks, or the webhook REST API of
// /rest/webhooks/1.0): X-Hub-Signature is "sha256=" and the hex
// HMAC-SHA-256 of the raw body, WebSub's "method=signature" form. Jira signs
// no time. The event ID is X-Atlassian-Webhook-Identifier, which Jira keeps
// across the retries of one delivery and does not sign; the type is the
// body's "webhookEvent" ("jira:issue_created").
//
// Webhooks that Connect or OAuth 2.0 apps register are authenticated with
// a JWT instead and are not covered here.
//
// Source: https://developer.atlassian.com/cloud/jira/platform/webhooks/#secure-admin-webhooks
// (the X-Hub-Signature header in the "method=signature" format, HMAC
// SHA-256 of the body with the secret; X-Atlassian-Webhook-Identifier is the
// same for retries).
func JiraOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Hub-Signature",
			SignaturePrefix: "sha256=",
			Event:           webhooks.EventSource{IDHeader: "X-Atlassian-Webhook-Identifier", TypePath: "webhookEvent"},
		},
	}
}

// BitbucketOptions returns the options for Bitbucket Cloud webhooks with a
// secret: X-Hub-Signature is "sha256=" and the hex HMAC-SHA-256 of the raw
// body. The event ID is X-Request-UUID and the type X-Event-Key
// ("repo:push"); neither is signed, and no time is.
//
// Source: https://support.atlassian.com/bitbucket-cloud/docs/manage-webhooks/#Secure-webhooks
// and https://support.atlassian.com/bitbucket-cloud/docs/event-payloads/#HTTP-headers.
func BitbucketOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Hub-Signature",
			SignaturePrefix: "sha256=",
			Event:           webhooks.EventSource{IDHeader: "X-Request-Uuid", TypeHeader: "X-Event-Key"},
		},
	}
}

// SentryOptions returns the options for Sentry integration-platform
// webhooks: Sentry-Hook-Signature is the hex HMAC-SHA-256 of the body with
// the integration's client secret. The event ID is the Request-ID header
// and the type Sentry-Hook-Resource with the body's "action" ("issue.created");
// Sentry-Hook-Timestamp is not signed and is not read.
//
// Source: https://docs.sentry.io/organization/integrations/integration-platform/webhooks/
// (headers Content-Type, Request-ID, Sentry-Hook-Resource,
// Sentry-Hook-Timestamp, Sentry-Hook-Signature; HMAC SHA-256 with the
// client secret).
func SentryOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "Sentry-Hook-Signature",
			Event:           webhooks.EventSource{IDHeader: "Request-Id", TypeHeader: "Sentry-Hook-Resource", TypeSuffixPath: "action"},
		},
	}
}

// VercelOptions returns the options for Vercel webhooks: x-vercel-signature
// is the hex HMAC-SHA-1 of the raw body keyed with the integration's client
// secret (or the account webhook's secret). The event ID is the body's
// "id" and the type its "type" ("deployment.created"), both signed. Vercel
// signs no time.
//
// Source: https://vercel.com/docs/webhooks/webhooks-api#securing-webhooks.
func VercelOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Vercel-Signature",
			Event:           webhooks.EventSource{IDPath: "id", TypePath: "type"},
		},
		Algorithm: crypto.SHA1,
	}
}

// PagerDutyOptions returns the options for PagerDuty V3 webhook
// subscriptions: X-PagerDuty-Signature is a comma-separated list of
// "v1=<hex HMAC-SHA-256 of the body>", one per active secret; any one may
// match. The event ID is the body's "event.id" and the type
// "event.event_type" ("incident.triggered"), both signed. No time is
// signed.
//
// Source: https://developer.pagerduty.com/docs/webhooks-v3-overview#verifying-signatures.
func PagerDutyOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader:   "X-Pagerduty-Signature",
			ItemSeparator:     ",",
			KeyValueSeparator: "=",
			SignatureKey:      "v1",
			Event:             webhooks.EventSource{IDPath: "event.id", TypePath: "event.event_type"},
		},
	}
}

// IntercomOptions returns the options for Intercom webhooks:
// X-Hub-Signature is "sha1=" and the hex HMAC-SHA-1 of the body keyed with
// the app's client secret. The event ID is the notification's "id"
// ("notif_…") and the type its "topic" ("conversation.user.created"), both
// signed. No time is signed.
//
// Source: https://developers.intercom.com/docs/references/webhooks/webhook-models#signed-notifications.
func IntercomOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Hub-Signature",
			SignaturePrefix: "sha1=",
			Event:           webhooks.EventSource{IDPath: "id", TypePath: "topic"},
		},
		Algorithm: crypto.SHA1,
	}
}
