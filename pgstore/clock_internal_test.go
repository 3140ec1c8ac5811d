package pgstore

import (
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
)

// TestDatabaseClockRetention: with the database clock, completion times are
// the server's, so DeleteSucceeded's cutoff (an instant of the host's
// clock) keeps its distance from the host's now. A host two hours fast
// asking for items completed over an hour ago deletes nothing that has just
// completed, and one two hours slow deletes what completed over an hour ago.
func TestDatabaseClockRetention(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 2)
	s := newMigratedStore(t, pool, WithDatabaseClock())
	ctx := t.Context()
	skew := 2 * time.Hour
	s.hostNow = func() time.Time { return time.Now().Add(skew) }

	complete := func(ids ...string) {
		t.Helper()
		for _, id := range ids {
			env := webhooks.Envelope{
				Key:        webhooks.InboxKey{Provider: "acme", EventID: id},
				EventType:  "x",
				ReceivedAt: s.hostNow(),
			}
			env.PayloadSHA256 = sha256.Sum256(env.Payload)
			res, err := s.Enqueue(ctx, env)
			require.NoError(t, err)
			require.Equal(t, webhooks.EnqueueNew, res.Outcome)
			leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: s.hostNow(), LeaseDuration: time.Minute, Max: 1})
			require.NoError(t, err)
			require.Len(t, leases, 1)
			require.NoError(t, s.Settle(ctx, webhooks.Settlement{Lease: leases[0], Outcome: webhooks.AttemptSucceeded, Now: s.hostNow()}))
		}
	}
	complete("e0", "e1", "e2")

	n, err := s.DeleteSucceeded(ctx, s.hostNow().Add(-time.Hour), 2)
	require.NoError(t, err)
	assert.Zero(t, n, "the items completed moments ago by the server's clock, not over an hour ago")
	n, err = s.DeleteSucceeded(ctx, s.hostNow().Add(time.Second), 2)
	require.NoError(t, err)
	assert.Equal(t, int64(3), n, "all completed before a second from now")

	// A host two hours slow: its "an hour ago" is an hour ago on the server
	// too. Backdate completions by 90 minutes of server time to have some.
	complete("old0", "old1", "new")
	_, err = pool.Exec(ctx, fmt.Sprintf(`UPDATE %s.inbox_jobs SET completed_at = completed_at - interval '90 minutes'
		WHERE event_id LIKE 'old%%'`, quoteSchema(s.schema)))
	require.NoError(t, err)
	skew = -2 * time.Hour
	n, err = s.DeleteSucceeded(ctx, s.hostNow().Add(-time.Hour), 10)
	require.NoError(t, err)
	assert.Equal(t, int64(2), n, "the two completed 90 minutes ago by the server's clock")
}
