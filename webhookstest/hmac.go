// Package webhookstest signs webhooks the way providers do, so a host can
// test its handlers end to end through the same verifier, gateway and
// processor it runs in production.
//
// Every entry of the providers catalog is signed by name, with a
// realistic sample body of the provider's shape, the headers the provider
// sends and the right Content-Type:
//
//	req := webhookstest.NewRequest(t, "stripe", srv.URL+"/webhooks/stripe", secret, webhookstest.Message{})
//
// NewSigner and NewKeySigner make a Signer for one entry (NewKeySigner with
// a fresh credential, a key pair where the provider signs with one; its
// Credential is what the verifier is configured with); Signer.Challenge
// produces the provider's endpoint check and the answer it expects.
// SignHMAC, SignEd25519, SignToken and SignTwilio sign for options of the
// host's own:
//
//	msg := webhookstest.SignedMessage{Body: []byte(`{"id":"evt_1","type":"invoice.paid"}`)}
//	req := webhookstest.NewHMACRequest(t, "/webhooks/stripe", providers.StripeOptions(), secret, msg)
//
// The signatures are computed here, independently of the package's
// verifiers, so a test that passes shows that the verifier accepts what
// the provider's documented scheme produces.
package webhookstest

import (
	"bytes"
	"crypto"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"net/http"
	neturl "net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/webhooks"
)

// SignedMessage is a webhook for SignHMAC or SignEd25519 to sign.
type SignedMessage struct {
	// ID is the event ID. When the options read it from a header
	// (Event.IDHeader), it is written there; when they read it from the
	// body (Event.IDPath), the body must carry it and a non-empty ID must
	// equal it; when they compute it (Event.IDFunc), it must be empty, and
	// when they derive it from the body (Event.IDFromBody alone), it must
	// be empty or that ID.
	ID string
	// Type is the event type as the provider sends it, without any
	// Event.TypeSuffixPath suffix. It is written to Event.TypeHeader, or
	// checked against the body at Event.TypePath like ID.
	Type string
	// Timestamp is when the webhook is signed; zero means time.Now(). It
	// is written to the signature header (Timestamp.Key) or
	// Timestamp.Header in Timestamp.Format (RFC 3339 to the second, or
	// with its nanoseconds under Nanoseconds). When the options read the
	// timestamp from the body (Timestamp.Path), the body must carry it
	// and a non-zero Timestamp must equal it.
	Timestamp time.Time
	// Nanoseconds writes an RFC 3339 Timestamp with its fraction of a
	// second, to the nanosecond (time.RFC3339Nano), as Twitch writes
	// Twitch-Eventsub-Message-Timestamp; the signed content holds it as
	// written.
	Nanoseconds bool
	// Body is the raw request body, signed as it is.
	Body []byte
	// ContentType is the Content-Type header to send, for providers whose
	// bodies are not JSON (form-encoded Slack commands, for example).
	// Defaults to "application/json" when Body is valid JSON, and to no
	// header otherwise.
	ContentType string
	// URL is the request URL as the server receives it, path and query
	// ("/webhooks/acme?x=1"), for signed content with {url}.
	// NewHMACRequest sets it from its url argument.
	URL string
}

// SignHMAC signs msg as a provider configured by opts would, with secret
// as the provider's signing secret (encoded as the provider hands it out,
// for example "whsec_…"; DecodeSecret is applied). It returns the request
// headers: the signature, the timestamp and event ID and type headers the
// options read, and Content-Type (see SignedMessage.ContentType). Headers
// are written under the options' configured names, never the
// HeaderFallbacks. The request is a POST: {method} in the signed content is
// "POST".
//
// It returns an error when the options are invalid (as NewHMACVerifier
// reports them), when the secret is empty, only SecretPrefix or cannot be
// decoded, or when msg disagrees with the body. Errors never contain the
// secret.
func SignHMAC(opts webhooks.HMACOptions, secret string, msg SignedMessage) (http.Header, error) {
	// NewHMACVerifier validates the options and refuses an empty,
	// prefix-only or undecodable secret, naming it by ID only.
	if _, err := webhooks.NewHMACVerifier(opts, webhooks.StaticSecrets(secret)); err != nil {
		return nil, fmt.Errorf("webhookstest: %w", err)
	}
	key := []byte(secret)
	if opts.DecodeSecret != nil {
		var err error
		if key, err = opts.DecodeSecret(key); err != nil {
			return nil, fmt.Errorf("webhookstest: decoding the secret: %w", err)
		}
	}
	return signRequest(opts.SignedRequest, msg, func(content []byte) [][]byte {
		mac := hmac.New(hmacHashFunc(opts.Algorithm), key)
		mac.Write(content)
		return [][]byte{mac.Sum(nil)}
	})
}

// signRequest returns the headers a provider whose requests r describes
// sends with msg: Content-Type, the timestamp,
// event ID and type headers r reads, and the signature header holding
// sign's signatures of the signed content, encoded and laid out as r says.
func signRequest(r webhooks.SignedRequest, msg SignedMessage, sign func(content []byte) [][]byte) (http.Header, error) {
	h := contentTypeHeader(msg.ContentType, msg.Body)
	timestamp, err := writeTimestamp(h, r.Timestamp, msg.Timestamp, msg.Nanoseconds, msg.Body, "SignedMessage")
	if err != nil {
		return nil, err
	}
	if err := writeMetadata(h, r.Event, msg.ID, msg.Type, msg.Body, "SignedMessage"); err != nil {
		return nil, err
	}
	content, err := signedContent(r, h, timestamp, msg)
	if err != nil {
		return nil, err
	}
	encode := hex.EncodeToString
	if r.Encoding == webhooks.EncodingBase64 {
		encode = base64.StdEncoding.EncodeToString
	}
	sigs := sign(content)
	if r.ItemSeparator == "" {
		h.Set(r.SignatureHeader, r.SignaturePrefix+encode(sigs[0]))
		return h, nil
	}
	var items []string
	if r.Timestamp.Key != "" {
		items = append(items, r.Timestamp.Key+r.KeyValueSeparator+timestamp)
	}
	for _, sig := range sigs {
		items = append(items, r.SignatureKey+r.KeyValueSeparator+encode(sig))
	}
	h.Set(r.SignatureHeader, strings.Join(items, r.ItemSeparator))
	return h, nil
}

// NewHMACRequest returns a POST request to url carrying msg.Body and the
// headers SignHMAC makes, bound to t's context. It fails t if signing
// fails. The request carries Content-Type application/json when the body
// is JSON and msg gives no ContentType. It can be served directly
// (handler.ServeHTTP with an httptest.ResponseRecorder) or sent to an
// httptest.Server with an http.Client.
func NewHMACRequest(t testing.TB, url string, opts webhooks.HMACOptions, secret string, msg SignedMessage) *http.Request {
	t.Helper()
	if msg.URL == "" {
		msg.URL = requestURI(url)
	}
	h, err := SignHMAC(opts, secret, msg)
	if err != nil {
		t.Fatal(err)
	}
	return newRequest(t, http.MethodPost, url, msg.Body, h)
}

// signedContent builds the bytes the provider signs.
func signedContent(r webhooks.SignedRequest, h http.Header, timestamp string, msg SignedMessage) ([]byte, error) {
	id := ""
	if r.Event.IDHeader != "" {
		id = msg.ID
	}
	if r.SignedContentFunc != nil {
		req := &webhooks.Request{Method: http.MethodPost, Header: h.Clone(), Body: msg.Body}
		b, err := r.SignedContentFunc(req, timestamp, id)
		if err != nil {
			return nil, fmt.Errorf("webhookstest: SignedContentFunc: %w", err)
		}
		return b, nil
	}
	return renderContent(r.SignedContent, timestamp, id, msg.URL, msg.Body, "SignedMessage")
}

// renderContent fills in a signed-content template ("{body}" when empty)
// by plain text replacement, independently of the verifiers' compiled
// templates.
func renderContent(template, timestamp, id, url string, body []byte, msgType string) ([]byte, error) {
	if template == "" {
		template = "{body}"
	}
	if strings.Contains(template, "{id}") && id == "" {
		return nil, fmt.Errorf("webhookstest: the signed content includes the event ID, so %s.ID is required", msgType)
	}
	if strings.Contains(template, "{url}") && url == "" {
		return nil, fmt.Errorf("webhookstest: the signed content includes the URL, so %s.URL is required", msgType)
	}
	before, after, _ := strings.Cut(template, "{body}")
	r := strings.NewReplacer("{timestamp}", timestamp, "{id}", id, "{method}", http.MethodPost, "{url}", url)
	return slices.Concat([]byte(r.Replace(before)), body, []byte(r.Replace(after))), nil
}

// contentTypeHeader returns headers with the message's Content-Type, or
// application/json for a JSON body.
func contentTypeHeader(contentType string, body []byte) http.Header {
	h := http.Header{}
	switch {
	case contentType != "":
		h.Set("Content-Type", contentType)
	case json.Valid(body):
		h.Set("Content-Type", "application/json")
	}
	return h
}

// writeTimestamp writes the signing time to the timestamp's header and
// returns it as written, or checks the body's when the options read it
// from there.
func writeTimestamp(h http.Header, ts webhooks.TimestampSource, at time.Time, nanos bool, body []byte, msgType string) (string, error) {
	if at.IsZero() && ts.Path == "" {
		at = time.Now()
	}
	switch {
	case ts.Header != "":
		timestamp := formatTimestamp(at, ts.Format, nanos)
		h.Set(ts.Header, timestamp)
		return timestamp, nil
	case ts.Key != "":
		return formatTimestamp(at, ts.Format, nanos), nil
	case ts.Path != "":
		raw, ok := bodyValue(body, ts.Path)
		if !ok {
			return "", fmt.Errorf("webhookstest: the options read the timestamp from the body at %q, but the body has none there", ts.Path)
		}
		if !at.IsZero() && raw != formatTimestamp(at, ts.Format, nanos) {
			return "", fmt.Errorf("webhookstest: the body's timestamp %s differs from %s.Timestamp", raw, msgType)
		}
	}
	return "", nil
}

// writeMetadata writes the event ID and type headers the source reads, and
// checks body-borne values against the message's.
func writeMetadata(h http.Header, ev webhooks.EventSource, id, typ string, body []byte, msgType string) error {
	switch {
	case ev.IDHeader != "":
		if id != "" {
			h.Set(ev.IDHeader, id)
		}
	case ev.IDPath != "":
		if err := checkBody(body, ev.IDPath, msgType+".ID", id); err != nil {
			return err
		}
	case id != "" && ev.IDFunc != nil:
		return fmt.Errorf("webhookstest: the options compute the event ID (Event.IDFunc), so %s.ID must be empty", msgType)
	case id != "" && ev.IDFromBody && id != bodySHA256ID(body):
		return fmt.Errorf("webhookstest: the options derive the event ID from the body, so %s.ID must be empty or the body's \"sha256:<hex>\"", msgType)
	}
	switch {
	case ev.TypeHeader != "":
		if typ != "" {
			h.Set(ev.TypeHeader, typ)
		}
	case ev.TypePath != "":
		if err := checkBody(body, ev.TypePath, msgType+".Type", typ); err != nil {
			return err
		}
	}
	return nil
}

// checkBody fails unless the body has a string or number at path and, when
// want is set, it equals want.
func checkBody(body []byte, path, field, want string) error {
	got, ok := bodyValue(body, path)
	switch {
	case !ok && want != "":
		return fmt.Errorf("webhookstest: the options read %s from the body at %q, but the body has none there", field, path)
	case ok && want != "" && got != want:
		return fmt.Errorf("webhookstest: the body's %q is %q but %s is %q", path, got, field, want)
	}
	return nil
}

// bodySHA256ID is the ID Event.IDFromBody derives: "sha256:" and the hex
// SHA-256 of the body.
func bodySHA256ID(body []byte) string {
	sum := sha256.Sum256(body)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// requestURI returns the path and query of a URL as a server receives
// them, or "" when it cannot be parsed.
func requestURI(rawURL string) string {
	u, err := neturl.Parse(rawURL)
	if err != nil {
		return ""
	}
	return u.RequestURI()
}

// hmacHashFunc returns the hash of an Algorithm NewHMACVerifier accepted.
func hmacHashFunc(a crypto.Hash) func() hash.Hash {
	switch a {
	case crypto.SHA1:
		return sha1.New
	case crypto.SHA512:
		return sha512.New
	}
	return sha256.New
}

// formatTimestamp writes t in format f, an RFC 3339 one with its
// nanoseconds when nanos.
func formatTimestamp(t time.Time, f webhooks.TimestampFormat, nanos bool) string {
	switch {
	case f == webhooks.TimestampUnixMillis:
		return strconv.FormatInt(t.UnixMilli(), 10)
	case f == webhooks.TimestampRFC3339 && nanos:
		return t.UTC().Format(time.RFC3339Nano)
	case f == webhooks.TimestampRFC3339:
		return t.UTC().Format(time.RFC3339)
	}
	return strconv.FormatInt(t.Unix(), 10)
}

// bodyValue returns the string or number at a dotted path of a JSON body.
func bodyValue(body []byte, path string) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var cur any
	if dec.Decode(&cur) != nil {
		return "", false
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", false
	}
	for seg := range strings.SplitSeq(path, ".") {
		switch node := cur.(type) {
		case map[string]any:
			cur = node[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(node) {
				return "", false
			}
			cur = node[i]
		default:
			return "", false
		}
	}
	switch v := cur.(type) {
	case string:
		return v, v != ""
	case json.Number:
		return v.String(), true
	}
	return "", false
}

// newRequest returns a request bound to t's context with the given body and
// headers, failing t if the URL is invalid.
func newRequest(t testing.TB, method, url string, body []byte, h http.Header) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("webhookstest: %v", err)
	}
	req.Header = h
	return req
}
