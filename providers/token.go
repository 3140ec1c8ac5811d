package providers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/sigsyntax"
)

// TokenOptions configures a TokenVerifier, for providers that sign nothing
// and instead send a shared secret with every request, in a header of their
// own (GitLab's X-Gitlab-Token) or as "Authorization: Bearer <token>".
//
// The zero value of each field is its documented default; Header and an
// event ID source are required. NewTokenVerifier reports every problem.
//
// A shared token proves only that the sender knows the token: it covers
// neither the body nor a time, so anyone who sees one request (a proxy log,
// a misconfigured TLS terminator) can send any body with it, as often as
// they like. Prefer a provider's signing scheme wherever it has one.
type TokenOptions struct {
	// Header is the name of the header that carries the token, for example
	// "X-Gitlab-Token", or "Authorization" with Scheme "Bearer". Required.
	// The header is sent once; surrounding blanks are ignored.
	Header string

	// Scheme is an authentication scheme written before the token, for
	// example "Bearer" for "Authorization: Bearer <token>". It is matched
	// without regard to case and must be followed by blanks and the token.
	// Defaults to none: the whole header value is the token.
	Scheme string

	// Event is where the event ID and type are, read after the token
	// matched. An ID source is required.
	Event webhooks.EventSource

	// AllowEmptyBody accepts requests with an empty body. Defaults to
	// false: an empty body is rejected with ReasonEmptyBody.
	AllowEmptyBody bool
}

// BearerTokenOptions returns TokenOptions for "Authorization: Bearer
// <token>". Set an event ID source before use, for example Event.IDHeader
// "Idempotency-Key" or Event.IDPath "id".
func BearerTokenOptions() TokenOptions {
	return TokenOptions{Header: "Authorization", Scheme: "Bearer"}
}

// TokenVerifier accepts requests that carry one of the route's secrets as a
// token, as configured by TokenOptions. It is safe for concurrent use.
//
// Verify checks the token header's syntax and the body's presence, asks the
// CredentialResolver for secrets, compares the token with each in constant
// time (through SHA-256 digests, so not even the token's length leaks), and
// only then reads the event ID and type. KeyID is the matching secret's ID.
type TokenVerifier struct {
	opts  TokenOptions
	creds webhooks.CredentialResolver
}

// NewTokenVerifier returns a verifier that compares the token in
// opts.Header with the secrets from creds; several secrets allow rotation.
// It returns an error describing every invalid option, and every empty
// static secret (StaticSecrets, TenantSecrets).
func NewTokenVerifier(opts TokenOptions, creds webhooks.CredentialResolver) (*TokenVerifier, error) {
	var p problemList
	switch {
	case opts.Header == "":
		p.bad("Header is empty: set the name of the header that carries the token, for example \"X-Gitlab-Token\"")
	case !sigsyntax.IsHeaderName(opts.Header):
		p.bad("Header %q is not a valid header name", opts.Header)
	}
	if opts.Scheme != "" && !sigsyntax.IsHeaderName(opts.Scheme) {
		p.bad("Scheme %q is not a single token such as \"Bearer\"", opts.Scheme)
	}
	p = append(p, opts.Event.Validate(), webhooks.CheckCredentials(creds, "secret", nil))
	if err := optionsError("token", p...); err != nil {
		return nil, err
	}
	return &TokenVerifier{opts: opts, creds: creds}, nil
}

// SecretHeaders implements webhooks.SecretHeaderVerifier: the header that
// carries the token, which the Receiver therefore never stores with items.
func (v *TokenVerifier) SecretHeaders() []string {
	return []string{http.CanonicalHeaderKey(v.opts.Header)}
}

// Verify implements webhooks.Verifier. Rejections are *VerificationError
// values whose details name headers but never echo the token.
func (v *TokenVerifier) Verify(ctx context.Context, route webhooks.Route, req *webhooks.Request) (webhooks.Verification, error) {
	if req == nil {
		return webhooks.Verification{}, errors.New("webhooks: token verifier: nil request")
	}
	c, rej := v.check(req)
	if rej != nil {
		return webhooks.Verification{}, rej
	}
	return verifySharedSecret(ctx, c, route, req)
}

// authenticate checks the token alone, for a provider's challenge that
// carries the token but no event (Okta's one-time verification GET).
func (v *TokenVerifier) authenticate(ctx context.Context, route webhooks.Route, req *webhooks.Request) error {
	c, rej := v.check(req)
	if rej != nil {
		return rej
	}
	_, err := c.match(ctx, route)
	return err
}

// check reads the token from the request.
func (v *TokenVerifier) check(req *webhooks.Request) (sharedSecretCheck, *webhooks.VerificationError) {
	token, rej := webhooks.SingleHeader(req.Header, v.opts.Header, webhooks.ReasonMissingSignature)
	if rej != nil {
		return sharedSecretCheck{}, rej
	}
	if v.opts.Scheme != "" {
		if token, rej = cutScheme(token, v.opts.Scheme, v.opts.Header); rej != nil {
			return sharedSecretCheck{}, rej
		}
	}
	return sharedSecretCheck{
		kind:       "token",
		creds:      v.creds,
		event:      v.opts.Event,
		allowEmpty: v.opts.AllowEmptyBody,
		credential: []byte(token),
		where:      v.opts.Header,
	}, nil
}

// cutScheme returns the token after an authentication scheme, as in
// "Bearer <token>".
func cutScheme(value, scheme, header string) (string, *webhooks.VerificationError) {
	i := strings.IndexAny(value, " \t")
	if i < 0 {
		if strings.EqualFold(value, scheme) {
			return "", webhooks.Reject(webhooks.ReasonMissingSignature, "header %s has no token after %s", header, scheme)
		}
		return "", webhooks.Reject(webhooks.ReasonMalformedHeader, "header %s does not use the %s scheme", header, scheme)
	}
	if !strings.EqualFold(value[:i], scheme) {
		return "", webhooks.Reject(webhooks.ReasonMalformedHeader, "header %s does not use the %s scheme", header, scheme)
	}
	return strings.TrimLeft(value[i:], " \t"), nil
}

// sharedSecretCheck is one request's comparison of a credential the sender
// presented with the route's secrets.
type sharedSecretCheck struct {
	kind       string // "token" or "basic auth", for messages
	creds      webhooks.CredentialResolver
	event      webhooks.EventSource
	allowEmpty bool
	credential []byte
	where      string // header name, for messages
	// userPassword makes a secret without a colon a configuration error
	// (Basic credentials are "user:password").
	userPassword bool
}

// verifySharedSecret runs the checks after the credential's syntax: body,
// secrets, constant-time comparison, then metadata.
func verifySharedSecret(ctx context.Context, c sharedSecretCheck, route webhooks.Route, req *webhooks.Request) (webhooks.Verification, error) {
	if len(req.Body) == 0 && !c.allowEmpty {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonEmptyBody, "the request body is empty")
	}
	keyID, err := c.match(ctx, route)
	if err != nil {
		return webhooks.Verification{}, err
	}
	// A shared token authenticates the sender, not the content.
	return c.event.Extract(req, webhooks.Verification{KeyID: keyID}, webhooks.SignedParts{})
}

// match compares the presented credential with the route's secrets in
// constant time and returns the matching secret's ID.
func (c sharedSecretCheck) match(ctx context.Context, route webhooks.Route) (string, error) {
	secrets, err := c.creds.Secrets(ctx, route)
	if err != nil {
		return "", fmt.Errorf("webhooks: %s verifier: resolving secrets: %w", c.kind, err)
	}
	presented := sha256.Sum256(c.credential)
	keyID, matched, tried := "", false, 0
	for _, s := range secrets {
		if len(s.Value) == 0 {
			continue
		}
		if c.userPassword && bytes.IndexByte(s.Value, ':') < 0 {
			return "", fmt.Errorf("webhooks: %s verifier: secret %q is not \"user:password\"", c.kind, s.ID)
		}
		tried++
		want := sha256.Sum256(s.Value)
		if subtle.ConstantTimeCompare(presented[:], want[:]) == 1 && !matched {
			keyID, matched = s.ID, true
		}
	}
	if tried == 0 {
		return "", webhooks.Reject(webhooks.ReasonNoCredentials, "no secret is configured for this route")
	}
	if !matched {
		return "", webhooks.Reject(webhooks.ReasonBadSignature, "the %s in %s matches no secret", c.kind, c.where)
	}
	return keyID, nil
}

// Format prints the verifier's type only, whatever the verb: the secrets it
// holds never reach output through fmt or slog.
func (v *TokenVerifier) Format(f fmt.State, _ rune) { formatVerifier(f, "TokenVerifier") }
