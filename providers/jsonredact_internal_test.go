package providers

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

func TestRedactJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body  string
		paths []string
		want  string // "" for nothing to redact
	}{
		{`{"passcode":"s3cret","a":1}`, []string{"passcode"}, `{"passcode":"[redacted]","a":1}`},
		// Blanks, escapes and the bytes around the value are kept as sent.
		{"{ \"passcode\" :\t\"s3\\u0063ret\" ,\n\"a\" : [1, 2] }", []string{"passcode"}, "{ \"passcode\" :\t\"[redacted]\" ,\n\"a\" : [1, 2] }"},
		{`{"a":{"passcode":"x"}}`, []string{"passcode"}, ""},
		{`{"signature":{"timestamp":"1","token":"t","signature":"ab"}}`, []string{"signature.signature"}, `{"signature":{"timestamp":"1","token":"t","signature":"[redacted]"}}`},
		{`{"value":[{"clientState":"a","id":1},{"clientState":"b"}],"validationTokens":["j1","j2"]}`, []string{"value.*.clientState", "validationTokens.*"},
			`{"value":[{"clientState":"[redacted]","id":1},{"clientState":"[redacted]"}],"validationTokens":["[redacted]","[redacted]"]}`},
		// Keys match as encoding/json matches them: every copy is redacted.
		{`{"PASSCODE":"a","pass\u0063ode":"b","paſscode":"c"}`, []string{"passcode"}, `{"PASSCODE":"[redacted]","pass\u0063ode":"[redacted]","paſscode":"[redacted]"}`},
		// A value of another kind is replaced whole.
		{`{"passcode":{"nested":["s3cret"]},"n":null}`, []string{"passcode"}, `{"passcode":"[redacted]","n":null}`},
		{`[{"passcode":"x"}]`, []string{"passcode"}, ""},
		{`"passcode"`, []string{"passcode"}, ""},
	} {
		body := []byte(tc.body)
		got, err := redactJSON(body, pathsOf(tc.paths...))
		if err != nil {
			t.Errorf("%s: %v", tc.body, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("%s: got %s, want %s", tc.body, got, tc.want)
		}
		if string(body) != tc.body {
			t.Errorf("%s: the body was modified", tc.body)
		}
	}
	for _, bad := range []string{``, `not json`, `{"passcode":"a"} {}`, `{"passcode":"a"`, `{"passcode":}`} {
		if _, err := redactJSON([]byte(bad), pathsOf("passcode")); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// FuzzRedactJSON checks that a JSON body stays one JSON value, that
// nothing at a credential path survives, that the body is never modified
// and that the copy shares no memory with it.
func FuzzRedactJSON(f *testing.F) {
	for _, s := range []string{`{"passcode":"a"}`, `{"value":[{"clientState":"a"}]}`, `{"PassCode":1,"x":[{"passcode":[]}]}`, `[]`, `1`, `{"signature":{"signature":"x"}}`} {
		f.Add([]byte(s))
	}
	paths := pathsOf("passcode", "value.*.clientState", "signature.signature")
	f.Fuzz(func(t *testing.T, body []byte) {
		orig := slices.Clone(body)
		got, err := redactJSON(body, paths)
		if !bytes.Equal(body, orig) {
			t.Fatal("the body was modified")
		}
		if !json.Valid(body) {
			if err == nil {
				t.Fatalf("%q is not JSON and no error", body)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		if got == nil {
			return
		}
		if !json.Valid(got) {
			t.Fatalf("%q became %q, not JSON", body, got)
		}
		if len(got) > 0 && len(body) > 0 && &got[0] == &body[0] {
			t.Fatal("the copy shares memory with the body")
		}
		if out, _ := redactJSON(got, paths); out != nil && !bytes.Equal(out, got) {
			t.Fatalf("%q left a credential: %q", got, out)
		}
	})
}
