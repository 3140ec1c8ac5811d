package providers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/webhookstest"
)

// TestCatalogOrdering checks the catalog's ordering column against what
// each entry's verifier stores for its sample delivery: an entry that
// says "none" stores no key, and every other entry a key, with a reason
// given for every "none".
func TestCatalogOrdering(t *testing.T) {
	t.Parallel()
	sns := newSNSServer(t)
	for _, e := range providers.Entries() {
		text := e.Ordering()
		assert.NotContains(t, text, "|", "%s: the ordering cell would break the catalog table", e.Name)
		none := strings.HasPrefix(text, "none")
		if none {
			assert.Greater(t, len(strings.TrimPrefix(text, "none: ")), 10, "%s: no reason why the entry derives no ordering key", e.Name)
		}
		f := newEntryFixture(t, e, sns, acknowledge)
		d := f.sign(t, webhookstest.Message{})
		rec := f.send(t, d)
		require.Equal(t, wantStatus(e, 202), rec.Code, "%s: %s", e.Name, rec.Body)
		item, err := f.inbox.Get(context.Background(), webhooks.InboxKey{Provider: e.Name, EventID: d.EventID})
		require.NoError(t, err, e.Name)
		if none {
			assert.Zero(t, item.Ordering, "%s: the catalog says %q but the sample is stored with an ordering", e.Name, text)
		} else {
			assert.NotEmpty(t, item.Ordering.Key, "%s: the catalog says %q but the sample is stored with no key", e.Name, text)
		}
	}
}

// TestCatalogOrderingKeys checks the keys and versions of the entries
// that derive them, on bodies laid out as the providers document them.
func TestCatalogOrderingKeys(t *testing.T) {
	t.Parallel()
	at := func(s string) int64 {
		tm, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		return tm.UnixMicro()
	}
	cases := []struct {
		entry, typ, body string
		want             webhooks.Ordering
	}{
		{"stripe", "", `{"id":"evt_1","object":"event","created":1700000000,"type":"customer.subscription.updated","data":{"object":{"id":"sub_1","object":"subscription"}}}`,
			webhooks.Ordering{Key: "sub_1", Version: 1700000000 * 1e6}},
		{"stripe", "", `{"id":"evt_2","object":"event","created":"soon","type":"invoice.paid","data":{"object":{"id":"in_1"}}}`,
			webhooks.Ordering{Key: "in_1"}}, // a version that does not parse keeps the key
		{"stripe", "", `{"id":"evt_3","object":"event","created":1700000000,"type":"invoice.paid","data":{}}`,
			webhooks.Ordering{}}, // no object, no key, and no version either
		{"stripe", "", `{"id":"evt_4","created":1700000000,"type":"invoice.paid","data":{"object":{"id":"in_1"}},"data":{"object":{"id":"in_2"}}}`,
			webhooks.Ordering{Key: "in_2", Version: 1700000000 * 1e6}}, // a key given twice counts with its last value, as encoding/json reads it
		{"github", "issues", `{"action":"edited","issue":{"number":1347,"updated_at":"2011-04-22T13:33:48Z"},"repository":{"id":1296269}}`,
			webhooks.Ordering{Key: "1296269/1347", Version: at("2011-04-22T13:33:48Z")}},
		{"github", "pull_request", `{"action":"opened","number":1347,"pull_request":{"number":1347,"updated_at":"2011-04-22T13:33:49Z"},"repository":{"id":1296269}}`,
			webhooks.Ordering{Key: "1296269/1347", Version: at("2011-04-22T13:33:49Z")}},
		{"github", "issue_comment", `{"action":"created","issue":{"number":1347,"updated_at":"2011-04-22T13:33:50Z","pull_request":{"url":"u"}},"comment":{"id":1},"repository":{"id":1296269}}`,
			webhooks.Ordering{Key: "1296269/1347", Version: at("2011-04-22T13:33:50Z")}}, // a pull request's comments share its key
		{"github", "push", `{"ref":"refs/heads/main","repository":{"id":1296269,"pushed_at":1700000000}}`,
			webhooks.Ordering{Key: "1296269"}},
		{"github", "ping", `{"zen":"Keep it logically awesome.","hook_id":1}`,
			webhooks.Ordering{}},
		{"shopify", "orders/updated", `{"id":820982911946154508,"admin_graphql_api_id":"gid://shopify/Order/820982911946154508","updated_at":"2024-05-01T12:30:00.5-04:00"}`,
			webhooks.Ordering{Key: "gid://shopify/Order/820982911946154508", Version: at("2024-05-01T16:30:00.5Z")}},
		{"shopify", "products/delete", `{"id":788032119674292922}`,
			webhooks.Ordering{}},
	}
	for _, c := range cases {
		f := newFixture(t, c.entry, nil, acknowledge)
		d := f.sign(t, webhookstest.Message{Type: c.typ, Body: []byte(c.body)})
		rec := f.send(t, d)
		require.Equal(t, 202, rec.Code, "%s %s: %s", c.entry, c.body, rec.Body)
		item, err := f.inbox.Get(context.Background(), webhooks.InboxKey{Provider: c.entry, EventID: d.EventID})
		require.NoError(t, err)
		assert.Equal(t, c.want, item.Ordering, "%s %s", c.entry, c.body)
	}
}

// TestCatalogOrderingFromSignedContentOnly sends genuine deliveries with
// unsigned additions that name another object, and a forged one: the key
// comes from the signed body only, and a delivery that fails its
// signature stores nothing.
func TestCatalogOrderingFromSignedContentOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "github", nil, acknowledge)
	body := `{"action":"edited","issue":{"number":7,"updated_at":"2024-01-01T00:00:00Z"},"repository":{"id":42}}`
	d := f.sign(t, webhookstest.Message{Type: "issues", Body: []byte(body)})
	d.Header.Set("X-Demo-Order-Key", "other")
	d.Header.Set("X-GitHub-Hook-Installation-Target-ID", "99")
	d.URL += "?ordering_key=other&repository.id=99"
	rec := f.send(t, d)
	require.Equal(t, 202, rec.Code, rec.Body)
	item, err := f.inbox.Get(context.Background(), webhooks.InboxKey{Provider: "github", EventID: d.EventID})
	require.NoError(t, err)
	assert.Equal(t, "42/7", item.Ordering.Key)

	forged := f.sign(t, webhookstest.Message{Type: "issues", Body: []byte(body)})
	forged.Body = []byte(strings.Replace(body, `"id":42`, `"id":43`, 1))
	rec = f.send(t, forged)
	assert.Equal(t, 401, rec.Code, rec.Body)
	assert.Equal(t, 1, f.inbox.Len(), "a forged body is not stored")
}

// TestCatalogOrderingOnePass checks that every entry's verifier finds its
// body fields, the ordering's among them, in one scan of the body: at
// most eight paths (the scanner's set) per entry.
func TestCatalogOrderingOnePass(t *testing.T) {
	t.Parallel()
	for _, e := range providers.Entries() {
		var paths []string
		if o, ok := e.HMACOptions(providers.Config{PublicURL: hookBase}); ok {
			ev := o.Event
			paths = append(paths, o.Timestamp.Path, ev.IDPath, ev.TypePath, ev.TypeSuffixPath, ev.Order.ScopePath)
			paths = append(append(paths, ev.Order.KeyPaths...), ev.Order.VersionPaths...)
		}
		n := 0
		for _, p := range paths {
			if p != "" {
				n++
			}
		}
		assert.LessOrEqual(t, n, 8, "%s reads %d body paths: the ninth is scanned for apart", e.Name, n)
	}
}
