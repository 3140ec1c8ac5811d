package webhooks

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/hookinbox/webhooks/internal/jsonpath"
	"github.com/hookinbox/webhooks/internal/sigsyntax"
)

// DefaultTolerance is how far a signed timestamp may lie from the verifier's
// clock, in either direction, when TimestampSource.Tolerance is zero.
const DefaultTolerance = 5 * time.Minute

// TimestampFormat is how a provider writes its signing timestamp.
type TimestampFormat int

// Timestamp formats for TimestampSource.Format. The zero value is
// TimestampUnixSeconds.
const (
	// TimestampUnixSeconds is a decimal count of seconds since the Unix
	// epoch, for example "1492774577", the default.
	TimestampUnixSeconds TimestampFormat = sigsyntax.UnixSeconds
	// TimestampUnixMillis is a decimal count of milliseconds since the Unix
	// epoch, for example "1492774577000".
	TimestampUnixMillis TimestampFormat = sigsyntax.UnixMillis
	// TimestampRFC3339 is an RFC 3339 date and time with an optional
	// fraction of a second, for example "2017-04-21T11:36:17Z".
	TimestampRFC3339 TimestampFormat = sigsyntax.RFC3339
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

// TimestampSource says where a verifier finds the time a provider signed a
// request, how it is written, and how far from the clock it may lie. The
// verifiers in this module whose time the host can place take one in a
// field named Timestamp; where a provider fixes the place (Mailgun,
// SendGrid in package providers), the field only sets the window, and its
// zero value means the documented place, not "no timestamp". (SNS, whose
// retries keep their first timestamp for hours, checks no window by
// default and has a Tolerance of its own.) For the host's own schemes, the
// zero value is no timestamp: nothing is checked and
// Verification.OccurredAt is zero.
//
// With a source set, the timestamp is required and the signature must cover
// it: a header or list item timestamp must be part of the signed content,
// and a timestamp in the body is covered because the body is. It becomes
// Verification.OccurredAt, and it must lie within Tolerance of the clock,
// checked only after the signature verified, so a request with a bad
// signature is never told whether its time would have passed.
type TimestampSource struct {
	// Header is the name of a header that carries the timestamp, for
	// example "Webhook-Timestamp".
	Header string

	// Key is the key of the timestamp item inside a list-style signature
	// header, for example "t" in Stripe's "t=…,v1=…". Only for schemes
	// whose signature header is a list.
	Key string

	// Path is a dotted path to the timestamp in the JSON body, for example
	// "webhookTimestamp" for Linear. The value may be a string or a
	// number. It is read after the signature verified.
	//
	// At most one of Header, Key and Path may be set.
	Path string

	// Format is how the timestamp is written. Defaults to
	// TimestampUnixSeconds.
	Format TimestampFormat

	// Tolerance is how far the timestamp may be from the clock, in the
	// past or in the future; farther is rejected with
	// ReasonTimestampExpired. Must not be negative. Defaults to
	// DefaultTolerance (5 minutes).
	Tolerance time.Duration
}

// Validate reports every problem with the source. Problems name the fields
// as Timestamp.Header and so on, the name every options struct of this
// module gives the part.
func (s TimestampSource) Validate() error {
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	sources := 0
	for _, set := range []bool{s.Header != "", s.Key != "", s.Path != ""} {
		if set {
			sources++
		}
	}
	if sources > 1 {
		bad("more than one of Timestamp.Header, Timestamp.Key and Timestamp.Path is set: choose one timestamp source")
	}
	if s.Header != "" && !sigsyntax.IsHeaderName(s.Header) {
		bad("Timestamp.Header %q is not a valid header name", s.Header)
	}
	if s.Path != "" && !jsonpath.ValidPath(s.Path) {
		bad("Timestamp.Path %q is not a dotted path: use keys separated by single dots, for example \"meta.sentAt\"", s.Path)
	}
	switch s.Format {
	case TimestampUnixSeconds, TimestampUnixMillis, TimestampRFC3339:
	default:
		bad("Timestamp.Format %v is unknown: use TimestampUnixSeconds, TimestampUnixMillis or TimestampRFC3339", s.Format)
	}
	if s.Tolerance < 0 {
		bad("Timestamp.Tolerance %v is negative: use a positive window, or 0 for DefaultTolerance", s.Tolerance)
	}
	if sources == 0 && (s.Tolerance != 0 || s.Format != TimestampUnixSeconds) {
		bad("Timestamp.Format or Timestamp.Tolerance is set without a timestamp source: set Timestamp.Header, Timestamp.Key or Timestamp.Path")
	}
	return errors.Join(problems...)
}

// FromHeader reads the timestamp before the signature is checked, so the
// signed content can include it: from Header, or, for Key, from item (the
// raw value of the signature header's timestamp item, "" when absent). It
// returns the raw value as sent and its time, or zero values when the
// source is Path or none. An absent timestamp is rejected with
// ReasonMissingTimestamp, one that is not in Format with
// ReasonMalformedTime, a header sent twice with ReasonMalformedHeader.
func (s TimestampSource) FromHeader(h http.Header, item string) (raw string, t time.Time, err error) {
	return s.fromHeader(h, http.CanonicalHeaderKey(s.Header), item)
}

// fromHeader is FromHeader with the canonical name of Header.
func (s TimestampSource) fromHeader(h http.Header, key, item string) (raw string, t time.Time, err error) {
	switch {
	case s.Header != "":
		var rej *VerificationError
		if raw, rej = singleHeaderKey(h, key, s.Header, ReasonMissingTimestamp); rej != nil {
			return "", time.Time{}, rej
		}
	case s.Key != "":
		if raw = item; raw == "" {
			return "", time.Time{}, Reject(ReasonMissingTimestamp, "the signature header has no %q item", s.Key)
		}
	default:
		return "", time.Time{}, nil
	}
	t, ok := sigsyntax.ParseTimestamp(raw, int(s.Format))
	if !ok {
		return "", time.Time{}, Reject(ReasonMalformedTime, "the timestamp is not in %v format", s.Format)
	}
	return raw, t, nil
}

// FromBody reads the timestamp at Path of an authentic JSON body, or
// returns the zero time when the source is not Path.
func (s TimestampSource) FromBody(body []byte) (time.Time, error) {
	return s.fromDoc(&jsonpath.Doc{Body: body})
}

// fromDoc is FromBody with a body that may already be parsed.
func (s TimestampSource) fromDoc(doc *jsonpath.Doc) (time.Time, error) {
	if s.Path == "" {
		return time.Time{}, nil
	}
	raw, rej := lookupJSON(doc, s.Path, ReasonMissingTimestamp, "timestamp")
	if rej != nil {
		return time.Time{}, rej
	}
	t, ok := sigsyntax.ParseTimestamp(raw, int(s.Format))
	if !ok {
		return time.Time{}, Reject(ReasonMalformedTime, "the timestamp at %q is not in %v format", s.Path, s.Format)
	}
	return t, nil
}

// CheckWindow rejects t with ReasonTimestampExpired when it lies more than
// Tolerance (DefaultTolerance when zero) before or after now. It checks
// nothing when no source is set.
func (s TimestampSource) CheckWindow(t, now time.Time) error {
	if !s.isSet() {
		return nil
	}
	tol := s.Tolerance
	if tol == 0 {
		tol = DefaultTolerance
	}
	// Compare instants rather than a Duration, which saturates for
	// timestamps centuries away.
	if t.Before(now.Add(-tol)) {
		return Reject(ReasonTimestampExpired, "the timestamp is more than %v in the past", tol)
	}
	if t.After(now.Add(tol)) {
		return Reject(ReasonTimestampExpired, "the timestamp is more than %v in the future", tol)
	}
	return nil
}

// isSet reports whether a timestamp source is configured.
func (s TimestampSource) isSet() bool { return s.Header != "" || s.Key != "" || s.Path != "" }

// signed reports whether the timestamp is read before the signature is
// checked (from a header or the signature header), so the signed content
// must include it.
func (s TimestampSource) signed() bool { return s.Header != "" || s.Key != "" }
