package providers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/sigsyntax"
)

// BasicAuthOptions configures a BasicAuthVerifier, for providers that
// authenticate with HTTP Basic credentials (RFC 7617) in the Authorization
// header and sign nothing. Each secret's Value is "user:password"; the user
// and the password are compared together, in constant time.
//
// The zero value of each field is its documented default; an event ID
// source is required. The same caveat as for TokenOptions applies: the
// credentials cover neither the body nor a time.
type BasicAuthOptions struct {
	// Event is where the event ID and type are, read after the
	// credentials matched. An ID source is required.
	Event webhooks.EventSource

	// AllowEmptyBody accepts requests with an empty body. Defaults to false.
	AllowEmptyBody bool
}

// BasicAuthVerifier accepts requests whose Authorization header holds Basic
// credentials equal to one of the route's secrets ("user:password"). It is
// safe for concurrent use. The checks run in the order TokenVerifier's do.
type BasicAuthVerifier struct {
	opts  BasicAuthOptions
	creds webhooks.CredentialResolver
}

// NewBasicAuthVerifier returns a verifier that compares Basic credentials
// with the secrets from creds, each "user:password"; several secrets allow
// rotation. A secret without a colon is a configuration error: the
// constructor refuses one from StaticSecrets or TenantSecrets, and Verify
// reports one from another resolver as an error (naming its ID only), not a
// rejection.
func NewBasicAuthVerifier(opts BasicAuthOptions, creds webhooks.CredentialResolver) (*BasicAuthVerifier, error) {
	err := optionsError("basic auth", opts.Event.Validate(), webhooks.CheckCredentials(creds, "secret", func(value []byte) error {
		if bytes.IndexByte(value, ':') < 0 {
			return errors.New("it is not \"user:password\"")
		}
		return nil
	}))
	if err != nil {
		return nil, err
	}
	return &BasicAuthVerifier{opts: opts, creds: creds}, nil
}

// SecretHeaders implements webhooks.SecretHeaderVerifier: "Authorization",
// which carries the credentials.
func (v *BasicAuthVerifier) SecretHeaders() []string { return []string{"Authorization"} }

// Verify implements webhooks.Verifier. Rejections never echo the
// credentials.
func (v *BasicAuthVerifier) Verify(ctx context.Context, route webhooks.Route, req *webhooks.Request) (webhooks.Verification, error) {
	if req == nil {
		return webhooks.Verification{}, errors.New("webhooks: basic auth verifier: nil request")
	}
	value, rej := webhooks.SingleHeader(req.Header, "Authorization", webhooks.ReasonMissingSignature)
	if rej != nil {
		return webhooks.Verification{}, rej
	}
	credential, rej := parseBasicAuth(value)
	if rej != nil {
		return webhooks.Verification{}, rej
	}
	return verifySharedSecret(ctx, sharedSecretCheck{
		kind:         "basic auth",
		creds:        v.creds,
		event:        v.opts.Event,
		allowEmpty:   v.opts.AllowEmptyBody,
		credential:   credential,
		where:        "Authorization",
		userPassword: true,
	}, route, req)
}

// parseBasicAuth returns the decoded "user:password" of a Basic
// Authorization value. It never panics, and its rejections never contain
// the value.
func parseBasicAuth(value string) ([]byte, *webhooks.VerificationError) {
	scheme, rest, _ := strings.Cut(strings.TrimSpace(value), " ")
	if !strings.EqualFold(scheme, "Basic") {
		return nil, webhooks.Reject(webhooks.ReasonMalformedHeader, "header Authorization does not use the Basic scheme")
	}
	rest = strings.Trim(rest, " \t")
	if rest == "" {
		return nil, webhooks.Reject(webhooks.ReasonMissingSignature, "header Authorization has no Basic credentials")
	}
	credential, err := sigsyntax.DecodeBase64(rest)
	if err != nil {
		return nil, webhooks.Reject(webhooks.ReasonMalformedHeader, "header Authorization does not hold base64 Basic credentials")
	}
	if bytes.IndexByte(credential, ':') < 0 {
		return nil, webhooks.Reject(webhooks.ReasonMalformedHeader, "the Basic credentials in header Authorization have no colon between user and password")
	}
	return credential, nil
}

// Format prints the verifier's type only, whatever the verb: the secrets it
// holds never reach output through fmt or slog.
func (v *BasicAuthVerifier) Format(f fmt.State, _ rune) { formatVerifier(f, "BasicAuthVerifier") }
