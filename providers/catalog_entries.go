package providers

import (
	"context"
	"net/http"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/jsonpath"
	"github.com/hookinbox/webhooks/internal/sigsyntax"
)

// Builders of catalog entries.

// fixed adapts an options function that needs no configuration.
func fixed(f func() webhooks.HMACOptions) func(string) webhooks.HMACOptions {
	return func(string) webhooks.HMACOptions { return f() }
}

// hmacEntry is a catalog entry for an HMAC preset.
func hmacEntry(e Entry, opts func() webhooks.HMACOptions) Entry {
	e.Scheme = SchemeHMAC
	e.hmac = fixed(opts)
	return e
}

// ed25519Entry is a catalog entry for an Ed25519 preset.
func ed25519Entry(e Entry, opts func() Ed25519Options) Entry {
	e.Scheme = SchemeEd25519
	e.ed25519 = opts
	return e
}

// challengeFunc answers a provider challenge before any signature is
// checked (see preset.challenge).
type challengeFunc = func(ctx context.Context, route webhooks.Route, req *webhooks.Request) (*webhooks.Response, error)

// finishWith adds a finish to a preset (see preset.finish).
func finishWith(f func(*webhooks.Request, *webhooks.Verification) error) func(Config, *preset) {
	return func(_ Config, p *preset) { p.finish = f }
}

// headerAPIVersion sets the API version from a header.
func headerAPIVersion(name string) func(*webhooks.Request, *webhooks.Verification) error {
	return func(req *webhooks.Request, v *webhooks.Verification) error {
		if value, n := sigsyntax.Header(req.Header, name); n == 1 {
			v.APIVersion = value
		}
		return nil
	}
}

// apiVersionFromBody sets the API version from a string at a dotted path
// of the JSON body.
func apiVersionFromBody(path string) func(*webhooks.Request, *webhooks.Verification) error {
	return func(req *webhooks.Request, v *webhooks.Verification) error {
		doc := jsonpath.Doc{Body: req.Body}
		if value, ok := doc.LookupString(path); ok {
			v.APIVersion = value
		}
		return nil
	}
}

// windowNone is the window of a scheme that signs no time.
const windowNone = "none"

// standardWebhooksEntry is an alias of the Standard Webhooks scheme for a
// provider that sends it (through Svix or its own implementation).
// wrongKind, when set, refuses the provider's API keys as the secret.
func standardWebhooksEntry(name, title, docs string, svixHeaders bool, wrongKind func([]byte) error) Entry {
	base := StandardWebhooksOptions
	if svixHeaders {
		base = SvixOptions
	}
	opts := func() webhooks.HMACOptions {
		o := base()
		o.CheckSecret = wrongKind
		return o
	}
	return hmacEntry(Entry{
		Name: name, Title: title, Docs: docs,
		Credential: "the endpoint's signing secret (whsec_…, base64)",
		notes:      notes{signed: "; key = base64 after `whsec_`", eventID: "; type from the body's `type` when present"},
	}, opts)
}

// catalog lists every provider, sorted by name.
var catalog = []Entry{
	hmacEntry(Entry{
		Name: "airtable", Title: "Airtable", Docs: "https://airtable.com/developers/web/api/webhooks-overview",
		Credential: "the webhook's macSecretBase64 (base64)",
		notes:      notes{signed: "; key = base64-decoded macSecretBase64", eventID: " (Airtable sends none)"},
	}, AirtableOptions),
	{
		Name: "asana", Title: "Asana", Scheme: SchemeHMAC, Docs: "https://developers.asana.com/docs/webhooks-guide",
		Credential: "the secrets of the webhooks' handshakes; Config.Secrets must be a SecretSaver (HandshakeSecrets)",
		notes:      notes{headers: "; handshake `X-Hook-Secret`", eventID: " (Asana sends none)"},
		Handshakes: "`X-Hook-Secret` POST: secret handed to `SecretSaver.SaveSecret` (accepted only when expected, used only once the host confirmed its create call; two in one window discard both), echoed in a 200",
		hmac:       fixed(AsanaOptions), mod: func(c Config, p *preset) {
			p.challenge = asanaHandshake(c.Secrets)
		},
	},
	hmacEntry(Entry{
		Name: "bitbucket", Title: "Bitbucket Cloud", Docs: "https://support.atlassian.com/bitbucket-cloud/docs/manage-webhooks/",
		Credential: "the webhook's secret",
	}, BitbucketOptions),
	{
		Name: "box", Title: "Box", Scheme: SchemeHMAC, Docs: "https://developer.box.com/guides/webhooks/v2/signatures-v2/",
		Credential: "the app's primary and secondary signature keys",
		notes:      notes{signed: "; either header, any key", eventID: " (kept across retries)"},
		hmac:       fixed(BoxOptions), anyHeaders: []string{"Box-Signature-Primary", "Box-Signature-Secondary"},
	},
	hmacEntry(Entry{
		Name: "calendly", Title: "Calendly", Docs: "https://developer.calendly.com/api-docs/4c305798a61d3-webhook-signatures",
		Credential: "the webhook signing key",
		notes:      notes{eventID: " (Calendly sends none)"},
	}, CalendlyOptions),
	standardWebhooksEntry("clerk", "Clerk (Svix)", "https://clerk.com/docs/webhooks/sync-data", true, clerkWrongKind),
	hmacEntry(Entry{
		Name: "coinbase", Title: "Coinbase Commerce", Docs: "https://docs.cdp.coinbase.com/commerce/docs/webhooks-security",
		Credential: "the webhook's shared secret",
	}, CoinbaseCommerceOptions),
	ed25519Entry(Entry{
		Name: "discord", Title: "Discord interactions",
		Docs:       "https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint",
		Credential: "the application's public key (64 hex digits)",
		Handshakes: "PING (`type` 1) answered `{\"type\":1}` once signed",
	}, DiscordInteractionsOptions),
	ed25519Entry(Entry{
		Name: "discord-events", Title: "Discord webhook events",
		Docs:       "https://discord.com/developers/docs/events/webhook-events",
		Credential: "the application's public key (64 hex digits)",
		notes:      notes{eventID: " (events carry none)"},
		Handshakes: "PING (`type` 0) answered 204 once signed",
	}, DiscordWebhookEventsOptions),
	{
		Name: "docusign", Title: "DocuSign Connect", Scheme: SchemeHMAC, Docs: "https://developers.docusign.com/platform/webhooks/connect/hmac/",
		Credential: "the Connect HMAC keys",
		notes:      notes{signed: "; any numbered header, any key", eventID: "`event:data.envelopeId:generatedDateTime` from the body, signed; digest without `retryCount`"},
		hmac:       fixed(DocuSignOptions), mod: finishWith(docuSignFinish),
		anyHeaders: []string{"X-Docusign-Signature-1", "X-Docusign-Signature-2", "X-Docusign-Signature-3", "X-Docusign-Signature-4", "X-Docusign-Signature-5"},
	},
	{
		Name: "dropbox", Title: "Dropbox", Scheme: SchemeHMAC, Docs: "https://www.dropbox.com/developers/reference/webhooks",
		Credential: "the app secret",
		notes:      notes{eventID: " (Dropbox sends none)"},
		Handshakes: "GET `?challenge=` echoed as `text/plain` with `nosniff` (unauthenticated by Dropbox)",
		hmac:       fixed(DropboxOptions), mod: func(_ Config, p *preset) {
			p.challenge, p.get = dropboxChallenge, true
		},
	},
	{
		Name: "figma", Title: "Figma", Scheme: SchemeToken, Docs: "https://www.figma.com/developers/api#webhooks_v2",
		Credential: "the webhook's passcode",
		notes:      notes{headers: "none: `passcode` in the JSON body", signed: "nothing: the body's `passcode` compared in constant time; stored redacted", window: windowNone, eventID: "SHA-256 of the body with the passcode redacted (Figma sends none); the passcode covers nothing"},
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
	}, GitHubOptions),
	{
		Name: "gitlab", Title: "GitLab (secret token)", Scheme: SchemeToken,
		Docs:       "https://docs.gitlab.com/user/project/integrations/webhooks/#delivery-headers",
		Credential: "the webhook's secret token",
		token:      GitLabTokenOptions,
	},
	hmacEntry(Entry{
		Name: "gitlab-signing", Title: "GitLab (signing token)",
		Docs:       "https://gitlab.com/gitlab-org/gitlab/-/merge_requests/230944",
		Credential: "the webhook's signing token (whsec_…)",
		notes:      notes{eventID: " (= `Idempotency-Key`)"},
	}, GitLabSigningOptions),
	{
		Name: "hubspot", Title: "HubSpot (v3 signature)", Scheme: SchemeHMAC, NeedsPublicURL: true,
		Docs:       "https://developers.hubspot.com/docs/api/webhooks/validating-requests",
		Credential: "the app's client secret",
		notes:      notes{content: "`{method}{public URL}{body}{timestamp}`", signed: "; listed %-encodings decoded in the URL", eventID: " (a batch of events)"},
		hmac:       HubSpotOptions,
	},
	hmacEntry(Entry{
		Name: "intercom", Title: "Intercom", Docs: "https://developers.intercom.com/docs/references/webhooks/webhook-models#signed-notifications",
		Credential: "the app's client secret",
	}, IntercomOptions),
	hmacEntry(Entry{
		Name: "jira", Title: "Jira Cloud (admin webhooks)", Docs: "https://developer.atlassian.com/cloud/jira/platform/webhooks/#secure-admin-webhooks",
		Credential: "the webhook's secret",
		notes:      notes{eventID: " (kept across retries)"},
	}, JiraOptions),
	hmacEntry(Entry{
		Name: "lemonsqueezy", Title: "Lemon Squeezy", Docs: "https://docs.lemonsqueezy.com/help/webhooks/signing-requests",
		Credential: "the webhook's signing secret",
		notes:      notes{eventID: " (Lemon Squeezy sends none)"},
	}, LemonSqueezyOptions),
	{
		Name: "line", Title: "LINE Messaging API", Scheme: SchemeHMAC, Docs: "https://developers.line.biz/en/reference/messaging-api/#signature-validation",
		Credential: "the channel secret",
		notes:      notes{eventID: "the events' `webhookEventId`s, signed; digest without `isRedelivery`"},
		Handshakes: "verification (empty `events`) answered 200 once signed",
		hmac:       fixed(LINEOptions), mod: func(_ Config, p *preset) {
			p.finish = lineDigest
		},
	},
	hmacEntry(Entry{
		Name: "linear", Title: "Linear",
		Docs:       "https://linear.app/developers/webhooks#securing-webhooks",
		Credential: "the webhook's signing secret",
	}, LinearOptions),
	{
		Name: "mailgun", Title: "Mailgun", Scheme: SchemeHMAC, Docs: "https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks",
		Credential: "the domain's webhook signing key",
		notes:      notes{headers: "none: `signature.{timestamp,token,signature}` in the JSON body", signed: "`{timestamp}{token}` from the body, HMAC-SHA-256 hex; **the event data is not signed**; `signature.signature` stored redacted", window: window(webhooks.DefaultTolerance), eventID: "`event-data.id`, **not signed**; the signed token is the replay key"},
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
		notes:      notes{eventID: " (Meta sends none)"},
		Handshakes: "GET `hub.mode=subscribe&hub.verify_token=…&hub.challenge=…`: challenge echoed as `text/plain` when the verify token matches",
		Answer:     answerOK,
		hmac:       fixed(MetaOptions), mod: func(c Config, p *preset) {
			p.challenge, p.get = metaChallenge(c.VerifyToken), true
		},
	},
	{
		Name: "msgraph", Title: "Microsoft Graph change notifications", Scheme: SchemeToken,
		Docs:       "https://learn.microsoft.com/en-us/graph/change-notifications-delivery-webhooks",
		Credential: "the subscription's clientState",
		notes:      notes{headers: "none: `clientState` of every notification in the body", signed: "nothing: each `value[].clientState` compared in constant time; stored redacted, as are `validationTokens`", window: windowNone, eventID: "SHA-256 of the body with clientState redacted (Graph sends none); clientState covers nothing"},
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
		notes:      notes{signed: "; key = base64-decoded security token"},
		Answer: &webhooks.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: []byte(`{"type":"message","text":"Received."}`)},
		hmac: fixed(TeamsOptions),
	},
	hmacEntry(Entry{
		Name: "mux", Title: "Mux", Docs: "https://docs.mux.com/core/verify-webhook-signatures",
		Credential: "the webhook's signing secret",
	}, MuxOptions),
	{
		Name: "notion", Title: "Notion", Scheme: SchemeHMAC, Docs: "https://developers.notion.com/reference/webhooks",
		Credential: "the subscription's verification_token; Config.Secrets must be a SecretSaver to receive it",
		Handshakes: "unsigned `{\"verification_token\":…}` POST: token handed to `SecretSaver.SaveSecret` (accepted only when expected, used only once the host confirmed; two in one window discard both), 200",
		hmac:       fixed(NotionOptions), mod: func(c Config, p *preset) {
			p.challenge = notionVerification(c.Secrets)
		},
	},
	{
		Name: "okta", Title: "Okta event hooks", Scheme: SchemeToken, Docs: "https://developer.okta.com/docs/concepts/event-hooks/",
		Credential: "the hook's Authorization header value",
		notes:      notes{headers: " (the configured value); `X-Okta-Verification-Challenge` for the endpoint check"},
		Handshakes: "one-time GET with `X-Okta-Verification-Challenge` answered `{\"verification\":…}` once its `Authorization` matched",
		token:      OktaOptions, tokenGet: oktaVerification,
	},
	standardWebhooksEntry("openai", "OpenAI (Standard Webhooks)", "https://platform.openai.com/docs/guides/webhooks", false, openAIWrongKind),
	hmacEntry(Entry{
		Name: "paddle", Title: "Paddle Billing",
		Docs:       "https://developer.paddle.com/webhooks/signature-verification",
		Credential: "the notification destination's secret key (pdl_ntfset_…)",
	}, PaddleOptions),
	hmacEntry(Entry{
		Name: "pagerduty", Title: "PagerDuty (V3 webhooks)", Docs: "https://developer.pagerduty.com/docs/webhooks-v3-overview#verifying-signatures",
		Credential: "the subscription's secret",
	}, PagerDutyOptions),
	hmacEntry(Entry{
		Name: "razorpay", Title: "Razorpay", Docs: "https://razorpay.com/docs/webhooks/validate-test/",
		Credential: "the webhook secret",
	}, RazorpayOptions),
	standardWebhooksEntry("replicate", "Replicate (Standard Webhooks)", "https://replicate.com/docs/topics/webhooks/verify-webhook", false, replicateWrongKind),
	standardWebhooksEntry("resend", "Resend (Svix)", "https://resend.com/docs/dashboard/webhooks/verify-webhooks-requests", true, resendWrongKind),
	{
		Name: "sendgrid", Title: "Twilio SendGrid Event Webhook", Scheme: SchemeECDSA,
		Docs:       "https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/getting-started-event-webhook-security-features",
		Credential: "the verification key (base64 DER ECDSA P-256 public key)",
		notes:      notes{headers: code(SendGridSignatureHeader) + " (base64 DER), " + code(SendGridTimestampHeader), signed: "`{timestamp}{body}`, ECDSA P-256 with SHA-256", window: window(webhooks.DefaultTolerance), eventID: "SHA-256 of the signed body (a batch of events)"},
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
	}, SentryOptions),
	{
		Name: "shopify", Title: "Shopify", Scheme: SchemeHMAC,
		Docs:       "https://shopify.dev/docs/apps/build/webhooks/verify-deliveries",
		Credential: "the app's client secret",
		notes:      notes{headers: ", `X-Shopify-Api-Version`", eventID: "; API version from `X-Shopify-Api-Version`"},
		hmac:       fixed(ShopifyOptions), mod: func(_ Config, p *preset) {
			p.finish = headerAPIVersion("X-Shopify-Api-Version")
		},
	},
	{
		Name: "slack", Title: "Slack Events API", Scheme: SchemeHMAC,
		Docs:       "https://api.slack.com/authentication/verifying-requests-from-slack",
		Credential: "the app's signing secret",
		notes:      notes{signed: "; the body's deprecated verification `token` is stored redacted"},
		Handshakes: "`url_verification` answered with the challenge (`text/plain`) once signed; `app_rate_limited` acknowledged",
		hmac:       fixed(SlackOptions), mod: func(_ Config, p *preset) {
			p.finish = slackRedact
		},
	},
	{
		Name: "sns", Title: "Amazon SNS", Scheme: SchemeCertificate,
		Docs:       "https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html",
		Credential: "the topic ARNs the route accepts",
		notes:      notes{headers: "none: `Signature`, `SignatureVersion`, `SigningCertURL` in the JSON body", signed: "the documented string to sign, RSA with SHA-1 (version 1) or SHA-256 (version 2); certificate fetched over https from `sns.<region>.amazonaws.com[.cn]` at `/SimpleNotificationService-…pem` only, issued to `sns.amazonaws.com` (or the region's signing name) under a trusted root, cached; `Signature` stored redacted", window: windowNone + " (retries keep the first Timestamp)", eventID: "`MessageId`, signed"},
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
		notes:      notes{content: "`{public URL}{body}`"},
		hmac:       SquareOptions,
	},
	hmacEntry(Entry{
		Name: "standardwebhooks", Title: "Standard Webhooks",
		Docs:       "https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md",
		Credential: "the endpoint's signing secret (whsec_…)",
	}, StandardWebhooksOptions),
	ed25519Entry(Entry{
		Name: "standardwebhooks-ed25519", Title: "Standard Webhooks v1a (Ed25519)",
		Docs:       "https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md#signature-scheme",
		Credential: "the sender's public key (whpk_…)",
	}, StandardWebhooksEd25519Options),
	{
		Name: "stripe", Title: "Stripe", Scheme: SchemeHMAC,
		Docs:       "https://docs.stripe.com/webhooks#verify-manually",
		Credential: "the endpoint's signing secret (whsec_…)",
		notes:      notes{eventID: "; API version from the body's `api_version`"},
		hmac:       fixed(StripeOptions), mod: func(_ Config, p *preset) {
			p.finish = apiVersionFromBody("api_version")
		},
	},
	standardWebhooksEntry("svix", "Svix", "https://docs.svix.com/receiving/verifying-payloads/how-manual", true, nil),
	{
		Name: "telegram", Title: "Telegram Bot API", Scheme: SchemeToken,
		Docs:       "https://core.telegram.org/bots/api#setwebhook",
		Credential: "the bot's secret_token (1–256 of A-Z a-z 0-9 _ -)",
		token:      TelegramOptions, tokenValid: telegramSecret, mod: finishWith(telegramType),
	},
	{
		Name: "trello", Title: "Trello", Scheme: SchemeHMAC, NeedsPublicURL: true,
		Docs:       "https://developer.atlassian.com/cloud/trello/guides/rest-api/webhooks/#webhook-signatures",
		Credential: "the application's secret",
		notes:      notes{content: "`{body}{callback URL}`"},
		Handshakes: "Trello's HEAD check of a new callback URL is answered 200 with no body by the Receiver, as HEAD is for every entry",
		hmac:       TrelloOptions,
	},
	{
		Name: "twilio", Title: "Twilio", Scheme: SchemeTwilioURL, NeedsPublicURL: true,
		Docs:       "https://www.twilio.com/docs/usage/webhooks/webhooks-security",
		Credential: "the account's auth token",
		notes:      notes{headers: code(TwilioSignatureHeader), signed: "public URL + sorted POST parameters, HMAC-SHA-1 base64 (JSON: URL with `bodySHA256`; GET: the URL with its query)", window: windowNone, eventID: "SHA-256 of the signed parameters"},
		build: func(c Config) (webhooks.Verifier, error) {
			v, err := NewTwilioVerifier(TwilioOptions{BaseURL: c.PublicURL}, c.Secrets)
			if err != nil {
				return nil, err
			}
			return &preset{inner: v, getDeliveries: true}, nil
		},
	},
	{
		Name: "twitch", Title: "Twitch EventSub", Scheme: SchemeHMAC,
		Docs:       "https://dev.twitch.tv/docs/eventsub/handling-webhook-events",
		Credential: "the subscription's secret (10–100 ASCII characters)",
		notes:      notes{headers: ", `Twitch-Eventsub-Message-Type`"},
		Handshakes: "`webhook_callback_verification` answered with the challenge (`text/plain`) once signed",
		hmac:       fixed(TwitchOptions), mod: func(_ Config, p *preset) {
			p.finish = twitchType
		},
	},
	{
		Name: "twitter", Title: "X (Twitter)", Scheme: SchemeHMAC,
		Docs:       "https://docs.x.com/x-api/webhooks/introduction",
		Credential: "the app's consumer secret",
		notes:      notes{eventID: " (X sends none)"},
		Handshakes: "GET `?crc_token=T` answered `{\"response_token\":\"sha256=<b64 HMAC of T>\"}` only for a T of 1–128 characters `A-Za-z0-9+/=_-`; a delivery must be a JSON object, so no answer is a delivery's signature",
		Answer:     answerOK,
		hmac:       fixed(TwitterOptions), mod: func(c Config, p *preset) {
			p.challenge, p.get, p.finish = twitterCRC(c.Secrets), true, twitterType
		},
	},
	hmacEntry(Entry{
		Name: "typeform", Title: "Typeform", Docs: "https://www.typeform.com/developers/webhooks/secure-your-webhooks/",
		Credential: "the webhook's secret",
	}, TypeformOptions),
	hmacEntry(Entry{
		Name: "vercel", Title: "Vercel", Docs: "https://vercel.com/docs/webhooks/webhooks-api#securing-webhooks",
		Credential: "the integration's client secret or the webhook's secret",
	}, VercelOptions),
	{
		Name: "woocommerce", Title: "WooCommerce", Scheme: SchemeHMAC,
		Docs:       "https://woocommerce.github.io/woocommerce-rest-api-docs/#webhooks",
		Credential: "the webhook's secret",
		Handshakes: "the unsigned `webhook_id=<n>` ping sent when a webhook is saved answered 200, not stored",
		hmac:       fixed(WooCommerceOptions), mod: func(_ Config, p *preset) {
			p.challenge = wooCommercePing
		},
	},
	hmacEntry(Entry{
		Name: "zendesk", Title: "Zendesk", Docs: "https://developer.zendesk.com/documentation/webhooks/verifying/",
		Credential: "the webhook's signing secret",
	}, ZendeskOptions),
	hmacEntry(Entry{
		Name: "zoom", Title: "Zoom",
		Docs:       "https://developers.zoom.us/docs/api/webhooks/#verify-webhook-events",
		Credential: "the app's secret token",
		notes:      notes{eventID: " (Zoom sends none)"},
		Handshakes: "`endpoint.url_validation` answered `{plainToken, encryptedToken}` once signed, only for a plainToken of 1–128 characters `A-Za-z0-9+/=_-` (never a `v0:…` string, so never a signature)",
	}, ZoomOptions),
}
