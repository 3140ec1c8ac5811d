package providers

import (
	"context"
	"net/http"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/wire"
)

// Builders of catalog entries.

// hmacBuild builds an HMAC preset, then lets mod add what the provider
// documents beyond the signature.
func hmacBuild(opts func(Config) webhooks.HMACOptions, mod func(c Config, p *preset)) func(Config) (webhooks.Verifier, error) {
	return func(c Config) (webhooks.Verifier, error) {
		v, err := hmacPreset(c, opts(c))
		if err != nil {
			return nil, err
		}
		p := &preset{inner: v}
		if mod != nil {
			mod(c, p)
		}
		return p, nil
	}
}

// fixed adapts an options function that needs no configuration.
func fixed(f func() webhooks.HMACOptions) func(Config) webhooks.HMACOptions {
	return func(Config) webhooks.HMACOptions { return f() }
}

// hmacEntry is a catalog entry for an HMAC preset.
func hmacEntry(e Entry, opts func() webhooks.HMACOptions) Entry {
	e.Scheme = SchemeHMAC
	e.build = hmacBuild(fixed(opts), nil)
	return e
}

// ed25519Entry is a catalog entry for an Ed25519 preset.
func ed25519Entry(e Entry, opts func() Ed25519Options) Entry {
	e.Scheme = SchemeEd25519
	e.build = func(c Config) (webhooks.Verifier, error) {
		o := opts()
		o.Clock = c.Clock
		v, err := NewEd25519Verifier(o, c.Secrets)
		if err != nil {
			return nil, err
		}
		return &preset{inner: v}, nil
	}
	return e
}

// challengeFunc answers a provider challenge before any signature is
// checked (see preset.challenge).
type challengeFunc = func(ctx context.Context, route webhooks.Route, req *webhooks.Request) (*webhooks.Response, error)

// tokenBuild builds a token preset whose static secrets valid checks, with
// an optional finish and GET challenge.
func tokenBuild(opts func() TokenOptions, valid func([]byte) error, finish func(*webhooks.Request, *webhooks.Verification) error, get func(*TokenVerifier) challengeFunc) func(Config) (webhooks.Verifier, error) {
	return func(c Config) (webhooks.Verifier, error) {
		if valid != nil {
			if err := optionsError("token", checkCredentials(c.Secrets, "secret", valid)); err != nil {
				return nil, err
			}
		}
		v, err := NewTokenVerifier(opts(), c.Secrets)
		if err != nil {
			return nil, err
		}
		p := &preset{inner: v, finish: finish, get: get != nil}
		if get != nil {
			p.challenge = get(v)
		}
		return p, nil
	}
}

// headerAPIVersion sets the API version from a header.
func headerAPIVersion(name string) func(*webhooks.Request, *webhooks.Verification) error {
	return func(req *webhooks.Request, v *webhooks.Verification) error {
		if value, n := wire.Header(req.Header, name); n == 1 {
			v.APIVersion = value
		}
		return nil
	}
}

// apiVersionFromBody sets the API version from a string at a dotted path
// of the JSON body.
func apiVersionFromBody(path string) func(*webhooks.Request, *webhooks.Verification) error {
	return func(req *webhooks.Request, v *webhooks.Verification) error {
		doc := wire.Doc{Body: req.Body}
		if value, ok := doc.LookupString(path); ok {
			v.APIVersion = value
		}
		return nil
	}
}

const (
	windowNone = "none"
	window5m   = "±5 min"
)

// standardWebhooksEntry is an alias of the Standard Webhooks scheme for a
// provider that sends it (through Svix or its own implementation).
// wrongKind, when set, refuses the provider's API keys as the secret.
func standardWebhooksEntry(name, title, docs string, svixHeaders bool, wrongKind func([]byte) error) Entry {
	base, headers := StandardWebhooksOptions, "`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<b64> …` (`svix-*` read too)"
	if svixHeaders {
		base, headers = SvixOptions, "`svix-id`, `svix-timestamp`, `svix-signature: v1,<b64> …` (`webhook-*` read too)"
	}
	opts := func() webhooks.HMACOptions {
		o := base()
		o.CheckSecret = wrongKind
		return o
	}
	return hmacEntry(Entry{
		Name: name, Title: title, Docs: docs,
		Credential: "the endpoint's signing secret (whsec_…, base64)",
		Headers:    headers,
		Signed:     "`{id}.{timestamp}.{body}`, HMAC-SHA-256 base64; key = base64 after `whsec_`",
		Window:     window5m,
		EventID:    "the id header, signed; type from the body's `type` when present",
	}, opts)
}

// catalog lists every provider, sorted by name.
var catalog = []Entry{
	hmacEntry(Entry{
		Name: "airtable", Title: "Airtable", Docs: "https://airtable.com/developers/web/api/webhooks-overview",
		Credential: "the webhook's macSecretBase64 (base64)",
		Headers:    "`X-Airtable-Content-MAC: hmac-sha256=<hex>`",
		Signed:     "`{body}`, HMAC-SHA-256 hex; key = base64-decoded macSecretBase64",
		Window:     windowNone, EventID: "SHA-256 of the signed body (Airtable sends none)",
	}, AirtableOptions),
	{
		Name: "asana", Title: "Asana", Scheme: SchemeHMAC, Docs: "https://developers.asana.com/docs/webhooks-guide",
		Credential: "the secrets of the webhooks' handshakes; Config.Secrets must be a SecretSaver (HandshakeSecrets)",
		Headers:    "`X-Hook-Signature: <hex>`; handshake `X-Hook-Secret`",
		Signed:     "`{body}`, HMAC-SHA-256 hex",
		Window:     windowNone, EventID: "SHA-256 of the signed body (Asana sends none)",
		Handshakes: "`X-Hook-Secret` POST: secret handed to `SecretSaver.SaveSecret` (accepted only when expected, used only once the host confirmed its create call; two in one window discard both), echoed in a 200",
		build: hmacBuild(fixed(AsanaOptions), func(c Config, p *preset) {
			p.challenge = asanaHandshake(c.Secrets)
		}),
	},
	hmacEntry(Entry{
		Name: "bitbucket", Title: "Bitbucket Cloud", Docs: "https://support.atlassian.com/bitbucket-cloud/docs/manage-webhooks/",
		Credential: "the webhook's secret",
		Headers:    "`X-Hub-Signature: sha256=<hex>`, `X-Request-UUID`, `X-Event-Key`",
		Signed:     "`{body}`, HMAC-SHA-256 hex",
		Window:     windowNone, EventID: "`X-Request-UUID`, **not signed**",
	}, BitbucketOptions),
	{
		Name: "box", Title: "Box", Scheme: SchemeHMAC, Docs: "https://developer.box.com/guides/webhooks/v2/signatures-v2/",
		Credential: "the app's primary and secondary signature keys",
		Headers:    "`BOX-SIGNATURE-PRIMARY`, `BOX-SIGNATURE-SECONDARY`, `BOX-DELIVERY-TIMESTAMP`",
		Signed:     "`{body}{timestamp}`, HMAC-SHA-256 base64; either header, any key",
		Window:     "±10 min", EventID: "the body's `id` (kept across retries), signed",
		build: func(c Config) (webhooks.Verifier, error) {
			v, err := newAnyHeader(c, BoxOptions(), "Box-Signature-Primary", "Box-Signature-Secondary")
			if err != nil {
				return nil, err
			}
			return &preset{inner: v}, nil
		},
	},
	hmacEntry(Entry{
		Name: "calendly", Title: "Calendly", Docs: "https://developer.calendly.com/api-docs/4c305798a61d3-webhook-signatures",
		Credential: "the webhook signing key",
		Headers:    "`Calendly-Webhook-Signature: t=…,v1=<hex>`",
		Signed:     "`{timestamp}.{body}`, HMAC-SHA-256 hex",
		Window:     "±3 min", EventID: "SHA-256 of the signed body (Calendly sends none)",
	}, CalendlyOptions),
	standardWebhooksEntry("clerk", "Clerk (Svix)", "https://clerk.com/docs/webhooks/sync-data", true, clerkWrongKind),
	hmacEntry(Entry{
		Name: "coinbase", Title: "Coinbase Commerce", Docs: "https://docs.cdp.coinbase.com/commerce/docs/webhooks-security",
		Credential: "the webhook's shared secret",
		Headers:    "`X-CC-Webhook-Signature: <hex>`",
		Signed:     "`{body}`, HMAC-SHA-256 hex",
		Window:     windowNone, EventID: "the body's `event.id`, signed",
	}, CoinbaseCommerceOptions),
	ed25519Entry(Entry{
		Name: "discord", Title: "Discord interactions",
		Docs:       "https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint",
		Credential: "the application's public key (64 hex digits)",
		Headers:    "`X-Signature-Ed25519` (hex), `X-Signature-Timestamp`",
		Signed:     "`{timestamp}{body}`, Ed25519",
		Window:     window5m, EventID: "the body's `id`, signed",
		Handshakes: "PING (`type` 1) answered `{\"type\":1}` once signed",
	}, DiscordInteractionsOptions),
	ed25519Entry(Entry{
		Name: "discord-events", Title: "Discord webhook events",
		Docs:       "https://discord.com/developers/docs/events/webhook-events",
		Credential: "the application's public key (64 hex digits)",
		Headers:    "`X-Signature-Ed25519` (hex), `X-Signature-Timestamp`",
		Signed:     "`{timestamp}{body}`, Ed25519",
		Window:     window5m, EventID: "SHA-256 of the signed body (events carry none)",
		Handshakes: "PING (`type` 0) answered 204 once signed",
	}, DiscordWebhookEventsOptions),
	{
		Name: "docusign", Title: "DocuSign Connect", Scheme: SchemeHMAC, Docs: "https://developers.docusign.com/platform/webhooks/connect/hmac/",
		Credential: "the Connect HMAC keys",
		Headers:    "`X-DocuSign-Signature-1` … `-5`",
		Signed:     "`{body}`, HMAC-SHA-256 base64; any numbered header, any key",
		Window:     windowNone, EventID: "`event:data.envelopeId:generatedDateTime` from the body, signed; digest without `retryCount`",
		build: func(c Config) (webhooks.Verifier, error) {
			v, err := newAnyHeader(c, DocuSignOptions(), "X-Docusign-Signature-1", "X-Docusign-Signature-2", "X-Docusign-Signature-3", "X-Docusign-Signature-4", "X-Docusign-Signature-5")
			if err != nil {
				return nil, err
			}
			return &preset{inner: v, finish: docuSignFinish}, nil
		},
	},
	{
		Name: "dropbox", Title: "Dropbox", Scheme: SchemeHMAC, Docs: "https://www.dropbox.com/developers/reference/webhooks",
		Credential: "the app secret",
		Headers:    "`X-Dropbox-Signature: <hex>`",
		Signed:     "`{body}`, HMAC-SHA-256 hex",
		Window:     windowNone, EventID: "SHA-256 of the signed body (Dropbox sends none)",
		Handshakes: "GET `?challenge=` echoed as `text/plain` with `nosniff` (unauthenticated by Dropbox)",
		build: hmacBuild(fixed(DropboxOptions), func(_ Config, p *preset) {
			p.challenge, p.get = dropboxChallenge, true
		}),
	},
	{
		Name: "figma", Title: "Figma", Scheme: SchemeToken, Docs: "https://www.figma.com/developers/api#webhooks_v2",
		Credential: "the webhook's passcode",
		Headers:    "none: `passcode` in the JSON body",
		Signed:     "nothing: the body's `passcode` compared in constant time; stored redacted",
		Window:     windowNone, EventID: "SHA-256 of the body with the passcode redacted (Figma sends none); the passcode covers nothing",
		Handshakes: "PING event answered 200 once its passcode matched, not stored",
		build: func(c Config) (webhooks.Verifier, error) {
			v, err := newBodyTokenVerifier(c.Secrets, "passcode", figmaTokens, webhooks.EventSource{IDFromBody: true, TypePath: "event_type"}, figmaSecrets, "passcode")
			if err != nil {
				return nil, err
			}
			return &preset{inner: v, finish: figmaPing}, nil
		},
	},
	hmacEntry(Entry{
		Name: "github", Title: "GitHub",
		Docs:       "https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries",
		Credential: "the webhook's secret",
		Headers:    "`X-Hub-Signature-256: sha256=<hex>`, `X-GitHub-Delivery`, `X-GitHub-Event`; the SHA-1 `X-Hub-Signature` is not read",
		Signed:     "`{body}`, HMAC-SHA-256 hex",
		Window:     windowNone, EventID: "`X-GitHub-Delivery`, **not signed**",
	}, GitHubOptions),
	{
		Name: "gitlab", Title: "GitLab (secret token)", Scheme: SchemeToken,
		Docs:       "https://docs.gitlab.com/user/project/integrations/webhooks/#delivery-headers",
		Credential: "the webhook's secret token",
		Headers:    "`X-Gitlab-Token`, `Idempotency-Key`, `X-Gitlab-Event`",
		Signed:     "nothing: the token compared in constant time",
		Window:     windowNone, EventID: "`Idempotency-Key`, **not signed**",
		build: tokenBuild(GitLabTokenOptions, nil, nil, nil),
	},
	hmacEntry(Entry{
		Name: "gitlab-signing", Title: "GitLab (signing token)",
		Docs:       "https://gitlab.com/gitlab-org/gitlab/-/merge_requests/230944",
		Credential: "the webhook's signing token (whsec_…)",
		Headers:    "`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<b64>`, `X-Gitlab-Event`",
		Signed:     "`{id}.{timestamp}.{body}`, HMAC-SHA-256 base64",
		Window:     window5m, EventID: "`webhook-id` (= `Idempotency-Key`), signed",
	}, GitLabSigningOptions),
	{
		Name: "hubspot", Title: "HubSpot (v3 signature)", Scheme: SchemeHMAC, NeedsPublicURL: true,
		Docs:       "https://developers.hubspot.com/docs/api/webhooks/validating-requests",
		Credential: "the app's client secret",
		Headers:    "`X-HubSpot-Signature-v3`, `X-HubSpot-Request-Timestamp` (ms); the older `X-HubSpot-Signature` is not read",
		Signed:     "`{method}{public URL}{body}{timestamp}`, HMAC-SHA-256 base64; listed %-encodings decoded in the URL",
		Window:     window5m, EventID: "SHA-256 of the signed body (a batch of events)",
		build: hmacBuild(func(c Config) webhooks.HMACOptions { return HubSpotOptions(c.PublicURL) }, nil),
	},
	hmacEntry(Entry{
		Name: "intercom", Title: "Intercom", Docs: "https://developers.intercom.com/docs/references/webhooks/webhook-models#signed-notifications",
		Credential: "the app's client secret",
		Headers:    "`X-Hub-Signature: sha1=<hex>`",
		Signed:     "`{body}`, HMAC-SHA-1 hex",
		Window:     windowNone, EventID: "the body's `id`, signed",
	}, IntercomOptions),
	hmacEntry(Entry{
		Name: "jira", Title: "Jira Cloud (admin webhooks)", Docs: "https://developer.atlassian.com/cloud/jira/platform/webhooks/#secure-admin-webhooks",
		Credential: "the webhook's secret",
		Headers:    "`X-Hub-Signature: sha256=<hex>`, `X-Atlassian-Webhook-Identifier`",
		Signed:     "`{body}`, HMAC-SHA-256 hex",
		Window:     windowNone, EventID: "`X-Atlassian-Webhook-Identifier` (kept across retries), **not signed**",
	}, JiraOptions),
	hmacEntry(Entry{
		Name: "lemonsqueezy", Title: "Lemon Squeezy", Docs: "https://docs.lemonsqueezy.com/help/webhooks/signing-requests",
		Credential: "the webhook's signing secret",
		Headers:    "`X-Signature: <hex>`, `X-Event-Name`",
		Signed:     "`{body}`, HMAC-SHA-256 hex",
		Window:     windowNone, EventID: "SHA-256 of the signed body (Lemon Squeezy sends none)",
	}, LemonSqueezyOptions),
	{
		Name: "line", Title: "LINE Messaging API", Scheme: SchemeHMAC, Docs: "https://developers.line.biz/en/reference/messaging-api/#signature-validation",
		Credential: "the channel secret",
		Headers:    "`x-line-signature: <b64>`",
		Signed:     "`{body}`, HMAC-SHA-256 base64",
		Window:     windowNone, EventID: "the events' `webhookEventId`s, signed; digest without `isRedelivery`",
		Handshakes: "verification (empty `events`) answered 200 once signed",
		build: hmacBuild(fixed(LINEOptions), func(_ Config, p *preset) {
			p.finish = lineDigest
		}),
	},
	hmacEntry(Entry{
		Name: "linear", Title: "Linear",
		Docs:       "https://linear.app/developers/webhooks#securing-webhooks",
		Credential: "the webhook's signing secret",
		Headers:    "`Linear-Signature: <hex>`, `Linear-Delivery`, `Linear-Event`",
		Signed:     "`{body}`, HMAC-SHA-256 hex; the body's `webhookTimestamp` (ms) is signed with it",
		Window:     "±1 min", EventID: "`Linear-Delivery`, **not signed**",
	}, LinearOptions),
	{
		Name: "mailgun", Title: "Mailgun", Scheme: SchemeHMAC, Docs: "https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks",
		Credential: "the domain's webhook signing key",
		Headers:    "none: `signature.{timestamp,token,signature}` in the JSON body",
		Signed:     "`{timestamp}{token}` from the body, HMAC-SHA-256 hex; **the event data is not signed**; `signature.signature` stored redacted",
		Window:     window5m, EventID: "`event-data.id`, **not signed**; the signed token is the replay key",
		build: func(c Config) (webhooks.Verifier, error) {
			v, err := NewMailgunVerifier(MailgunOptions{Clock: c.Clock}, c.Secrets)
			if err != nil {
				return nil, err
			}
			return &preset{inner: v}, nil
		},
	},
	{
		Name: "meta", Title: "Meta (WhatsApp, Instagram, Messenger)", Scheme: SchemeHMAC, NeedsVerifyToken: true,
		Docs:       "https://developers.facebook.com/docs/graph-api/webhooks/getting-started",
		Credential: "the app secret",
		Headers:    "`X-Hub-Signature-256: sha256=<hex>`; the SHA-1 `X-Hub-Signature` is not read",
		Signed:     "`{body}`, HMAC-SHA-256 hex",
		Window:     windowNone, EventID: "SHA-256 of the signed body (Meta sends none)",
		Handshakes: "GET `hub.mode=subscribe&hub.verify_token=…&hub.challenge=…`: challenge echoed as `text/plain` when the verify token matches",
		Answer:     answerOK,
		build: hmacBuild(fixed(MetaOptions), func(c Config, p *preset) {
			p.challenge, p.get = metaChallenge(c.VerifyToken), true
		}),
	},
	{
		Name: "msgraph", Title: "Microsoft Graph change notifications", Scheme: SchemeToken,
		Docs:       "https://learn.microsoft.com/en-us/graph/change-notifications-delivery-webhooks",
		Credential: "the subscription's clientState",
		Headers:    "none: `clientState` of every notification in the body",
		Signed:     "nothing: each `value[].clientState` compared in constant time; stored redacted, as are `validationTokens`",
		Window:     windowNone, EventID: "SHA-256 of the body with clientState redacted (Graph sends none); clientState covers nothing",
		Handshakes: "POST `?validationToken=…` echoed as `text/plain` (cannot be authenticated: it carries no clientState)",
		Answer:     answerAccepted,
		build: func(c Config) (webhooks.Verifier, error) {
			v, err := newBodyTokenVerifier(c.Secrets, "clientState", graphTokens, graphEvent, graphSecrets, "value", "value.*.clientState")
			if err != nil {
				return nil, err
			}
			return &preset{inner: v, challenge: graphValidation, finish: graphType}, nil
		},
	},
	{
		Name: "msteams", Title: "Microsoft Teams outgoing webhooks", Scheme: SchemeHMAC,
		Docs:       "https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/add-outgoing-webhook",
		Credential: "the webhook's security token (base64)",
		Headers:    "`Authorization: HMAC <b64>`",
		Signed:     "`{body}`, HMAC-SHA-256 base64; key = base64-decoded security token",
		Window:     windowNone, EventID: "the activity's `id`, signed",
		Answer: &webhooks.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: []byte(`{"type":"message","text":"Received."}`)},
		build: hmacBuild(fixed(TeamsOptions), nil),
	},
	hmacEntry(Entry{
		Name: "mux", Title: "Mux", Docs: "https://docs.mux.com/core/verify-webhook-signatures",
		Credential: "the webhook's signing secret",
		Headers:    "`Mux-Signature: t=…,v1=<hex>`",
		Signed:     "`{timestamp}.{body}`, HMAC-SHA-256 hex",
		Window:     window5m, EventID: "the body's `id`, signed",
	}, MuxOptions),
	{
		Name: "notion", Title: "Notion", Scheme: SchemeHMAC, Docs: "https://developers.notion.com/reference/webhooks",
		Credential: "the subscription's verification_token; Config.Secrets must be a SecretSaver to receive it",
		Headers:    "`X-Notion-Signature: sha256=<hex>`",
		Signed:     "`{body}`, HMAC-SHA-256 hex",
		Window:     windowNone, EventID: "the body's `id`, signed",
		Handshakes: "unsigned `{\"verification_token\":…}` POST: token handed to `SecretSaver.SaveSecret` (accepted only when expected, used only once the host confirmed; two in one window discard both), 200",
		build: hmacBuild(fixed(NotionOptions), func(c Config, p *preset) {
			p.challenge = notionVerification(c.Secrets)
		}),
	},
	{
		Name: "okta", Title: "Okta event hooks", Scheme: SchemeToken, Docs: "https://developer.okta.com/docs/concepts/event-hooks/",
		Credential: "the hook's Authorization header value",
		Headers:    "`Authorization` (the configured value), `X-Okta-Verification-Challenge`",
		Signed:     "nothing: the header value compared in constant time",
		Window:     windowNone, EventID: "the body's `eventId`, **not signed**",
		Handshakes: "one-time GET with `X-Okta-Verification-Challenge` answered `{\"verification\":…}` once its `Authorization` matched",
		build:      tokenBuild(OktaOptions, nil, nil, oktaVerification),
	},
	standardWebhooksEntry("openai", "OpenAI (Standard Webhooks)", "https://platform.openai.com/docs/guides/webhooks", false, openAIWrongKind),
	hmacEntry(Entry{
		Name: "paddle", Title: "Paddle Billing",
		Docs:       "https://developer.paddle.com/webhooks/signature-verification",
		Credential: "the notification destination's secret key (pdl_ntfset_…)",
		Headers:    "`Paddle-Signature: ts=…;h1=<hex>`",
		Signed:     "`{timestamp}:{body}`, HMAC-SHA-256 hex",
		Window:     "±5 s", EventID: "the body's `event_id`, signed",
	}, PaddleOptions),
	hmacEntry(Entry{
		Name: "pagerduty", Title: "PagerDuty (V3 webhooks)", Docs: "https://developer.pagerduty.com/docs/webhooks-v3-overview#verifying-signatures",
		Credential: "the subscription's secret",
		Headers:    "`X-PagerDuty-Signature: v1=<hex>[,v1=<hex>]`",
		Signed:     "`{body}`, HMAC-SHA-256 hex, any `v1` of the list",
		Window:     windowNone, EventID: "the body's `event.id`, signed",
	}, PagerDutyOptions),
	hmacEntry(Entry{
		Name: "razorpay", Title: "Razorpay", Docs: "https://razorpay.com/docs/webhooks/validate-test/",
		Credential: "the webhook secret",
		Headers:    "`X-Razorpay-Signature: <hex>`, `x-razorpay-event-id`",
		Signed:     "`{body}`, HMAC-SHA-256 hex",
		Window:     windowNone, EventID: "`x-razorpay-event-id`, **not signed**",
	}, RazorpayOptions),
	standardWebhooksEntry("replicate", "Replicate (Standard Webhooks)", "https://replicate.com/docs/topics/webhooks/verify-webhook", false, replicateWrongKind),
	standardWebhooksEntry("resend", "Resend (Svix)", "https://resend.com/docs/dashboard/webhooks/verify-webhooks-requests", true, resendWrongKind),
	{
		Name: "sendgrid", Title: "Twilio SendGrid Event Webhook", Scheme: SchemeECDSA,
		Docs:       "https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/getting-started-event-webhook-security-features",
		Credential: "the verification key (base64 DER ECDSA P-256 public key)",
		Headers:    "`X-Twilio-Email-Event-Webhook-Signature` (base64 DER), `X-Twilio-Email-Event-Webhook-Timestamp`",
		Signed:     "`{timestamp}{body}`, ECDSA P-256 with SHA-256",
		Window:     window5m, EventID: "SHA-256 of the signed body (a batch of events)",
		build: func(c Config) (webhooks.Verifier, error) {
			v, err := NewSendGridVerifier(SendGridOptions{Clock: c.Clock}, c.Secrets)
			if err != nil {
				return nil, err
			}
			return &preset{inner: v}, nil
		},
	},
	hmacEntry(Entry{
		Name: "sentry", Title: "Sentry", Docs: "https://docs.sentry.io/organization/integrations/integration-platform/webhooks/",
		Credential: "the integration's client secret",
		Headers:    "`Sentry-Hook-Signature: <hex>`, `Request-ID`, `Sentry-Hook-Resource`",
		Signed:     "`{body}`, HMAC-SHA-256 hex",
		Window:     windowNone, EventID: "`Request-ID`, **not signed**",
	}, SentryOptions),
	{
		Name: "shopify", Title: "Shopify", Scheme: SchemeHMAC,
		Docs:       "https://shopify.dev/docs/apps/build/webhooks/verify-deliveries",
		Credential: "the app's client secret",
		Headers:    "`X-Shopify-Hmac-Sha256`, `X-Shopify-Webhook-Id`, `X-Shopify-Topic`, `X-Shopify-API-Version`",
		Signed:     "`{body}`, HMAC-SHA-256 base64",
		Window:     windowNone, EventID: "`X-Shopify-Webhook-Id`, **not signed**; API version from `X-Shopify-API-Version`",
		build: hmacBuild(fixed(ShopifyOptions), func(_ Config, p *preset) {
			p.finish = headerAPIVersion("X-Shopify-Api-Version")
		}),
	},
	{
		Name: "slack", Title: "Slack Events API", Scheme: SchemeHMAC,
		Docs:       "https://api.slack.com/authentication/verifying-requests-from-slack",
		Credential: "the app's signing secret",
		Headers:    "`X-Slack-Signature: v0=<hex>`, `X-Slack-Request-Timestamp`",
		Signed:     "`v0:{timestamp}:{body}`, HMAC-SHA-256 hex; the body's deprecated verification `token` is stored redacted",
		Window:     window5m, EventID: "the body's `event_id`, signed",
		Handshakes: "`url_verification` answered with the challenge (`text/plain`) once signed; `app_rate_limited` acknowledged",
		build: hmacBuild(fixed(SlackOptions), func(_ Config, p *preset) {
			p.finish = slackRedact
		}),
	},
	{
		Name: "sns", Title: "Amazon SNS", Scheme: SchemeCertificate,
		Docs:       "https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html",
		Credential: "the topic ARNs the route accepts",
		Headers:    "none: `Signature`, `SignatureVersion`, `SigningCertURL` in the JSON body",
		Signed:     "the documented string to sign, RSA with SHA-1 (version 1) or SHA-256 (version 2); certificate fetched over https from `sns.<region>.amazonaws.com[.cn]` at `/SimpleNotificationService-…pem` only, issued to `sns.amazonaws.com` (or the region's signing name) under a trusted root, cached; `Signature` stored redacted",
		Window:     windowNone + " (retries keep the first Timestamp)", EventID: "`MessageId`, signed",
		Handshakes: "`SubscriptionConfirmation`/`UnsubscribeConfirmation` handed to `Config.Confirm` once verified, 200; the SubscribeURL is never visited by the verifier",
		build: func(c Config) (webhooks.Verifier, error) {
			hosts := c.KeyHosts
			if len(hosts) == 0 {
				hosts = SNSCertificateHosts
			}
			keys, err := NewCertificateFetcher(CertificateFetcherOptions{
				Client: c.HTTPClient, AllowedHosts: hosts, Path: SNSCertificatePath, Names: SNSCertificateNames, Roots: c.KeyRoots, Clock: c.Clock,
			})
			if err != nil {
				return nil, err
			}
			v, err := NewSNSVerifier(SNSOptions{Keys: keys, Confirm: c.Confirm, Clock: c.Clock}, c.Secrets)
			if err != nil {
				return nil, err
			}
			return &preset{inner: v}, nil
		},
	},
	{
		Name: "square", Title: "Square", Scheme: SchemeHMAC, NeedsPublicURL: true,
		Docs:       "https://developer.squareup.com/docs/webhooks/step3validate",
		Credential: "the subscription's signature key",
		Headers:    "`x-square-hmacsha256-signature: <b64>`",
		Signed:     "`{public URL}{body}`, HMAC-SHA-256 base64",
		Window:     windowNone, EventID: "the body's `event_id`, signed",
		build: hmacBuild(func(c Config) webhooks.HMACOptions { return SquareOptions(c.PublicURL) }, nil),
	},
	hmacEntry(Entry{
		Name: "standardwebhooks", Title: "Standard Webhooks",
		Docs:       "https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md",
		Credential: "the endpoint's signing secret (whsec_…)",
		Headers:    "`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<b64> …` (`svix-*` read too)",
		Signed:     "`{id}.{timestamp}.{body}`, HMAC-SHA-256 base64; key = base64 after `whsec_`",
		Window:     window5m, EventID: "`webhook-id`, signed",
	}, StandardWebhooksOptions),
	ed25519Entry(Entry{
		Name: "standardwebhooks-ed25519", Title: "Standard Webhooks v1a (Ed25519)",
		Docs:       "https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md#signature-scheme",
		Credential: "the sender's public key (whpk_…)",
		Headers:    "`webhook-id`, `webhook-timestamp`, `webhook-signature: v1a,<b64> …`",
		Signed:     "`{id}.{timestamp}.{body}`, Ed25519",
		Window:     window5m, EventID: "`webhook-id`, signed",
	}, StandardWebhooksEd25519Options),
	{
		Name: "stripe", Title: "Stripe", Scheme: SchemeHMAC,
		Docs:       "https://docs.stripe.com/webhooks#verify-manually",
		Credential: "the endpoint's signing secret (whsec_…)",
		Headers:    "`Stripe-Signature: t=…,v1=<hex>[,v1=…]`",
		Signed:     "`{timestamp}.{body}`, HMAC-SHA-256 hex",
		Window:     window5m, EventID: "the body's `id`, signed; API version from the body's `api_version`",
		build: hmacBuild(fixed(StripeOptions), func(_ Config, p *preset) {
			p.finish = apiVersionFromBody("api_version")
		}),
	},
	standardWebhooksEntry("svix", "Svix", "https://docs.svix.com/receiving/verifying-payloads/how-manual", true, nil),
	{
		Name: "telegram", Title: "Telegram Bot API", Scheme: SchemeToken,
		Docs:       "https://core.telegram.org/bots/api#setwebhook",
		Credential: "the bot's secret_token (1–256 of A-Z a-z 0-9 _ -)",
		Headers:    "`X-Telegram-Bot-Api-Secret-Token`",
		Signed:     "nothing: the token compared in constant time",
		Window:     windowNone, EventID: "the update's `update_id`, **not signed**",
		build: tokenBuild(TelegramOptions, telegramSecret, telegramType, nil),
	},
	{
		Name: "trello", Title: "Trello", Scheme: SchemeHMAC, NeedsPublicURL: true,
		Docs:       "https://developer.atlassian.com/cloud/trello/guides/rest-api/webhooks/#webhook-signatures",
		Credential: "the application's secret",
		Headers:    "`X-Trello-Webhook: <b64>`",
		Signed:     "`{body}{callback URL}`, HMAC-SHA-1 base64",
		Window:     windowNone, EventID: "the body's `action.id`, signed",
		Handshakes: "Trello's HEAD check of a new callback URL is answered 200 with no body by the Receiver, as HEAD is for every entry",
		build:      hmacBuild(func(c Config) webhooks.HMACOptions { return TrelloOptions(c.PublicURL) }, nil),
	},
	{
		Name: "twilio", Title: "Twilio", Scheme: SchemeTwilioURL, NeedsPublicURL: true,
		Docs:       "https://www.twilio.com/docs/usage/webhooks/webhooks-security",
		Credential: "the account's auth token",
		Headers:    "`X-Twilio-Signature`",
		Signed:     "public URL + sorted POST parameters, HMAC-SHA-1 base64 (JSON: URL with `bodySHA256`)",
		Window:     windowNone, EventID: "SHA-256 of the signed parameters",
		build: func(c Config) (webhooks.Verifier, error) {
			v, err := NewTwilioVerifier(TwilioOptions{BaseURL: c.PublicURL}, c.Secrets)
			if err != nil {
				return nil, err
			}
			return &preset{inner: v}, nil
		},
	},
	{
		Name: "twitch", Title: "Twitch EventSub", Scheme: SchemeHMAC,
		Docs:       "https://dev.twitch.tv/docs/eventsub/handling-webhook-events",
		Credential: "the subscription's secret (10–100 ASCII characters)",
		Headers:    "`Twitch-Eventsub-Message-Signature: sha256=<hex>`, `-Message-Id`, `-Message-Timestamp`, `-Message-Type`, `-Subscription-Type`",
		Signed:     "`{id}{timestamp}{body}`, HMAC-SHA-256 hex",
		Window:     "±10 min", EventID: "`Twitch-Eventsub-Message-Id`, signed",
		Handshakes: "`webhook_callback_verification` answered with the challenge (`text/plain`) once signed",
		build: hmacBuild(fixed(TwitchOptions), func(_ Config, p *preset) {
			p.finish = twitchType
		}),
	},
	{
		Name: "twitter", Title: "X (Twitter)", Scheme: SchemeHMAC,
		Docs:       "https://docs.x.com/x-api/webhooks/introduction",
		Credential: "the app's consumer secret",
		Headers:    "`x-twitter-webhooks-signature: sha256=<b64>`",
		Signed:     "`{body}`, HMAC-SHA-256 base64",
		Window:     windowNone, EventID: "SHA-256 of the signed body (X sends none)",
		Handshakes: "GET `?crc_token=T` answered `{\"response_token\":\"sha256=<b64 HMAC of T>\"}` only for a T of 1–128 characters `A-Za-z0-9+/=_-`; a delivery must be a JSON object, so no answer is a delivery's signature",
		Answer:     answerOK,
		build: hmacBuild(fixed(TwitterOptions), func(c Config, p *preset) {
			p.challenge, p.get, p.finish = twitterCRC(c.Secrets), true, twitterType
		}),
	},
	hmacEntry(Entry{
		Name: "typeform", Title: "Typeform", Docs: "https://www.typeform.com/developers/webhooks/secure-your-webhooks/",
		Credential: "the webhook's secret",
		Headers:    "`Typeform-Signature: sha256=<b64>`",
		Signed:     "`{body}`, HMAC-SHA-256 base64",
		Window:     windowNone, EventID: "the body's `event_id`, signed",
	}, TypeformOptions),
	hmacEntry(Entry{
		Name: "vercel", Title: "Vercel", Docs: "https://vercel.com/docs/webhooks/webhooks-api#securing-webhooks",
		Credential: "the integration's client secret or the webhook's secret",
		Headers:    "`x-vercel-signature: <hex>`",
		Signed:     "`{body}`, HMAC-SHA-1 hex",
		Window:     windowNone, EventID: "the body's `id`, signed",
	}, VercelOptions),
	{
		Name: "woocommerce", Title: "WooCommerce", Scheme: SchemeHMAC,
		Docs:       "https://woocommerce.github.io/woocommerce-rest-api-docs/#webhooks",
		Credential: "the webhook's secret",
		Headers:    "`X-WC-Webhook-Signature: <b64>`, `X-WC-Webhook-Delivery-ID`, `X-WC-Webhook-Topic`",
		Signed:     "`{body}`, HMAC-SHA-256 base64",
		Window:     windowNone, EventID: "`X-WC-Webhook-Delivery-ID`, **not signed**",
		Handshakes: "the unsigned `webhook_id=<n>` ping sent when a webhook is saved answered 200, not stored",
		build: hmacBuild(fixed(WooCommerceOptions), func(_ Config, p *preset) {
			p.challenge = wooCommercePing
		}),
	},
	hmacEntry(Entry{
		Name: "zendesk", Title: "Zendesk", Docs: "https://developer.zendesk.com/documentation/webhooks/verifying/",
		Credential: "the webhook's signing secret",
		Headers:    "`X-Zendesk-Webhook-Signature: <b64>`, `X-Zendesk-Webhook-Signature-Timestamp`, `X-Zendesk-Webhook-Invocation-Id`",
		Signed:     "`{timestamp}{body}`, HMAC-SHA-256 base64",
		Window:     window5m, EventID: "`X-Zendesk-Webhook-Invocation-Id`, **not signed**",
	}, ZendeskOptions),
	hmacEntry(Entry{
		Name: "zoom", Title: "Zoom",
		Docs:       "https://developers.zoom.us/docs/api/webhooks/#verify-webhook-events",
		Credential: "the app's secret token",
		Headers:    "`x-zm-signature: v0=<hex>`, `x-zm-request-timestamp`",
		Signed:     "`v0:{timestamp}:{body}`, HMAC-SHA-256 hex",
		Window:     window5m, EventID: "SHA-256 of the signed body (Zoom sends none)",
		Handshakes: "`endpoint.url_validation` answered `{plainToken, encryptedToken}` once signed, only for a plainToken of 1–128 characters `A-Za-z0-9+/=_-` (never a `v0:…` string, so never a signature)",
	}, ZoomOptions),
}
