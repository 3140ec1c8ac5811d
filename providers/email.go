package providers

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/sigsyntax"
)

// Email providers whose signatures are not an HMAC of the request:
// Mailgun (an HMAC of fields in the body) and SendGrid (ECDSA P-256).

// MailgunOptions configures the Mailgun verifier.
//
// Source: https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks.
type MailgunOptions struct {
	// Timestamp is where the signed time is and its window. Mailgun signs
	// only signature.timestamp (Unix seconds) in the JSON body, so that
	// is always the source, also when Timestamp is the zero value: leave
	// Path and Format empty, or set Path to MailgunTimestampPath; another
	// source is refused. Its Tolerance defaults to
	// webhooks.DefaultTolerance (Mailgun documents none).
	Timestamp webhooks.TimestampSource
	// Clock tells the time. Defaults to the system clock.
	Clock webhooks.Clock
}

// mailgunVerifier verifies Mailgun webhooks (the JSON form): the body's
// "signature" object holds "timestamp", "token" (50 random characters) and
// "signature", the hex HMAC-SHA-256 of timestamp followed by token, keyed
// with the domain's webhook signing key.
//
// The signature covers the timestamp and the token, not the event data:
// what makes a captured signature useless with another body is the token,
// which is the replay key (a token reused with another body within the
// replay TTL is a conflict, 409) and the timestamp window. The event ID is
// "event-data.id" and the type "event-data.event" ("delivered"); neither
// is signed.
//
// Source: https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks
// (the signature object, "concatenate timestamp and token values", HMAC
// SHA256 with the webhook signing key, hex digest; caching the token
// against replays).
type mailgunVerifier struct {
	creds     webhooks.CredentialResolver
	timestamp webhooks.TimestampSource
	clock     webhooks.Clock
}

var mailgunEvent = webhooks.EventSource{IDPath: "event-data.id", TypePath: "event-data.event"}

// NeedsReplayStore implements webhooks.ReplayGuarded: a signature covers a
// timestamp and a token only, so the token is a replay key
// (Verification.ReplayKey), refused with other content.
func (v *mailgunVerifier) NeedsReplayStore() bool { return true }

// MailgunTimestampPath is where Mailgun's signed timestamp is in the body.
const MailgunTimestampPath = "signature.timestamp"

// NewMailgunVerifier returns a verifier of Mailgun webhooks taking webhook
// signing keys from creds.
//
// Source: https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks.
func NewMailgunVerifier(opts MailgunOptions, creds webhooks.CredentialResolver) (webhooks.Verifier, error) {
	ts, tsErr := fixedTimestamp(opts.Timestamp, webhooks.TimestampSource{Path: MailgunTimestampPath})
	if err := optionsError("Mailgun", tsErr, webhooks.CheckCredentials(creds, "webhook signing key", nil)); err != nil {
		return nil, err
	}
	clock := opts.Clock
	if clock == nil {
		clock = webhooks.SystemClock{}
	}
	return &mailgunVerifier{creds: creds, timestamp: ts, clock: clock}, nil
}

func (v *mailgunVerifier) Verify(ctx context.Context, route webhooks.Route, req *webhooks.Request) (webhooks.Verification, error) {
	if len(req.Body) == 0 {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonEmptyBody, "the request body is empty")
	}
	var msg struct {
		Signature struct {
			Timestamp json.Number `json:"timestamp"`
			Token     string      `json:"token"`
			Signature string      `json:"signature"`
		} `json:"signature"`
	}
	if json.Unmarshal(req.Body, &msg) != nil {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonMalformedPayload, "the body is not a Mailgun JSON webhook")
	}
	s := msg.Signature
	switch {
	case s.Signature == "":
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonMissingSignature, "the body has no signature.signature")
	case s.Timestamp == "":
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonMissingTimestamp, "the body has no signature.timestamp")
	case s.Token == "":
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonMalformedPayload, "the body has no signature.token")
	}
	sig, ok := sigsyntax.DecodeDigest(s.Signature, false, sha256.Size)
	if !ok {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonMalformedHeader, "signature.signature is not a hex SHA-256 digest")
	}
	keys, err := v.creds.Secrets(ctx, route)
	if err != nil {
		return webhooks.Verification{}, fmt.Errorf("webhooks: Mailgun verifier: resolving keys: %w", err)
	}
	keyID, tried := "", 0
	for _, k := range keys {
		if len(k.Value) == 0 {
			continue
		}
		tried++
		mac := hmac.New(sha256.New, k.Value)
		mac.Write([]byte(s.Timestamp.String()))
		mac.Write([]byte(s.Token))
		if hmac.Equal(mac.Sum(nil), sig) {
			keyID = k.ID
			break
		}
	}
	if tried == 0 {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonNoCredentials, "no webhook signing key is configured for this route")
	}
	if keyID == "" {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonBadSignature, "signature.signature matches no key")
	}
	// The window is checked on the timestamp the signature covers, as
	// encoding/json read it (it matches keys without regard to case and
	// keeps the last), not on another reading of the body.
	at, ok := sigsyntax.ParseTimestamp(s.Timestamp.String(), int(v.timestamp.Format))
	if !ok {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonMalformedTime, "signature.timestamp is not in %v format", v.timestamp.Format)
	}
	if err := v.timestamp.CheckWindow(at, v.clock.Now()); err != nil {
		return webhooks.Verification{}, err
	}
	// Only once it verified: a body that gives a field of its signature
	// twice (in any case) is refused, so that no other reader of it can
	// take another value.
	if duplicateField(req.Body, "signature", "signature.timestamp", "signature.token", "signature.signature") {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonMalformedPayload, "the body gives a field of its signature twice")
	}
	// Mailgun signs its timestamp and token, not the event data.
	out, err := mailgunEvent.Extract(req, webhooks.Verification{OccurredAt: at, KeyID: keyID}, webhooks.SignedParts{})
	if err != nil {
		return webhooks.Verification{}, err
	}
	out.ReplayKey = "token:" + s.Token
	// The stored payload keeps the timestamp and the token (the replay
	// key), not the signature: with it the body would verify again.
	if err := mailgunSecrets.redact(req.Body, &out, false); err != nil {
		return webhooks.Verification{}, err
	}
	return out, nil
}

// mailgunSecrets is where a Mailgun body carries its signature.
var mailgunSecrets = pathsOf("signature.signature")

// Format prints the verifier's type only, whatever the verb.
func (v *mailgunVerifier) Format(f fmt.State, _ rune) { formatVerifier(f, "mailgunVerifier") }

// SendGrid Event Webhook headers.
const (
	SendGridSignatureHeader = "X-Twilio-Email-Event-Webhook-Signature"
	SendGridTimestampHeader = "X-Twilio-Email-Event-Webhook-Timestamp"
)

// SendGridOptions configures the SendGrid verifier.
//
// Source: https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/getting-started-event-webhook-security-features.
type SendGridOptions struct {
	// Timestamp is where the signed time is and its window. SendGrid
	// signs the header SendGridTimestampHeader (Unix seconds), so that is
	// always the source, also when Timestamp is the zero value: leave
	// Header and Format empty, or set Header to SendGridTimestampHeader;
	// another source is refused. Its Tolerance defaults to
	// webhooks.DefaultTolerance (SendGrid documents none).
	Timestamp webhooks.TimestampSource
	// Clock tells the time. Defaults to the system clock.
	Clock webhooks.Clock
}

// sendGridVerifier verifies SendGrid's Signed Event Webhook: the
// X-Twilio-Email-Event-Webhook-Signature header holds the base64
// ASN.1 DER ECDSA P-256 signature of the SHA-256 of
// X-Twilio-Email-Event-Webhook-Timestamp (Unix seconds) followed by the
// raw body; the verification key is the base64 DER public key SendGrid
// shows in Mail Settings. A delivery is a JSON array of events, each with
// its own "sg_event_id", so the event ID is derived from the signed body;
// the type is the first event's "event" ("delivered").
//
// Source: https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/getting-started-event-webhook-security-features.
type sendGridVerifier struct {
	creds     webhooks.CredentialResolver
	timestamp webhooks.TimestampSource
	clock     webhooks.Clock
}

var sendGridEvent = webhooks.EventSource{IDFromBody: true, TypePath: "0.event", TypeOptional: true}

// NewSendGridVerifier returns a verifier of SendGrid's Signed Event
// Webhook taking verification keys (base64 DER P-256 public keys) from
// creds. Static keys that do not parse are refused.
//
// Source: https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/getting-started-event-webhook-security-features.
func NewSendGridVerifier(opts SendGridOptions, creds webhooks.CredentialResolver) (webhooks.Verifier, error) {
	ts, tsErr := fixedTimestamp(opts.Timestamp, webhooks.TimestampSource{Header: SendGridTimestampHeader})
	err := optionsError("SendGrid", tsErr, webhooks.CheckCredentials(creds, "verification key", func(value []byte) error {
		_, err := ParseECDSAPublicKey(value)
		return err
	}))
	if err != nil {
		return nil, err
	}
	clock := opts.Clock
	if clock == nil {
		clock = webhooks.SystemClock{}
	}
	return &sendGridVerifier{creds: creds, timestamp: ts, clock: clock}, nil
}

// ParseECDSAPublicKey decodes a base64 DER (PKIX) ECDSA P-256 public key,
// as SendGrid shows its verification key; PEM is accepted too. Its errors
// never repeat the value.
func ParseECDSAPublicKey(value []byte) (*ecdsa.PublicKey, error) {
	s := strings.TrimSpace(string(value))
	s = strings.TrimPrefix(s, "-----BEGIN PUBLIC KEY-----")
	s = strings.TrimSuffix(s, "-----END PUBLIC KEY-----")
	s = strings.Join(strings.Fields(s), "")
	der, err := sigsyntax.DecodeBase64(s)
	if err != nil {
		return nil, errors.New("the public key is not base64 DER")
	}
	pub, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, errors.New("the public key is not a DER (PKIX) public key")
	}
	key, ok := pub.(*ecdsa.PublicKey)
	if !ok || key.Curve != elliptic.P256() {
		return nil, errors.New("the public key is not an ECDSA P-256 key")
	}
	return key, nil
}

func (v *sendGridVerifier) Verify(ctx context.Context, route webhooks.Route, req *webhooks.Request) (webhooks.Verification, error) {
	value, rej := webhooks.SingleHeader(req.Header, SendGridSignatureHeader, webhooks.ReasonMissingSignature)
	if rej != nil {
		return webhooks.Verification{}, rej
	}
	sig, err := sigsyntax.DecodeBase64(value)
	if err != nil || len(sig) < 8 || len(sig) > 80 {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonMalformedHeader, "header %s is not a base64 DER ECDSA signature", SendGridSignatureHeader)
	}
	if len(req.Body) == 0 {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonEmptyBody, "the request body is empty")
	}
	raw, at, err := v.timestamp.FromHeader(req.Header, "")
	if err != nil {
		return webhooks.Verification{}, err
	}
	h := sha256.New()
	h.Write([]byte(raw))
	h.Write(req.Body)
	digest := h.Sum(nil)
	keys, err := v.creds.Secrets(ctx, route)
	if err != nil {
		return webhooks.Verification{}, fmt.Errorf("webhooks: SendGrid verifier: resolving keys: %w", err)
	}
	keyID, tried := "", 0
	for _, k := range keys {
		if len(k.Value) == 0 {
			continue
		}
		pub, err := ParseECDSAPublicKey(k.Value)
		if err != nil {
			return webhooks.Verification{}, fmt.Errorf("webhooks: SendGrid verifier: key %q: %w", k.ID, err)
		}
		tried++
		if ecdsa.VerifyASN1(pub, digest, sig) {
			keyID = k.ID
			break
		}
	}
	if tried == 0 {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonNoCredentials, "no verification key is configured for this route")
	}
	if keyID == "" {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonBadSignature, "the signature in %s does not verify", SendGridSignatureHeader)
	}
	if err := v.timestamp.CheckWindow(at, v.clock.Now()); err != nil {
		return webhooks.Verification{}, err
	}
	return sendGridEvent.Extract(req, webhooks.Verification{OccurredAt: at, KeyID: keyID}, webhooks.SignedParts{Body: true})
}

// SecretHeaders implements webhooks.SecretHeaderVerifier:
// SendGridSignatureHeader, which a Receiver never stores.
func (v *sendGridVerifier) SecretHeaders() []string { return sendGridSecretHeaders }

var sendGridSecretHeaders = []string{SendGridSignatureHeader}

// Format prints the verifier's type only, whatever the verb.
func (v *sendGridVerifier) Format(f fmt.State, _ rune) { formatVerifier(f, "sendGridVerifier") }

// fixedTimestamp returns the timestamp source of a scheme that signs its
// time at one documented place (want, whose Format is the zero one):
// got's Tolerance at that place. A got that names another place or format
// is an error, since the signature covers only the documented one.
func fixedTimestamp(got, want webhooks.TimestampSource) (webhooks.TimestampSource, error) {
	out := want
	out.Tolerance = got.Tolerance
	set := got.Header != "" || got.Key != "" || got.Path != ""
	if set && (http.CanonicalHeaderKey(got.Header) != http.CanonicalHeaderKey(want.Header) || got.Key != want.Key || got.Path != want.Path) {
		where := "the body's " + want.Path
		if want.Header != "" {
			where = "the header " + want.Header
		}
		return out, fmt.Errorf("the timestamp is signed only in %s: leave Timestamp.Header, Timestamp.Key and Timestamp.Path empty, or name that place", where)
	}
	if got.Format != want.Format {
		return out, fmt.Errorf("Timestamp.Format %v is not the scheme's %v: leave it zero", got.Format, want.Format)
	}
	return out, out.Validate()
}
