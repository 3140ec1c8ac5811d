package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/hookinbox/webhooks/tools/internal/loadscenario"
)

// River, as its documentation sets it up, with a no-op worker, in a
// schema of its own in the same database.

const riverSchema = "river_load"

// webhookArgs is a River job carrying a webhook's body.
type webhookArgs struct {
	Body json.RawMessage `json:"body"`
}

func (webhookArgs) Kind() string { return "webhook" }

// noopWorker counts the jobs it works.
type noopWorker struct {
	river.WorkerDefaults[webhookArgs]
	worked *atomic.Int64
	done   chan struct{}
	target int64
}

func (w *noopWorker) Work(context.Context, *river.Job[webhookArgs]) error {
	if w.worked.Add(1) == w.target && w.done != nil {
		close(w.done)
	}
	return nil
}

// riverSystem is a pool and a River schema made anew.
type riverSystem struct {
	pool   *pgxpool.Pool
	worker *noopWorker
	client *river.Client[pgx.Tx]
}

// newRiver migrates River's schema anew and returns a client with
// workers workers (none: an insert-only client).
func newRiver(ctx context.Context, dsn string, conns, workers int, target int64) (*riverSystem, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = int32(conns)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	rs := &riverSystem{pool: pool, worker: &noopWorker{worked: new(atomic.Int64), target: target}}
	if target > 0 {
		rs.worker.done = make(chan struct{})
	}
	fail := func(err error) (*riverSystem, error) {
		pool.Close()
		return nil, fmt.Errorf("river: %w", err)
	}
	if _, err := pool.Exec(ctx, `DROP SCHEMA IF EXISTS `+riverSchema+` CASCADE; CREATE SCHEMA `+riverSchema); err != nil {
		return fail(err)
	}
	driver := riverpgxv5.New(pool)
	migrator, err := rivermigrate.New(driver, &rivermigrate.Config{Schema: riverSchema, Logger: quietLogger()})
	if err != nil {
		return fail(err)
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fail(err)
	}
	rcfg := &river.Config{Schema: riverSchema, Logger: quietLogger()}
	if workers > 0 {
		ws := river.NewWorkers()
		river.AddWorker(ws, rs.worker)
		rcfg.Workers = ws
		rcfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}}
	}
	if rs.client, err = river.NewClient(driver, rcfg); err != nil {
		return fail(err)
	}
	return rs, nil
}

func (r *riverSystem) close() { r.pool.Close() }

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}

// riverInsert inserts jobs with Client.Insert from goroutines goroutines
// for d after a second's warm-up.
func riverInsert(ctx context.Context, dsn string, goroutines int, d time.Duration, bodyBytes int) (loadscenario.Result, error) {
	rs, err := newRiver(ctx, dsn, goroutines, 0, 0)
	if err != nil {
		return loadscenario.Result{}, err
	}
	defer rs.close()
	var seq atomic.Int64
	res, err := closedLoop(ctx, goroutines, time.Second, d, func(ctx context.Context) error {
		id := fmt.Sprintf("evt_%09d", seq.Add(1))
		_, err := rs.client.Insert(ctx, webhookArgs{Body: loadscenario.StripeBody(id, bodyBytes, time.Now())}, nil)
		return err
	})
	res.Scenario, res.Store = "river-insert", "River"
	return res, err
}

// riverDrain inserts items jobs (InsertMany, then VACUUM ANALYZE), then
// starts a client with workers workers and measures until every job was
// worked and the client stopped (its completions written).
func riverDrain(ctx context.Context, dsn string, workers, items, bodyBytes int) (loadscenario.Result, error) {
	rs, err := newRiver(ctx, dsn, 16, workers, int64(items))
	if err != nil {
		return loadscenario.Result{}, err
	}
	defer rs.close()
	body := loadscenario.StripeBody("evt_prefilled", bodyBytes, time.Now())
	const chunk = 2000
	for from := 0; from < items; from += chunk {
		params := make([]river.InsertManyParams, 0, chunk)
		for range min(chunk, items-from) {
			params = append(params, river.InsertManyParams{Args: webhookArgs{Body: body}})
		}
		if _, err := rs.client.InsertMany(ctx, params); err != nil {
			return loadscenario.Result{}, fmt.Errorf("river: %w", err)
		}
	}
	if _, err := rs.pool.Exec(ctx, `VACUUM ANALYZE `+riverSchema+`.river_job`); err != nil {
		return loadscenario.Result{}, err
	}
	before, err := loadscenario.Counters(ctx, rs.pool)
	if err != nil {
		return loadscenario.Result{}, err
	}
	start := time.Now()
	if err := rs.client.Start(ctx); err != nil {
		return loadscenario.Result{}, fmt.Errorf("river: %w", err)
	}
	select {
	case <-rs.worker.done:
	case <-time.After(10 * time.Minute):
	case <-ctx.Done():
	}
	if err := rs.client.Stop(ctx); err != nil {
		return loadscenario.Result{}, fmt.Errorf("river: %w", err)
	}
	res := loadscenario.Result{Scenario: "river-drain", Store: "River", Elapsed: time.Since(start), Processed: rs.worker.worked.Load()}
	res.ProcessedPerSec = float64(res.Processed) / res.Elapsed.Seconds()
	if res.Processed < int64(items) {
		return res, fmt.Errorf("river: worked %d of %d jobs", res.Processed, items)
	}
	return res, perItem(ctx, dsn, rs.pool, before, &res)
}

// riverInsertAndWork inserts from goroutines goroutines (Client.Insert)
// while the same client works them with workers workers, for d after a
// second's warm-up, and reports both rates and the backlog.
func riverInsertAndWork(ctx context.Context, dsn string, goroutines, workers int, d time.Duration, bodyBytes int) (loadscenario.Result, error) {
	rs, err := newRiver(ctx, dsn, goroutines+8, workers, 0)
	if err != nil {
		return loadscenario.Result{}, err
	}
	defer rs.close()
	if err := rs.client.Start(ctx); err != nil {
		return loadscenario.Result{}, fmt.Errorf("river: %w", err)
	}
	backlog := func() int64 {
		var n int64
		_ = rs.pool.QueryRow(ctx, `SELECT count(*) FROM `+riverSchema+`.river_job WHERE state IN ('available', 'running')`).Scan(&n)
		return n
	}
	type mark struct{ worked, backlog int64 }
	marked := make(chan mark, 1)
	go func() {
		time.Sleep(time.Second) // the warm-up
		marked <- mark{rs.worker.worked.Load(), backlog()}
	}()
	var seq atomic.Int64
	res, err := closedLoop(ctx, goroutines, time.Second, d, func(ctx context.Context) error {
		id := fmt.Sprintf("evt_%09d", seq.Add(1))
		_, err := rs.client.Insert(ctx, webhookArgs{Body: loadscenario.StripeBody(id, bodyBytes, time.Now())}, nil)
		return err
	})
	start := <-marked
	res.Scenario, res.Store = "river-insert+work", "River"
	res.Processed = rs.worker.worked.Load() - start.worked
	res.ProcessedPerSec = float64(res.Processed) / d.Seconds()
	res.BacklogStart, res.BacklogEnd = start.backlog, backlog()
	if stopErr := rs.client.Stop(ctx); err == nil && stopErr != nil {
		err = fmt.Errorf("river: %w", stopErr)
	}
	return res, err
}
