package providers_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// keyServer serves certificates over TLS by path, counts the requests per
// path, and can hold them until released or answer 500.
type keyServer struct {
	srv *httptest.Server

	mu      sync.Mutex
	bodies  map[string][]byte
	hits    map[string]int
	entered chan string   // receives a path as each request arrives, when set
	release chan struct{} // requests wait for it, when set
	fail    bool
	stop    chan struct{} // closed before the server, so no request holds Close up
}

func newKeyServer(t *testing.T) *keyServer {
	t.Helper()
	k := &keyServer{bodies: map[string][]byte{}, hits: map[string]int{}, stop: make(chan struct{})}
	k.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		k.hits[r.URL.Path]++
		body, ok := k.bodies[r.URL.Path]
		entered, release, fail := k.entered, k.release, k.fail
		k.mu.Unlock()
		if entered != nil {
			select {
			case entered <- r.URL.Path:
			case <-k.stop:
				return
			}
		}
		if release != nil {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			case <-k.stop:
				return
			}
		}
		if fail || !ok {
			http.Error(w, "unavailable", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(k.srv.Close)
	t.Cleanup(func() { close(k.stop) }) // runs first
	return k
}

func (k *keyServer) serve(path string, body []byte) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.bodies[path] = body
	return k.srv.URL + path
}

func (k *keyServer) count(path string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.hits[path]
}

func (k *keyServer) host() string { return strings.TrimPrefix(k.srv.URL, "https://") }

// snsFetcher is a fetcher with SNS's rules but the test server's host.
func snsFetcher(t *testing.T, k *keyServer, roots *x509.CertPool, clock webhooks.Clock) *providers.CertificateFetcher {
	t.Helper()
	f, err := providers.NewCertificateFetcher(providers.CertificateFetcherOptions{
		Client: k.srv.Client(), AllowedHosts: []string{k.host()}, Path: providers.SNSCertificatePath,
		Names: providers.SNSCertificateNames, Roots: roots, Clock: clock,
	})
	require.NoError(t, err)
	return f
}

func selfSigned(t *testing.T, cn string) []byte {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: cn}, DNSNames: []string{cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func newRSAKey(t *testing.T) *rsa.PublicKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	return &k.PublicKey
}

// TestSNSCertificateURLRules: only https URLs on sns.<region>.amazonaws.com
// (and the China partition's .com.cn) with the documented path, no
// query, fragment, user information, port or escapes, are fetched.
func TestSNSCertificateURLRules(t *testing.T) {
	t.Parallel()
	f, err := providers.NewCertificateFetcher(providers.CertificateFetcherOptions{
		AllowedHosts: providers.SNSCertificateHosts, Path: providers.SNSCertificatePath, Names: providers.SNSCertificateNames,
	})
	require.NoError(t, err)
	const pem = "/SimpleNotificationService-01d088a6f77103d0fe307c0069e40ed6.pem"
	for u, want := range map[string]bool{
		"https://sns.us-east-1.amazonaws.com" + pem:      true,
		"https://SNS.EU-WEST-1.AMAZONAWS.COM" + pem:      true,
		"https://sns.us-gov-west-1.amazonaws.com" + pem:  true,
		"https://sns.cn-north-1.amazonaws.com.cn" + pem:  true,
		"https://sns.ap-southeast-7.amazonaws.com" + pem: true,
		// S3 bucket hosts and other hosts of amazonaws.com.
		"https://sns.s3.amazonaws.com" + pem:                false,
		"https://sns.s3-us-west-2.amazonaws.com" + pem:      false,
		"https://sns.s3.us-west-2.amazonaws.com" + pem:      false,
		"https://sns.s3-external-1.amazonaws.com" + pem:     false,
		"https://sns.dualstack.amazonaws.com" + pem:         false,
		"https://sns.execute-api.amazonaws.com" + pem:       false,
		"https://sqs.us-east-1.amazonaws.com" + pem:         false,
		"https://sns..amazonaws.com" + pem:                  false,
		"https://sns.us-east-1.amazonaws.com." + pem:        false,
		"https://sns.us-east-1.amazonaws.com.evil.io" + pem: false,
		"https://evil.io/sns.us-east-1.amazonaws.com" + pem: false,
		// Scheme, user information, ports.
		"http://sns.us-east-1.amazonaws.com" + pem:       false,
		"https://user@sns.us-east-1.amazonaws.com" + pem: false,
		"https://sns.us-east-1.amazonaws.com:443" + pem:  false,
		"https://sns.us-east-1.amazonaws.com:8443" + pem: false,
		"https://sns.us-east-1.amazonaws.com:" + pem:     false,
		"sns.us-east-1.amazonaws.com" + pem:              false,
		"//sns.us-east-1.amazonaws.com" + pem:            false,
		// Paths, queries, fragments, escapes.
		"https://sns.us-east-1.amazonaws.com" + pem + "?x=1":                                                false,
		"https://sns.us-east-1.amazonaws.com" + pem + "?":                                                   false,
		"https://sns.us-east-1.amazonaws.com" + pem + "#x":                                                  false,
		"https://sns.us-east-1.amazonaws.com" + pem + "#":                                                   false,
		"https://sns.us-east-1.amazonaws.com/x.pem":                                                         false,
		"https://sns.us-east-1.amazonaws.com/SimpleNotificationService-.pem":                                false,
		"https://sns.us-east-1.amazonaws.com/SimpleNotificationService-a/b.pem":                             false,
		"https://sns.us-east-1.amazonaws.com/SimpleNotificationService-%61bc.pem":                           false,
		"https://sns.us-east-1.amazonaws.com/a/SimpleNotificationService-abc.pem":                           false,
		"https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem/":                            false,
		"https://sns.us-east-1.amazonaws.com/simplenotificationservice-abc.pem":                             false,
		"https://sns.us-east-1.amazonaws.com/SimpleNotificationService-" + strings.Repeat("a", 65) + ".pem": false,
	} {
		assert.Equal(t, want, f.Allowed(u), u)
	}

	// The confirmation URL follows the same hosts (its query is its
	// content).
	c := providers.Confirmation{Type: providers.SNSSubscriptionConfirmation, URL: "https://sns.s3.amazonaws.com/?Action=ConfirmSubscription"}
	assert.ErrorContains(t, providers.ConfirmSNSSubscription(context.Background(), http.DefaultClient, c, nil), "allowed host")
}

// TestCertificateFetcherChecksTheCertificate: a certificate is used only
// when its chain leads to a configured root and it is issued to SNS.
func TestCertificateFetcherChecksTheCertificate(t *testing.T) {
	t.Parallel()
	k := newKeyServer(t)
	ca, err := webhookstest.NewCertificateAuthority("test root")
	require.NoError(t, err)
	other, err := webhookstest.NewCertificateAuthority("another root")
	require.NoError(t, err)
	clock := webhookstest.NewClock(time.Now())
	f := snsFetcher(t, k, ca.Pool(), clock)
	ctx := context.Background()
	leafKey := newRSAKey(t)
	issue := func(ca *webhookstest.CertificateAuthority, name string) []byte {
		b, err := ca.Issue(leafKey, name)
		require.NoError(t, err)
		return b
	}

	for what, body := range map[string][]byte{
		"a self-signed CN=evil":              selfSigned(t, "evil"),
		"a self-signed sns.amazonaws.com":    selfSigned(t, "sns.amazonaws.com"),
		"another root's sns.amazonaws.com":   issue(other, "sns.amazonaws.com"),
		"the root's certificate for another": issue(ca, "evil.example"),
		"the root's wildcard":                issue(ca, "*.amazonaws.com"),
		"the root's S3 name":                 issue(ca, "sns.s3.amazonaws.com"),
		"the root's region name alone":       issue(ca, "us-east-1.amazonaws.com"),
		"the root's other prefix":            issue(ca, "evil-us-east-1.amazonaws.com"),
	} {
		u := k.serve("/SimpleNotificationService-"+rand8(t)+".pem", body)
		_, err := f.PublicKey(ctx, u)
		assert.ErrorIs(t, err, webhooks.ReasonBadSignature, what)
	}

	for _, name := range []string{"sns.amazonaws.com", "sns-signing.eu-south-1.amazonaws.com", "sns-cn-north-1.amazonaws.com.cn", "sns-us-gov-west-1.amazonaws.com"} {
		u := k.serve("/SimpleNotificationService-"+rand8(t)+".pem", issue(ca, name))
		key, err := f.PublicKey(ctx, u)
		require.NoError(t, err, name)
		assert.IsType(t, &rsa.PublicKey{}, key, name)
	}

	// Without the test root (the system's roots) the same certificate is
	// refused.
	u := k.serve("/SimpleNotificationService-"+rand8(t)+".pem", issue(ca, "sns.amazonaws.com"))
	_, err = snsFetcher(t, k, nil, clock).PublicKey(ctx, u)
	require.Error(t, err, "a private root is not a system root")
	if !errors.Is(err, webhooks.ReasonBadSignature) {
		assert.ErrorContains(t, err, "no root certificates", "a machine without system roots says so (503)")
	}

	// An intermediate in the PEM after the certificate completes the chain;
	// so does one named by the certificate's issuer URL, fetched once.
	mid, err := ca.Intermediate("test intermediate")
	require.NoError(t, err)
	bundle := append(issue(mid, "sns.amazonaws.com"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: mid.DER()})...)
	_, err = f.PublicKey(ctx, k.serve("/SimpleNotificationService-bundle.pem", bundle))
	require.NoError(t, err, "a bundled intermediate")
	_, err = f.PublicKey(ctx, k.serve("/SimpleNotificationService-alone.pem", issue(mid, "sns.amazonaws.com")))
	assert.ErrorIs(t, err, webhooks.ReasonBadSignature, "without its intermediate the chain is incomplete")
	mid.IssuerURL = k.serve("/intermediate.der", mid.DER())
	_, err = f.PublicKey(ctx, k.serve("/SimpleNotificationService-aia.pem", issue(mid, "sns.amazonaws.com")))
	require.NoError(t, err, "the intermediate named by the certificate")
	assert.Equal(t, 1, k.count("/intermediate.der"))

	// An expired certificate is refused.
	clock.Advance(25 * time.Hour)
	_, err = f.PublicKey(ctx, k.serve("/SimpleNotificationService-late.pem", issue(ca, "sns.amazonaws.com")))
	assert.ErrorIs(t, err, webhooks.ReasonBadSignature, "expired")
}

// TestCertificateFetcherCachesOneFetchPerURL: concurrent look-ups of one
// URL wait for one fetch; a failure is remembered for the failure TTL and
// fetched again after it; a look-up whose context ends does not end the
// others'.
func TestCertificateFetcherCachesOneFetchPerURL(t *testing.T) {
	t.Parallel()
	k := newKeyServer(t)
	ca, err := webhookstest.NewCertificateAuthority("test root")
	require.NoError(t, err)
	clock := webhookstest.NewClock(time.Now())
	f := snsFetcher(t, k, ca.Pool(), clock)
	waiting := make(chan struct{}, 16)
	providers.SetWaitingHook(f, func() { waiting <- struct{}{} })
	cert, err := ca.Issue(newRSAKey(t), "sns.amazonaws.com")
	require.NoError(t, err)
	const path = "/SimpleNotificationService-one.pem"
	u := k.serve(path, cert)

	entered, release := make(chan string, 16), make(chan struct{})
	k.mu.Lock()
	k.entered, k.release = entered, release
	k.mu.Unlock()
	const n = 8
	errs := make(chan error, n)
	go func() { _, err := f.PublicKey(context.Background(), u); errs <- err }()
	await(t, entered, "the first look-up fetches")
	for range n - 1 {
		go func() { _, err := f.PublicKey(context.Background(), u); errs <- err }()
		await(t, waiting, "each other look-up waits for it")
	}
	close(release)
	for range n {
		assert.NoError(t, <-errs)
	}
	assert.Equal(t, 1, k.count(path), "eight concurrent look-ups, one fetch")

	// A failure is remembered, then tried again.
	k.mu.Lock()
	k.entered, k.release, k.fail = nil, nil, true
	k.mu.Unlock()
	const down = "/SimpleNotificationService-down.pem"
	du := k.serve(down, cert)
	_, err = f.PublicKey(context.Background(), du)
	require.Error(t, err)
	assert.NotErrorIs(t, err, webhooks.ReasonBadSignature, "an unreachable certificate is not a rejection: the receiver answers 503")
	clock.Advance(providers.DefaultKeyFailureTTL - time.Second)
	_, err2 := f.PublicKey(context.Background(), du)
	assert.Equal(t, err, err2, "within the failure TTL the failure is returned")
	assert.Equal(t, 1, k.count(down), "and nothing is fetched")
	k.mu.Lock()
	k.fail = false
	k.mu.Unlock()
	clock.Advance(2 * time.Second)
	_, err = f.PublicKey(context.Background(), du)
	assert.NoError(t, err, "after it the certificate is fetched again")
	assert.Equal(t, 2, k.count(down))

	// A refused certificate is remembered too.
	evil := k.serve("/SimpleNotificationService-evil.pem", selfSigned(t, "evil"))
	for range 3 {
		_, err = f.PublicKey(context.Background(), evil)
		assert.ErrorIs(t, err, webhooks.ReasonBadSignature)
	}
	assert.Equal(t, 1, k.count("/SimpleNotificationService-evil.pem"))

	// The fetching look-up gives up: a waiting one fetches by itself.
	const slow = "/SimpleNotificationService-slow.pem"
	su := k.serve(slow, cert)
	entered, release = make(chan string, 16), make(chan struct{})
	k.mu.Lock()
	k.entered, k.release = entered, release
	k.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { _, err := f.PublicKey(ctx, su); first <- err }()
	await(t, entered, "the first look-up fetches")
	second := make(chan error, 1)
	go func() { _, err := f.PublicKey(context.Background(), su); second <- err }()
	await(t, waiting, "the second waits for it")
	cancel()
	assert.ErrorIs(t, <-first, context.Canceled)
	await(t, entered, "the second look-up fetches by itself")
	close(release)
	assert.NoError(t, <-second)
	assert.Equal(t, 2, k.count(slow))
}

// await receives from ch, failing the test after 10 seconds (a bound on a
// broken test, not a timing).
func await[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("not within 10s: %s", what)
	}
}

func TestCertificateFetcherOptions(t *testing.T) {
	t.Parallel()
	_, err := providers.NewCertificateFetcher(providers.CertificateFetcherOptions{})
	assert.ErrorContains(t, err, "AllowedHosts is empty")
	assert.ErrorContains(t, err, "Names is empty")
	assert.ErrorContains(t, err, "not a path pattern")
	_, err = providers.NewCertificateFetcher(providers.CertificateFetcherOptions{AllowedHosts: []string{"https://x/"}, Names: []string{"a:1"}, Path: "x", TTL: -1})
	assert.ErrorContains(t, err, "not a host name pattern")
	assert.ErrorContains(t, err, "not a DNS name pattern")
	assert.ErrorContains(t, err, "negative")
	_, err = providers.NewCertificateFetcher(providers.CertificateFetcherOptions{AllowedHosts: []string{"a*.example"}, Names: []string{"x"}, Path: "/x"})
	assert.ErrorContains(t, err, "not a host name pattern", "a * stands for a whole label")
}

// FuzzCertificateHostAllowed checks that only https URLs on an SNS host,
// with the documented path and nothing else, are allowed.
func FuzzCertificateHostAllowed(f *testing.F) {
	for _, s := range []string{"https://sns.us-east-1.amazonaws.com/SimpleNotificationService-a.pem", "https://sns.x.amazonaws.com.evil/x", "https://[::1]/x", "https://a@b/x", "%"} {
		f.Add(s)
	}
	fetcher, err := providers.NewCertificateFetcher(providers.CertificateFetcherOptions{
		AllowedHosts: providers.SNSCertificateHosts, Path: providers.SNSCertificatePath, Names: providers.SNSCertificateNames,
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, u string) {
		if !fetcher.Allowed(u) {
			return
		}
		host, path, ok := strings.Cut(strings.TrimPrefix(u, "https://"), "/")
		host = strings.ToLower(host)
		if !strings.HasPrefix(u, "https://") || !ok || strings.ContainsAny(u, "@?#%") || strings.Contains(host, ":") ||
			!strings.HasPrefix(host, "sns.") || !(strings.HasSuffix(host, ".amazonaws.com") || strings.HasSuffix(host, ".amazonaws.com.cn")) ||
			strings.Count(host, ".") != 3 && !strings.HasSuffix(host, ".cn") ||
			!strings.HasPrefix(path, "SimpleNotificationService-") || !strings.HasSuffix(path, ".pem") || strings.Contains(path, "/") {
			t.Fatalf("%q allowed", u)
		}
	})
}
