package admin_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them, the
// browser test's included.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
