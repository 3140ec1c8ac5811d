package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: a
// server whose context ended has stopped its HTTP server, processor,
// listener and retention loop.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
