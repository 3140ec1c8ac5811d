package providers

import (
	"errors"
	"fmt"
	"slices"

	"github.com/hookinbox/webhooks"
)

// Config is what New needs to build a provider's verifier. A provider uses
// the fields its scheme needs and ignores the others; schemes added to the
// catalog later add fields here (for example a verify token for providers
// that check an endpoint with a GET challenge), so a Config written today
// keeps working.
type Config struct {
	// Secrets supplies the provider's credentials per route: signing
	// secrets, tokens or public keys, as the Entry's Credential says.
	// Several may be live at once (rotation). Required.
	Secrets webhooks.CredentialResolver

	// PublicURL is the public scheme, host and any path prefix under
	// which the provider reaches this service, for example
	// "https://hooks.example.com", for schemes that sign the URL they
	// call (Twilio). Empty for the others.
	PublicURL string

	// Clock tells the time that signed timestamps are checked against.
	// Defaults to the system clock.
	Clock webhooks.Clock
}

// Schemes of catalog entries, the values of Entry.Scheme.
const (
	SchemeHMAC      = "hmac"       // an HMAC of the request, webhooks.NewHMACVerifier
	SchemeEd25519   = "ed25519"    // an Ed25519 signature, NewEd25519Verifier
	SchemeToken     = "token"      // a shared token in a header, NewTokenVerifier
	SchemeTwilioURL = "twilio-url" // an HMAC of the public URL and parameters, NewTwilioVerifier
)

// Entry describes one provider of the catalog.
type Entry struct {
	// Name is the catalog name, short lower-case words joined by "-",
	// for example "stripe" or "discord-events". It is a good provider key
	// to register the verifier under.
	Name string
	// Title is the provider's name as people write it, for example
	// "Stripe" or "Discord webhook events".
	Title string
	// Docs is the address of the documentation the scheme follows.
	Docs string
	// Scheme is how requests are authenticated: SchemeHMAC,
	// SchemeEd25519, SchemeToken or SchemeTwilioURL.
	Scheme string
	// Credential says what Config.Secrets supplies, for example "the
	// endpoint's signing secret (whsec_…)".
	Credential string
	// EnvVar is a conventional environment variable for the credential,
	// for example "STRIPE_WEBHOOK_SECRET".
	EnvVar string

	build func(Config) (webhooks.Verifier, error)
}

// hmacEntry is a catalog entry for an HMAC preset.
func hmacEntry(e Entry, opts func() webhooks.HMACOptions) Entry {
	e.Scheme = SchemeHMAC
	e.build = func(c Config) (webhooks.Verifier, error) {
		o := opts()
		o.Clock = c.Clock
		return webhooks.NewHMACVerifier(o, c.Secrets)
	}
	return e
}

// ed25519Entry is a catalog entry for an Ed25519 preset.
func ed25519Entry(e Entry, opts func() Ed25519Options) Entry {
	e.Scheme = SchemeEd25519
	e.build = func(c Config) (webhooks.Verifier, error) {
		o := opts()
		o.Clock = c.Clock
		return NewEd25519Verifier(o, c.Secrets)
	}
	return e
}

// catalog lists every provider, sorted by name.
var catalog = []Entry{
	ed25519Entry(Entry{
		Name: "discord", Title: "Discord interactions",
		Docs:       "https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint",
		Credential: "the application's public key (64 hex digits)", EnvVar: "DISCORD_PUBLIC_KEY",
	}, DiscordInteractionsOptions),
	ed25519Entry(Entry{
		Name: "discord-events", Title: "Discord webhook events",
		Docs:       "https://discord.com/developers/docs/events/webhook-events",
		Credential: "the application's public key (64 hex digits)", EnvVar: "DISCORD_PUBLIC_KEY",
	}, DiscordWebhookEventsOptions),
	hmacEntry(Entry{
		Name: "github", Title: "GitHub",
		Docs:       "https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries",
		Credential: "the webhook's secret", EnvVar: "GITHUB_WEBHOOK_SECRET",
	}, GitHubOptions),
	{
		Name: "gitlab", Title: "GitLab (secret token)", Scheme: SchemeToken,
		Docs:       "https://docs.gitlab.com/user/project/integrations/webhooks/#delivery-headers",
		Credential: "the webhook's secret token", EnvVar: "GITLAB_WEBHOOK_TOKEN",
		build: func(c Config) (webhooks.Verifier, error) {
			return NewTokenVerifier(GitLabTokenOptions(), c.Secrets)
		},
	},
	hmacEntry(Entry{
		Name: "gitlab-signing", Title: "GitLab (signing token)",
		Docs:       "https://gitlab.com/gitlab-org/gitlab/-/merge_requests/230944",
		Credential: "the webhook's signing token (whsec_…)", EnvVar: "GITLAB_SIGNING_TOKEN",
	}, GitLabSigningOptions),
	hmacEntry(Entry{
		Name: "linear", Title: "Linear",
		Docs:       "https://linear.app/developers/webhooks#securing-webhooks",
		Credential: "the webhook's signing secret", EnvVar: "LINEAR_WEBHOOK_SECRET",
	}, LinearOptions),
	hmacEntry(Entry{
		Name: "paddle", Title: "Paddle Billing",
		Docs:       "https://developer.paddle.com/webhooks/signature-verification",
		Credential: "the notification destination's secret key (pdl_ntfset_…)", EnvVar: "PADDLE_WEBHOOK_SECRET",
	}, PaddleOptions),
	hmacEntry(Entry{
		Name: "shopify", Title: "Shopify",
		Docs:       "https://shopify.dev/docs/apps/build/webhooks/verify-deliveries",
		Credential: "the app's client secret", EnvVar: "SHOPIFY_CLIENT_SECRET",
	}, ShopifyOptions),
	hmacEntry(Entry{
		Name: "slack", Title: "Slack Events API",
		Docs:       "https://api.slack.com/authentication/verifying-requests-from-slack",
		Credential: "the app's signing secret", EnvVar: "SLACK_SIGNING_SECRET",
	}, SlackOptions),
	hmacEntry(Entry{
		Name: "standardwebhooks", Title: "Standard Webhooks",
		Docs:       "https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md",
		Credential: "the endpoint's signing secret (whsec_…)", EnvVar: "WEBHOOK_SECRET",
	}, StandardWebhooksOptions),
	ed25519Entry(Entry{
		Name: "standardwebhooks-ed25519", Title: "Standard Webhooks v1a (Ed25519)",
		Docs:       "https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md#signature-scheme",
		Credential: "the sender's public key (whpk_…)", EnvVar: "WEBHOOK_PUBLIC_KEY",
	}, StandardWebhooksEd25519Options),
	hmacEntry(Entry{
		Name: "stripe", Title: "Stripe",
		Docs:       "https://docs.stripe.com/webhooks#verify-manually",
		Credential: "the endpoint's signing secret (whsec_…)", EnvVar: "STRIPE_WEBHOOK_SECRET",
	}, StripeOptions),
	hmacEntry(Entry{
		Name: "svix", Title: "Svix",
		Docs:       "https://docs.svix.com/receiving/verifying-payloads/how-manual",
		Credential: "the endpoint's signing secret (whsec_…)", EnvVar: "SVIX_WEBHOOK_SECRET",
	}, SvixOptions),
	{
		Name: "twilio", Title: "Twilio", Scheme: SchemeTwilioURL,
		Docs:       "https://www.twilio.com/docs/usage/webhooks/webhooks-security",
		Credential: "the account's auth token", EnvVar: "TWILIO_AUTH_TOKEN",
		build: func(c Config) (webhooks.Verifier, error) {
			if c.PublicURL == "" {
				return nil, errors.New("webhooks: Twilio signs the public URL it calls: set Config.PublicURL, for example \"https://hooks.example.com\"")
			}
			return NewTwilioVerifier(TwilioOptions{BaseURL: c.PublicURL}, c.Secrets)
		},
	},
	hmacEntry(Entry{
		Name: "zoom", Title: "Zoom",
		Docs:       "https://developers.zoom.us/docs/api/webhooks/#verify-webhook-events",
		Credential: "the app's secret token", EnvVar: "ZOOM_WEBHOOK_SECRET_TOKEN",
	}, ZoomOptions),
}

// Names returns the names of the catalog's providers, sorted.
func Names() []string {
	names := make([]string, len(catalog))
	for i, e := range catalog {
		names[i] = e.Name
	}
	return names
}

// Lookup returns the catalog entry of a provider by name.
func Lookup(name string) (Entry, bool) {
	i, ok := slices.BinarySearchFunc(catalog, name, func(e Entry, name string) int {
		switch {
		case e.Name < name:
			return -1
		case e.Name > name:
			return 1
		}
		return 0
	})
	if !ok {
		return Entry{}, false
	}
	return catalog[i], true
}

// New returns the verifier of the named provider with its preset options,
// configured by cfg; register it under a provider key (the name is a good
// one). An unknown name is an error, as is any problem the provider's
// constructor finds (no secrets, an empty static secret, a missing
// PublicURL).
func New(name string, cfg Config) (webhooks.Verifier, error) {
	e, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("webhooks: unknown provider %q: providers.Names() lists the catalog", name)
	}
	v, err := e.build(cfg)
	if err != nil {
		return nil, err
	}
	return v, nil
}
