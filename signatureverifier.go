package webhooks

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// SignatureAlgorithm checks signatures under a credential, for a
// [SignatureVerifier]: an asymmetric scheme whose credential is the
// sender's public key (package providers' Ed25519), or any other whose
// signature is checked on the whole signed content at once.
// Implementations must be safe for concurrent use.
type SignatureAlgorithm interface {
	// Name names the algorithm in errors, for example "Ed25519".
	Name() string
	// SignatureSize is the length of a decoded signature in bytes.
	SignatureSize() int
	// CheckCredential reports why a credential (Secret.Value) cannot be
	// used, or nil. Its error must not contain the value.
	CheckCredential(value []byte) error
	// Verify reports whether sig is a signature of message under the
	// credential, which CheckCredential accepted.
	Verify(credential, message, sig []byte) bool
}

// SignatureOptions configures a SignatureVerifier: the signed request's
// description, the algorithm, and what a verifier adds around them. The
// zero value of each field is its documented default; Algorithm is
// required, and so are what SignedRequest requires.
type SignatureOptions struct {
	// SignedRequest is where the signature, timestamp, event ID and type
	// are, and what the signature covers.
	SignedRequest

	// Algorithm checks the signatures. Required.
	Algorithm SignatureAlgorithm

	// Credential names the credential in rejections and errors, for
	// example "public key". Defaults to "credential".
	Credential string

	// Handshake, when set, answers a provider challenge once the request
	// verified (see HandshakeFunc); its key is always nil. Defaults to nil.
	Handshake HandshakeFunc

	// Clock tells the time the timestamp window is checked against.
	// Defaults to the system clock.
	Clock Clock
}

// SignatureVerifier verifies requests described by a [SignedRequest] whose
// signatures a [SignatureAlgorithm] checks, as configured by
// SignatureOptions. It runs the pipeline HMACVerifier runs, with the
// algorithm's check in place of the HMAC comparison. It is safe for
// concurrent use.
//
// Verify checks, in this order: the signature header's syntax, the body,
// the timestamp's presence and syntax, the presence of a signed event ID;
// then it asks the CredentialResolver for credentials and checks each
// signature under each; only after a signature verified does it read a
// body timestamp, check the timestamp window, offer the request to the
// Handshake hook, and read the event ID and type.
type SignatureVerifier struct {
	reader requestReader
	alg    SignatureAlgorithm
	noun   string
	creds  CredentialResolver
}

// NewSignatureVerifier returns a verifier with the given options, taking
// credentials from creds; several allow rotation. It returns an error
// describing every invalid option, and every static credential
// (StaticSecrets, TenantSecrets) that is empty or that the algorithm's
// CheckCredential refuses; credentials from other resolvers are checked on
// each request.
func NewSignatureVerifier(opts SignatureOptions, creds CredentialResolver) (*SignatureVerifier, error) {
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	name, size := "signature", 1
	if opts.Algorithm == nil {
		bad("Algorithm is nil: set the SignatureAlgorithm that checks the signatures")
	} else {
		name, size = opts.Algorithm.Name(), opts.Algorithm.SignatureSize()
	}
	v := &SignatureVerifier{alg: opts.Algorithm, noun: opts.Credential, creds: creds}
	if v.noun == "" {
		v.noun = "credential"
	}
	reader, err := opts.SignedRequest.compile(size, opts.Clock, opts.Handshake, bad)
	problems = append(problems, err)
	if opts.Algorithm != nil {
		problems = append(problems, CheckCredentials(creds, v.noun, opts.Algorithm.CheckCredential))
	}
	if err := errors.Join(problems...); err != nil {
		return nil, fmt.Errorf("webhooks: invalid %s options: %w", name, err)
	}
	v.reader = reader
	return v, nil
}

var (
	_ SecretHeaderVerifier = (*SignatureVerifier)(nil)
	_ ReplayGuarded        = (*SignatureVerifier)(nil)
)

// SecretHeaders implements SecretHeaderVerifier: SignatureHeader, its
// fallback and OtherSignatureHeaders, which a Receiver never stores.
func (v *SignatureVerifier) SecretHeaders() []string { return v.reader.secretHeaders }

// NeedsReplayStore implements ReplayGuarded: true when the event type is
// read from a header the signature does not cover.
func (v *SignatureVerifier) NeedsReplayStore() bool { return v.reader.guardsType() }

// Verify implements Verifier. Rejections are *VerificationError values
// whose details name headers but never echo signatures. An error from the
// CredentialResolver, a credential the algorithm refuses, or a
// non-rejection error from SignedContentFunc, Handshake or Event.IDFunc is
// returned wrapped, not as a rejection.
func (v *SignatureVerifier) Verify(ctx context.Context, route Route, req *Request) (Verification, error) {
	var in signedMessage
	req, err := v.reader.parse(req, &in)
	if err != nil {
		return Verification{}, err
	}
	keyID, err := v.authenticate(ctx, route, &in)
	if err != nil {
		return Verification{}, err
	}
	return v.reader.metadata(req, &in, keyID, nil)
}

// authenticate checks each signature under each credential and returns
// the ID of the first credential that verified one.
func (v *SignatureVerifier) authenticate(ctx context.Context, route Route, in *signedMessage) (string, error) {
	name := v.alg.Name()
	creds, err := v.creds.Secrets(ctx, route)
	if err != nil {
		return "", fmt.Errorf("webhooks: %s verifier: resolving %ss: %w", name, v.noun, err)
	}
	message := v.reader.message(in)
	tried := 0
	for _, c := range creds {
		if len(c.Value) == 0 {
			continue
		}
		if err := v.alg.CheckCredential(c.Value); err != nil {
			return "", fmt.Errorf("webhooks: %s verifier: %s %q: %w", name, v.noun, c.ID, err)
		}
		tried++
		for i := range in.sigs.Len() {
			if v.alg.Verify(c.Value, message, in.sigs.At(i)) {
				return c.ID, nil
			}
		}
	}
	if tried == 0 {
		return "", Reject(ReasonNoCredentials, "no %s is configured for this route", v.noun)
	}
	return "", Reject(ReasonBadSignature, "no signature in %s verifies", v.reader.r.SignatureHeader)
}

// PerTenant reports whether the verifier's credentials are per tenant
// (see [TenantScoped]).
func (v *SignatureVerifier) PerTenant() bool { return PerTenant(v.creds) }

// Format prints the verifier's type only, whatever the verb.
func (v *SignatureVerifier) Format(f fmt.State, _ rune) {
	_, _ = io.WriteString(f, "webhooks.SignatureVerifier{…}")
}
