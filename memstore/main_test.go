package memstore

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: the
// conformance suite's concurrent calls all return.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
