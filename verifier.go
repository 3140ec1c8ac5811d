package webhooks

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/url"
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
	// URL is the request URL as the server received it: for a request
	// served by net/http, the path and query of the request line, without
	// scheme or host. Verifiers that sign the public URL (Twilio) must be
	// given the public base separately.
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
	// carry the same digest, or it is a conflict. Verifiers leave it zero,
	// and the Receiver uses the SHA-256 of the payload it stores (Payload,
	// or the raw body when Payload is nil), computed once the request
	// verified (so verification alone, as VerifyHTTPRequest does it, does
	// not hash the body a second time); a verifier may supply a semantic
	// digest instead (for example of the payload without a per-delivery
	// field), which must not depend on a credential either.
	PayloadSHA256 [sha256.Size]byte
	// Payload, when not nil, is what the Receiver stores instead of the
	// raw body: the body with the credentials it carries redacted (Figma's
	// passcode, Microsoft Graph's clientState, an SNS or Mailgun signature),
	// still valid JSON of the same shape, each credential's value replaced
	// by a fixed marker (package providers writes "[redacted]"). Handlers
	// then see Payload, and the digest (see PayloadSHA256) is of it, so a
	// redelivery signed again or under a rotated credential is the same
	// event. A verifier sets it only after the request verified, in memory
	// of its own: Request.Body is only lent to it and is never written to.
	// Nil stores the raw body, for schemes whose credentials travel in
	// headers only (see SecretHeaderVerifier).
	Payload []byte
	// KeyID names the secret that matched (never the secret itself), so
	// operators can see when an old secret stops being used.
	KeyID string
	// Unsigned marks EventID, EventType and the body when the signature
	// does not cover them (read from a header the scheme does not sign,
	// or the scheme signs nothing but authenticates the sender), so that
	// whoever holds one delivery can send its body again under another ID
	// or type. The Receiver then keeps such a field from changing what a
	// signed body means: see [UnsignedFields]. The zero value says all
	// are signed; the verifiers of this module set it from what their
	// scheme signs.
	Unsigned UnsignedFields
	// ReplayKey, when set and other than EventID, is a key of the
	// request's own (a nonce, a delivery ID the provider never reuses)
	// that the Receiver registers with its ReplayStore (see
	// WithReplayStore), refusing a reuse with other content (409). Event
	// IDs need no replay key: the inbox deduplicates them.
	ReplayKey string
	// APIVersion is the provider's payload version when the request
	// carries it (Stripe's api_version, Shopify's X-Shopify-API-Version);
	// it is stored with the item, for operators to filter by.
	APIVersion string
	// Handshake, when not nil, is a provider challenge (Slack's
	// url_verification, Zoom's endpoint.url_validation, Discord's PING, a
	// GET verification from Meta or Dropbox) that the verifier answered
	// itself: the Receiver writes this response and stores nothing. A
	// verifier sets it only after the request verified, wherever the
	// provider signs or otherwise authenticates its challenges. EventID may
	// then be empty.
	Handshake *Response
	// Ordering is the event's ordering key and version, read from the
	// signed content (see EventSource.Order); the Receiver stores
	// it with the event, for ordered handlers. The zero value is no key.
	Ordering Ordering
	// Answer, when not nil, is what the provider expects in reply to an
	// accepted or duplicate delivery (a fixed body, another status); the
	// Receiver writes it instead of its own small JSON body.
	Answer *Response
}

// UnsignedFields marks the fields of a [Verification] that the request's
// signature does not cover. For such a field the Receiver holds:
//
//   - EventID: a delivery that reuses a stored event ID with another
//     payload is stored too, under the ID followed by "#sha256:" and the
//     first 16 bytes of its payload digest in hex, and both are flagged
//     (the first item's conflict count; the second's key). A captured
//     body sent first under the ID of a later genuine delivery so cannot
//     lock that delivery out (with a signed ID, the conflict is answered
//     409 and the delivery quarantined).
//   - EventType, of a signed body: a body already received under one
//     event type is refused under another (409), for as long as the
//     Receiver's ReplayStore keeps the body's registration (see
//     WithReplayStore and WithReplayTTL), so a captured body cannot be
//     handled as another kind of event. Where the body is not signed
//     either (Body), a captured request already lets its holder send any
//     body under any type, and there is no signed body to guard.
//   - Body: the signature does not cover the body, as with a shared token
//     (the scheme authenticates the sender, not the content).
type UnsignedFields struct {
	EventID   bool
	EventType bool
	Body      bool
}

// guardsType reports whether the Receiver registers the body's type: a
// signed body whose type is not signed.
func (u UnsignedFields) guardsType() bool { return u.EventType && !u.Body }

// ReplayGuarded is implemented by verifiers that say whether the
// verifications they make need the Receiver's ReplayStore: a replay key of
// their own (Verification.ReplayKey), or an event type the signature does
// not cover over a signed body (UnsignedFields). NewReceiver refuses to
// build without a ReplayStore (WithReplayStore) when a verifier the
// resolver lists needs one. The verifiers of this module that may need
// one implement it; a Receiver without a ReplayStore refuses (500) a
// delivery whose verification needs one, from any verifier.
type ReplayGuarded interface {
	NeedsReplayStore() bool
}

// NeedsReplayStore reports whether v says that its verifications need a
// ReplayStore ([ReplayGuarded]).
func NeedsReplayStore(v Verifier) bool {
	rg, ok := v.(ReplayGuarded)
	return ok && rg.NeedsReplayStore()
}

// Response is an HTTP answer a verifier gives for its provider: to a
// challenge (Verification.Handshake) or to a delivery
// (Verification.Answer).
type Response struct {
	// StatusCode defaults to 200.
	StatusCode int
	// Header is added to the response; set Content-Type here.
	Header http.Header
	Body   []byte
}

// GETVerifier is an optional Verifier capability for providers that verify
// an endpoint with a GET request (Meta's hub.challenge, X's CRC check,
// Dropbox's challenge): when AcceptsGET reports true, a Receiver hands GET
// requests for the provider to Verify, which must answer them with a
// Handshake (after authenticating the challenge wherever the provider
// allows it). GET requests for other providers are answered 405.
type GETVerifier interface {
	AcceptsGET() bool
}

// GETDeliverer is an optional Verifier capability for providers that may
// deliver events with GET requests (Twilio, for a webhook configured for
// GET: the signature covers the URL with its query, and there is no
// body): when DeliversByGET reports true, a Receiver hands GET requests
// for the provider to Verify and stores the event a verification of one
// yields, as for a POST; a Handshake is answered as ever. GET requests of
// a provider whose verifier is neither a GETDeliverer nor a GETVerifier
// are answered 405, and a GETVerifier that is not a GETDeliverer may only
// answer them with a Handshake.
type GETDeliverer interface {
	DeliversByGET() bool
}

// deliversByGET reports whether v says its provider delivers by GET.
func deliversByGET(v Verifier) bool {
	d, ok := v.(GETDeliverer)
	return ok && d.DeliversByGET()
}

// TenantScoped is implemented by credentials whose secrets depend on the
// route's tenant, each tenant holding its own (TenantSecrets), and by
// verifiers built on them. A Receiver serves a tenant path segment
// (POST /webhooks/{provider}/{tenant}) only for a provider whose verifier
// reports PerTenant, or that the host names in WithTenants: with secrets
// shared by every tenant, the segment is chosen by whoever sends the
// request, and a delivery verified for one tenant would be stored again
// under any other.
type TenantScoped interface {
	PerTenant() bool
}

// PerTenant reports whether x (a verifier or a CredentialResolver) says
// that its secrets depend on the route's tenant ([TenantScoped]).
// Verifiers that hold a CredentialResolver report what it reports.
func PerTenant(x any) bool {
	ts, ok := x.(TenantScoped)
	return ok && ts.PerTenant()
}

// Verifier checks that a request really comes from the provider and returns
// its normalized metadata.
//
// A rejection must be reported as a *VerificationError (see Reject); the
// Receiver answers 401 with the reason code. Any other error means the
// verifier could not decide (for example its credential store is down); the
// Receiver answers 503 so the provider retries. Implementations must be safe
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
//
// A Reason is an error only so that errors.Is(err, ReasonBadSignature)
// reads naturally: every *VerificationError matches its Reason. A verifier
// rejects with a *VerificationError (see Reject), never a bare Reason.
type Reason string

// Reason codes used by the verifiers in this module. Custom verifiers may
// define their own.
const (
	ReasonMissingSignature Reason = "missing_signature"
	ReasonBadSignature     Reason = "bad_signature"
	ReasonMalformedHeader  Reason = "malformed_header"
	ReasonMissingTimestamp Reason = "missing_timestamp"
	ReasonMalformedTime    Reason = "malformed_timestamp"
	ReasonTimestampExpired Reason = "timestamp_expired"
	ReasonMissingEventID   Reason = "missing_event_id"
	ReasonMissingEventType Reason = "missing_event_type"
	ReasonMalformedPayload Reason = "malformed_payload"
	ReasonEmptyBody        Reason = "empty_body"
	ReasonNoCredentials    Reason = "no_credentials"
)

// Error returns "webhooks: verification failed: " and the code.
func (r Reason) Error() string { return "webhooks: verification failed: " + string(r) }

// HookError is what a verifier returns for an error from a hook the host
// configured (a SignedContentFunc, a HandshakeFunc, an IDFunc): a
// *VerificationError as it is, the rejection; any other error wrapped
// after "webhooks: " and what the verifier was doing, which makes the
// Receiver answer 503.
func HookError(doing string, err error) error {
	if vErr, ok := errors.AsType[*VerificationError](err); ok {
		return vErr
	}
	return fmt.Errorf("webhooks: %s: %w", doing, err)
}

// Clock tells the current time. Every time the library stores or compares
// comes from a Clock, so tests can drive time without sleeping. Wherever a
// Clock is taken, nil means the system clock. A Clock that also has a
// method AfterFunc(d time.Duration, f func()) (stop func() bool), as
// webhookstest.Clock does, times the Processor's shutdown grace too;
// otherwise the system's timers do.
type Clock interface {
	Now() time.Time
}

// SystemClock is the wall clock: its Now is time.Now. It is the Clock
// wherever nil is given, and a verifier author's default.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }
