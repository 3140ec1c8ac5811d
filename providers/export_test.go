package providers

import "github.com/hookinbox/webhooks"

// SetWaitingHook makes f call hook whenever a look-up starts waiting for
// another look-up's fetch of the same URL, so tests can wait for that
// instead of sleeping.
func SetWaitingHook(f *CertificateFetcher, hook func()) { f.waiting = hook }

// WithHMACOptions returns a copy of an HMAC entry whose definition is the
// entry's options changed by mod, for tests that change one fact of a
// definition and see the page, the signer and the verifier follow.
func WithHMACOptions(e Entry, mod func(*webhooks.HMACOptions)) Entry {
	inner := e.hmac
	e.hmac = func(publicURL string) webhooks.HMACOptions { return changed(inner(publicURL), mod) }
	return e
}

// WithEd25519Options is WithHMACOptions for an Ed25519 entry.
func WithEd25519Options(e Entry, mod func(*Ed25519Options)) Entry {
	inner := e.ed25519
	e.ed25519 = func() Ed25519Options { return changed(inner(), mod) }
	return e
}

// WithTokenOptions is WithHMACOptions for a token entry.
func WithTokenOptions(e Entry, mod func(*TokenOptions)) Entry {
	inner := e.token
	e.token = func() TokenOptions { return changed(inner(), mod) }
	return e
}

// changed returns o changed by mod.
func changed[T any](o T, mod func(*T)) T {
	mod(&o)
	return o
}
