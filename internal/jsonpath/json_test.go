package jsonpath

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"
)

// referenceFind is what Doc replaced: decode the whole body with
// encoding/json into an any and walk it. ok is false when the body is not
// a single JSON value. Doc must answer as it does.
func referenceFind(body []byte, path string) (value any, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var cur any
	if err := dec.Decode(&cur); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	for seg := range strings.SplitSeq(path, ".") {
		switch node := cur.(type) {
		case map[string]any:
			cur = node[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || strings.TrimLeft(seg, "0123456789") != "" || i >= len(node) {
				cur = nil
			} else {
				cur = node[i]
			}
		default:
			cur = nil
		}
		if cur == nil {
			return nil, true
		}
	}
	return cur, true
}

// referenceLookup is Doc.Lookup by referenceFind.
func referenceLookup(body []byte, path string) (string, int) {
	cur, ok := referenceFind(body, path)
	switch val := cur.(type) {
	case string:
		if val == "" {
			return "", Missing
		}
		return val, Found
	case json.Number:
		return val.String(), Found
	case nil:
		if !ok {
			return "", NotJSON
		}
		return "", Missing
	}
	return "", WrongKind
}

func TestDocLookup(t *testing.T) {
	t.Parallel()
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, c := range []struct {
		body, path string
		want       string
		result     int
	}{
		{`{"id":"evt_1","type":"invoice.paid"}`, "id", "evt_1", Found},
		{` {"id" : 12.5e-3 } `, "id", "12.5e-3", Found},
		{`{"id":-0}`, "id", "-0", Found},
		{`{"id":""}`, "id", "", Missing},
		{`{"id":null}`, "id", "", Missing},
		{`{"id":true}`, "id", "", WrongKind},
		{`{"id":{}}`, "id", "", WrongKind},
		{`{"id":[]}`, "id", "", WrongKind},
		{`{"x":1}`, "id", "", Missing},
		{`{"id":"a","id":"b"}`, "id", "b", Found},
		{`{"id":"a","id":null}`, "id", "", Missing},
		{`{"a":{"b":1},"a":{"c":2}}`, "a.b", "", Missing},
		{`{"a":{"b":1},"a":5}`, "a.b", "", Missing},
		{`{"a":5,"a":{"b":1}}`, "a.b", "1", Found},
		{`{"a":[{"b":1}],"a":[]}`, "a.0.b", "", Missing},
		{`{"events":[{"id":"x"},{"id":"y"}]}`, "events.1.id", "y", Found},
		{`{"events":[{"id":"x"}]}`, "events.00.id", "x", Found},
		{`{"events":[{"id":"x"}]}`, "events.+0.id", "", Missing},
		{`{"events":[{"id":"x"}]}`, "events.99999999999999999999.id", "", Missing},
		{`{"events":{"0":"x"}}`, "events.0", "x", Found},
		{`["a","b"]`, "1", "b", Found},
		{`"str"`, "id", "", Missing},
		{`{"\u0069d":"x"}`, "id", "x", Found},
		{`{"id":"a\"b\\c\/d\b\f\n\r\t"}`, "id", "a\"b\\c/d\b\f\n\r\t", Found},
		{`{"id":"\ud83d\ude00 \ud83d x \ude00"}`, "id", "😀 \ufffd x \ufffd", Found},
		{"{\"id\":\"\xff\"}", "id", "\ufffd", Found},
		{"{\"\xff\":\"x\"}", "\ufffd", "x", Found},
		{`{"a.b":1}`, "a.b", "", Missing},
		{`[{"":[]}]`, "0", "", WrongKind},
		{`{"a":{"b":[],"c":{},"d":[{}]},"id":"x"}`, "id", "x", Found},
		{deep(10000), "0", "", WrongKind},
		{deep(10001), "0", "", NotJSON},
		{`{"a":` + deep(9999) + `}`, "a", "", WrongKind},
		{`{"a":` + deep(10000) + `}`, "a", "", NotJSON},
		{``, "id", "", NotJSON},
		{` `, "id", "", NotJSON},
		{`{"id":"x"} {"id":"y"}`, "id", "", NotJSON},
		{`{"id":"x"}x`, "id", "", NotJSON},
		{`{"id":01}`, "id", "", NotJSON},
		{`{"id":1.}`, "id", "", NotJSON},
		{`{"id":.5}`, "id", "", NotJSON},
		{`{"id":+1}`, "id", "", NotJSON},
		{`{"id":1e}`, "id", "", NotJSON},
		{`{"id":"a` + "\n" + `"}`, "id", "", NotJSON},
		{`{"id":"\x"}`, "id", "", NotJSON},
		{`{"id":"\u12"}`, "id", "", NotJSON},
		{`{"id":tru}`, "id", "", NotJSON},
		{`{"id":"x",}`, "id", "", NotJSON},
		{`[1,]`, "0", "", NotJSON},
		{`{"id" "x"}`, "id", "", NotJSON},
		{`{'id':"x"}`, "id", "", NotJSON},
		{"\ufeff{}", "id", "", NotJSON},
		{`id=1`, "id", "", NotJSON},
	} {
		refValue, refResult := referenceLookup([]byte(c.body), c.path)
		if refValue != c.want || refResult != c.result {
			t.Fatalf("the test case %.40q %q is wrong: encoding/json gives %q, %d", c.body, c.path, refValue, refResult)
		}
		d := &Doc{Body: []byte(c.body)}
		if got, result := d.Lookup(c.path); got != c.want || result != c.result {
			t.Errorf("Lookup(%.40q, %q) = %q, %d; want %q, %d", c.body, c.path, got, result, c.want, c.result)
		}
		d = &Doc{Body: []byte(c.body), Want: CompilePaths("x", c.path, "y.z")}
		if got, result := d.Lookup(c.path); got != c.want || result != c.result {
			t.Errorf("Lookup(%.40q, %q) with Want = %q, %d; want %q, %d", c.body, c.path, got, result, c.want, c.result)
		}
	}
}

func TestDocLookupScansOnceWithoutAllocating(t *testing.T) {
	body := []byte(`{"id":"evt_1","data":{"object":{"id":"in_1"}},"type":"invoice.paid"}`)
	d := &Doc{Body: body, Want: CompilePaths("id", "type", "data.object.id")}
	allocs := testing.AllocsPerRun(100, func() {
		*d = Doc{Body: body, Want: d.Want}
		d.find("id")
		d.find("type")
		d.find("data.object.id")
	})
	if allocs != 0 && !raceEnabled {
		t.Errorf("scanning allocates %v times", allocs)
	}
	for path, want := range map[string]string{"id": "evt_1", "type": "invoice.paid", "data.object.id": "in_1"} {
		if got, _ := d.Lookup(path); got != want {
			t.Errorf("Lookup(%q) = %q, want %q", path, got, want)
		}
	}
	// A path outside Want is found too.
	if got, _ := d.Lookup("data.object"); got != "" {
		t.Errorf("Lookup(data.object) = %q", got)
	}
	if got, ok := d.LookupString("data.object.id"); !ok || got != "in_1" {
		t.Errorf("LookupString(data.object.id) = %q, %v", got, ok)
	}
}

// FuzzDocLookup checks that Doc answers as encoding/json does: the same
// result and value for every path, whether the path is looked up alone
// or among others in one scan.
func FuzzDocLookup(f *testing.F) {
	for _, s := range []struct{ body, path string }{
		{`{"id":"evt_1","type":"invoice.paid"}`, "type"},
		{`{"id":"a","id":{"x":1},"id":"c"}`, "id.x"},
		{`{"events":[{"id":"x"},{"id":7}]}`, "events.1.id"},
		{`{"\u0069d":"\ud83d\ude00\ud800"}`, "id"},
		{"{\"id\":\"\xffa\"}", "id"},
		{`[[[[{"a":null}]]]]`, "0.0.0.0.a"},
		{`{"id":1.5e+10} `, "id"},
		{`{"id":"x"} 1`, "id"},
	} {
		f.Add([]byte(s.body), s.path)
	}
	f.Fuzz(func(t *testing.T, body []byte, path string) {
		if !ValidPath(path) {
			return
		}
		want, wantResult := referenceLookup(body, path)
		d := &Doc{Body: body}
		if got, result := d.Lookup(path); got != want || result != wantResult {
			t.Fatalf("Lookup(%q, %q) = %q, %d; encoding/json: %q, %d", body, path, got, result, want, wantResult)
		}
		// Among other paths, in one scan, prefixes of it among them.
		others := []string{"id", "type", path + ".x"}
		if i := strings.LastIndexByte(path, '.'); i > 0 {
			others = append(others, path[:i])
		}
		d = &Doc{Body: body, Want: CompilePaths(append(others, path)...)}
		if got, result := d.Lookup(path); got != want || result != wantResult {
			t.Fatalf("Lookup(%q, %q) among others = %q, %d; encoding/json: %q, %d", body, path, got, result, want, wantResult)
		}
		for _, p := range others {
			want, wantResult := referenceLookup(body, p)
			if got, result := d.Lookup(p); got != want || result != wantResult {
				t.Fatalf("Lookup(%q, %q) after others = %q, %d; encoding/json: %q, %d", body, p, got, result, want, wantResult)
			}
		}
		s, ok := d.LookupString(path)
		cur, _ := referenceFind(body, path)
		if str, isString := cur.(string); ok != (isString && str != "") || s != str {
			t.Fatalf("LookupString(%q, %q) = %q, %v", body, path, s, ok)
		}
	})
}
