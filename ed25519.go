package webhooks

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxEd25519Signatures bounds the signatures an Ed25519Verifier checks in
// one request. Each check costs tens of microseconds for every key, so a
// header with more signature items than this is rejected with
// ReasonMalformedHeader rather than verified.
const MaxEd25519Signatures = 8

// Ed25519SignedContent names the bytes an Ed25519 signature covers.
type Ed25519SignedContent int

// Signed content layouts for Ed25519Options.SignedContent. The zero value
// is Ed25519SignBody.
const (
	// Ed25519SignBody signs the raw body only, the default. It cannot
	// cover a timestamp.
	Ed25519SignBody Ed25519SignedContent = iota
	// Ed25519SignTimestampBody signs the timestamp immediately followed by
	// the body, with nothing between them (Discord).
	Ed25519SignTimestampBody
	// Ed25519SignIDTimestampBody signs id + "." + timestamp + "." + body
	// (Standard Webhooks v1a). The ID must come from a header.
	Ed25519SignIDTimestampBody
)

// String returns a short description such as "timestamp+body".
func (c Ed25519SignedContent) String() string {
	switch c {
	case Ed25519SignBody:
		return "body"
	case Ed25519SignTimestampBody:
		return "timestamp+body"
	case Ed25519SignIDTimestampBody:
		return "id.timestamp.body"
	}
	return "Ed25519SignedContent(" + strconv.Itoa(int(c)) + ")"
}

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
		key, err = decodeBase64(s)
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
// Webhooks' "v1a,<base64> v1,<base64>"), as for HMACOptions; items whose key
// is not SignatureKey are ignored. Any signature that verifies under any
// key verifies the request.
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
	// header. Defaults to DefaultKeyValueSeparator ("=") for list headers.
	KeyValueSeparator string

	// SignatureKey is the key of the signature items in a list header, for
	// example "v1a". Required for list headers; not allowed otherwise.
	SignatureKey string

	// Encoding is how the 64-byte signature is written. Defaults to
	// EncodingHex.
	Encoding SignatureEncoding

	// TimestampHeader is the name of the header that carries the signing
	// timestamp. Required when SignedContent includes the timestamp, and
	// allowed only then: a timestamp the signature does not cover proves
	// nothing. Defaults to none.
	TimestampHeader string

	// TimestampFormat is how the timestamp is written. Defaults to
	// TimestampUnixSeconds.
	TimestampFormat TimestampFormat

	// Tolerance is how far the signed timestamp may be from the clock, in
	// the past or in the future; farther is rejected with
	// ReasonTimestampExpired, after the signature verified. Must not be
	// negative. Defaults to DefaultTolerance (5 minutes).
	Tolerance time.Duration

	// SignedContent is the layout of the signed bytes. Defaults to
	// Ed25519SignBody.
	SignedContent Ed25519SignedContent

	// PublicKeyFormat is how the public keys from the CredentialResolver
	// are written. A key that does not decode to 32 bytes is a
	// configuration error: Verify returns it wrapped (the gateway answers
	// 503), naming the key's ID only. Defaults to Ed25519KeyHex.
	PublicKeyFormat Ed25519KeyFormat

	// HeaderFallbacks maps a configured header name (SignatureHeader,
	// TimestampHeader, EventIDHeader or EventTypeHeader) to another name
	// that carries the same value when the first is absent, as for
	// HMACOptions: "Webhook-Signature" to "Svix-Signature". A request that
	// carries the configured name is read by that name only. Defaults to
	// none.
	HeaderFallbacks map[string]string

	// EventIDHeader is the name of the header that carries the event ID.
	// At most one of EventIDHeader and EventIDPath may be set, and one of
	// them or EventIDFromBody must be.
	EventIDHeader string

	// EventIDPath is a dotted path to the event ID in the JSON body, with
	// the syntax of HMACOptions.EventIDPath, read after the signature
	// verified.
	EventIDPath string

	// EventIDFromBody uses BodySHA256ID(body) as the event ID when no other
	// source is set or the configured one is absent, for providers that
	// send no ID. See TokenOptions.EventIDFromBody for the trade-off.
	// Defaults to false.
	EventIDFromBody bool

	// EventTypeHeader is the name of the header that carries the event
	// type. Defaults to none.
	EventTypeHeader string

	// EventTypePath is a dotted path to the event type in the JSON body.
	// Defaults to none.
	EventTypePath string

	// Handshake, when set, is called after the signature and the
	// timestamp window verified and before the event ID and type are read.
	// A non-nil response answers a provider challenge (Discord's PING): it
	// becomes Verification.Handshake, and the gateway writes it and stores
	// nothing. It gets the verification so far (OccurredAt, PayloadSHA256,
	// KeyID). Returning nil, nil lets the request go on as an event. A
	// *VerificationError it returns is passed on as the rejection; any
	// other error is returned wrapped. An unsigned challenge never reaches
	// it. Defaults to nil.
	Handshake func(req *Request, v Verification) (*HandshakeResponse, error)

	// AllowEmptyBody accepts requests with an empty body. Defaults to
	// false: an empty body is rejected with ReasonEmptyBody.
	AllowEmptyBody bool
}

// DiscordInteractionsOptions returns the options for Discord interactions
// received over HTTP (an app's Interactions Endpoint URL). Discord signs
// the X-Signature-Timestamp value immediately followed by the raw body with
// the app's Ed25519 key; X-Signature-Ed25519 holds the signature in hex.
// The public key is the hex string on the app's General Information page.
// The event ID is the interaction's "id" and the type its numeric "type"
// ("2" for an application command). Discord documents no tolerance; the
// timestamp must lie within DefaultTolerance of the clock either way.
//
// Discord's PING (type 1), sent when the URL is saved and during Discord's
// routine security checks, is answered {"type":1} once its signature
// verified and is not stored; an unsigned or badly signed PING is refused
// with 401, as Discord requires.
//
// Discord expects the answer to every other interaction to be an
// interaction response, sent within 3 seconds. The Gateway answers an
// accepted webhook with its own small JSON body, which Discord does not
// understand as one, so serve interactions with VerifyMiddleware and a
// handler of your own (answering, for example, a deferred response) unless
// the gateway can be told what to answer.
//
// See https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint.
func DiscordInteractionsOptions() Ed25519Options {
	return Ed25519Options{
		SignatureHeader: "X-Signature-Ed25519",
		Encoding:        EncodingHex,
		TimestampHeader: "X-Signature-Timestamp",
		TimestampFormat: TimestampUnixSeconds,
		SignedContent:   Ed25519SignTimestampBody,
		PublicKeyFormat: Ed25519KeyHex,
		EventIDPath:     "id",
		EventTypePath:   "type",
		Handshake:       discordInteractionPing,
	}
}

// DiscordWebhookEventsOptions returns the options for Discord webhook
// events (an app's Webhook Events URL), which are signed as interactions
// are (see DiscordInteractionsOptions). Their PING has "type": 0 and is
// answered 204 with no body once its signature verified. Events carry no
// ID, so the event ID is BodySHA256ID(body) (see TokenOptions.EventIDFromBody);
// the type is the inner "event.type", such as "APPLICATION_AUTHORIZED".
//
// See https://discord.com/developers/docs/events/webhook-events.
func DiscordWebhookEventsOptions() Ed25519Options {
	return Ed25519Options{
		SignatureHeader: "X-Signature-Ed25519",
		Encoding:        EncodingHex,
		TimestampHeader: "X-Signature-Timestamp",
		TimestampFormat: TimestampUnixSeconds,
		SignedContent:   Ed25519SignTimestampBody,
		PublicKeyFormat: Ed25519KeyHex,
		EventIDFromBody: true,
		EventTypePath:   "event.type",
		Handshake:       discordWebhookEventPing,
	}
}

// StandardWebhooksEd25519Options returns the options for the asymmetric
// "v1a" scheme of Standard Webhooks: webhook-signature holds a
// space-separated list of "v1a,<base64 Ed25519 signature>" items (any "v1"
// HMAC items are ignored) of "<webhook-id>.<webhook-timestamp>.<body>",
// webhook-timestamp is in Unix seconds, and webhook-id is the event ID. The
// public keys are "whpk_" and base64. The svix-* names are read when the
// webhook-* ones are absent. The timestamp must lie within DefaultTolerance
// of the clock.
//
// See https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md#signature-scheme.
func StandardWebhooksEd25519Options() Ed25519Options {
	return Ed25519Options{
		SignatureHeader:   "Webhook-Signature",
		ItemSeparator:     " ",
		KeyValueSeparator: ",",
		SignatureKey:      "v1a",
		Encoding:          EncodingBase64,
		TimestampHeader:   "Webhook-Timestamp",
		TimestampFormat:   TimestampUnixSeconds,
		SignedContent:     Ed25519SignIDTimestampBody,
		PublicKeyFormat:   Ed25519KeyStandardWebhooks,
		HeaderFallbacks: map[string]string{
			"Webhook-Signature": "Svix-Signature",
			"Webhook-Timestamp": "Svix-Timestamp",
			"Webhook-Id":        "Svix-Id",
		},
		EventIDHeader: "Webhook-Id",
	}
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
	provider  string
	opts      Ed25519Options
	creds     CredentialResolver
	clock     Clock
	format    signatureFormat
	fallbacks map[string]string
	events    eventSource
}

// NewEd25519Verifier returns a verifier for the named provider (used in
// error messages) with the given options, taking public keys from creds;
// several keys allow rotation. A nil clock means SystemClock. It returns an
// error describing every invalid option, and every static key (StaticSecrets)
// that is empty or does not decode; keys from other resolvers are checked on
// each request.
func NewEd25519Verifier(provider string, opts Ed25519Options, creds CredentialResolver, clock Clock) (*Ed25519Verifier, error) {
	if opts.Tolerance == 0 {
		opts.Tolerance = DefaultTolerance
	}
	if opts.ItemSeparator != "" && opts.KeyValueSeparator == "" {
		opts.KeyValueSeparator = DefaultKeyValueSeparator
	}
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	checkProviderAndCreds(bad, provider, creds)
	if opts.Encoding != EncodingHex && opts.Encoding != EncodingBase64 {
		bad("Encoding %v is unknown: use EncodingHex or EncodingBase64", opts.Encoding)
	}
	switch opts.TimestampFormat {
	case TimestampUnixSeconds, TimestampUnixMillis, TimestampRFC3339:
	default:
		bad("TimestampFormat %v is unknown: use TimestampUnixSeconds, TimestampUnixMillis or TimestampRFC3339", opts.TimestampFormat)
	}
	switch opts.PublicKeyFormat {
	case Ed25519KeyHex, Ed25519KeyBase64, Ed25519KeyStandardWebhooks:
	default:
		bad("PublicKeyFormat %v is unknown: use Ed25519KeyHex, Ed25519KeyBase64 or Ed25519KeyStandardWebhooks", opts.PublicKeyFormat)
	}
	if opts.Tolerance < 0 {
		bad("Tolerance %v is negative: use a positive window, or 0 for DefaultTolerance", opts.Tolerance)
	}
	switch {
	case opts.SignatureHeader == "":
		bad("SignatureHeader is empty: set the name of the header")
	case !isHeaderName(opts.SignatureHeader):
		bad("SignatureHeader %q is not a valid header name", opts.SignatureHeader)
	}
	if opts.TimestampHeader != "" && !isHeaderName(opts.TimestampHeader) {
		bad("TimestampHeader %q is not a valid header name", opts.TimestampHeader)
	}
	if opts.ItemSeparator == "" {
		if opts.SignatureKey != "" || opts.KeyValueSeparator != "" {
			bad("SignatureKey or KeyValueSeparator is set but ItemSeparator is empty: set ItemSeparator for a list header")
		}
	} else {
		if opts.SignaturePrefix != "" {
			bad("SignaturePrefix is set with ItemSeparator: a list header names its signatures with SignatureKey")
		}
		if strings.Contains(opts.KeyValueSeparator, opts.ItemSeparator) || strings.Contains(opts.ItemSeparator, opts.KeyValueSeparator) {
			bad("ItemSeparator %q and KeyValueSeparator %q overlap: they must be different and neither may contain the other", opts.ItemSeparator, opts.KeyValueSeparator)
		}
		switch key := opts.SignatureKey; {
		case key == "":
			bad("SignatureKey is empty: set the key of the signature items in the list header, for example \"v1a\"")
		case strings.Contains(key, opts.ItemSeparator) || strings.Contains(key, opts.KeyValueSeparator) || strings.TrimSpace(key) != key:
			bad("SignatureKey %q contains a separator or surrounding blanks", key)
		}
	}
	switch opts.SignedContent {
	case Ed25519SignBody:
		if opts.TimestampHeader != "" {
			bad("TimestampHeader is set but SignedContent is Ed25519SignBody, so the signature would not cover the timestamp: use a layout with the timestamp, or remove TimestampHeader")
		}
	case Ed25519SignTimestampBody, Ed25519SignIDTimestampBody:
		if opts.TimestampHeader == "" {
			bad("SignedContent %v needs a timestamp: set TimestampHeader", opts.SignedContent)
		}
		if opts.SignedContent == Ed25519SignIDTimestampBody && opts.EventIDHeader == "" {
			bad("SignedContent %v needs the event ID before the body is trusted: set EventIDHeader (not EventIDPath or EventIDFromBody)", opts.SignedContent)
		}
	default:
		bad("SignedContent %v is unknown: use Ed25519SignBody, Ed25519SignTimestampBody or Ed25519SignIDTimestampBody", opts.SignedContent)
	}
	checkStaticCredentials(creds, "public key", bad, func(value []byte) error {
		_, err := parseEd25519PublicKey(opts.PublicKeyFormat, value)
		return err
	})
	events := eventSource{
		idHeader: opts.EventIDHeader, idPath: opts.EventIDPath, idFromBody: opts.EventIDFromBody,
		typeHeader: opts.EventTypeHeader, typePath: opts.EventTypePath,
	}
	events.validate(bad)
	fallbacks := headerFallbacks(bad, opts.HeaderFallbacks, map[string]string{
		"SignatureHeader": opts.SignatureHeader,
		"TimestampHeader": opts.TimestampHeader,
		"EventIDHeader":   opts.EventIDHeader,
		"EventTypeHeader": opts.EventTypeHeader,
	})
	if len(problems) > 0 {
		return nil, fmt.Errorf("webhooks: invalid Ed25519 options for provider %q: %w", provider, errors.Join(problems...))
	}
	opts.HeaderFallbacks = nil // the verifier keeps its own copy
	return &Ed25519Verifier{
		provider: provider,
		opts:     opts,
		creds:    creds,
		clock:    clockOrSystem(clock),
		format: signatureFormat{
			prefix:       opts.SignaturePrefix,
			itemSep:      opts.ItemSeparator,
			kvSep:        opts.KeyValueSeparator,
			signatureKey: opts.SignatureKey,
			encoding:     opts.Encoding,
			size:         ed25519.SignatureSize,
		},
		fallbacks: fallbacks,
		events:    events,
	}, nil
}

// Provider returns the provider name the verifier was created with.
func (v *Ed25519Verifier) Provider() string { return v.provider }

// Verify implements Verifier. Rejections are *VerificationError values whose
// details name headers but never echo signatures. An error from the
// CredentialResolver, a key that does not decode, or a non-rejection error
// from Handshake is returned wrapped, not as a rejection.
func (v *Ed25519Verifier) Verify(ctx context.Context, route Route, req *Request) (Verification, error) {
	if req == nil {
		return Verification{}, errors.New("webhooks: Ed25519 verifier: nil request")
	}
	o := &v.opts
	h := req.Header

	// Syntax checks: nothing here needs a key.
	sigName := fallbackName(h, o.SignatureHeader, v.fallbacks)
	sigValue, rej := singleHeader(h, sigName, ReasonMissingSignature)
	if rej != nil {
		return Verification{}, rej
	}
	parsed, rej := v.format.parse(sigValue, sigName)
	if rej != nil {
		return Verification{}, rej
	}
	if len(parsed.signatures) > MaxEd25519Signatures {
		return Verification{}, Reject(ReasonMalformedHeader, "header %s has %d signatures; at most %d are checked", sigName, len(parsed.signatures), MaxEd25519Signatures)
	}
	if len(req.Body) == 0 && !o.AllowEmptyBody {
		return Verification{}, Reject(ReasonEmptyBody, "the request body is empty")
	}
	var (
		timestamp  string
		occurredAt time.Time
	)
	if o.TimestampHeader != "" {
		timestamp, rej = singleHeader(h, fallbackName(h, o.TimestampHeader, v.fallbacks), ReasonMissingTimestamp)
		if rej != nil {
			return Verification{}, rej
		}
		t, ok := parseTimestamp(timestamp, o.TimestampFormat)
		if !ok {
			return Verification{}, Reject(ReasonMalformedTime, "the timestamp is not in %v format", o.TimestampFormat)
		}
		occurredAt = t
	}
	var message []byte
	switch o.SignedContent {
	case Ed25519SignTimestampBody:
		message = append([]byte(timestamp), req.Body...)
	case Ed25519SignIDTimestampBody:
		id, rej := singleHeader(h, fallbackName(h, o.EventIDHeader, v.fallbacks), ReasonMissingEventID)
		if rej != nil {
			return Verification{}, rej
		}
		message = bytes.Join([][]byte{[]byte(id), []byte(timestamp), req.Body}, []byte{'.'})
	default:
		message = req.Body
	}

	// Signature check.
	keys, err := v.creds.Secrets(ctx, route)
	if err != nil {
		return Verification{}, fmt.Errorf("webhooks: Ed25519 verifier %q: resolving public keys: %w", v.provider, err)
	}
	keyID, matched, tried := "", false, 0
	for _, k := range keys {
		if len(k.Value) == 0 {
			continue
		}
		pub, err := parseEd25519PublicKey(o.PublicKeyFormat, k.Value)
		if err != nil {
			return Verification{}, fmt.Errorf("webhooks: Ed25519 verifier %q: public key %q: %w", v.provider, k.ID, err)
		}
		tried++
		for _, sig := range parsed.signatures {
			if ed25519.Verify(pub, message, sig) {
				keyID, matched = k.ID, true
				break
			}
		}
		if matched {
			break
		}
	}
	if tried == 0 {
		return Verification{}, Reject(ReasonNoCredentials, "no public key is configured for this route")
	}
	if !matched {
		return Verification{}, Reject(ReasonBadSignature, "no signature in %s verifies", sigName)
	}

	// The request is authentic from here on.
	if o.TimestampHeader != "" {
		now := v.clock.Now()
		if occurredAt.Before(now.Add(-o.Tolerance)) {
			return Verification{}, Reject(ReasonTimestampExpired, "the timestamp is more than %v in the past", o.Tolerance)
		}
		if occurredAt.After(now.Add(o.Tolerance)) {
			return Verification{}, Reject(ReasonTimestampExpired, "the timestamp is more than %v in the future", o.Tolerance)
		}
	}
	out := Verification{OccurredAt: occurredAt, PayloadSHA256: sha256.Sum256(req.Body), KeyID: keyID}
	if o.Handshake != nil {
		resp, err := o.Handshake(req, out)
		if err != nil {
			if vErr, ok := errors.AsType[*VerificationError](err); ok {
				return Verification{}, vErr
			}
			return Verification{}, fmt.Errorf("webhooks: Ed25519 verifier %q: handshake: %w", v.provider, err)
		}
		if resp != nil {
			out.Handshake = resp
			return out, nil
		}
	}
	out.EventID, out.EventType, rej = v.events.extract(fallbackHeaders(h, v.fallbacks, o.EventIDHeader, o.EventTypeHeader), req.Body)
	if rej != nil {
		return Verification{}, rej
	}
	return out, nil
}

// headerFallbacks validates HeaderFallbacks against the configured headers
// (field name to header name) and returns canonical name to canonical
// fallback name.
func headerFallbacks(bad func(string, ...any), given map[string]string, configured map[string]string) map[string]string {
	if len(given) == 0 {
		return nil
	}
	fields := make(map[string]string, len(configured)) // canonical name -> field
	for field, name := range configured {
		if name != "" {
			fields[http.CanonicalHeaderKey(name)] = field
		}
	}
	out := make(map[string]string, len(given))
	for name, alt := range given {
		cname, calt := http.CanonicalHeaderKey(name), http.CanonicalHeaderKey(alt)
		switch {
		case fields[cname] == "":
			bad("HeaderFallbacks has a fallback for %q, which is not a configured header", name)
		case !isHeaderName(alt):
			bad("HeaderFallbacks[%q] %q is not a valid header name", name, alt)
		case fields[calt] != "":
			bad("HeaderFallbacks[%q] is %q, which is already the %s", name, alt, fields[calt])
		case out[cname] != "":
			// Two spellings of one name: which fallback applied would
			// depend on map order.
			bad("HeaderFallbacks has two fallbacks for %q", cname)
		default:
			out[cname] = calt
		}
	}
	return out
}

// fallbackName returns the name under which h carries the configured
// header: the name itself when present, else its fallback when that is.
func fallbackName(h http.Header, name string, fallbacks map[string]string) string {
	if alt, ok := fallbacks[http.CanonicalHeaderKey(name)]; ok && len(h.Values(name)) == 0 && len(h.Values(alt)) > 0 {
		return alt
	}
	return name
}

// fallbackHeaders returns h with the values of each absent configured
// header copied from its fallback, so metadata extraction sees one name.
// h is not modified.
func fallbackHeaders(h http.Header, fallbacks map[string]string, names ...string) http.Header {
	var out http.Header
	for _, name := range names {
		if name == "" {
			continue
		}
		if alt := fallbackName(h, name, fallbacks); alt != name {
			if out == nil {
				out = h.Clone()
			}
			out[http.CanonicalHeaderKey(name)] = h.Values(alt)
		}
	}
	if out == nil {
		return h
	}
	return out
}

// discordInteractionPing answers Discord's interaction PING (type 1) with
// a PONG (type 1).
func discordInteractionPing(req *Request, _ Verification) (*HandshakeResponse, error) {
	if discordType(req.Body) != "1" {
		return nil, nil
	}
	return &HandshakeResponse{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"application/json"}},
		Body:       []byte(`{"type":1}`),
	}, nil
}

// discordWebhookEventPing acknowledges Discord's webhook event PING (type
// 0) with 204 and no body.
func discordWebhookEventPing(req *Request, _ Verification) (*HandshakeResponse, error) {
	if discordType(req.Body) != "0" {
		return nil, nil
	}
	return &HandshakeResponse{
		StatusCode: http.StatusNoContent,
		Header:     http.Header{"Content-Type": {"application/json"}},
	}, nil
}

// discordType returns the top-level "type" of a JSON body, "" when there is
// none.
func discordType(body []byte) string {
	doc := jsonDocument{body: body}
	t, rej := doc.lookup("type", ReasonMissingEventType, "type")
	if rej != nil {
		return ""
	}
	return t
}

// Format prints the verifier's type and provider only, whatever the verb:
// the secrets it holds never reach output through fmt or slog.
func (v *Ed25519Verifier) Format(f fmt.State, _ rune) {
	formatVerifier(f, "Ed25519Verifier", v.provider)
}
