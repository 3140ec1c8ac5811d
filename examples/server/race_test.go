//go:build race

package main

// maxBurstRSS bounds the server's peak resident memory in
// TestPostgresBurstOfLargeBodies under the race detector, whose shadow
// memory multiplies the heap's.
const maxBurstRSS = 1200 << 20
