package jsonpath

import (
	"encoding/binary"
	"math/bits"
)

// maxNestingDepth is encoding/json's limit on nested arrays and objects.
const maxNestingDepth = 10000

// Byte classes of the scanner.
var (
	// inString marks the bytes a string holds as they are: all but '"',
	// '\\' and the control characters.
	inString [256]bool
	// isSpace marks JSON white space.
	isSpace [256]bool
)

func init() {
	for c := 0x20; c < 256; c++ {
		inString[c] = c != '"' && c != '\\'
	}
	for _, c := range " \t\r\n" {
		isSpace[c] = true
	}
}

// scanner validates a JSON text and records the values at a few paths.
// Paths are matched by recursive descent as deep as the deepest path; the
// rest is skipped by a loop with a bit stack, so scanning allocates
// nothing for bodies nested up to 256 deep.
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
	s.space()
	if s.i == len(s.b) {
		return false
	}
	if _, ok := s.value(0, mask); !ok {
		return false
	}
	s.space()
	if s.i != len(s.b) {
		return false // more than one value
	}
	copy(found[:], s.out[:maxPaths])
	*extraOut = s.out[maxPaths]
	return true
}

func (s *scanner) space() { s.i = skipSpace(s.b, s.i) }

// skipSpace returns the index of the first byte at or after i that is not
// white space. Runs of spaces (indentation) go eight at a time.
func skipSpace(b []byte, i int) int {
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
		if c == '{' {
			return valueSpan{kind: kindOther}, s.object(depth, mask)
		}
		return valueSpan{kind: kindOther}, s.array(depth, mask)
	case '"':
		start, end, plain, ok := s.str()
		return valueSpan{kind: kindString, plain: plain, start: start, end: end}, ok
	case 't':
		return valueSpan{kind: kindOther}, s.literal("true")
	case 'f':
		return valueSpan{kind: kindOther}, s.literal("false")
	case 'n':
		return valueSpan{kind: kindAbsent}, s.literal("null")
	}
	start := s.i
	ok := s.number()
	return valueSpan{kind: kindNumber, start: start, end: s.i}, ok
}

// object scans an object whose members some paths enter.
func (s *scanner) object(depth int, mask uint16) bool {
	s.i++
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	for {
		if s.i == len(s.b) || s.b[s.i] != '"' {
			return false
		}
		start, end, plain, ok := s.str()
		if !ok {
			return false
		}
		s.space()
		if s.i == len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.space()
		if s.i == len(s.b) {
			return false
		}
		var match uint16
		for m := mask; m != 0; m &= m - 1 {
			p := lowBit(m)
			if keyEquals(s.b[start:end], plain, s.paths[p].seg(depth).key) {
				match |= 1 << p
			}
		}
		if !s.member(depth, match) {
			return false
		}
		s.space()
		if s.i == len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.space()
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// array scans an array whose elements some paths enter.
func (s *scanner) array(depth int, mask uint16) bool {
	s.i++
	s.space()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return true
	}
	for k := 0; ; k++ {
		if s.i == len(s.b) {
			return false
		}
		var match uint16
		for m := mask; m != 0; m &= m - 1 {
			p := lowBit(m)
			if s.paths[p].seg(depth).index == k {
				match |= 1 << p
			}
		}
		if !s.member(depth, match) {
			return false
		}
		s.space()
		if s.i == len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.space()
		case ']':
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
// no path leads. It is the scanner's hot loop: most of a body is skipped.
// Its bit stack holds one bit per open container, 1 for an object. The
// tests come in the order of what bodies hold most: strings, then
// containers, numbers and literals.
func (s *scanner) skip(depth int) bool {
	var small [4]uint64
	stack := small[:]
	top := 0          // open containers
	inObject := false // the innermost open container is an object
	b := s.b
	i := s.i
	for {
		// A value starts at b[i].
		c := b[i]
		switch {
		case c == '"':
			if i = skipString(b, i+1); i < 0 {
				return false
			}
		case c == '{' || c == '[':
			if depth+top >= maxNestingDepth {
				return false
			}
			if top/64 == len(stack) {
				stack = append(stack, 0)
			}
			inObject = c == '{'
			if inObject {
				stack[top/64] |= 1 << (top % 64)
			} else {
				stack[top/64] &^= 1 << (top % 64)
			}
			top++
			i++
			if i < len(b) && b[i] <= ' ' {
				i = skipSpace(b, i)
			}
			if i == len(b) {
				return false
			}
			if b[i] == '}' && inObject || b[i] == ']' && !inObject {
				i++
				top--
				if top > 0 {
					inObject = stack[(top-1)/64]&(1<<((top-1)%64)) != 0
				}
				break // an empty container is a whole value
			}
			if inObject {
				if i = skipKey(b, i); i < 0 {
					return false
				}
			}
			continue
		case c == 't' || c == 'f' || c == 'n':
			word := literalOf(c)
			if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
				return false
			}
			i += len(word)
		default:
			s.i = i
			if !s.number() {
				return false
			}
			i = s.i
		}
		// After a value: close containers, or go on to the next member.
		for {
			if top == 0 {
				s.i = i
				return true
			}
			if i < len(b) && b[i] <= ' ' {
				i = skipSpace(b, i)
			}
			if i == len(b) {
				return false
			}
			c := b[i]
			i++
			if c == ',' {
				if i < len(b) && b[i] <= ' ' {
					i = skipSpace(b, i)
				}
				if i == len(b) {
					return false
				}
				if inObject {
					if i = skipKey(b, i); i < 0 {
						return false
					}
				}
				break
			}
			if c != '}' && c != ']' || (c == '}') != inObject {
				return false
			}
			top--
			if top > 0 {
				inObject = stack[(top-1)/64]&(1<<((top-1)%64)) != 0
			}
		}
	}
}

// skipKey scans a member's key and colon at b[i] and the white space
// around them, and returns where the value starts, or -1.
func skipKey(b []byte, i int) int {
	if b[i] != '"' {
		return -1
	}
	if i = skipString(b, i+1); i < 0 {
		return -1
	}
	if i < len(b) && b[i] == ':' {
		i++
	} else {
		if i = skipSpace(b, i); i == len(b) || b[i] != ':' {
			return -1
		}
		i++
	}
	// Mostly one space, as indented bodies have it.
	if i+1 < len(b) && b[i] == ' ' && b[i+1] > ' ' {
		return i + 1
	}
	if i = skipSpace(b, i); i == len(b) {
		return -1
	}
	return i
}

// skipString scans a string whose content starts at b[i] and returns the
// index after its closing quote, or -1 when it is not a valid string.
func skipString(b []byte, i int) int {
	for {
		for i+8 <= len(b) {
			if stops := stringStops(binary.LittleEndian.Uint64(b[i:])); stops != 0 {
				i += bits.TrailingZeros64(stops) / 8
				break
			}
			i += 8
		}
		for i < len(b) && inString[b[i]] {
			i++
		}
		if i == len(b) {
			return -1
		}
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			if i = skipEscape(b, i); i < 0 {
				return -1
			}
		default: // a control character
			return -1
		}
	}
}

// skipEscape checks the escape sequence at b[i] and returns the index
// after it, or -1.
func skipEscape(b []byte, i int) int {
	if i+1 == len(b) {
		return -1
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 2
	case 'u':
		if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
			return -1
		}
		return i + 6
	}
	return -1
}

// Word-at-a-time constants: a byte's lowest bit and its highest.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// stringStops sets the high bit of the lowest byte of x (in memory order)
// that ends a run of plain string bytes: '"', '\\' or a control
// character. Bytes above that one may be set too; the lowest set is exact,
// since the subtractions borrow only from bytes that matched.
func stringStops(x uint64) uint64 {
	quote := x ^ (lsb * '"')
	escape := x ^ (lsb * '\\')
	return ((quote-lsb)&^quote | (escape-lsb)&^escape | (x-lsb*0x20)&^x) & msb
}

// str scans the string at s.i and returns its content's bounds, and
// whether it is plain: without escapes and bytes above 0x7f.
func (s *scanner) str() (start, end int, plain, ok bool) {
	b := s.b
	i := s.i + 1
	start = i
	var high uint64
	plain = true
	for {
		// Eight bytes at a time, then one at a time near the end.
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			stops := stringStops(x)
			if stops == 0 {
				high |= x
				i += 8
				continue
			}
			n := bits.TrailingZeros64(stops) / 8
			high |= x & (1<<(8*n) - 1)
			i += n
			break
		}
		for i < len(b) && inString[b[i]] {
			high |= uint64(b[i])
			i++
		}
		if i == len(b) {
			return 0, 0, false, false
		}
		switch b[i] {
		case '"':
			s.i = i + 1
			return start, i, plain && high&msb == 0, true
		case '\\':
			plain = false
			if i = skipEscape(b, i); i < 0 {
				return 0, 0, false, false
			}
		default: // a control character
			return 0, 0, false, false
		}
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// literal scans true, false or null.
func (s *scanner) literal(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// number scans a number as RFC 8259 writes it.
func (s *scanner) number() bool {
	b := s.b
	i := s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i == len(b):
		return false
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		if i+1 == len(b) || b[i+1] < '0' || b[i+1] > '9' {
			return false
		}
		i = digits(b, i+1)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i == len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		i = digits(b, i)
	}
	s.i = i
	return true
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

// literalOf returns the literal that starts with c: t, f or n.
func literalOf(c byte) string {
	switch c {
	case 't':
		return "true"
	case 'f':
		return "false"
	}
	return "null"
}
