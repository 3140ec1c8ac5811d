package providers

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/hmackey"
	"github.com/hookinbox/webhooks/internal/sigsyntax"
)

// Twilio request headers.
const (
	// TwilioSignatureHeader carries the base64 HMAC of the request URL and
	// parameters: HMAC-SHA-1 keyed with the account's auth token, or the
	// algorithm named in TwilioSignatureSettingsHeader keyed with a
	// SharedKey.
	TwilioSignatureHeader = "X-Twilio-Signature"
	// TwilioSignatureSettingsHeader is present when a Webhook Rule of the
	// Webhooks configuration API (public beta) made Twilio sign with a
	// SharedKey: "key=<key SID>,algorithm=HMAC_SHA256".
	TwilioSignatureSettingsHeader = "X-Twilio-Webhooks-Signature-Settings"
	// TwilioIdempotencyTokenHeader is sent by Twilio with webhook requests
	// and kept across its retries of one request. It is not signed.
	TwilioIdempotencyTokenHeader = "I-Twilio-Idempotency-Token"
)

// TwilioOptions configures a TwilioVerifier. Exactly one of BaseURL and
// PublicURL is required; the zero value of every other field is its
// documented default.
//
// Twilio signs the URL it requested, so the verifier must know the public
// URL, not the one a proxy or load balancer forwarded: the signed string is
// that URL (with its query string), followed, for form posts
// (application/x-www-form-urlencoded), by every POST parameter sorted by
// name, each name directly followed by its value (a repeated name by each of
// its distinct values, sorted). A JSON body is signed through the
// bodySHA256 query parameter, the hex SHA-256 of the body, which the URL
// carries; the body must match it. A request with a body that is neither is
// rejected, since nothing would cover it. Because Twilio signs URLs with and
// without the scheme's default port inconsistently, both forms are tried.
//
// Twilio signs no timestamp: a captured request verifies for as long as the
// auth token is valid. Only the event ID stops a replay, which is why the
// default ID is derived from the signed content: when neither EventIDHeader
// nor EventIDParams yields one, the event ID is "sha256:" and the hex
// SHA-256 of the canonical parameter string (the sorted names and values appended to the
// URL for the signature) of a form post, of the query parameters of a
// bodiless request, or of the body of a JSON request. A replay of a request
// is then recognised as a duplicate, as are Twilio's own retries, which
// repeat the parameters, while every distinct request is a new event.
type TwilioOptions struct {
	// BaseURL is the public scheme and host under which Twilio reaches
	// this service, with any path prefix a proxy strips, for example
	// "https://hooks.example.com" or "https://example.com/api". The signed
	// URL is BaseURL followed by the request's path and query exactly as
	// received. At most one of BaseURL and PublicURL may be set.
	BaseURL string

	// PublicURL returns the full public URL Twilio requested, query string
	// included, for hosts whose public URLs are not the received path
	// under a fixed prefix (or whose configured URL carries a fragment,
	// which never reaches the server). A *webhooks.VerificationError it
	// returns is passed on as the rejection; any other error is returned
	// wrapped, so the Receiver answers 503. At most one of BaseURL and
	// PublicURL may be set.
	PublicURL func(req *webhooks.Request) (string, error)

	// SharedKeys supplies the secrets of the SharedKeys that Webhook Rules
	// sign with. A request with TwilioSignatureSettingsHeader is verified
	// with these, by the algorithm the header names (HMAC_SHA1 or
	// HMAC_SHA256), and never with the auth token; one without it is
	// verified with the auth tokens from the CredentialResolver and
	// HMAC-SHA-1. When nil, signed-with-a-SharedKey requests are rejected
	// with ReasonNoCredentials. Defaults to nil.
	SharedKeys webhooks.CredentialResolver

	// EventIDHeader, when set, is the header the event ID is read from
	// first, for example TwilioIdempotencyTokenHeader. Twilio does not
	// sign headers: anyone who captured one request can send it again
	// with a new value and have it stored as a new event, which the
	// signed defaults below prevent. Defaults to none.
	EventIDHeader string

	// EventIDParams lists groups of Twilio parameters (form parameters of
	// a POST, query parameters of a bodiless request) to build the event
	// ID from, tried in order when EventIDHeader is unset or absent: the
	// first group whose parameters are all present and non-empty gives
	// the ID, its values joined by ":". For status callbacks,
	// {{"MessageSid", "MessageStatus"}, {"CallSid", "CallStatus"}} makes
	// one event of each status change; do not use such groups for voice
	// requests that repeat a status within a call (Gather actions), which
	// they would merge. Defaults to none.
	EventIDParams [][]string

	// EventTypeParams lists Twilio parameters whose first present,
	// non-empty value is the event type, for example {"MessageStatus",
	// "CallStatus"}. Twilio gives requests no event type of their own.
	// Defaults to none: EventType is "".
	EventTypeParams []string
}

// TwilioVerifier verifies Twilio webhooks (X-Twilio-Signature), as
// configured by TwilioOptions. It is safe for concurrent use.
//
// Verify checks, in this order: the signature header's syntax and the
// signature settings, the public URL, the form parameters or the
// bodySHA256 parameter; then it asks for the auth tokens (or SharedKeys)
// and compares signatures in constant time; only after a signature matched
// does it check the body against bodySHA256 and read the event ID and type.
// The verification's KeyID is the matching secret's ID; OccurredAt is zero
// because Twilio sends no time.
//
// Twilio webhooks configured for GET are signed over the URL with its
// query and have no body; the verifier is a webhooks.GETDeliverer, so a
// Receiver serves them as it serves POSTs, and they verify through
// webhooks.VerifyHTTPRequest and webhooks.VerifyMiddleware too.
//
//	providers.NewTwilioVerifier(providers.TwilioOptions{BaseURL: "https://hooks.example.com"}, webhooks.StaticSecrets(os.Getenv("TWILIO_AUTH_TOKEN")))
type TwilioVerifier struct {
	opts  TwilioOptions
	base  string
	creds webhooks.CredentialResolver
	// keys are the keyed hash states of each algorithm's secrets.
	sha1Keys, sha256Keys *hmackey.Cache
}

// SecretHeaders implements webhooks.SecretHeaderVerifier:
// TwilioSignatureHeader, which a Receiver never stores.
func (v *TwilioVerifier) SecretHeaders() []string { return twilioSecretHeaders }

// DeliversByGET implements webhooks.GETDeliverer: Twilio signs the GET
// requests of webhooks configured for GET.
func (v *TwilioVerifier) DeliversByGET() bool { return true }

var twilioSecretHeaders = []string{TwilioSignatureHeader}

// twilioMatches reports whether the HMAC of url and params under k is
// sig, compared in constant time.
func twilioMatches(k *hmackey.Key, url, params string, sig []byte) bool {
	st := k.Borrow()
	defer k.Return(st)
	st.Buf = append(append(st.Buf[:0], url...), params...)
	st.MAC.Write(st.Buf)
	return hmac.Equal(st.Sum(), sig)
}

// NewTwilioVerifier returns a verifier that takes the account's auth tokens
// from creds (Twilio accounts have a primary and a secondary token; give
// both while promoting). It returns an error describing every invalid
// option, and every empty static token (StaticSecrets, TenantSecrets).
//
// Source: https://www.twilio.com/docs/usage/webhooks/webhooks-security.
func NewTwilioVerifier(opts TwilioOptions, creds webhooks.CredentialResolver) (*TwilioVerifier, error) {
	var p problemList
	bad := p.bad
	base := strings.TrimRight(opts.BaseURL, "/")
	switch {
	case opts.BaseURL == "" && opts.PublicURL == nil:
		bad("neither BaseURL nor PublicURL is set: Twilio signs the public URL, so tell the verifier what it is, for example BaseURL \"https://hooks.example.com\"")
	case opts.BaseURL != "" && opts.PublicURL != nil:
		bad("BaseURL and PublicURL are both set: choose one")
	case opts.BaseURL != "":
		u, err := url.Parse(base)
		switch {
		case err != nil:
			bad("BaseURL is not a URL: %v", err)
		case u.Scheme != "https" && u.Scheme != "http":
			bad("BaseURL %q does not start with https:// or http://", opts.BaseURL)
		case u.Host == "":
			bad("BaseURL %q has no host", opts.BaseURL)
		case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.User != nil:
			bad("BaseURL %q has a query, fragment or user: give only the scheme, host and any path prefix", opts.BaseURL)
		}
	}
	p = append(p, webhooks.CheckCredentials(creds, "auth token", nil))
	if opts.SharedKeys != nil {
		p = append(p, webhooks.CheckCredentials(opts.SharedKeys, "SharedKey secret", nil))
	}
	if opts.EventIDHeader != "" && !sigsyntax.IsHeaderName(opts.EventIDHeader) {
		bad("EventIDHeader %q is not a valid header name", opts.EventIDHeader)
	}
	for i, group := range opts.EventIDParams {
		if len(group) == 0 {
			bad("EventIDParams[%d] is empty: list the parameters whose values make the ID", i)
		}
		if slices.Contains(group, "") {
			bad("EventIDParams[%d] has an empty parameter name", i)
		}
	}
	if slices.Contains(opts.EventTypeParams, "") {
		bad("EventTypeParams has an empty parameter name")
	}
	if err := optionsError("Twilio", p...); err != nil {
		return nil, err
	}
	opts.EventIDParams = slices.Clone(opts.EventIDParams)
	opts.EventTypeParams = slices.Clone(opts.EventTypeParams)
	return &TwilioVerifier{opts: opts, base: base, creds: creds, sha1Keys: hmackey.New(sha1.New, nil), sha256Keys: hmackey.New(sha256.New, nil)}, nil
}

// twilioAlgorithm is a signing algorithm a Twilio request may use.
type twilioAlgorithm struct {
	name string
	size int
}

var (
	twilioSHA1   = twilioAlgorithm{"HMAC_SHA1", sha1.Size}
	twilioSHA256 = twilioAlgorithm{"HMAC_SHA256", sha256.Size}
)

// twilioSettings is the content of TwilioSignatureSettingsHeader.
type twilioSettings struct {
	keyID     string
	algorithm twilioAlgorithm
}

// parseTwilioSettings reads "key=<SID>,algorithm=<name>". Items are
// separated by commas, their keys matched without regard to case, and
// unknown items ignored; the algorithm is required. It never panics, and its
// rejections never contain the value.
func parseTwilioSettings(value string) (twilioSettings, *webhooks.VerificationError) {
	var (
		out           twilioSettings
		sawKey, sawAl bool
	)
	for item := range strings.SplitSeq(value, ",") {
		item = strings.Trim(item, " \t")
		if item == "" {
			continue
		}
		k, val, ok := strings.Cut(item, "=")
		if !ok {
			return twilioSettings{}, webhooks.Reject(webhooks.ReasonMalformedHeader, "header %s has an item without \"=\"", TwilioSignatureSettingsHeader)
		}
		k, val = strings.Trim(k, " \t"), strings.Trim(val, " \t")
		switch {
		case strings.EqualFold(k, "key"):
			if sawKey {
				return twilioSettings{}, webhooks.Reject(webhooks.ReasonMalformedHeader, "header %s names more than one key", TwilioSignatureSettingsHeader)
			}
			sawKey, out.keyID = true, val
		case strings.EqualFold(k, "algorithm"):
			if sawAl {
				return twilioSettings{}, webhooks.Reject(webhooks.ReasonMalformedHeader, "header %s names more than one algorithm", TwilioSignatureSettingsHeader)
			}
			sawAl = true
			switch {
			case strings.EqualFold(val, twilioSHA256.name):
				out.algorithm = twilioSHA256
			case strings.EqualFold(val, twilioSHA1.name):
				out.algorithm = twilioSHA1
			default:
				return twilioSettings{}, webhooks.Reject(webhooks.ReasonMalformedHeader, "header %s names an algorithm other than HMAC_SHA1 and HMAC_SHA256", TwilioSignatureSettingsHeader)
			}
		}
	}
	if !sawAl {
		return twilioSettings{}, webhooks.Reject(webhooks.ReasonMalformedHeader, "header %s names no algorithm", TwilioSignatureSettingsHeader)
	}
	return out, nil
}

// twilioContent is what a Twilio signature covers, derived from a request.
type twilioContent struct {
	url string
	// params is the canonical parameter string appended to the URL ("" for
	// JSON and bodiless requests).
	params string
	// values are the parameters for event metadata: the form parameters
	// of a form post, the query parameters of a bodiless request.
	values url.Values
	// bodySHA256 is the decoded bodySHA256 parameter of a JSON request.
	bodySHA256 []byte
	// idSource is what the default event ID is the SHA-256 of.
	idSource []byte
}

// Verify implements webhooks.Verifier. Rejections are *VerificationError
// values whose details never echo secrets, signatures or parameters. An
// error from a CredentialResolver or from PublicURL is returned wrapped.
func (v *TwilioVerifier) Verify(ctx context.Context, route webhooks.Route, req *webhooks.Request) (webhooks.Verification, error) {
	if req == nil {
		return webhooks.Verification{}, errors.New("webhooks: Twilio verifier: nil request")
	}
	sigValue, rej := webhooks.SingleHeader(req.Header, TwilioSignatureHeader, webhooks.ReasonMissingSignature)
	if rej != nil {
		return webhooks.Verification{}, rej
	}
	alg, creds, useSharedKey, namedKey := twilioSHA1, v.creds, false, ""
	if len(req.Header.Values(TwilioSignatureSettingsHeader)) > 0 {
		value, rej := webhooks.SingleHeader(req.Header, TwilioSignatureSettingsHeader, webhooks.ReasonMalformedHeader)
		if rej != nil {
			return webhooks.Verification{}, rej
		}
		settings, rej := parseTwilioSettings(value)
		if rej != nil {
			return webhooks.Verification{}, rej
		}
		alg, creds, useSharedKey, namedKey = settings.algorithm, v.opts.SharedKeys, true, settings.keyID
	}
	sig, ok := sigsyntax.DecodeDigest(sigValue, true, alg.size)
	if !ok {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonMalformedHeader, "header %s does not hold a base64 %s digest", TwilioSignatureHeader, alg.name)
	}
	content, err := v.content(req)
	if err != nil {
		return webhooks.Verification{}, err
	}

	// Signature check.
	if creds == nil {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonNoCredentials, "the request is signed with a Twilio SharedKey and no SharedKeys are configured")
	}
	secrets, err := creds.Secrets(ctx, route)
	if err != nil {
		return webhooks.Verification{}, fmt.Errorf("webhooks: Twilio verifier: resolving secrets: %w", err)
	}
	if namedKey != "" {
		// Try the key the header names first, so its ID is the one
		// reported when several secrets are the same.
		secrets = slices.Clone(secrets)
		slices.SortStableFunc(secrets, func(a, b webhooks.Secret) int {
			return boolRank(a.ID == namedKey) - boolRank(b.ID == namedKey)
		})
	}
	keyID, matched, tried := "", false, 0
	alt, altOK, altDone := "", false, false
	for _, s := range secrets {
		if len(s.Value) == 0 {
			continue
		}
		tried++
		keys := v.sha1Keys
		if alg.name == twilioSHA256.name {
			keys = v.sha256Keys
		}
		k, _ := keys.Get(s.Value) // no decoding, so no error
		if twilioMatches(k, content.url, content.params, sig) {
			keyID, matched = s.ID, true
			break
		}
		if !altDone {
			alt, altOK = twilioPortVariant(content.url)
			altDone = true
		}
		if altOK && twilioMatches(k, alt, content.params, sig) {
			keyID, matched = s.ID, true
			break
		}
	}
	if tried == 0 {
		if useSharedKey {
			return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonNoCredentials, "no Twilio SharedKey is configured for this route")
		}
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonNoCredentials, "no auth token is configured for this route")
	}
	if !matched {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonBadSignature, "the signature in %s does not match the public URL and parameters", TwilioSignatureHeader)
	}

	// The URL and parameters are authentic from here on.
	sum := sha256.Sum256(req.Body)
	if content.bodySHA256 != nil && subtle.ConstantTimeCompare(sum[:], content.bodySHA256) != 1 {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonBadSignature, "the body does not match the signed bodySHA256 parameter")
	}
	// The idempotency header is not signed; the parameters are.
	out := webhooks.Verification{PayloadSHA256: sum, KeyID: keyID, Unsigned: webhooks.UnsignedFields{EventID: v.opts.EventIDHeader != ""}}
	out.EventID, rej = v.eventID(req.Header, content)
	if rej != nil {
		return webhooks.Verification{}, rej
	}
	for _, name := range v.opts.EventTypeParams {
		if t := content.values.Get(name); t != "" {
			out.EventType = t
			break
		}
	}
	return out, nil
}

// content builds what the signature covers. Its rejections are about the
// request's syntax only.
func (v *TwilioVerifier) content(req *webhooks.Request) (twilioContent, error) {
	var out twilioContent
	if v.opts.PublicURL != nil {
		u, err := v.opts.PublicURL(req)
		if err != nil {
			if vErr, ok := errors.AsType[*webhooks.VerificationError](err); ok {
				return out, vErr
			}
			return out, fmt.Errorf("webhooks: Twilio verifier: public URL: %w", err)
		}
		out.url = u
	} else {
		if req.URL == nil {
			return out, errors.New("webhooks: Twilio verifier: the request has no URL")
		}
		out.url = v.base + req.URL.RequestURI()
	}
	var rawQuery string
	if v.opts.PublicURL == nil && req.URL.Opaque == "" {
		// BaseURL has a host and no query (NewTwilioVerifier checked it),
		// so the query is the request's as received.
		rawQuery = req.URL.RawQuery
	} else {
		parsed, err := url.Parse(out.url)
		if err != nil || parsed.Host == "" {
			return out, errors.New("webhooks: Twilio verifier: the public URL is not an absolute URL")
		}
		rawQuery = parsed.RawQuery
	}
	var query url.Values
	var queryErr error
	if rawQuery != "" {
		query, queryErr = url.ParseQuery(rawQuery)
	}

	if hashes, ok := query["bodySHA256"]; ok {
		if len(hashes) != 1 || len(hashes[0]) != hex.EncodedLen(sha256.Size) {
			return out, webhooks.Reject(webhooks.ReasonMalformedHeader, "the bodySHA256 query parameter is not one hex SHA-256 digest")
		}
		sum, err := hex.DecodeString(hashes[0])
		if err != nil {
			return out, webhooks.Reject(webhooks.ReasonMalformedHeader, "the bodySHA256 query parameter is not one hex SHA-256 digest")
		}
		out.bodySHA256 = sum
		out.idSource = req.Body
		return out, nil
	}
	if len(req.Body) == 0 {
		if queryErr != nil {
			return out, webhooks.Reject(webhooks.ReasonMalformedHeader, "the query string of the public URL cannot be parsed")
		}
		out.values = query
		out.idSource = []byte(canonicalTwilioParams(query))
		return out, nil
	}
	if ct := req.Header.Get("Content-Type"); !strings.EqualFold(ct, "application/x-www-form-urlencoded") && !isFormMediaType(ct) {
		return out, webhooks.Reject(webhooks.ReasonMalformedPayload, "the body is neither form parameters nor signed through a bodySHA256 query parameter, so no signature covers it")
	}
	form, err := url.ParseQuery(string(req.Body))
	if err != nil {
		return out, webhooks.Reject(webhooks.ReasonMalformedPayload, "the body is not valid form data")
	}
	out.params = canonicalTwilioParams(form)
	out.values = form
	out.idSource = []byte(out.params)
	return out, nil
}

// isFormMediaType reports whether a Content-Type is form parameters.
func isFormMediaType(contentType string) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	return err == nil && mediaType == "application/x-www-form-urlencoded"
}

// eventID picks the event ID: the header, a parameter group, or the signed
// content's digest.
func (v *TwilioVerifier) eventID(h http.Header, c twilioContent) (string, *webhooks.VerificationError) {
	if v.opts.EventIDHeader != "" {
		id, rej := webhooks.SingleHeader(h, v.opts.EventIDHeader, webhooks.ReasonMissingEventID)
		if rej == nil {
			return id, nil
		}
		if rej.Reason != webhooks.ReasonMissingEventID {
			return "", rej
		}
	}
groups:
	for _, group := range v.opts.EventIDParams {
		parts := make([]string, 0, len(group))
		for _, name := range group {
			val := c.values.Get(name)
			if val == "" {
				continue groups
			}
			parts = append(parts, val)
		}
		return strings.Join(parts, ":"), nil
	}
	return bodyID(c.idSource), nil
}

// portlessHost reports whether h is a host without a port: a name or IPv4
// address without colons and brackets, or a bracketed IPv6 address.
func portlessHost(h string) bool {
	if inner, ok := strings.CutPrefix(h, "["); ok {
		inner, ok = strings.CutSuffix(inner, "]")
		return ok && inner != "" && !strings.ContainsAny(inner, "[]")
	}
	return h != "" && !strings.ContainsAny(h, ":[]")
}

// boolRank orders true before false.
func boolRank(b bool) int {
	if b {
		return 0
	}
	return 1
}

// canonicalTwilioParams writes parameters as Twilio signs them: sorted by
// name, each name followed by its value, a repeated name once for each of
// its distinct values in sorted order.
func canonicalTwilioParams(values url.Values) string {
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	n := 0
	for name, vals := range values {
		for _, val := range vals {
			n += len(name) + len(val)
		}
	}
	b.Grow(n)
	for _, name := range names {
		vals := values[name]
		if len(vals) > 1 {
			vals = slices.Compact(slices.Sorted(slices.Values(vals)))
		}
		for _, val := range vals {
			b.WriteString(name)
			b.WriteString(val)
		}
	}
	return b.String()
}

// twilioPortVariant returns rawURL with the scheme's default port added
// when it has none, or removed when it has it; ok is false when the URL
// has another port or cannot be parsed. The rest of the URL is kept byte
// for byte.
func twilioPortVariant(rawURL string) (string, bool) {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return "", false
	}
	var defaultPort string
	switch strings.ToLower(scheme) {
	case "https":
		defaultPort = "443"
	case "http":
		defaultPort = "80"
	default:
		return "", false
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	userinfo := ""
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		userinfo, authority = authority[:at+1], authority[at+1:]
	}
	host, port, err := net.SplitHostPort(authority)
	switch {
	case err != nil:
		// No port: a host name, an IPv4 address or a bracketed IPv6 one.
		if !portlessHost(authority) {
			return "", false
		}
		return scheme + "://" + userinfo + authority + ":" + defaultPort + tail, true
	case port == defaultPort && host != "":
		return scheme + "://" + userinfo + strings.TrimSuffix(authority, ":"+port) + tail, true
	}
	return "", false
}

// Format prints the verifier's type only, whatever the verb: the secrets it
// holds never reach output through fmt or slog.
func (v *TwilioVerifier) Format(f fmt.State, _ rune) { formatVerifier(f, "TwilioVerifier") }
