package webhooks_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: a
// stopped Processor or Receiver leaves nothing running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
