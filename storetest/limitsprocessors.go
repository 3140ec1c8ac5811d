package storetest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

// processorLimitsCases run two webhooks.Processors on the store, with a
// handler under Limits: what the host configures, end to end.
var processorLimitsCases = []inboxCase{
	{"TwoProcessorsUnderCap", testTwoProcessorsUnderCap},
	{"TwoProcessorsUnderRate", testTwoProcessorsUnderRate},
}

// runProcessors runs n Processors of workers each, polling every poll,
// with opts, on s with handlers, until the case ends.
func runProcessors(t *testing.T, s webhooks.InboxStore, hs webhooks.Handlers, n, workers int, poll time.Duration, opts ...webhooks.ProcessorOption) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	for i := range n {
		p, err := webhooks.NewProcessor(s, hs, append([]webhooks.ProcessorOption{webhooks.WithWorkers(workers), webhooks.WithPollInterval(poll),
			webhooks.WithWorkerIdentity(fmt.Sprintf("instance-%d", i), version), webhooks.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}, opts...)...)
		if err != nil {
			t.Fatalf("NewProcessor: %v", err)
		}
		wg.Go(func() {
			if err := p.Run(ctx); err != nil {
				t.Errorf("Processor.Run: %v", err)
			}
		})
	}
}

// testTwoProcessorsUnderCap: two Processors of eight workers each run a
// handler with MaxRunning 2, its events taking a few milliseconds: never
// more than two run at once (an atomic high-water mark at the handler's
// entry), two do, and every event is handled. Mutation: the Processor
// acquires without its handler's Limits.
func testTwoProcessorsUnderCap(t *testing.T, s webhooks.InboxStore) {
	const (
		events = 60
		limit  = 2
	)
	for i := range events {
		mustEnqueue(t, s, envelope(key(fmt.Sprintf("e%03d", i)), "p", base))
	}
	var running, high, handled atomic.Int64
	all := make(chan struct{})
	d := webhooks.DispatcherFunc(func(context.Context, webhooks.Event) error {
		n := running.Add(1)
		for h := high.Load(); n > h && !high.CompareAndSwap(h, n); h = high.Load() {
		}
		time.Sleep(3 * time.Millisecond)
		running.Add(-1)
		if handled.Add(1) == events {
			close(all)
		}
		return nil
	})
	runProcessors(t, s, webhooks.Handlers{{Dispatcher: d, Limits: webhooks.Limits{MaxRunning: limit}}}, 2, 8, 20*time.Millisecond)
	select {
	case <-all:
	case <-time.After(time.Minute):
		t.Fatalf("after a minute, %d of %d events were handled", handled.Load(), events)
	}
	if h := high.Load(); h != limit {
		t.Errorf("events handled at once, at most: %d; want %d (MaxRunning), reached and never exceeded", h, limit)
	}
}

// testTwoProcessorsUnderRate: two Processors run a handler with Rate 50
// and Burst 10 on a backlog for a second and a half: the events that
// start in it are the rate's 75, within one burst. Mutation: the
// Processor acquires without its handler's Limits (all 300 start), or
// waits for the poll interval once its tokens are spent (too few).
func testTwoProcessorsUnderRate(t *testing.T, s webhooks.InboxStore) {
	const (
		events      = 300
		rate, burst = 50, 10
		window      = 1500 * time.Millisecond
	)
	for i := range events {
		mustEnqueue(t, s, envelope(key(fmt.Sprintf("e%03d", i)), "p", base))
	}
	var (
		mu     sync.Mutex
		starts []time.Time
	)
	d := webhooks.DispatcherFunc(func(context.Context, webhooks.Event) error {
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
		return nil
	})
	begin := time.Now()
	// A poll interval longer than the window: the Processor must look
	// again when its next token is due, not at the next poll.
	runProcessors(t, s, webhooks.Handlers{{Dispatcher: d, Limits: webhooks.Limits{Rate: rate, Burst: burst}}}, 2, 4, time.Minute)
	time.Sleep(window + 200*time.Millisecond)
	mu.Lock()
	in := 0
	for _, at := range starts {
		if at.Sub(begin) < window {
			in++
		}
	}
	mu.Unlock()
	if want := int(rate * window / time.Second); in < want-burst || in > want+burst {
		t.Errorf("%d events started in the first %v at Rate %d, Burst %d; want %d ± %d", in, window, rate, burst, want, burst)
	}
}
