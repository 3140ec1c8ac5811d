package webhooks

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"hash"
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

// DefaultSignedContentSeparator joins the parts of the signed content (the
// prefix, the ID, the timestamp and the body) when
// HMACOptions.SignedContentSeparator is empty.
const DefaultSignedContentSeparator = "."

// HMACOptions configures an HMACVerifier. The zero value of each field is its
// documented default; SignatureHeader and one event ID source are required.
// NewHMACVerifier validates the options and reports every problem it finds.
// The presets (StripeOptions, GitHubOptions, StandardWebhooksOptions,
// SlackOptions, ShopifyOptions, PaddleOptions, LinearOptions, ZoomOptions)
// return filled-in options that may be adjusted field by field.
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
//
// A timestamp counts only when the signature covers it: a header or list
// timestamp needs a signed content that includes it, and a timestamp read
// from the body (TimestampPath) is covered because the body is. Nothing
// about the payload beyond the configured ID, type and timestamp is
// checked, so a new payload version never fails verification.
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
	// header, for example "t" for Stripe. At most one of TimestampKey,
	// TimestampHeader and TimestampPath may be set. Defaults to none.
	TimestampKey string

	// TimestampHeader is the name of a separate header that carries the
	// signing timestamp, for example "Webhook-Timestamp". Defaults to none.
	//
	// When a timestamp source (this, TimestampKey or TimestampPath) is
	// set, the timestamp is required, the signature must cover it, and it
	// must lie within Tolerance of the clock. The window is checked only
	// after the signature verified. A header or list timestamp needs a
	// signed content that includes it (SignTimestampBody,
	// SignIDTimestampBody or a SignedContentFunc).
	TimestampHeader string

	// TimestampPath is a dotted path to the signing timestamp in the JSON
	// body, for example "webhookTimestamp" for Linear, with the same
	// syntax as EventIDPath. The value may be a string or a number in
	// TimestampFormat. The body is signed, so the timestamp is too; it is
	// read only after the signature verified, and an absent timestamp is
	// rejected with ReasonMissingTimestamp. Needs SignedContent SignBody
	// (or a SignedContentFunc). Defaults to none.
	TimestampPath string

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

	// SignedContentPrefix, when set, is a fixed first part of the signed
	// content, followed by SignedContentSeparator: Slack and Zoom sign
	// "v0:" + timestamp + ":" + body, which is SignTimestampBody with
	// prefix "v0" and separator ":". Only for SignTimestampBody and
	// SignIDTimestampBody. Defaults to none.
	SignedContentPrefix string

	// SignedContentSeparator joins the parts of a timestamped signed
	// content: ":" for Paddle's ts + ":" + body. Only for
	// SignTimestampBody and SignIDTimestampBody. Defaults to
	// DefaultSignedContentSeparator (".").
	SignedContentSeparator string

	// SignedContentFunc, when set, builds the signed bytes instead of
	// SignedContent, for layouts the other fields cannot describe. It is
	// called before the signature is verified, with the raw timestamp (""
	// when no header or list timestamp is configured) and the raw value of
	// EventIDHeader ("" when it is absent or the ID comes from elsewhere).
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

	// SecretPrefix is the text the provider's secrets start with, such as
	// "whsec_" for Stripe and Standard Webhooks. A secret that is exactly
	// this prefix (a truncated copy and paste) is skipped like an empty
	// one, so a route with no other secret is rejected with
	// ReasonNoCredentials instead of being verified with a guessable key.
	// Secrets without the prefix are still used. Defaults to none.
	SecretPrefix string

	// HeaderFallbacks maps a configured header name (SignatureHeader,
	// TimestampHeader, EventIDHeader or EventTypeHeader) to another name
	// that carries the same value when the first is absent, for providers
	// that use two sets of names: Standard Webhooks' "Webhook-Id" is
	// "Svix-Id" on Svix's default deployment. A request that carries the
	// configured name is read by that name only. Defaults to none.
	HeaderFallbacks map[string]string

	// EventIDHeader is the name of the header that carries the event ID,
	// for example "X-GitHub-Delivery". Exactly one of EventIDHeader,
	// EventIDPath and EventIDFunc must be set.
	EventIDHeader string

	// EventIDPath is a dotted path to the event ID in the JSON body, for
	// example "id" or "data.object.id". Object keys are separated by ".";
	// a segment of decimal digits also indexes an array. The value must be
	// a string or a number. The body is parsed only after the signature
	// verified. Exactly one of EventIDHeader, EventIDPath and EventIDFunc
	// must be set.
	EventIDPath string

	// EventIDFunc computes the event ID after the signature verified, for
	// providers that send none (Zoom). It gets the request and the
	// verification so far (EventType, OccurredAt, PayloadSHA256 and KeyID
	// are set). An empty ID is rejected with ReasonMissingEventID; a
	// *VerificationError it returns is passed on as the rejection, any
	// other error is returned wrapped. Exactly one of EventIDHeader,
	// EventIDPath and EventIDFunc must be set.
	EventIDFunc func(req *Request, v Verification) (string, error)

	// EventTypeHeader is the name of the header that carries the event
	// type, for example "X-GitHub-Event". At most one of EventTypeHeader
	// and EventTypePath may be set; when neither is, EventType is "".
	// Defaults to none.
	EventTypeHeader string

	// EventTypePath is a dotted path to the event type in the JSON body,
	// for example "type". Same syntax as EventIDPath. Defaults to none.
	EventTypePath string

	// EventTypeOptional makes the event type a best effort: when its
	// header or path is missing, or the body is not JSON, EventType is ""
	// instead of a rejection. For schemes where the type is only a
	// recommendation (Standard Webhooks). Defaults to false.
	EventTypeOptional bool

	// EventTypeSuffixPath, when set, is a dotted path in the JSON body
	// whose string value is appended to the event type after a ".":
	// GitHub's X-GitHub-Event "pull_request" with the body's "action"
	// "opened" becomes "pull_request.opened". When the body is not JSON
	// or has no non-empty string there, the type is left as it is: the
	// suffix never rejects a request. Needs EventTypeHeader or
	// EventTypePath. Defaults to none.
	EventTypeSuffixPath string

	// Handshake, when set, is called after the signature (and timestamp,
	// if any) verified and before the event ID and type are read. It may
	// answer a provider challenge: a non-nil response becomes
	// Verification.Handshake, and the gateway writes it and stores
	// nothing. It gets the verification so far (OccurredAt,
	// PayloadSHA256, KeyID) and the HMAC key that verified the request,
	// for challenges that must be answered with it (Zoom's
	// endpoint.url_validation); it must neither keep nor reveal the key.
	// Returning nil, nil lets the request go on as an event. A
	// *VerificationError it returns is passed on as the rejection; any
	// other error is returned wrapped. An unsigned challenge never reaches
	// it. Defaults to nil.
	Handshake func(req *Request, v Verification, key []byte) (*HandshakeResponse, error)

	// AllowEmptyBody accepts requests with an empty body. Defaults to
	// false: an empty body is rejected with ReasonEmptyBody.
	AllowEmptyBody bool
}

// HMACVerifier verifies webhooks signed with an HMAC of the request, as
// configured by HMACOptions. It is safe for concurrent use.
//
// Verify checks, in this order: the signature header's syntax, the body,
// the presence and syntax of a header or list timestamp, the presence of an
// event ID that the signed content includes; then it asks the
// CredentialResolver for secrets and compares signatures in constant time;
// only after a signature matched does it parse the JSON body, check the
// timestamp window, offer the request to the Handshake hook and read the
// event ID and type. A request with a bad signature is therefore never told
// whether its timestamp or payload would have passed.
type HMACVerifier struct {
	provider string
	opts     HMACOptions
	creds    CredentialResolver
	clock    Clock
	newHash  func() hash.Hash
	format   signatureFormat
	// fallbacks maps canonical configured header names to their
	// canonical fallback names.
	fallbacks map[string]string
	// headerTimestamp is true when the timestamp comes from a header or
	// the signature header's list; hasTimestamp when any timestamp
	// source is configured.
	headerTimestamp bool
	hasTimestamp    bool
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
	checkProviderAndCreds(bad, provider, creds)
	checkStaticCredentials(creds, "secret", bad, func(value []byte) error {
		switch {
		case opts.SecretPrefix != "" && string(value) == opts.SecretPrefix:
			return fmt.Errorf("it is only the prefix %q: paste the whole secret", opts.SecretPrefix)
		case opts.DecodeSecret != nil:
			// DecodeSecret's own error could quote the secret.
			if k, err := opts.DecodeSecret(value); err != nil || len(k) == 0 {
				return errors.New("it is not in the provider's format (DecodeSecret refused it)")
			}
		}
		return nil
	})
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
	sources := 0
	for _, s := range []string{opts.TimestampKey, opts.TimestampHeader, opts.TimestampPath} {
		if s != "" {
			sources++
		}
	}
	if sources > 1 {
		bad("more than one of TimestampKey, TimestampHeader and TimestampPath is set: choose one timestamp source")
	}
	headerTimestamp := opts.TimestampKey != "" || opts.TimestampHeader != ""
	hasTimestamp := headerTimestamp || opts.TimestampPath != ""

	// Signed content must cover what is checked.
	if opts.SignedContentFunc == nil {
		switch opts.SignedContent {
		case SignBody:
			if headerTimestamp {
				bad("a timestamp source is set but SignedContent is SignBody, so the signature would not cover the timestamp: use SignTimestampBody, SignIDTimestampBody or SignedContentFunc, or remove the timestamp source")
			}
			if opts.SignedContentPrefix != "" || opts.SignedContentSeparator != "" {
				bad("SignedContentPrefix or SignedContentSeparator is set but SignedContent is SignBody, which has no parts to join")
			}
		case SignTimestampBody, SignIDTimestampBody:
			if !headerTimestamp {
				bad("SignedContent %v needs a timestamp in a header or the signature header: set TimestampHeader or TimestampKey", opts.SignedContent)
			}
			if opts.SignedContent == SignIDTimestampBody && opts.EventIDHeader == "" {
				bad("SignedContent %v needs the event ID before the body is trusted: set EventIDHeader (not EventIDPath or EventIDFunc)", opts.SignedContent)
			}
		default:
			bad("SignedContent %v is unknown: use SignBody, SignTimestampBody, SignIDTimestampBody or SignedContentFunc", opts.SignedContent)
		}
	} else if opts.SignedContentPrefix != "" || opts.SignedContentSeparator != "" {
		bad("SignedContentPrefix or SignedContentSeparator is set with SignedContentFunc, which builds the signed content itself")
	}
	if opts.SignedContentSeparator == "" {
		opts.SignedContentSeparator = DefaultSignedContentSeparator
	}

	// Event metadata.
	idSources := 0
	if opts.EventIDHeader != "" {
		idSources++
	}
	if opts.EventIDPath != "" {
		idSources++
	}
	if opts.EventIDFunc != nil {
		idSources++
	}
	switch {
	case idSources == 0:
		bad("no event ID source: set EventIDHeader, EventIDPath or EventIDFunc")
	case idSources > 1:
		bad("more than one of EventIDHeader, EventIDPath and EventIDFunc is set: choose one event ID source")
	}
	if opts.EventTypeHeader != "" && opts.EventTypePath != "" {
		bad("EventTypeHeader and EventTypePath are both set: choose one event type source")
	}
	if opts.EventTypeSuffixPath != "" && opts.EventTypeHeader == "" && opts.EventTypePath == "" {
		bad("EventTypeSuffixPath is set without an event type: set EventTypeHeader or EventTypePath")
	}
	for _, p := range []struct{ field, path string }{
		{"EventIDPath", opts.EventIDPath},
		{"EventTypePath", opts.EventTypePath},
		{"EventTypeSuffixPath", opts.EventTypeSuffixPath},
		{"TimestampPath", opts.TimestampPath},
	} {
		if p.path != "" && !validJSONPath(p.path) {
			bad("%s %q is not a dotted path: use keys separated by single dots, for example \"data.object.id\"", p.field, p.path)
		}
	}

	// Header fallbacks.
	configured := make(map[string]string) // canonical name -> field
	for _, h := range []struct{ field, name string }{
		{"SignatureHeader", opts.SignatureHeader},
		{"TimestampHeader", opts.TimestampHeader},
		{"EventIDHeader", opts.EventIDHeader},
		{"EventTypeHeader", opts.EventTypeHeader},
	} {
		if h.name != "" {
			configured[http.CanonicalHeaderKey(h.name)] = h.field
		}
	}
	var fallbacks map[string]string
	if len(opts.HeaderFallbacks) > 0 {
		fallbacks = make(map[string]string, len(opts.HeaderFallbacks))
		for name, alt := range opts.HeaderFallbacks {
			cname, calt := http.CanonicalHeaderKey(name), http.CanonicalHeaderKey(alt)
			switch {
			case configured[cname] == "":
				bad("HeaderFallbacks has a fallback for %q, which is none of SignatureHeader, TimestampHeader, EventIDHeader and EventTypeHeader", name)
			case !isHeaderName(alt):
				bad("HeaderFallbacks[%q] %q is not a valid header name", name, alt)
			case configured[calt] != "":
				bad("HeaderFallbacks[%q] is %q, which is already the %s", name, alt, configured[calt])
			case fallbacks[cname] != "":
				bad("HeaderFallbacks has two fallbacks for %q", cname)
			default:
				fallbacks[cname] = calt
			}
		}
	}

	if len(problems) > 0 {
		return nil, fmt.Errorf("webhooks: invalid HMAC options for provider %q: %w", provider, errors.Join(problems...))
	}
	opts.HeaderFallbacks = nil // the verifier keeps its own copy
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
		fallbacks:       fallbacks,
		headerTimestamp: headerTimestamp,
		hasTimestamp:    hasTimestamp,
	}, nil
}

// Provider returns the provider name the verifier was created with.
func (v *HMACVerifier) Provider() string { return v.provider }

// Verify implements Verifier. Rejections are *VerificationError values whose
// details name headers and keys but never echo secrets or signatures. An
// error from the CredentialResolver or DecodeSecret, or a non-rejection
// error from SignedContentFunc, EventIDFunc or Handshake, is returned
// wrapped, not as a rejection.
func (v *HMACVerifier) Verify(ctx context.Context, route Route, req *Request) (Verification, error) {
	if req == nil {
		return Verification{}, errors.New("webhooks: HMAC verifier: nil request")
	}
	o := &v.opts

	// Syntax checks: nothing here needs a secret.
	sigHeaderName := fallbackName(req.Header, o.SignatureHeader, v.fallbacks)
	sigValue, rej := singleHeader(req.Header, sigHeaderName, ReasonMissingSignature)
	if rej != nil {
		return Verification{}, rej
	}
	parsed, rej := v.format.parse(sigValue, sigHeaderName)
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
	if v.headerTimestamp {
		if o.TimestampKey != "" {
			if parsed.timestamp == "" {
				return Verification{}, Reject(ReasonMissingTimestamp, "signature header %s has no %q item", sigHeaderName, o.TimestampKey)
			}
			timestamp = parsed.timestamp
		} else {
			timestamp, rej = v.header(req.Header, o.TimestampHeader, ReasonMissingTimestamp)
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
		headerID, rej = v.header(req.Header, o.EventIDHeader, ReasonMissingEventID)
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
	keyID, key, tried, err := v.match(secrets, content, parsed.signatures)
	if err != nil {
		return Verification{}, err
	}
	if tried == 0 {
		return Verification{}, Reject(ReasonNoCredentials, "no usable secret is configured for this route")
	}
	if key == nil {
		return Verification{}, Reject(ReasonBadSignature, "no signature in %s matches", sigHeaderName)
	}

	// The request is authentic from here on.
	doc := &jsonDocument{body: req.Body}
	if o.TimestampPath != "" {
		raw, rej := doc.lookup(o.TimestampPath, ReasonMissingTimestamp, "timestamp")
		if rej != nil {
			return Verification{}, rej
		}
		t, ok := parseTimestamp(raw, o.TimestampFormat)
		if !ok {
			return Verification{}, Reject(ReasonMalformedTime, "the timestamp at %q is not in %v format", o.TimestampPath, o.TimestampFormat)
		}
		occurredAt = t
	}
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
	if o.Handshake != nil {
		resp, err := o.Handshake(req, out, key)
		if err != nil {
			return Verification{}, v.hookError("answering a handshake", err)
		}
		if resp != nil {
			out.Handshake = resp
			return out, nil
		}
	}

	switch {
	case o.EventIDHeader != "":
		out.EventID = headerID
		if out.EventID == "" {
			return Verification{}, Reject(ReasonMissingEventID, "header %s is missing", o.EventIDHeader)
		}
	case o.EventIDPath != "":
		out.EventID, rej = doc.lookup(o.EventIDPath, ReasonMissingEventID, "event ID")
		if rej != nil {
			return Verification{}, rej
		}
	}
	switch {
	case o.EventTypeHeader != "":
		out.EventType, rej = v.header(req.Header, o.EventTypeHeader, ReasonMissingEventType)
	case o.EventTypePath != "":
		out.EventType, rej = doc.lookup(o.EventTypePath, ReasonMissingEventType, "event type")
	}
	if rej != nil && o.EventTypeOptional {
		out.EventType, rej = "", nil
	}
	if rej != nil {
		return Verification{}, rej
	}
	if o.EventTypeSuffixPath != "" {
		if suffix, ok := doc.lookupString(o.EventTypeSuffixPath); ok {
			out.EventType += "." + suffix
		}
	}
	if o.EventIDFunc != nil {
		id, err := o.EventIDFunc(req, out)
		if err != nil {
			return Verification{}, v.hookError("computing the event ID", err)
		}
		if id == "" {
			return Verification{}, Reject(ReasonMissingEventID, "the request has no event ID")
		}
		out.EventID = id
	}
	return out, nil
}

// hookError passes a *VerificationError from a hook on as the rejection and
// wraps any other error.
func (v *HMACVerifier) hookError(doing string, err error) error {
	if vErr, ok := errors.AsType[*VerificationError](err); ok {
		return vErr
	}
	return fmt.Errorf("webhooks: HMAC verifier %q: %s: %w", v.provider, doing, err)
}

// header is singleHeader for a configured header, honouring its fallback.
func (v *HMACVerifier) header(h http.Header, name string, missing Reason) (string, *VerificationError) {
	return singleHeader(h, fallbackName(h, name, v.fallbacks), missing)
}

// signedContent returns the pieces whose concatenation is the signed bytes:
// for the timestamped layouts, the parts before the body in one piece, then
// the body, which is never copied.
func (v *HMACVerifier) signedContent(req *Request, timestamp, id string) ([][]byte, error) {
	o := &v.opts
	if o.SignedContentFunc != nil {
		b, err := o.SignedContentFunc(req, timestamp, id)
		if err != nil {
			return nil, v.hookError("building signed content", err)
		}
		return [][]byte{b}, nil
	}
	if o.SignedContent == SignBody {
		return [][]byte{req.Body}, nil
	}
	sep := o.SignedContentSeparator
	head := make([]byte, 0, len(o.SignedContentPrefix)+len(id)+len(timestamp)+3*len(sep))
	if o.SignedContentPrefix != "" {
		head = append(append(head, o.SignedContentPrefix...), sep...)
	}
	if o.SignedContent == SignIDTimestampBody {
		head = append(append(head, id...), sep...)
	}
	head = append(append(head, timestamp...), sep...)
	return [][]byte{head, req.Body}, nil
}

// match computes the HMAC of content under each usable secret and compares
// it in constant time with every signature. It returns the ID and key of
// the first secret that matched (key is nil when none did), and how many
// secrets were usable.
func (v *HMACVerifier) match(secrets []Secret, content, signatures [][]byte) (keyID string, key []byte, tried int, err error) {
	for _, s := range secrets {
		k := s.Value
		if len(k) == 0 || (v.opts.SecretPrefix != "" && string(k) == v.opts.SecretPrefix) {
			continue
		}
		if v.opts.DecodeSecret != nil {
			k, err = v.opts.DecodeSecret(k)
			if err != nil {
				return "", nil, tried, fmt.Errorf("webhooks: HMAC verifier %q: decoding secret %q: %w", v.provider, s.ID, err)
			}
		}
		if len(k) == 0 {
			continue
		}
		tried++
		mac := hmac.New(v.newHash, k)
		for _, piece := range content {
			mac.Write(piece)
		}
		expected := mac.Sum(nil)
		for _, sig := range signatures {
			if hmac.Equal(expected, sig) {
				return s.ID, k, tried, nil
			}
		}
	}
	return "", nil, tried, nil
}

// Format prints the verifier's type and provider only, whatever the verb:
// the secrets it holds never reach output through fmt or slog.
func (v *HMACVerifier) Format(f fmt.State, _ rune) { formatVerifier(f, "HMACVerifier", v.provider) }
