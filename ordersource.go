package webhooks

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/hookinbox/webhooks/internal/jsonpath"
	"github.com/hookinbox/webhooks/internal/sigsyntax"
)

// OrderSource says where an event's ordering key and version (see
// Ordering) are in its JSON body, for EventSource.Order. Paths are dotted
// paths as in EventSource. Only a body the signature covers is read: an
// unsigned input never decides the order. A value of the wrong kind, or
// a body that is not JSON, gives no key or no version; it never rejects
// the request.
type OrderSource struct {
	// KeyPaths are paths to the ID of the object the event is about, a
	// string or a number, as Stripe's "data.object.id": the first that
	// holds a value names the object. With none holding one, the event
	// has no key (it runs in parallel with everything). At most 4.
	KeyPaths []string

	// ScopePath, when set, is the path to what the objects belong to, as
	// GitHub's "repository.id" for its issue numbers: the key is then
	// the scope and the object, joined by "/" with each part's "%" and
	// "/" written as "%25" and "%2F", or the scope alone when no KeyPaths
	// value is present. Without a value at ScopePath, no key. Needs
	// KeyPaths.
	ScopePath string

	// VersionPaths are paths to the time the object changed, or the event
	// occurred, written in VersionFormat: the first that holds a value is
	// the Ordering.Version, in microseconds since the Unix epoch. With
	// none, or a value that does not parse, the version is 0 and the
	// event runs in received order among its key's. At most 4; needs
	// KeyPaths.
	VersionPaths []string

	// VersionFormat is how the version is written. Defaults to
	// TimestampUnixSeconds.
	VersionFormat TimestampFormat
}

// maxOrderPaths bounds KeyPaths and VersionPaths.
const maxOrderPaths = 4

// problems reports what is wrong with the source, through bad.
func (o OrderSource) problems(bad func(format string, args ...any)) {
	switch {
	case len(o.KeyPaths) > maxOrderPaths:
		bad("Event.Order.KeyPaths has %d paths; at most %d", len(o.KeyPaths), maxOrderPaths)
	case len(o.VersionPaths) > maxOrderPaths:
		bad("Event.Order.VersionPaths has %d paths; at most %d", len(o.VersionPaths), maxOrderPaths)
	}
	if len(o.KeyPaths) == 0 && (o.ScopePath != "" || len(o.VersionPaths) > 0) {
		bad("Event.Order sets a scope or a version without Event.Order.KeyPaths: name the object's ID first")
	}
	switch o.VersionFormat {
	case TimestampUnixSeconds, TimestampUnixMillis, TimestampRFC3339:
	default:
		bad("Event.Order.VersionFormat %v is not a TimestampFormat", o.VersionFormat)
	}
	check := func(field, p string) {
		if !jsonpath.ValidPath(p) {
			bad("Event.Order.%s %q is not a dotted path: use keys separated by single dots, for example \"data.object.id\"", field, p)
		}
	}
	for _, p := range o.KeyPaths {
		check("KeyPaths", p)
	}
	if o.ScopePath != "" {
		check("ScopePath", o.ScopePath)
	}
	for _, p := range o.VersionPaths {
		check("VersionPaths", p)
	}
}

// paths appends the paths the source reads, so that one scan of the
// body finds them with the event's other fields.
func (o OrderSource) paths(dst []string) []string {
	dst = append(dst, o.ScopePath)
	dst = append(dst, o.KeyPaths...)
	return append(dst, o.VersionPaths...)
}

// read returns the ordering of a verified body; the zero Ordering when
// the source sets no key path or the body holds no key.
func (o OrderSource) read(doc *jsonpath.Doc) Ordering {
	if len(o.KeyPaths) == 0 {
		return Ordering{}
	}
	object := first(doc, o.KeyPaths)
	var key string
	if o.ScopePath == "" {
		key = object
	} else if scope, result := doc.Lookup(o.ScopePath); result == jsonpath.Found {
		key = escapeKeyPart(scope)
		if object != "" {
			key += "/" + escapeKeyPart(object)
		}
	}
	if key == "" {
		return Ordering{}
	}
	out := Ordering{Key: storableKey(key)}
	if v := first(doc, o.VersionPaths); v != "" {
		if t, ok := sigsyntax.ParseTimestamp(v, int(o.VersionFormat)); ok && t.UnixMicro() > 0 {
			out.Version = t.UnixMicro()
		}
	}
	return out
}

// first returns the value at the first of paths that holds a string or a
// number, or "".
func first(doc *jsonpath.Doc, paths []string) string {
	for _, p := range paths {
		if v, result := doc.Lookup(p); result == jsonpath.Found {
			return v
		}
	}
	return ""
}

// escapeKeyPart writes a part of a scoped key so that "/" separates parts
// only.
func escapeKeyPart(s string) string {
	if !strings.ContainsAny(s, "%/") {
		return s
	}
	return keyPartEscaper.Replace(s)
}

// keyPartEscaper writes "%" and "/" of a scoped key's part; built once,
// as a Replacer is safe for concurrent use.
var keyPartEscaper = strings.NewReplacer("%", "%25", "/", "%2F")

// storableKey returns key when CheckOrdering takes it, else "sha256:" and
// the hex of its SHA-256: a body's key longer than MaxOrderingKeyBytes, or
// holding a NUL, still names its object, and never fails the delivery.
// (Keys read from JSON are valid UTF-8: the reader replaces what is not.)
func storableKey(key string) string {
	if CheckOrdering(Ordering{Key: key}) == nil {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(sum[:])
}
