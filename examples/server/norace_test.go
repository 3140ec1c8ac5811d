//go:build !race

package main

// maxBurstRSS bounds the server's peak resident memory in
// TestPostgresBurstOfLargeBodies.
const maxBurstRSS = 400 << 20
