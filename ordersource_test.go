package webhooks_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks"
)

// extractOrdering runs Extract on body with src's ordering, the body
// signed or not.
func extractOrdering(t *testing.T, src webhooks.OrderSource, body string, signed bool) webhooks.Ordering {
	t.Helper()
	es := webhooks.EventSource{IDPath: "id", Order: src}
	require.NoError(t, es.Validate())
	req := &webhooks.Request{Method: http.MethodPost, Header: http.Header{}, Body: []byte(body)}
	v, err := es.Extract(req, webhooks.Verification{}, webhooks.SignedParts{Body: signed})
	require.NoError(t, err)
	return v.Ordering
}

func TestOrderSourceKeys(t *testing.T) {
	t.Parallel()
	object := webhooks.OrderSource{KeyPaths: []string{"a.id", "b.id"}}
	scoped := webhooks.OrderSource{ScopePath: "repo", KeyPaths: []string{"n"}}
	long := strings.Repeat("x", webhooks.MaxOrderingKeyBytes+1)
	digest := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	for _, c := range []struct {
		name string
		src  webhooks.OrderSource
		body string
		want string
	}{
		{"first path", object, `{"id":"e","a":{"id":"A"},"b":{"id":"B"}}`, "A"},
		{"second path when the first is absent", object, `{"id":"e","b":{"id":"B"}}`, "B"},
		{"second path when the first is null or empty", object, `{"id":"e","a":{"id":""},"b":{"id":"B"}}`, "B"},
		{"a number", object, `{"id":"e","a":{"id":12}}`, "12"},
		{"an object is no key", object, `{"id":"e","a":{"id":{"x":1}}}`, ""},
		{"none", object, `{"id":"e"}`, ""},
		{"unescaped as JSON reads it", object, `{"id":"e","a":{"id":"caf\u00e9"}}`, "café"},
		{"a single path kept as it is", object, `{"id":"e","a":{"id":"gid://x/Order/1"}}`, "gid://x/Order/1"},
		{"scope and object", scoped, `{"id":"e","repo":5,"n":7}`, "5/7"},
		{"scope alone", scoped, `{"id":"e","repo":5}`, "5"},
		{"no scope, no key", scoped, `{"id":"e","n":7}`, ""},
		{"scoped parts escaped", scoped, `{"id":"e","repo":"a/b%","n":"c/d"}`, "a%2Fb%25/c%2Fd"},
		{"scoped parts that cannot pose as others", scoped, `{"id":"e","repo":"a","n":"b/c"}`, "a/b%2Fc"},
		{"too long: its digest", object, `{"id":"e","a":{"id":"` + long + `"}}`, digest(long)},
		{"a NUL: its digest", object, `{"id":"e","a":{"id":"a\u0000b"}}`, digest("a\x00b")},
	} {
		got := extractOrdering(t, c.src, c.body, true)
		assert.Equal(t, c.want, got.Key, c.name)
		assert.NoError(t, webhooks.CheckOrdering(got), c.name)
	}
}

func TestOrderSourceVersions(t *testing.T) {
	t.Parallel()
	src := func(f webhooks.TimestampFormat) webhooks.OrderSource {
		return webhooks.OrderSource{KeyPaths: []string{"k"}, VersionPaths: []string{"v1", "v2"}, VersionFormat: f}
	}
	rfc := func(s string) int64 {
		tm, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
		return tm.UnixMicro()
	}
	for _, c := range []struct {
		name string
		f    webhooks.TimestampFormat
		body string
		want int64
	}{
		{"seconds", webhooks.TimestampUnixSeconds, `{"id":"e","k":"o","v1":1700000000}`, 1700000000_000000},
		{"the second path", webhooks.TimestampUnixSeconds, `{"id":"e","k":"o","v2":1700000001}`, 1700000001_000000},
		{"milliseconds", webhooks.TimestampUnixMillis, `{"id":"e","k":"o","v1":1700000000123}`, 1700000000_123000},
		{"RFC 3339 with a fraction and an offset", webhooks.TimestampRFC3339, `{"id":"e","k":"o","v1":"2024-05-01T12:30:00.123456-04:00"}`, rfc("2024-05-01T16:30:00.123456Z")},
		{"seconds given as RFC 3339", webhooks.TimestampRFC3339, `{"id":"e","k":"o","v1":1700000000}`, 0},
		{"a fraction of seconds", webhooks.TimestampUnixSeconds, `{"id":"e","k":"o","v1":1700000000.5}`, 0},
		{"negative", webhooks.TimestampUnixSeconds, `{"id":"e","k":"o","v1":-5}`, 0},
		{"the epoch", webhooks.TimestampUnixSeconds, `{"id":"e","k":"o","v1":0}`, 0},
		{"past year 9999", webhooks.TimestampUnixSeconds, `{"id":"e","k":"o","v1":253402300800}`, 0},
		{"beyond int64", webhooks.TimestampUnixMillis, `{"id":"e","k":"o","v1":99999999999999999999999}`, 0},
		{"before 1970", webhooks.TimestampRFC3339, `{"id":"e","k":"o","v1":"1969-12-31T23:59:59Z"}`, 0},
		{"a word", webhooks.TimestampRFC3339, `{"id":"e","k":"o","v1":"yesterday"}`, 0},
	} {
		got := extractOrdering(t, src(c.f), c.body, true)
		assert.Equal(t, webhooks.Ordering{Key: "o", Version: c.want}, got, c.name)
	}
	// No key, no version.
	assert.Zero(t, extractOrdering(t, src(webhooks.TimestampUnixSeconds), `{"id":"e","v1":1700000000}`, true))
}

// TestOrderSourceReadsSignedBodiesOnly: where the signature does not cover
// the body, the body chooses no order.
func TestOrderSourceReadsSignedBodiesOnly(t *testing.T) {
	t.Parallel()
	src := webhooks.OrderSource{KeyPaths: []string{"k"}, VersionPaths: []string{"v"}}
	body := `{"id":"e","k":"o","v":1700000000}`
	assert.Equal(t, "o", extractOrdering(t, src, body, true).Key)
	assert.Zero(t, extractOrdering(t, src, body, false))
}

// TestOrderSourceNotJSON: a body that is not JSON has no key and is not
// rejected for it.
func TestOrderSourceNotJSON(t *testing.T) {
	t.Parallel()
	es := webhooks.EventSource{IDFromBody: true, Order: webhooks.OrderSource{KeyPaths: []string{"k"}}}
	req := &webhooks.Request{Method: http.MethodPost, Header: http.Header{}, Body: []byte("payload=%7B%22k%22%3A1%7D")}
	v, err := es.Extract(req, webhooks.Verification{}, webhooks.SignedParts{Body: true})
	require.NoError(t, err)
	assert.Zero(t, v.Ordering)
}

func TestOrderSourceValidate(t *testing.T) {
	t.Parallel()
	five := []string{"a", "b", "c", "d", "e"}
	for _, c := range []struct {
		src  webhooks.OrderSource
		want string
	}{
		{webhooks.OrderSource{KeyPaths: five}, "KeyPaths has 5 paths"},
		{webhooks.OrderSource{KeyPaths: []string{"k"}, VersionPaths: five}, "VersionPaths has 5 paths"},
		{webhooks.OrderSource{ScopePath: "repo"}, "without Event.Order.KeyPaths"},
		{webhooks.OrderSource{VersionPaths: []string{"v"}}, "without Event.Order.KeyPaths"},
		{webhooks.OrderSource{KeyPaths: []string{"a..b"}}, `Event.Order.KeyPaths "a..b" is not a dotted path`},
		{webhooks.OrderSource{KeyPaths: []string{"k"}, ScopePath: ".x"}, `Event.Order.ScopePath ".x"`},
		{webhooks.OrderSource{KeyPaths: []string{"k"}, VersionPaths: []string{""}}, `Event.Order.VersionPaths ""`},
		{webhooks.OrderSource{KeyPaths: []string{"k"}, VersionFormat: 9}, "VersionFormat"},
	} {
		err := webhooks.EventSource{IDPath: "id", Order: c.src}.Validate()
		if assert.Error(t, err, c.want) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
	assert.NoError(t, webhooks.EventSource{IDPath: "id", Order: webhooks.OrderSource{
		ScopePath: "r", KeyPaths: []string{"a", "b", "c", "d"}, VersionPaths: []string{"v"}, VersionFormat: webhooks.TimestampRFC3339,
	}}.Validate())
}

// FuzzOrderSource: whatever the body, Extract neither panics nor returns
// an ordering a store would refuse.
func FuzzOrderSource(f *testing.F) {
	f.Add([]byte(`{"id":"e","r":"a/b","k":"x","v":"2024-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"id":"e","r":1,"k":{"x":1},"v":-1}`))
	f.Add([]byte(`{"id":"e","k":"\u0000","r":"` + strings.Repeat("%", 600) + `"}`))
	es := webhooks.EventSource{IDFromBody: true, Order: webhooks.OrderSource{
		ScopePath: "r", KeyPaths: []string{"k", "k2"}, VersionPaths: []string{"v"}, VersionFormat: webhooks.TimestampRFC3339,
	}}
	f.Fuzz(func(t *testing.T, body []byte) {
		req := &webhooks.Request{Method: http.MethodPost, Header: http.Header{}, Body: body}
		v, err := es.Extract(req, webhooks.Verification{}, webhooks.SignedParts{Body: true})
		if err != nil {
			return
		}
		if err := webhooks.CheckOrdering(v.Ordering); err != nil {
			t.Fatalf("Extract returned an ordering stores refuse: %v", err)
		}
	})
}
