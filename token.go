package webhooks

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"
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

	// EventIDHeader is the name of the header that carries the event ID.
	// At most one of EventIDHeader and EventIDPath may be set, and one of
	// them or EventIDFromBody must be.
	EventIDHeader string

	// EventIDPath is a dotted path to the event ID in the JSON body, with
	// the syntax of HMACOptions.EventIDPath. The body is parsed only after
	// the token matched.
	EventIDPath string

	// EventIDFromBody uses BodySHA256ID(body) as the event ID when no other
	// source is set, or when the configured header or path is absent.
	//
	// Use it only for providers that give no ID at all, and know the
	// trade-off: a redelivery is recognised only if its body is byte for
	// byte the same (a provider that stamps each attempt, with a retry
	// counter or a send time, makes every retry a new event), and two
	// genuinely different events with identical bodies are stored once.
	// Defaults to false.
	EventIDFromBody bool

	// EventTypeHeader is the name of the header that carries the event
	// type. At most one of EventTypeHeader and EventTypePath may be set;
	// with neither, EventType is "". Defaults to none.
	EventTypeHeader string

	// EventTypePath is a dotted path to the event type in the JSON body.
	// Defaults to none.
	EventTypePath string

	// AllowEmptyBody accepts requests with an empty body. Defaults to
	// false: an empty body is rejected with ReasonEmptyBody.
	AllowEmptyBody bool
}

// BearerTokenOptions returns TokenOptions for "Authorization: Bearer
// <token>". Set an event ID source before use, for example EventIDHeader
// "Idempotency-Key" or EventIDPath "id".
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
	provider string
	opts     TokenOptions
	creds    CredentialResolver
	events   eventSource
}

// NewTokenVerifier returns a verifier for the named provider (used in error
// messages) that compares the token in opts.Header with the secrets from
// creds; several secrets allow rotation. It returns an error describing
// every invalid option, and every empty static secret (StaticSecrets).
func NewTokenVerifier(provider string, opts TokenOptions, creds CredentialResolver) (*TokenVerifier, error) {
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	checkProviderAndCreds(bad, provider, creds)
	switch {
	case opts.Header == "":
		bad("Header is empty: set the name of the header that carries the token, for example \"X-Gitlab-Token\"")
	case !isHeaderName(opts.Header):
		bad("Header %q is not a valid header name", opts.Header)
	}
	if opts.Scheme != "" && !isHeaderName(opts.Scheme) {
		bad("Scheme %q is not a single token such as \"Bearer\"", opts.Scheme)
	}
	checkStaticCredentials(creds, "secret", bad, nil)
	events := eventSource{
		idHeader: opts.EventIDHeader, idPath: opts.EventIDPath, idFromBody: opts.EventIDFromBody,
		typeHeader: opts.EventTypeHeader, typePath: opts.EventTypePath,
	}
	events.validate(bad)
	if len(problems) > 0 {
		return nil, fmt.Errorf("webhooks: invalid token options for provider %q: %w", provider, errors.Join(problems...))
	}
	return &TokenVerifier{provider: provider, opts: opts, creds: creds, events: events}, nil
}

// Provider returns the provider name the verifier was created with.
func (v *TokenVerifier) Provider() string { return v.provider }

// SecretHeaders implements SecretHeaderVerifier: the header that carries
// the token, which the Gateway therefore never stores with items.
func (v *TokenVerifier) SecretHeaders() []string { return canonicalHeaders(v.opts.Header) }

// Verify implements Verifier. Rejections are *VerificationError values whose
// details name headers but never echo the token.
func (v *TokenVerifier) Verify(ctx context.Context, route Route, req *Request) (Verification, error) {
	if req == nil {
		return Verification{}, errors.New("webhooks: token verifier: nil request")
	}
	value, rej := singleHeader(req.Header, v.opts.Header, ReasonMissingSignature)
	if rej != nil {
		return Verification{}, rej
	}
	token := value
	if v.opts.Scheme != "" {
		token, rej = cutScheme(value, v.opts.Scheme, v.opts.Header)
		if rej != nil {
			return Verification{}, rej
		}
	}
	return verifySharedSecret(ctx, sharedSecretCheck{
		kind:       "token",
		provider:   v.provider,
		creds:      v.creds,
		events:     v.events,
		allowEmpty: v.opts.AllowEmptyBody,
		credential: []byte(token),
		where:      v.opts.Header,
	}, route, req)
}

// BasicAuthOptions configures a BasicAuthVerifier, for providers that
// authenticate with HTTP Basic credentials (RFC 7617) in the Authorization
// header and sign nothing. Each secret's Value is "user:password"; the user
// and the password are compared together, in constant time.
//
// The zero value of each field is its documented default; an event ID
// source is required. The same caveat as for TokenOptions applies: the
// credentials cover neither the body nor a time.
type BasicAuthOptions struct {
	// EventIDHeader is the name of the header that carries the event ID.
	// At most one of EventIDHeader and EventIDPath may be set, and one of
	// them or EventIDFromBody must be.
	EventIDHeader string

	// EventIDPath is a dotted path to the event ID in the JSON body.
	EventIDPath string

	// EventIDFromBody uses BodySHA256ID(body) as the event ID when no other
	// source is set or the configured one is absent; see
	// TokenOptions.EventIDFromBody for the trade-off. Defaults to false.
	EventIDFromBody bool

	// EventTypeHeader is the name of the header that carries the event
	// type. Defaults to none.
	EventTypeHeader string

	// EventTypePath is a dotted path to the event type in the JSON body.
	// Defaults to none.
	EventTypePath string

	// AllowEmptyBody accepts requests with an empty body. Defaults to false.
	AllowEmptyBody bool
}

// BasicAuthVerifier accepts requests whose Authorization header holds Basic
// credentials equal to one of the route's secrets ("user:password"). It is
// safe for concurrent use. The checks run in the order TokenVerifier's do.
type BasicAuthVerifier struct {
	provider string
	opts     BasicAuthOptions
	creds    CredentialResolver
	events   eventSource
}

// NewBasicAuthVerifier returns a verifier for the named provider that
// compares Basic credentials with the secrets from creds, each
// "user:password"; several secrets allow rotation. A secret without a colon
// is a configuration error: the constructor refuses one from StaticSecrets,
// and Verify reports one from another resolver as an error (naming its ID
// only), not a rejection.
func NewBasicAuthVerifier(provider string, opts BasicAuthOptions, creds CredentialResolver) (*BasicAuthVerifier, error) {
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	checkProviderAndCreds(bad, provider, creds)
	checkStaticCredentials(creds, "secret", bad, func(value []byte) error {
		if bytes.IndexByte(value, ':') < 0 {
			return errors.New("it is not \"user:password\"")
		}
		return nil
	})
	events := eventSource{
		idHeader: opts.EventIDHeader, idPath: opts.EventIDPath, idFromBody: opts.EventIDFromBody,
		typeHeader: opts.EventTypeHeader, typePath: opts.EventTypePath,
	}
	events.validate(bad)
	if len(problems) > 0 {
		return nil, fmt.Errorf("webhooks: invalid basic auth options for provider %q: %w", provider, errors.Join(problems...))
	}
	return &BasicAuthVerifier{provider: provider, opts: opts, creds: creds, events: events}, nil
}

// Provider returns the provider name the verifier was created with.
func (v *BasicAuthVerifier) Provider() string { return v.provider }

// SecretHeaders implements SecretHeaderVerifier: "Authorization", which
// carries the credentials.
func (v *BasicAuthVerifier) SecretHeaders() []string { return []string{"Authorization"} }

// Verify implements Verifier. Rejections never echo the credentials.
func (v *BasicAuthVerifier) Verify(ctx context.Context, route Route, req *Request) (Verification, error) {
	if req == nil {
		return Verification{}, errors.New("webhooks: basic auth verifier: nil request")
	}
	value, rej := singleHeader(req.Header, "Authorization", ReasonMissingSignature)
	if rej != nil {
		return Verification{}, rej
	}
	credential, rej := parseBasicAuth(value)
	if rej != nil {
		return Verification{}, rej
	}
	return verifySharedSecret(ctx, sharedSecretCheck{
		kind:         "basic auth",
		provider:     v.provider,
		creds:        v.creds,
		events:       v.events,
		allowEmpty:   v.opts.AllowEmptyBody,
		credential:   credential,
		where:        "Authorization",
		userPassword: true,
	}, route, req)
}

// parseBasicAuth returns the decoded "user:password" of a Basic
// Authorization value. It never panics, and its rejections never contain
// the value.
func parseBasicAuth(value string) ([]byte, *VerificationError) {
	scheme, rest, _ := strings.Cut(strings.TrimSpace(value), " ")
	if !strings.EqualFold(scheme, "Basic") {
		return nil, Reject(ReasonMalformedHeader, "header Authorization does not use the Basic scheme")
	}
	rest = strings.Trim(rest, " \t")
	if rest == "" {
		return nil, Reject(ReasonMissingSignature, "header Authorization has no Basic credentials")
	}
	credential, err := decodeBase64(rest)
	if err != nil {
		return nil, Reject(ReasonMalformedHeader, "header Authorization does not hold base64 Basic credentials")
	}
	if bytes.IndexByte(credential, ':') < 0 {
		return nil, Reject(ReasonMalformedHeader, "the Basic credentials in header Authorization have no colon between user and password")
	}
	return credential, nil
}

// cutScheme returns the token after an authentication scheme, as in
// "Bearer <token>".
func cutScheme(value, scheme, header string) (string, *VerificationError) {
	i := strings.IndexAny(value, " \t")
	if i < 0 {
		if strings.EqualFold(value, scheme) {
			return "", Reject(ReasonMissingSignature, "header %s has no token after %s", header, scheme)
		}
		return "", Reject(ReasonMalformedHeader, "header %s does not use the %s scheme", header, scheme)
	}
	if !strings.EqualFold(value[:i], scheme) {
		return "", Reject(ReasonMalformedHeader, "header %s does not use the %s scheme", header, scheme)
	}
	return strings.TrimLeft(value[i:], " \t"), nil
}

// checkProviderAndCreds reports the problems common to every constructor.
func checkProviderAndCreds(bad func(string, ...any), provider string, creds CredentialResolver) {
	if provider == "" {
		bad("provider is empty: pass the provider key the verifier is registered under")
	}
	if creds == nil {
		bad("creds is nil: pass a CredentialResolver, for example StaticSecrets(secret)")
	}
}

// sharedSecretCheck is one request's comparison of a credential the sender
// presented with the route's secrets.
type sharedSecretCheck struct {
	kind       string // "token" or "basic auth", for messages
	provider   string
	creds      CredentialResolver
	events     eventSource
	allowEmpty bool
	credential []byte
	where      string // header name, for messages
	// userPassword makes a secret without a colon a configuration error
	// (Basic credentials are "user:password").
	userPassword bool
}

// verifySharedSecret runs the checks after the credential's syntax: body,
// secrets, constant-time comparison, then metadata.
func verifySharedSecret(ctx context.Context, c sharedSecretCheck, route Route, req *Request) (Verification, error) {
	if len(req.Body) == 0 && !c.allowEmpty {
		return Verification{}, Reject(ReasonEmptyBody, "the request body is empty")
	}
	secrets, err := c.creds.Secrets(ctx, route)
	if err != nil {
		return Verification{}, fmt.Errorf("webhooks: %s verifier %q: resolving secrets: %w", c.kind, c.provider, err)
	}
	presented := sha256.Sum256(c.credential)
	keyID, matched, tried := "", false, 0
	for _, s := range secrets {
		if len(s.Value) == 0 {
			continue
		}
		if c.userPassword && bytes.IndexByte(s.Value, ':') < 0 {
			return Verification{}, fmt.Errorf("webhooks: %s verifier %q: secret %q is not \"user:password\"", c.kind, c.provider, s.ID)
		}
		tried++
		want := sha256.Sum256(s.Value)
		if subtle.ConstantTimeCompare(presented[:], want[:]) == 1 && !matched {
			keyID, matched = s.ID, true
		}
	}
	if tried == 0 {
		return Verification{}, Reject(ReasonNoCredentials, "no secret is configured for this route")
	}
	if !matched {
		return Verification{}, Reject(ReasonBadSignature, "the %s in %s matches no secret", c.kind, c.where)
	}
	return verifiedMetadata(c.events, req, keyID)
}

// checkStaticCredentials refuses, at construction, static credentials
// (StaticSecrets) that could never verify anything: none at all, empty
// ones, and ones valid rejects. Problems name the secret by ID only, and
// valid's error must not contain the value. Other resolvers are checked on
// each request instead.
func checkStaticCredentials(creds CredentialResolver, what string, bad func(string, ...any), valid func(value []byte) error) {
	static, ok := creds.(StaticCredentials)
	if !ok {
		return
	}
	if len(static) == 0 {
		bad("StaticSecrets has no %ss: pass at least one", what)
	}
	for _, s := range static {
		trimmed := strings.TrimSpace(string(s.Value))
		switch {
		case trimmed == "":
			bad("%s %s is empty: set it (is its environment variable missing?)", what, s.ID)
		case trimmed != string(s.Value):
			bad("%s %s starts or ends with white space: remove it (a copy-paste slip?)", what, s.ID)
		case valid != nil:
			if err := valid(s.Value); err != nil {
				bad("%s %s is unusable: %v", what, s.ID, err)
			}
		}
	}
}

// canonicalHeaders returns header names in canonical form.
func canonicalHeaders(names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = http.CanonicalHeaderKey(n)
	}
	return out
}

// Format prints the verifier's type and provider only, whatever the verb:
// the secrets it holds never reach output through fmt or slog.
func (v *TokenVerifier) Format(f fmt.State, _ rune) { formatVerifier(f, "TokenVerifier", v.provider) }

// Format prints the verifier's type and provider only, whatever the verb:
// the secrets it holds never reach output through fmt or slog.
func (v *BasicAuthVerifier) Format(f fmt.State, _ rune) {
	formatVerifier(f, "BasicAuthVerifier", v.provider)
}
