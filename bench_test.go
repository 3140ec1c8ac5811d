package webhooks_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
)

// The whole receive (a Receiver serving catalog providers' requests on
// memstore) is providers' BenchmarkReceive.

// BenchmarkProcessorMemstore measures the lease loop per event: acquire (in
// batches), dispatch to a no-op handler, complete; memstore, 4 workers, a
// backlog of b.N due events.
func BenchmarkProcessorMemstore(b *testing.B) { benchmarkProcessorMemstore(b, discard) }

// BenchmarkProcessorMemstoreJSONLog is BenchmarkProcessorMemstore with
// the logger a host runs in production: JSON at the Info level (to
// io.Discard), which logs nothing of a successful event.
func BenchmarkProcessorMemstoreJSONLog(b *testing.B) {
	benchmarkProcessorMemstore(b, slog.New(slog.NewJSONHandler(io.Discard, nil)))
}

func benchmarkProcessorMemstore(b *testing.B, logger *slog.Logger) {
	store := memstore.NewInbox()
	var wg sync.WaitGroup
	mux := webhooks.NewMux()
	if err := mux.HandleFunc("*", func(context.Context, webhooks.Event) error { wg.Done(); return nil }); err != nil {
		b.Fatal(err)
	}
	// Four workers, as before DefaultWorkers became 100, so results stay
	// comparable with benchstat.
	p, err := webhooks.NewProcessor(store, mux, webhooks.WithLogger(logger), webhooks.WithWorkers(4))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	now := time.Now()
	wg.Add(b.N)
	for i := range b.N {
		if _, err := store.Enqueue(ctx, webhooks.Envelope{Key: webhooks.InboxKey{Provider: "p", EventID: fmt.Sprint(i)}, EventType: "t", ReceivedAt: now}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	done := make(chan error)
	go func() { done <- p.Run(ctx) }()
	wg.Wait()
	b.StopTimer()
	cancel()
	<-done
}
