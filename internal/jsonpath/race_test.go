//go:build race

package jsonpath

// raceEnabled skips allocation counts, which the race detector changes.
const raceEnabled = true
