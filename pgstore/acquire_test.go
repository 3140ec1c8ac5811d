package pgstore_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/pgstore"
)

// lockedBuffer is an io.Writer for a test logger.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestAcquireGivesBackUnreadableRows: rows changed outside pgstore so that
// they cannot be read (a timestamp of infinity, headers of the wrong JSON
// shape) must not keep the rest of the batch from being returned, and must
// not stay leased under tokens nobody holds. They are logged and given back,
// due again when their leases would have expired, without spending an
// attempt.
func TestAcquireGivesBackUnreadableRows(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 3)
	var logs lockedBuffer
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool), pgstore.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	ctx := t.Context()
	table := quote(s.Schema()) + ".inbox_events"
	for i := range 4 {
		mustEnqueueNew(t, s, testEnvelope(testKey(fmt.Sprintf("e%d", i)), "{}", baseTime.Add(time.Duration(i)*time.Microsecond)))
	}
	_, err := pool.Exec(ctx, `UPDATE `+table+` SET occurred_at = 'infinity' WHERE event_id = 'e0'`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE `+table+` SET headers = '{"X-A": "not a list"}' WHERE event_id = 'e2'`)
	require.NoError(t, err)

	now := baseTime.Add(time.Second)
	leases, err := s.Acquire(ctx, acquireReq(now, time.Minute, 10))
	require.NoError(t, err, "the readable rows are returned")
	require.Len(t, leases, 2)
	assert.Equal(t, "e1", leases[0].Key().EventID)
	assert.Equal(t, "e3", leases[1].Key().EventID)
	for _, id := range []string{"e0", "e2"} {
		assert.Contains(t, logs.String(), "acme/t1/"+id, "the unreadable row %s is logged", id)
	}
	for _, l := range leases {
		require.NoError(t, s.Settle(ctx, succeeded(l, now)))
	}

	type rowState struct {
		state    string
		attempts int
		due      time.Time
		token    *string
	}
	read := func(id string) rowState {
		t.Helper()
		var r rowState
		require.NoError(t, pool.QueryRow(ctx, `SELECT state, attempts, next_attempt_at, lease_token::text FROM `+quote(s.Schema())+`.inbox_jobs
			WHERE event_id = $1`, id).Scan(&r.state, &r.attempts, &r.due, &r.token))
		return r
	}
	for _, id := range []string{"e0", "e2"} {
		r := read(id)
		assert.Equal(t, "pending", r.state, id)
		assert.Zero(t, r.attempts, "%s: no attempt was spent", id)
		assert.Nil(t, r.token, "%s: nobody holds a lease", id)
		assert.True(t, r.due.Equal(now.Add(time.Minute)), "%s: due when the lease would have expired, got %v", id, r.due)
	}

	// Not before then.
	assert.Nil(t, acquireOne(t, s, now.Add(time.Minute-time.Microsecond), time.Minute))

	// An acquisition meeting only an unreadable row says so, and gives it
	// back.
	later := now.Add(time.Minute)
	_, err = s.Acquire(ctx, acquireReq(later, time.Minute, 1))
	require.ErrorContains(t, err, "could not be read")
	_, err = s.Acquire(ctx, acquireReq(later, time.Minute, 1))
	require.ErrorContains(t, err, "could not be read")
	for _, id := range []string{"e0", "e2"} {
		r := read(id)
		assert.Equal(t, "pending", r.state, id)
		assert.Zero(t, r.attempts, id)
		assert.True(t, r.due.Equal(later.Add(time.Minute)), "%s: due %v", id, r.due)
	}

	// Repaired, the rows are taken as first attempts.
	_, err = pool.Exec(ctx, `UPDATE `+table+` SET occurred_at = NULL, headers = NULL WHERE event_id IN ('e0', 'e2')`)
	require.NoError(t, err)
	leases, err = s.Acquire(ctx, acquireReq(later.Add(time.Minute), time.Minute, 10))
	require.NoError(t, err)
	require.Len(t, leases, 2)
	for _, l := range leases {
		assert.Equal(t, 1, l.Attempt, l.Key().EventID)
		assert.False(t, l.Reclaimed, "%s was given back pending, not left to expire", l.Key().EventID)
		assert.Equal(t, webhooks.StateLeased, l.Item.State)
	}
}

// TestAcquireOrderIsRankWhateverThePlan: of items due at the same time,
// an acquisition starts the first in key order and returns the leases in
// that order, the started first, whatever join the planner picks for the
// statement's UPDATE (whose RETURNING follows the plan): forced here to
// each of nested loop, hash and merge join.
func TestAcquireOrderIsRankWhateverThePlan(t *testing.T) {
	t.Parallel()
	for _, off := range [][]string{nil, {"enable_nestloop"}, {"enable_nestloop", "enable_mergejoin"}, {"enable_nestloop", "enable_hashjoin"}} {
		t.Run(fmt.Sprint(off), func(t *testing.T) {
			t.Parallel()
			pool := pgtest.NewPoolWith(t, 2, func(c *pgxpool.Config) {
				for _, p := range off {
					c.ConnConfig.RuntimeParams[p] = "off"
				}
			})
			s := newStoreOn(t, pool, pgtest.NewSchema(t, pool))
			const n = 8
			var want []string
			for i := range n {
				mustEnqueueNew(t, s, testEnvelope(testKey(fmt.Sprintf("evt_%d", n-i)), "{}", baseTime)) // against key order
				want = append(want, fmt.Sprintf("evt_%d held %t", i+1, i >= 3))
			}
			leases, err := s.Acquire(t.Context(), webhooks.AcquireRequest{Now: baseTime, LeaseDuration: time.Minute, Max: n, Hold: true, Start: 3})
			require.NoError(t, err)
			var got []string
			for _, l := range leases {
				got = append(got, fmt.Sprintf("%s held %t", l.Key().EventID, l.Held))
			}
			assert.Equal(t, want, got, "ties in due time are ranked by key; the first Start are started and come first")
		})
	}
}
