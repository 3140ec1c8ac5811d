package webhooks_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/webhookstest"
)

// A handler returns Permanent for an event that no retry can fix: the
// Processor dead-letters it after that one attempt, where a plain error is
// retried with backoff. Operators find dead letters with package ops and
// replay them once the cause is fixed.
func ExamplePermanent() {
	ctx := context.Background()
	clock := webhookstest.NewClock(time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC))
	inbox := memstore.NewInbox()

	ran := make(chan struct{}, 2) // tells the example that a handler ran
	mux := webhooks.NewMux()
	mux.MustHandleFunc("invoice.paid", func(ctx context.Context, ev webhooks.Event) error {
		defer func() { ran <- struct{}{} }()
		if ev.ID == "evt_1" {
			return webhooks.Permanent(errors.New("no customer cus_404 here"))
		}
		return errors.New("billing service unavailable")
	})
	proc, err := webhooks.NewProcessor(inbox, mux, webhooks.WithClock(clock))
	if err != nil {
		fmt.Println(err)
		return
	}

	// Two events, as a Receiver stores them.
	keys := []webhooks.InboxKey{{Provider: "stripe", EventID: "evt_1"}, {Provider: "stripe", EventID: "evt_2"}}
	for _, key := range keys {
		_, err := inbox.Enqueue(ctx, webhooks.Envelope{Key: key, EventType: "invoice.paid", ReceivedAt: clock.Now()})
		if err != nil {
			fmt.Println(err)
			return
		}
	}

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- proc.Run(runCtx) }()
	<-ran
	<-ran
	stop() // Run settles the attempts that finished before it returns.
	if err := <-done; err != nil {
		fmt.Println(err)
		return
	}

	for _, key := range keys {
		item, err := inbox.Get(ctx, key)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %s after %d attempt, %s: %s\n", key.EventID, item.State, item.Attempts, item.LastError.Class, item.LastError.Message)
		if item.State == webhooks.StatePending {
			fmt.Println("  next attempt in", item.NextAttemptAt.Sub(clock.Now()))
		}
	}
	// Output:
	// evt_1: dead after 1 attempt, permanent: no customer cus_404 here
	// evt_2: pending after 1 attempt, error: billing service unavailable
	//   next attempt in 5s
}

// A handler that knows when to try again, such as after a downstream's 429
// with a Retry-After, returns RetryAfter: the next attempt is due no sooner
// than that, even where the retry policy's own delay is shorter (5 seconds
// after a first failure by default), up to ExponentialPolicy.MaxRetryAfter.
func ExampleRetryAfter() {
	ctx := context.Background()
	clock := webhookstest.NewClock(time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC))
	inbox := memstore.NewInbox()

	ran := make(chan struct{}, 1) // tells the example that the handler ran
	mux := webhooks.NewMux()
	mux.MustHandleFunc("contact.created", func(ctx context.Context, ev webhooks.Event) error {
		defer func() { ran <- struct{}{} }()
		if ev.Attempt == 1 {
			return webhooks.RetryAfter(errors.New("crm: 429 Too Many Requests"), 2*time.Minute)
		}
		return nil
	})
	proc, err := webhooks.NewProcessor(inbox, mux, webhooks.WithClock(clock))
	if err != nil {
		fmt.Println(err)
		return
	}
	key := webhooks.InboxKey{Provider: "hubspot", EventID: "1001"} // as a Receiver stores it
	if _, err := inbox.Enqueue(ctx, webhooks.Envelope{Key: key, EventType: "contact.created", ReceivedAt: clock.Now()}); err != nil {
		fmt.Println(err)
		return
	}

	// runOnce runs the processor until the handler has run once more, and
	// stops it so that the example reads the item settled; a host's
	// processor runs on.
	runOnce := func() {
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- proc.Run(runCtx) }()
		<-ran
		stop()
		if err := <-done; err != nil {
			fmt.Println(err)
		}
	}
	show := func() {
		item, err := inbox.Get(ctx, key)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s %s, attempts: %d\n", clock.Now().Format(time.TimeOnly), item.State, item.Attempts)
		if item.State == webhooks.StatePending {
			fmt.Println("  next attempt at", item.NextAttemptAt.Format(time.TimeOnly))
		}
	}

	runOnce()
	show()
	clock.Advance(2 * time.Minute)
	runOnce()
	show()
	// Output:
	// 09:00:00 pending, attempts: 1
	//   next attempt at 09:02:00
	// 09:02:00 succeeded, attempts: 2
}

// The options a host sets on its Processor: how many handlers run at once,
// how long one may take, how failures are retried, and who made each
// attempt. Every option has a default (DefaultWorkers and so on), and
// NewProcessor refuses a value that cannot work.
func ExampleNewProcessor() {
	ctx := context.Background()
	clock := webhookstest.NewClock(time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC))
	inbox := memstore.NewInbox()

	ran := make(chan struct{}, 1) // tells the example that the handler ran
	mux := webhooks.NewMux()
	mux.MustHandleFunc("order.created", func(ctx context.Context, ev webhooks.Event) error {
		defer func() { ran <- struct{}{} }()
		<-ctx.Done() // a handler stuck on a slow call, which honours its context
		return ctx.Err()
	})
	proc, err := webhooks.NewProcessor(inbox, mux,
		webhooks.WithWorkers(16),
		webhooks.WithHandlerTimeout(50*time.Millisecond), // minutes in production: see DefaultHandlerTimeout
		webhooks.WithShutdownGrace(10*time.Second),
		webhooks.WithRetryPolicy(webhooks.ExponentialPolicy{MaxAttempts: 8, InitialDelay: 30 * time.Second, MaxAge: 24 * time.Hour}),
		webhooks.WithWorkerIdentity("orders-7f9c", "v1.4.2"),
		webhooks.WithLogger(slog.New(slog.NewJSONHandler(os.Stderr, nil))),
		webhooks.WithClock(clock), // tests only; the system clock by default
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	key := webhooks.InboxKey{Provider: "shopify", EventID: "b54557e4"} // as a Receiver stores it
	if _, err := inbox.Enqueue(ctx, webhooks.Envelope{Key: key, EventType: "order.created", ReceivedAt: clock.Now()}); err != nil {
		fmt.Println(err)
		return
	}

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- proc.Run(runCtx) }()
	<-ran
	stop()
	if err := <-done; err != nil {
		fmt.Println(err)
		return
	}
	item, err := inbox.Get(ctx, key)
	if err != nil {
		fmt.Println(err)
		return
	}
	a := item.History[0]
	fmt.Printf("attempt %d by %s %s: %s, %s: %s\n", a.Number, a.Worker, a.Version, a.Outcome, a.ErrorClass, a.Error)
	fmt.Println("next attempt in", item.NextAttemptAt.Sub(clock.Now()))

	_, err = webhooks.NewProcessor(inbox, mux, webhooks.WithWorkers(0))
	fmt.Println(err)
	// Output:
	// attempt 1 by orders-7f9c v1.4.2: retried, timeout: handler did not finish within 50ms: context deadline exceeded
	// next attempt in 30s
	// webhooks: WithWorkers(0): need at least one worker
}
