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
	"net/http"
	"strconv"
	"time"

	"github.com/hookinbox/webhooks/internal/wire"
)

// SignatureEncoding is how a signature digest is written in the header.
type SignatureEncoding int

// Encodings for HMACOptions.Encoding. The zero value is EncodingHex.
const (
	// EncodingHex is hexadecimal, upper or lower case, the default.
	EncodingHex SignatureEncoding = iota
	// EncodingBase64 is base64 in the standard alphabet (RFC 4648 §4). The
	// URL-safe alphabet (§5) is accepted too, and padding is optional.
	EncodingBase64
)

// String returns the encoding's name, "hex" or "base64".
func (e SignatureEncoding) String() string {
	switch e {
	case EncodingHex:
		return "hex"
	case EncodingBase64:
		return "base64"
	}
	return "SignatureEncoding(" + strconv.Itoa(int(e)) + ")"
}

// maxSignatures bounds the signatures of a list header that are compared:
// a header with more well-formed signature items is rejected with
// ReasonMalformedHeader rather than verified.
const maxSignatures = 8

// HMACOptions configures an HMACVerifier: the seed's generic verifier of
// HMAC signatures, for any provider whose scheme its fields describe. The
// zero value of each field is its documented default; SignatureHeader and
// an event ID source are required. NewHMACVerifier validates the options
// and reports every problem it finds. Package providers returns filled-in
// options for known providers (providers.StripeOptions and the like),
// which may be adjusted field by field.
//
// The signature header has one of two shapes:
//
//   - A single value, optionally after a fixed prefix: GitHub's
//     "sha256=<hex>" (SignaturePrefix "sha256=") or Slack's "v0=<hex>". This
//     is the shape when ItemSeparator is empty.
//   - A list of key/value items: Stripe's "t=1492774577,v1=<hex>,v1=<hex>"
//     (ItemSeparator ",", KeyValueSeparator "=", SignatureKey "v1",
//     Timestamp.Key "t") or Standard Webhooks' "v1,<b64> v1,<b64>"
//     (ItemSeparator " ", KeyValueSeparator ",", SignatureKey "v1"). Items
//     whose key is neither SignatureKey nor Timestamp.Key are ignored, so a
//     provider can add schemes without breaking receivers; a signature item
//     that is malformed (not a digest of Algorithm in Encoding, or of the
//     wrong length) is skipped. At most 8 signatures are compared.
//
// Any one signature that matches any one secret verifies the request. A
// header with no usable signature (a single value that is not a digest of
// Algorithm in Encoding, or a list of only malformed signature items) is
// rejected with ReasonMalformedHeader, as is a signature header (or
// timestamp or event ID header) sent more than once. A well-formed
// signature that matches no secret is rejected with ReasonBadSignature.
//
// Nothing about the payload beyond the configured ID, type and timestamp
// is checked, so a new payload version never fails verification.
type HMACOptions struct {
	// SignatureHeader is the name of the header that carries the
	// signature, for example "X-Hub-Signature-256". Required.
	SignatureHeader string

	// SignaturePrefix is the text before the signature in a single-value
	// header, for example "sha256=" for GitHub. A header without it is
	// malformed. Only for single-value headers (ItemSeparator empty).
	// Defaults to no prefix.
	SignaturePrefix string

	// ItemSeparator, when set, makes the signature header a list of
	// items separated by it: "," for Stripe, " " for Standard Webhooks.
	// Empty items and blanks around items are ignored. Defaults to empty:
	// the header holds a single signature.
	ItemSeparator string

	// KeyValueSeparator separates an item's key from its value in a list
	// header: "=" for Stripe, "," for Standard Webhooks. An item is split
	// at the first occurrence. Required for list headers; not allowed
	// otherwise.
	KeyValueSeparator string

	// SignatureKey is the key of the signature items in a list header, for
	// example "v1". Required for list headers; not allowed otherwise.
	SignatureKey string

	// Algorithm is the HMAC hash function: crypto.SHA256, crypto.SHA1 (for
	// providers that still sign with it) or crypto.SHA512. Defaults to
	// crypto.SHA256 when zero.
	Algorithm crypto.Hash

	// Encoding is how the digest is written in the header. Defaults to
	// EncodingHex.
	Encoding SignatureEncoding

	// SignedContent is a template of the signed bytes: literal text and
	// the placeholders {body} (the raw body, exactly once), {timestamp}
	// (the timestamp as sent, from Timestamp.Header or Timestamp.Key), {id}
	// (the Event.IDHeader value as sent), {method} (the request method) and
	// {url} (Request.URL as the server received it: for net/http, the path
	// and query without scheme or host; schemes that sign a public URL
	// need SignedContentFunc for now). For example "{timestamp}.{body}"
	// for Stripe, "v0:{timestamp}:{body}" for Slack and Zoom,
	// "{id}.{timestamp}.{body}" for Standard Webhooks. The body is never
	// copied: the pieces are hashed in order. A timestamp read from a
	// header must be in the template, so the signature covers it.
	// Defaults to "{body}" unless SignedContentFunc is set.
	SignedContent string

	// SignedContentFunc, when set instead of SignedContent, builds the
	// signed bytes, for layouts a template cannot describe. It is called
	// before the signature is verified, with the raw timestamp ("" when
	// it is not read from a header) and the raw value of Event.IDHeader
	// ("" when it is absent or the ID comes from elsewhere). It must not
	// modify req. A *VerificationError it returns is passed on as the
	// rejection; any other error is returned wrapped, so the gateway
	// answers 503. Its content is taken to cover the body and no header:
	// an event ID or type read from a header is marked unsigned
	// (Verification.Unsigned). Defaults to nil.
	SignedContentFunc func(req *Request, timestamp, id string) ([]byte, error)

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

	// Timestamp is where the signing timestamp is, and its window.
	// Defaults to none: the scheme signs no time.
	Timestamp TimestampSource

	// Event is where the event ID and type are. An ID source is required.
	Event EventSource

	// HeaderFallbacks names other headers to read when the signature,
	// timestamp, event ID or event type header is absent. Defaults to
	// none.
	HeaderFallbacks HeaderFallbacks

	// OtherSignatureHeaders names headers in which the provider sends
	// other signatures of the same request, which the verifier does not
	// check (GitHub's SHA-1 X-Hub-Signature beside X-Hub-Signature-256,
	// HubSpot's v1 X-HubSpot-Signature): a Receiver never stores them, as
	// it never stores SignatureHeader and its fallback (see
	// SecretHeaderVerifier). Defaults to none.
	OtherSignatureHeaders []string

	// Handshake, when set, is called after the signature (and timestamp,
	// if any) verified and before the event ID and type are read. It may
	// answer a provider challenge: a non-nil response becomes
	// Verification.Handshake, and the gateway writes it and stores
	// nothing. It gets the verification so far (OccurredAt,
	// PayloadSHA256, KeyID) and the HMAC key that verified the request,
	// for challenges that must be answered with it (Zoom's
	// endpoint.url_validation); it must neither keep, modify nor reveal
	// the key, which the verifier keeps for the next request. An answer
	// computed with the key must never be the signature of a delivery:
	// when it is made as signatures are (an HMAC of the challenge), accept
	// only challenges that no signed content can be, as the Zoom entry
	// accepts only opaque tokens, which hold no ":". Returning
	// nil, nil lets the request go on as an event. A
	// *VerificationError it returns is passed on as the rejection; any
	// other error is returned wrapped. An unsigned challenge never reaches
	// it. Defaults to nil.
	Handshake func(req *Request, v Verification, key []byte) (*Response, error)

	// AllowEmptyBody accepts requests with an empty body. Defaults to
	// false: an empty body is rejected with ReasonEmptyBody.
	AllowEmptyBody bool

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
	opts      HMACOptions
	creds     CredentialResolver
	clock     Clock
	format    wire.SignatureFormat
	content   wire.Template // nil when SignedContentFunc builds the content
	fallbacks fallbackList
	keys      *hmacKeys
	paths     *wire.Paths // the body's paths the options read
	// Canonical names of the headers read.
	sigKey, idKey, timestampKey string
	eventKeys                   eventHeaderKeys
	signed                      SignedParts // what the signed content covers
	// secretHeaders are the headers that carry signatures (SecretHeaders).
	secretHeaders []string
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
	if opts.Encoding != EncodingHex && opts.Encoding != EncodingBase64 {
		bad("Encoding %v is unknown: use EncodingHex or EncodingBase64", opts.Encoding)
	}
	v := &HMACVerifier{
		opts:  opts,
		creds: creds,
		clock: clockOrSystem(opts.Clock),
		format: wire.SignatureFormat{
			Prefix: opts.SignaturePrefix, ItemSep: opts.ItemSeparator, KVSep: opts.KeyValueSeparator,
			SignatureKey: opts.SignatureKey, TimestampKey: opts.Timestamp.Key,
			Base64: opts.Encoding == EncodingBase64, Size: size, Max: maxSignatures,
		},
		fallbacks:    opts.HeaderFallbacks.compile(),
		keys:         newHMACKeys(newHash, opts.DecodeSecret),
		paths:        wire.CompilePaths(opts.Timestamp.Path, opts.Event.IDPath, opts.Event.TypePath, opts.Event.TypeSuffixPath),
		sigKey:       http.CanonicalHeaderKey(opts.SignatureHeader),
		idKey:        http.CanonicalHeaderKey(opts.Event.IDHeader),
		timestampKey: http.CanonicalHeaderKey(opts.Timestamp.Header),
		eventKeys:    opts.Event.headerKeys(),
	}
	v.format.Check(opts.SignatureHeader, bad)
	v.content = signedContent(opts, bad)
	// The template, like SignedContentFunc, always signs the body; of the
	// event's headers it can sign only the ID's ({id}).
	v.signed = SignedParts{Body: true}
	if v.content != nil && v.content.Has(wire.ID) {
		v.signed.Headers = []string{opts.Event.IDHeader}
	}
	v.secretHeaders = signatureHeaders(opts.SignatureHeader, opts.HeaderFallbacks, opts.OtherSignatureHeaders, bad)
	problems = append(problems,
		opts.Timestamp.Validate(),
		opts.Event.Validate(),
		opts.HeaderFallbacks.Validate(opts.SignatureHeader, opts.Timestamp.Header, opts.Event.IDHeader, opts.Event.TypeHeader),
		checkCredentials(creds, "secret", opts.usableSecret))
	if err := errors.Join(problems...); err != nil {
		return nil, fmt.Errorf("webhooks: invalid HMAC options: %w", err)
	}
	v.opts.HeaderFallbacks = nil // v.fallbacks is the verifier's own copy
	return v, nil
}

// signatureHeaders returns the canonical names of the headers that carry
// a request's signatures: the signature header, its fallback and the
// other signature headers, which must be valid header names.
func signatureHeaders(header string, fallbacks HeaderFallbacks, others []string, bad func(string, ...any)) []string {
	out := []string{http.CanonicalHeaderKey(header)}
	for name, alt := range fallbacks {
		if http.CanonicalHeaderKey(name) == out[0] {
			out = append(out, http.CanonicalHeaderKey(alt))
		}
	}
	for _, h := range others {
		if !wire.IsHeaderName(h) {
			bad("OtherSignatureHeaders has %q, which is not a valid header name", h)
			continue
		}
		out = append(out, http.CanonicalHeaderKey(h))
	}
	return out
}

var _ SecretHeaderVerifier = (*HMACVerifier)(nil)

// SecretHeaders implements SecretHeaderVerifier: SignatureHeader, its
// fallback and OtherSignatureHeaders, which a Receiver never stores.
func (v *HMACVerifier) SecretHeaders() []string { return v.secretHeaders }

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

// signedContent compiles SignedContent and checks that it covers what the
// options read before the signature is checked.
func signedContent(opts HMACOptions, bad func(string, ...any)) wire.Template {
	if opts.SignedContentFunc != nil {
		if opts.SignedContent != "" {
			bad("SignedContent and SignedContentFunc are both set: choose one")
		}
		return nil
	}
	text := opts.SignedContent
	if text == "" {
		text = "{body}"
	}
	return wire.ParseTemplate("SignedContent", text, opts.Timestamp.signed(), opts.Event.IDHeader != "", bad)
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

// hmacRequest is what parsing a request yields: everything the signature
// check needs, read without a secret. It holds the decoded signatures, so
// it stays in Verify's frame and is passed by pointer.
type hmacRequest struct {
	sigs       wire.SignatureSet
	values     wire.Values // the template's values
	content    []byte      // the content SignedContentFunc built, or nil
	occurredAt time.Time
}

// Verify implements Verifier. Rejections are *VerificationError values whose
// details name headers and keys but never echo secrets or signatures. An
// error from the CredentialResolver or DecodeSecret, or a non-rejection
// error from SignedContentFunc, Event.IDFunc or Handshake, is returned
// wrapped, not as a rejection.
func (v *HMACVerifier) Verify(ctx context.Context, route Route, req *Request) (Verification, error) {
	if req == nil {
		return Verification{}, errors.New("webhooks: HMAC verifier: nil request")
	}
	req = v.fallbacks.applyTo(req)
	var in hmacRequest
	if err := v.parse(req, &in); err != nil {
		return Verification{}, err
	}
	keyID, key, err := v.authenticate(ctx, route, &in)
	if err != nil {
		return Verification{}, err
	}
	return v.metadata(req, &in, keyID, key)
}

// parse reads the signature header, the body's presence, a header or list
// timestamp and the event ID the content signs, and gathers the signed
// content's values. Nothing here needs a secret.
func (v *HMACVerifier) parse(req *Request, in *hmacRequest) error {
	o := &v.opts
	value, rej := singleHeaderKey(req.Header, v.sigKey, o.SignatureHeader, ReasonMissingSignature)
	if rej != nil {
		return rej
	}
	if fault := v.format.ParseInto(value, &in.sigs); fault != wire.NoFault {
		return signatureRejection(&v.format, fault, o.SignatureHeader)
	}
	if len(req.Body) == 0 && !o.AllowEmptyBody {
		return Reject(ReasonEmptyBody, "the request body is empty")
	}
	timestamp, at, err := o.Timestamp.fromHeader(req.Header, v.timestampKey, in.sigs.Timestamp)
	if err != nil {
		return err
	}
	in.occurredAt = at
	var id string
	if o.Event.IDHeader != "" && (o.SignedContentFunc != nil || v.content.Has(wire.ID)) {
		id, rej = singleHeaderKey(req.Header, v.idKey, o.Event.IDHeader, ReasonMissingEventID)
		if rej != nil && (rej.Reason != ReasonMissingEventID || v.content != nil) {
			return rej // an absent ID only matters when the template signs it
		}
	}
	if o.SignedContentFunc != nil {
		b, err := o.SignedContentFunc(req, timestamp, id)
		if err != nil {
			return hookError("building signed content", err)
		}
		in.content = b
		if in.content == nil {
			in.content = []byte{}
		}
		return nil
	}
	var url string
	if v.content.Has(wire.URL) {
		if req.URL == nil {
			return errors.New("webhooks: HMAC verifier: the signed content has {url} but the request has no URL")
		}
		url = req.URL.String()
	}
	in.values = wire.Values{Body: req.Body, Timestamp: timestamp, ID: id, Method: req.Method, URL: url}
	return nil
}

// signatureRejection turns a fault of the signature header into a
// rejection, as parseSignatureHeader does.
func signatureRejection(f *wire.SignatureFormat, fault wire.Fault, headerName string) *VerificationError {
	if fault.Missing() {
		return Reject(ReasonMissingSignature, "%s", f.Detail(fault, headerName))
	}
	return Reject(ReasonMalformedHeader, "%s", f.Detail(fault, headerName))
}

// authenticate computes the HMAC of the content under each usable secret
// and compares it in constant time with every signature. It returns the ID
// and key of the first secret that matched.
func (v *HMACVerifier) authenticate(ctx context.Context, route Route, in *hmacRequest) (keyID string, key []byte, err error) {
	secrets, err := v.creds.Secrets(ctx, route)
	if err != nil {
		return "", nil, fmt.Errorf("webhooks: HMAC verifier: resolving secrets: %w", err)
	}
	tried := 0
	for _, s := range secrets {
		if len(s.Value) == 0 || (v.opts.SecretPrefix != "" && string(s.Value) == v.opts.SecretPrefix) {
			continue
		}
		k, err := v.keys.get(s.Value)
		if err != nil {
			return "", nil, fmt.Errorf("webhooks: HMAC verifier: decoding secret %q: %w", s.ID, err)
		}
		if len(k.key) == 0 {
			continue
		}
		tried++
		if k.matches(v.content, in) {
			return s.ID, k.key, nil
		}
	}
	if tried == 0 {
		return "", nil, Reject(ReasonNoCredentials, "no usable secret is configured for this route")
	}
	return "", nil, Reject(ReasonBadSignature, "no signature in %s matches", v.opts.SignatureHeader)
}

// metadata reads what an authentic request says: a body timestamp, the
// window, a handshake, the event ID and type.
func (v *HMACVerifier) metadata(req *Request, in *hmacRequest, keyID string, key []byte) (Verification, error) {
	o := &v.opts
	// Scanned once, on the first lookup, for every path the options read.
	doc := wire.Doc{Body: req.Body, Want: v.paths}
	out := Verification{OccurredAt: in.occurredAt, KeyID: keyID}
	if o.Timestamp.Path != "" {
		at, err := o.Timestamp.fromDoc(&doc)
		if err != nil {
			return Verification{}, err
		}
		out.OccurredAt = at
	}
	if err := o.Timestamp.CheckWindow(out.OccurredAt, v.clock.Now()); err != nil {
		return Verification{}, err
	}
	if o.Handshake != nil {
		resp, err := o.Handshake(req, out, key)
		if err != nil {
			return Verification{}, hookError("answering a handshake", err)
		}
		if resp != nil {
			out.Handshake = resp
			return out, nil
		}
	}
	return o.Event.extract(req, out, &doc, v.eventKeys, v.signed)
}

// PerTenant reports whether the verifier's credentials are per tenant
// (see [TenantScoped]).
func (v *HMACVerifier) PerTenant() bool { return PerTenant(v.creds) }

// Format prints the verifier's type only, whatever the verb: the secrets it
// holds never reach output through fmt or slog.
func (v *HMACVerifier) Format(f fmt.State, _ rune) {
	_, _ = io.WriteString(f, "webhooks.HMACVerifier{…}")
}
