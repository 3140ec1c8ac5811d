package main

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: the
// receivers the send tests start are stopped. It also removes the binary
// the tests share (buildBinary).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(testMain{m})
}

type testMain struct{ m *testing.M }

func (t testMain) Run() int {
	code := t.m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	return code
}
