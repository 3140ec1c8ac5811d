// Package wire reads the syntax webhooks arrive in: single header values,
// timestamps, base64, signature headers, signed-content templates and dotted
// paths into JSON bodies. It is shared by the root package's verifiers and
// package providers, and imports neither: it returns plain values and
// problem codes, and its callers turn those into rejections. Nothing here
// sees a secret, and no message here repeats the input.
package wire

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

// DecodeBase64 accepts the standard and the URL-safe alphabets, padded or
// not, and nothing else (the base64 package would skip CR and LF).
func DecodeBase64(s string) ([]byte, error) {
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

// DecodeDigest decodes a digest of size bytes written in hex (either case)
// or, when b64 is set, in base64 as DecodeBase64 reads it.
func DecodeDigest(s string, b64 bool, size int) ([]byte, bool) {
	var (
		b   []byte
		err error
	)
	if b64 {
		if len(s) > base64.StdEncoding.EncodedLen(size) {
			return nil, false
		}
		b, err = DecodeBase64(s)
	} else {
		if len(s) != hex.EncodedLen(size) {
			return nil, false
		}
		b, err = hex.DecodeString(s)
	}
	if err != nil || len(b) != size {
		return nil, false
	}
	return b, true
}

// BodyIDPrefix starts every event ID derived from a body's SHA-256.
const BodyIDPrefix = "sha256:"

// BodyID returns BodyIDPrefix and the lower-case hex SHA-256 of body.
func BodyID(body []byte) string {
	sum := sha256.Sum256(body)
	return DigestID(sum)
}

// DigestID is BodyID of a body whose SHA-256 is already known.
func DigestID(sum [sha256.Size]byte) string {
	return BodyIDPrefix + hex.EncodeToString(sum[:])
}
