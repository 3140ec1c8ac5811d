package providers_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// certServer serves one certificate over TLS and counts the requests.
type certServer struct {
	srv  *httptest.Server
	hits atomic.Int64
	pem  atomic.Value
}

func newCertServer(t *testing.T, pem []byte) *certServer {
	t.Helper()
	c := &certServer{}
	c.pem.Store(pem)
	c.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		c.hits.Add(1)
		_, _ = w.Write(c.pem.Load().([]byte))
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *certServer) host() string { return strings.TrimPrefix(c.srv.URL, "https://") }

func snsVerify(t *testing.T, v webhooks.Verifier, body []byte) (webhooks.Verification, error) {
	t.Helper()
	return v.Verify(context.Background(), webhooks.Route{Provider: "sns"}, &webhooks.Request{
		Method: http.MethodPost, Header: http.Header{"Content-Type": {"text/plain; charset=UTF-8"}}, Body: body,
	})
}

func TestSNSSignatureVersionsAndCache(t *testing.T) {
	t.Parallel()
	key, err := webhookstest.NewSNSKey("arn:aws:sns:eu-west-1:123456789012:orders")
	require.NoError(t, err)
	certs := newCertServer(t, key.CertificatePEM)
	key.CertURL = certs.srv.URL + "/SimpleNotificationService-test.pem"
	clock := webhookstest.NewClock(time.Now())
	v, err := providers.New("sns", providers.Config{Secrets: webhooks.StaticSecrets(key.TopicARN), HTTPClient: certs.srv.Client(), KeyHosts: []string{certs.host()}, KeyRoots: key.Roots, Clock: clock})
	require.NoError(t, err)

	for _, version := range []string{"1", "2"} {
		key.SignatureVersion = version
		body, err := key.Sign(webhookstest.SNSMessage{Message: "hello " + version})
		require.NoError(t, err)
		got, err := snsVerify(t, v, body)
		require.NoError(t, err, "SignatureVersion %s", version)
		assert.Equal(t, "Notification", got.EventType)
		assert.NotEmpty(t, got.EventID)
		assert.Equal(t, "static:0", got.KeyID)
		s, ok := providers.SNSStringToSign(body)
		assert.True(t, ok)
		assert.True(t, strings.HasPrefix(s, "Message\nhello "+version+"\nMessageId\n"), s)
	}
	assert.Equal(t, int64(1), certs.hits.Load(), "the certificate is fetched once and cached")

	// After the TTL it is fetched again.
	clock.Advance(providers.DefaultKeyTTL + time.Minute)
	key.SignatureVersion = "2"
	body, err := key.Sign(webhookstest.SNSMessage{Message: "later"})
	require.NoError(t, err)
	_, err = snsVerify(t, v, body)
	require.Error(t, err, "a day later the test certificate has expired")
	assert.ErrorIs(t, err, webhooks.ReasonBadSignature)
	assert.Equal(t, int64(2), certs.hits.Load(), "the cache entry expired with the TTL")
}

func TestSNSRefusals(t *testing.T) {
	t.Parallel()
	key, err := webhookstest.NewSNSKey("arn:aws:sns:eu-west-1:123456789012:orders")
	require.NoError(t, err)
	certs := newCertServer(t, key.CertificatePEM)
	allowed := providers.Config{Secrets: webhooks.StaticSecrets(key.TopicARN), HTTPClient: certs.srv.Client(), KeyHosts: []string{certs.host()}, KeyRoots: key.Roots}

	// A certificate URL outside the allowed hosts is refused without
	// being fetched: the documented pattern does not match the test host.
	v, err := providers.New("sns", providers.Config{Secrets: allowed.Secrets, HTTPClient: certs.srv.Client()})
	require.NoError(t, err)
	for _, u := range []string{
		certs.srv.URL + "/SimpleNotificationService-test.pem",
		"http://sns.us-east-1.amazonaws.com/SimpleNotificationService-test.pem",
		"https://sns.us-east-1.amazonaws.com.evil.example/SimpleNotificationService-test.pem",
		"https://evil.example/sns.us-east-1.amazonaws.com/SimpleNotificationService-test.pem",
		"https://user@sns.us-east-1.amazonaws.com/SimpleNotificationService-test.pem",
		"https://sns.us-east-1.amazonaws.com:8443/SimpleNotificationService-test.pem",
		"https://sns.s3.amazonaws.com/SimpleNotificationService-test.pem",
		"https://sns.us-east-1.amazonaws.com/cert.pem",
	} {
		key.CertURL = u
		body, err := key.Sign(webhookstest.SNSMessage{Message: "x"})
		require.NoError(t, err)
		_, err = snsVerify(t, v, body)
		assert.ErrorIs(t, err, webhooks.ReasonBadSignature, u)
	}
	assert.Zero(t, certs.hits.Load(), "no certificate outside the allow-list was fetched")

	// Without an HTTP client nothing is fetched, with an error that says so.
	key.CertURL = certs.srv.URL + "/SimpleNotificationService-test.pem"
	v, err = providers.New("sns", providers.Config{Secrets: allowed.Secrets, KeyHosts: allowed.KeyHosts})
	require.NoError(t, err)
	body, err := key.Sign(webhookstest.SNSMessage{Message: "x"})
	require.NoError(t, err)
	_, err = snsVerify(t, v, body)
	require.Error(t, err)
	assert.NotErrorIs(t, err, webhooks.ReasonBadSignature, "not a rejection: the receiver answers 503")
	assert.Contains(t, err.Error(), "Config.HTTPClient")
	assert.Zero(t, certs.hits.Load())

	// A message signed by another key than the certificate's.
	v, err = providers.New("sns", allowed)
	require.NoError(t, err)
	forger, err := webhookstest.NewSNSKey(key.TopicARN)
	require.NoError(t, err)
	forger.CertURL = key.CertURL
	body, err = forger.Sign(webhookstest.SNSMessage{Message: "forged"})
	require.NoError(t, err)
	_, err = snsVerify(t, v, body)
	assert.ErrorIs(t, err, webhooks.ReasonBadSignature)

	// Another topic is refused before any fetch.
	hits := certs.hits.Load()
	other, err := webhookstest.NewSNSKey("arn:aws:sns:eu-west-1:999999999999:theirs")
	require.NoError(t, err)
	other.CertURL = key.CertURL
	body, err = other.Sign(webhookstest.SNSMessage{Message: "x"})
	require.NoError(t, err)
	_, err = snsVerify(t, v, body)
	assert.ErrorIs(t, err, webhooks.ReasonBadSignature)
	assert.Equal(t, hits, certs.hits.Load(), "a foreign topic fetches nothing")

	// A tampered message, an unknown version, an unknown type.
	body, err = key.Sign(webhookstest.SNSMessage{Message: "amount=10"})
	require.NoError(t, err)
	_, err = snsVerify(t, v, []byte(strings.Replace(string(body), "amount=10", "amount=99", 1)))
	assert.ErrorIs(t, err, webhooks.ReasonBadSignature)
	_, err = snsVerify(t, v, []byte(strings.Replace(string(body), `"SignatureVersion":"2"`, `"SignatureVersion":"3"`, 1)))
	assert.ErrorIs(t, err, webhooks.ReasonMalformedHeader)
	_, err = snsVerify(t, v, []byte(strings.Replace(string(body), `"Type":"Notification"`, `"Type":"Other"`, 1)))
	assert.ErrorIs(t, err, webhooks.ReasonMalformedPayload)

	// A signed field given twice, in another case before the signed one:
	// encoding/json reads the last (signed) one, a reader that keeps the
	// first would read the other. The signature verifies; the body is
	// refused.
	_, err = snsVerify(t, v, body)
	require.NoError(t, err)
	_, err = snsVerify(t, v, []byte(strings.Replace(string(body), "{", `{"message":"amount=99",`, 1)))
	assert.ErrorIs(t, err, webhooks.ReasonMalformedPayload)
}

func TestSNSSubscriptionConfirmation(t *testing.T) {
	t.Parallel()
	signer, err := webhookstest.NewKeySigner("sns")
	require.NoError(t, err)
	certs := newCertServer(t, signer.SNS().CertificatePEM)
	signer.SNS().CertURL = certs.srv.URL + "/SimpleNotificationService-test.pem"
	c, err := signer.Challenge("https://hooks.example.com/webhooks/sns", "")
	require.NoError(t, err)
	req, err := c.Delivery.Request(context.Background())
	require.NoError(t, err)

	// Without Config.Confirm the confirmation is not lost: 503, so SNS
	// sends it again.
	v, err := providers.New("sns", providers.Config{Secrets: webhooks.StaticSecrets(signer.Credential()), HTTPClient: certs.srv.Client(), KeyHosts: []string{certs.host()}, KeyRoots: signer.SNS().Roots})
	require.NoError(t, err)
	_, err = webhooks.VerifyHTTPRequest(context.Background(), v, webhooks.Route{Provider: "sns"}, req, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Config.Confirm")

	// With it, the host gets the confirmation, and never the verifier
	// visits the URL.
	var got []providers.Confirmation
	v, err = providers.New("sns", providers.Config{Secrets: webhooks.StaticSecrets(signer.Credential()), HTTPClient: certs.srv.Client(), KeyHosts: []string{certs.host()}, KeyRoots: signer.SNS().Roots,
		Confirm: func(_ context.Context, _ webhooks.Route, c providers.Confirmation) error {
			got = append(got, c)
			return nil
		}})
	require.NoError(t, err)
	ver, err := webhooks.VerifyHTTPRequest(context.Background(), v, webhooks.Route{Provider: "sns"}, req, 0)
	require.NoError(t, err)
	require.NotNil(t, ver.Handshake)
	require.Len(t, got, 1)
	assert.Equal(t, providers.SNSSubscriptionConfirmation, got[0].Type)
	assert.Equal(t, signer.Credential(), got[0].Topic)
	assert.True(t, strings.HasPrefix(got[0].URL, "https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription"))
	assert.NotEmpty(t, got[0].Token)

	// ConfirmSNSSubscription visits only SNS hosts.
	got[0].URL = certs.srv.URL + "/confirm"
	before := certs.hits.Load()
	assert.Error(t, providers.ConfirmSNSSubscription(context.Background(), certs.srv.Client(), got[0], nil))
	assert.Equal(t, before, certs.hits.Load())
	assert.NoError(t, providers.ConfirmSNSSubscription(context.Background(), certs.srv.Client(), got[0], []string{certs.host()}))
	assert.Equal(t, before+1, certs.hits.Load())
}
