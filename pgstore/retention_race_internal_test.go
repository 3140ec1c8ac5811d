package pgstore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/ops"
)

// TestRetentionRacesReplayToHandler races retention (DeleteSucceeded,
// which deletes succeeded jobs, then the events left without a job) with
// replays of the same events to another handler (ops.ReplayRequest
// ToHandler, which adds a job to an existing event), round after round:
// each round, 24 events whose only job (ledger's) has succeeded, one
// DeleteSucceeded in small batches and a Replay to audit of every event
// (half of them ordered, ToOrdered, in a key of their own), all at once.
// Each replay either succeeds, and then its event and the audit job it
// made are stored afterwards (retention deleted no event with a job,
// nor, by the cascade, the job), or fails with ops.ErrNotFound, and
// then the event is gone (retention deleted it first); no other error
// is allowed, and no job is ever left without its event. Every ledger
// job is deleted. Mutations: replayTo without lockEventSQL (a replay
// fails on the foreign key, or says it replayed an event that is then
// gone); deleteSucceededSQL without FOR UPDATE OF e (the cascade deletes
// a job a replay made).
func TestRetentionRacesReplayToHandler(t *testing.T) {
	t.Parallel()
	const rounds, events = 25, 24
	pool := pgtest.NewPool(t, 8)
	s := newMigratedStore(t, pool)
	ctx := t.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q := pgx.Identifier{s.Schema()}.Sanitize()
	var replayed, notFound int
	for r := range rounds {
		keys := make([]webhooks.InboxKey, events)
		for i := range keys {
			keys[i] = webhooks.InboxKey{Provider: "p", EventID: fmt.Sprintf("r%d-e%d", r, i)}
			res, err := s.Enqueue(ctx, webhooks.Envelope{
				Key: keys[i], ReceivedAt: now, Payload: []byte("{}"),
				Jobs:     []webhooks.Job{{Handler: "ledger"}},
				Ordering: webhooks.Ordering{Key: keys[i].EventID, Version: 1},
			})
			require.NoError(t, err)
			require.Equal(t, webhooks.EnqueueNew, res.Outcome)
		}
		leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: now, LeaseDuration: time.Minute, Max: events, Handler: "ledger"})
		require.NoError(t, err)
		require.Len(t, leases, events)
		for _, l := range leases {
			require.NoError(t, s.Settle(ctx, webhooks.Settlement{Lease: l, Outcome: webhooks.AttemptSucceeded, Now: now}))
		}

		start := make(chan struct{})
		var (
			wg      sync.WaitGroup
			errs    = make([]error, events)
			deleted int64
			delErr  error
		)
		for i, k := range keys {
			wg.Go(func() {
				<-start
				if d := rand.N(2000); d > 0 {
					time.Sleep(time.Duration(d) * time.Microsecond)
				}
				_, errs[i] = s.Replay(ctx, ops.ReplayRequest{Key: k, ToHandler: "audit", ToOrdered: i%2 == 1,
					Actor: "ops", Reason: "race", Now: now.Add(time.Second)})
			})
		}
		wg.Go(func() {
			<-start
			deleted, delErr = s.DeleteSucceeded(ctx, now.Add(time.Second), 1+rand.N(4))
		})
		close(start)
		wg.Wait()
		require.NoError(t, delErr)
		assert.Equal(t, int64(events), deleted, "round %d: every ledger job is deleted", r)

		for i, k := range keys {
			var event bool
			require.NoError(t, pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+q+`.inbox_events
				WHERE provider = $1 AND tenant = $2 AND event_id = $3)`, k.Provider, k.Tenant, k.EventID).Scan(&event))
			rows, _ := pool.Query(ctx, `SELECT handler || ':' || state FROM `+q+`.inbox_jobs
				WHERE provider = $1 AND tenant = $2 AND event_id = $3 ORDER BY handler`, k.Provider, k.Tenant, k.EventID)
			jobs, err := pgx.CollectRows(rows, pgx.RowTo[string])
			require.NoError(t, err)
			switch {
			case errs[i] == nil:
				replayed++
				assert.True(t, event, "%s: replayed to audit, yet its event is gone", k)
				assert.Equal(t, []string{"audit:pending"}, jobs, "%s: replayed to audit (ledger's job deleted)", k)
			case errors.Is(errs[i], ops.ErrNotFound):
				notFound++
				assert.False(t, event, "%s: the replay found no event, yet it is stored", k)
				assert.Empty(t, jobs, "%s: the replay found no event", k)
			default:
				t.Errorf("%s: Replay to audit: %v; want success or ops.ErrNotFound", k, errs[i])
			}
		}
		var orphans int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM `+q+`.inbox_jobs AS j WHERE NOT EXISTS (
			SELECT 1 FROM `+q+`.inbox_events AS e WHERE (e.provider, e.tenant, e.event_id) = (j.provider, j.tenant, j.event_id))`).Scan(&orphans))
		require.Zero(t, orphans, "round %d: jobs without their event", r)
		if t.Failed() {
			return
		}
	}
	t.Logf("of %d replays racing retention, %d replayed (the event kept), %d found no event (deleted first)", rounds*events, replayed, notFound)
}
