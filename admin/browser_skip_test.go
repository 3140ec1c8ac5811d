//go:build !browser

package admin_test

import (
	"os"
	"testing"
)

// TestPageInBrowser is built with -tags browser (browser_test.go), so that
// an everyday test run does not compile the DevTools client. .ci/run builds
// it so.
func TestPageInBrowser(t *testing.T) {
	if os.Getenv("WEBHOOKS_TEST_REQUIRE_BROWSER") == "1" {
		t.Fatal("WEBHOOKS_TEST_REQUIRE_BROWSER=1 but the browser test was not built: run the tests with -tags browser (GOFLAGS=-tags=browser make test)")
	}
	t.Skip("the admin page's browser test is built only with -tags browser: run it with " +
		"go test -tags browser -run TestPageInBrowser ./admin (or GOFLAGS=-tags=browser make test), " +
		"with Chromium installed (apt-get install chromium) or WEBHOOKS_TEST_BROWSER set to a Chrome binary")
}
