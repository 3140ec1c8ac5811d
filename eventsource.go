package webhooks

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"

	"github.com/hookinbox/webhooks/internal/jsonpath"
	"github.com/hookinbox/webhooks/internal/sigsyntax"
)

// EventSource says where a verifier finds the event ID and type of a
// request it has found authentic. Every verifier in this module takes one
// in a field named Event (HMACOptions.Event and the options of package
// providers), so the sources read the same under every scheme; a custom
// verifier can use one too (see Extract).
//
// Dotted paths (IDPath, TypePath, TypeSuffixPath) read the JSON body:
// object keys are separated by "." and a segment of decimal digits also
// indexes an array, as in "data.object.id" or "events.0.id". The body is
// parsed only after the request verified, and only when a path is set.
//
// At most one of IDHeader, IDPath and IDFunc may be set, and one of them or
// IDFromBody must be; IDFromBody alone derives the ID from the body, and
// beside another source it stands in when that source yields no ID.
type EventSource struct {
	// IDHeader is the name of the header that carries the event ID, for
	// example "X-GitHub-Delivery".
	IDHeader string

	// IDPath is a dotted path to the event ID in the JSON body, for
	// example "id". The value must be a string or a number.
	IDPath string

	// IDFunc computes the event ID, for providers whose ID is none of the
	// above. It gets the request and the verification so far (EventType,
	// OccurredAt and KeyID are set; PayloadSHA256 only where the verifier
	// supplies a semantic digest: the body's own SHA-256 is the Receiver's
	// to compute). A *VerificationError
	// it returns is passed on as the rejection; any other error is
	// returned wrapped, so the Receiver answers 503.
	IDFunc func(req *Request, v Verification) (string, error)

	// IDFromBody makes the event ID "sha256:" and the hex of the
	// verification's PayloadSHA256 when no other source is set, or when
	// the configured one yields no ID: the digest the verifier set (of its
	// redacted Payload, so no ID is a digest of a credential), else the
	// SHA-256 of the raw body, which it then sets. For
	// providers that send no ID; know the trade-off: a redelivery is
	// recognised only if its body is byte for byte the same (a provider
	// that stamps each attempt makes every retry a new event), and two
	// genuinely different events with identical bodies are stored once.
	// Defaults to false.
	IDFromBody bool

	// TypeHeader is the name of the header that carries the event type,
	// for example "X-GitHub-Event". At most one of TypeHeader and TypePath
	// may be set; with neither, EventType is "".
	TypeHeader string

	// TypePath is a dotted path to the event type in the JSON body, for
	// example "type".
	TypePath string

	// TypeOptional makes the event type a best effort: when its header or
	// path is missing, or the body is not JSON, EventType is "" instead of
	// a rejection. For schemes where the type is only a recommendation
	// (Standard Webhooks). Defaults to false.
	TypeOptional bool

	// TypeSuffixPath, when set, is a dotted path in the JSON body whose
	// string value is appended to the event type after a ".": GitHub's
	// X-GitHub-Event "pull_request" with the body's "action" "opened"
	// becomes "pull_request.opened". When the body is not JSON or has no
	// non-empty string there, the type is left as it is: the suffix never
	// rejects a request. Needs TypeHeader or TypePath. Defaults to none.
	TypeSuffixPath string

	// Order says where the event's ordering key and version are in the
	// body, for ordered handlers (see Handler.Ordered and Ordering). Read
	// only where the signature covers the body; the zero value gives
	// every event no key.
	Order OrderSource
}

// Validate reports every problem with the source. Exactly one ID source is
// required, where IDFromBody may stand alone or back up another. Problems
// name the fields as Event.IDHeader and so on, the name every options
// struct of this module gives the part.
func (s EventSource) Validate() error {
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	sources := 0
	for _, set := range []bool{s.IDHeader != "", s.IDPath != "", s.IDFunc != nil} {
		if set {
			sources++
		}
	}
	switch {
	case sources == 0 && !s.IDFromBody:
		bad("no event ID source: set Event.IDHeader, Event.IDPath or Event.IDFunc, or Event.IDFromBody to use the body's SHA-256")
	case sources > 1:
		bad("more than one of Event.IDHeader, Event.IDPath and Event.IDFunc is set: choose one event ID source")
	}
	if s.TypeHeader != "" && s.TypePath != "" {
		bad("Event.TypeHeader and Event.TypePath are both set: choose one event type source")
	}
	if s.TypeSuffixPath != "" && s.TypeHeader == "" && s.TypePath == "" {
		bad("Event.TypeSuffixPath is set without an event type: set Event.TypeHeader or Event.TypePath")
	}
	for _, h := range []struct{ field, name string }{{"IDHeader", s.IDHeader}, {"TypeHeader", s.TypeHeader}} {
		if h.name != "" && !sigsyntax.IsHeaderName(h.name) {
			bad("Event.%s %q is not a valid header name", h.field, h.name)
		}
	}
	for _, p := range []struct{ field, path string }{{"IDPath", s.IDPath}, {"TypePath", s.TypePath}, {"TypeSuffixPath", s.TypeSuffixPath}} {
		if p.path != "" && !jsonpath.ValidPath(p.path) {
			bad("Event.%s %q is not a dotted path: use keys separated by single dots, for example \"data.object.id\"", p.field, p.path)
		}
	}
	s.Order.problems(bad)
	return errors.Join(problems...)
}

// Extract sets v's EventID and EventType from an authentic request, for
// verifiers that have checked req and filled in the rest of v. It reads
// req.Header as it is (apply HeaderFallbacks first). A header sent twice
// is malformed; an ID or type that is absent is rejected with
// ReasonMissingEventID or ReasonMissingEventType, unless IDFromBody or
// TypeOptional says otherwise. v.PayloadSHA256 is left as it is (zero,
// unless the verifier has a semantic digest: the Receiver digests the raw
// body itself), except that IDFromBody sets it to the digest it uses.
//
// signed says what the request's signature covers: Extract marks an ID or
// type it read from anything else as unsigned (Verification.Unsigned), and
// the body when signed does not cover it. An
// ID computed by IDFunc or from the body (IDFromBody) counts as read from
// the body, and so does the type when there is no type source (for a
// verifier that sets it afterwards).
func (s EventSource) Extract(req *Request, v Verification, signed SignedParts) (Verification, error) {
	var want jsonpath.Paths // one scan for every path
	var paths [3 + 1 + 2*maxOrderPaths]string
	want.Set(s.paths(paths[:0])...)
	return s.extract(req, v, &jsonpath.Doc{Body: req.Body, Want: &want}, s.headerKeys(), signed)
}

// GuardsType reports whether Extract, told that signed is what the
// signature covers, reads the event type from a header the signature
// does not cover while it covers the body: a type the Receiver guards
// with its ReplayStore (see UnsignedFields). A verifier that extracts
// with s reports it in NeedsReplayStore ([ReplayGuarded]).
func (s EventSource) GuardsType(signed SignedParts) bool {
	return signed.Body && s.TypeHeader != "" && !signed.covers(http.CanonicalHeaderKey(s.TypeHeader))
}

// SignedParts says what of a request a scheme's signature covers, so that
// EventSource.Extract can tell which event fields are signed.
type SignedParts struct {
	// Body reports that the signature covers the raw body.
	Body bool
	// Headers names the headers whose values the signature covers
	// (compared case-insensitively).
	Headers []string
}

// covers reports whether the signature covers the header named by its
// canonical key.
func (p SignedParts) covers(canonical string) bool {
	for _, h := range p.Headers {
		if http.CanonicalHeaderKey(h) == canonical {
			return true
		}
	}
	return false
}

// paths appends the body paths the source reads, in the order a scan
// should want them.
func (s EventSource) paths(dst []string) []string {
	dst = append(dst, s.IDPath, s.TypePath, s.TypeSuffixPath)
	return s.Order.paths(dst)
}

// eventHeaderKeys are the canonical names of an EventSource's headers,
// which a verifier computes once.
type eventHeaderKeys struct{ id, typ string }

func (s EventSource) headerKeys() eventHeaderKeys {
	return eventHeaderKeys{id: http.CanonicalHeaderKey(s.IDHeader), typ: http.CanonicalHeaderKey(s.TypeHeader)}
}

// extract is Extract with a body that may already be scanned and the
// headers' canonical names.
func (s EventSource) extract(req *Request, v Verification, doc *jsonpath.Doc, keys eventHeaderKeys, signed SignedParts) (Verification, error) {
	var id field
	switch {
	case s.IDHeader != "":
		id = headerField(req.Header, keys.id)
	case s.IDPath != "":
		id = jsonField(doc, s.IDPath)
	}
	if id.fault != fieldOK && (id.fault != fieldMissing || !s.IDFromBody) {
		return Verification{}, s.rejectID(id)
	}
	var typ field
	switch {
	case s.TypeHeader != "":
		typ = headerField(req.Header, keys.typ)
	case s.TypePath != "":
		typ = jsonField(doc, s.TypePath)
	}
	if typ.fault != fieldOK {
		if !s.TypeOptional {
			return Verification{}, s.rejectType(typ)
		}
		typ = field{}
	}
	v.EventType = typ.value
	// Marked by where the type comes from, not by what it is: a type
	// header left out of one delivery and added to its copy relabels it
	// just as well. Without a source, a type a verifier finds later is
	// taken from the body.
	if s.TypeHeader != "" {
		v.Unsigned.EventType = !signed.covers(keys.typ)
	} else {
		v.Unsigned.EventType = !signed.Body
	}
	v.Unsigned.Body = !signed.Body
	if s.TypeSuffixPath != "" {
		if suffix, ok := doc.LookupString(s.TypeSuffixPath); ok {
			v.EventType += "." + suffix
		}
	}
	if s.IDFunc != nil {
		var err error
		if id.value, err = s.IDFunc(req, v); err != nil {
			return Verification{}, HookError("computing the event ID", err)
		}
	}
	if id.value == "" && s.IDFromBody {
		if v.PayloadSHA256 == ([sha256.Size]byte{}) {
			v.PayloadSHA256 = sha256.Sum256(req.Body)
		}
		id.value = sigsyntax.DigestID(v.PayloadSHA256)
	}
	if id.value == "" {
		return Verification{}, Reject(ReasonMissingEventID, "the request has no event ID")
	}
	v.EventID = id.value
	if signed.Body {
		v.Ordering = s.Order.read(doc)
	}
	// By source too: where IDFromBody stands in for an absent ID header,
	// a copy that adds the header chooses the ID.
	if s.IDHeader != "" {
		v.Unsigned.EventID = !signed.covers(keys.id)
	} else {
		v.Unsigned.EventID = !signed.Body
	}
	return v, nil
}

// field is an event field as read from a header or the body, or why it
// could not be: the rejection is built only when the source does not
// tolerate the fault (IDFromBody, TypeOptional), so tolerated faults
// allocate nothing.
type field struct {
	value  string
	fault  int // a field fault
	copies int // the header's copies, for fieldRepeated
	path   string
	result int // the jsonpath lookup result, for the body's faults
}

// Field faults.
const (
	fieldOK      = iota
	fieldMissing // absent, empty or null
	fieldRepeated
	fieldMalformed // the body is not JSON, or the value is of another kind
)

// headerField reads a single-valued header by its canonical name.
func headerField(h http.Header, key string) field {
	value, n := sigsyntax.HeaderKey(h, key)
	switch {
	case n > 1:
		return field{fault: fieldRepeated, copies: n}
	case value == "":
		return field{fault: fieldMissing}
	}
	return field{value: value}
}

// jsonField reads the string or number at a dotted path of the body.
func jsonField(doc *jsonpath.Doc, path string) field {
	value, result := doc.Lookup(path)
	switch result {
	case jsonpath.Found:
		return field{value: value}
	case jsonpath.Missing:
		return field{fault: fieldMissing, path: path, result: result}
	}
	return field{fault: fieldMalformed, path: path, result: result}
}

// rejectID is the rejection of an event ID that could not be read.
func (s EventSource) rejectID(f field) *VerificationError {
	return f.rejection(s.IDHeader, ReasonMissingEventID, "event ID")
}

// rejectType is the rejection of an event type that could not be read.
func (s EventSource) rejectType(f field) *VerificationError {
	return f.rejection(s.TypeHeader, ReasonMissingEventType, "event type")
}

// rejection builds the rejection of a fault: header names the header the
// field was read from ("" for the body), missing the reason of an absent
// field and what the field's name in details.
func (f field) rejection(header string, missing Reason, what string) *VerificationError {
	switch {
	case f.fault == fieldRepeated:
		return Reject(ReasonMalformedHeader, "header %s is sent %d times", header, f.copies)
	case f.path == "":
		return Reject(missing, "header %s is missing", header)
	}
	return jsonRejection(f.result, f.path, missing, what)
}

// lookupJSON returns the string or number at a dotted path of a verified
// body. A missing, null or empty value is rejected with the missing
// reason; a body that is not JSON, or a value of another kind, with
// ReasonMalformedPayload.
func lookupJSON(doc *jsonpath.Doc, path string, missing Reason, what string) (string, *VerificationError) {
	value, result := doc.Lookup(path)
	if result == jsonpath.Found {
		return value, nil
	}
	return "", jsonRejection(result, path, missing, what)
}

// jsonRejection is the rejection of a lookup that found no string or
// number.
func jsonRejection(result int, path string, missing Reason, what string) *VerificationError {
	switch result {
	case jsonpath.Missing:
		return Reject(missing, "the body has no %s at %q", what, path)
	case jsonpath.NotJSON:
		return Reject(ReasonMalformedPayload, "the body is not a single JSON value, so the %s at %q cannot be read", what, path)
	}
	return Reject(ReasonMalformedPayload, "the %s at %q is not a string or a number", what, path)
}
