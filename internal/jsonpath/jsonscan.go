package jsonpath

import (
	"encoding/binary"
	"math/bits"
	"strings"
)

// maxNestingDepth is encoding/json's limit on nested arrays and objects.
const maxNestingDepth = 10000

// scanner validates a JSON text and records the values at a few paths.
// The containers that paths enter are scanned by recursive descent, as
// deep as the deepest path; the others by skip, whose open containers are
// a bit stack, so a deeply nested body costs no call stack, and scanning
// allocates nothing for bodies nested up to 256 deep.
type scanner struct {
	b     []byte
	i     int
	paths [maxPaths + 1]*path
	out   [maxPaths + 1]valueSpan
}

// scanJSON validates body as a single JSON value and stores the values at
// the paths of want in found and the value at extra in extraOut. It
// reports false when the body is not a single JSON value.
func scanJSON(body []byte, want *Paths, extra *path, found *[maxPaths]valueSpan, extraOut *valueSpan) bool {
	s := scanner{b: body}
	var mask uint16
	if want != nil {
		for i := range want.n {
			s.paths[i] = &want.paths[i]
			mask |= 1 << i
		}
	}
	if extra != nil {
		s.paths[maxPaths] = extra
		mask |= 1 << maxPaths
	}
	s.i = skipSpace(body, 0)
	if s.i == len(body) {
		return false
	}
	if _, ok := s.value(0, mask); !ok {
		return false
	}
	if skipSpace(body, s.i) != len(body) {
		return false // more than one value
	}
	copy(found[:], s.out[:maxPaths])
	*extraOut = s.out[maxPaths]
	return true
}

// value scans the value at s.i, which is not white space, inside depth
// containers. mask holds the paths that lead into it; it returns the
// value's span for a path that ends there.
func (s *scanner) value(depth int, mask uint16) (valueSpan, bool) {
	switch c := s.b[s.i]; c {
	case '{', '[':
		if mask == 0 {
			return valueSpan{kind: kindOther}, s.skip(depth)
		}
		if depth >= maxNestingDepth {
			return valueSpan{}, false
		}
		return valueSpan{kind: kindOther}, s.container(depth, mask)
	case '"':
		start := s.i + 1
		end, plain := skipString(s.b, start)
		s.i = end
		return valueSpan{kind: kindString, plain: plain, start: start, end: end - 1}, end >= 0
	}
	start := s.i
	kind := kindNumber
	switch s.b[s.i] {
	case 't', 'f':
		kind = kindOther
	case 'n':
		kind = kindAbsent
	}
	s.i = skipScalar(s.b, s.i)
	return valueSpan{kind: kind, start: start, end: s.i}, s.i >= 0
}

// container scans the object or array at s.i, whose members some paths in
// mask enter.
func (s *scanner) container(depth int, mask uint16) bool {
	b := s.b
	closing := byte(']')
	if b[s.i] == '{' {
		closing = '}'
	}
	s.i = skipSpace(b, s.i+1)
	if s.i < len(b) && b[s.i] == closing {
		s.i++
		return true
	}
	for k := 0; ; k++ {
		var match uint16
		if closing == '}' {
			if s.i == len(b) || b[s.i] != '"' {
				return false
			}
			start := s.i + 1
			end, plain := skipString(b, start)
			if end < 0 {
				return false
			}
			if s.i = skipSpace(b, end); s.i == len(b) || b[s.i] != ':' {
				return false
			}
			for m := mask; m != 0; m &= m - 1 {
				if p := lowBit(m); keyEquals(b[start:end-1], plain, s.paths[p].seg(depth).key) {
					match |= 1 << p
				}
			}
			s.i++
		} else {
			for m := mask; m != 0; m &= m - 1 {
				if p := lowBit(m); s.paths[p].seg(depth).index == k {
					match |= 1 << p
				}
			}
		}
		if s.i = skipSpace(b, s.i); s.i == len(b) || !s.member(depth, match) {
			return false
		}
		if s.i = skipSpace(b, s.i); s.i == len(b) {
			return false
		}
		switch b[s.i] {
		case ',':
			s.i = skipSpace(b, s.i+1)
		case closing:
			s.i++
			return true
		default:
			return false
		}
	}
}

// member scans the value of an object member or array element at s.i,
// for the paths in match, which lead to it.
func (s *scanner) member(depth int, match uint16) bool {
	var deeper uint16
	for m := match; m != 0; m &= m - 1 {
		p := lowBit(m)
		// A key given again replaces its earlier value, and all under it.
		s.out[p] = valueSpan{}
		if s.paths[p].n > depth+1 {
			deeper |= 1 << p
		}
	}
	v, ok := s.value(depth+1, deeper)
	for m := match &^ deeper; m != 0; m &= m - 1 {
		s.out[lowBit(m)] = v
	}
	return ok
}

// skip scans the object or array at s.i, inside depth containers, where
// no path leads: most of a body. Its bit stack holds one bit per open
// container, 1 for an object.
func (s *scanner) skip(depth int) bool {
	var small [4]uint64
	stack := small[:]
	top := 0          // open containers
	inObject := false // the innermost open container is an object
	b, i := s.b, s.i
	for {
		// A value starts at b[i].
		switch c := b[i]; c {
		case '"':
			i, _ = skipString(b, i+1)
		case '{', '[':
			if depth+top >= maxNestingDepth {
				return false
			}
			if i = skipSpace(b, i+1); i == len(b) {
				return false
			}
			if b[i] == c+2 { // '}' and ']' follow '{' and '[' by two
				i++ // an empty container is a whole value
				break
			}
			if top/64 == len(stack) {
				stack = append(stack, 0)
			}
			inObject = c == '{'
			stack[top/64] &^= 1 << (top % 64)
			if inObject {
				stack[top/64] |= 1 << (top % 64)
				if i = skipKey(b, i); i < 0 {
					return false
				}
			}
			top++
			continue
		default:
			i = skipScalar(b, i)
		}
		if i < 0 {
			return false
		}
		// After a value: close containers, or go on to the next member.
		for {
			if top == 0 {
				s.i = i
				return true
			}
			if i = skipSpace(b, i); i == len(b) {
				return false
			}
			c := b[i]
			i++
			if c == ',' {
				if i = skipSpace(b, i); i < len(b) && inObject {
					i = skipKey(b, i)
				}
				if i < 0 || i == len(b) {
					return false
				}
				break
			}
			if c != '}' && c != ']' || (c == '}') != inObject {
				return false
			}
			if top--; top > 0 {
				inObject = stack[(top-1)/64]&(1<<((top-1)%64)) != 0
			}
		}
	}
}

// skipSpace returns the index of the first byte at or after i that is not
// white space.
func skipSpace(b []byte, i int) int {
	if i < len(b) && b[i] > ' ' {
		return i // most often
	}
	return skipSpaces(b, i)
}

// skipSpaces is skipSpace past white space. Runs of spaces (indentation)
// go eight at a time.
func skipSpaces(b []byte, i int) int {
	for i < len(b) && isSpace[b[i]] {
		i++
		for i+8 <= len(b) {
			t := binary.LittleEndian.Uint64(b[i:]) ^ (lsb * ' ')
			if t != 0 {
				i += bits.TrailingZeros64(t) / 8
				break
			}
			i += 8
		}
	}
	return i
}

// isSpace marks JSON white space.
var isSpace = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

// skipKey scans a member's key and colon at b[i] and the white space
// after them, and returns where the value starts, or -1.
func skipKey(b []byte, i int) int {
	if b[i] != '"' {
		return -1
	}
	if i, _ = skipString(b, i+1); i < 0 {
		return -1
	}
	if i = skipSpace(b, i); i == len(b) || b[i] != ':' {
		return -1
	}
	if i = skipSpace(b, i+1); i == len(b) {
		return -1
	}
	return i
}

// Word-at-a-time constants: a byte's lowest bit and its highest.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// skipString scans a string whose content starts at b[i] and returns the
// index after its closing quote, or -1 when it is not a valid string, and
// whether it is plain: without escapes and bytes above 0x7f.
func skipString(b []byte, i int) (int, bool) {
	var high uint64 // the bytes passed, ORed
	plain := true
	for {
		// Eight bytes at a time, then one at a time near the end.
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			// The high bit of the lowest byte that is '"', '\\' or a
			// control character is set (higher ones may be too: the
			// subtractions borrow only from bytes that matched).
			quote, escape := x^(lsb*'"'), x^(lsb*'\\')
			stops := ((quote-lsb)&^quote | (escape-lsb)&^escape | (x-lsb*0x20)&^x) & msb
			if stops != 0 {
				n := bits.TrailingZeros64(stops) / 8
				high |= x & (1<<(8*n) - 1)
				i += n
				break
			}
			high |= x
			i += 8
		}
		for i < len(b) && b[i] >= 0x20 && b[i] != '"' && b[i] != '\\' {
			high |= uint64(b[i])
			i++
		}
		switch {
		case i == len(b) || b[i] < 0x20:
			return -1, false
		case b[i] == '"':
			return i + 1, plain && high&msb == 0
		}
		// An escape.
		plain = false
		switch {
		case i+1 == len(b):
			return -1, false
		case b[i+1] == 'u':
			if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
				return -1, false
			}
			i += 6
		case strings.IndexByte(`"\/bfnrt`, b[i+1]) >= 0:
			i += 2
		default:
			return -1, false
		}
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// skipScalar scans the number or literal (true, false, null) at b[i] and
// returns the index after it, or -1. Numbers are as RFC 8259 writes them.
func skipScalar(b []byte, i int) int {
	for _, word := range [...]string{"true", "false", "null"} {
		if b[i] == word[0] {
			if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
				return -1
			}
			return i + len(word)
		}
	}
	if b[i] == '-' {
		i++
	}
	switch {
	case i == len(b):
		return -1
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if i+1 == len(b) || b[i+1] < '0' || b[i+1] > '9' {
			return -1
		}
		i = digits(b, i+1)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i == len(b) || b[i] < '0' || b[i] > '9' {
			return -1
		}
		i = digits(b, i)
	}
	return i
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// lowBit returns the index of the lowest set bit of m, which is not 0.
func lowBit(m uint16) int { return bits.TrailingZeros16(m) }

// keyEquals reports whether the raw content of a key decodes to want.
func keyEquals(raw []byte, plain bool, want string) bool {
	if plain {
		return string(raw) == want
	}
	var buf [64]byte
	return string(appendUnquotedBytes(buf[:0], raw)) == want
}
