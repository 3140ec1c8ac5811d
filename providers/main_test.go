package providers_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: the
// test servers (SNS certificates) are closed and no client connection stays open.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
