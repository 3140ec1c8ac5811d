package webhooks

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The syntax the HMAC verifier reads: header values, timestamps, signature
// headers, base64, and dotted paths into JSON bodies. Nothing here sees a
// secret, and no rejection detail here echoes the input.

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

// find returns the value at a dotted path: nil when the path leads nowhere
// or to null, and ok false when the body is not a single JSON value.
func (d *jsonDocument) find(path string) (value any, ok bool) {
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
		return nil, false
	}
	cur := d.root
	for seg := range strings.SplitSeq(path, ".") {
		switch node := cur.(type) {
		case map[string]any:
			cur = node[seg]
		case []any:
			// Decimal digits only: Atoi alone would take "+1" and "-0".
			i, err := strconv.Atoi(seg)
			if err != nil || strings.TrimLeft(seg, "0123456789") != "" || i >= len(node) {
				cur = nil
			} else {
				cur = node[i]
			}
		default:
			cur = nil
		}
		if cur == nil {
			return nil, true
		}
	}
	return cur, true
}

// lookup returns the string or number at a dotted path. A missing, null or
// empty value is rejected with the missing reason; a body that is not JSON,
// or a value of another kind, with ReasonMalformedPayload.
func (d *jsonDocument) lookup(path string, missing Reason, what string) (string, *VerificationError) {
	value, ok := d.find(path)
	switch val := value.(type) {
	case string:
		if val == "" {
			return "", Reject(missing, "the %s at %q is empty", what, path)
		}
		return val, nil
	case json.Number:
		return val.String(), nil
	case nil:
		if !ok {
			return "", Reject(ReasonMalformedPayload, "the body is not a single JSON value, so the %s at %q cannot be read", what, path)
		}
		return "", Reject(missing, "the body has no %s at %q", what, path)
	}
	return "", Reject(ReasonMalformedPayload, "the %s at %q is not a string or a number", what, path)
}

// lookupString returns the non-empty string at a dotted path, or false
// when there is none (or the body is not JSON).
func (d *jsonDocument) lookupString(path string) (string, bool) {
	value, _ := d.find(path)
	s, ok := value.(string)
	return s, ok && s != ""
}
