package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: the
// receivers the send tests start are stopped.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
