package providers

import (
	"crypto"
	"strconv"
	"strings"
	"time"

	"github.com/hookinbox/webhooks"
)

// The catalog's text, derived from each entry's definition: the options
// its verifier is built with. Prose (an entry's notes) says only what no
// field does, and stands alone where the definition is code (a
// SignedContentFunc, an IDFunc) or a verifier of a fixed format.

// notes are an entry's prose. Each is appended to the text derived from
// the definition (so it starts with its own separator, "; " or " ("), or
// is the whole text where nothing is derived.
type notes struct {
	headers, signed, window, eventID string
	// content says what a SignedContentFunc signs.
	content string
}

// join is derived followed by the note, or the note alone.
func join(derived, note string) string {
	if derived == "" {
		return strings.TrimPrefix(note, "; ")
	}
	return derived + note
}

// Headers names the request headers the scheme reads.
func (e Entry) Headers() string { return join(e.definedHeaders(), e.notes.headers) }

// Signed says what the signature covers and how it is written.
func (e Entry) Signed() string { return join(e.definedSigned(), e.notes.signed) }

// Window is how far a signed timestamp may lie from the clock, or "none"
// when the scheme signs no time.
func (e Entry) Window() string { return join(e.definedWindow(), e.notes.window) }

// EventID says where the event ID comes from and whether the signature
// covers it.
func (e Entry) EventID() string { return join(e.definedEventID(), e.notes.eventID) }

// request returns the description of the entry's signed request, and the
// algorithm's name, for the schemes that have one.
func (e Entry) request() (webhooks.SignedRequest, string, bool) {
	if o, ok := e.HMACOptions(Config{PublicURL: "https://hooks.example.com"}); ok {
		return o.SignedRequest, hmacName(o.Algorithm), true
	}
	if o, ok := e.Ed25519Options(); ok {
		return o.SignedRequest, "Ed25519", true
	}
	return webhooks.SignedRequest{}, "", false
}

func (e Entry) definedHeaders() string {
	if o, ok := e.TokenOptions(); ok {
		return code(o.Header) + eventHeaders(o.Event)
	}
	r, _, ok := e.request()
	if !ok {
		return ""
	}
	var sigs []string
	names := e.anyHeaders
	if len(names) == 0 {
		names = []string{r.SignatureHeader}
	}
	for _, name := range names {
		sigs = append(sigs, code(name+": "+signatureShape(r)))
	}
	out := strings.Join(sigs, ", ")
	if h := r.Timestamp.Header; h != "" {
		out += ", " + code(h) + formatNote(r.Timestamp.Format)
	}
	out += eventHeaders(r.Event)
	var alts []string
	for _, name := range []string{r.SignatureHeader, r.Timestamp.Header, r.Event.IDHeader, r.Event.TypeHeader} {
		for k, alt := range r.HeaderFallbacks {
			if name != "" && strings.EqualFold(k, name) {
				alts = append(alts, code(alt))
			}
		}
	}
	if len(alts) > 0 {
		out += " (" + strings.Join(alts, ", ") + " read when absent)"
	}
	if len(r.OtherSignatureHeaders) > 0 {
		var others []string
		for _, h := range r.OtherSignatureHeaders {
			others = append(others, code(h))
		}
		out += "; " + strings.Join(others, ", ") + " not read (another signature or credential of the request; never stored)"
	}
	return out
}

// eventHeaders lists the event ID and type headers, each after ", ".
func eventHeaders(ev webhooks.EventSource) string {
	var out string
	for _, h := range []string{ev.IDHeader, ev.TypeHeader} {
		if h != "" {
			out += ", " + code(h)
		}
	}
	return out
}

// signatureShape writes a signature header's value as the description
// lays it out: "sha256=<hex>", "t=…,v1=<hex>[,v1=<hex> …]".
func signatureShape(r webhooks.SignedRequest) string {
	enc := "<hex>"
	if r.Encoding == webhooks.EncodingBase64 {
		enc = "<b64>"
	}
	if r.ItemSeparator == "" {
		return r.SignaturePrefix + enc
	}
	item := r.SignatureKey + r.KeyValueSeparator + enc
	out := item + "[" + r.ItemSeparator + item + " …]"
	if r.Timestamp.Key != "" {
		out = r.Timestamp.Key + r.KeyValueSeparator + "…" + r.ItemSeparator + out
	}
	return out
}

func (e Entry) definedSigned() string {
	if _, ok := e.TokenOptions(); ok {
		return "nothing: the token compared in constant time"
	}
	r, alg, ok := e.request()
	if !ok {
		return ""
	}
	out := alg
	if alg != "Ed25519" {
		out += " " + r.Encoding.String()
	}
	content := e.notes.content
	if r.SignedContentFunc == nil {
		content = r.SignedContent
		if content == "" {
			content = "{body}"
		}
		content = code(content)
	}
	out = content + ", " + out
	if p := r.Timestamp.Path; p != "" {
		out += "; the body's " + code(p) + formatNote(r.Timestamp.Format) + " is the signing time, signed with it"
	}
	return out
}

func (e Entry) definedWindow() string {
	if _, ok := e.TokenOptions(); ok {
		return windowNone
	}
	r, _, ok := e.request()
	if !ok {
		return ""
	}
	ts := r.Timestamp
	if ts.Header == "" && ts.Key == "" && ts.Path == "" {
		return windowNone
	}
	tol := ts.Tolerance
	if tol == 0 {
		tol = webhooks.DefaultTolerance
	}
	return window(tol)
}

// window writes a tolerance as the catalog shows it: "±5 min", "±5 s".
func window(d time.Duration) string {
	if d%time.Minute == 0 {
		return "±" + strconv.Itoa(int(d/time.Minute)) + " min"
	}
	return "±" + strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

func (e Entry) definedEventID() string {
	if o, ok := e.TokenOptions(); ok {
		return eventID(o.Event, false, false)
	}
	r, _, ok := e.request()
	if !ok {
		return ""
	}
	return eventID(r.Event, true, r.SignsID())
}

// eventID says where an event source takes the ID from, and whether the
// signature covers it: the body (when body is signed), the ID header
// (when headerSigned).
func eventID(ev webhooks.EventSource, body, headerSigned bool) string {
	signed := func(yes bool) string {
		if yes {
			return ", signed"
		}
		return ", **not signed**"
	}
	switch {
	case ev.IDHeader != "":
		return code(ev.IDHeader) + signed(headerSigned)
	case ev.IDPath != "":
		return "the body's " + code(ev.IDPath) + signed(body)
	case ev.IDFunc != nil:
		return "" // code: the entry's notes say what it computes
	case body:
		return "SHA-256 of the signed body"
	}
	return "SHA-256 of the body"
}

// formatNote names a timestamp format other than Unix seconds.
func formatNote(f webhooks.TimestampFormat) string {
	switch f {
	case webhooks.TimestampUnixMillis:
		return " (ms)"
	case webhooks.TimestampRFC3339:
		return " (RFC 3339)"
	}
	return ""
}

// hmacName names an HMAC algorithm: "HMAC-SHA-256".
func hmacName(a crypto.Hash) string {
	switch a {
	case crypto.SHA1:
		return "HMAC-SHA-1"
	case crypto.SHA512:
		return "HMAC-SHA-512"
	}
	return "HMAC-SHA-256"
}

// code writes s as inline code.
func code(s string) string { return "`" + s + "`" }
