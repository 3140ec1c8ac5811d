package ops_test

import (
	"strings"
	"testing"

	"github.com/hookinbox/webhooks/ops"
)

// TestErrNotFinishedSaysWhatToDo: an operator refused a replay of an item
// that has not finished learns what to do instead.
func TestErrNotFinishedSaysWhatToDo(t *testing.T) {
	t.Parallel()
	if msg := ops.ErrNotFinished.Error(); !strings.Contains(msg, "wait until it") {
		t.Errorf("ops.ErrNotFinished = %q; want it to say what to do: wait until it settles", msg)
	}
}
