package sigsyntax

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

func TestParseTemplate(t *testing.T) {
	t.Parallel()
	v := Values{Body: []byte("BODY"), Timestamp: "TS", ID: "ID", Method: "POST", URL: "/u?x=1"}
	for template, want := range map[string]string{
		"{body}":                    "BODY",
		"{timestamp}.{body}":        "TS.BODY",
		"v0:{timestamp}:{body}":     "v0:TS:BODY",
		"{id}.{timestamp}.{body}":   "ID.TS.BODY",
		"{timestamp}{body}":         "TSBODY",
		"{method} {url}\n{body}.}":  "POST /u?x=1\nBODY.}",
		"{body}{timestamp}{id}{id}": "BODYTSIDID",
	} {
		var problems []string
		bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
		tpl := ParseTemplate("SignedContent", template, strings.Contains(template, "{timestamp}"), true, bad)
		if len(problems) > 0 {
			t.Errorf("%q: %v", template, problems)
			continue
		}
		if got := string(tpl.Bytes(v)); got != want {
			t.Errorf("%q renders %q, want %q", template, got, want)
		}
		// The body is a piece of its own, not a copy.
		for _, p := range tpl.Pieces(v) {
			if bytes.Equal(p, v.Body) && &p[0] != &v.Body[0] {
				t.Errorf("%q copies the body", template)
			}
		}
	}
	for template, want := range map[string]string{
		"":                   "has no {body}",
		"{timestamp}":        "has no {body}",
		"{body}{body}":       "has {body} 2 times",
		"{bodY}":             "unknown placeholder {bodY}",
		"{body}{":            "without a closing",
		"{ts}{body}":         "unknown placeholder {ts}",
		"{timestamp}.{body}": "no timestamp is read from a header",
		"{id}{body}":         "set Event.IDHeader",
	} {
		var problems []string
		bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
		ParseTemplate("SignedContent", template, false, false, bad)
		if !strings.Contains(strings.Join(problems, "; "), want) {
			t.Errorf("%q: problems %q, want %q", template, problems, want)
		}
	}
	var problems []string
	ParseTemplate("SignedContent", "{body}", true, false, func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
	})
	if len(problems) != 1 || !strings.Contains(problems[0], "would not cover it") {
		t.Errorf("a header timestamp outside the content: %q", problems)
	}
}

// FuzzParseTemplate checks that a template either reports a problem or
// renders as plain text replacement does.
func FuzzParseTemplate(f *testing.F) {
	for _, s := range []string{"{body}", "v0:{timestamp}:{body}", "{id}.{timestamp}.{body}", "{method} {url}{body}", "{", "}{body}{", "{{body}}", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, template string) {
		failed := false
		tpl := ParseTemplate("SignedContent", template, true, true, func(string, ...any) { failed = true })
		if failed {
			return
		}
		v := Values{Body: []byte("<B>"), Timestamp: "<T>", ID: "<I>", Method: "<M>", URL: "<U>"}
		before, after, ok := strings.Cut(template, "{body}")
		if !ok || strings.Contains(after, "{body}") {
			t.Fatalf("%q accepted without exactly one {body}", template)
		}
		r := strings.NewReplacer("{timestamp}", "<T>", "{id}", "<I>", "{method}", "<M>", "{url}", "<U>")
		want := r.Replace(before) + "<B>" + r.Replace(after)
		if string(tpl.Bytes(v)) != want {
			t.Fatalf("%q renders %q, want %q", template, tpl.Bytes(v), want)
		}
		var w bytes.Buffer
		if tpl.Write(&w, nil, v); w.String() != want {
			t.Fatalf("%q writes %q, want %q", template, w.String(), want)
		}
		if before, after, _ := tpl.Split(nil, v); string(before)+"<B>"+string(after) != want {
			t.Fatalf("%q splits into %q and %q, want %q", template, before, after, want)
		}
	})
}

// referenceDecodeDigest is DecodeDigest as it was before it decoded into
// buffers: the base64 package's own checks, an encoding built per call.
func referenceDecodeDigest(s string, b64 bool, size int) ([]byte, bool) {
	var (
		b   []byte
		err error
	)
	if b64 {
		if len(s) > base64.StdEncoding.EncodedLen(size) || strings.ContainsAny(s, "\r\n") {
			return nil, false
		}
		std, url := strings.ContainsAny(s, "+/"), strings.ContainsAny(s, "-_")
		if std && url {
			return nil, false
		}
		enc := base64.StdEncoding
		if url {
			enc = base64.URLEncoding
		}
		if !strings.HasSuffix(s, "=") {
			enc = enc.WithPadding(base64.NoPadding)
		}
		b, err = enc.Strict().DecodeString(s)
	} else {
		if len(s) != hex.EncodedLen(size) {
			return nil, false
		}
		b, err = hex.DecodeString(s)
	}
	if err != nil || len(b) != size {
		return nil, false
	}
	return b, true
}

// FuzzDecodeDigest checks DecodeDigest and the signature list parser
// against the reference decoder.
func FuzzDecodeDigest(f *testing.F) {
	for _, s := range []string{
		hex.EncodeToString(make([]byte, 32)), strings.ToUpper(hex.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))),
		base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef")),
		base64.RawURLEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcd\xff\xfe")),
		base64.StdEncoding.EncodeToString(make([]byte, 64)), "AAAA\nAAA=", "+-", "====",
	} {
		f.Add(s, true, uint8(32))
		f.Add(s, false, uint8(32))
	}
	f.Fuzz(func(t *testing.T, s string, b64 bool, size uint8) {
		n := int(size%80) + 1
		want, wantOK := referenceDecodeDigest(s, b64, n)
		got, ok := DecodeDigest(s, b64, n)
		if ok != wantOK || !bytes.Equal(got, want) {
			t.Fatalf("DecodeDigest(%q, %v, %d) = %x, %v; want %x, %v", s, b64, n, got, ok, want, wantOK)
		}
		// In a list, decoded into a SignatureSet.
		if strings.ContainsAny(s, " \t,") {
			return // the list syntax would split or trim it
		}
		format := SignatureFormat{ItemSep: " ", KVSep: ",", SignatureKey: "v1", Base64: b64, Size: n, Max: 8}
		sigs, fault := format.Parse("v1," + s)
		if (fault == NoFault) != wantOK || (wantOK && !bytes.Equal(sigs.Sigs[0], want)) {
			t.Fatalf("Parse(v1,%q) = %x, %v; want %x", s, sigs.Sigs, fault, want)
		}
	})
}
