package pgstore_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/ops"
	"github.com/hookinbox/webhooks/pgstore"
)

func TestDeleteSucceeded(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()

	// 23 items succeed one minute apart; one more stays pending, one is
	// dead, one is leased. All were received long ago.
	const completed = 23
	for i := range completed + 3 {
		mustEnqueueNew(t, s, testEnvelope(testKey(fmt.Sprintf("e%02d", i)), fmt.Sprint(i), baseTime.Add(-time.Hour)))
	}
	for i := range completed {
		now := baseTime.Add(time.Duration(i) * time.Minute)
		l := acquireOne(t, s, now, time.Minute)
		require.NotNil(t, l)
		require.NoError(t, s.Settle(ctx, succeeded(l, now)))
	}
	l := acquireOne(t, s, baseTime, time.Hour)
	require.NotNil(t, l)
	require.NoError(t, s.Settle(ctx, deadLettered(l, webhooks.Failure{Class: webhooks.FailurePermanent, Message: "x"}, baseTime)))
	require.NotNil(t, acquireOne(t, s, baseTime, time.Hour))

	_, err := s.DeleteSucceeded(ctx, baseTime, 0)
	require.ErrorContains(t, err, "batch size")

	// Items completed before baseTime+17m: 17 of them, in batches of 5.
	n, err := s.DeleteSucceeded(ctx, baseTime.Add(17*time.Minute), 5)
	require.NoError(t, err)
	assert.Equal(t, int64(17), n)
	n, err = s.DeleteSucceeded(ctx, baseTime.Add(17*time.Minute), 5)
	require.NoError(t, err)
	assert.Zero(t, n, "nothing left to delete")

	states := map[webhooks.State]int{}
	for i := range completed + 3 {
		it, err := s.Get(ctx, testKey(fmt.Sprintf("e%02d", i)))
		if i < 17 {
			assert.ErrorIs(t, err, ops.ErrNotFound, "e%02d", i)
			continue
		}
		require.NoError(t, err)
		states[it.State]++
	}
	assert.Equal(t, map[webhooks.State]int{
		webhooks.StateSucceeded: completed - 17,
		webhooks.StateDead:      1,
		webhooks.StateLeased:    1,
		webhooks.StatePending:   1,
	}, states)

	// Batches of one, until done.
	n, err = s.DeleteSucceeded(ctx, baseTime.Add(time.Hour), 1)
	require.NoError(t, err)
	assert.Equal(t, int64(completed-17), n)

	// A deleted item's ID is forgotten: a redelivery is new again.
	mustEnqueueNew(t, s, testEnvelope(testKey("e00"), "0", baseTime))
}

func TestDeleteExpiredReplayKeys(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	digest := sha256.Sum256([]byte("body"))
	key := func(i int) webhooks.ReplayRegistration {
		return webhooks.ReplayRegistration{Provider: "acme", Key: fmt.Sprintf("r%02d", i)}
	}
	// Key i expires at baseTime + i minutes.
	for i := range 30 {
		out, err := s.Register(ctx, replayReg(key(i), digest, baseTime.Add(-time.Hour), baseTime.Add(time.Duration(i)*time.Minute)))
		require.NoError(t, err)
		require.Equal(t, webhooks.ReplayNew, out)
	}
	_, err := s.DeleteExpiredReplayKeys(ctx, baseTime, -1)
	require.ErrorContains(t, err, "batch size")

	// Expired at baseTime+12m: keys 0..12.
	n, err := s.DeleteExpiredReplayKeys(ctx, baseTime.Add(12*time.Minute), 4)
	require.NoError(t, err)
	assert.Equal(t, int64(13), n)
	n, err = s.DeleteExpiredReplayKeys(ctx, baseTime.Add(12*time.Minute), 4)
	require.NoError(t, err)
	assert.Zero(t, n)

	var rows int
	require.NoError(t, pgtest.NewPool(t, 1).QueryRow(ctx, `SELECT count(*) FROM `+quote(s.Schema())+`.replay_keys`).Scan(&rows))
	assert.Equal(t, 17, rows)

	// An unexpired key is still seen; a deleted one registers anew.
	out, err := s.Register(ctx, replayReg(key(20), digest, baseTime.Add(12*time.Minute), baseTime.Add(time.Hour)))
	require.NoError(t, err)
	assert.Equal(t, webhooks.ReplaySeen, out)
	out, err = s.Register(ctx, replayReg(key(3), digest, baseTime.Add(12*time.Minute), baseTime.Add(time.Hour)))
	require.NoError(t, err)
	assert.Equal(t, webhooks.ReplayNew, out)
}

// TestRetentionKeepsGoingPastRowsInUse: while DeleteSucceeded and
// DeleteExpiredReplayKeys run, other sessions keep updating (and briefly
// locking) the very rows next in line for deletion. A batch that comes back
// short because of them must not end the run: it ends only when a statement
// finds nothing it can delete, that is when every row still to delete is
// locked at that moment by one of the updaters (three rows each at most).
func TestRetentionKeepsGoingPastRowsInUse(t *testing.T) {
	t.Parallel()
	const (
		rows     = 1500
		updaters = 2
		perStmt  = 3 // rows each updater statement locks
	)
	for _, c := range []struct {
		name, table, key, eligible, order, set string
		fill                                   func(schema string) string
		run                                    func(s *pgstore.Store) (int64, error)
	}{
		{
			name: "succeeded items", table: "inbox_jobs", key: "provider, tenant, event_id, handler",
			eligible: "state = 'succeeded' AND completed_at < $1", order: "completed_at",
			set: "updated_at = updated_at",
			fill: func(schema string) string {
				return pgtest.InsertItemsSQL(schema, `provider, tenant, event_id, event_type, payload,
				payload_sha256, key_id, state, attempts, last_seen_at, received_at, updated_at, completed_at`,
					`SELECT 'acme', 't1', 'evt-' || g, 'x', '\x7b7d'::bytea, sha256('\x7b7d'), 'k1',
					'succeeded', 1, $1::timestamptz, $1::timestamptz, $1::timestamptz, $1::timestamptz + g * interval '1 millisecond'
				FROM generate_series(1, $2::int) AS g`)
			},
			run: func(s *pgstore.Store) (int64, error) {
				return s.DeleteSucceeded(context.Background(), baseTime.Add(time.Hour), 7)
			},
		},
		{
			name: "expired replay keys", table: "replay_keys", key: "provider, tenant, replay_key",
			eligible: "expires_at <= $1", order: "expires_at",
			set: "payload_sha256 = payload_sha256",
			fill: func(schema string) string {
				return `INSERT INTO ` + quote(schema) + `.replay_keys (provider, tenant, replay_key, payload_sha256,
				registration_id, registered_at, expires_at)
				SELECT 'acme', 't1', 'r-' || g, sha256('\x7b7d'), gen_random_uuid(), $1::timestamptz,
					$1::timestamptz + g * interval '1 millisecond'
				FROM generate_series(1, $2::int) AS g`
			},
			run: func(s *pgstore.Store) (int64, error) {
				return s.DeleteExpiredReplayKeys(context.Background(), baseTime.Add(time.Hour), 7)
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			pool := pgtest.NewPool(t, updaters+2)
			s := newStoreOn(t, pool, pgtest.NewSchema(t, pool))
			table := quote(s.Schema()) + "." + c.table
			_, err := pool.Exec(t.Context(), c.fill(s.Schema()), baseTime, rows)
			require.NoError(t, err)

			// Each updater rewrites the oldest eligible rows, over and over:
			// the rows each deletion batch looks at first. The subquery
			// locks them in order, so two updaters never wait for each
			// other in a cycle (a deadlock the server would break by
			// failing one of them).
			update := fmt.Sprintf(`UPDATE %s SET %s
				WHERE (%s) IN (SELECT %s FROM %s WHERE %s ORDER BY %s LIMIT %d FOR UPDATE)`,
				table, c.set, c.key, c.key, table, c.eligible, c.order, perStmt)
			stop := make(chan struct{})
			var (
				wg      sync.WaitGroup
				updates atomic.Int64
			)
			for range updaters {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						if _, err := pool.Exec(context.Background(), update, baseTime.Add(time.Hour)); err != nil {
							t.Errorf("updating: %v", err)
							return
						}
						updates.Add(1)
					}
				})
			}
			for updates.Load() < 2*updaters && !t.Failed() {
				time.Sleep(time.Millisecond) // let the updaters get going
			}
			n, err := c.run(s)
			close(stop)
			wg.Wait()
			require.NoError(t, err)

			var left int64
			require.NoError(t, pool.QueryRow(t.Context(),
				fmt.Sprintf(`SELECT count(*) FROM %s WHERE %s`, table, c.eligible), baseTime.Add(time.Hour)).Scan(&left))
			t.Logf("deleted %d, left %d, %d updates meanwhile", n, left, updates.Load())
			assert.Equal(t, int64(rows), n+left)
			assert.LessOrEqual(t, left, int64(updaters*perStmt), "the run ended while rows it could delete were left")
		})
	}
}

// deleteTracer records the rows each DELETE statement removed.
type deleteTracer struct {
	mu   sync.Mutex
	rows []int64
}

func (d *deleteTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

func (d *deleteTracer) TraceQueryEnd(_ context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	if data.Err == nil && data.CommandTag.Delete() {
		d.mu.Lock()
		d.rows = append(d.rows, data.CommandTag.RowsAffected())
		d.mu.Unlock()
	}
}

func (d *deleteTracer) take() []int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := d.rows
	d.rows = nil
	return r
}

// TestRetentionDeletesInBoundedBatches watches the DELETE statements
// themselves: none may remove more rows than the batch size, so no statement
// holds locks on more than a batch.
func TestRetentionDeletesInBoundedBatches(t *testing.T) {
	t.Parallel()
	cfg, err := pgxpool.ParseConfig(pgtest.DSN(t))
	require.NoError(t, err)
	cfg.MaxConns = 2
	tracer := &deleteTracer{}
	cfg.ConnConfig.Tracer = tracer
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool))
	ctx := t.Context()

	const items, batch = 23, 5
	for i := range items {
		mustEnqueueNew(t, s, testEnvelope(testKey(fmt.Sprintf("b%02d", i)), fmt.Sprint(i), baseTime))
		_, err := s.Register(ctx, replayReg(webhooks.ReplayRegistration{Provider: "acme", Key: fmt.Sprint("k", i)}, sha256.Sum256([]byte("p")), baseTime, baseTime.Add(time.Minute)))
		require.NoError(t, err)
	}
	leases, err := s.Acquire(ctx, acquireReq(baseTime, time.Minute, items))
	require.NoError(t, err)
	require.Len(t, leases, items)
	for _, l := range leases {
		require.NoError(t, s.Settle(ctx, succeeded(l, baseTime)))
	}
	tracer.take()

	check := func(what string, deleted int64, err error) {
		t.Helper()
		require.NoError(t, err)
		assert.Equal(t, int64(items), deleted, what)
		rows := tracer.take()
		var sum int64
		for _, r := range rows {
			assert.LessOrEqual(t, r, int64(batch), "%s: one DELETE removed %d rows; the batch size is %d", what, r, batch)
			sum += r
		}
		assert.Equal(t, int64(items), sum, "%s: the DELETEs seen add up to what was reported", what)
		assert.GreaterOrEqual(t, len(rows), (items+batch-1)/batch, "%s: %d rows in batches of %d need several statements", what, items, batch)
	}
	n, err := s.DeleteSucceeded(ctx, baseTime.Add(time.Second), batch)
	check("DeleteSucceeded", n, err)
	n, err = s.DeleteExpiredReplayKeys(ctx, baseTime.Add(time.Hour), batch)
	check("DeleteExpiredReplayKeys", n, err)
}
