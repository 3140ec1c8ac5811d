package loadscenario

import (
	"context"
	"fmt"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

// WakeLoad is the probe of Wake.
type WakeLoad struct {
	// Probes is how many items are enqueued one at a time. Defaults to 200.
	Probes int
	// Idle is the pause before each probe, so the Processor is idle and
	// waits for a wake-up. Defaults to 50ms.
	Idle time.Duration
}

// Wake measures how long an idle Processor takes to start a handler after
// Enqueue returned (its commit is done): the store's NOTIFY, the
// Listener's wake-up, the acquisition and the dispatch. The Processor
// polls only once a minute, so a wake-up that got lost would show as a
// probe of a minute. It needs PostgreSQL.
func Wake(ctx context.Context, cfg Config, load WakeLoad) (Result, error) {
	cfg = cfg.withDefaults()
	if cfg.DSN == "" {
		return Result{}, errNoDB
	}
	if load.Probes == 0 {
		load.Probes = 200
	}
	if load.Idle == 0 {
		load.Idle = 50 * time.Millisecond
	}
	sys, err := open(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	defer sys.close()
	started := make(chan time.Time, 1)
	proc, err := sys.processor(func(context.Context, webhooks.Event) error {
		started <- time.Now()
		return nil
	}, webhooks.WithPollInterval(time.Minute))
	if err != nil {
		return Result{}, err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	ran := make(chan error, 1)
	go func() { ran <- proc.Run(runCtx) }()

	envs := newEnvelopes(cfg.BodyBytes)
	// The first probe also waits for the listener to connect.
	if _, err := sys.store.Enqueue(ctx, envs.next()); err != nil {
		return Result{}, err
	}
	<-started
	lat := make([]time.Duration, 0, load.Probes)
	for range load.Probes {
		time.Sleep(load.Idle)
		if _, err := sys.store.Enqueue(ctx, envs.next()); err != nil {
			return Result{}, err
		}
		committed := time.Now()
		select {
		case at := <-started:
			lat = append(lat, at.Sub(committed))
		case <-time.After(2 * time.Minute):
			return Result{}, fmt.Errorf("loadscenario: no handler started within 2 minutes of an enqueue")
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	}
	stop()
	if err := <-ran; err != nil {
		return Result{}, err
	}
	return Result{Scenario: "wake", Store: cfg.storeName(), Wake: percentiles(lat)}, nil
}
