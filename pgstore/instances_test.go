package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/ops"
	"github.com/hookinbox/webhooks/pgstore"
)

// leaseRecord is one acquisition seen by a worker in TestMultipleInstances.
type leaseRecord struct {
	start, expires time.Time // the now passed to Acquire, and the lease expiry
	token          string
	completed      bool // its Complete succeeded
}

// TestMultipleInstances runs three "instances", each with its own pool and
// two workers running a plain lease loop, through a few thousand items.
// Some handler runs stall until their lease has expired and another worker
// has taken the item over. Every item must succeed exactly once, and no item
// may be handed to a worker while another worker's lease on it is still
// valid.
func TestMultipleInstances(t *testing.T) {
	t.Parallel()
	const (
		items     = 2000
		instances = 3
		workers   = 2 // per instance
		batch     = 8
		lease     = 400 * time.Millisecond
		// The first run of every stallEach-th item stalls until the item is
		// taken over. These items are due last, and there are fewer of them
		// than workers, so workers are free to take them over once their
		// leases expire (an expired lease is due after every pending item).
		stallEach = 500
	)
	schemaPool := pgtest.NewPool(t, 4)
	schema := pgtest.NewSchema(t, schemaPool)
	seed := newStoreOn(t, schemaPool, schema)

	// Enqueue in parallel; all due at once but the items that stall. The
	// keys are all queued first, so an enqueuer that fails and returns
	// leaves no one waiting to hand it more.
	var wg sync.WaitGroup
	keys := make(chan int, items)
	for i := range items {
		keys <- i
	}
	close(keys)
	for range 4 {
		wg.Go(func() {
			for i := range keys {
				due := baseTime
				if i%stallEach == 0 {
					due = due.Add(time.Second) // due after the others: stalls come at the end
				}
				res, err := seed.Enqueue(t.Context(), testEnvelope(testKey(fmt.Sprintf("evt-%05d", i)), fmt.Sprint(i), due))
				if !assert.NoError(t, err) || !assert.Equal(t, webhooks.EnqueueNew, res.Outcome) {
					return
				}
			}
		})
	}
	wg.Wait()
	require.False(t, t.Failed(), "every item must be enqueued")

	var (
		mu        sync.Mutex
		records   = map[webhooks.InboxKey][]leaseRecord{}
		completes = map[webhooks.InboxKey]int{}
		lost      atomic.Int64                            // settlements refused with ErrLeaseLost
		done      atomic.Int64                            // successful Completes
		takenOver = map[webhooks.InboxKey]chan struct{}{} // closed when a stalled item is taken over
	)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	worker := func(s *pgstore.Store, useBatch bool) error {
		for done.Load() < items {
			if ctx.Err() != nil {
				return fmt.Errorf("gave up with %d of %d items done: %w", done.Load(), items, ctx.Err())
			}
			now := time.Now()
			max := 1
			if useBatch {
				max = batch
			}
			leases, err := s.Acquire(ctx, acquireReq(now, lease, max))
			if err != nil {
				return err
			}
			if len(leases) == 0 {
				time.Sleep(5 * time.Millisecond) // idle poll
				continue
			}
			for _, l := range leases {
				if !l.ExpiresAt.Equal(now.Add(lease).Truncate(time.Microsecond)) {
					return fmt.Errorf("lease on %s expires at %s; want now+%v", l.Key(), l.ExpiresAt, lease)
				}
				rec := leaseRecord{start: now, expires: l.ExpiresAt, token: l.Token}
				mu.Lock()
				records[l.Key()] = append(records[l.Key()], rec)
				idx := len(records[l.Key()]) - 1
				var stalled chan struct{}
				if l.Attempt == 1 && idx == 0 && itemNumber(l.Key())%stallEach == 0 {
					stalled = make(chan struct{})
					takenOver[l.Key()] = stalled
				}
				if ch := takenOver[l.Key()]; idx == 1 && ch != nil {
					close(ch)
				}
				mu.Unlock()
				if stalled != nil {
					select {
					case <-stalled:
					case <-ctx.Done():
						return fmt.Errorf("stalled item %s was never taken over: %w", l.Key(), ctx.Err())
					}
				}
				err := s.Settle(ctx, succeeded(l, time.Now()))
				switch {
				case err == nil:
					mu.Lock()
					completes[l.Key()]++
					records[l.Key()][idx].completed = true
					mu.Unlock()
					done.Add(1)
				case errors.Is(err, webhooks.ErrLeaseLost):
					lost.Add(1)
				default:
					return err
				}
			}
		}
		return nil
	}

	// A worker that fails stops the others: they would otherwise wait for
	// items it left leased, or for a takeover it was to make, until ctx
	// times out.
	errs := make(chan error, instances*workers)
	for i := range instances {
		s := newStoreOn(t, pgtest.NewPool(t, workers+1), schema)
		for w := range workers {
			wg.Go(func() {
				err := worker(s, (i+w)%2 == 0)
				if err != nil {
					cancel()
				}
				errs <- err
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err) // each, the one that stopped the others among them
	}
	require.False(t, t.Failed())

	// Every item succeeded exactly once.
	require.Len(t, completes, items)
	for k, n := range completes {
		require.Equal(t, 1, n, "item %s completed %d times", k, n)
	}
	var notSucceeded int
	require.NoError(t, schemaPool.QueryRow(t.Context(),
		`SELECT count(*) FROM `+quote(schema)+`.inbox_jobs WHERE state <> 'succeeded'`).Scan(&notSucceeded))
	require.Zero(t, notSucceeded)

	// No item was handed out while another lease on it was valid, each
	// acquisition issued a new token, and only the last holder's Complete
	// went through: a holder whose lease was taken over was fenced out, and
	// nobody leased an item after it succeeded.
	var retaken int
	for k, recs := range records {
		require.NotEmpty(t, recs, "item %s", k)
		slices.SortFunc(recs, func(a, b leaseRecord) int { return a.start.Compare(b.start) })
		seen := map[string]bool{}
		for i, r := range recs {
			require.False(t, seen[r.token], "item %s: token %s issued twice", k, r.token)
			seen[r.token] = true
			if i > 0 {
				prev := recs[i-1]
				require.False(t, r.start.Before(prev.expires),
					"item %s leased at %s while the lease from %s was valid until %s",
					k, r.start.Format(time.StampMicro), prev.start.Format(time.StampMicro), prev.expires.Format(time.StampMicro))
				require.False(t, prev.completed, "item %s: completed under token %s, then leased again", k, prev.token)
				retaken++
			}
		}
		require.True(t, recs[len(recs)-1].completed, "item %s: the last holder did not complete it", k)
	}
	t.Logf("%d items, %d re-acquisitions after expiry, %d settlements refused with ErrLeaseLost", items, retaken, lost.Load())
	assert.GreaterOrEqual(t, retaken, items/stallEach, "every stalled item was taken over")
	assert.GreaterOrEqual(t, lost.Load(), int64(items/stallEach), "every stalled worker was fenced out")
}

func itemNumber(k webhooks.InboxKey) int {
	var n int
	_, _ = fmt.Sscanf(k.EventID, "evt-%d", &n)
	return n
}

// TestLateWorkerIsFencedOut: a worker whose lease expired and was taken by
// another instance can neither complete, fail, abandon nor extend it, and
// the item stays exactly as the new holder has it.
func TestLateWorkerIsFencedOut(t *testing.T) {
	t.Parallel()
	poolA := pgtest.NewPool(t, 2)
	schema := pgtest.NewSchema(t, poolA)
	a := newStoreOn(t, poolA, schema)
	b := newStoreOn(t, pgtest.NewPool(t, 2), schema)
	ctx := t.Context()
	k := testKey("late")
	mustEnqueueNew(t, a, testEnvelope(k, "{}", baseTime))

	late := acquireOne(t, a, baseTime, time.Minute)
	require.NotNil(t, late)
	require.False(t, late.Reclaimed)

	require.Nil(t, acquireOne(t, b, baseTime.Add(59*time.Second), time.Minute), "the lease is valid until baseTime+1m")

	current := acquireOne(t, b, baseTime.Add(time.Minute), time.Minute)
	require.NotNil(t, current, "the expired lease is taken over")
	require.NotEqual(t, late.Token, current.Token)
	require.Equal(t, 2, current.Attempt)
	require.True(t, current.Reclaimed)

	before, err := b.Get(ctx, k)
	require.NoError(t, err)
	later := baseTime.Add(90 * time.Second)
	assert.ErrorIs(t, a.Settle(ctx, succeeded(late, later)), webhooks.ErrLeaseLost)
	assert.ErrorIs(t, a.Settle(ctx, retried(late, webhooks.Failure{Class: webhooks.FailureError, Message: "late", Transient: true},
		later.Add(time.Minute), later)), webhooks.ErrLeaseLost)
	assert.ErrorIs(t, a.Settle(ctx, deadLettered(late, webhooks.Failure{Class: webhooks.FailurePermanent, Message: "late"}, later)), webhooks.ErrLeaseLost)
	assert.ErrorIs(t, a.Settle(ctx, abandoned(late, later)), webhooks.ErrLeaseLost)
	lateExpiry := late.ExpiresAt
	assert.ErrorIs(t, a.ExtendLease(ctx, webhooks.ExtendRequest{Lease: late, Now: later, Duration: time.Hour}), webhooks.ErrLeaseLost)
	assert.True(t, late.ExpiresAt.Equal(lateExpiry), "a refused extension leaves the lease alone")
	after, err := b.Get(ctx, k)
	require.NoError(t, err)
	assert.Equal(t, before.Item, after.Item, "the late worker changed the item")
	// Its attempt, recorded as crashed by the takeover, is recorded as
	// lease lost when it first came back.
	require.Len(t, before.History, 1)
	assert.Equal(t, ops.OutcomeCrashed, before.History[0].Outcome)
	require.Len(t, after.History, 1)
	assert.Equal(t, ops.OutcomeLeaseLost, after.History[0].Outcome)
	assert.True(t, after.History[0].FinishedAt.Equal(later), "finished when its worker came back")

	// A token that was never issued is lost too.
	forged := *current
	forged.Token = "not-a-uuid"
	assert.ErrorIs(t, b.Settle(ctx, succeeded(&forged, later)), webhooks.ErrLeaseLost)

	require.NoError(t, b.Settle(ctx, succeeded(current, later)))
	err = a.Settle(ctx, succeeded(current, later))
	assert.ErrorIs(t, err, webhooks.ErrAlreadySettled, "completing twice, from another instance")
	assert.NotErrorIs(t, err, webhooks.ErrLeaseLost)
	assert.ErrorIs(t, a.Settle(ctx, succeeded(late, later)), webhooks.ErrLeaseLost, "the late worker's token stays stale")
}
