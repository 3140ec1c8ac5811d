package webhooks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultTolerance is how far a signed timestamp may lie from the verifier's
// clock, in either direction, when HMACOptions.Tolerance is zero.
const DefaultTolerance = 5 * time.Minute

// DefaultKeyValueSeparator separates a key from its value inside a list-style
// signature header when HMACOptions.KeyValueSeparator is empty.
const DefaultKeyValueSeparator = "="

// HMACAlgorithm is the hash function of an HMAC signature.
type HMACAlgorithm int

// Hash functions for HMACOptions.Algorithm. The zero value is HMACSHA256.
const (
	// HMACSHA256 is HMAC-SHA-256 (32-byte digests), the default.
	HMACSHA256 HMACAlgorithm = iota
	// HMACSHA1 is HMAC-SHA-1 (20-byte digests), for providers that still
	// sign with it.
	HMACSHA1
	// HMACSHA512 is HMAC-SHA-512 (64-byte digests).
	HMACSHA512
)

// String returns the algorithm's name, for example "sha256".
func (a HMACAlgorithm) String() string {
	switch a {
	case HMACSHA256:
		return "sha256"
	case HMACSHA1:
		return "sha1"
	case HMACSHA512:
		return "sha512"
	}
	return "HMACAlgorithm(" + strconv.Itoa(int(a)) + ")"
}

// hash returns the hash constructor and digest size, or ok false for an
// unknown algorithm.
func (a HMACAlgorithm) hash() (newHash func() hash.Hash, size int, ok bool) {
	switch a {
	case HMACSHA256:
		return sha256.New, sha256.Size, true
	case HMACSHA1:
		return sha1.New, sha1.Size, true
	case HMACSHA512:
		return sha512.New, sha512.Size, true
	}
	return nil, 0, false
}

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

// SignedContent names the bytes a provider signs, built from the raw body and,
// for the timestamped forms, the timestamp and event ID exactly as they
// appear in the request.
type SignedContent int

// Signed content layouts for HMACOptions.SignedContent. The zero value is
// SignBody.
const (
	// SignBody signs the raw body only (GitHub), the default. It cannot
	// cover a timestamp.
	SignBody SignedContent = iota
	// SignTimestampBody signs timestamp + "." + body (Stripe).
	SignTimestampBody
	// SignIDTimestampBody signs id + "." + timestamp + "." + body (Standard
	// Webhooks). The ID must come from a header (EventIDHeader).
	SignIDTimestampBody
)

// String returns a short description such as "timestamp.body".
func (c SignedContent) String() string {
	switch c {
	case SignBody:
		return "body"
	case SignTimestampBody:
		return "timestamp.body"
	case SignIDTimestampBody:
		return "id.timestamp.body"
	}
	return "SignedContent(" + strconv.Itoa(int(c)) + ")"
}

// TimestampFormat is how a provider writes its signing timestamp.
type TimestampFormat int

// Timestamp formats for HMACOptions.TimestampFormat. The zero value is
// TimestampUnixSeconds.
const (
	// TimestampUnixSeconds is a decimal count of seconds since the Unix
	// epoch, for example "1492774577", the default.
	TimestampUnixSeconds TimestampFormat = iota
	// TimestampUnixMillis is a decimal count of milliseconds since the Unix
	// epoch, for example "1492774577000".
	TimestampUnixMillis
	// TimestampRFC3339 is an RFC 3339 date and time with an optional
	// fraction of a second, for example "2017-04-21T11:36:17Z".
	TimestampRFC3339
)

// String returns the format's name.
func (f TimestampFormat) String() string {
	switch f {
	case TimestampUnixSeconds:
		return "unix_seconds"
	case TimestampUnixMillis:
		return "unix_millis"
	case TimestampRFC3339:
		return "rfc3339"
	}
	return "TimestampFormat(" + strconv.Itoa(int(f)) + ")"
}

// HMACOptions configures an HMACVerifier. The zero value of each field is its
// documented default; SignatureHeader and one event ID source are required.
// NewHMACVerifier validates the options and reports every problem it finds.
//
// The signature header has one of two shapes:
//
//   - A single value, optionally after a fixed prefix: GitHub's
//     "sha256=<hex>" (SignaturePrefix "sha256=") or Slack's "v0=<hex>". This
//     is the shape when ItemSeparator is empty.
//   - A list of key/value items: Stripe's "t=1492774577,v1=<hex>,v1=<hex>"
//     (ItemSeparator ",", KeyValueSeparator "=", SignatureKey "v1",
//     TimestampKey "t") or Standard Webhooks' "v1,<b64> v1,<b64>"
//     (ItemSeparator " ", KeyValueSeparator ",", SignatureKey "v1"). Items
//     whose key is neither SignatureKey nor TimestampKey are ignored, so a
//     provider can add schemes without breaking receivers.
//
// Any one signature that matches any one secret verifies the request.
//
// A signature value that cannot be a digest of Algorithm in Encoding (not
// hex or base64, or the wrong length) is rejected with ReasonMalformedHeader,
// as is a signature header (or timestamp or event ID header) sent more than
// once. A well-formed signature that matches no secret is rejected with
// ReasonBadSignature.
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
	// at the first occurrence. Only for list headers. Defaults to
	// DefaultKeyValueSeparator ("=").
	KeyValueSeparator string

	// SignatureKey is the key of the signature items in a list header, for
	// example "v1". Required for list headers; not allowed otherwise.
	SignatureKey string

	// TimestampKey is the key of the signing timestamp inside a list
	// header, for example "t" for Stripe. At most one of TimestampKey and
	// TimestampHeader may be set. Defaults to none.
	TimestampKey string

	// TimestampHeader is the name of a separate header that carries the
	// signing timestamp, for example "Webhook-Timestamp". Defaults to none.
	//
	// When a timestamp source (this or TimestampKey) is set, the timestamp
	// is required, the signed content must cover it (SignTimestampBody,
	// SignIDTimestampBody or a SignedContentFunc), and it must lie within
	// Tolerance of the clock. The window is checked only after the
	// signature verified.
	TimestampHeader string

	// TimestampFormat is how the timestamp is written. Defaults to
	// TimestampUnixSeconds.
	TimestampFormat TimestampFormat

	// Tolerance is how far the signed timestamp may be from the clock, in
	// the past or in the future; farther is rejected with
	// ReasonTimestampExpired. Must not be negative. Defaults to
	// DefaultTolerance (5 minutes).
	Tolerance time.Duration

	// Algorithm is the HMAC hash function. Defaults to HMACSHA256.
	Algorithm HMACAlgorithm

	// Encoding is how the digest is written in the header. Defaults to
	// EncodingHex.
	Encoding SignatureEncoding

	// SignedContent is the layout of the signed bytes. Ignored when
	// SignedContentFunc is set. Defaults to SignBody.
	SignedContent SignedContent

	// SignedContentFunc, when set, builds the signed bytes instead of
	// SignedContent, for layouts such as Slack's "v0:" + timestamp + ":" +
	// body. It is called before the signature is verified, with the raw
	// timestamp ("" when no timestamp source is set) and the raw value of
	// EventIDHeader ("" when it is absent or the ID comes from the body).
	// It must not modify req. A *VerificationError it returns is passed on
	// as the rejection; any other error is returned wrapped, so the gateway
	// answers 503. Defaults to nil.
	SignedContentFunc func(req *Request, timestamp, id string) ([]byte, error)

	// DecodeSecret turns a stored secret into the HMAC key, for providers
	// whose secrets are encoded (Standard Webhooks: base64 after "whsec_").
	// An error it returns is a configuration problem: Verify returns it
	// wrapped (not as a *VerificationError), naming the secret's ID only,
	// so the error must not contain the secret. Secrets that decode to
	// nothing are skipped. Defaults to nil: the secret's bytes are the key.
	DecodeSecret func(secret []byte) ([]byte, error)

	// EventIDHeader is the name of the header that carries the event ID,
	// for example "X-GitHub-Delivery". Exactly one of EventIDHeader and
	// EventIDPath must be set.
	EventIDHeader string

	// EventIDPath is a dotted path to the event ID in the JSON body, for
	// example "id" or "data.object.id". Object keys are separated by ".";
	// a segment of decimal digits also indexes an array. The value must be
	// a string or a number. The body is parsed only after the signature
	// verified. Exactly one of EventIDHeader and EventIDPath must be set.
	EventIDPath string

	// EventTypeHeader is the name of the header that carries the event
	// type, for example "X-GitHub-Event". At most one of EventTypeHeader
	// and EventTypePath may be set; when neither is, EventType is "".
	// Defaults to none.
	EventTypeHeader string

	// EventTypePath is a dotted path to the event type in the JSON body,
	// for example "type". Same syntax as EventIDPath. Defaults to none.
	EventTypePath string

	// AllowEmptyBody accepts requests with an empty body. Defaults to
	// false: an empty body is rejected with ReasonEmptyBody.
	AllowEmptyBody bool
}

// GitHubOptions returns the options for GitHub webhooks: the signature is
// "sha256=" and the lower-case hex HMAC-SHA-256 of the raw body in
// X-Hub-Signature-256, the delivery GUID in X-GitHub-Delivery is the event
// ID and X-GitHub-Event is the event type. GitHub sends no signed timestamp,
// so replays are stopped only by the delivery ID.
//
// See https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
// and https://docs.github.com/en/webhooks/webhook-events-and-payloads#delivery-headers.
func GitHubOptions() HMACOptions {
	return HMACOptions{
		SignatureHeader: "X-Hub-Signature-256",
		SignaturePrefix: "sha256=",
		Algorithm:       HMACSHA256,
		Encoding:        EncodingHex,
		SignedContent:   SignBody,
		EventIDHeader:   "X-GitHub-Delivery",
		EventTypeHeader: "X-GitHub-Event",
	}
}

// HMACVerifier verifies webhooks signed with an HMAC of the request, as
// configured by HMACOptions. It is safe for concurrent use.
//
// Verify checks, in this order: the signature header's syntax, the body,
// the timestamp's presence and syntax, the presence of an event ID that the
// signed content includes; then it asks the CredentialResolver for secrets
// and compares signatures in constant time; only after a signature matched
// does it check the timestamp window, read the event ID and type, and parse
// the JSON body. A request with a bad signature is therefore never told
// whether its timestamp or payload would have passed.
type HMACVerifier struct {
	provider string
	opts     HMACOptions
	creds    CredentialResolver
	clock    Clock
	newHash  func() hash.Hash
	format   signatureFormat
	// hasTimestamp is true when a timestamp source is configured.
	hasTimestamp bool
}

// NewHMACVerifier returns a verifier for the named provider (used in error
// messages) with the given options, taking secrets from creds. A nil clock
// means SystemClock. It returns an error describing every invalid option.
func NewHMACVerifier(provider string, opts HMACOptions, creds CredentialResolver, clock Clock) (*HMACVerifier, error) {
	if opts.Tolerance == 0 {
		opts.Tolerance = DefaultTolerance
	}
	if opts.ItemSeparator != "" && opts.KeyValueSeparator == "" {
		opts.KeyValueSeparator = DefaultKeyValueSeparator
	}
	var problems []error
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Errorf(format, args...))
	}
	if provider == "" {
		bad("provider is empty: pass the provider key the verifier is registered under")
	}
	if creds == nil {
		bad("creds is nil: pass a CredentialResolver, for example StaticSecrets(secret)")
	}
	newHash, size, ok := opts.Algorithm.hash()
	if !ok {
		bad("Algorithm %v is unknown: use HMACSHA256, HMACSHA1 or HMACSHA512", opts.Algorithm)
	}
	if opts.Encoding != EncodingHex && opts.Encoding != EncodingBase64 {
		bad("Encoding %v is unknown: use EncodingHex or EncodingBase64", opts.Encoding)
	}
	if opts.TimestampFormat != TimestampUnixSeconds && opts.TimestampFormat != TimestampUnixMillis && opts.TimestampFormat != TimestampRFC3339 {
		bad("TimestampFormat %v is unknown: use TimestampUnixSeconds, TimestampUnixMillis or TimestampRFC3339", opts.TimestampFormat)
	}
	if opts.Tolerance < 0 {
		bad("Tolerance %v is negative: use a positive window, or 0 for DefaultTolerance", opts.Tolerance)
	}

	checkHeader := func(field, name string, required bool) {
		switch {
		case name == "" && required:
			bad("%s is empty: set the name of the header", field)
		case name != "" && !isHeaderName(name):
			bad("%s %q is not a valid header name", field, name)
		}
	}
	checkHeader("SignatureHeader", opts.SignatureHeader, true)
	checkHeader("TimestampHeader", opts.TimestampHeader, false)
	checkHeader("EventIDHeader", opts.EventIDHeader, false)
	checkHeader("EventTypeHeader", opts.EventTypeHeader, false)

	// Header shape.
	if opts.ItemSeparator == "" {
		if opts.SignatureKey != "" {
			bad("SignatureKey is set but ItemSeparator is empty: set ItemSeparator for a list header, or use SignaturePrefix for a single value")
		}
		if opts.TimestampKey != "" {
			bad("TimestampKey is set but ItemSeparator is empty: a timestamp key needs a list header; use TimestampHeader for a separate header")
		}
		if opts.KeyValueSeparator != "" {
			bad("KeyValueSeparator is set but ItemSeparator is empty: set ItemSeparator for a list header")
		}
	} else {
		if opts.SignaturePrefix != "" {
			bad("SignaturePrefix is set with ItemSeparator: a list header names its signatures with SignatureKey, so leave SignaturePrefix empty")
		}
		if strings.Contains(opts.KeyValueSeparator, opts.ItemSeparator) || strings.Contains(opts.ItemSeparator, opts.KeyValueSeparator) {
			bad("ItemSeparator %q and KeyValueSeparator %q overlap: they must be different and neither may contain the other", opts.ItemSeparator, opts.KeyValueSeparator)
		}
		checkKey := func(field, key string, required bool) {
			switch {
			case key == "" && required:
				bad("%s is empty: set the key of the signature items in the list header, for example \"v1\"", field)
			case key != "" && (strings.Contains(key, opts.ItemSeparator) || strings.Contains(key, opts.KeyValueSeparator) || strings.TrimSpace(key) != key):
				bad("%s %q contains a separator or surrounding blanks", field, key)
			}
		}
		checkKey("SignatureKey", opts.SignatureKey, true)
		checkKey("TimestampKey", opts.TimestampKey, false)
		if opts.TimestampKey != "" && opts.TimestampKey == opts.SignatureKey {
			bad("TimestampKey and SignatureKey are both %q: they must differ", opts.TimestampKey)
		}
	}
	if opts.TimestampKey != "" && opts.TimestampHeader != "" {
		bad("TimestampKey and TimestampHeader are both set: choose one timestamp source")
	}
	hasTimestamp := opts.TimestampKey != "" || opts.TimestampHeader != ""

	// Signed content must cover what is checked.
	if opts.SignedContentFunc == nil {
		switch opts.SignedContent {
		case SignBody:
			if hasTimestamp {
				bad("a timestamp source is set but SignedContent is SignBody, so the signature would not cover the timestamp: use SignTimestampBody, SignIDTimestampBody or SignedContentFunc, or remove the timestamp source")
			}
		case SignTimestampBody, SignIDTimestampBody:
			if !hasTimestamp {
				bad("SignedContent %v needs a timestamp: set TimestampHeader or TimestampKey", opts.SignedContent)
			}
			if opts.SignedContent == SignIDTimestampBody && opts.EventIDHeader == "" {
				bad("SignedContent %v needs the event ID before the body is trusted: set EventIDHeader (not EventIDPath)", opts.SignedContent)
			}
		default:
			bad("SignedContent %v is unknown: use SignBody, SignTimestampBody, SignIDTimestampBody or SignedContentFunc", opts.SignedContent)
		}
	}

	// Event metadata.
	switch {
	case opts.EventIDHeader == "" && opts.EventIDPath == "":
		bad("no event ID source: set EventIDHeader or EventIDPath")
	case opts.EventIDHeader != "" && opts.EventIDPath != "":
		bad("EventIDHeader and EventIDPath are both set: choose one event ID source")
	}
	if opts.EventTypeHeader != "" && opts.EventTypePath != "" {
		bad("EventTypeHeader and EventTypePath are both set: choose one event type source")
	}
	for _, p := range []struct{ field, path string }{{"EventIDPath", opts.EventIDPath}, {"EventTypePath", opts.EventTypePath}} {
		if p.path != "" && !validJSONPath(p.path) {
			bad("%s %q is not a dotted path: use keys separated by single dots, for example \"data.object.id\"", p.field, p.path)
		}
	}

	if len(problems) > 0 {
		return nil, fmt.Errorf("webhooks: invalid HMAC options for provider %q: %w", provider, errors.Join(problems...))
	}
	return &HMACVerifier{
		provider: provider,
		opts:     opts,
		creds:    creds,
		clock:    clockOrSystem(clock),
		newHash:  newHash,
		format: signatureFormat{
			prefix:       opts.SignaturePrefix,
			itemSep:      opts.ItemSeparator,
			kvSep:        opts.KeyValueSeparator,
			signatureKey: opts.SignatureKey,
			timestampKey: opts.TimestampKey,
			encoding:     opts.Encoding,
			size:         size,
		},
		hasTimestamp: hasTimestamp,
	}, nil
}

// Provider returns the provider name the verifier was created with.
func (v *HMACVerifier) Provider() string { return v.provider }

// Verify implements Verifier. Rejections are *VerificationError values whose
// details name headers and keys but never echo secrets or signatures. An
// error from the CredentialResolver, from DecodeSecret, or a non-rejection
// error from SignedContentFunc is returned wrapped, not as a rejection.
func (v *HMACVerifier) Verify(ctx context.Context, route Route, req *Request) (Verification, error) {
	if req == nil {
		return Verification{}, errors.New("webhooks: HMAC verifier: nil request")
	}
	o := &v.opts

	// Syntax checks: nothing here needs a secret.
	sigValue, rej := singleHeader(req.Header, o.SignatureHeader, ReasonMissingSignature)
	if rej != nil {
		return Verification{}, rej
	}
	parsed, rej := v.format.parse(sigValue, o.SignatureHeader)
	if rej != nil {
		return Verification{}, rej
	}
	if len(req.Body) == 0 && !o.AllowEmptyBody {
		return Verification{}, Reject(ReasonEmptyBody, "the request body is empty")
	}
	var (
		timestamp  string
		occurredAt time.Time
	)
	if v.hasTimestamp {
		if o.TimestampKey != "" {
			if parsed.timestamp == "" {
				return Verification{}, Reject(ReasonMissingTimestamp, "signature header %s has no %q item", o.SignatureHeader, o.TimestampKey)
			}
			timestamp = parsed.timestamp
		} else {
			timestamp, rej = singleHeader(req.Header, o.TimestampHeader, ReasonMissingTimestamp)
			if rej != nil {
				return Verification{}, rej
			}
		}
		t, ok := parseTimestamp(timestamp, o.TimestampFormat)
		if !ok {
			return Verification{}, Reject(ReasonMalformedTime, "the timestamp is not in %v format", o.TimestampFormat)
		}
		occurredAt = t
	}
	var headerID string
	if o.EventIDHeader != "" {
		headerID, rej = singleHeader(req.Header, o.EventIDHeader, ReasonMissingEventID)
		if rej != nil && rej.Reason != ReasonMissingEventID {
			return Verification{}, rej
		}
		if rej != nil && o.SignedContentFunc == nil && o.SignedContent == SignIDTimestampBody {
			return Verification{}, rej
		}
	}

	content, err := v.signedContent(req, timestamp, headerID)
	if err != nil {
		return Verification{}, err
	}

	// Signature check.
	secrets, err := v.creds.Secrets(ctx, route)
	if err != nil {
		return Verification{}, fmt.Errorf("webhooks: HMAC verifier %q: resolving secrets: %w", v.provider, err)
	}
	keyID, matched, tried, err := v.match(secrets, content, parsed.signatures)
	if err != nil {
		return Verification{}, err
	}
	if tried == 0 {
		return Verification{}, Reject(ReasonNoCredentials, "no secret is configured for this route")
	}
	if !matched {
		return Verification{}, Reject(ReasonBadSignature, "no signature in %s matches", o.SignatureHeader)
	}

	// The request is authentic from here on.
	if v.hasTimestamp {
		// Compare instants rather than a Duration, which saturates for
		// timestamps centuries away.
		now := v.clock.Now()
		if occurredAt.Before(now.Add(-o.Tolerance)) {
			return Verification{}, Reject(ReasonTimestampExpired, "the timestamp is more than %v in the past", o.Tolerance)
		}
		if occurredAt.After(now.Add(o.Tolerance)) {
			return Verification{}, Reject(ReasonTimestampExpired, "the timestamp is more than %v in the future", o.Tolerance)
		}
	}
	out := Verification{
		OccurredAt:    occurredAt,
		PayloadSHA256: sha256.Sum256(req.Body),
		KeyID:         keyID,
	}
	var doc *jsonDocument
	if o.EventIDPath != "" || o.EventTypePath != "" {
		doc = &jsonDocument{body: req.Body}
	}
	if o.EventIDHeader != "" {
		out.EventID = headerID
		if out.EventID == "" {
			return Verification{}, Reject(ReasonMissingEventID, "header %s is missing", o.EventIDHeader)
		}
	} else {
		out.EventID, rej = doc.lookup(o.EventIDPath, ReasonMissingEventID, "event ID")
		if rej != nil {
			return Verification{}, rej
		}
	}
	switch {
	case o.EventTypeHeader != "":
		out.EventType, rej = singleHeader(req.Header, o.EventTypeHeader, ReasonMissingEventType)
	case o.EventTypePath != "":
		out.EventType, rej = doc.lookup(o.EventTypePath, ReasonMissingEventType, "event type")
	}
	if rej != nil {
		return Verification{}, rej
	}
	return out, nil
}

// signedContent returns the pieces whose concatenation is the signed bytes.
func (v *HMACVerifier) signedContent(req *Request, timestamp, id string) ([][]byte, error) {
	o := &v.opts
	if o.SignedContentFunc != nil {
		b, err := o.SignedContentFunc(req, timestamp, id)
		if err != nil {
			if vErr, ok := errors.AsType[*VerificationError](err); ok {
				return nil, vErr
			}
			return nil, fmt.Errorf("webhooks: HMAC verifier %q: building signed content: %w", v.provider, err)
		}
		return [][]byte{b}, nil
	}
	dot := []byte{'.'}
	switch o.SignedContent {
	case SignTimestampBody:
		return [][]byte{[]byte(timestamp), dot, req.Body}, nil
	case SignIDTimestampBody:
		return [][]byte{[]byte(id), dot, []byte(timestamp), dot, req.Body}, nil
	}
	return [][]byte{req.Body}, nil
}

// match computes the HMAC of content under each usable secret and compares
// it in constant time with every signature. It returns the ID of the first
// secret that matched, and how many secrets were tried.
func (v *HMACVerifier) match(secrets []Secret, content, signatures [][]byte) (keyID string, matched bool, tried int, err error) {
	for _, s := range secrets {
		key := s.Value
		if v.opts.DecodeSecret != nil && len(key) > 0 {
			key, err = v.opts.DecodeSecret(key)
			if err != nil {
				return "", false, tried, fmt.Errorf("webhooks: HMAC verifier %q: decoding secret %q: %w", v.provider, s.ID, err)
			}
		}
		if len(key) == 0 {
			continue
		}
		tried++
		mac := hmac.New(v.newHash, key)
		for _, piece := range content {
			mac.Write(piece)
		}
		expected := mac.Sum(nil)
		for _, sig := range signatures {
			if hmac.Equal(expected, sig) {
				return s.ID, true, tried, nil
			}
		}
	}
	return "", false, tried, nil
}

// singleHeader returns the one value of header name. An absent or empty
// header is rejected with the missing reason; a header sent more than once
// with ReasonMalformedHeader, since the two copies could disagree.
func singleHeader(h http.Header, name string, missing Reason) (string, *VerificationError) {
	values := h.Values(name)
	switch {
	case len(values) > 1:
		return "", Reject(ReasonMalformedHeader, "header %s is sent %d times", name, len(values))
	case len(values) == 0 || strings.TrimSpace(values[0]) == "":
		return "", Reject(missing, "header %s is missing", name)
	}
	return strings.TrimSpace(values[0]), nil
}

// maxUnixSeconds is 9999-12-31T23:59:59Z, the last instant RFC 3339 can
// write. Larger Unix timestamps are malformed rather than far in the future.
const maxUnixSeconds = 253402300799

// parseTimestamp parses a timestamp in the given format. Unix forms must be
// plain decimal digits, up to the end of year 9999.
func parseTimestamp(s string, f TimestampFormat) (time.Time, bool) {
	switch f {
	case TimestampUnixSeconds, TimestampUnixMillis:
		if s == "" || strings.TrimLeft(s, "0123456789") != "" {
			return time.Time{}, false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, false
		}
		if f == TimestampUnixMillis {
			if n > maxUnixSeconds*1000+999 {
				return time.Time{}, false
			}
			return time.UnixMilli(n).UTC(), true
		}
		if n > maxUnixSeconds {
			return time.Time{}, false
		}
		return time.Unix(n, 0).UTC(), true
	case TimestampRFC3339:
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return time.Time{}, false
		}
		return t.UTC(), true
	}
	return time.Time{}, false
}

// signatureFormat describes the signature header's syntax. It is derived
// from validated HMACOptions.
type signatureFormat struct {
	prefix       string // single-value form
	itemSep      string // list form when non-empty
	kvSep        string
	signatureKey string
	timestampKey string
	encoding     SignatureEncoding
	size         int // digest length in bytes
}

// parsedSignatureHeader is the content of a signature header.
type parsedSignatureHeader struct {
	// signatures holds the decoded digests, each of the algorithm's size,
	// in header order. Never empty after a successful parse.
	signatures [][]byte
	// timestamp is the raw value of the timestamp item, "" when the format
	// has no timestamp key or the item is absent.
	timestamp string
}

// parse reads a signature header value. headerName is used in rejection
// details only. It never panics, and its rejections never contain the value.
func (f *signatureFormat) parse(value, headerName string) (parsedSignatureHeader, *VerificationError) {
	var out parsedSignatureHeader
	value = strings.Trim(value, " \t")
	if value == "" {
		return out, Reject(ReasonMissingSignature, "header %s is empty", headerName)
	}
	if f.itemSep == "" {
		rest, ok := strings.CutPrefix(value, f.prefix)
		if !ok {
			return out, Reject(ReasonMalformedHeader, "header %s does not start with %q", headerName, f.prefix)
		}
		sig, ok := f.decode(rest)
		if !ok {
			return out, Reject(ReasonMalformedHeader, "header %s does not hold a %d-byte %v digest", headerName, f.size, f.encoding)
		}
		out.signatures = [][]byte{sig}
		return out, nil
	}
	sawTimestamp := false
	for item := range strings.SplitSeq(value, f.itemSep) {
		item = strings.Trim(item, " \t")
		if item == "" {
			continue
		}
		key, val, ok := strings.Cut(item, f.kvSep)
		if !ok {
			return parsedSignatureHeader{}, Reject(ReasonMalformedHeader, "header %s has an item without %q", headerName, f.kvSep)
		}
		key, val = strings.Trim(key, " \t"), strings.Trim(val, " \t")
		switch {
		case key == f.signatureKey:
			sig, ok := f.decode(val)
			if !ok {
				return parsedSignatureHeader{}, Reject(ReasonMalformedHeader, "header %s has a %q item that is not a %d-byte %v digest", headerName, f.signatureKey, f.size, f.encoding)
			}
			out.signatures = append(out.signatures, sig)
		case f.timestampKey != "" && key == f.timestampKey:
			if sawTimestamp {
				return parsedSignatureHeader{}, Reject(ReasonMalformedHeader, "header %s has more than one %q item", headerName, f.timestampKey)
			}
			sawTimestamp = true
			out.timestamp = val
		}
	}
	if len(out.signatures) == 0 {
		return parsedSignatureHeader{}, Reject(ReasonMissingSignature, "header %s has no %q item", headerName, f.signatureKey)
	}
	return out, nil
}

// decode decodes one signature value and checks its length.
func (f *signatureFormat) decode(s string) ([]byte, bool) {
	var (
		b   []byte
		err error
	)
	switch f.encoding {
	case EncodingHex:
		if len(s) != hex.EncodedLen(f.size) {
			return nil, false
		}
		b, err = hex.DecodeString(s)
	case EncodingBase64:
		if len(s) > base64.StdEncoding.EncodedLen(f.size) {
			return nil, false
		}
		b, err = decodeBase64(s)
	default:
		return nil, false
	}
	if err != nil || len(b) != f.size {
		return nil, false
	}
	return b, true
}

// decodeBase64 accepts the standard and the URL-safe alphabets, padded or
// not, and nothing else (the base64 package would skip CR and LF).
func decodeBase64(s string) ([]byte, error) {
	std, url := false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '=':
		case c == '+' || c == '/':
			std = true
		case c == '-' || c == '_':
			url = true
		default:
			return nil, errors.New("invalid base64 character")
		}
	}
	if std && url {
		return nil, errors.New("mixed base64 alphabets")
	}
	enc := base64.StdEncoding
	if url {
		enc = base64.URLEncoding
	}
	if !strings.HasSuffix(s, "=") {
		enc = enc.WithPadding(base64.NoPadding)
	}
	return enc.Strict().DecodeString(s)
}

// isHeaderName reports whether s is a valid HTTP field name (an RFC 9110
// token).
func isHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validJSONPath reports whether p is a dotted path of non-empty segments.
func validJSONPath(p string) bool {
	for seg := range strings.SplitSeq(p, ".") {
		if seg == "" {
			return false
		}
	}
	return p != ""
}

// jsonDocument parses a verified body once, on first lookup.
type jsonDocument struct {
	body   []byte
	parsed bool
	root   any
	err    bool
}

// lookup returns the string or number at a dotted path. A missing, null or
// empty value is rejected with the missing reason; a body that is not JSON,
// or a value of another kind, with ReasonMalformedPayload.
func (d *jsonDocument) lookup(path string, missing Reason, what string) (string, *VerificationError) {
	if !d.parsed {
		d.parsed = true
		dec := json.NewDecoder(bytes.NewReader(d.body))
		dec.UseNumber()
		if err := dec.Decode(&d.root); err != nil {
			d.err = true
		} else if _, err := dec.Token(); err != io.EOF {
			d.err = true // trailing data after the JSON value
		}
	}
	if d.err {
		return "", Reject(ReasonMalformedPayload, "the body is not a single JSON value, so the %s at %q cannot be read", what, path)
	}
	cur := d.root
	for seg := range strings.SplitSeq(path, ".") {
		switch node := cur.(type) {
		case map[string]any:
			cur = node[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(node) || strings.TrimLeft(seg, "0123456789") != "" {
				cur = nil
			} else {
				cur = node[i]
			}
		default:
			cur = nil
		}
		if cur == nil {
			return "", Reject(missing, "the body has no %s at %q", what, path)
		}
	}
	switch val := cur.(type) {
	case string:
		if val == "" {
			return "", Reject(missing, "the %s at %q is empty", what, path)
		}
		return val, nil
	case json.Number:
		return val.String(), nil
	}
	return "", Reject(ReasonMalformedPayload, "the %s at %q is not a string or a number", what, path)
}
