package pgstore_test

import (
	"crypto/sha256"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
)

// TestRegisterReplacesExpiredOnceUnderConcurrency: many instances meet an
// expired registration at once; exactly one replaces it.
func TestRegisterReplacesExpiredOnceUnderConcurrency(t *testing.T) {
	t.Parallel()
	const n = 32
	pool := pgtest.NewPool(t, 8)
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool))
	ctx := t.Context()
	k := webhooks.ReplayRegistration{Provider: "acme", Key: "msg_1"}
	old := sha256.Sum256([]byte("old"))
	out, err := s.Register(ctx, replayReg(k, old, baseTime, baseTime.Add(time.Minute)))
	require.NoError(t, err)
	require.Equal(t, webhooks.ReplayNew, out)

	digests := [2][32]byte{sha256.Sum256([]byte("a")), sha256.Sum256([]byte("b"))}
	now := baseTime.Add(time.Minute) // expired at exactly now
	outcomes := make([]webhooks.ReplayOutcome, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			outcomes[i], errs[i] = s.Register(ctx, replayReg(k, digests[i%2], now, now.Add(time.Hour)))
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i := range n {
		require.NoError(t, errs[i])
		if outcomes[i] == webhooks.ReplayNew {
			require.Equal(t, -1, winner, "two calls replaced the expired registration")
			winner = i
		}
	}
	require.NotEqual(t, -1, winner, "nobody replaced the expired registration")
	for i := range n {
		if i == winner {
			continue
		}
		want := webhooks.ReplayConflict
		if i%2 == winner%2 {
			want = webhooks.ReplaySeen
		}
		assert.Equal(t, want, outcomes[i], "call %d", i)
	}
}

// replayReg is k with a digest and times.
func replayReg(k webhooks.ReplayRegistration, digest [32]byte, now, expiresAt time.Time) webhooks.ReplayRegistration {
	k.PayloadSHA256, k.Now, k.ExpiresAt = digest, now, expiresAt
	return k
}
