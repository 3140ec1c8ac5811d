package webhookstest_test

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/providers"
)

// withClock returns opts verifying against clock.
func withClock(opts webhooks.HMACOptions, clock webhooks.Clock) webhooks.HMACOptions {
	opts.Clock = clock
	return opts
}

// withEdClock returns opts verifying against clock.
func withEdClock(opts providers.Ed25519Options, clock webhooks.Clock) providers.Ed25519Options {
	opts.Clock = clock
	return opts
}

// bodySHA256ID is the event ID Event.IDFromBody derives from a body.
func bodySHA256ID(body string) string {
	sum := sha256.Sum256([]byte(body))
	return "sha256:" + hex.EncodeToString(sum[:])
}
