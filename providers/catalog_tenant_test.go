package providers_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// TestCatalogTenantPaths: every catalog verifier reports PerTenant as its
// credentials are, through whatever wraps the scheme's verifier (the
// preset, Box's and DocuSign's one-verifier-per-header). With shared
// secrets (StaticSecrets) a tenant path segment, which the sender chooses,
// is 404 and nothing is stored; with TenantSecrets the tenant's own
// secret serves its path and the item is stored under the tenant. Asana
// and Notion take their secrets from a handshake (HandshakeSecrets, kept
// per route but not reporting PerTenant), so their tenant paths need
// WithTenants and are only checked to be refused.
func TestCatalogTenantPaths(t *testing.T) {
	t.Parallel()
	sns := newSNSServer(t)
	for _, e := range providers.Entries() {
		name := e.Name
		f := newEntryFixture(t, e, sns, acknowledge)
		assert.False(t, webhooks.PerTenant(f.verifier), "%s: PerTenant with shared secrets", name)
		d := cloneDelivery(f.sign(t, webhookstest.Message{}))
		d.URL = f.url + "/x1"
		rec := f.send(t, d)
		assert.Equal(t, http.StatusNotFound, rec.Code, "%s: an invented tenant with shared secrets: %s", name, rec.Body)
		assert.Zero(t, f.inbox.Len(), "%s: nothing stored under an invented tenant", name)
		if f.secrets != nil {
			continue
		}

		cfg := providers.Config{Secrets: webhooks.TenantSecrets(map[string][]string{"acme": {f.signer.Credential()}}), PublicURL: hookBase, VerifyToken: "verify-" + name, Confirm: acknowledge}
		if name == "sns" {
			cfg.HTTPClient, cfg.KeyHosts, cfg.KeyRoots = sns.srv.Client(), []string{sns.host()}, f.signer.SNS().Roots
		}
		v, err := e.New(cfg)
		require.NoError(t, err, name)
		assert.True(t, webhooks.PerTenant(v), "%s: not PerTenant with TenantSecrets", name)
		reg := webhooks.NewRegistry()
		require.NoError(t, reg.Register(name, v))
		tenant := *f
		tenant.inbox = memstore.NewInbox()
		tenant.receiver, err = webhooks.NewReceiver(reg, tenant.inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithLogger(quietLogger))
		require.NoError(t, err)
		d, err = f.signer.Sign(f.url+"/acme", webhookstest.Message{})
		require.NoError(t, err, name)
		rec = tenant.send(t, d)
		assert.Equal(t, wantStatus(e, http.StatusAccepted), rec.Code, "%s: the tenant's own delivery: %s", name, rec.Body)
		assert.Equal(t, 1, tenant.inbox.Len(), "%s: stored under the tenant", name)
		d2 := cloneDelivery(d)
		d2.URL = f.url + "/globex"
		assert.Equal(t, http.StatusUnauthorized, tenant.send(t, d2).Code, "%s: acme's delivery on another tenant's path", name)
	}
}
