package webhooks_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
)

// bodyOptions is an HMAC scheme that signs the body and takes the event
// ID from it.
func bodyOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Sig",
			SignaturePrefix: "sha256=",
			Event:           webhooks.EventSource{IDPath: "id", TypePath: "type"},
		},
	}
}

func bodySignature(secret, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// tenantReceiver registers bodyOptions under "pay" with creds.
func tenantReceiver(t *testing.T, creds webhooks.CredentialResolver, opts ...webhooks.ReceiverOption) (*webhooks.Receiver, *memstore.Inbox) {
	t.Helper()
	v, err := webhooks.NewHMACVerifier(bodyOptions(), creds)
	require.NoError(t, err)
	r := webhooks.NewRegistry()
	r.MustRegister("pay", v)
	inbox := memstore.NewInbox()
	rcv, err := webhooks.NewReceiver(r, inbox, append([]webhooks.ReceiverOption{webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithLogger(discard)}, opts...)...)
	require.NoError(t, err)
	return rcv, inbox
}

// A tenant path segment is chosen by whoever sends the request: with
// secrets shared by every tenant it is not served, so one signed delivery
// cannot be stored (and handled) once per tenant anyone writes.
func TestTenantPathsNeedTenantCredentials(t *testing.T) {
	t.Parallel()
	rcv, inbox := tenantReceiver(t, webhooks.StaticSecrets("s3cret"))
	body := `{"id":"evt_1","type":"invoice.paid"}`
	headers := map[string]string{"X-Sig": bodySignature("s3cret", body)}

	assert.Equal(t, http.StatusAccepted, post(t, rcv, "/webhooks/pay", body, headers).Code)
	for _, path := range []string{"/webhooks/pay/x1", "/webhooks/pay/x2", "/webhooks/pay/X1", "/webhooks/pay/%20", "/webhooks/pay/x1/"} {
		r := post(t, rcv, path, body, headers)
		assert.Equal(t, http.StatusNotFound, r.Code, path)
		assert.Equal(t, "not_found", r.Status, path)
		rec := httptest.NewRecorder()
		rcv.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, path, nil))
		assert.Equal(t, http.StatusNotFound, rec.Code, "HEAD %s", path)
	}
	assert.Equal(t, 1, inbox.Len(), "the delivery is stored once, under no tenant")

	// Receive, without HTTP, says why.
	res, err := rcv.Receive(context.Background(), webhooks.Route{Provider: "pay", Tenant: "x1"}, &webhooks.Request{Method: http.MethodPost, Header: http.Header{"X-Sig": {headers["X-Sig"]}}, Body: []byte(body)})
	assert.Equal(t, webhooks.StatusNotFound, res.Status)
	assert.ErrorIs(t, err, webhooks.ErrTenantNotServed)
}

// With TenantSecrets the tenant is authenticated by its own secret.
func TestTenantPathsWithTenantSecrets(t *testing.T) {
	t.Parallel()
	rcv, inbox := tenantReceiver(t, webhooks.TenantSecrets(map[string][]string{"acme": {"acme-secret"}, "globex": {"globex-secret"}}))
	body := `{"id":"evt_1","type":"invoice.paid"}`
	acme := map[string]string{"X-Sig": bodySignature("acme-secret", body)}

	assert.Equal(t, http.StatusAccepted, post(t, rcv, "/webhooks/pay/acme", body, acme).Code)
	r := post(t, rcv, "/webhooks/pay/globex", body, acme)
	assert.Equal(t, http.StatusUnauthorized, r.Code, "acme's delivery moved to globex's path")
	assert.Equal(t, "bad_signature", r.Reason)
	r = post(t, rcv, "/webhooks/pay/x1", body, acme)
	assert.Equal(t, http.StatusUnauthorized, r.Code, "an unknown tenant has no secrets")
	assert.Equal(t, "no_credentials", r.Reason)
	r = post(t, rcv, "/webhooks/pay", body, acme)
	assert.Equal(t, "no_credentials", r.Reason, "no tenant is a tenant of its own")
	assert.Equal(t, 1, inbox.Len())
}

// A host's own resolver serves tenant segments when it says so, by
// reporting PerTenant or through WithTenants.
func TestTenantPathsForTheHostsOwnCredentials(t *testing.T) {
	t.Parallel()
	perTenant := webhooks.CredentialResolverFunc(func(_ context.Context, route webhooks.Route) ([]webhooks.Secret, error) {
		if route.Tenant == "acme" {
			return []webhooks.Secret{{ID: "acme-1", Value: []byte("acme-secret")}}, nil
		}
		return nil, nil
	})
	body := `{"id":"evt_1","type":"invoice.paid"}`
	acme := map[string]string{"X-Sig": bodySignature("acme-secret", body)}

	rcv, _ := tenantReceiver(t, perTenant)
	assert.Equal(t, http.StatusNotFound, post(t, rcv, "/webhooks/pay/acme", body, acme).Code, "not without the host's word")

	rcv, inbox := tenantReceiver(t, perTenant, webhooks.WithTenants("pay"))
	assert.Equal(t, http.StatusAccepted, post(t, rcv, "/webhooks/pay/acme", body, acme).Code)
	_, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: "pay", Tenant: "acme", EventID: "evt_1"})
	require.NoError(t, err)

	rcv, _ = tenantReceiver(t, reportingPerTenant{perTenant})
	assert.Equal(t, http.StatusAccepted, post(t, rcv, "/webhooks/pay/acme", body, acme).Code)
	assert.True(t, webhooks.PerTenant(reportingPerTenant{perTenant}))
	assert.False(t, webhooks.PerTenant(perTenant))
	assert.True(t, webhooks.PerTenant(webhooks.TenantSecrets(map[string][]string{"a": {"x"}})))
	assert.False(t, webhooks.PerTenant(webhooks.StaticSecrets("x")))
}

type reportingPerTenant struct {
	webhooks.CredentialResolverFunc
}

func (reportingPerTenant) PerTenant() bool { return true }

// One secret given to two tenants would let a delivery of one verify for
// the other: TenantSecrets refuses it, naming IDs only.
func TestTenantSecretsRefuseASharedSecret(t *testing.T) {
	t.Parallel()
	_, err := webhooks.NewHMACVerifier(bodyOptions(), webhooks.TenantSecrets(map[string][]string{
		"acme": {"shared-secret"}, "globex": {"other", "shared-secret"},
	}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `tenants "acme" and "globex" the same secret (tenant:globex:1)`)
	assert.NotContains(t, err.Error(), "shared-secret")

	_, err = webhooks.NewHMACVerifier(bodyOptions(), webhooks.TenantSecrets(map[string][]string{"acme": {"a1", "a1"}, "globex": {"g1"}}))
	assert.NoError(t, err, "a tenant may repeat its own secret")
}

// A replay key is guarded per provider: a captured nonce moved to another
// tenant's path with other content is still a conflict.
func TestReplayKeysAreGuardedPerProvider(t *testing.T) {
	t.Parallel()
	f := newGatewayFixture(t, nil, nil)
	nonce := func(id, nonce string) map[string]string {
		h := okHeaders(id)
		h["X-Nonce"] = nonce
		return h
	}
	assert.Equal(t, http.StatusAccepted, post(t, f.gw, "/webhooks/acme/t1", `{"n":1}`, nonce("e1", "n1")).Code)
	r := post(t, f.gw, "/webhooks/acme/t2", `{"forged":true}`, nonce("e2", "n1"))
	assert.Equal(t, http.StatusConflict, r.Code, "the nonce was registered under t1")
	r = post(t, f.gw, "/webhooks/acme", `{"forged":true}`, nonce("e3", "n1"))
	assert.Equal(t, http.StatusConflict, r.Code, "and under no tenant")
	assert.Equal(t, 1, f.inbox.Len())
}

// Fields the Receiver stores beside the keys are held to the same rules: a
// NUL or an oversized value is refused with 400 (not a 503 the provider
// would retry for ever), and nothing is stored.
func TestGatewayRefusesUnstorableMetadata(t *testing.T) {
	t.Parallel()
	for name, ver := range map[string]webhooks.Verification{
		"API version with a NUL": {EventID: "e1", APIVersion: "2024\x00"},
		"API version of 100 KB":  {EventID: "e1", APIVersion: strings.Repeat("v", 100<<10)},
		"key ID not UTF-8":       {EventID: "e1", KeyID: "k\xff"},
		"key ID of 600 bytes":    {EventID: "e1", KeyID: strings.Repeat("k", 600)},
	} {
		r := webhooks.NewRegistry()
		r.MustRegister("acme", webhooks.VerifierFunc(func(context.Context, webhooks.Route, *webhooks.Request) (webhooks.Verification, error) {
			return ver, nil
		}))
		inbox := memstore.NewInbox()
		rcv, err := webhooks.NewReceiver(r, inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithLogger(discard))
		require.NoError(t, err)
		res := post(t, rcv, "/webhooks/acme", `{}`, nil)
		assert.Equal(t, http.StatusBadRequest, res.Code, name)
		assert.Equal(t, "invalid_key", res.Reason, name)
		assert.Zero(t, inbox.Len(), name)
	}
}

// A trace link the observer makes is never a reason to refuse a webhook:
// one that cannot be stored is left out.
func TestGatewayDropsAnUnstorableTraceLink(t *testing.T) {
	t.Parallel()
	r := webhooks.NewRegistry()
	r.MustRegister("acme", headerVerifier)
	inbox := memstore.NewInbox()
	rcv, err := webhooks.NewReceiver(r, inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithLogger(discard), webhooks.WithObserver(traceObserver{link: "00-\x00"}))
	require.NoError(t, err)
	assert.Equal(t, http.StatusAccepted, post(t, rcv, "/webhooks/acme", `{}`, okHeaders("e1")).Code)
	it, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: "acme", EventID: "e1"})
	require.NoError(t, err)
	assert.Empty(t, it.TraceLink)
}

type traceObserver struct {
	webhooks.Observer
	link string
}

func (traceObserver) StartReceive(ctx context.Context, _ webhooks.ReceiveStartData) context.Context {
	return ctx
}

func (traceObserver) EndReceive(context.Context, webhooks.ReceiveEndData) {}

func (o traceObserver) TraceLink(context.Context) string { return o.link }
