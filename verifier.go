package webhooks

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Route names where a webhook was delivered: the provider key a verifier is
// registered under, and an optional tenant (for multi-tenant hosts where each
// tenant has its own secrets).
type Route struct {
	Provider string
	Tenant   string
}

// Request is an inbound webhook as the verifier sees it: the raw body bytes
// exactly as received (signatures are computed over them) and the headers.
type Request struct {
	Method string
	// URL is the request URL as the server received it. Verifiers that sign
	// the public URL (Twilio) must be given the public base separately.
	URL    *url.URL
	Header http.Header
	// Body is the raw request body. Verifiers must not modify it.
	Body []byte
	// RemoteAddr is the network address of the sender, for logging.
	RemoteAddr string
}

// Verification is the normalized, trusted metadata a verifier extracts from a
// request whose signature it accepted.
type Verification struct {
	// EventID identifies the event for deduplication (the inbox key is
	// provider, tenant and EventID). Required.
	EventID string
	// EventType is the provider's name for the kind of event, as the provider
	// names it (for example "push" or "invoice.paid"). May be empty.
	EventType string
	// OccurredAt is when the provider says the event happened or was signed;
	// zero when the provider gives no such time.
	OccurredAt time.Time
	// PayloadSHA256 is the idempotency digest: a redelivery of EventID must
	// carry the same digest, or it is a conflict. When zero, the gateway uses
	// the SHA-256 of the raw body. A verifier may supply a semantic digest
	// (for example of the body without a per-delivery field).
	PayloadSHA256 [sha256.Size]byte
	// KeyID names the secret that matched (never the secret itself), so
	// operators can see when an old secret stops being used.
	KeyID string
	// ReplayKey is the key registered with the ReplayStore. When empty the
	// gateway uses EventID.
	ReplayKey string
	// Handshake, when not nil, is a provider challenge (Slack's
	// url_verification, Zoom's endpoint.url_validation, Discord's PING) that
	// the verifier answered itself: the gateway writes this response and
	// stores nothing. A verifier sets it only after the request verified,
	// wherever the provider signs its challenges. EventID may then be empty.
	Handshake *HandshakeResponse
}

// HandshakeResponse is the answer to a provider's challenge request.
type HandshakeResponse struct {
	// StatusCode defaults to 200.
	StatusCode int
	// Header is added to the response; set Content-Type here.
	Header http.Header
	Body   []byte
}

// Verifier checks that a request really comes from the provider and returns
// its normalized metadata.
//
// A rejection must be reported as a *VerificationError (see Reason); the
// gateway answers 401 with the reason code. Any other error means the
// verifier could not decide (for example its credential store is down); the
// gateway answers 503 so the provider retries. Implementations must be safe
// for concurrent use and must never put secret material into errors.
type Verifier interface {
	Verify(ctx context.Context, route Route, req *Request) (Verification, error)
}

// VerifierFunc adapts a function to the Verifier interface.
type VerifierFunc func(ctx context.Context, route Route, req *Request) (Verification, error)

// Verify calls f(ctx, route, req).
func (f VerifierFunc) Verify(ctx context.Context, route Route, req *Request) (Verification, error) {
	return f(ctx, route, req)
}

// Reason is a stable, machine-readable code for why a request was rejected.
// Reason codes are safe to show to the sender: they reveal nothing secret.
type Reason string

// Reason codes used by the verifiers in this package. Custom verifiers may
// define their own.
const (
	ReasonMissingSignature  Reason = "missing_signature"
	ReasonBadSignature      Reason = "bad_signature"
	ReasonMalformedHeader   Reason = "malformed_header"
	ReasonMissingTimestamp  Reason = "missing_timestamp"
	ReasonMalformedTime     Reason = "malformed_timestamp"
	ReasonTimestampExpired  Reason = "timestamp_expired"
	ReasonMissingEventID    Reason = "missing_event_id"
	ReasonMissingEventType  Reason = "missing_event_type"
	ReasonMalformedPayload  Reason = "malformed_payload"
	ReasonEmptyBody         Reason = "empty_body"
	ReasonNoCredentials     Reason = "no_credentials"
	ReasonUnsupportedMethod Reason = "unsupported_method"
)

// VerificationError reports why a request was rejected. Its message contains
// the reason code and, optionally, a detail that must not contain secrets.
//
// errors.Is(err, ErrBadSignature) and the other Err* values below match any
// *VerificationError with the same Reason.
type VerificationError struct {
	Reason Reason
	// Detail is a short human explanation for logs. It never contains secret
	// material or signature values.
	Detail string
}

// Error returns the reason code and the detail.
func (e *VerificationError) Error() string {
	if e.Detail == "" {
		return "webhooks: verification failed: " + string(e.Reason)
	}
	return "webhooks: verification failed: " + string(e.Reason) + ": " + e.Detail
}

// Is reports whether target is a *VerificationError with the same Reason.
func (e *VerificationError) Is(target error) bool {
	t, ok := target.(*VerificationError)
	return ok && t.Reason == e.Reason
}

// Reject returns a *VerificationError with the reason and a detail formatted
// as with fmt.Sprintf. The detail must not contain secrets.
func Reject(reason Reason, format string, args ...any) *VerificationError {
	detail := format
	if len(args) > 0 {
		detail = fmt.Sprintf(format, args...)
	}
	return &VerificationError{Reason: reason, Detail: detail}
}

// Verification failures, for use with errors.Is.
var (
	ErrMissingSignature = &VerificationError{Reason: ReasonMissingSignature}
	ErrBadSignature     = &VerificationError{Reason: ReasonBadSignature}
	ErrMalformedHeader  = &VerificationError{Reason: ReasonMalformedHeader}
	ErrMissingTimestamp = &VerificationError{Reason: ReasonMissingTimestamp}
	ErrMalformedTime    = &VerificationError{Reason: ReasonMalformedTime}
	ErrTimestampExpired = &VerificationError{Reason: ReasonTimestampExpired}
	ErrMissingEventID   = &VerificationError{Reason: ReasonMissingEventID}
	ErrMissingEventType = &VerificationError{Reason: ReasonMissingEventType}
	ErrMalformedPayload = &VerificationError{Reason: ReasonMalformedPayload}
	ErrEmptyBody        = &VerificationError{Reason: ReasonEmptyBody}
	ErrNoCredentials    = &VerificationError{Reason: ReasonNoCredentials}
)

// Secret is one signing secret. ID names it in logs and on stored items; Value
// is never printed: Secret's String, GoString and LogValue methods redact it.
type Secret struct {
	ID    string
	Value []byte
}

// String returns the secret's ID and a redaction marker, never the value.
func (s Secret) String() string { return "Secret{ID:" + strconv.Quote(s.ID) + ", Value:REDACTED}" }

// GoString is like String, so %#v does not print the value either.
func (s Secret) GoString() string { return s.String() }

// Format prints the secret as String does, whatever the verb (%x and %d
// included), so the value never reaches output through fmt.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, s.String()) }

// LogValue keeps the value out of slog output.
func (s Secret) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", s.ID), slog.String("value", "REDACTED"))
}

// CredentialResolver supplies the secrets that may verify requests for a
// route. Several secrets may be valid at once (rotation): any of them
// verifies. Returning no secrets rejects the request with ReasonNoCredentials;
// returning an error makes the gateway answer 503.
type CredentialResolver interface {
	Secrets(ctx context.Context, route Route) ([]Secret, error)
}

// CredentialResolverFunc adapts a function to the CredentialResolver interface.
type CredentialResolverFunc func(ctx context.Context, route Route) ([]Secret, error)

// Secrets calls f(ctx, route).
func (f CredentialResolverFunc) Secrets(ctx context.Context, route Route) ([]Secret, error) {
	return f(ctx, route)
}

// StaticSecrets returns a CredentialResolver that gives the same secrets for
// every provider and tenant. Several secrets allow rotation. Each secret's ID
// is its position, "static:0", "static:1", …. The result is a
// StaticCredentials, so verifier constructors can refuse an empty list, an
// empty secret or one that is only the provider's prefix before any request
// arrives.
func StaticSecrets(secrets ...string) CredentialResolver {
	list := make(StaticCredentials, 0, len(secrets))
	for i, s := range secrets {
		list = append(list, Secret{ID: "static:" + strconv.Itoa(i), Value: []byte(s)})
	}
	return list
}

// StaticCredentials is a fixed list of secrets used for every route.
type StaticCredentials []Secret

// Secrets implements CredentialResolver.
func (c StaticCredentials) Secrets(context.Context, Route) ([]Secret, error) { return c, nil }

// Format prints the secrets' IDs only, whatever the verb.
func (c StaticCredentials) Format(f fmt.State, _ rune) {
	ids := make([]string, len(c))
	for i, s := range c {
		ids[i] = strconv.Quote(s.ID)
	}
	_, _ = io.WriteString(f, "StaticCredentials{"+strings.Join(ids, ", ")+"}")
}

// formatVerifier prints a verifier as its type and provider. Verifiers keep
// their CredentialResolver in an unexported field, which fmt would print
// without calling any redacting method; every verifier that holds secrets
// has a Format method calling this instead.
func formatVerifier(f fmt.State, typ, provider string) {
	_, _ = io.WriteString(f, "webhooks."+typ+"{provider: "+strconv.Quote(provider)+"}")
}

// Clock tells the current time. Every time the library stores or compares
// comes from a Clock, so tests can drive time without sleeping.
type Clock interface {
	Now() time.Time
}

// ClockFunc adapts a function to the Clock interface.
type ClockFunc func() time.Time

// Now calls f().
func (f ClockFunc) Now() time.Time { return f() }
