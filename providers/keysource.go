package providers

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/hookinbox/webhooks"
)

// KeySource supplies the public key a signed message points at, for
// schemes that name where their key is (SNS's SigningCertURL). It decides
// what it trusts: a location it will not fetch is rejected with a
// *webhooks.VerificationError (the receiver answers 401); a source that
// could not decide (a network failure, fetching not configured) returns
// another error (503, so the provider retries). Implementations must be
// safe for concurrent use.
type KeySource interface {
	PublicKey(ctx context.Context, location string) (crypto.PublicKey, error)
}

// KeySourceFunc adapts a function to the KeySource interface.
type KeySourceFunc func(ctx context.Context, location string) (crypto.PublicKey, error)

// PublicKey calls f(ctx, location).
func (f KeySourceFunc) PublicKey(ctx context.Context, location string) (crypto.PublicKey, error) {
	return f(ctx, location)
}

// Certificate fetcher defaults.
const (
	// DefaultKeyTTL is how long a fetched certificate is used before it is
	// fetched again (never past its NotAfter).
	DefaultKeyTTL = 24 * time.Hour
	// DefaultKeyFailureTTL is how long a failed look-up is remembered: a
	// URL whose certificate could not be fetched or was refused is not
	// fetched again within it, so a flood of messages naming it costs one
	// fetch. SNS retries a delivery for longer than this.
	DefaultKeyFailureTTL = 30 * time.Second
	// DefaultMaxCertificateBytes bounds a fetched certificate.
	DefaultMaxCertificateBytes = 64 << 10
	// maxCachedKeys bounds the cache; when full, expired entries go, and
	// then all of them.
	maxCachedKeys = 256
	// maxIssuerFetches bounds the issuer certificates fetched to complete
	// one chain (see CertificateFetcher).
	maxIssuerFetches = 2
)

// Amazon SNS's rules for signing certificates, the values the sns entry
// gives CertificateFetcherOptions. Sources: "Verifying the signatures of
// Amazon SNS messages"
// (https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html:
// retrieve the certificate over https, check that it is issued by Amazon
// SNS, that its chain of trust is valid and that it comes from an SNS URL)
// and the AWS SDKs' validators, which make those rules precise: the URL's
// host is sns.<region>.amazonaws.com (sns.<region>.amazonaws.com.cn in the
// China partition; GovCloud regions are us-gov-…), never another host of
// amazonaws.com (an S3 bucket "sns" is sns.s3.amazonaws.com); and the
// certificate is issued to sns.amazonaws.com, or in some partitions and
// opt-in regions to sns-signing.<region>.amazonaws.com or
// sns-<region>.amazonaws.com[.cn].
var (
	// SNSCertificateHosts are the hosts SNS serves signing certificates
	// from.
	SNSCertificateHosts = []string{"sns.{region}.amazonaws.com", "sns.{region}.amazonaws.com.cn"}
	// SNSCertificateNames are the names an SNS signing certificate is
	// issued to.
	SNSCertificateNames = []string{"sns.amazonaws.com", "sns-signing.{region}.amazonaws.com", "sns-{region}.amazonaws.com", "sns-{region}.amazonaws.com.cn"}
)

// SNSCertificatePath is the path of an SNS signing certificate URL, such
// as /SimpleNotificationService-01d088a6f77103d0fe307c0069e40ed6.pem.
const SNSCertificatePath = "/SimpleNotificationService-*.pem"

// CertificateFetcherOptions configures a CertificateFetcher: where
// certificates may come from and to whom they must be issued, as patterns
// of DNS names in which "*" stands for one label of letters, digits and
// hyphens and "{region}" for an AWS region name ("us-east-1",
// "us-gov-west-1", "cn-north-1") within a label. Names are matched
// without regard to case.
type CertificateFetcherOptions struct {
	// Client fetches certificates. Nil means no network access: every
	// lookup fails with an error saying that fetching is not configured.
	// Set its Timeout. Defaults to nil.
	Client *http.Client
	// AllowedHosts are the hosts certificates may be fetched from, over
	// https only, such as SNSCertificateHosts. A pattern with a port
	// ("127.0.0.1:8443") matches that port only; one without matches
	// URLs that name no port only. Required.
	AllowedHosts []string
	// Path is the path a certificate URL must have, literal text in which
	// "*" stands for 1 to 64 letters and digits, such as
	// SNSCertificatePath. A URL with a query, a fragment, user
	// information or an escaped path is never fetched. Required.
	Path string
	// Names are the names a certificate may be issued to, such as
	// SNSCertificateNames: one of its DNS subject alternative names (its
	// subject's common name when it has none) must match one of them.
	// Required.
	Names []string
	// Roots are the certificate authorities a certificate's chain must
	// lead to, for tests and private deployments. Defaults to nil: the
	// system's roots.
	Roots *x509.CertPool
	// TTL is how long a certificate is kept. Defaults to DefaultKeyTTL.
	TTL time.Duration
	// FailureTTL is how long a failed look-up is remembered. Defaults to
	// DefaultKeyFailureTTL.
	FailureTTL time.Duration
	// MaxBytes bounds each certificate fetched. Defaults to
	// DefaultMaxCertificateBytes.
	MaxBytes int64
	// Clock tells the time for expiry and for checking certificates.
	// Defaults to the system clock.
	Clock webhooks.Clock
}

// CertificateFetcher is a KeySource that fetches PEM X.509 certificates
// and returns their public keys. It is safe for concurrent use.
//
// A location is fetched only when it is an https URL on an allowed host
// with the allowed path shape; its canonical form (scheme, lower-case host
// and path) is the cache key. A certificate is used only when its chain
// verifies, at the clock's time, to one of the roots, and it is issued to
// one of the names. Certificates in the fetched PEM after the first are
// taken as intermediates; when they do not complete the chain (SNS serves
// the signing certificate alone), the issuer certificates its Authority
// Information Access names are fetched too, over http or https (at most
// two, each within MaxBytes): they are trusted only through the chain to a
// root, like any intermediate.
//
// A certificate is kept until the TTL passes or it expires, whichever is
// first; a failure (an unreachable or refused certificate) is kept for
// FailureTTL. Concurrent look-ups of one location wait for a single fetch.
// Every fetch runs under the caller's context and the client's timeout.
type CertificateFetcher struct {
	opts      CertificateFetcherOptions
	clock     webhooks.Clock
	hosts     []hostPattern
	names     []hostPattern
	pathShape *regexp.Regexp

	mu    sync.Mutex
	cache map[string]cachedKey
	calls map[string]*keyCall // the fetches in flight, by canonical URL
	// waiting, when set (by tests), is called when a look-up starts
	// waiting for another's fetch.
	waiting func()
}

type cachedKey struct {
	key     crypto.PublicKey
	err     error
	expires time.Time
}

// keyCall is one fetch that look-ups of the same URL wait for.
type keyCall struct {
	done chan struct{}
	key  crypto.PublicKey
	err  error
	// abandoned says that the fetch ended with its caller's context, so
	// a waiter starts a fetch of its own.
	abandoned bool
}

// NewCertificateFetcher returns a fetcher with the options, or an error
// describing every invalid one.
func NewCertificateFetcher(opts CertificateFetcherOptions) (*CertificateFetcher, error) {
	var p problemList
	f := &CertificateFetcher{cache: map[string]cachedKey{}, calls: map[string]*keyCall{}}
	if len(opts.AllowedHosts) == 0 {
		p.bad("AllowedHosts is empty: list the hosts certificates may come from, for example providers.SNSCertificateHosts")
	}
	for _, h := range opts.AllowedHosts {
		hp, ok := parseHostPattern(h, true)
		if !ok {
			p.bad("AllowedHosts has %q, which is not a host name pattern", h)
		}
		f.hosts = append(f.hosts, hp)
	}
	if len(opts.Names) == 0 {
		p.bad("Names is empty: list the names certificates must be issued to, for example providers.SNSCertificateNames")
	}
	for _, n := range opts.Names {
		np, ok := parseHostPattern(n, false)
		if !ok {
			p.bad("Names has %q, which is not a DNS name pattern", n)
		}
		f.names = append(f.names, np)
	}
	if shape, ok := compilePathShape(opts.Path); ok {
		f.pathShape = shape
	} else {
		p.bad("Path %q is not a path pattern: start it with '/', for example providers.SNSCertificatePath", opts.Path)
	}
	if opts.TTL < 0 || opts.FailureTTL < 0 || opts.MaxBytes < 0 {
		p.bad("TTL, FailureTTL and MaxBytes must not be negative")
	}
	if err := optionsError("certificate fetcher", p...); err != nil {
		return nil, err
	}
	if opts.TTL == 0 {
		opts.TTL = DefaultKeyTTL
	}
	if opts.FailureTTL == 0 {
		opts.FailureTTL = DefaultKeyFailureTTL
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = DefaultMaxCertificateBytes
	}
	f.opts, f.clock = opts, opts.Clock
	if f.clock == nil {
		f.clock = webhooks.SystemClock{}
	}
	return f, nil
}

// Allowed reports whether location is a URL the fetcher would fetch.
func (f *CertificateFetcher) Allowed(location string) bool {
	_, ok := f.canonical(location)
	return ok
}

// canonical returns location's canonical form when it may be fetched.
func (f *CertificateFetcher) canonical(location string) (string, bool) {
	u, ok := httpsURL(location, f.hosts)
	if !ok || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(location, "#") ||
		u.RawPath != "" || !f.pathShape.MatchString(u.Path) {
		return "", false
	}
	return "https://" + strings.ToLower(u.Host) + u.Path, true
}

// hostAllowed reports whether location is an https URL without user
// information on a host matching one of the patterns (for SubscribeURL,
// whose query is its content).
func hostAllowed(location string, patterns []string) bool {
	hosts := make([]hostPattern, 0, len(patterns))
	for _, p := range patterns {
		hp, ok := parseHostPattern(p, true)
		if !ok {
			return false
		}
		hosts = append(hosts, hp)
	}
	_, ok := httpsURL(location, hosts)
	return ok
}

// httpsURL parses location as an https URL without user information on
// one of the hosts.
func httpsURL(location string, hosts []hostPattern) (*url.URL, bool) {
	u, err := url.Parse(location)
	if err != nil || u.Scheme != "https" || u.User != nil || u.Host == "" || u.Opaque != "" {
		return nil, false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if strings.HasSuffix(u.Host, ":") { // an empty port
		return nil, false
	}
	for _, p := range hosts {
		if p.port == port && p.matches(host) {
			return u, true
		}
	}
	return nil, false
}

// hostPattern is a DNS name pattern, label by label, with an optional
// port.
type hostPattern struct {
	labels []string
	port   string
}

// awsRegion matches an AWS region name: two letters, an optional
// partition word, a direction and a number ("us-east-1", "us-gov-west-1",
// "cn-northwest-1", "us-isob-east-1").
var awsRegion = regexp.MustCompile(`^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]{1,2}$`)

// parseHostPattern parses a pattern; a port is allowed only for hosts.
func parseHostPattern(p string, withPort bool) (hostPattern, bool) {
	p = strings.ToLower(p)
	var out hostPattern
	if strings.HasPrefix(p, "[") { // an IPv6 literal, with or without a port
		end := strings.Index(p, "]")
		if end < 0 {
			return out, false
		}
		out.labels = []string{p[1:end]}
		if rest := p[end+1:]; rest != "" {
			port, ok := strings.CutPrefix(rest, ":")
			if !ok || !withPort || !isPort(port) {
				return out, false
			}
			out.port = port
		}
		return out, out.labels[0] != ""
	}
	host, port, hasPort := strings.Cut(p, ":")
	if hasPort {
		if !withPort || !isPort(port) {
			return out, false
		}
		out.port = port
	}
	if host == "" || strings.ContainsAny(host, "/@ ?#[]") {
		return out, false
	}
	out.labels = strings.Split(host, ".")
	for _, l := range out.labels {
		if l == "" || (strings.Contains(l, "*") && l != "*") || strings.Count(l, "{region}") > 1 {
			return out, false
		}
	}
	return out, true
}

func isPort(s string) bool {
	return s != "" && len(s) <= 5 && strings.Trim(s, "0123456789") == ""
}

// matches reports whether a lower-case host name matches the pattern.
func (p hostPattern) matches(host string) bool {
	hl := strings.Split(host, ".")
	if len(hl) != len(p.labels) {
		return false
	}
	for i, pl := range p.labels {
		l := hl[i]
		switch {
		case pl == "*":
			if l == "" || strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
				return false
			}
		case strings.Contains(pl, "{region}"):
			before, after, _ := strings.Cut(pl, "{region}")
			region, okBefore := strings.CutPrefix(l, before)
			region, okAfter := strings.CutSuffix(region, after)
			if !okBefore || !okAfter || !awsRegion.MatchString(region) {
				return false
			}
		case pl != l:
			return false
		}
	}
	return true
}

// compilePathShape compiles Path: literal text, "*" for 1 to 64 letters
// and digits.
func compilePathShape(p string) (*regexp.Regexp, bool) {
	if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "?#%") {
		return nil, false
	}
	parts := strings.Split(p, "*")
	for i, part := range parts {
		parts[i] = regexp.QuoteMeta(part)
	}
	re, err := regexp.Compile("^" + strings.Join(parts, "[A-Za-z0-9]{1,64}") + "$")
	return re, err == nil
}

// PublicKey implements KeySource: it returns the public key of the
// certificate at location, from the cache or fetched.
func (f *CertificateFetcher) PublicKey(ctx context.Context, location string) (crypto.PublicKey, error) {
	key, ok := f.canonical(location)
	if !ok {
		return nil, webhooks.Reject(webhooks.ReasonBadSignature, "the signing certificate URL is not https on an allowed host with the documented path")
	}
	if f.opts.Client == nil {
		return nil, errors.New("webhooks: fetching signing certificates is not configured: set Config.HTTPClient (CertificateFetcherOptions.Client)")
	}
	for {
		now := f.clock.Now()
		f.mu.Lock()
		if c, ok := f.cache[key]; ok && now.Before(c.expires) {
			f.mu.Unlock()
			return c.key, c.err
		}
		if call, ok := f.calls[key]; ok {
			f.mu.Unlock()
			if f.waiting != nil {
				f.waiting()
			}
			select {
			case <-call.done:
			case <-ctx.Done():
				return nil, fmt.Errorf("webhooks: waiting for a signing certificate: %w", ctx.Err())
			}
			if call.abandoned {
				continue
			}
			return call.key, call.err
		}
		call := &keyCall{done: make(chan struct{})}
		f.calls[key] = call
		f.mu.Unlock()

		var expires time.Time
		call.key, expires, call.err = f.load(ctx, key, now)
		f.mu.Lock()
		delete(f.calls, key)
		switch {
		case call.err != nil && ctx.Err() != nil:
			call.abandoned = true // the caller gave up: nothing is learned about the URL
		case call.err != nil:
			f.store(key, cachedKey{err: call.err, expires: now.Add(f.opts.FailureTTL)}, now)
		default:
			f.store(key, cachedKey{key: call.key, expires: expires}, now)
		}
		f.mu.Unlock()
		close(call.done)
		return call.key, call.err
	}
}

// store caches a look-up's outcome; f.mu is held.
func (f *CertificateFetcher) store(key string, c cachedKey, now time.Time) {
	if len(f.cache) >= maxCachedKeys {
		for k, v := range f.cache {
			if !now.Before(v.expires) {
				delete(f.cache, k)
			}
		}
		if len(f.cache) >= maxCachedKeys {
			clear(f.cache)
		}
	}
	f.cache[key] = c
}

// load fetches the certificate at location and checks it, returning its
// public key and until when to keep it, or why it cannot be used.
func (f *CertificateFetcher) load(ctx context.Context, location string, now time.Time) (crypto.PublicKey, time.Time, error) {
	certs, err := f.fetch(ctx, location)
	if err != nil {
		return nil, time.Time{}, err
	}
	leaf := certs[0]
	if !f.issuedTo(leaf) {
		return nil, time.Time{}, webhooks.Reject(webhooks.ReasonBadSignature, "the signing certificate is not issued to the provider")
	}
	intermediates := x509.NewCertPool()
	for _, c := range certs[1:] {
		intermediates.AddCert(c)
	}
	opts := x509.VerifyOptions{Roots: f.opts.Roots, Intermediates: intermediates, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}
	_, err = leaf.Verify(opts)
	for last, fetched := leaf, 0; errors.As(err, new(x509.UnknownAuthorityError)) && fetched < maxIssuerFetches && len(last.IssuingCertificateURL) > 0; fetched++ {
		issuer, ierr := f.fetchIssuer(ctx, last.IssuingCertificateURL[0])
		if ierr != nil {
			return nil, time.Time{}, ierr
		}
		intermediates.AddCert(issuer)
		last = issuer
		_, err = leaf.Verify(opts)
	}
	var noRoots x509.SystemRootsError
	switch {
	case errors.As(err, &noRoots):
		return nil, time.Time{}, fmt.Errorf("webhooks: the system has no root certificates to verify the signing certificate with (install them, or set Config.KeyRoots): %w", err)
	case err != nil:
		return nil, time.Time{}, webhooks.Reject(webhooks.ReasonBadSignature, "the signing certificate does not verify to a trusted root: %v", err)
	}
	expires := now.Add(f.opts.TTL)
	if leaf.NotAfter.Before(expires) {
		expires = leaf.NotAfter
	}
	return leaf.PublicKey, expires, nil
}

// issuedTo reports whether the certificate is issued to one of the names.
func (f *CertificateFetcher) issuedTo(c *x509.Certificate) bool {
	names := c.DNSNames
	if len(names) == 0 {
		names = []string{c.Subject.CommonName}
	}
	for _, n := range names {
		for _, p := range f.names {
			if p.port == "" && p.matches(strings.ToLower(n)) {
				return true
			}
		}
	}
	return false
}

// fetch downloads the PEM certificates at location; there is at least
// one.
func (f *CertificateFetcher) fetch(ctx context.Context, location string) ([]*x509.Certificate, error) {
	body, err := f.get(ctx, location)
	if err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	for len(certs) < 4 {
		var block *pem.Block
		block, body = pem.Decode(body)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("webhooks: parsing the signing certificate: %w", err)
		}
		certs = append(certs, cert)
	}
	if len(certs) == 0 {
		return nil, errors.New("webhooks: the signing certificate is not a PEM certificate")
	}
	return certs, nil
}

// fetchIssuer downloads an issuer certificate named by Authority
// Information Access, DER (as CAs publish them) or PEM.
func (f *CertificateFetcher) fetchIssuer(ctx context.Context, location string) (*x509.Certificate, error) {
	u, err := url.Parse(location)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Host == "" {
		return nil, webhooks.Reject(webhooks.ReasonBadSignature, "the signing certificate names an issuer that cannot be fetched")
	}
	body, err := f.get(ctx, location)
	if err != nil {
		return nil, err
	}
	if block, _ := pem.Decode(body); block != nil && block.Type == "CERTIFICATE" {
		body = block.Bytes
	}
	cert, err := x509.ParseCertificate(body)
	if err != nil {
		return nil, fmt.Errorf("webhooks: parsing the signing certificate's issuer: %w", err)
	}
	return cert, nil
}

// get fetches one URL, within MaxBytes, following no redirect (which could
// leave the allowed hosts).
func (f *CertificateFetcher) get(ctx context.Context, location string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, location, nil)
	if err != nil {
		return nil, fmt.Errorf("webhooks: fetching a signing certificate: %w", err)
	}
	client := *f.opts.Client
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("webhooks: fetching a signing certificate: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("webhooks: fetching a signing certificate: status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.opts.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("webhooks: fetching a signing certificate: %w", err)
	}
	if int64(len(body)) > f.opts.MaxBytes {
		return nil, errors.New("webhooks: the signing certificate is larger than the limit")
	}
	return body, nil
}
