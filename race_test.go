//go:build race

package webhooks

// raceEnabled skips allocation counts, which the race detector changes.
const raceEnabled = true
