package webhookstest

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/hookinbox/webhooks/providers"
)

// TwilioMessage is a Twilio webhook for SignTwilio to sign.
type TwilioMessage struct {
	// Method is the HTTP method, http.MethodPost (the default) or
	// http.MethodGet. A GET carries Params in the URL's query string.
	Method string
	// URL is the public URL Twilio requests, query string included, as
	// configured at Twilio (for example
	// "https://hooks.example.com/webhooks/twilio?tenant=a").
	URL string
	// Params are the request parameters: the form body of a POST, the
	// added query parameters of a GET. Must be empty when JSON is set.
	Params url.Values
	// JSON, when set, is the body of a JSON POST, which Twilio signs
	// through a bodySHA256 query parameter that SignTwilio adds to URL.
	JSON []byte
	// IdempotencyToken, when set, is sent as I-Twilio-Idempotency-Token.
	IdempotencyToken string
	// SharedKeyID, when set, signs as a Webhook Rule with a SharedKey
	// does: the secret is the SharedKey's, the algorithm HMAC-SHA-256, and
	// X-Twilio-Webhooks-Signature-Settings names this key.
	SharedKeyID string
}

// SignTwilio signs msg with secret (the account's auth token, or a
// SharedKey's secret when msg.SharedKeyID is set) as Twilio does. It
// returns the URL to request (msg.URL with GET parameters or bodySHA256
// added), the body, and the headers: X-Twilio-Signature, Content-Type,
// and the settings and idempotency headers when msg asks for them.
func SignTwilio(secret string, msg TwilioMessage) (requestURL string, body []byte, h http.Header, err error) {
	if secret == "" {
		return "", nil, nil, errors.New("webhookstest: the Twilio secret is empty")
	}
	u, err := url.Parse(msg.URL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", nil, nil, errors.New("webhookstest: TwilioMessage.URL is not an absolute http(s) URL")
	}
	method := msg.Method
	if method == "" {
		method = http.MethodPost
	}
	if len(msg.JSON) > 0 && (len(msg.Params) > 0 || method != http.MethodPost) {
		return "", nil, nil, errors.New("webhookstest: a JSON Twilio request is a POST without Params")
	}
	h = http.Header{}
	requestURL = msg.URL
	params := ""
	switch {
	case len(msg.JSON) > 0:
		sum := sha256.Sum256(msg.JSON)
		requestURL = addQuery(msg.URL, "bodySHA256="+hex.EncodeToString(sum[:]))
		body = msg.JSON
		h.Set("Content-Type", "application/json")
	case method == http.MethodGet:
		if len(msg.Params) > 0 {
			requestURL = addQuery(msg.URL, msg.Params.Encode())
		}
	case method == http.MethodPost:
		body = []byte(msg.Params.Encode())
		params = TwilioParams(msg.Params)
		h.Set("Content-Type", "application/x-www-form-urlencoded")
	default:
		return "", nil, nil, fmt.Errorf("webhookstest: Twilio sends GET or POST, not %s", method)
	}
	newHash := sha1.New
	if msg.SharedKeyID != "" {
		newHash = sha256.New
		h.Set(providers.TwilioSignatureSettingsHeader, "key="+msg.SharedKeyID+",algorithm=HMAC_SHA256")
	}
	h.Set(providers.TwilioSignatureHeader, twilioMAC(newHash, secret, requestURL+params))
	if msg.IdempotencyToken != "" {
		h.Set(providers.TwilioIdempotencyTokenHeader, msg.IdempotencyToken)
	}
	return requestURL, body, h, nil
}

// NewTwilioRequest returns the request SignTwilio describes, bound to t's
// context. It fails t if signing fails. Serve it to a handler mounted at
// the URL's path; the verifier must be told the public base URL (for
// example the scheme and host of msg.URL).
func NewTwilioRequest(t testing.TB, secret string, msg TwilioMessage) *http.Request {
	t.Helper()
	requestURL, body, h, err := SignTwilio(secret, msg)
	if err != nil {
		t.Fatal(err)
	}
	method := msg.Method
	if method == "" {
		method = http.MethodPost
	}
	return newRequest(t, method, requestURL, body, h)
}

// TwilioSignature returns the X-Twilio-Signature Twilio computes with an
// auth token: the base64 HMAC-SHA-1 of fullURL followed by TwilioParams of
// params (nil for JSON and GET requests).
func TwilioSignature(authToken, fullURL string, params url.Values) string {
	return twilioMAC(sha1.New, authToken, fullURL+TwilioParams(params))
}

// TwilioParams returns parameters as Twilio appends them to the URL before
// signing: sorted by name, each name directly followed by its value, a
// repeated name once for each of its distinct values in sorted order.
func TwilioParams(params url.Values) string {
	names := make([]string, 0, len(params))
	for name := range params {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, name := range names {
		vals := slices.Clone(params[name])
		slices.Sort(vals)
		for _, val := range slices.Compact(vals) {
			b.WriteString(name + val)
		}
	}
	return b.String()
}

func twilioMAC(newHash func() hash.Hash, secret, content string) string {
	mac := hmac.New(newHash, []byte(secret))
	mac.Write([]byte(content))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// addQuery appends a raw query to a URL that may already have one, before
// any fragment.
func addQuery(rawURL, query string) string {
	base, fragment, hasFragment := strings.Cut(rawURL, "#")
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	out := base + sep + query
	if hasFragment {
		out += "#" + fragment
	}
	return out
}
