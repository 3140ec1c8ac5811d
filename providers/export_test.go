package providers

// SetWaitingHook makes f call hook whenever a look-up starts waiting for
// another look-up's fetch of the same URL, so tests can wait for that
// instead of sleeping.
func SetWaitingHook(f *CertificateFetcher, hook func()) { f.waiting = hook }
