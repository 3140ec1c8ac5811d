package providers

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/wire"
)

// MaxEd25519Signatures bounds the signatures an Ed25519Verifier checks in
// one request. Each check costs tens of microseconds for every key, so a
// header with more well-formed signature items than this is rejected with
// ReasonMalformedHeader rather than verified.
const MaxEd25519Signatures = 8

// Ed25519KeyFormat is how a public key is written in Secret.Value.
type Ed25519KeyFormat int

// Public key formats for Ed25519Options.PublicKeyFormat. The zero value is
// Ed25519KeyHex.
const (
	// Ed25519KeyHex is the 32-byte key as 64 hexadecimal digits, as the
	// Discord developer portal shows it, the default.
	Ed25519KeyHex Ed25519KeyFormat = iota
	// Ed25519KeyBase64 is the 32-byte key in base64, either alphabet,
	// padded or not.
	Ed25519KeyBase64
	// Ed25519KeyStandardWebhooks is "whpk_" and the base64 of the 32-byte
	// key, the Standard Webhooks serialization of a public key. The
	// prefix may be left out; a "whsk_" secret key is refused.
	Ed25519KeyStandardWebhooks
)

// String returns the format's name.
func (f Ed25519KeyFormat) String() string {
	switch f {
	case Ed25519KeyHex:
		return "hex"
	case Ed25519KeyBase64:
		return "base64"
	case Ed25519KeyStandardWebhooks:
		return "whpk"
	}
	return "Ed25519KeyFormat(" + strconv.Itoa(int(f)) + ")"
}

// ParseEd25519PublicKey decodes a public key written in format and checks
// its length. Hosts may call it at start-up to validate configured keys;
// Ed25519Verifier calls it for every key the CredentialResolver returns.
// Its errors describe the problem without repeating the value.
func ParseEd25519PublicKey(format Ed25519KeyFormat, value []byte) (ed25519.PublicKey, error) {
	key, err := parseEd25519PublicKey(format, value)
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	return key, nil
}

// parseEd25519PublicKey is ParseEd25519PublicKey without the package prefix
// on errors, for messages that already name the package.
func parseEd25519PublicKey(format Ed25519KeyFormat, value []byte) (ed25519.PublicKey, error) {
	s := strings.TrimSpace(string(value))
	var (
		key []byte
		err error
	)
	switch format {
	case Ed25519KeyHex:
		if len(s) != hex.EncodedLen(ed25519.PublicKeySize) {
			return nil, fmt.Errorf("an Ed25519 public key in hex has %d digits, not %d", hex.EncodedLen(ed25519.PublicKeySize), len(s))
		}
		key, err = hex.DecodeString(s)
		if err != nil {
			return nil, errors.New("the Ed25519 public key is not hexadecimal")
		}
	case Ed25519KeyBase64, Ed25519KeyStandardWebhooks:
		if format == Ed25519KeyStandardWebhooks {
			if strings.HasPrefix(s, "whsk_") {
				return nil, errors.New("the key is a Standard Webhooks secret key (whsk_): configure the public key (whpk_) instead, and keep the secret key out of this service")
			}
			s = strings.TrimPrefix(s, "whpk_")
		}
		key, err = wire.DecodeBase64(s)
		if err != nil {
			return nil, errors.New("the Ed25519 public key is not base64")
		}
	default:
		return nil, fmt.Errorf("unknown Ed25519 key format %v", format)
	}
	switch len(key) {
	case ed25519.PublicKeySize:
		return ed25519.PublicKey(key), nil
	case ed25519.SeedSize * 2:
		return nil, errors.New("the key has 64 bytes, the size of an Ed25519 private key: configure the 32-byte public key instead")
	}
	return nil, fmt.Errorf("an Ed25519 public key has %d bytes, not %d", ed25519.PublicKeySize, len(key))
}

// Ed25519Options configures an Ed25519Verifier, for providers that sign
// with an Ed25519 private key and publish the public key: Discord, and
// Standard Webhooks' asymmetric "v1a" scheme. The CredentialResolver
// supplies public keys (Secret.Value, written in PublicKeyFormat), so the
// service needs no secret at all.
//
// The zero value of each field is its documented default; SignatureHeader
// and an event ID source are required. NewEd25519Verifier validates the
// options and reports every problem it finds.
//
// The signature header is either a single value after an optional prefix
// (Discord's hex signature) or a list of key/value items (Standard
// Webhooks' "v1a,<base64> v1,<base64>"), as for webhooks.HMACOptions: items
// whose key is not SignatureKey are ignored, and a malformed signature item
// is skipped. Any signature that verifies under any key verifies the
// request.
type Ed25519Options struct {
	// SignatureHeader is the name of the header that carries the
	// signature, for example "X-Signature-Ed25519". Required.
	SignatureHeader string

	// SignaturePrefix is the text before the signature in a single-value
	// header. Defaults to none.
	SignaturePrefix string

	// ItemSeparator, when set, makes the signature header a list of items
	// separated by it, for example " ". Defaults to none.
	ItemSeparator string

	// KeyValueSeparator separates an item's key from its value in a list
	// header. Required for list headers; not allowed otherwise.
	KeyValueSeparator string

	// SignatureKey is the key of the signature items in a list header, for
	// example "v1a". Required for list headers; not allowed otherwise.
	SignatureKey string

	// Encoding is how the 64-byte signature is written. Defaults to
	// webhooks.EncodingHex.
	Encoding webhooks.SignatureEncoding

	// SignedContent is a template of the signed bytes, with the
	// placeholders of webhooks.HMACOptions.SignedContent: "{timestamp}{body}"
	// for Discord (the timestamp immediately followed by the body),
	// "{id}.{timestamp}.{body}" for Standard Webhooks v1a. A timestamp read
	// from a header must be in it. Defaults to "{body}".
	SignedContent string

	// PublicKeyFormat is how the public keys from the CredentialResolver
	// are written. A key that does not decode to 32 bytes is a
	// configuration error: Verify returns it wrapped (the gateway answers
	// 503), naming the key's ID only. Defaults to Ed25519KeyHex.
	PublicKeyFormat Ed25519KeyFormat

	// Timestamp is where the signing timestamp is, and its window.
	// Defaults to none.
	Timestamp webhooks.TimestampSource

	// Event is where the event ID and type are. An ID source is required.
	Event webhooks.EventSource

	// HeaderFallbacks names other headers to read when a configured one is
	// absent: "Webhook-Signature" to "Svix-Signature". Defaults to none.
	HeaderFallbacks webhooks.HeaderFallbacks

	// Handshake, when set, is called after the signature and the
	// timestamp window verified and before the event ID and type are read.
	// A non-nil response answers a provider challenge (Discord's PING): it
	// becomes Verification.Handshake, and the gateway writes it and stores
	// nothing. It gets the verification so far (OccurredAt, PayloadSHA256,
	// KeyID); key is always nil, since the scheme has no symmetric key.
	// Returning nil, nil lets the request go on as an event. A
	// *VerificationError it returns is passed on as the rejection; any
	// other error is returned wrapped. An unsigned challenge never reaches
	// it. Defaults to nil.
	Handshake func(req *webhooks.Request, v webhooks.Verification, key []byte) (*webhooks.Response, error)

	// AllowEmptyBody accepts requests with an empty body. Defaults to
	// false: an empty body is rejected with ReasonEmptyBody.
	AllowEmptyBody bool

	// Clock tells the time the timestamp window is checked against.
	// Defaults to the system clock.
	Clock webhooks.Clock
}

// Ed25519Verifier verifies webhooks signed with Ed25519, as configured by
// Ed25519Options. It is safe for concurrent use.
//
// Verify checks, in this order: the signature header's syntax, the body,
// the timestamp's presence and syntax, the presence of a signed event ID;
// then it asks the CredentialResolver for public keys and checks each
// signature under each key; only after a signature verified does it check
// the timestamp window, offer the request to the Handshake hook, and read
// the event ID and type.
type Ed25519Verifier struct {
	opts      Ed25519Options
	creds     webhooks.CredentialResolver
	clock     webhooks.Clock
	format    wire.SignatureFormat
	content   wire.Template
	fallbacks webhooks.HeaderFallbacks
	signed    webhooks.SignedParts // what the content covers
	// secretHeaders are the signature header and its fallback.
	secretHeaders []string
}

// NewEd25519Verifier returns a verifier with the given options, taking
// public keys from creds; several keys allow rotation. It returns an error
// describing every invalid option, and every static key (StaticSecrets,
// TenantSecrets) that is empty or does not decode; keys from other
// resolvers are checked on each request.
func NewEd25519Verifier(opts Ed25519Options, creds webhooks.CredentialResolver) (*Ed25519Verifier, error) {
	var p problemList
	if opts.Encoding != webhooks.EncodingHex && opts.Encoding != webhooks.EncodingBase64 {
		p.bad("Encoding %v is unknown: use webhooks.EncodingHex or webhooks.EncodingBase64", opts.Encoding)
	}
	switch opts.PublicKeyFormat {
	case Ed25519KeyHex, Ed25519KeyBase64, Ed25519KeyStandardWebhooks:
	default:
		p.bad("PublicKeyFormat %v is unknown: use Ed25519KeyHex, Ed25519KeyBase64 or Ed25519KeyStandardWebhooks", opts.PublicKeyFormat)
	}
	v := &Ed25519Verifier{
		opts:  opts,
		creds: creds,
		clock: opts.Clock,
		format: wire.SignatureFormat{
			Prefix: opts.SignaturePrefix, ItemSep: opts.ItemSeparator, KVSep: opts.KeyValueSeparator,
			SignatureKey: opts.SignatureKey, TimestampKey: opts.Timestamp.Key,
			Base64: opts.Encoding == webhooks.EncodingBase64, Size: ed25519.SignatureSize, Max: MaxEd25519Signatures,
		},
		fallbacks: webhooks.HeaderFallbacks(maps.Clone(opts.HeaderFallbacks)),
	}
	v.format.Check(opts.SignatureHeader, p.bad)
	v.secretHeaders = []string{http.CanonicalHeaderKey(opts.SignatureHeader)}
	for name, alt := range opts.HeaderFallbacks {
		if http.CanonicalHeaderKey(name) == v.secretHeaders[0] {
			v.secretHeaders = append(v.secretHeaders, http.CanonicalHeaderKey(alt))
		}
	}
	content := opts.SignedContent
	if content == "" {
		content = "{body}"
	}
	signedTS := opts.Timestamp.Header != "" || opts.Timestamp.Key != ""
	v.content = wire.ParseTemplate("SignedContent", content, signedTS, opts.Event.IDHeader != "", p.bad)
	v.signed = webhooks.SignedParts{Body: true}
	if v.content != nil && v.content.Has(wire.ID) {
		v.signed.Headers = []string{opts.Event.IDHeader}
	}
	p = append(p,
		opts.Timestamp.Validate(),
		opts.Event.Validate(),
		opts.HeaderFallbacks.Validate(opts.SignatureHeader, opts.Timestamp.Header, opts.Event.IDHeader, opts.Event.TypeHeader),
		checkCredentials(creds, "public key", func(value []byte) error {
			_, err := parseEd25519PublicKey(opts.PublicKeyFormat, value)
			return err
		}))
	if err := optionsError("Ed25519", p...); err != nil {
		return nil, err
	}
	if v.clock == nil {
		v.clock = systemClock{}
	}
	v.opts.HeaderFallbacks = nil // v.fallbacks is the verifier's own copy
	return v, nil
}

// SecretHeaders implements webhooks.SecretHeaderVerifier: the signature
// header and its fallback, which a Receiver never stores.
func (v *Ed25519Verifier) SecretHeaders() []string { return v.secretHeaders }

// ed25519Request is what parsing a request yields.
type ed25519Request struct {
	signatures [][]byte
	message    []byte
	occurredAt time.Time
}

// Verify implements webhooks.Verifier. Rejections are *VerificationError
// values whose details name headers but never echo signatures. An error
// from the CredentialResolver, a key that does not decode, or a
// non-rejection error from Handshake or Event.IDFunc is returned wrapped,
// not as a rejection.
func (v *Ed25519Verifier) Verify(ctx context.Context, route webhooks.Route, req *webhooks.Request) (webhooks.Verification, error) {
	if req == nil {
		return webhooks.Verification{}, errors.New("webhooks: Ed25519 verifier: nil request")
	}
	if len(v.fallbacks) > 0 {
		r := *req // the body is shared, not copied
		r.Header = v.fallbacks.Apply(req.Header)
		req = &r
	}
	in, err := v.parse(req)
	if err != nil {
		return webhooks.Verification{}, err
	}
	keyID, err := v.authenticate(ctx, route, in)
	if err != nil {
		return webhooks.Verification{}, err
	}
	return v.metadata(req, in, keyID)
}

// parse reads the signature header, the body's presence, the timestamp and
// the event ID the content signs, and builds the signed message.
func (v *Ed25519Verifier) parse(req *webhooks.Request) (ed25519Request, error) {
	o := &v.opts
	var in ed25519Request
	value, rej := singleHeader(req.Header, o.SignatureHeader, webhooks.ReasonMissingSignature)
	if rej != nil {
		return in, rej
	}
	sigs, rej := parseSignatureHeader(&v.format, value, o.SignatureHeader)
	if rej != nil {
		return in, rej
	}
	in.signatures = sigs.Sigs
	if len(req.Body) == 0 && !o.AllowEmptyBody {
		return in, webhooks.Reject(webhooks.ReasonEmptyBody, "the request body is empty")
	}
	timestamp, at, err := o.Timestamp.FromHeader(req.Header, sigs.Timestamp)
	if err != nil {
		return in, err
	}
	in.occurredAt = at
	values := wire.Values{Body: req.Body, Timestamp: timestamp, Method: req.Method}
	if v.content.Has(wire.ID) {
		if values.ID, rej = singleHeader(req.Header, o.Event.IDHeader, webhooks.ReasonMissingEventID); rej != nil {
			return in, rej
		}
	}
	if v.content.Has(wire.URL) {
		if req.URL == nil {
			return in, errors.New("webhooks: Ed25519 verifier: the signed content has {url} but the request has no URL")
		}
		values.URL = req.URL.String()
	}
	in.message = v.content.Bytes(values)
	return in, nil
}

// authenticate checks each signature under each public key and returns the
// ID of the first key that verified one.
func (v *Ed25519Verifier) authenticate(ctx context.Context, route webhooks.Route, in ed25519Request) (string, error) {
	keys, err := v.creds.Secrets(ctx, route)
	if err != nil {
		return "", fmt.Errorf("webhooks: Ed25519 verifier: resolving public keys: %w", err)
	}
	tried := 0
	for _, k := range keys {
		if len(k.Value) == 0 {
			continue
		}
		pub, err := parseEd25519PublicKey(v.opts.PublicKeyFormat, k.Value)
		if err != nil {
			return "", fmt.Errorf("webhooks: Ed25519 verifier: public key %q: %w", k.ID, err)
		}
		tried++
		for _, sig := range in.signatures {
			if ed25519.Verify(pub, in.message, sig) {
				return k.ID, nil
			}
		}
	}
	if tried == 0 {
		return "", webhooks.Reject(webhooks.ReasonNoCredentials, "no public key is configured for this route")
	}
	return "", webhooks.Reject(webhooks.ReasonBadSignature, "no signature in %s verifies", v.opts.SignatureHeader)
}

// metadata reads what an authentic request says: a body timestamp, the
// window, a handshake, the event ID and type.
func (v *Ed25519Verifier) metadata(req *webhooks.Request, in ed25519Request, keyID string) (webhooks.Verification, error) {
	o := &v.opts
	out := webhooks.Verification{OccurredAt: in.occurredAt, KeyID: keyID}
	if o.Timestamp.Path != "" {
		at, err := o.Timestamp.FromBody(req.Body)
		if err != nil {
			return webhooks.Verification{}, err
		}
		out.OccurredAt = at
	}
	if err := o.Timestamp.CheckWindow(out.OccurredAt, v.clock.Now()); err != nil {
		return webhooks.Verification{}, err
	}
	if o.Handshake != nil {
		resp, err := o.Handshake(req, out, nil)
		if err != nil {
			return webhooks.Verification{}, hookError("Ed25519", "answering a handshake", err)
		}
		if resp != nil {
			out.Handshake = resp
			return out, nil
		}
	}
	return o.Event.Extract(req, out, v.signed)
}

// Format prints the verifier's type only, whatever the verb.
func (v *Ed25519Verifier) Format(f fmt.State, _ rune) { formatVerifier(f, "Ed25519Verifier") }
