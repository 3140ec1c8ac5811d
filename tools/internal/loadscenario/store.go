package loadscenario

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

// StoreLoad is the load of the scenarios that call the store directly.
type StoreLoad struct {
	// Duration of the measured window. Defaults to 10s.
	Duration time.Duration
	// Warmup runs before the window and is not counted. Defaults to 1s.
	Warmup time.Duration
	// Enqueuers is how many goroutines call Enqueue, each one call at a
	// time. Defaults to 16.
	Enqueuers int
}

func (l StoreLoad) withDefaults() StoreLoad {
	if l.Duration == 0 {
		l.Duration = 10 * time.Second
	}
	if l.Warmup == 0 {
		l.Warmup = time.Second
	}
	if l.Enqueuers == 0 {
		l.Enqueuers = 16
	}
	return l
}

// envelopes makes envelopes of new events with Stripe-shaped bodies.
type envelopes struct {
	size   int
	prefix string
	seq    atomic.Int64
}

func newEnvelopes(size int) *envelopes {
	st, _ := newStripe(size) // only for its random prefix
	return &envelopes{size: size, prefix: st.prefix}
}

func (e *envelopes) next() webhooks.Envelope {
	id := fmt.Sprintf("%s%09d", e.prefix, e.seq.Add(1))
	now := time.Now()
	body := StripeBody(id, e.size, now)
	return webhooks.Envelope{
		Key:           webhooks.InboxKey{Provider: "stripe", EventID: id},
		EventType:     "invoice.paid",
		Payload:       body,
		Headers:       http.Header{"Content-Type": {"application/json; charset=utf-8"}, "User-Agent": {"Stripe/1.0 (+https://stripe.com/docs/webhooks)"}},
		PayloadSHA256: sha256.Sum256(body),
		KeyID:         "0",
		APIVersion:    "2024-06-20",
		OccurredAt:    now.Truncate(time.Second),
		ReceivedAt:    now,
	}
}

// Enqueue calls the store's Enqueue from load.Enqueuers goroutines, each
// with new events, and measures the calls. With process, a Processor with
// a no-op handler runs at the same time.
func Enqueue(ctx context.Context, cfg Config, load StoreLoad, process bool) (Result, error) {
	cfg, load = cfg.withDefaults(), load.withDefaults()
	sys, err := open(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	defer sys.close()
	res := Result{Scenario: "enqueue", Store: cfg.storeName()}
	var processed atomic.Int64
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var procDone chan error
	if process {
		res.Scenario = "enqueue+process"
		proc, err := sys.processor(func(context.Context, webhooks.Event) error {
			processed.Add(1)
			return nil
		})
		if err != nil {
			return res, err
		}
		procDone = make(chan error, 1)
		go func() { procDone <- proc.Run(runCtx) }()
	}

	envs := newEnvelopes(cfg.BodyBytes)
	begin := time.Now()
	from, end := begin.Add(load.Warmup), begin.Add(load.Warmup+load.Duration)
	var (
		all            latencies
		acked, errored atomic.Int64
		firstErr       error
		errOnce        sync.Once
		wg             sync.WaitGroup
	)
	for range load.Enqueuers {
		wg.Go(func() {
			lat := make([]time.Duration, 0, 4096)
			for ctx.Err() == nil {
				env := envs.next()
				start := time.Now()
				if !start.Before(end) {
					break
				}
				_, err := sys.store.Enqueue(ctx, env)
				took := time.Since(start)
				if start.Before(from) || start.Add(took).After(end) {
					continue
				}
				if err != nil {
					errored.Add(1)
					errOnce.Do(func() { firstErr = err })
					continue
				}
				acked.Add(1)
				lat = append(lat, took)
			}
			all.add(lat)
		})
	}
	var startProcessed int64
	wait := time.NewTimer(time.Until(from))
	select {
	case <-wait.C:
		startProcessed = processed.Load()
		if process {
			res.BacklogStart, _ = sys.pending(ctx)
		}
	case <-ctx.Done():
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return res, err
	}
	loadOutcome{elapsed: end.Sub(from), acked: acked.Load(), errors: errored.Load(), lat: all.d}.fill(&res)
	if process {
		res.Processed = processed.Load() - startProcessed
		res.ProcessedPerSec = float64(res.Processed) / res.Elapsed.Seconds()
		if res.BacklogEnd, err = sys.pending(ctx); err != nil {
			return res, err
		}
		stop()
		if err := <-procDone; err != nil {
			return res, err
		}
	}
	if res.Acked == 0 && firstErr != nil {
		return res, fmt.Errorf("loadscenario: no Enqueue succeeded: %w", firstErr)
	}
	return res, nil
}
