package webhooks_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/webhookstest"
)

// tenantOptions is a timestamped HMAC scheme for the tenant tests.
func tenantOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Signature",
			SignedContent:   "{timestamp}.{body}",
			Timestamp:       webhooks.TimestampSource{Header: "X-Timestamp"},
			Event:           webhooks.EventSource{IDHeader: "X-Event-Id"},
		},
		SecretPrefix: "whsec_",
		Clock:        webhookstest.NewClock(fixedNow),
	}
}

// tenantRequest is a request for tenantOptions signed with secret.
func tenantRequest(secret, id string) *webhooks.Request {
	body := `{"amount":42}`
	ts := strconv.FormatInt(fixedNow.Unix(), 10)
	return request(body, "X-Signature", hexMAC(secret, ts, ".", body), "X-Timestamp", ts, "X-Event-Id", id)
}

func TestTenantSecrets(t *testing.T) {
	t.Parallel()
	creds := webhooks.TenantSecrets(map[string][]string{
		"acme":   {"whsec_acme_old", "whsec_acme_new"},
		"globex": {"whsec_globex"},
	})
	v, err := webhooks.NewHMACVerifier(tenantOptions(), creds)
	require.NoError(t, err)
	route := func(tenant string) webhooks.Route { return webhooks.Route{Provider: "billing", Tenant: tenant} }
	verify := func(tenant, secret string) (webhooks.Verification, error) {
		return v.Verify(context.Background(), route(tenant), tenantRequest(secret, "e1"))
	}

	// Rotation within a tenant: both secrets verify, and the one that
	// matched is reported.
	for secret, keyID := range map[string]string{"whsec_acme_old": "tenant:acme:0", "whsec_acme_new": "tenant:acme:1", "whsec_globex": "tenant:globex:0"} {
		tenant := strings.Split(keyID, ":")[1]
		got, err := verify(tenant, secret)
		require.NoError(t, err, secret)
		assert.Equal(t, keyID, got.KeyID)
	}

	// Tenant B's secret never verifies tenant A's webhook, either way.
	_, err = verify("acme", "whsec_globex")
	wantReason(t, err, webhooks.ReasonBadSignature)
	_, err = verify("globex", "whsec_acme_new")
	wantReason(t, err, webhooks.ReasonBadSignature)

	// An unknown tenant, and a route without a tenant, fail closed.
	for _, tenant := range []string{"initech", "", "ACME", "acme "} {
		_, err = verify(tenant, "whsec_acme_new")
		wantReason(t, err, webhooks.ReasonNoCredentials)
	}

	// The resolver hands out each tenant's own secrets only.
	secrets, err := creds.Secrets(context.Background(), route("globex"))
	require.NoError(t, err)
	require.Len(t, secrets, 1)
	assert.Equal(t, "tenant:globex:0", secrets[0].ID)
	secrets, err = creds.Secrets(context.Background(), route("nobody"))
	require.NoError(t, err)
	assert.Empty(t, secrets)

	// The key "" serves routes without a tenant.
	single, err := webhooks.NewHMACVerifier(tenantOptions(), webhooks.TenantSecrets(map[string][]string{"": {"whsec_default"}}))
	require.NoError(t, err)
	got, err := single.Verify(context.Background(), route(""), tenantRequest("whsec_default", "e1"))
	require.NoError(t, err)
	assert.Equal(t, "tenant::0", got.KeyID)
}

func TestTenantSecretsThroughGateway(t *testing.T) {
	t.Parallel()
	v, err := webhooks.NewHMACVerifier(tenantOptions(), webhooks.TenantSecrets(map[string][]string{
		"acme":   {"whsec_acme"},
		"globex": {"whsec_globex"},
	}))
	require.NoError(t, err)
	resolver := webhooks.NewRegistry()
	resolver.MustRegister("billing", v)
	inbox := memstore.NewInbox()
	gw, err := webhooks.NewReceiver(resolver, inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithClock(webhookstest.NewClock(fixedNow)))
	require.NoError(t, err)
	send := func(path, secret, id string) *httptest.ResponseRecorder {
		in := tenantRequest(secret, id)
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(string(in.Body)))
		req.Header = in.Header
		rec := httptest.NewRecorder()
		gw.ServeHTTP(rec, req)
		return rec
	}

	assert.Equal(t, http.StatusAccepted, send("/webhooks/billing/acme", "whsec_acme", "a1").Code)
	assert.Equal(t, http.StatusAccepted, send("/webhooks/billing/globex", "whsec_globex", "a1").Code, "one event ID per tenant")
	for path, reason := range map[string]string{
		"/webhooks/billing/globex":  "bad_signature",  // acme's secret on globex's route
		"/webhooks/billing/initech": "no_credentials", // a tenant nobody configured
		"/webhooks/billing":         "no_credentials", // no tenant at all
	} {
		rec := send(path, "whsec_acme", "a2")
		assert.Equal(t, http.StatusUnauthorized, rec.Code, path)
		assert.Contains(t, rec.Body.String(), reason, path)
	}
	item, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: "billing", Tenant: "acme", EventID: "a1"})
	require.NoError(t, err)
	assert.Equal(t, "tenant:acme:0", item.KeyID)
}

func TestStaticCredentialsCheck(t *testing.T) {
	t.Parallel()
	for name, tt := range map[string]struct {
		creds webhooks.StaticCredentials
		want  []string // in the error, in any order
	}{
		"no tenants":       {webhooks.TenantSecrets(nil), []string{"TenantSecrets has no tenants"}},
		"tenant with none": {webhooks.TenantSecrets(map[string][]string{"acme": {"whsec_a"}, "globex": nil}), []string{`no secrets for tenant "globex"`}},
		"empty":            {webhooks.TenantSecrets(map[string][]string{"acme": {"whsec_a", ""}}), []string{"secret tenant:acme:1 is empty"}},
		"white space":      {webhooks.TenantSecrets(map[string][]string{"acme": {"whsec_a\n"}}), []string{"secret tenant:acme:0 starts or ends with white space"}},
		"prefix only":      {webhooks.TenantSecrets(map[string][]string{"acme": {"whsec_"}}), []string{`secret tenant:acme:0 is unusable: it is only the prefix "whsec_"`}},
		"several":          {webhooks.TenantSecrets(map[string][]string{"a": {""}, "b": {" x"}}), []string{"tenant:a:0 is empty", "tenant:b:0 starts or ends"}},
		"static none":      {webhooks.StaticSecrets(), []string{"StaticSecrets has no secrets"}},
	} {
		_, err := webhooks.NewHMACVerifier(tenantOptions(), tt.creds)
		require.Error(t, err, name)
		for _, want := range tt.want {
			assert.Contains(t, err.Error(), want, name)
		}
		assert.NotContains(t, err.Error(), "whsec_a", name)
	}
	// A custom validity check reports by ID only.
	err := webhooks.TenantSecrets(map[string][]string{"acme": {"not-a-key"}}).Check("public key", func([]byte) error {
		return fmt.Errorf("it is not a key")
	})
	require.Error(t, err)
	assert.Equal(t, "public key tenant:acme:0 is unusable: it is not a key", err.Error())
	assert.NotContains(t, err.Error(), "not-a-key")
	assert.NoError(t, webhooks.StaticSecrets("a", "b").Check("secret", nil))
}

func TestStaticCredentialsPrintIDsOnly(t *testing.T) {
	t.Parallel()
	creds := webhooks.TenantSecrets(map[string][]string{"globex": {"g-secret"}, "acme": {"a-old", "a-new"}})
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x"} {
		out := fmt.Sprintf(verb, creds)
		assert.Equal(t, `StaticCredentials{"tenant:acme:0", "tenant:acme:1", "tenant:globex:0"}`, out, verb)
	}
	assert.Equal(t, `StaticCredentials{"static:0"}`, fmt.Sprint(webhooks.StaticSecrets("s")))
}
