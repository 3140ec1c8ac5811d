package loadscenario

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync/atomic"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

// DrainLoad is the backlog of Drain.
type DrainLoad struct {
	// Items is how many pending items there are when the Processor
	// starts. Defaults to 20,000.
	Items int
	// Timeout bounds the drain. Defaults to 10 minutes.
	Timeout time.Duration
	// Options are added to the Processor's options.
	Options []webhooks.ProcessorOption
}

// Drain fills the inbox with items due at once (inserted in bulk, then
// vacuumed and analyzed, as autovacuum would leave them), then runs a
// Processor with a no-op handler until every item succeeded, and measures
// the rate, the database commits and WAL per item, and the peak heap.
func Drain(ctx context.Context, cfg Config, load DrainLoad) (Result, error) {
	cfg = cfg.withDefaults()
	if load.Items == 0 {
		load.Items = 20_000
	}
	if load.Timeout == 0 {
		load.Timeout = 10 * time.Minute
	}
	sys, err := open(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	defer sys.close()
	if err := sys.fill(ctx, load.Items, cfg.BodyBytes); err != nil {
		return Result{}, err
	}
	res := Result{Scenario: "drain", Store: cfg.storeName(), BacklogStart: int64(load.Items)}

	var processed atomic.Int64
	done := make(chan struct{})
	proc, err := sys.processor(func(context.Context, webhooks.Event) error {
		if processed.Add(1) == int64(load.Items) {
			close(done)
		}
		return nil
	}, load.Options...)
	if err != nil {
		return res, err
	}
	before, err := sys.counters(ctx)
	if err != nil {
		return res, err
	}
	heap := watchHeap()
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	start := time.Now()
	go func() { ran <- proc.Run(runCtx) }()
	timeout := time.NewTimer(load.Timeout)
	defer timeout.Stop()
	select {
	case <-done:
	case <-timeout.C:
	case <-ctx.Done():
	}
	// The last settlements are in flight: Run returns once they are made.
	stop()
	if err := <-ran; err != nil {
		return res, err
	}
	res.Elapsed = time.Since(start)
	res.PeakHeapBytes = heap.Peak()
	res.Processed = processed.Load()
	res.ProcessedPerSec = float64(res.Processed) / res.Elapsed.Seconds()
	if res.Processed < int64(load.Items) {
		return res, fmt.Errorf("loadscenario: drained %d of %d items in %s", res.Processed, load.Items, load.Timeout)
	}
	if res.BacklogEnd, err = sys.pending(ctx); err != nil {
		return res, err
	}
	if sys.pool != nil {
		after, err := sys.countersAtExit(ctx)
		if err != nil {
			return res, err
		}
		res.PerItem(ctx, sys.cfg.DSN, before, after)
	}
	return res, nil
}

// fill stores n items due now, with Stripe-shaped bodies of size bytes.
func (s *system) fill(ctx context.Context, n, size int) error {
	if s.pool == nil {
		envs := newEnvelopes(size)
		for range n {
			if _, err := s.store.Enqueue(ctx, envs.next()); err != nil {
				return err
			}
		}
		return nil
	}
	body := StripeBody("evt_prefilled", size, time.Now())
	digest := sha256.Sum256(body)
	const chunk = 50_000 // rows per statement, to keep each one's memory small
	for from := 1; from <= n; from += chunk {
		to := min(n, from+chunk-1)
		// The event once (inbox_events), then its default handler's
		// pending job (inbox_jobs), as pgstore's migration 0006 splits
		// them, in one statement.
		_, err := s.pool.Exec(ctx, `WITH ev AS (
			INSERT INTO `+s.table("inbox_events")+` (provider, tenant, event_id, event_type, payload, headers,
				payload_sha256, key_id, duplicate_count, last_seen_at, occurred_at, received_at, api_version)
			SELECT 'stripe', '', 'evt_' || lpad(g::text, 9, '0'), 'invoice.paid', $1,
				'{"Content-Type":["application/json; charset=utf-8"],"User-Agent":["Stripe/1.0 (+https://stripe.com/docs/webhooks)"]}',
				$2, '0', 0, $3, $3, $3, '2024-06-20'
			FROM generate_series($4::int, $5::int) AS g
			RETURNING provider, tenant, event_id, event_type)
			INSERT INTO `+s.table("inbox_jobs")+` (provider, tenant, event_id, handler, event_type, state, attempts, next_attempt_at, updated_at)
			SELECT provider, tenant, event_id, '', event_type, 'pending', 0, $3, $3 FROM ev`, body, digest[:], time.Now(), from, to)
		if err != nil {
			return fmt.Errorf("loadscenario: filling the inbox: %w", err)
		}
	}
	return s.vacuum(ctx)
}
