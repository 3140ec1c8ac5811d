package otelwebhooks_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/otelwebhooks"
)

// observers are the cases the benchmarks compare: no Observer at all;
// the Observer on the global providers with no SDK configured (what a host
// gets before it sets one up); on explicit no-op providers; and on the
// SDK, recording every span and metric.
func observers(b *testing.B) []struct {
	name string
	obs  webhooks.Observer
} {
	global, err := otelwebhooks.New()
	if err != nil {
		b.Fatal(err)
	}
	noop, err := otelwebhooks.New(otelwebhooks.WithMeterProvider(metricnoop.NewMeterProvider()), otelwebhooks.WithTracerProvider(tracenoop.NewTracerProvider()))
	if err != nil {
		b.Fatal(err)
	}
	s := newSDK(b)
	withSDK, err := otelwebhooks.New(otelwebhooks.WithMeterProvider(s.meters), otelwebhooks.WithTracerProvider(s.tracers))
	if err != nil {
		b.Fatal(err)
	}
	return []struct {
		name string
		obs  webhooks.Observer
	}{{"none", nil}, {"global", global}, {"noop", noop}, {"sdk", withSDK}}
}

// BenchmarkReceive measures one verified, stored delivery through
// Receiver.Receive (HMAC-SHA256 over a 1 KiB body, memstore).
func BenchmarkReceive(b *testing.B) {
	body := []byte(strings.Repeat("x", 1024))
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	sig := "sha256=" + hex.EncodeToString(m.Sum(nil))
	u := &url.URL{Path: "/webhooks/acme"}
	for _, c := range observers(b) {
		b.Run("observer="+c.name, func(b *testing.B) {
			opts := []webhooks.ReceiverOption{webhooks.WithLogger(discard), webhooks.WithReplayStore(memstore.NewReplay())}
			if c.obs != nil {
				opts = append(opts, webhooks.WithObserver(c.obs))
			}
			rcv, err := webhooks.NewReceiver(registry(b), memstore.NewInbox(), opts...)
			if err != nil {
				b.Fatal(err)
			}
			route := webhooks.Route{Provider: "acme"}
			ctx := context.Background()
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				i++
				req := &webhooks.Request{Method: http.MethodPost, URL: u, Body: body, Header: http.Header{
					"X-Hub-Signature-256": {sig},
					"X-Github-Event":      {"push"},
					"X-Github-Delivery":   {strconv.Itoa(i)},
				}}
				res, err := rcv.Receive(ctx, route, req)
				if err != nil || res.Status != webhooks.StatusAccepted {
					b.Fatalf("%v %v", res.Status, err)
				}
			}
		})
	}
}

// BenchmarkProcess measures the lease loop per event (acquire in batches,
// dispatch to a no-op handler, complete; memstore, 4 workers, a backlog of
// b.N due events), as the root package's BenchmarkProcessorMemstore does.
func BenchmarkProcess(b *testing.B) {
	for _, c := range observers(b) {
		b.Run("observer="+c.name, func(b *testing.B) {
			store := memstore.NewInbox()
			var wg sync.WaitGroup
			opts := []webhooks.ProcessorOption{webhooks.WithLogger(discard)}
			if c.obs != nil {
				opts = append(opts, webhooks.WithObserver(c.obs))
			}
			p, err := webhooks.NewProcessor(store, webhooks.DispatcherFunc(func(context.Context, webhooks.Event) error { wg.Done(); return nil }), opts...)
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			now := time.Now()
			link := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
			wg.Add(b.N)
			for i := range b.N {
				if _, err := store.Enqueue(ctx, webhooks.Envelope{Key: webhooks.InboxKey{Provider: "p", EventID: fmt.Sprint(i)}, EventType: "t", ReceivedAt: now, TraceLink: link}); err != nil {
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
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkObserverCalls measures what an Observer adds to one receive
// (StartReceive and EndReceive) and to one attempt (StartAttempt and
// EndAttempt) on its own, without the work they bracket, which varies
// more from run to run than they cost.
func BenchmarkObserverCalls(b *testing.B) {
	ctx := context.Background()
	route := webhooks.Route{Provider: "acme", Tenant: "t"}
	end := webhooks.ReceiveEndData{Route: route, Result: webhooks.ReceiveResult{Status: webhooks.StatusAccepted, Key: webhooks.InboxKey{Provider: "acme", Tenant: "t", EventID: "e"}, EventType: "push"}, StoreTime: time.Millisecond}
	ev := webhooks.Event{Provider: "acme", Tenant: "t", ID: "e", Type: "push", Attempt: 1, TraceLink: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	settled := webhooks.AttemptEndData{Event: ev, Settlement: webhooks.Settlement{Outcome: webhooks.AttemptSucceeded}}
	for _, c := range observers(b) {
		if c.obs == nil {
			continue
		}
		b.Run("call=receive/observer="+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rctx := c.obs.StartReceive(ctx, webhooks.ReceiveStartData{Route: route})
				_ = c.obs.(webhooks.TraceLinker).TraceLink(rctx)
				c.obs.EndReceive(rctx, end)
			}
		})
		b.Run("call=attempt/observer="+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				actx := c.obs.StartAttempt(ctx, webhooks.AttemptStartData{Event: ev})
				c.obs.EndAttempt(actx, settled)
			}
		})
	}
}
