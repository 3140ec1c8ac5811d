package faultproxy

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: a
// closed Proxy leaves no connection or copying goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
