package providers

import (
	"fmt"
	"testing"
)

func TestDuplicateField(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body  string
		paths []string
		want  bool
	}{
		{`{"passcode":"a","passcode":"b"}`, []string{"passcode"}, true},
		{`{"passcode":"a","other":1,"other":2}`, []string{"passcode"}, false},
		{`{"passcode":"a","x":{"passcode":"b"}}`, []string{"passcode"}, false},
		{`{"signature":{"token":"a","token":"b"}}`, []string{"signature.token"}, true},
		{`{"signature":{"token":"a"},"signature":{"token":"b"}}`, []string{"signature", "signature.token"}, true},
		{`{"value":[{"clientState":"a"},{"clientState":"a"}]}`, []string{"value.*.clientState"}, false},
		{`{"value":[{"clientState":"a"},{"clientState":"a","clientState":"b"}]}`, []string{"value.*.clientState"}, true},
		{`{"value":[{"x":[1,{"y":2}],"clientState":"a"}]}`, []string{"value.*.clientState"}, false},
		{`not json`, []string{"passcode"}, false},
		// Keys match as encoding/json matches them, without regard to case.
		{`{"passcode":"a","PASSCODE":"b"}`, []string{"passcode"}, true},
		{`{"passcode":"a","paſscode":"b"}`, []string{"passcode"}, true}, // ſ folds to s
		{`{"signature":{"timestamp":"1","Timestamp":2}}`, []string{"signature.timestamp"}, true},
		{`{"Signature":{"token":"a"},"signature":{"token":"b"}}`, []string{"signature"}, true},
		{`{"Signature":{"token":"a","TOKEN":"b"}}`, []string{"signature.token"}, true},
		{`{"Value":[{"clientState":"a","ClientState":"b"}]}`, []string{"value.*.clientState"}, true},
		{`{"passcode":"a","passcodes":"b","pass":"c"}`, []string{"passcode"}, false},
	} {
		if got := duplicateField([]byte(tc.body), tc.paths...); got != tc.want {
			t.Errorf("duplicateField(%s, %q) = %v, want %v", tc.body, tc.paths, got, tc.want)
		}
	}
}

// BenchmarkDuplicateFieldManyKeys: a body of many keys none of which is
// wanted costs time linear in its size (compare -benchtime runs of
// different sizes), since only wanted keys are compared.
func BenchmarkDuplicateFieldManyKeys(b *testing.B) {
	var body []byte
	body = append(body, '{')
	for i := range 40000 {
		if i > 0 {
			body = append(body, ',')
		}
		body = fmt.Appendf(body, `"k%d":%d`, i, i)
	}
	body = append(body, `,"passcode":"x"}`...)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if duplicateField(body, "passcode") {
			b.Fatal("no duplicate in the body")
		}
	}
}
