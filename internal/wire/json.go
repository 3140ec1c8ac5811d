package wire

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
)

// ValidPath reports whether p is a dotted path of non-empty segments.
func ValidPath(p string) bool {
	for seg := range strings.SplitSeq(p, ".") {
		if seg == "" {
			return false
		}
	}
	return p != ""
}

// Doc is a JSON body parsed once, on its first lookup. The zero value with
// Body set is ready to use; a Doc is not safe for concurrent use.
type Doc struct {
	Body   []byte
	parsed bool
	root   any
	bad    bool
}

// Lookup results.
const (
	Found     = iota // a non-empty string or a number
	Missing          // absent, null or an empty string
	NotJSON          // the body is not a single JSON value
	WrongKind        // an object, an array or a boolean
)

// find returns the value at a dotted path: nil when the path leads nowhere
// or to null, and ok false when the body is not a single JSON value.
func (d *Doc) find(path string) (value any, ok bool) {
	if !d.parsed {
		d.parsed = true
		dec := json.NewDecoder(bytes.NewReader(d.Body))
		dec.UseNumber()
		if err := dec.Decode(&d.root); err != nil {
			d.bad = true
		} else if _, err := dec.Token(); err != io.EOF {
			d.bad = true // trailing data after the JSON value
		}
	}
	if d.bad {
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

// Lookup returns the string or number at a dotted path and one of the
// results above.
func (d *Doc) Lookup(path string) (string, int) {
	value, ok := d.find(path)
	switch val := value.(type) {
	case string:
		if val == "" {
			return "", Missing
		}
		return val, Found
	case json.Number:
		return val.String(), Found
	case nil:
		if !ok {
			return "", NotJSON
		}
		return "", Missing
	}
	return "", WrongKind
}

// LookupString returns the non-empty string at a dotted path, or false
// when there is none (or the body is not JSON).
func (d *Doc) LookupString(path string) (string, bool) {
	value, _ := d.find(path)
	s, ok := value.(string)
	return s, ok && s != ""
}
