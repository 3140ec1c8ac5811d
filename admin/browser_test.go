//go:build browser

package admin_test

import (
	"context"
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
)

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

// TestPageInBrowser loads the page in headless Chromium: it shows the
// stats and the dead letters the test made, its next-page links page
// through them, an item's link shows its attempts, and nothing is logged
// to the console (no script error, no refused asset or style).
func TestPageInBrowser(t *testing.T) {
	path := browserPath()
	if path == "" {
		if os.Getenv("WEBHOOKS_TEST_REQUIRE_BROWSER") == "1" {
			t.Fatal("WEBHOOKS_TEST_REQUIRE_BROWSER=1 but no Chromium was found: install it (apt-get install chromium) or set WEBHOOKS_TEST_BROWSER")
		}
		t.Skip("no Chromium or Chrome on $PATH (apt-get install chromium, or set WEBHOOKS_TEST_BROWSER): skipping the browser test of the admin page")
	}
	t.Parallel()
	s, _ := fixture(t)
	mux := http.NewServeMux()
	mux.Handle("/admin/", http.StripPrefix("/admin", newHandler(t, s)))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
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
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()

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

	cancelBrowser() // ends the subscription once the browser is closed
	<-collected
	assert.Empty(t, problems, "the page logs nothing to the console")
}
