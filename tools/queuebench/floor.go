package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookinbox/webhooks/tools/internal/loadscenario"
)

// The hand-written SQL floors: what a program that only moves rows, with
// no library around it, gets from the same database.

// floorSchema holds the floors' tables.
const floorSchema = "floor_load"

// floorDB is a pool with the floors' schema made anew.
func floorDB(ctx context.Context, dsn string, conns int) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = int32(conns)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	_, err = pool.Exec(ctx, `DROP SCHEMA IF EXISTS `+floorSchema+` CASCADE; CREATE SCHEMA `+floorSchema)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// insertFloor inserts rows of new keys with single-row INSERT … ON
// CONFLICT DO NOTHING statements, each its own commit, from goroutines
// goroutines for d after a second's warm-up, into a table keyed like the
// inbox, and returns the rows per second.
func insertFloor(ctx context.Context, dsn string, goroutines int, d time.Duration, bodyBytes int) (loadscenario.Result, error) {
	pool, err := floorDB(ctx, dsn, goroutines)
	if err != nil {
		return loadscenario.Result{}, err
	}
	defer pool.Close()
	_, err = pool.Exec(ctx, `CREATE TABLE `+floorSchema+`.events (
		provider text NOT NULL, tenant text NOT NULL, event_id text NOT NULL,
		payload bytea NOT NULL, payload_sha256 bytea NOT NULL, received_at timestamptz NOT NULL,
		PRIMARY KEY (provider, tenant, event_id))`)
	if err != nil {
		return loadscenario.Result{}, err
	}
	var seq atomic.Int64
	res, err := closedLoop(ctx, goroutines, time.Second, d, func(ctx context.Context) error {
		id := fmt.Sprintf("evt_%09d", seq.Add(1))
		body := loadscenario.StripeBody(id, bodyBytes, time.Now())
		sum := sha256.Sum256(body)
		_, err := pool.Exec(ctx, `INSERT INTO `+floorSchema+`.events VALUES ('stripe', '', $1, $2, $3, now())
			ON CONFLICT DO NOTHING`, id, body, sum[:])
		return err
	})
	res.Scenario, res.Store = "insert-floor", "hand SQL"
	return res, err
}

// closedLoop calls op from n goroutines, each one call at a time, and
// measures the calls that start after warmup and end within d of it.
func closedLoop(ctx context.Context, n int, warmup, d time.Duration, op func(context.Context) error) (loadscenario.Result, error) {
	begin := time.Now()
	from, end := begin.Add(warmup), begin.Add(warmup+d)
	var (
		ok, failed atomic.Int64
		mu         sync.Mutex
		lat        []time.Duration
		firstErr   error
		wg         sync.WaitGroup
	)
	for range n {
		wg.Go(func() {
			var mine []time.Duration
			for ctx.Err() == nil {
				start := time.Now()
				if !start.Before(end) {
					break
				}
				err := op(ctx)
				took := time.Since(start)
				if start.Before(from) || start.Add(took).After(end) {
					continue
				}
				if err != nil {
					failed.Add(1)
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				ok.Add(1)
				mine = append(mine, took)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	res := loadscenario.Result{Elapsed: d, Acked: ok.Load(), Errors: failed.Load(), Latency: loadscenario.LatencyOf(lat)}
	res.AckedPerSec = float64(res.Acked) / d.Seconds()
	if res.Acked == 0 && firstErr != nil {
		return res, firstErr
	}
	return res, ctx.Err()
}

// skipLockedFloor drains items pending rows with goroutines goroutines,
// each locking the 10 oldest available rows with FOR UPDATE SKIP LOCKED
// and marking them running in one statement, then marking the 10
// completed in one more: two commits per 10 rows.
func skipLockedFloor(ctx context.Context, dsn string, goroutines, items, bodyBytes int) (loadscenario.Result, error) {
	pool, err := floorDB(ctx, dsn, goroutines+2)
	if err != nil {
		return loadscenario.Result{}, err
	}
	defer pool.Close()
	body := loadscenario.StripeBody("evt_prefilled", bodyBytes, time.Now())
	_, err = pool.Exec(ctx, `CREATE TABLE `+floorSchema+`.jobs (
		id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		state text NOT NULL, payload bytea NOT NULL, attempts int NOT NULL DEFAULT 0,
		locked_at timestamptz, finished_at timestamptz);
		CREATE INDEX jobs_available_idx ON `+floorSchema+`.jobs (id) WHERE state = 'available'`)
	if err != nil {
		return loadscenario.Result{}, err
	}
	if _, err := pool.Exec(ctx, `INSERT INTO `+floorSchema+`.jobs (state, payload)
		SELECT 'available', $1 FROM generate_series(1, $2::int)`, body, items); err != nil {
		return loadscenario.Result{}, err
	}
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE `+floorSchema+`.jobs`); err != nil {
		return loadscenario.Result{}, err
	}
	before, err := loadscenario.Counters(ctx, pool)
	if err != nil {
		return loadscenario.Result{}, err
	}
	var done atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for range goroutines {
		wg.Go(func() {
			ids := make([]int64, 0, 10)
			for done.Load() < int64(items) {
				rows, err := pool.Query(ctx, `UPDATE `+floorSchema+`.jobs SET state = 'running', attempts = attempts + 1, locked_at = now()
					WHERE id IN (SELECT id FROM `+floorSchema+`.jobs WHERE state = 'available' ORDER BY id LIMIT 10 FOR UPDATE SKIP LOCKED)
					RETURNING id, payload`)
				if err != nil {
					errs <- err
					return
				}
				ids = ids[:0]
				var (
					id      int64
					payload []byte
				)
				_, err = pgx.ForEachRow(rows, []any{&id, &payload}, func() error {
					ids = append(ids, id)
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
				if len(ids) == 0 {
					if done.Load() >= int64(items) {
						return
					}
					continue
				}
				if _, err := pool.Exec(ctx, `UPDATE `+floorSchema+`.jobs SET state = 'completed', finished_at = now()
					WHERE id = ANY($1)`, ids); err != nil {
					errs <- err
					return
				}
				done.Add(int64(len(ids)))
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return loadscenario.Result{}, err
	}
	res := loadscenario.Result{Scenario: "skip-locked-floor", Store: "hand SQL", Elapsed: time.Since(start), Processed: done.Load()}
	res.ProcessedPerSec = float64(res.Processed) / res.Elapsed.Seconds()
	return res, perItem(ctx, dsn, pool, before, &res)
}

// perItem closes pool and sets res's commits and WAL per processed item
// since before (see loadscenario.CountersAtExit).
func perItem(ctx context.Context, dsn string, pool *pgxpool.Pool, before loadscenario.DBCounters, res *loadscenario.Result) error {
	pool.Close()
	after, err := loadscenario.CountersAtExit(ctx, dsn)
	if err != nil {
		return err
	}
	res.PerItem(ctx, dsn, before, after)
	return nil
}
