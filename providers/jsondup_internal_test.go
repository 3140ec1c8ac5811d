package providers

import "testing"

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
	} {
		if got := duplicateField([]byte(tc.body), tc.paths...); got != tc.want {
			t.Errorf("duplicateField(%s, %q) = %v, want %v", tc.body, tc.paths, got, tc.want)
		}
	}
}
