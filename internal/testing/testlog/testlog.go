// Package testlog gives tests a logger on their own output that outlives
// them safely.
//
// A store's background work (pgstore's wake-up sender) may log a moment
// after the test that started it has ended; writing to t.Output() then is
// a data race with the testing package finishing the test. The writer here
// forwards to t.Output() until the test's cleanup runs and drops what comes
// after.
package testlog

import (
	"io"
	"log/slog"
	"sync"
	"testing"
)

// Logger returns a text logger writing to Output(t).
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(Output(t), nil))
}

// Output returns a writer to t.Output() that discards writes once t's
// cleanup has run.
func Output(t testing.TB) io.Writer {
	w := &writer{out: t.Output()}
	t.Cleanup(w.close)
	return w
}

type writer struct {
	mu  sync.Mutex
	out io.Writer // nil once closed
}

func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.out == nil {
		return len(p), nil
	}
	return w.out.Write(p)
}

func (w *writer) close() {
	w.mu.Lock()
	w.out = nil
	w.mu.Unlock()
}
