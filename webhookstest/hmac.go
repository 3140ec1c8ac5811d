// Package webhookstest signs webhooks the way providers do, so a host can
// test its handlers end to end through the same verifier, gateway and
// processor it runs in production.
//
// SignHMAC and NewHMACRequest sign for any HMACOptions, the presets
// included:
//
//	msg := webhookstest.HMACMessage{Body: []byte(`{"id":"evt_1","type":"invoice.paid"}`)}
//	req := webhookstest.NewHMACRequest(t, "/webhooks/stripe", webhooks.StripeOptions(), secret, msg)
//	rec := httptest.NewRecorder()
//	gateway.ServeHTTP(rec, req)
//
// The signatures are computed here, independently of the package's
// verifier, so a test that passes shows that the verifier accepts what the
// provider's documented scheme produces.
package webhookstest

import (
	"bytes"
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
	"testing"
	"time"

	"github.com/hookinbox/webhooks"
)

// HMACMessage is a webhook for SignHMAC to sign.
type HMACMessage struct {
	// ID is the event ID. When the options read it from a header
	// (EventIDHeader), it is written there; when they read it from the
	// body (EventIDPath), the body must carry it and a non-empty ID must
	// equal it; when they compute it (EventIDFunc), it must be empty.
	ID string
	// Type is the event type as the provider sends it, without any
	// EventTypeSuffixPath suffix. It is written to EventTypeHeader, or
	// checked against the body at EventTypePath like ID.
	Type string
	// Timestamp is when the webhook is signed; zero means time.Now(). It
	// is written to the signature header or TimestampHeader in
	// TimestampFormat (RFC 3339 to the second). When the options read
	// the timestamp from the body (TimestampPath), the body must carry it
	// and a non-zero Timestamp must equal it.
	Timestamp time.Time
	// Body is the raw request body, signed as it is.
	Body []byte
}

// SignHMAC signs msg as a provider configured by opts would, with secret
// as the provider's signing secret (encoded as the provider hands it out,
// for example "whsec_…"; DecodeSecret is applied). It returns the request
// headers: the signature, the timestamp and event ID and type headers the
// options read, and Content-Type application/json when the body is JSON.
// Headers are written under the options' configured names, never the
// HeaderFallbacks.
//
// It returns an error when the options are invalid (as NewHMACVerifier
// reports them), when the secret is empty, only SecretPrefix or cannot be
// decoded, or when msg disagrees with the body. Errors never contain the
// secret.
func SignHMAC(opts webhooks.HMACOptions, secret string, msg HMACMessage) (http.Header, error) {
	// NewHMACVerifier validates the options and refuses an empty,
	// prefix-only or undecodable secret, naming it by ID only.
	if _, err := webhooks.NewHMACVerifier("webhookstest", opts, webhooks.StaticSecrets(secret), nil); err != nil {
		return nil, fmt.Errorf("webhookstest: %w", err)
	}
	key := []byte(secret)
	if opts.DecodeSecret != nil {
		var err error
		if key, err = opts.DecodeSecret(key); err != nil {
			return nil, fmt.Errorf("webhookstest: decoding the secret: %w", err)
		}
	}
	newHash, err := hmacHashFunc(opts.Algorithm)
	if err != nil {
		return nil, err
	}

	h := http.Header{}
	if json.Valid(msg.Body) {
		h.Set("Content-Type", "application/json")
	}
	at := msg.Timestamp
	if at.IsZero() {
		at = time.Now()
	}
	var timestamp string
	switch {
	case opts.TimestampHeader != "":
		timestamp = formatTimestamp(at, opts.TimestampFormat)
		h.Set(opts.TimestampHeader, timestamp)
	case opts.TimestampKey != "":
		timestamp = formatTimestamp(at, opts.TimestampFormat)
	case opts.TimestampPath != "":
		raw, ok := bodyValue(msg.Body, opts.TimestampPath)
		if !ok {
			return nil, fmt.Errorf("webhookstest: the options read the timestamp from the body at %q, but the body has none there", opts.TimestampPath)
		}
		if !msg.Timestamp.IsZero() && raw != formatTimestamp(msg.Timestamp, opts.TimestampFormat) {
			return nil, fmt.Errorf("webhookstest: the body's timestamp %s differs from HMACMessage.Timestamp", raw)
		}
	}
	switch {
	case opts.EventIDHeader != "":
		if msg.ID != "" {
			h.Set(opts.EventIDHeader, msg.ID)
		}
	case opts.EventIDPath != "":
		if err := hmacCheckBody(msg.Body, opts.EventIDPath, "ID", msg.ID); err != nil {
			return nil, err
		}
	case opts.EventIDFunc != nil && msg.ID != "":
		return nil, errors.New("webhookstest: the options compute the event ID (EventIDFunc), so HMACMessage.ID must be empty")
	}
	switch {
	case opts.EventTypeHeader != "":
		if msg.Type != "" {
			h.Set(opts.EventTypeHeader, msg.Type)
		}
	case opts.EventTypePath != "":
		if err := hmacCheckBody(msg.Body, opts.EventTypePath, "Type", msg.Type); err != nil {
			return nil, err
		}
	}

	content, err := hmacSignedContent(opts, h, timestamp, msg)
	if err != nil {
		return nil, err
	}
	mac := hmac.New(newHash, key)
	mac.Write(content)
	encode := hex.EncodeToString
	if opts.Encoding == webhooks.EncodingBase64 {
		encode = base64.StdEncoding.EncodeToString
	}
	sig := encode(mac.Sum(nil))
	if opts.ItemSeparator == "" {
		h.Set(opts.SignatureHeader, opts.SignaturePrefix+sig)
		return h, nil
	}
	kv := opts.KeyValueSeparator
	if kv == "" {
		kv = webhooks.DefaultKeyValueSeparator
	}
	var items []string
	if opts.TimestampKey != "" {
		items = append(items, opts.TimestampKey+kv+timestamp)
	}
	items = append(items, opts.SignatureKey+kv+sig)
	h.Set(opts.SignatureHeader, strings.Join(items, opts.ItemSeparator))
	return h, nil
}

// NewHMACRequest returns a POST request to url carrying msg.Body and the
// headers SignHMAC makes, bound to t's context. It fails t if signing
// fails. The request can be served directly (handler.ServeHTTP with an
// httptest.ResponseRecorder) or sent to an httptest.Server with an
// http.Client.
func NewHMACRequest(t testing.TB, url string, opts webhooks.HMACOptions, secret string, msg HMACMessage) *http.Request {
	t.Helper()
	h, err := SignHMAC(opts, secret, msg)
	if err != nil {
		t.Fatal(err)
	}
	return newRequest(t, http.MethodPost, url, msg.Body, h)
}

// hmacSignedContent builds the bytes the provider signs.
func hmacSignedContent(opts webhooks.HMACOptions, h http.Header, timestamp string, msg HMACMessage) ([]byte, error) {
	if opts.SignedContentFunc != nil {
		req := &webhooks.Request{Method: http.MethodPost, Header: h.Clone(), Body: msg.Body}
		id := ""
		if opts.EventIDHeader != "" {
			id = msg.ID
		}
		b, err := opts.SignedContentFunc(req, timestamp, id)
		if err != nil {
			return nil, fmt.Errorf("webhookstest: SignedContentFunc: %w", err)
		}
		return b, nil
	}
	if opts.SignedContent == webhooks.SignBody {
		return msg.Body, nil
	}
	sep := opts.SignedContentSeparator
	if sep == "" {
		sep = webhooks.DefaultSignedContentSeparator
	}
	var b bytes.Buffer
	if opts.SignedContentPrefix != "" {
		b.WriteString(opts.SignedContentPrefix + sep)
	}
	if opts.SignedContent == webhooks.SignIDTimestampBody {
		b.WriteString(msg.ID + sep)
	}
	b.WriteString(timestamp + sep)
	b.Write(msg.Body)
	return b.Bytes(), nil
}

func hmacHashFunc(a webhooks.HMACAlgorithm) (func() hash.Hash, error) {
	switch a {
	case webhooks.HMACSHA256:
		return sha256.New, nil
	case webhooks.HMACSHA1:
		return sha1.New, nil
	case webhooks.HMACSHA512:
		return sha512.New, nil
	}
	return nil, fmt.Errorf("webhookstest: unknown algorithm %v", a)
}

func formatTimestamp(t time.Time, f webhooks.TimestampFormat) string {
	switch f {
	case webhooks.TimestampUnixMillis:
		return strconv.FormatInt(t.UnixMilli(), 10)
	case webhooks.TimestampRFC3339:
		return t.UTC().Format(time.RFC3339)
	}
	return strconv.FormatInt(t.Unix(), 10)
}

// hmacCheckBody fails unless the body has a string or number at path and, when
// want is set, it equals want.
func hmacCheckBody(body []byte, path, field, want string) error {
	got, ok := bodyValue(body, path)
	switch {
	case !ok && want != "":
		return fmt.Errorf("webhookstest: the options read the event %s from the body at %q, but the body has none there", strings.ToLower(field), path)
	case ok && want != "" && got != want:
		return fmt.Errorf("webhookstest: the body's %q is %q but HMACMessage.%s is %q", path, got, field, want)
	}
	return nil
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
