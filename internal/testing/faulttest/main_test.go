package faulttest

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs a node when the test binary was started as one
// (startNode), and the tests otherwise, failing them if any goroutine
// outlives them.
func TestMain(m *testing.M) {
	if os.Getenv(envNode) != "" {
		os.Exit(nodeMain())
	}
	goleak.VerifyTestMain(m)
}
