// Package sigsyntax reads the syntax signed webhooks arrive in: single
// header values, timestamps, base64 and hex digests, signature headers,
// signed-content templates and the body-derived event ID. (Dotted paths into
// JSON bodies are package jsonpath.) It is shared by the root package's
// verifiers and package providers, and imports neither: it returns plain
// values and problem codes, and its callers turn those into rejections.
// Nothing here sees a secret, and no message here repeats the input.
package sigsyntax

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header returns the value of header name, trimmed, and how many times the
// header was sent. A caller treats n > 1 as malformed (the copies could
// disagree) and an empty value as missing.
func Header(h http.Header, name string) (value string, n int) {
	values := h.Values(name)
	if len(values) == 0 {
		return "", 0
	}
	return strings.TrimSpace(values[0]), len(values)
}

// HeaderKey is Header for a name already in canonical form
// (http.CanonicalHeaderKey), which it looks up directly.
func HeaderKey(h http.Header, key string) (value string, n int) {
	values := h[key]
	if len(values) == 0 {
		return "", 0
	}
	return strings.TrimSpace(values[0]), len(values)
}

// IsHeaderName reports whether s is a valid HTTP field name (an RFC 9110
// token).
func IsHeaderName(s string) bool {
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

// Timestamp formats. The values are those of webhooks.TimestampFormat.
const (
	UnixSeconds = iota
	UnixMillis
	RFC3339
)

// maxUnixSeconds is 9999-12-31T23:59:59Z, the last instant RFC 3339 can
// write. Larger Unix timestamps are malformed rather than far in the future.
const maxUnixSeconds = 253402300799

// ParseTimestamp parses a timestamp in one of the formats above. Unix forms
// must be plain decimal digits, up to the end of year 9999.
func ParseTimestamp(s string, format int) (time.Time, bool) {
	switch format {
	case UnixSeconds, UnixMillis:
		if s == "" || strings.TrimLeft(s, "0123456789") != "" {
			return time.Time{}, false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, false
		}
		if format == UnixMillis {
			if n > maxUnixSeconds*1000+999 {
				return time.Time{}, false
			}
			return time.UnixMilli(n).UTC(), true
		}
		if n > maxUnixSeconds {
			return time.Time{}, false
		}
		return time.Unix(n, 0).UTC(), true
	case RFC3339:
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return time.Time{}, false
		}
		return t.UTC(), true
	}
	return time.Time{}, false
}

// Strict base64 encodings, built once: WithPadding and Strict allocate.
var (
	base64Std    = base64.StdEncoding.Strict()
	base64StdRaw = base64.StdEncoding.WithPadding(base64.NoPadding).Strict()
	base64URL    = base64.URLEncoding.Strict()
	base64URLRaw = base64.URLEncoding.WithPadding(base64.NoPadding).Strict()
)

// base64Encoding picks the encoding DecodeBase64 reads s with, or nil when
// s has a character of neither alphabet or of both.
func base64Encoding(s string) *base64.Encoding {
	std, url := false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '=':
		case c == '+' || c == '/':
			std = true
		case c == '-' || c == '_':
			url = true
		default:
			return nil
		}
	}
	padded := strings.HasSuffix(s, "=")
	switch {
	case std && url:
		return nil
	case url && padded:
		return base64URL
	case url:
		return base64URLRaw
	case padded:
		return base64Std
	}
	return base64StdRaw
}

// DecodeBase64 accepts the standard and the URL-safe alphabets, padded or
// not, and nothing else (the base64 package would skip CR and LF).
func DecodeBase64(s string) ([]byte, error) {
	enc := base64Encoding(s)
	if enc == nil {
		return nil, errors.New("invalid base64 character or mixed base64 alphabets")
	}
	return enc.DecodeString(s)
}

// DecodeDigest decodes a digest of size bytes written in hex (either case)
// or, when b64 is set, in base64 as DecodeBase64 reads it.
func DecodeDigest(s string, b64 bool, size int) ([]byte, bool) {
	b := make([]byte, size)
	if !decodeDigestInto(b, s, b64) {
		return nil, false
	}
	return b, true
}

// maxHeldBase64 is the longest base64 digest decodeDigestInto decodes
// without allocating, that of a 64-byte digest.
const maxHeldBase64 = 88

// decodeDigestInto decodes a digest of len(dst) bytes as DecodeDigest
// does, into dst. It allocates nothing for digests of up to 64 bytes.
func decodeDigestInto(dst []byte, s string, b64 bool) bool {
	size := len(dst)
	if !b64 {
		if len(s) != hex.EncodedLen(size) {
			return false
		}
		bad := byte(0)
		s := s[:2*len(dst)] // one bounds check for the loop
		for i := range dst {
			hi, lo := hexValue[s[2*i]], hexValue[s[2*i+1]]
			bad |= hi | lo
			dst[i] = hi<<4 | lo&0x0f
		}
		return bad&0xf0 == 0
	}
	if len(s) > base64.StdEncoding.EncodedLen(size) {
		return false
	}
	enc := base64Encoding(s)
	if enc == nil {
		return false
	}
	if len(s) > maxHeldBase64 {
		b, err := enc.DecodeString(s)
		return err == nil && len(b) == size && copy(dst, b) == size
	}
	// Copied to arrays that stay on the stack: a []byte(s) conversion
	// and a destination of DecodedLen would each allocate.
	var src [maxHeldBase64]byte
	var out [maxHeldBase64]byte
	n, err := enc.Decode(out[:], src[:copy(src[:], s)])
	if err != nil || n != size {
		return false
	}
	copy(dst, out[:n])
	return true
}

// hexValue maps a hex digit of either case to its value, and every other
// byte to 0xff.
var hexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i, c := range "0123456789abcdef" {
		t[c] = byte(i)
	}
	for i, c := range "ABCDEF" {
		t[c] = byte(10 + i)
	}
	return t
}()

// BodyIDPrefix starts every event ID derived from a body's SHA-256.
const BodyIDPrefix = "sha256:"

// BodyID returns BodyIDPrefix and the lower-case hex SHA-256 of body.
func BodyID(body []byte) string {
	sum := sha256.Sum256(body)
	return DigestID(sum)
}

// DigestID is BodyID of a body whose SHA-256 is already known.
func DigestID(sum [sha256.Size]byte) string {
	var b [len(BodyIDPrefix) + 2*sha256.Size]byte
	copy(b[:], BodyIDPrefix)
	hex.Encode(b[len(BodyIDPrefix):], sum[:])
	return string(b[:])
}
