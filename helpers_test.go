package webhooks_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

var base = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// discard is a logger for tests that do not look at logs.
var discard = slog.New(slog.DiscardHandler)

// syncBuffer is a goroutine-safe log sink that tests can wait on.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{} // closed and replaced on every write
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written != nil {
		close(s.written)
		s.written = nil
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// changes returns a channel closed at the buffer's next write.
func (s *syncBuffer) changes() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written == nil {
		s.written = make(chan struct{})
	}
	return s.written
}

// waitFor blocks until the buffer holds substr, failing t after 10 seconds.
func (s *syncBuffer) waitFor(t *testing.T, substr string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		s.mu.Lock()
		if strings.Contains(s.b.String(), substr) {
			s.mu.Unlock()
			return
		}
		if s.written == nil {
			s.written = make(chan struct{})
		}
		written := s.written
		s.mu.Unlock()
		select {
		case <-written:
		case <-timeout:
			t.Fatalf("no %q logged within 10s; the log holds:\n%s", substr, s.String())
		}
	}
}

// maxKeyBytes is the documented bound on tenants, event IDs and types.
const maxKeyBytes = 512

// replayReg is k with a digest and times.
func replayReg(k webhooks.ReplayRegistration, digest [32]byte, now, expiresAt time.Time) webhooks.ReplayRegistration {
	k.PayloadSHA256, k.Now, k.ExpiresAt = digest, now, expiresAt
	return k
}
