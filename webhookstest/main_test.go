package webhookstest_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: the
// servers and receivers the examples and tests start are stopped.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
