package pgstore_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/pgstore"
)

// TestDemotionRacesAcquisition races, round after round, the enqueue of
// an older version of a key (which demotes the key's head if it has not
// started) against acquisitions of that head. Each round stores a head
// of version 2r+2 in each of 8 keys, then enqueues each key's older
// event (2r+1) while two acquirers lease, abandon one lease in ten (a
// head that was leased must keep its key) and succeed the rest. Half the
// older events go through the group commit statement, half through a
// statement of their own (WithEnqueueBatch(1)). Checks: no statement
// fails (a second head of a key would violate inbox_jobs_head_idx); two
// leases of one key are never held at once; of each key's pair, the one
// that runs second is told the first one's version (Lease.Applied), so
// the demoted head never ran before the job that demoted it; every job
// succeeds exactly once and nothing is left waiting. Mutation: decide
// the demotion on the statement's snapshot (a subquery) instead of the
// head's latest version: an enqueue demotes a head an acquisition has
// leased meanwhile, and fails.
func TestDemotionRacesAcquisition(t *testing.T) {
	t.Parallel()
	const rounds, keys = 40, 8
	pool := pgtest.NewPool(t, 8)
	schema := pgtest.NewSchema(t, pool)
	group := newStoreOn(t, pool, schema)
	single := newStoreOn(t, pool, schema, pgstore.WithEnqueueBatch(1))
	ctx := t.Context()
	now := baseTime.Add(time.Hour) // every job is due; no lease expires during the test

	var (
		running  [keys]atomic.Int32
		overlaps atomic.Int32
		mu       sync.Mutex
		ran      = map[string]int{}
		firsts   [2]int // rounds in which the older job ran first (demoted), and the head
	)
	type run struct {
		id      string
		version int64
		applied int64
	}
	for r := range rounds {
		for k := range keys {
			mustEnqueueNew(t, group, orderedEnvelope(fmt.Sprintf("r%d-k%d-head", r, k), fmt.Sprint("K", k), int64(2*r+2), baseTime))
		}
		var (
			wg    sync.WaitGroup
			left  atomic.Int32
			runs  [keys][]run
			errCh = make(chan error, 2*keys+2)
			fail  atomic.Bool // set with an error sent: the round stops
		)
		failed := func(err error) {
			fail.Store(true)
			errCh <- err
		}
		left.Store(2 * keys)
		for k := range keys {
			wg.Go(func() {
				s := group
				if k%2 == 1 {
					s = single
				}
				if d := rand.N(300); d > 0 {
					time.Sleep(time.Duration(d) * time.Microsecond)
				}
				res, err := s.Enqueue(ctx, orderedEnvelope(fmt.Sprintf("r%d-k%d-older", r, k), fmt.Sprint("K", k), int64(2*r+1), baseTime))
				if err == nil && res.Outcome != webhooks.EnqueueNew {
					err = fmt.Errorf("enqueue of the older event of K%d: %v", k, res.Outcome)
				}
				if err != nil {
					failed(err)
				}
			})
		}
		deadline := time.Now().Add(30 * time.Second)
		for range 2 {
			wg.Go(func() {
				for left.Load() > 0 && !fail.Load() {
					if time.Now().After(deadline) {
						failed(fmt.Errorf("round %d: %d jobs never ran", r, left.Load()))
						return
					}
					leases, err := group.Acquire(ctx, webhooks.AcquireRequest{Now: now, LeaseDuration: time.Hour, Max: 1 + rand.N(4), Handler: "ledger"})
					if err != nil {
						failed(err)
						return
					}
					for _, l := range leases {
						var rr, k int
						if _, err := fmt.Sscanf(l.Key().EventID, "r%d-k%d-", &rr, &k); err != nil || rr != r {
							failed(fmt.Errorf("leased %s in round %d", l.Key().EventID, r))
							return
						}
						if !running[k].CompareAndSwap(0, 1) {
							overlaps.Add(1)
						}
						abandon := rand.N(10) == 0
						if !abandon {
							mu.Lock()
							runs[k] = append(runs[k], run{l.Key().EventID, l.Item.Ordering.Version, l.Applied})
							ran[l.Key().EventID]++
							mu.Unlock()
						}
						running[k].Store(0)
						st := succeeded(l, now)
						if abandon {
							st = abandoned(l, now)
						}
						if err := group.Settle(ctx, st); err != nil {
							failed(fmt.Errorf("settle %s: %w", l.Key().EventID, err))
							return
						}
						if !abandon {
							left.Add(-1)
						}
					}
				}
			})
		}
		wg.Wait()
		close(errCh)
		for err := range errCh {
			require.NoError(t, err)
		}
		for k := range keys {
			got := runs[k]
			require.Len(t, got, 2, "K%d in round %d: %v", k, r, got)
			first, second := got[0], got[1]
			if first.version == int64(2*r+1) {
				firsts[0]++
			} else {
				firsts[1]++
			}
			assert.Equal(t, first.version, second.applied, "K%d in round %d: the second job (%s) is told the first's version: %v", k, r, second.id, got)
		}
	}
	assert.Zero(t, overlaps.Load(), "two leases of one key were held at once")
	assert.Len(t, ran, 2*rounds*keys)
	for id, n := range ran {
		assert.Equal(t, 1, n, "%s succeeded %d times", id, n)
	}
	t.Logf("older job ran first (it demoted the head) in %d key rounds, the head first in %d", firsts[0], firsts[1])
	assert.Positive(t, firsts[0], "no older job ever demoted its head: the race was not run")

	var notDone, depth int64
	q := pgx.Identifier{schema}.Sanitize()
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM `+q+`.inbox_jobs WHERE state <> 'succeeded'`).Scan(&notDone))
	require.NoError(t, pool.QueryRow(ctx, `SELECT coalesce(sum(depth), 0) FROM `+q+`.inbox_keys`).Scan(&depth))
	assert.Zero(t, notDone, "every job succeeded")
	assert.Zero(t, depth, "no key has an unfinished job")
}
