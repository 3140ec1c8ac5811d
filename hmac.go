package webhooks

import (
	"context"
	"crypto"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/hookinbox/webhooks/internal/hmackey"
)

// HMACOptions configures an HMACVerifier: the seed's generic verifier of
// HMAC signatures, for any provider whose request a SignedRequest
// describes. The zero value of each field is its documented default;
// SignatureHeader and an event ID source are required. NewHMACVerifier
// validates the options and reports every problem it finds. Package
// providers returns filled-in options for known providers
// (providers.StripeOptions and the like), which may be adjusted field by
// field.
type HMACOptions struct {
	// SignedRequest is where the signature, timestamp, event ID and type
	// are, and what the signature covers. Signatures are digests of
	// Algorithm, written in Encoding.
	SignedRequest

	// Algorithm is the HMAC hash function: crypto.SHA256, crypto.SHA1 (for
	// providers that still sign with it) or crypto.SHA512. Defaults to
	// crypto.SHA256 when zero.
	Algorithm crypto.Hash

	// SecretPrefix is the text the provider's secrets start with, such as
	// "whsec_" for Stripe and Standard Webhooks. A secret that is exactly
	// this prefix (a truncated copy and paste) is skipped like an empty
	// one, so a route with no other secret is rejected with
	// ReasonNoCredentials instead of being verified with a guessable key.
	// Secrets without the prefix are still used. Defaults to none.
	SecretPrefix string

	// DecodeSecret turns a stored secret into the HMAC key, for providers
	// whose secrets are encoded (Standard Webhooks: base64 after "whsec_").
	// An error it returns is a configuration problem: Verify returns it
	// wrapped (not as a *VerificationError), naming the secret's ID only,
	// so the error must not contain the secret. Secrets that decode to
	// nothing are skipped. Defaults to nil: the secret's bytes are the key.
	DecodeSecret func(secret []byte) ([]byte, error)

	// CheckSecret, when set, refuses a static secret (StaticSecrets,
	// TenantSecrets) that the provider's credential formats show to be
	// another kind of credential, such as an API key pasted where the
	// webhook signing secret belongs: NewHMACVerifier reports its error
	// after the secret's ID, as it is, so the error must say what to paste
	// instead and must not contain the secret. Secrets from other
	// resolvers are not checked: a delivery is then refused with
	// ReasonBadSignature, whose log line names this among its likely
	// causes. Defaults to nil: no check.
	CheckSecret func(secret []byte) error

	// Handshake, when set, answers a provider challenge once the request
	// verified (see HandshakeFunc), with the HMAC key that verified it,
	// for challenges that must be answered with it (Zoom's
	// endpoint.url_validation). Defaults to nil.
	Handshake HandshakeFunc

	// Clock tells the time the timestamp window is checked against.
	// Defaults to the system clock.
	Clock Clock
}

// HMACVerifier verifies webhooks signed with an HMAC of the request, as
// configured by HMACOptions. It is safe for concurrent use.
//
// Verify parses, then authenticates, then reads metadata. It checks, in
// this order: the signature header's syntax, the body, the presence and
// syntax of a header or list timestamp, the presence of an event ID that
// the signed content includes; then it asks the CredentialResolver for
// secrets and compares signatures in constant time; only after a signature
// matched does it parse the JSON body, check the timestamp window, offer
// the request to the Handshake hook and read the event ID and type. A
// request with a bad signature is therefore never told whether its
// timestamp or payload would have passed.
type HMACVerifier struct {
	reader requestReader
	opts   HMACOptions
	creds  CredentialResolver
	keys   *hmackey.Cache
}

// NewHMACVerifier returns a verifier with the given options, taking secrets
// from creds; several secrets allow rotation. It returns an error
// describing every invalid option, and every static secret (StaticSecrets,
// TenantSecrets) that is empty, only SecretPrefix, refused by CheckSecret or by
// DecodeSecret; secrets from other resolvers are checked on each request.
func NewHMACVerifier(opts HMACOptions, creds CredentialResolver) (*HMACVerifier, error) {
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	newHash, size := hmacHash(opts.Algorithm, bad)
	reader, err := opts.SignedRequest.compile(size, opts.Clock, opts.Handshake, bad)
	problems = append(problems, err, CheckCredentials(creds, "secret", opts.usableSecret))
	if err := errors.Join(problems...); err != nil {
		return nil, fmt.Errorf("webhooks: invalid HMAC options: %w", err)
	}
	v := &HMACVerifier{reader: reader, opts: opts, creds: creds, keys: hmackey.New(newHash, opts.DecodeSecret)}
	v.opts.SignedRequest = SignedRequest{} // the reader holds the description
	return v, nil
}

var (
	_ SecretHeaderVerifier = (*HMACVerifier)(nil)
	_ ReplayGuarded        = (*HMACVerifier)(nil)
)

// SecretHeaders implements SecretHeaderVerifier: SignatureHeader, its
// fallback and OtherSignatureHeaders, which a Receiver never stores.
func (v *HMACVerifier) SecretHeaders() []string { return v.reader.secretHeaders }

// NeedsReplayStore implements ReplayGuarded: true when the event type is
// read from a header the signature does not cover.
func (v *HMACVerifier) NeedsReplayStore() bool { return v.reader.guardsType() }

// hmacHash returns the hash of an Algorithm and its digest size.
func hmacHash(a crypto.Hash, bad func(string, ...any)) (func() hash.Hash, int) {
	switch a {
	case 0, crypto.SHA256:
		return sha256.New, sha256.Size
	case crypto.SHA1:
		return sha1.New, sha1.Size
	case crypto.SHA512:
		return sha512.New, sha512.Size
	}
	bad("Algorithm %v is not supported: use crypto.SHA256, crypto.SHA1 or crypto.SHA512", a)
	return sha256.New, sha256.Size
}

// usableSecret refuses a static secret that is only SecretPrefix, that
// CheckSecret refuses or that DecodeSecret refuses.
func (o *HMACOptions) usableSecret(value []byte) error {
	if o.SecretPrefix != "" && string(value) == o.SecretPrefix {
		return fmt.Errorf("it is only the prefix %q: paste the whole secret", o.SecretPrefix)
	}
	if o.CheckSecret != nil {
		if err := o.CheckSecret(value); err != nil {
			return err
		}
	}
	if o.DecodeSecret != nil {
		// DecodeSecret's own error could quote the secret.
		if k, err := o.DecodeSecret(value); err != nil || len(k) == 0 {
			return errors.New("it is not in the provider's format (DecodeSecret refused it)")
		}
	}
	return nil
}

// Verify implements Verifier. Rejections are *VerificationError values whose
// details name headers and keys but never echo secrets or signatures. An
// error from the CredentialResolver or DecodeSecret, or a non-rejection
// error from SignedContentFunc, Event.IDFunc or Handshake, is returned
// wrapped, not as a rejection.
func (v *HMACVerifier) Verify(ctx context.Context, route Route, req *Request) (Verification, error) {
	var in signedMessage
	req, err := v.reader.parse(req, &in)
	if err != nil {
		return Verification{}, err
	}
	keyID, key, err := v.authenticate(ctx, route, &in)
	if err != nil {
		return Verification{}, err
	}
	return v.reader.metadata(req, &in, keyID, key)
}

// authenticate computes the HMAC of the content under each usable secret
// and compares it in constant time with every signature. It returns the ID
// and key of the first secret that matched.
func (v *HMACVerifier) authenticate(ctx context.Context, route Route, in *signedMessage) (keyID string, key []byte, err error) {
	secrets, err := v.creds.Secrets(ctx, route)
	if err != nil {
		return "", nil, fmt.Errorf("webhooks: HMAC verifier: resolving secrets: %w", err)
	}
	tried := 0
	for _, s := range secrets {
		if len(s.Value) == 0 || (v.opts.SecretPrefix != "" && string(s.Value) == v.opts.SecretPrefix) {
			continue
		}
		k, err := v.keys.Get(s.Value)
		if err != nil {
			return "", nil, fmt.Errorf("webhooks: HMAC verifier: decoding secret %q: %w", s.ID, err)
		}
		if len(k.Bytes()) == 0 {
			continue
		}
		tried++
		if matches(k, v.reader.content, in) {
			return s.ID, k.Bytes(), nil
		}
	}
	if tried == 0 {
		return "", nil, Reject(ReasonNoCredentials, "no usable secret is configured for this route")
	}
	return "", nil, Reject(ReasonBadSignature, "no signature in %s matches", v.reader.r.SignatureHeader)
}

// PerTenant reports whether the verifier's credentials are per tenant
// (see [TenantScoped]).
func (v *HMACVerifier) PerTenant() bool { return PerTenant(v.creds) }

// Format prints the verifier's type only, whatever the verb: the secrets it
// holds never reach output through fmt or slog.
func (v *HMACVerifier) Format(f fmt.State, _ rune) {
	_, _ = io.WriteString(f, "webhooks.HMACVerifier{…}")
}
