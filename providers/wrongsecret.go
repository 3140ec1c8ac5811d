package providers

import (
	"bytes"
	"errors"
	"regexp"
)

// Credentials that providers issue for other purposes than signing
// webhooks, and that their formats tell apart from the webhook secret
// with certainty: a value of one of these shapes is refused where the
// webhook secret belongs (HMACOptions.CheckSecret), naming what to paste
// instead. Only providers that issue the webhook secret themselves are
// here: a secret the user chose (GitHub's, GitLab's) may look like
// anything.

// wrongKind returns a secret check that refuses a value starting with
// any of prefixes as kind, saying to paste instead.
func wrongKind(kind, paste string, prefixes ...string) func([]byte) error {
	msg := "it is " + kind + ", not the webhook secret: paste " + paste
	return func(secret []byte) error {
		for _, p := range prefixes {
			if bytes.HasPrefix(secret, []byte(p)) {
				return errors.New(msg)
			}
		}
		return nil
	}
}

var (
	// Stripe's secret, restricted and publishable API keys; the signing
	// secret is whsec_….
	stripeWrongKind = wrongKind("a Stripe API key (sk_…, rk_… or pk_…)",
		"the endpoint's signing secret (whsec_…), shown for the endpoint in the Stripe Dashboard or printed by `stripe listen`",
		"sk_live_", "sk_test_", "rk_live_", "rk_test_", "pk_live_", "pk_test_")
	// Slack's bot, user, configuration and app-level tokens; the signing
	// secret is hex.
	slackWrongKind = wrongKind("a Slack token (xox…- or xapp-…)",
		"the app's Signing Secret (Basic Information → App Credentials)",
		"xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxe-", "xoxe.", "xapp-")
	// Shopify's access tokens; the signing key is the app's client secret
	// (shpss_… for older apps) or the hex key a store's admin shows.
	shopifyWrongKind = wrongKind("a Shopify access token (shpat_…, shpca_… or shppa_…)",
		"the app's client secret, or for a webhook made in a store's admin the signing key shown under Settings → Notifications → Webhooks",
		"shpat_", "shpca_", "shppa_")
	// Paddle's API keys and client-side tokens; the secret is
	// pdl_ntfset_….
	paddleWrongKind = wrongKind("a Paddle API key or client-side token",
		"the notification destination's secret key (pdl_ntfset_…), under Developer tools → Notifications",
		"pdl_live_apikey_", "pdl_sdbx_apikey_", "live_", "test_")
	// The Standard Webhooks providers' API keys; their signing secrets
	// are whsec_….
	openAIWrongKind    = wrongKind("an OpenAI API key (sk-…)", "the webhook's signing secret (whsec_…), shown once when the webhook was created", "sk-")
	replicateWrongKind = wrongKind("a Replicate API token (r8_…)", "the webhook signing secret (whsec_…), from GET /v1/webhooks/default/secret", "r8_")
	resendWrongKind    = wrongKind("a Resend API key (re_…)", "the webhook's signing secret (whsec_…), shown on the webhook's page", "re_")
	clerkWrongKind     = wrongKind("a Clerk API key (sk_… or pk_…)", "the endpoint's signing secret (whsec_…), from the Webhooks page of the Clerk Dashboard",
		"sk_live_", "sk_test_", "pk_live_", "pk_test_")
)

// X's app-only bearer tokens (URL-encoded, starting with a run of "A")
// and user access tokens ("<user ID>-<token>"); the consumer secret is
// letters and digits only.
var (
	twitterBearerToken = regexp.MustCompile(`^A{20,}`)
	twitterAccessToken = regexp.MustCompile(`^[0-9]+-[A-Za-z0-9]+$`)
)

func twitterWrongKind(secret []byte) error {
	if twitterBearerToken.Match(secret) || twitterAccessToken.Match(secret) {
		return errors.New("it is an X bearer token or access token, not the webhook secret: paste the app's consumer secret (API Key Secret, under Keys and tokens in the developer portal)")
	}
	return nil
}

// telegramBotToken is a bot's token ("<bot ID>:<35 characters>"), which
// authenticates calls to the Bot API, not Telegram's webhook requests.
var telegramBotToken = regexp.MustCompile(`^[0-9]+:[A-Za-z0-9_-]+$`)
