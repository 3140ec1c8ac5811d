package sigsyntax

import (
	"fmt"
	"slices"
	"strings"
)

// SignatureFormat is the syntax of a signature header: a single value after
// an optional prefix (GitHub's "sha256=<hex>"), or, when ItemSep is set, a
// list of key/value items (Stripe's "t=…,v1=…", Standard Webhooks'
// "v1,<b64> v1,<b64>").
type SignatureFormat struct {
	Prefix       string // single-value form only
	ItemSep      string // the list form when not empty
	KVSep        string
	SignatureKey string
	TimestampKey string // "" when the list carries no timestamp
	Base64       bool   // hex otherwise
	Size         int    // digest length in bytes
	// Max is the most well-formed signatures a list may carry; a list
	// with more is refused (each costs a comparison or a verification
	// per key). 0 means no bound.
	Max int
}

// Signatures is the content of a signature header.
type Signatures struct {
	// Sigs are the decoded digests, each of Size bytes, in header order.
	// Never empty when Parse reports no fault.
	Sigs [][]byte
	// Timestamp is the raw value of the timestamp item, "" when the
	// format has no timestamp key or the item is absent.
	Timestamp string
}

// Fault is why Parse refused a header value.
type Fault int

// Faults of Parse. FaultEmpty and FaultNoSignature mean no signature was
// sent (missing_signature); the others, that what was sent is malformed
// (malformed_header).
const (
	NoFault          Fault = iota
	FaultEmpty             // the value is blank
	FaultPrefix            // a single value without the prefix
	FaultDigest            // a single value that is not a digest of Size bytes
	FaultNoSignature       // a list without any signature item
	FaultMalformed         // a list whose signature items are all malformed
	FaultTimestamps        // a list with more than one timestamp item
	FaultTooMany           // a list with more than Max signatures
)

// Missing reports whether the fault means that no signature was sent.
func (f Fault) Missing() bool { return f == FaultEmpty || f == FaultNoSignature }

// Parse reads a signature header value. It never panics.
//
// In a list, items whose key is neither SignatureKey nor TimestampKey are
// ignored (other schemes and versions), and a signature item that is
// malformed (no separator, not a digest of the right length) is skipped, as
// the Standard Webhooks and Svix reference libraries do: the header is
// refused only when no well-formed signature item remains.
func (f *SignatureFormat) Parse(value string) (Signatures, Fault) {
	var set SignatureSet
	if fault := f.ParseInto(value, &set); fault != NoFault {
		return Signatures{}, fault
	}
	out := Signatures{Timestamp: set.Timestamp, Sigs: make([][]byte, set.Len())}
	for i := range out.Sigs {
		out.Sigs[i] = slices.Clone(set.At(i))
	}
	return out, NoFault
}

// heldSignatures and heldSize bound the signatures a SignatureSet holds
// without allocating: 8 digests of up to 64 bytes (SHA-512, Ed25519).
const (
	heldSignatures = 8
	heldSize       = 64
)

// SignatureSet is the content of a signature header as ParseInto decodes
// it, into storage of its own: parsing a header of up to 8 signatures of
// up to 64 bytes allocates nothing. Keep it in a variable and pass it by
// pointer; its zero value is empty.
type SignatureSet struct {
	// Timestamp is the raw value of the timestamp item, "" when the
	// format has no timestamp key or the item is absent.
	Timestamp string

	n     int // signatures
	nHeld int // signatures in held
	size  int
	held  [heldSignatures][heldSize]byte
	more  [][]byte // the signatures after the held ones
}

// Len returns the number of signatures.
func (s *SignatureSet) Len() int { return s.n }

// At returns signature i, in header order. The slice is the set's own.
func (s *SignatureSet) At(i int) []byte {
	if i < s.nHeld {
		return s.held[i][:s.size]
	}
	return s.more[i-s.nHeld]
}

// add decodes a signature item's value into the set.
func (s *SignatureSet) add(val string, b64 bool, size int) bool {
	s.size = size
	if s.n < heldSignatures && size <= heldSize {
		if !decodeDigestInto(s.held[s.n][:size], val, b64) {
			return false
		}
		s.n++
		s.nHeld++
		return true
	}
	sig, ok := DecodeDigest(val, b64, size)
	if !ok {
		return false
	}
	s.more = append(s.more, sig)
	s.n++
	return true
}

func (s *SignatureSet) reset() {
	s.Timestamp, s.n, s.nHeld, s.more = "", 0, 0, s.more[:0]
}

// ParseInto is Parse into set, which it resets; set is left empty when it
// reports a fault.
func (f *SignatureFormat) ParseInto(value string, set *SignatureSet) Fault {
	set.reset()
	fault := f.parseInto(value, set)
	if fault != NoFault {
		set.reset()
	}
	return fault
}

func (f *SignatureFormat) parseInto(value string, set *SignatureSet) Fault {
	value = trimBlanks(value)
	if value == "" {
		return FaultEmpty
	}
	if f.ItemSep == "" {
		rest, ok := strings.CutPrefix(value, f.Prefix)
		if !ok {
			return FaultPrefix
		}
		if !set.add(rest, f.Base64, f.Size) {
			return FaultDigest
		}
		return NoFault
	}
	var (
		malformed    int
		sawTimestamp bool
	)
	for rest, more := value, true; more; {
		var item string
		item, rest, more = strings.Cut(rest, f.ItemSep)
		item = trimBlanks(item)
		if item == "" {
			continue
		}
		key, val, ok := strings.Cut(item, f.KVSep)
		if !ok {
			malformed++
			continue
		}
		key, val = trimBlanks(key), trimBlanks(val)
		switch {
		case key == f.SignatureKey:
			if f.Max > 0 && set.n == f.Max {
				// One more well-formed signature is one too many.
				if _, ok := DecodeDigest(val, f.Base64, f.Size); ok {
					return FaultTooMany
				}
				malformed++
				continue
			}
			if !set.add(val, f.Base64, f.Size) {
				malformed++
				continue
			}
		case f.TimestampKey != "" && key == f.TimestampKey:
			if sawTimestamp {
				return FaultTimestamps
			}
			sawTimestamp = true
			set.Timestamp = val
		}
	}
	switch {
	case set.n > 0:
		return NoFault
	case malformed > 0:
		return FaultMalformed
	}
	return FaultNoSignature
}

// Detail explains a fault for a rejection. It depends only on the format,
// the fault and the header's name, never on the value.
func (f *SignatureFormat) Detail(fault Fault, header string) string {
	enc := "hex"
	if f.Base64 {
		enc = "base64"
	}
	switch fault {
	case FaultEmpty:
		return "header " + header + " is empty"
	case FaultPrefix:
		return fmt.Sprintf("header %s does not start with %q", header, f.Prefix)
	case FaultDigest:
		return fmt.Sprintf("header %s does not hold a %d-byte %s digest", header, f.Size, enc)
	case FaultNoSignature:
		return fmt.Sprintf("header %s has no %q item", header, f.SignatureKey)
	case FaultMalformed:
		return fmt.Sprintf("header %s has no %q item that is a %d-byte %s digest", header, f.SignatureKey, f.Size, enc)
	case FaultTimestamps:
		return fmt.Sprintf("header %s has more than one %q item", header, f.TimestampKey)
	case FaultTooMany:
		return fmt.Sprintf("header %s has more than %d %q items; at most %d are checked", header, f.Max, f.SignatureKey, f.Max)
	}
	return "header " + header + " is malformed"
}

// Check reports every problem with the format's options through bad, in
// the words of the option fields every signature scheme shares
// (SignatureHeader, SignaturePrefix, ItemSeparator, KeyValueSeparator,
// SignatureKey; TimestampKey is the timestamp part's Key).
func (f *SignatureFormat) Check(header string, bad func(format string, args ...any)) {
	switch {
	case header == "":
		bad("SignatureHeader is empty: set the name of the header that carries the signature")
	case !IsHeaderName(header):
		bad("SignatureHeader %q is not a valid header name", header)
	}
	if f.ItemSep == "" {
		if f.SignatureKey != "" {
			bad("SignatureKey is set but ItemSeparator is empty: set ItemSeparator for a list header, or use SignaturePrefix for a single value")
		}
		if f.TimestampKey != "" {
			bad("Timestamp.Key is set but ItemSeparator is empty: a timestamp item needs a list header; use Timestamp.Header for a separate header")
		}
		if f.KVSep != "" {
			bad("KeyValueSeparator is set but ItemSeparator is empty: set ItemSeparator for a list header")
		}
		return
	}
	if f.Prefix != "" {
		bad("SignaturePrefix is set with ItemSeparator: a list header names its signatures with SignatureKey, so leave SignaturePrefix empty")
	}
	if f.KVSep == "" {
		bad("KeyValueSeparator is empty: a list header needs the text between an item's key and its value, for example \"=\"")
	} else if strings.Contains(f.KVSep, f.ItemSep) || strings.Contains(f.ItemSep, f.KVSep) {
		bad("ItemSeparator %q and KeyValueSeparator %q overlap: they must be different and neither may contain the other", f.ItemSep, f.KVSep)
	}
	checkKey := func(field, key string, required bool) {
		switch {
		case key == "" && required:
			bad("%s is empty: set the key of the signature items in the list header, for example \"v1\"", field)
		case key != "" && (strings.Contains(key, f.ItemSep) || (f.KVSep != "" && strings.Contains(key, f.KVSep)) || strings.TrimSpace(key) != key):
			bad("%s %q contains a separator or surrounding blanks", field, key)
		}
	}
	checkKey("SignatureKey", f.SignatureKey, true)
	checkKey("Timestamp.Key", f.TimestampKey, false)
	if f.TimestampKey != "" && f.TimestampKey == f.SignatureKey {
		bad("Timestamp.Key and SignatureKey are both %q: they must differ", f.TimestampKey)
	}
}

// trimBlanks is strings.Trim(s, " \t") without building the cutset's
// table on every call.
func trimBlanks(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}
