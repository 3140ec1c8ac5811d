package main

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks/webhookstest"
)

// One signed Stripe delivery sent to the provider's path and to two
// tenant paths is handled once: the example server's secrets are one per
// provider, so a tenant segment, which the sender chooses, is not served.
func TestOneDeliveryUnderInventedTenantsIsHandledOnce(t *testing.T) {
	t.Parallel()
	secret := webhookstest.NewSecret("stripe")
	s := start(t, map[string]string{"STRIPE_WEBHOOK_SECRET": secret})
	d, err := webhookstest.Sign("stripe", secret, s.url+"/webhooks/stripe", webhookstest.Message{ID: "evt_tenant_once", Type: "invoice.paid"})
	require.NoError(t, err)
	for path, want := range map[string]int{"/webhooks/stripe": http.StatusAccepted, "/webhooks/stripe/x1": http.StatusNotFound, "/webhooks/stripe/x2": http.StatusNotFound} {
		d.URL = s.url + path
		req, err := d.Request(t.Context())
		require.NoError(t, err)
		resp, err := testClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Equal(t, want, resp.StatusCode, path)
	}
	s.stdout.waitFor(t, `"handler":"ledger","provider":"stripe","tenant":"","event_id":"evt_tenant_once"`)
	s.stdout.waitFor(t, `"handler":"audit","provider":"stripe","tenant":"","event_id":"evt_tenant_once"`)
	// The tenant paths were refused before anything was stored, so no
	// later handling can follow: one line per handler is all there will be.
	assert.Len(t, s.stdout.matching(`"event_id":"evt_tenant_once"`), 2)
}
