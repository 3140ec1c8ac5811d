package browser

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/admin"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/webhookstest"
)

// TestMain fails the tests if any goroutine outlives them (the browser's
// connection, the console collector).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// base is the time of the fixture's first dead letter.
var base = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// fixture is a store with five dead letters across providers and tenants,
// a minute apart (evt_1 first, evt_3 last), beside a succeeded item and a
// pending one.
func fixture(t *testing.T) *memstore.Inbox {
	t.Helper()
	ctx := t.Context()
	s := memstore.NewInbox()
	enqueue := func(k webhooks.InboxKey, at time.Time) {
		t.Helper()
		payload := []byte(`{"id":"` + k.EventID + `"}`)
		_, err := s.Enqueue(ctx, webhooks.Envelope{Key: k, EventType: "invoice.paid", Payload: payload, PayloadSHA256: sha256.Sum256(payload), ReceivedAt: at})
		require.NoError(t, err)
	}
	settle := func(k webhooks.InboxKey, at time.Time, outcome webhooks.AttemptOutcome, failure webhooks.Failure) {
		t.Helper()
		leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: at, LeaseDuration: time.Minute, Max: 1})
		require.NoError(t, err)
		require.Len(t, leases, 1)
		require.Equal(t, k, leases[0].Key())
		require.NoError(t, s.Settle(ctx, webhooks.Settlement{Lease: leases[0], Outcome: outcome, Failure: failure, Now: at}))
	}
	for i, k := range []webhooks.InboxKey{
		{Provider: "stripe", EventID: "evt_1"},
		{Provider: "stripe", Tenant: "acme", EventID: "evt_2"},
		{Provider: "github", Tenant: "acme", EventID: "gh_1"},
		{Provider: "github", EventID: "gh_2"},
		{Provider: "stripe", Tenant: "globex", EventID: "evt_3"},
	} {
		at := base.Add(time.Duration(i) * time.Minute)
		enqueue(k, at.Add(-time.Second))
		settle(k, at, webhooks.AttemptDeadLettered, webhooks.Failure{Class: webhooks.FailurePermanent, Message: "handler said no to " + k.EventID})
	}
	ok := webhooks.InboxKey{Provider: "stripe", EventID: "evt_ok"}
	enqueue(ok, base.Add(10*time.Minute))
	settle(ok, base.Add(10*time.Minute), webhooks.AttemptSucceeded, webhooks.Failure{})
	enqueue(webhooks.InboxKey{Provider: "stripe", EventID: "evt_pending"}, base.Add(11*time.Minute))
	return s
}

// browserPath finds Chromium or Chrome: $WEBHOOKS_TEST_BROWSER, or the
// usual names on $PATH.
func browserPath() string {
	if p := os.Getenv("WEBHOOKS_TEST_BROWSER"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// serveAdmin serves h under /admin/ (through http.StripPrefix, as a host
// mounts it) until the test ends.
func serveAdmin(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/admin/", http.StripPrefix("/admin", h))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// needBrowser returns browserPath, or skips the test when there is none
// (fails it under WEBHOOKS_TEST_REQUIRE_BROWSER=1).
func needBrowser(t *testing.T) string {
	t.Helper()
	path := browserPath()
	if path == "" {
		if os.Getenv("WEBHOOKS_TEST_REQUIRE_BROWSER") == "1" {
			t.Fatal("WEBHOOKS_TEST_REQUIRE_BROWSER=1 but no Chromium was found: install it (apt-get install chromium) or set WEBHOOKS_TEST_BROWSER")
		}
		t.Skip("no Chromium or Chrome on $PATH (apt-get install chromium, or set WEBHOOKS_TEST_BROWSER): skipping the browser test of the admin page")
	}
	return path
}

// TestPageInBrowser loads the page in headless Chromium: it shows the
// stats and the dead letters the test made, its next-page links page
// through them, an item's link shows its attempts, and nothing is logged
// to the console (no script error, no refused asset or style).
func TestPageInBrowser(t *testing.T) {
	path := needBrowser(t)
	t.Parallel()
	h, err := admin.NewHandler(fixture(t), admin.WithClock(webhookstest.NewClock(base.Add(time.Hour))))
	require.NoError(t, err)
	srv := serveAdmin(t, h)

	bctx, finish := newBrowser(t, path)

	text := func(sel chromedp.ID) string {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Text(sel))
		require.NoError(t, err, "text of %s", sel)
		return s
	}
	evt1 := chromedp.Search(`//table[@id="items"]//a[text()="evt_1"]`)
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/admin/?limit=2"), chromedp.WaitVisible(chromedp.ID("items"))))
	stats, page1 := text("stats"), text("items")
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.ID("next")), chromedp.WaitVisible(chromedp.ID("first"))))
	page2 := text("items")
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.ID("next")), chromedp.WaitVisible(evt1)))
	page3 := text("items")
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(evt1), chromedp.WaitVisible(chromedp.ID("attempts"))))
	item, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("main")))
	require.NoError(t, err)
	location, err := chromedp.Run(bctx, chromedp.Location())
	require.NoError(t, err)

	assert.Contains(t, stats, "dead")
	assert.Contains(t, page1, "evt_3")
	assert.Contains(t, page1, "gh_2")
	assert.NotContains(t, page1, "gh_1")
	assert.Contains(t, page2, "gh_1")
	assert.Contains(t, page2, "evt_2")
	assert.Contains(t, page3, "evt_1")
	assert.Contains(t, item, "dead_lettered")
	assert.Contains(t, item, "handler said no to evt_1")
	assert.True(t, strings.HasPrefix(location, srv.URL+"/admin/item?"), "the item's page is under the prefix: %s", location)

	assert.Empty(t, finish(), "the page logs nothing to the console")
}

// newBrowser starts headless Chromium at path for the test, and returns
// its context and finish, which closes it and returns what it logged to
// the console: calls of the console API, uncaught exceptions and the
// browser log's entries (refused resources, policy violations).
func newBrowser(t *testing.T, path string) (bctx context.Context, finish func() []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		// The machine may have no network: nothing may phone home.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("metrics-recording-only", true),
	)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(cancelBrowser)

	// Console subscribes now (starting the browser) and reports calls of
	// the console API, uncaught exceptions and the browser log's entries
	// (refused resources, policy violations); a goroutine collects them.
	messages := chromedp.Console(bctx)
	var problems []string
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for m, err := range messages {
			if err != nil {
				return
			}
			problems = append(problems, fmt.Sprintf("%s (%s %s)", m, m.Source, m.URL))
		}
	}()
	_, err := chromedp.Call(bctx, cdplog.Enable, cdp.Empty{})
	require.NoError(t, err, "starting %s", path)
	return bctx, func() []string {
		cancelBrowser() // ends the subscription once the browser is closed
		<-collected
		return problems
	}
}

// TestPauseAndResumeInBrowser: an operator (the host names the actor)
// pauses the default handler from the page's form with a reason, sees it
// in the paused handlers' table, and resumes it with its Resume button;
// the store's pauses' trail has both ends, by the operator, with the
// reasons typed, and the page logs nothing to the console.
func TestPauseAndResumeInBrowser(t *testing.T) {
	path := needBrowser(t)
	t.Parallel()
	store := fixture(t)
	h, err := admin.NewHandler(store, admin.WithClock(webhookstest.NewClock(base.Add(time.Hour))),
		admin.WithActor(func(*http.Request) string { return "carol" }))
	require.NoError(t, err)
	srv := serveAdmin(t, h)
	bctx, finish := newBrowser(t, path)

	paused := chromedp.ID("paused-handlers")
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/admin/"), chromedp.WaitVisible(chromedp.ID("pause-form"))))
	require.NoError(t, chromedp.Do(bctx,
		chromedp.SendKeys(chromedp.CSS(`#pause-form input[name="reason"]`), "billing API maintenance"),
		chromedp.Click(chromedp.CSS(`#pause-form button`)),
		chromedp.WaitVisible(paused)))
	table, err := chromedp.Run(bctx, chromedp.Text(paused))
	require.NoError(t, err)
	location, err := chromedp.Run(bctx, chromedp.Location())
	require.NoError(t, err)
	assert.Contains(t, table, "default")
	assert.Contains(t, table, "carol")
	assert.Contains(t, table, "billing API maintenance")
	assert.Equal(t, srv.URL+"/admin/#pauses", location, "back on the page, under the prefix")
	inForce, err := store.Pauses(t.Context(), 0)
	require.NoError(t, err)
	require.Len(t, inForce, 1, "the handler is paused in the store")

	require.NoError(t, chromedp.Do(bctx,
		chromedp.SendKeys(chromedp.CSS(`form.resume input[name="reason"]`), "maintenance over"),
		chromedp.Click(chromedp.CSS(`form.resume button`)),
		chromedp.WaitVisible(chromedp.ID("pause-form")),
		chromedp.WaitNotPresent(paused)))
	trail, err := store.Pauses(t.Context(), 10)
	require.NoError(t, err)
	require.Len(t, trail, 1)
	assert.Equal(t, webhooks.Pause{Handler: "", Cause: webhooks.PauseOperator, Actor: "carol", Reason: "billing API maintenance",
		Since: base.Add(time.Hour), EndedAt: base.Add(time.Hour), EndedBy: "carol", EndReason: "maintenance over"}, trail[0])
	assert.Empty(t, finish(), "the page logs nothing to the console")
}
