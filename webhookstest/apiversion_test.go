package webhookstest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// TestAPIVersionByName: the entries whose payload's API version is known
// record it on the verification (Stripe's api_version is checked in
// TestSignByName); a version header sent twice is not guessed from.
func TestAPIVersionByName(t *testing.T) {
	t.Parallel()
	secret := webhookstest.NewSecret("shopify")
	v, err := providers.New("shopify", providers.Config{Secrets: webhooks.StaticSecrets(secret)})
	require.NoError(t, err)
	verify := func(versions ...string) webhooks.Verification {
		t.Helper()
		req := webhookstest.NewRequest(t, "shopify", "https://hooks.example.com/webhooks/shopify", secret, webhookstest.Message{ID: "e1", Type: "orders/create"})
		req.Header.Del("X-Shopify-Api-Version")
		for _, version := range versions {
			req.Header.Add("X-Shopify-Api-Version", version)
		}
		got, err := webhooks.VerifyHTTPRequest(context.Background(), v, webhooks.Route{Provider: "shopify"}, req, 0)
		require.NoError(t, err)
		return got
	}
	assert.Equal(t, "2025-07", verify("2025-07").APIVersion)
	assert.Empty(t, verify().APIVersion, "no header, no version")
	assert.Empty(t, verify("2025-07", "2024-01").APIVersion, "a header sent twice names no version")
}
