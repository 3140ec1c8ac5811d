package admin_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/admin"
	"github.com/hookinbox/webhooks/internal/adminjson"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/ops"
)

// page gets an HTML page, requiring the status.
func page(t *testing.T, h http.Handler, target string, status int) string {
	t.Helper()
	rec := do(h, http.MethodGet, target, "")
	require.Equal(t, status, rec.Code, "%s: %s", target, rec.Body)
	require.Equal(t, "text/html; charset=utf-8", rec.Header().Get("Content-Type"))
	csp := rec.Header().Get("Content-Security-Policy")
	assert.Contains(t, csp, "default-src 'none'", "no script, no external asset")
	return rec.Body.String()
}

var nextLink = regexp.MustCompile(`id="next" href="([^"]+)"`)

func TestPageListsAndPages(t *testing.T) {
	t.Parallel()
	s, _ := fixture(t)
	h := newHandler(t, s)
	body := page(t, h, "/?limit=2", http.StatusOK)
	assert.Contains(t, body, `<dd data-state="dead">5</dd>`)
	assert.Contains(t, body, `<dd id="due">1</dd>`)
	assert.Contains(t, body, "53m0s ago", "the oldest due item's age")
	assert.Contains(t, body, `<td>github</td><td>push</td><td class="num"><a href="./?event_type=push&amp;provider=github">2</a></td>`, "dead letters by provider and type link to their list")
	assert.Contains(t, body, "evt_3")
	assert.Contains(t, body, "gh_2")
	assert.NotContains(t, body, "gh_1", "the second page's")
	assert.Contains(t, body, `href="item?event_id=evt_3&amp;provider=stripe&amp;tenant=globex"`)
	assert.Contains(t, body, "handler said no to evt_3")
	assert.NotContains(t, body, `id="first"`, "the first page links to no first page")

	var seen []string
	target := "/?limit=2"
	for range 3 {
		body = page(t, h, target, http.StatusOK)
		for _, id := range []string{"evt_3", "gh_2", "gh_1", "evt_2", "evt_1"} {
			if strings.Contains(body, ">"+id+"<") {
				seen = append(seen, id)
			}
		}
		m := nextLink.FindStringSubmatch(body)
		if m == nil {
			break
		}
		assert.Contains(t, m[1], "limit=2", "the next link keeps the filters")
		target = "/" + strings.TrimPrefix(strings.ReplaceAll(m[1], "&amp;", "&"), "./")
	}
	assert.Equal(t, []string{"evt_3", "gh_2", "gh_1", "evt_2", "evt_1"}, seen)
	assert.Contains(t, body, `id="first"`)
	assert.NotContains(t, body, `id="next"`, "the last page has no next page")

	// Filters show in the form and narrow the list.
	body = page(t, h, "/?provider=github&no_tenant=true", http.StatusOK)
	assert.Contains(t, body, ">gh_2<")
	assert.NotContains(t, body, ">gh_1<")
	assert.Contains(t, body, `name="provider" value="github"`)
	assert.Contains(t, body, `name="no_tenant" value="true" checked`)
	body = page(t, h, "/?provider=nobody", http.StatusOK)
	assert.Contains(t, body, "No dead letters match these filters.")
	body = page(t, h, "/?state=closed", http.StatusOK)
	assert.Contains(t, body, "No closed items.")

	// The form as a browser submits it, every field present.
	form := url.Values{"state": {"dead"}, "provider": {""}, "tenant": {""}, "event_type": {"push"}, "error_class": {""}, "api_version": {""}, "from": {""}, "to": {""}, "limit": {"50"}}
	body = page(t, h, "/?"+form.Encode(), http.StatusOK)
	assert.Contains(t, body, ">gh_1<")
	assert.NotContains(t, body, ">evt_1<")

	body = page(t, h, "/?limit=nope", http.StatusBadRequest)
	assert.Contains(t, body, `limit &#34;nope&#34;: give a number from 1 to 500`)
	body = page(t, h, "/?after=garbage", http.StatusBadRequest)
	assert.Contains(t, body, "invalid cursor")
}

func TestItemPage(t *testing.T) {
	t.Parallel()
	s, _ := fixture(t)
	key := webhooks.InboxKey{Provider: "stripe", Tenant: "acme", EventID: "evt_2"}
	conflict := envelope(key, "invoice.paid", base.Add(10*time.Minute))
	conflict.Payload = []byte(`{"marker":"QUARANTINED"}`)
	conflict.PayloadSHA256[0] ^= 1
	_, err := s.Enqueue(t.Context(), conflict)
	require.NoError(t, err)

	h := newHandler(t, s)
	body := page(t, h, "/item?provider=stripe&tenant=acme&event_id=evt_2", http.StatusOK)
	assert.Contains(t, body, `id="state">dead<`)
	assert.Contains(t, body, `id="attempts"`)
	assert.Contains(t, body, "dead_lettered")
	assert.Contains(t, body, "handler said no to evt_2")
	assert.Contains(t, body, "test-worker")
	assert.Contains(t, body, "1 deliveries reused this event ID")
	assert.Contains(t, body, "not shown: the host has not enabled them")
	assert.Contains(t, body, "hookinbox replay -provider stripe -tenant acme -event-id evt_2 -actor YOU", "a dead letter's page says how to replay it")
	assert.Contains(t, body, `{&#34;provider&#34;:&#34;stripe&#34;,&#34;tenant&#34;:&#34;acme&#34;,&#34;event_id&#34;:&#34;evt_2&#34;,&#34;reason&#34;:&#34;…&#34;}`)
	for _, hidden := range []string{"PAYLOAD-", "QUARANTINED", "HEADER-"} {
		assert.NotContains(t, body, hidden)
	}

	body = page(t, newHandler(t, s, admin.WithPayloads(true)), "/item?provider=stripe&tenant=acme&event_id=evt_2", http.StatusOK)
	assert.Contains(t, body, "{\n  &#34;marker&#34;: &#34;PAYLOAD-evt_2&#34;\n}", "the JSON payload, indented")
	assert.Contains(t, body, "QUARANTINED")
	assert.Contains(t, body, "HEADER-evt_2")

	body = page(t, h, "/item?provider=stripe&event_id=nope", http.StatusNotFound)
	assert.Contains(t, body, "not found")
	body = page(t, h, "/item?provider=stripe", http.StatusBadRequest)
	assert.Contains(t, body, "provider and event_id are required")
}

// TestPageEscapes stores keys and errors with markup: the page shows them
// as text.
func TestPageEscapes(t *testing.T) {
	t.Parallel()
	s := memstore.NewInbox()
	makeDead(t, s, dead{provider: "x", tenant: "<b>t</b>", id: `"><script>alert(1)</script>`, eventType: "<i>type</i>", at: base})
	h := newHandler(t, s)
	for _, target := range []string{"/", "/item?" + url.Values{"provider": {"x"}, "tenant": {"<b>t</b>"}, "event_id": {`"><script>alert(1)</script>`}}.Encode()} {
		body := page(t, h, target, http.StatusOK)
		assert.NotContains(t, body, "<script>alert", target)
		assert.NotContains(t, body, "<b>t</b>", target)
		assert.Contains(t, body, "&lt;script&gt;alert(1)&lt;/script&gt;", target)
	}
}

func TestCSS(t *testing.T) {
	t.Parallel()
	rec := do(newHandler(t, memstore.NewInbox()), http.MethodGet, "/admin.css", "")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "text/css; charset=utf-8", rec.Header().Get("Content-Type"))
	assert.Contains(t, rec.Body.String(), "table")
}

// TestMounting serves the handler under a prefix, both ways, through a
// real server: the API, the page, its stylesheet and its links resolve.
func TestMounting(t *testing.T) {
	t.Parallel()
	s, _ := fixture(t)
	mux := http.NewServeMux()
	mux.Handle("/admin/", newHandler(t, s, admin.WithPathPrefix("/admin/")))
	mux.Handle("/ops/", http.StripPrefix("/ops", newHandler(t, s)))
	mux.Handle("/deep/ops/", http.StripPrefix("/deep/ops", newHandler(t, s)))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	get := func(target string) (*http.Response, string) {
		t.Helper()
		resp, err := client.Get(srv.URL + target)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, string(b)
	}
	for _, prefix := range []string{"/admin/", "/ops/", "/deep/ops/"} {
		resp, body := get(prefix + "api/stats")
		assert.Equal(t, http.StatusOK, resp.StatusCode, prefix)
		assert.Contains(t, body, `"dead": 5`, prefix)

		resp, body = get(prefix + "?limit=2")
		require.Equal(t, http.StatusOK, resp.StatusCode, prefix)
		m := nextLink.FindStringSubmatch(body)
		require.NotNil(t, m, prefix)
		// Relative links resolve under the prefix, as a browser resolves them.
		pageURL, _ := url.Parse(srv.URL + prefix + "?limit=2")
		next, err := pageURL.Parse(strings.ReplaceAll(m[1], "&amp;", "&"))
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(next.Path, prefix), "%s: the next page %s", prefix, next)
		resp, body = get(next.RequestURI())
		assert.Equal(t, http.StatusOK, resp.StatusCode, prefix)
		assert.Contains(t, body, ">gh_1<", prefix)
		css, _ := pageURL.Parse("admin.css")
		resp, _ = get(css.RequestURI())
		assert.Equal(t, http.StatusOK, resp.StatusCode, prefix)

		// The prefix without its slash redirects to it (here the mux does).
		resp, _ = get(strings.TrimSuffix(prefix, "/") + "?limit=2")
		assert.Contains(t, []int{http.StatusMovedPermanently, http.StatusTemporaryRedirect}, resp.StatusCode, prefix)
		loc, err := pageURL.Parse(resp.Header.Get("Location"))
		require.NoError(t, err)
		assert.Equal(t, prefix, loc.Path, prefix)
		assert.Equal(t, "limit=2", loc.RawQuery, prefix)
	}
	// The handler redirects the prefix without its slash itself, when
	// mounted on it exactly.
	for prefix, h := range map[string]http.Handler{
		"/admin":    newHandler(t, s, admin.WithPathPrefix("/admin/")),
		"/deep/ops": http.StripPrefix("/deep/ops", newHandler(t, s)),
	} {
		rec := do(h, http.MethodGet, prefix+"?limit=2", "")
		assert.Equal(t, http.StatusMovedPermanently, rec.Code, prefix)
		base, _ := url.Parse("http://x" + prefix + "?limit=2")
		loc, err := base.Parse(rec.Header().Get("Location"))
		require.NoError(t, err)
		assert.Equal(t, prefix+"/?limit=2", loc.RequestURI(), prefix)
	}

	// A handler with a prefix refuses paths outside it.
	h := newHandler(t, s, admin.WithPathPrefix("/admin/"))
	e := decode[adminjson.ErrorResponse](t, do(h, http.MethodGet, "/elsewhere/api/stats", ""), http.StatusNotFound)
	assert.Contains(t, e.Message, "not under the admin handler's prefix /admin/")
}

// TestPageTimeFieldsHintTheirFormat: the listing's time fields say what
// to type in words, not with Go's reference time.
func TestPageTimeFieldsHintTheirFormat(t *testing.T) {
	t.Parallel()
	h := newHandler(t, memstore.NewInbox())
	body := page(t, h, "/", http.StatusOK)
	assert.NotContains(t, body, "2006-01-02", "Go's reference time shown as a placeholder")
	assert.Contains(t, body, `name="from" value="" placeholder="YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ"`)
	assert.Contains(t, body, `name="to" value="" placeholder="YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ"`)
	body = page(t, h, "/?from=yesterday", http.StatusBadRequest)
	assert.NotContains(t, body, "2006-01-02")
	assert.Contains(t, body, "give a date as YYYY-MM-DD or a time as YYYY-MM-DDThh:mm:ssZ (RFC 3339; both in UTC)")
}

// TestItemPageFormatsJSONPayloads: a JSON payload is shown indented, still
// escaped; any other payload as it is; neither without WithPayloads.
func TestItemPageFormatsJSONPayloads(t *testing.T) {
	t.Parallel()
	s := memstore.NewInbox()
	makeDead(t, s, dead{provider: "x", id: "json", eventType: "a", at: base,
		payload: `{"id":"json","data":{"html":"</pre><script>alert(1)</script>","n":[1,2.50]}}`})
	makeDead(t, s, dead{provider: "x", id: "form", eventType: "a", at: base.Add(time.Minute), payload: `a=1&b=<i>{"x":1}</i>`})
	h := newHandler(t, s, admin.WithPayloads(true))

	body := page(t, h, "/item?provider=x&event_id=json", http.StatusOK)
	assert.Contains(t, body, `<pre class="payload">{
  &#34;id&#34;: &#34;json&#34;,
  &#34;data&#34;: {
    &#34;html&#34;: &#34;&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;&#34;,
    &#34;n&#34;: [
      1,
      2.50
    ]
  }
}</pre>`, "the JSON payload indented, its numbers as sent")
	assert.NotContains(t, body, "<script>")

	body = page(t, h, "/item?provider=x&event_id=form", http.StatusOK)
	assert.Contains(t, body, `<pre class="payload">a=1&amp;b=&lt;i&gt;{&#34;x&#34;:1}&lt;/i&gt;</pre>`, "any other payload as it is")

	body = page(t, newHandler(t, s), "/item?provider=x&event_id=json", http.StatusOK)
	assert.NotContains(t, body, "alert(1)", "no payload without WithPayloads")
}

// TestDeadLetterGroupsBounded: event types are chosen by senders, so the
// page and the API list the largest dead-letter groups only, and say how
// many more there are.
func TestDeadLetterGroupsBounded(t *testing.T) {
	t.Parallel()
	s := memstore.NewInbox()
	for i := range ops.DefaultDeadLetterGroups + 5 {
		makeDead(t, s, dead{provider: "x", id: fmt.Sprintf("e%02d", i), eventType: fmt.Sprintf("type.%02d", i), at: base.Add(time.Duration(i) * time.Second)})
	}
	h := newHandler(t, s)
	body := page(t, h, "/", http.StatusOK)
	groups := body[strings.Index(body, `id="groups"`):]
	groups = groups[:strings.Index(groups, "</table>")]
	assert.Equal(t, ops.DefaultDeadLetterGroups, strings.Count(groups, "<tr><td>"), "group rows:\n%s", groups)
	assert.Contains(t, body, `<p class="more" id="more-groups">and 5 more groups holding 5 dead letters</p>`)

	st := decode[adminjson.Stats](t, do(h, http.MethodGet, "/api/stats", ""), http.StatusOK)
	assert.Len(t, st.DeadLetters, ops.DefaultDeadLetterGroups)
	assert.Equal(t, adminjson.More{Groups: 5, Count: 5}, st.MoreDeadLetters)
	assert.Equal(t, int64(ops.DefaultDeadLetterGroups+5), st.States["dead"])
}
