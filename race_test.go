//go:build race

package webhooks_test

// raceEnabled skips allocation counts, which the race detector changes.
const raceEnabled = true
