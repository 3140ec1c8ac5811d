package wire

import (
	"bytes"
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
		if want := r.Replace(before) + "<B>" + r.Replace(after); string(tpl.Bytes(v)) != want {
			t.Fatalf("%q renders %q, want %q", template, tpl.Bytes(v), want)
		}
	})
}
