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
	// DefaultMaxCertificateBytes bounds a fetched certificate.
	DefaultMaxCertificateBytes = 64 << 10
	// maxCachedKeys bounds the cache; when full, expired entries go, and
	// then all of them.
	maxCachedKeys = 256
)

// SNSCertificateHosts are the hosts Amazon SNS serves signing
// certificates from, as documented: sns.<region>.amazonaws.com, and
// sns.<region>.amazonaws.com.cn in the China regions.
var SNSCertificateHosts = []string{"sns.*.amazonaws.com", "sns.*.amazonaws.com.cn"}

// CertificateFetcherOptions configures a CertificateFetcher.
type CertificateFetcherOptions struct {
	// Client fetches certificates. Nil means no network access: every
	// lookup fails with an error saying that fetching is not configured.
	// Set its Timeout. Defaults to nil.
	Client *http.Client
	// AllowedHosts are the hosts certificates may be fetched from, over
	// https only: host names in which "*" stands for exactly one DNS label
	// ("sns.*.amazonaws.com"), matched without regard to case. A pattern
	// with a port ("127.0.0.1:8443") matches that port only; one without
	// matches the default port only. A location outside them is rejected
	// without being fetched. Required.
	AllowedHosts []string
	// TTL is how long a certificate is kept. Defaults to DefaultKeyTTL.
	TTL time.Duration
	// MaxBytes bounds a certificate's size. Defaults to
	// DefaultMaxCertificateBytes.
	MaxBytes int64
	// Clock tells the time for expiry. Defaults to the system clock.
	Clock webhooks.Clock
}

// CertificateFetcher is a KeySource that fetches PEM X.509 certificates
// over https from allowed hosts and caches their public keys, each until
// the TTL passes or the certificate expires, whichever is first. A
// certificate that is expired or not yet valid is rejected. It is safe for
// concurrent use.
type CertificateFetcher struct {
	opts  CertificateFetcherOptions
	clock webhooks.Clock

	mu    sync.Mutex
	cache map[string]cachedKey
}

type cachedKey struct {
	key     crypto.PublicKey
	expires time.Time
}

// NewCertificateFetcher returns a fetcher with the options, or an error
// describing every invalid one.
func NewCertificateFetcher(opts CertificateFetcherOptions) (*CertificateFetcher, error) {
	var p problemList
	if len(opts.AllowedHosts) == 0 {
		p.bad("AllowedHosts is empty: list the hosts certificates may come from, for example providers.SNSCertificateHosts")
	}
	for _, h := range opts.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/@ ") {
			p.bad("AllowedHosts has %q, which is not a host name pattern", h)
		}
	}
	if opts.TTL < 0 || opts.MaxBytes < 0 {
		p.bad("TTL and MaxBytes must not be negative")
	}
	if err := optionsError("certificate fetcher", p...); err != nil {
		return nil, err
	}
	if opts.TTL == 0 {
		opts.TTL = DefaultKeyTTL
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = DefaultMaxCertificateBytes
	}
	clock := opts.Clock
	if clock == nil {
		clock = systemClock{}
	}
	return &CertificateFetcher{opts: opts, clock: clock, cache: map[string]cachedKey{}}, nil
}

// Allowed reports whether location is an https URL on an allowed host.
func (f *CertificateFetcher) Allowed(location string) bool {
	return hostAllowed(location, f.opts.AllowedHosts)
}

// hostAllowed reports whether location is an https URL without user
// information on a host matching one of the patterns.
func hostAllowed(location string, patterns []string) bool {
	u, err := url.Parse(location)
	if err != nil || u.Scheme != "https" || u.User != nil || u.Host == "" || u.Opaque != "" {
		return false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	for _, p := range patterns {
		p = strings.ToLower(p)
		pHost, pPort, hasPort := strings.Cut(p, ":")
		if strings.HasPrefix(p, "[") { // an IPv6 literal with or without a port
			pHost, pPort, hasPort = p, "", false
			if i := strings.LastIndex(p, "]:"); i >= 0 {
				pHost, pPort, hasPort = p[1:i], p[i+2:], true
			} else {
				pHost = strings.Trim(p, "[]")
			}
		}
		switch {
		case hasPort && port != pPort:
			continue
		case !hasPort && port != "" && port != "443":
			continue
		}
		if labelsMatch(pHost, host) {
			return true
		}
	}
	return false
}

// labelsMatch matches a host against a pattern label by label, "*"
// standing for one non-empty label of letters, digits and hyphens.
func labelsMatch(pattern, host string) bool {
	pl, hl := strings.Split(pattern, "."), strings.Split(host, ".")
	if len(pl) != len(hl) {
		return false
	}
	for i := range pl {
		if pl[i] == "*" {
			if hl[i] == "" || strings.Trim(hl[i], "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
				return false
			}
			continue
		}
		if pl[i] != hl[i] {
			return false
		}
	}
	return true
}

// PublicKey implements KeySource: it returns the public key of the
// certificate at location, from the cache or fetched.
func (f *CertificateFetcher) PublicKey(ctx context.Context, location string) (crypto.PublicKey, error) {
	if !f.Allowed(location) {
		return nil, webhooks.Reject(webhooks.ReasonBadSignature, "the signing certificate URL is not https on an allowed host")
	}
	now := f.clock.Now()
	f.mu.Lock()
	c, ok := f.cache[location]
	f.mu.Unlock()
	if ok && now.Before(c.expires) {
		return c.key, nil
	}
	if f.opts.Client == nil {
		return nil, errors.New("webhooks: fetching signing certificates is not configured: set Config.HTTPClient (CertificateFetcherOptions.Client)")
	}
	cert, err := f.fetch(ctx, location)
	if err != nil {
		return nil, err
	}
	if now.Before(cert.NotBefore) || now.After(cert.NotAfter) {
		return nil, webhooks.Reject(webhooks.ReasonBadSignature, "the signing certificate is expired or not yet valid")
	}
	expires := now.Add(f.opts.TTL)
	if cert.NotAfter.Before(expires) {
		expires = cert.NotAfter
	}
	f.mu.Lock()
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
	f.cache[location] = cachedKey{key: cert.PublicKey, expires: expires}
	f.mu.Unlock()
	return cert.PublicKey, nil
}

// fetch downloads and parses one certificate.
func (f *CertificateFetcher) fetch(ctx context.Context, location string) (*x509.Certificate, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, location, nil)
	if err != nil {
		return nil, fmt.Errorf("webhooks: fetching a signing certificate: %w", err)
	}
	client := *f.opts.Client
	// A redirect could leave the allowed hosts.
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
	block, _ := pem.Decode(body)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("webhooks: the signing certificate is not a PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("webhooks: parsing the signing certificate: %w", err)
	}
	return cert, nil
}
