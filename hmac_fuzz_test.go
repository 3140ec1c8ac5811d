package webhooks

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/hookinbox/webhooks/internal/sigsyntax"
)

// fuzzHeaderFormats are the header shapes the parser fuzz target cycles
// through: GitHub, Stripe, Standard Webhooks, and an unprefixed base64
// SHA-512 value.
var fuzzHeaderFormats = []sigsyntax.SignatureFormat{
	{Prefix: "sha256=", Size: sha256.Size},
	{ItemSep: ",", KVSep: "=", SignatureKey: "v1", TimestampKey: "t", Size: sha256.Size, Max: MaxSignatures},
	{ItemSep: " ", KVSep: ",", SignatureKey: "v1", Base64: true, Size: sha256.Size, Max: MaxSignatures},
	{Base64: true, Size: 64},
}

const fuzzHeaderName = "X-Fuzz-Signature"

// canonicalHeader writes parsed back in f's shape, lower-case hex or padded
// standard base64.
func canonicalHeader(f *sigsyntax.SignatureFormat, p sigsyntax.Signatures) string {
	encode := hex.EncodeToString
	if f.Base64 {
		encode = base64.StdEncoding.EncodeToString
	}
	if f.ItemSep == "" {
		return f.Prefix + encode(p.Sigs[0])
	}
	var items []string
	if p.Timestamp != "" {
		items = append(items, f.TimestampKey+f.KVSep+p.Timestamp)
	}
	for _, sig := range p.Sigs {
		items = append(items, f.SignatureKey+f.KVSep+encode(sig))
	}
	return strings.Join(items, f.ItemSep)
}

// knownDetails collects the rejection details f can produce, from inputs
// that reach each rejection. Every detail of a fuzzed input must be one of
// them: a detail that depended on the input could echo it.
func knownDetails(f *sigsyntax.SignatureFormat) map[string]bool {
	sig := strings.Repeat("a", hex.EncodedLen(f.Size))
	if f.Base64 {
		sig = base64.StdEncoding.EncodeToString(make([]byte, f.Size))
	}
	inputs := []string{"", "x", f.Prefix + "x"}
	if f.ItemSep != "" {
		kv := func(k, v string) string { return k + f.KVSep + v }
		inputs = append(inputs,
			kv("other", "1"),
			kv(f.SignatureKey, "x"),
			f.SignatureKey,
			kv(f.TimestampKey, "1")+f.ItemSep+kv(f.TimestampKey, "1")+f.ItemSep+kv(f.SignatureKey, sig),
			strings.Repeat(kv(f.SignatureKey, sig)+f.ItemSep, f.Max+1),
		)
	}
	details := make(map[string]bool)
	for _, in := range inputs {
		if _, rej := parseHeader(f, in, fuzzHeaderName); rej != nil {
			details[rej.Detail] = true
		}
	}
	return details
}

func FuzzHMACSignatureHeader(f *testing.F) {
	hexSig := hex.EncodeToString(bytes.Repeat([]byte{0xab}, 32))
	b64Sig := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xcd}, 32))
	b64Sig512 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xef}, 64))
	seeds := []struct {
		value  string
		format uint8
	}{
		{"sha256=" + hexSig, 0},
		{"sha256=" + strings.ToUpper(hexSig), 0},
		{"sha1=" + hexSig[:40], 0},
		{"sha256=" + hexSig + "0", 0},
		{"t=1492774577,v1=" + hexSig + ",v1=" + hexSig + ",v0=" + hexSig, 1},
		{" t=1 , v1=" + hexSig + " ,", 1},
		{"t=1,t=2,v1=" + hexSig, 1},
		{"v1=" + hexSig + ",v1", 1},
		{"t=1,v1=xyz,v1=" + hexSig, 1},
		{strings.Repeat("v1="+hexSig+",", 9), 1},
		{"v1," + b64Sig + " v1a," + b64Sig + "  v1," + strings.TrimRight(b64Sig, "="), 2},
		{"v1," + strings.NewReplacer("+", "-", "/", "_").Replace(b64Sig), 2},
		{"v1,\r\n" + b64Sig, 2},
		{b64Sig512, 3},
		{strings.TrimRight(b64Sig512, "="), 3},
		{"", 1},
	}
	for _, s := range seeds {
		f.Add(s.value, s.format)
	}
	details := make([]map[string]bool, len(fuzzHeaderFormats))
	for i := range fuzzHeaderFormats {
		details[i] = knownDetails(&fuzzHeaderFormats[i])
	}

	f.Fuzz(func(t *testing.T, value string, format uint8) {
		i := int(format) % len(fuzzHeaderFormats)
		sf := &fuzzHeaderFormats[i]
		got, rej := parseHeader(sf, value, fuzzHeaderName)

		// Deterministic.
		again, rej2 := parseHeader(sf, value, fuzzHeaderName)
		if !sameParse(got, again) || !sameRejection(rej, rej2) {
			t.Fatalf("parse(%q) is not deterministic", value)
		}

		if rej != nil {
			if rej.Reason != ReasonMissingSignature && rej.Reason != ReasonMalformedHeader {
				t.Fatalf("parse(%q): unexpected reason %q", value, rej.Reason)
			}
			if got.Sigs != nil || got.Timestamp != "" {
				t.Fatalf("parse(%q) rejected but returned %+v", value, got)
			}
			if !details[i][rej.Detail] {
				t.Fatalf("parse(%q): detail %q is not one of the fixed details", value, rej.Detail)
			}
		} else {
			if len(got.Sigs) == 0 || (sf.Max > 0 && len(got.Sigs) > sf.Max) {
				t.Fatalf("parse(%q) accepted %d signatures", value, len(got.Sigs))
			}
			for _, sig := range got.Sigs {
				if len(sig) != sf.Size {
					t.Fatalf("parse(%q) returned a %d-byte signature, want %d", value, len(sig), sf.Size)
				}
			}
			if sf.TimestampKey == "" && got.Timestamp != "" {
				t.Fatalf("parse(%q) found a timestamp without a timestamp key", value)
			}
			if strings.Trim(got.Timestamp, " \t") != got.Timestamp || (sf.ItemSep != "" && strings.Contains(got.Timestamp, sf.ItemSep)) {
				t.Fatalf("parse(%q) returned timestamp %q with blanks or a separator", value, got.Timestamp)
			}
			// Written back canonically, the header parses to the same.
			canon := canonicalHeader(sf, got)
			back, rej := parseHeader(sf, canon, fuzzHeaderName)
			if rej != nil || !sameParse(got, back) {
				t.Fatalf("parse(%q) = %+v, but its canonical form %q parses to %+v, %v", value, got, canon, back, rej)
			}
		}

		if sf.ItemSep != "" {
			// Items with unknown keys change nothing.
			extra := value + sf.ItemSep + "x-unknown" + sf.KVSep + "1"
			withExtra, rejExtra := parseHeader(sf, extra, fuzzHeaderName)
			if !sameParse(got, withExtra) || (rej == nil) != (rejExtra == nil) || (rej != nil && rej.Reason != rejExtra.Reason) {
				t.Fatalf("parse(%q) = %+v, %v but with an unknown item %+v, %v", value, got, rej, withExtra, rejExtra)
			}
			// A malformed signature item beside accepted ones is skipped.
			if rej == nil {
				bad := value + sf.ItemSep + sf.SignatureKey + sf.KVSep + "!"
				withBad, rejBad := parseHeader(sf, bad, fuzzHeaderName)
				if rejBad != nil || !sameParse(got, withBad) {
					t.Fatalf("parse(%q) = %+v but with a malformed item %+v, %v", value, got, withBad, rejBad)
				}
			}
		}
	})
}

func sameParse(a, b sigsyntax.Signatures) bool {
	return a.Timestamp == b.Timestamp && slices.EqualFunc(a.Sigs, b.Sigs, bytes.Equal)
}

func sameRejection(a, b *VerificationError) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// parseHeader parses a signature header as the verifiers do: the format's
// parse, and the rejection signatureRejection makes of a fault.
func parseHeader(f *sigsyntax.SignatureFormat, value, headerName string) (sigsyntax.Signatures, *VerificationError) {
	sigs, fault := f.Parse(value)
	if fault != sigsyntax.NoFault {
		return sigsyntax.Signatures{}, signatureRejection(f, fault, headerName)
	}
	return sigs, nil
}
