package providers

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/hookinbox/webhooks"
)

// Config is what New needs to build a provider's verifier. A provider uses
// the fields its scheme needs and ignores the others; each field says which
// entries read it.
type Config struct {
	// Secrets supplies the provider's credentials per route: signing
	// secrets, tokens, public keys or topic ARNs, as the Entry's
	// Credential says. Several may be live at once (rotation). Required.
	// For Asana and Notion, which hand their secret over in an
	// unauthenticated handshake, it must also implement SecretSaver, which
	// keeps such a secret only once the host confirmed it (see
	// HandshakeSecrets).
	Secrets webhooks.CredentialResolver

	// PublicURL is the public scheme, host and any path prefix under
	// which the provider reaches this service, for example
	// "https://hooks.example.com", for schemes that sign the URL they
	// call: twilio, hubspot, square and trello. The signed URL is
	// PublicURL followed by the request's path and query as received.
	// Empty for the others.
	PublicURL string

	// VerifyToken is the token the host chose when it configured a
	// provider that checks the endpoint with a GET challenge carrying it:
	// meta (hub.verify_token). Required there, ignored elsewhere.
	VerifyToken string

	// HTTPClient fetches signing certificates for schemes that publish
	// them at a URL: sns. Nil means no fetching: such a verifier refuses
	// every message with an error saying so. Set its Timeout. Ignored by
	// the others.
	HTTPClient *http.Client

	// KeyHosts replaces the entry's documented allow-list of hosts that
	// certificates may be fetched from (sns: SNSCertificateHosts), as
	// CertificateFetcherOptions.AllowedHosts patterns, for tests and
	// private deployments; leave it empty in production. Only the hosts
	// change: URLs are still fetched over https with the documented path
	// only, and a certificate must still be issued to the documented
	// names (SNSCertificateNames) and chain to a root (see KeyRoots).
	KeyHosts []string

	// KeyRoots are the certificate authorities a fetched certificate
	// must chain to (sns), for tests and private deployments: a test
	// issues a certificate for sns.amazonaws.com under a root of its own
	// and names that root here. Defaults to nil: the system's roots.
	KeyRoots *x509.CertPool

	// Confirm receives a subscription the provider asks the host to
	// confirm (sns: SubscriptionConfirmation and
	// UnsubscribeConfirmation), after the message verified. The host
	// confirms explicitly, for example with ConfirmSNSSubscription; the
	// library never visits a confirmation URL by itself. An error makes
	// the receiver answer 503, so the provider sends it again. When nil,
	// a SubscriptionConfirmation is refused with an error (503) that says
	// so, and an UnsubscribeConfirmation is acknowledged.
	Confirm func(ctx context.Context, route webhooks.Route, c Confirmation) error

	// Clock tells the time that signed timestamps are checked against.
	// Defaults to the system clock.
	Clock webhooks.Clock
}

// Confirmation is a subscription a provider asks the host to confirm.
type Confirmation struct {
	// Provider is the catalog name, for example "sns".
	Provider string
	// Type is the provider's kind of message, for example
	// "SubscriptionConfirmation" or "UnsubscribeConfirmation".
	Type string
	// Topic names what is subscribed to (an SNS topic ARN).
	Topic string
	// URL is where the provider says the subscription is confirmed
	// (SNS's SubscribeURL). It was signed by the provider; visiting it
	// confirms the subscription.
	URL string
	// Token is the confirmation token, for APIs that confirm with it
	// (SNS ConfirmSubscription).
	Token string
	// MessageID identifies the message.
	MessageID string
}

// Schemes of catalog entries, the values of Entry.Scheme.
const (
	SchemeHMAC        = "hmac"        // an HMAC of the request
	SchemeEd25519     = "ed25519"     // an Ed25519 signature, NewEd25519Verifier
	SchemeECDSA       = "ecdsa"       // an ECDSA P-256 signature under a static public key
	SchemeCertificate = "certificate" // an RSA signature under a certificate fetched from an allowed host
	SchemeToken       = "token"       // a shared token in a header or the body
	SchemeTwilioURL   = "twilio-url"  // an HMAC of the public URL and parameters, NewTwilioVerifier
)

// Entry describes one provider of the catalog: its definition (the
// options its verifier is built with: HMACOptions, Ed25519Options or
// TokenOptions, or a verifier of a fixed format) and what people need to
// know beside it. CATALOG.md is generated from entries; the text of
// Headers, Signed, Window and EventID is derived from the definition
// wherever it has one, so the page says what the verifier does.
type Entry struct {
	// Name is the catalog name, short lower-case words joined by "-",
	// for example "stripe" or "discord-events". It is a good provider key
	// to register the verifier under.
	Name string
	// Title is the provider's name as people write it, for example
	// "Stripe" or "Discord webhook events".
	Title string
	// Docs is the address of the documentation the scheme follows.
	Docs string
	// Scheme is how requests are authenticated: one of the Scheme
	// constants.
	Scheme string
	// Credential says what Config.Secrets supplies, for example "the
	// endpoint's signing secret (whsec_…)".
	Credential string
	// Handshakes lists the provider's challenges the verifier answers,
	// or "" when there are none.
	Handshakes string
	// Answer is the reply the provider documents for an accepted or
	// duplicate delivery, which the verifier sets as
	// webhooks.Verification.Answer; nil when any 2xx will do (the
	// receiver's own 202 or 200). Do not modify it.
	Answer *webhooks.Response
	// NeedsVerifyToken reports that the entry reads Config.VerifyToken.
	NeedsVerifyToken bool
	// NeedsPublicURL reports that the entry reads Config.PublicURL.
	NeedsPublicURL bool

	// The definition: the options of the entry's scheme, or build for a
	// verifier of a fixed format.
	hmac       func(publicURL string) webhooks.HMACOptions
	anyHeaders []string // HMAC signature headers of which any one verifies
	ed25519    func() Ed25519Options
	token      func() TokenOptions
	tokenValid func([]byte) error // checks static token secrets
	tokenGet   func(*TokenVerifier) challengeFunc
	// mod adds what the provider documents beyond the signature.
	mod   func(c Config, p *preset)
	build func(Config) (webhooks.Verifier, error)
	notes notes
}

// HMACOptions returns the options the entry's HMAC verifier is built with
// for cfg (whose PublicURL it reads where the entry signs the public URL),
// and false for an entry whose verifier is not one of HMACOptions. Box and
// DocuSign check the same options under several signature headers, any
// one of which verifies; the options name the first.
func (e Entry) HMACOptions(cfg Config) (webhooks.HMACOptions, bool) {
	if e.hmac == nil {
		return webhooks.HMACOptions{}, false
	}
	return e.hmac(cfg.PublicURL), true
}

// Ed25519Options returns the options the entry's Ed25519 verifier is
// built with, and false for an entry of another scheme.
func (e Entry) Ed25519Options() (Ed25519Options, bool) {
	if e.ed25519 == nil {
		return Ed25519Options{}, false
	}
	return e.ed25519(), true
}

// TokenOptions returns the options the entry's token verifier is built
// with, and false for an entry of another scheme.
func (e Entry) TokenOptions() (TokenOptions, bool) {
	if e.token == nil {
		return TokenOptions{}, false
	}
	return e.token(), true
}

// New returns the entry's verifier configured by cfg, as the package's New
// does for a catalog name.
func (e Entry) New(cfg Config) (webhooks.Verifier, error) {
	if e.NeedsPublicURL && cfg.PublicURL == "" {
		return nil, fmt.Errorf("webhooks: %s signs the public URL it calls: set Config.PublicURL, for example \"https://hooks.example.com\"", e.Title)
	}
	if e.NeedsVerifyToken && cfg.VerifyToken == "" {
		return nil, fmt.Errorf("webhooks: %s checks the endpoint with a verify token: set Config.VerifyToken (by convention from %s)", e.Title, e.VerifyTokenEnv())
	}
	v, err := e.verifier(cfg)
	if err != nil {
		return nil, fmt.Errorf("webhooks: provider %q: %w", e.Name, trimPrefix(err))
	}
	if p, ok := v.(*preset); ok && e.Answer != nil {
		p.answer = e.Answer
	}
	return v, nil
}

// verifier builds the entry's verifier from its definition.
func (e Entry) verifier(c Config) (webhooks.Verifier, error) {
	var (
		v   webhooks.Verifier
		err error
	)
	switch {
	case e.hmac != nil && len(e.anyHeaders) > 0:
		v, err = newAnyHeader(c, e.hmac(c.PublicURL), e.anyHeaders...)
	case e.hmac != nil:
		v, err = hmacPreset(c, e.hmac(c.PublicURL))
	case e.ed25519 != nil:
		o := e.ed25519()
		o.Clock = c.Clock
		v, err = NewEd25519Verifier(o, c.Secrets)
	case e.token != nil:
		if e.tokenValid != nil {
			if err := optionsError("token", webhooks.CheckCredentials(c.Secrets, "secret", e.tokenValid)); err != nil {
				return nil, err
			}
		}
		var tv *TokenVerifier
		if tv, err = NewTokenVerifier(e.token(), c.Secrets); err == nil {
			v = tv
			if e.tokenGet != nil {
				p := &preset{inner: tv, get: true, challenge: e.tokenGet(tv)}
				if e.mod != nil {
					e.mod(c, p)
				}
				return p, nil
			}
		}
	default:
		return e.build(c)
	}
	if err != nil {
		return nil, err
	}
	p := &preset{inner: v}
	if e.mod != nil {
		e.mod(c, p)
	}
	return p, nil
}

// SecretEnv returns the environment variable a host reads the entry's
// credential from by convention: the name upper-cased, with every
// character that is not a letter or digit written as "_", and
// "_WEBHOOK_SECRET": "STRIPE_WEBHOOK_SECRET",
// "DISCORD_EVENTS_WEBHOOK_SECRET".
func (e Entry) SecretEnv() string { return EnvPrefix(e.Name) + "_WEBHOOK_SECRET" }

// VerifyTokenEnv returns the environment variable of the entry's verify
// token ("META_WEBHOOK_VERIFY_TOKEN"), or "" when the entry needs none.
func (e Entry) VerifyTokenEnv() string {
	if !e.NeedsVerifyToken {
		return ""
	}
	return EnvPrefix(e.Name) + "_WEBHOOK_VERIFY_TOKEN"
}

// EnvPrefix returns a catalog name as the prefix of its environment
// variables: upper-cased, every character other than a letter or digit
// written as "_".
func EnvPrefix(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, name)
}

// Names returns the names of the catalog's providers, sorted.
func Names() []string {
	names := make([]string, len(catalog))
	for i, e := range catalog {
		names[i] = e.Name
	}
	return names
}

// Entries returns the catalog's entries, sorted by name.
func Entries() []Entry { return slices.Clone(catalog) }

// Lookup returns the catalog entry of a provider by name.
func Lookup(name string) (Entry, bool) {
	i, ok := slices.BinarySearchFunc(catalog, name, func(e Entry, name string) int { return strings.Compare(e.Name, name) })
	if !ok {
		return Entry{}, false
	}
	return catalog[i], true
}

// New returns the verifier of the named provider with its preset options,
// configured by cfg; register it under a provider key (the name is a good
// one). An unknown name is an error, as is any problem the provider's
// constructor finds (no secrets, a static secret not in the provider's
// format, a missing PublicURL or VerifyToken).
func New(name string, cfg Config) (webhooks.Verifier, error) {
	e, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("webhooks: unknown provider %q: providers.Names() lists the catalog", name)
	}
	return e.New(cfg)
}

// trimPrefix drops a leading "webhooks: " so wrapped messages read once.
func trimPrefix(err error) error {
	if msg, ok := strings.CutPrefix(err.Error(), "webhooks: "); ok {
		return &prefixTrimmed{msg: msg, err: err}
	}
	return err
}

type prefixTrimmed struct {
	msg string
	err error
}

func (p *prefixTrimmed) Error() string { return p.msg }
func (p *prefixTrimmed) Unwrap() error { return p.err }

// Configured is one verifier FromEnv built.
type Configured struct {
	// Name is the catalog name, a good provider key.
	Name     string
	Verifier webhooks.Verifier
	// SecretEnv is the variable the credential was read from.
	SecretEnv string
}

// FromEnv builds the verifier of every catalog entry whose credential is
// set in the environment under Entry.SecretEnv (and, for entries that
// need one, whose verify token is set under Entry.VerifyTokenEnv), with
// getenv reading the environment (os.Getenv). base supplies what the
// environment does not: PublicURL, HTTPClient, KeyHosts, KeyRoots, Confirm, Clock;
// its Secrets and VerifyToken are ignored. It returns the verifiers in
// catalog order, and an error naming every entry whose variable is set
// but which could not be built (a missing verify token or PublicURL, a
// secret not in the provider's format): a host should refuse to start
// then, rather than drop a provider it was told to serve. Values never
// appear in errors.
func FromEnv(getenv func(string) string, base Config) ([]Configured, error) {
	var (
		out      []Configured
		problems []error
	)
	for _, e := range catalog {
		secret := getenv(e.SecretEnv())
		if secret == "" {
			continue
		}
		cfg := base
		cfg.Secrets = webhooks.StaticSecrets(secret)
		cfg.VerifyToken = ""
		if e.NeedsVerifyToken {
			cfg.VerifyToken = getenv(e.VerifyTokenEnv())
		}
		v, err := New(e.Name, cfg)
		if err != nil {
			problems = append(problems, fmt.Errorf("%s is set, but: %w", e.SecretEnv(), err))
			continue
		}
		out = append(out, Configured{Name: e.Name, Verifier: v, SecretEnv: e.SecretEnv()})
	}
	return out, errors.Join(problems...)
}
