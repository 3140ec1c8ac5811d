package webhooks

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/hookinbox/webhooks/internal/jsonpath"
	"github.com/hookinbox/webhooks/internal/sigsyntax"
)

// SignatureEncoding is how a signature is written in the header.
type SignatureEncoding int

// Encodings for SignedRequest.Encoding. The zero value is EncodingHex.
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

// MaxSignatures bounds the signatures of a list header that are checked
// (each costs a comparison, or a verification, for every key): a header
// with more well-formed signature items is rejected with
// ReasonMalformedHeader rather than verified.
const MaxSignatures = 8

// SignedRequest describes where a provider's signed request carries what a
// verifier reads, and what its signature covers: the signature header and
// its syntax, the signed content, the timestamp, the event ID and type.
// Every signature scheme of this module composes it (HMACOptions,
// SignatureOptions, and through it package providers' Ed25519Options), so
// one description serves the verifier, the catalog's text and the test
// signers of package webhookstest. The zero value of each field is its
// documented default; SignatureHeader and an event ID source are required.
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
//     that is malformed (not a signature of the scheme's size in Encoding)
//     is skipped. At most MaxSignatures are checked.
//
// Any one signature that verifies under any one credential verifies the
// request. A header with no usable signature (a single value that is not a
// signature in Encoding, or a list of only malformed signature items) is
// rejected with ReasonMalformedHeader, as is a signature header (or
// timestamp or event ID header) sent more than once. A well-formed
// signature that verifies under no credential is rejected with
// ReasonBadSignature.
//
// Nothing about the payload beyond the configured ID, type and timestamp
// is checked, so a new payload version never fails verification.
type SignedRequest struct {
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

	// Encoding is how the signature is written in the header. Defaults to
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
	// "{id}.{timestamp}.{body}" for Standard Webhooks. A timestamp read
	// from a header must be in the template, so the signature covers it.
	// Defaults to "{body}" unless SignedContentFunc is set.
	SignedContent string

	// SignedContentFunc, when set instead of SignedContent, builds the
	// signed bytes, for layouts a template cannot describe. It is called
	// before the signature is verified, with the raw timestamp ("" when
	// it is not read from a header) and the raw value of Event.IDHeader
	// ("" when it is absent or the ID comes from elsewhere). It must not
	// modify req. A *VerificationError it returns is passed on as the
	// rejection; any other error is returned wrapped, so the Receiver
	// answers 503. Its content is taken to cover the body and no header:
	// an event ID or type read from a header is marked unsigned
	// (Verification.Unsigned). Defaults to nil.
	SignedContentFunc func(req *Request, timestamp, id string) ([]byte, error)

	// Timestamp is where the signing timestamp is, and its window.
	// Defaults to none: the scheme signs no time.
	Timestamp TimestampSource

	// Event is where the event ID and type are. An ID source is required.
	Event EventSource

	// HeaderFallbacks names other headers to read when the signature,
	// timestamp, event ID or event type header is absent, for example
	// "Webhook-Signature" to "Svix-Signature". Defaults to none.
	HeaderFallbacks HeaderFallbacks

	// OtherSignatureHeaders names headers in which the provider sends
	// other signatures or credentials of the same request, which the
	// verifier does not check (GitHub's SHA-1 X-Hub-Signature beside
	// X-Hub-Signature-256, HubSpot's v1 X-HubSpot-Signature, GitLab's
	// secret token beside its signature): a Receiver never stores them, as
	// it never stores SignatureHeader and its fallback (see
	// SecretHeaderVerifier). Defaults to none.
	OtherSignatureHeaders []string

	// AllowEmptyBody accepts requests with an empty body. Defaults to
	// false: an empty body is rejected with ReasonEmptyBody.
	AllowEmptyBody bool
}

// SignsID reports whether the signature covers the event ID header: the
// template has {id} (SignedContentFunc is taken to cover no header).
func (r SignedRequest) SignsID() bool {
	if r.SignedContentFunc != nil || r.Event.IDHeader == "" {
		return false
	}
	t := sigsyntax.ParseTemplate("", r.content(), r.Timestamp.signed(), true, func(string, ...any) {})
	return t.Has(sigsyntax.ID)
}

// content is SignedContent with its default.
func (r SignedRequest) content() string {
	if r.SignedContent == "" {
		return "{body}"
	}
	return r.SignedContent
}

// HandshakeFunc answers a provider challenge once a request verified (the
// Handshake of HMACOptions and SignatureOptions). It is called after the
// signature and the timestamp window verified and before the event ID and
// type are read, with the verification so far (OccurredAt, PayloadSHA256,
// KeyID) and the key that verified the request where the scheme has a
// symmetric one (HMAC), nil otherwise. A non-nil response becomes
// Verification.Handshake: the Receiver writes it and stores nothing.
// Returning nil, nil lets the request go on as an event. A
// *VerificationError it returns is passed on as the rejection; any other
// error is returned wrapped. An unsigned challenge never reaches it.
//
// It must neither keep, modify nor reveal the key. An answer computed with
// the key must never be the signature of a delivery: when it is made as
// signatures are (an HMAC of the challenge), accept only challenges that no
// signed content can be, as the Zoom entry accepts only opaque tokens,
// which hold no ":".
type HandshakeFunc func(req *Request, v Verification, key []byte) (*Response, error)

// requestReader is a SignedRequest compiled for verification, the pipeline
// every signature scheme shares: parse reads what the signature needs
// before any credential is consulted, and metadata what an authentic
// request says. The scheme checks the signatures in between.
type requestReader struct {
	r         SignedRequest // HeaderFallbacks nil: fallbacks is the reader's own copy
	clock     Clock
	handshake HandshakeFunc
	format    sigsyntax.SignatureFormat
	content   sigsyntax.Template // nil when SignedContentFunc builds the content
	fallbacks fallbackList
	paths     *jsonpath.Paths // the body's paths the description reads
	// Canonical names of the headers read.
	sigKey, idKey, timestampKey string
	eventKeys                   eventHeaderKeys
	signed                      SignedParts // what the signed content covers
	// secretHeaders are the headers that carry signatures (SecretHeaders).
	secretHeaders []string
}

// compile checks the description for a scheme whose signatures have size
// bytes, reporting every problem through bad and returning them with the
// problems of its parts.
func (r SignedRequest) compile(size int, clock Clock, handshake HandshakeFunc, bad func(string, ...any)) (requestReader, error) {
	if r.Encoding != EncodingHex && r.Encoding != EncodingBase64 {
		bad("Encoding %v is unknown: use EncodingHex or EncodingBase64", r.Encoding)
	}
	c := requestReader{
		r:         r,
		clock:     clockOrSystem(clock),
		handshake: handshake,
		format: sigsyntax.SignatureFormat{
			Prefix: r.SignaturePrefix, ItemSep: r.ItemSeparator, KVSep: r.KeyValueSeparator,
			SignatureKey: r.SignatureKey, TimestampKey: r.Timestamp.Key,
			Base64: r.Encoding == EncodingBase64, Size: size, Max: MaxSignatures,
		},
		fallbacks:    r.HeaderFallbacks.compile(),
		paths:        jsonpath.CompilePaths(r.Event.paths([]string{r.Timestamp.Path})...),
		sigKey:       http.CanonicalHeaderKey(r.SignatureHeader),
		idKey:        http.CanonicalHeaderKey(r.Event.IDHeader),
		timestampKey: http.CanonicalHeaderKey(r.Timestamp.Header),
		eventKeys:    r.Event.headerKeys(),
	}
	c.format.Check(r.SignatureHeader, bad)
	if r.SignedContentFunc != nil {
		if r.SignedContent != "" {
			bad("SignedContent and SignedContentFunc are both set: choose one")
		}
	} else {
		c.content = sigsyntax.ParseTemplate("SignedContent", r.content(), r.Timestamp.signed(), r.Event.IDHeader != "", bad)
	}
	// The template, like SignedContentFunc, always signs the body; of the
	// event's headers it can sign only the ID's ({id}).
	c.signed = SignedParts{Body: true}
	if c.content.Has(sigsyntax.ID) {
		c.signed.Headers = []string{r.Event.IDHeader}
	}
	c.secretHeaders = signatureHeaders(r.SignatureHeader, r.HeaderFallbacks, r.OtherSignatureHeaders, bad)
	c.r.HeaderFallbacks = nil
	return c, errors.Join(
		r.Timestamp.Validate(),
		r.Event.Validate(),
		r.HeaderFallbacks.Validate(r.SignatureHeader, r.Timestamp.Header, r.Event.IDHeader, r.Event.TypeHeader))
}

// guardsType reports whether the event type is read from a header the
// signed content does not cover (EventSource.GuardsType).
func (c *requestReader) guardsType() bool { return c.r.Event.GuardsType(c.signed) }

// signedMessage is what parsing a request yields: everything the signature
// check needs, read without a credential. It holds the decoded signatures,
// so it stays in Verify's frame and is passed by pointer.
type signedMessage struct {
	sigs       sigsyntax.SignatureSet
	values     sigsyntax.Values // the template's values
	content    []byte           // the content SignedContentFunc built, or nil
	occurredAt time.Time
}

// parse applies the fallbacks and reads the signature header, the body's
// presence, a header or list timestamp and the event ID the content signs,
// and gathers the signed content's values. It returns the request as the
// rest of verification reads it. Nothing here needs a credential.
func (c *requestReader) parse(req *Request, in *signedMessage) (*Request, error) {
	if req == nil {
		return nil, errors.New("webhooks: verifier: nil request")
	}
	req = c.fallbacks.applyTo(req)
	r := &c.r
	value, rej := singleHeaderKey(req.Header, c.sigKey, r.SignatureHeader, ReasonMissingSignature)
	if rej != nil {
		return nil, rej
	}
	if fault := c.format.ParseInto(value, &in.sigs); fault != sigsyntax.NoFault {
		return nil, signatureRejection(&c.format, fault, r.SignatureHeader)
	}
	if len(req.Body) == 0 && !r.AllowEmptyBody {
		return nil, Reject(ReasonEmptyBody, "the request body is empty")
	}
	timestamp, at, err := r.Timestamp.fromHeader(req.Header, c.timestampKey, in.sigs.Timestamp)
	if err != nil {
		return nil, err
	}
	in.occurredAt = at
	var id string
	if r.Event.IDHeader != "" && (r.SignedContentFunc != nil || c.content.Has(sigsyntax.ID)) {
		id, rej = singleHeaderKey(req.Header, c.idKey, r.Event.IDHeader, ReasonMissingEventID)
		if rej != nil && (rej.Reason != ReasonMissingEventID || c.content != nil) {
			return nil, rej // an absent ID only matters when the template signs it
		}
	}
	if r.SignedContentFunc != nil {
		b, err := r.SignedContentFunc(req, timestamp, id)
		if err != nil {
			return nil, HookError("building signed content", err)
		}
		in.content = b
		if in.content == nil {
			in.content = []byte{}
		}
		return req, nil
	}
	var url string
	if c.content.Has(sigsyntax.URL) {
		if req.URL == nil {
			return nil, errors.New("webhooks: verifier: the signed content has {url} but the request has no URL")
		}
		url = req.URL.String()
	}
	in.values = sigsyntax.Values{Body: req.Body, Timestamp: timestamp, ID: id, Method: req.Method, URL: url}
	return req, nil
}

// message returns the signed content in one slice.
func (c *requestReader) message(in *signedMessage) []byte {
	if in.content != nil {
		return in.content
	}
	return c.content.Bytes(in.values)
}

// signatureRejection turns a fault of the signature header into a
// rejection: ReasonMissingSignature when no signature was sent,
// ReasonMalformedHeader otherwise. The detail never contains the value.
func signatureRejection(f *sigsyntax.SignatureFormat, fault sigsyntax.Fault, headerName string) *VerificationError {
	if fault.Missing() {
		return Reject(ReasonMissingSignature, "%s", f.Detail(fault, headerName))
	}
	return Reject(ReasonMalformedHeader, "%s", f.Detail(fault, headerName))
}

// metadata reads what an authentic request says: a body timestamp, the
// window, a handshake, the event ID and type.
func (c *requestReader) metadata(req *Request, in *signedMessage, keyID string, key []byte) (Verification, error) {
	r := &c.r
	// Scanned once, on the first lookup, for every path the options read.
	doc := jsonpath.Doc{Body: req.Body, Want: c.paths}
	out := Verification{OccurredAt: in.occurredAt, KeyID: keyID}
	if r.Timestamp.Path != "" {
		at, err := r.Timestamp.fromDoc(&doc)
		if err != nil {
			return Verification{}, err
		}
		out.OccurredAt = at
	}
	if err := r.Timestamp.CheckWindow(out.OccurredAt, c.clock.Now()); err != nil {
		return Verification{}, err
	}
	if c.handshake != nil {
		resp, err := c.handshake(req, out, key)
		if err != nil {
			return Verification{}, HookError("answering a handshake", err)
		}
		if resp != nil {
			out.Handshake = resp
			return out, nil
		}
	}
	return r.Event.extract(req, out, &doc, c.eventKeys, c.signed)
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
		if !sigsyntax.IsHeaderName(h) {
			bad("OtherSignatureHeaders has %q, which is not a valid header name", h)
			continue
		}
		out = append(out, http.CanonicalHeaderKey(h))
	}
	return out
}
