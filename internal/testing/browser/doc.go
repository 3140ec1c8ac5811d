// Package browser holds the admin page's browser test: the page served by
// admin.Handler, loaded in headless Chromium through the DevTools protocol
// (chromedp). It is a module of its own, so that the library's go.mod never
// requires the DevTools client. Run it with Chromium installed (apt-get
// install chromium) or WEBHOOKS_TEST_BROWSER naming a Chrome binary:
//
//	cd internal/testing/browser && go test ./...
//
// Without a browser the test skips; WEBHOOKS_TEST_REQUIRE_BROWSER=1 (as
// .ci/run sets it) turns the skip into a failure.
package browser
