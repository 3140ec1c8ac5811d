package jsonpath

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// ValidPath reports whether p is a dotted path of non-empty segments.
func ValidPath(p string) bool {
	return p != "" && p[0] != '.' && p[len(p)-1] != '.' && !strings.Contains(p, "..")
}

// Lookup results.
const (
	Found     = iota // a non-empty string or a number
	Missing          // absent, null or an empty string
	NotJSON          // the body is not a single JSON value
	WrongKind        // an object, an array or a boolean
)

// maxPaths bounds the paths one scan looks for.
const maxPaths = 8

// Paths is a compiled set of dotted paths that a Doc finds in one pass
// over its body. A verifier compiles the paths its options read once, at
// construction (CompilePaths); a caller that reads a body once may set one
// on its stack instead (Set). Once set, a Paths is safe for concurrent use.
type Paths struct {
	n     int
	paths [maxPaths]path
}

// inlineSegments is how many segments a path holds without allocating.
const inlineSegments = 8

// path is a dotted path split into segments, which are substrings of its
// text.
type path struct {
	text  string
	n     int // segments
	small [inlineSegments]segment
	more  []segment // the segments after the first eight
}

// seg returns segment i.
func (p *path) seg(i int) *segment {
	if i < inlineSegments {
		return &p.small[i]
	}
	return &p.more[i-inlineSegments]
}

type segment struct {
	key   string
	index int // the array index the segment names, or -1
}

// CompilePaths compiles the non-empty valid paths among paths, each once,
// at most 8 of them; the others are found by a scan of their own.
func CompilePaths(paths ...string) *Paths {
	out := &Paths{}
	out.Set(paths...)
	return out
}

// Set makes ps the paths CompilePaths would compile. It allocates nothing
// for paths of up to 8 segments.
func (ps *Paths) Set(paths ...string) {
	ps.n = 0
	for _, p := range paths {
		if p == "" || !ValidPath(p) || ps.index(p) >= 0 || ps.n == maxPaths {
			continue
		}
		ps.paths[ps.n] = compilePath(p)
		ps.n++
	}
}

func compilePath(p string) path {
	out := path{text: p}
	for rest, more := p, true; more; {
		var seg string
		seg, rest, more = strings.Cut(rest, ".")
		// Decimal digits only, as an index: Atoi alone would take "+1"
		// and "-0"; one that overflows an int indexes nothing.
		index := -1
		if strings.TrimLeft(seg, "0123456789") == "" {
			if i, err := strconv.Atoi(seg); err == nil {
				index = i
			}
		}
		if out.n < inlineSegments {
			out.small[out.n] = segment{key: seg, index: index}
		} else {
			out.more = append(out.more, segment{key: seg, index: index})
		}
		out.n++
	}
	return out
}

// index returns the position of path p in the set, or -1.
func (ps *Paths) index(p string) int {
	if ps == nil {
		return -1
	}
	for i := range ps.n {
		if ps.paths[i].text == p {
			return i
		}
	}
	return -1
}

// Doc is a JSON body scanned once, on its first lookup, for the paths of
// Want (and for the path looked up, when Want lacks it). The zero value
// with Body set is ready to use; a Doc is not safe for concurrent use.
//
// A Doc reads a body as encoding/json's Decoder with UseNumber reads it
// into an any, and a lookup answers as a walk of the decoded maps and
// slices would: a body that is not a single JSON value (RFC 8259, nested at
// most 10,000 deep, white space around it) is NotJSON; object keys and
// strings are unescaped, invalid UTF-8 and unpaired surrogates become
// U+FFFD; a key given twice counts with its last value; a number is its
// literal text. Scanning allocates nothing; a lookup that finds a string or
// number allocates its copy.
type Doc struct {
	Body []byte
	// Want is the paths the first scan looks for. Defaults to none:
	// each path looked up is found by a scan of its own.
	Want *Paths

	scanned bool
	bad     bool
	found   [maxPaths]valueSpan
	// extra is the result of the last path looked up outside Want.
	extraPath string
	extra     valueSpan
}

// valueKind is what a path leads to.
type valueKind uint8

const (
	kindAbsent valueKind = iota // nothing there, or null
	kindString
	kindNumber
	kindOther // an object, an array or a boolean
)

// valueSpan locates the value at a path in the body.
type valueSpan struct {
	kind       valueKind
	plain      bool // a string without escapes or bytes above 0x7f
	start, end int  // the string's content without quotes, or the number
}

// Lookup returns the string or number at a dotted path and one of the
// results above.
func (d *Doc) Lookup(p string) (string, int) {
	v, ok := d.find(p)
	switch {
	case !ok:
		return "", NotJSON
	case v.kind == kindString:
		if v.start == v.end {
			return "", Missing
		}
		return d.text(v), Found
	case v.kind == kindNumber:
		return string(d.Body[v.start:v.end]), Found
	case v.kind == kindOther:
		return "", WrongKind
	}
	return "", Missing
}

// LookupString returns the non-empty string at a dotted path, or false
// when there is none (or the body is not JSON).
func (d *Doc) LookupString(p string) (string, bool) {
	v, ok := d.find(p)
	if !ok || v.kind != kindString || v.start == v.end {
		return "", false
	}
	return d.text(v), true
}

// text returns the content of a string value, unescaped.
func (d *Doc) text(v valueSpan) string {
	raw := d.Body[v.start:v.end]
	if v.plain {
		return string(raw)
	}
	return string(appendUnquotedBytes(make([]byte, 0, len(raw)+utf8.UTFMax), raw))
}

// find returns where path p leads, and false when the body is not a
// single JSON value.
func (d *Doc) find(p string) (valueSpan, bool) {
	i := d.Want.index(p)
	if !d.scanned {
		d.scanned = true
		var extra *path
		if i < 0 {
			cp := compilePath(p)
			extra = &cp
		}
		d.bad = !scanJSON(d.Body, d.Want, extra, &d.found, &d.extra)
		if extra != nil {
			d.extraPath = p
		}
	}
	switch {
	case d.bad:
		return valueSpan{}, false
	case i >= 0:
		return d.found[i], true
	case d.extraPath != p:
		cp := compilePath(p)
		var none [maxPaths]valueSpan
		scanJSON(d.Body, nil, &cp, &none, &d.extra)
		d.extraPath = p
	}
	return d.extra, true
}

// appendUnquotedBytes appends the content of a JSON string (without its
// quotes, already validated) as encoding/json decodes it.
func appendUnquotedBytes(dst, s []byte) []byte {
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			switch s[r+1] {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				rr := hex4(s[r+2:])
				r += 6
				if utf16.IsSurrogate(rr) {
					if r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' {
						if dec := utf16.DecodeRune(rr, hex4(s[r+2:])); dec != unicode.ReplacementChar {
							dst = utf8.AppendRune(dst, dec)
							r += 6
							continue
						}
					}
					rr = unicode.ReplacementChar
				}
				dst = utf8.AppendRune(dst, rr)
				continue
			default: // '"', '\\', '/'
				dst = append(dst, s[r+1])
			}
			r += 2
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			dst = utf8.AppendRune(dst, rr) // U+FFFD for invalid UTF-8, as encoding/json
			r += size
		}
	}
	return dst
}

// hex4 reads four hex digits, already validated.
func hex4(s []byte) rune {
	var r rune
	for _, c := range s[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
