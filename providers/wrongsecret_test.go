package providers_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// Where a provider's credential formats make it certain that a value is
// another kind of credential (an API key or access token pasted as the
// webhook secret), the verifier is refused at construction, naming the
// secret's ID and what to paste instead, never the value; every delivery
// would otherwise be refused with bad_signature.
func TestWrongKindSecretsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		entry, value, paste string
	}{
		{"stripe", "sk_test_51H8xYzAbCdEfGhIjKlMnOpQr", "whsec_"},
		{"stripe", "sk_live_51H8xYzAbCdEfGhIjKlMnOpQr", "whsec_"},
		{"stripe", "rk_test_51H8xYzAbCdEfGhIjKlMnOpQr", "whsec_"},
		{"stripe", "rk_live_51H8xYzAbCdEfGhIjKlMnOpQr", "whsec_"},
		{"stripe", "pk_test_51H8xYzAbCdEfGhIjKlMnOpQr", "whsec_"},
		{"stripe", "pk_live_51H8xYzAbCdEfGhIjKlMnOpQr", "whsec_"},
		{"slack", "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy", "Signing Secret"},
		{"slack", "xoxp-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy", "Signing Secret"},
		{"slack", "xapp-1-A0123456789-0123456789012-abcdef", "Signing Secret"},
		{"shopify", "shpat_0123456789abcdef0123456789abcdef", "client secret"},
		{"shopify", "shpca_0123456789abcdef0123456789abcdef", "client secret"},
		{"shopify", "shppa_0123456789abcdef0123456789abcdef", "client secret"},
		{"paddle", "pdl_live_apikey_01gtgztp8f4kek3yd4g1wrksa3_q6TGTJyvoIz7LDtXT65bX7_AQO", "pdl_ntfset_"},
		{"paddle", "pdl_sdbx_apikey_01gtgztp8f4kek3yd4g1wrksa3_q6TGTJyvoIz7LDtXT65bX7_AQO", "pdl_ntfset_"},
		{"twitter", "AAAAAAAAAAAAAAAAAAAAAMLheAAAAAAA0%2BuSeid%2BULvsea4JtiGRiSDSJSI%3DEUifiRBkKG5E2XzMDjRfl76ZC9Ub0wnz4XsNiRVBChTYbJcE3F", "consumer secret"},
		{"twitter", "1234567890-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ab", "consumer secret"},
		{"telegram", "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", "secret_token"},
		{"openai", "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789", "whsec_"},
		{"replicate", "r8_abcdefghijklmnopqrstuvwxyz0123456789AB", "whsec_"},
		{"resend", "re_123456789_abcdefghijklmnopqrstuvwxyz", "whsec_"},
		{"clerk", "sk_test_abcdefghijklmnopqrstuvwxyz0123456789", "whsec_"},
		{"clerk", "pk_live_Y2xlcmsuZXhhbXBsZS5jb20k", "whsec_"},
	} {
		_, err := providers.New(tc.entry, providers.Config{Secrets: webhooks.StaticSecrets(webhookstest.NewSecret(tc.entry), tc.value)})
		if !assert.Error(t, err, "%s: %s… is refused", tc.entry, tc.value[:6]) {
			continue
		}
		assert.Contains(t, err.Error(), "static:1", "%s: the error names the secret's ID", tc.entry)
		assert.NotContains(t, err.Error(), "static:0", "%s: the genuine secret is not blamed", tc.entry)
		assert.Contains(t, err.Error(), tc.paste, "%s: the error says what to paste", tc.entry)
		assert.NotContains(t, err.Error(), tc.value, "%s: the error quotes the secret", tc.entry)
		assert.NotContains(t, err.Error(), tc.value[len(tc.value)-12:], "%s: the error quotes part of the secret", tc.entry)

		// FromEnv refuses it too, naming the variable.
		_, err = providers.FromEnv(func(k string) string {
			if k == providers.EnvPrefix(tc.entry)+"_WEBHOOK_SECRET" {
				return tc.value
			}
			return ""
		}, providers.Config{})
		if assert.Error(t, err, tc.entry) {
			assert.Contains(t, err.Error(), providers.EnvPrefix(tc.entry)+"_WEBHOOK_SECRET is set")
			assert.NotContains(t, err.Error(), tc.value)
		}
	}

	// The presets refuse them too, used without the catalog.
	for name, opts := range map[string]webhooks.HMACOptions{
		"sk_test_51H8xYzAbCdEfGhIjKlMnOpQr":              providers.StripeOptions(),
		"xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOc": providers.SlackOptions(),
		"shpat_0123456789abcdef0123456789abcdef":         providers.ShopifyOptions(),
		"pdl_sdbx_apikey_01gtgztp8f4kek3yd4g1wrksa3":     providers.PaddleOptions(),
		"1234567890-AbCdEfGhIjKlMnOpQrStUvWxYz01234567":  providers.TwitterOptions(),
	} {
		_, err := webhooks.NewHMACVerifier(opts, webhooks.StaticSecrets(name))
		require.Error(t, err, name[:6])
		assert.Contains(t, err.Error(), "static:0")
		assert.NotContains(t, err.Error(), name)
	}

	// Secrets of the right kind, and of a shape the provider does not
	// rule out, are accepted.
	for entry, value := range map[string]string{
		"stripe":   "whsec_" + "0123456789abcdef0123456789abcdef",
		"slack":    "8f742231b10e8888abcd99yyyzzz85a5",
		"shopify":  "shpss_0123456789abcdef0123456789abcdef",
		"paddle":   "pdl_ntfset_01gkpjp8bkm3tm53kdgkx6sms7_6h3qd3uFSi9YCD3OLYAShQI90XTI8vEn",
		"twitter":  "z3ZX4v7mAAUGykl3EcmkqbartmuW8VFOOzCloLx9Q45P0hLrFu",
		"telegram": "my-secret_token-1",
		"github":   "ghp_is-not-refused: the secret is the user's own choice",
	} {
		_, err := providers.New(entry, providers.Config{Secrets: webhooks.StaticSecrets(value)})
		assert.NoError(t, err, entry)
	}
	for _, name := range providers.Names() {
		s, err := webhookstest.NewKeySigner(name)
		require.NoError(t, err)
		_, err = providers.New(name, providers.Config{Secrets: webhooks.StaticSecrets(s.Credential()), PublicURL: hookBase, VerifyToken: "vt", HTTPClient: nil})
		assert.NoError(t, err, "%s: a credential of the provider's own format", name)
	}
}
