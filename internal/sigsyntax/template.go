package sigsyntax

import (
	"io"
	"strings"
)

// PartKind is what one part of a signed-content template stands for.
type PartKind uint8

// Part kinds: literal text and the placeholders a template may use.
const (
	Literal   PartKind = iota
	Body               // {body}: the raw request body
	Timestamp          // {timestamp}: the signing timestamp as sent
	ID                 // {id}: the event ID header as sent
	Method             // {method}: the request method
	URL                // {url}: the request URL as received
)

var placeholders = map[string]PartKind{
	"body":      Body,
	"timestamp": Timestamp,
	"id":        ID,
	"method":    Method,
	"url":       URL,
}

// Part is one piece of a template: literal text, or a placeholder.
type Part struct {
	Kind PartKind
	Text []byte // the literal text; nil for placeholders
}

// Template is a compiled signed-content template such as
// "{timestamp}.{body}".
type Template []Part

// ParseTemplate compiles a template and reports every problem through bad:
// an unknown placeholder, an unclosed "{", a {body} that is missing or given
// twice, and content that does not cover what the verifier reads before it
// checks the signature: a timestamp read from a header (signedTimestamp)
// needs {timestamp}, and {timestamp} needs one; {id} needs the event ID
// from a header (idHeader). field names the option in messages.
func ParseTemplate(field, s string, signedTimestamp, idHeader bool, bad func(format string, args ...any)) Template {
	t := parseTemplate(field, s, bad)
	switch {
	case t.Has(Timestamp) && !signedTimestamp:
		bad("%s %q has {timestamp}, but no timestamp is read from a header: set Timestamp.Header or Timestamp.Key", field, s)
	case signedTimestamp && !t.Has(Timestamp):
		bad("a timestamp is read from a header, but %s %q has no {timestamp}, so the signature would not cover it: add {timestamp}, or remove the timestamp source", field, s)
	}
	if t.Has(ID) && !idHeader {
		bad("%s %q has {id}, which is read before the signature is checked: set Event.IDHeader (not Event.IDPath or Event.IDFunc)", field, s)
	}
	return t
}

func parseTemplate(field, s string, bad func(format string, args ...any)) Template {
	var (
		out    Template
		bodies int
	)
	literal := func(text string) {
		if text != "" {
			out = append(out, Part{Kind: Literal, Text: []byte(text)})
		}
	}
	rest := s
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			literal(rest)
			break
		}
		literal(rest[:open])
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			bad("%s %q has a \"{\" without a closing \"}\": placeholders are {body}, {timestamp}, {id}, {method} and {url}", field, s)
			return nil
		}
		name := rest[open+1 : open+end]
		kind, ok := placeholders[name]
		if !ok {
			bad("%s %q has an unknown placeholder {%s}: use {body}, {timestamp}, {id}, {method} or {url}", field, s, name)
		}
		if kind == Body {
			bodies++
		}
		out = append(out, Part{Kind: kind})
		rest = rest[open+end+1:]
	}
	switch {
	case bodies == 0:
		bad("%s %q has no {body}: the signature must cover the body", field, s)
	case bodies > 1:
		bad("%s %q has {body} %d times: give it once", field, s, bodies)
	}
	return out
}

// Has reports whether the template uses the placeholder k.
func (t Template) Has(k PartKind) bool {
	for _, p := range t {
		if p.Kind == k {
			return true
		}
	}
	return false
}

// Values are what a template's placeholders stand for in one request.
type Values struct {
	Body                       []byte
	Timestamp, ID, Method, URL string
}

// Pieces returns the parts of the signed content in order, the body among
// them uncopied: hashing them one after the other hashes the content.
func (t Template) Pieces(v Values) [][]byte {
	out := make([][]byte, 0, len(t))
	for _, p := range t {
		var b []byte
		switch p.Kind {
		case Literal:
			b = p.Text
		case Body:
			b = v.Body
		case Timestamp:
			b = []byte(v.Timestamp)
		case ID:
			b = []byte(v.ID)
		case Method:
			b = []byte(v.Method)
		case URL:
			b = []byte(v.URL)
		}
		if len(b) > 0 {
			out = append(out, b)
		}
	}
	return out
}

// Bytes returns the signed content in one slice, for signature schemes
// that need the whole message at once (Ed25519).
func (t Template) Bytes(v Values) []byte {
	pieces := t.Pieces(v)
	n := 0
	for _, p := range pieces {
		n += len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range pieces {
		out = append(out, p...)
	}
	return out
}

// Write writes the signed content to w in order: the body directly, the
// other parts gathered in buf, which it returns for reuse. Hashing a
// request's content this way copies nothing and allocates nothing once
// buf has grown to the longest run of other parts.
func (t Template) Write(w io.Writer, buf []byte, v Values) []byte {
	buf = buf[:0]
	for _, p := range t {
		switch p.Kind {
		case Literal:
			buf = append(buf, p.Text...)
		case Body:
			if len(buf) > 0 {
				w.Write(buf)
				buf = buf[:0]
			}
			w.Write(v.Body)
		case Timestamp:
			buf = append(buf, v.Timestamp...)
		case ID:
			buf = append(buf, v.ID...)
		case Method:
			buf = append(buf, v.Method...)
		case URL:
			buf = append(buf, v.URL...)
		}
	}
	if len(buf) > 0 {
		w.Write(buf)
	}
	return buf
}

// Split renders the signed content around the body into buf: the text
// before {body} and the text after it, both slices of the returned buf.
func (t Template) Split(buf []byte, v Values) (before, after, out []byte) {
	buf = buf[:0]
	split := -1
	for _, p := range t {
		switch p.Kind {
		case Literal:
			buf = append(buf, p.Text...)
		case Body:
			split = len(buf)
		case Timestamp:
			buf = append(buf, v.Timestamp...)
		case ID:
			buf = append(buf, v.ID...)
		case Method:
			buf = append(buf, v.Method...)
		case URL:
			buf = append(buf, v.URL...)
		}
	}
	if split < 0 {
		split = len(buf) // no {body}: ParseTemplate refuses such a template
	}
	return buf[:split], buf[split:], buf
}
