package storetest

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

// testTwoInstancesNoOverlap: envelopes of many keys, enqueued from
// goroutines that each own some keys (so each key's arrival order is
// known) while two "instances" of four workers each acquire (random Max
// 1–16), work a random while, and settle: 90% succeeded, 8% retried due
// at once, 2% abandoned. Per key, no two runs overlap (a run is from
// Acquire's return to just before its Settle), the jobs succeed in
// arrival order, and every one succeeds once. Time is a logical clock,
// one microsecond per call, so the case never sleeps. 10,000 envelopes
// over 100 keys; with -short, 1,000 over 20; Features.OrderRace chooses
// another size. Mutation: enqueue every
// keyed job as pending.
func testTwoInstancesNoOverlap(t *testing.T, s webhooks.InboxStore, size struct{ Events, Keys int }) {
	events, keys := 10_000, 100
	switch {
	case size.Events > 0 && size.Keys > 0:
		events, keys = size.Events, size.Keys
	case testing.Short():
		events, keys = 1_000, 20
	}
	const (
		enqueuers = 8
		instances = 2
		workers   = 4
	)
	var clock atomic.Int64 // µs after base, one per call
	now := func() time.Time { return base.Add(time.Duration(clock.Add(1)) * time.Microsecond) }
	var tick atomic.Int64 // orders the runs' starts and ends

	keyOf := make(map[string]int, events) // event ID -> key index, read-only once built
	for i := range events {
		keyOf[fmt.Sprintf("e%05d", i)] = i % keys
	}
	arrivals := make([][]string, keys) // by key, each written by the key's one enqueuer
	type run struct {
		id         string
		start, end int64
		succeeded  bool
	}
	var (
		runsMu    sync.Mutex
		runs      = make([][]run, keys)
		succeeded atomic.Int64
		failed    atomic.Bool
		fail      = func(format string, args ...any) {
			if failed.CompareAndSwap(false, true) {
				t.Errorf(format, args...)
			}
		}
	)

	var wg sync.WaitGroup
	for g := range enqueuers {
		wg.Go(func() {
			for i := range events {
				k := i % keys
				if k%enqueuers != g || failed.Load() {
					continue
				}
				id := fmt.Sprintf("e%05d", i)
				env := ordered(id, fmt.Sprintf("key_%03d", k), 0, now())
				if res, err := s.Enqueue(t.Context(), env); err != nil || res.Outcome != webhooks.EnqueueNew {
					fail("Enqueue(%s): %+v, %v; want new", id, res, err)
					return
				}
				arrivals[k] = append(arrivals[k], id)
			}
		})
	}
	for w := range instances * workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 0x5eed))
			who := fmt.Sprintf("instance-%d/worker-%d", w/workers, w%workers)
			idle := 0
			for succeeded.Load() < int64(events) && !failed.Load() {
				leases, err := s.Acquire(t.Context(), webhooks.AcquireRequest{
					Now: now(), LeaseDuration: time.Hour, Max: 1 + rng.IntN(16), Worker: who, Version: version, Handler: ledger,
				})
				if err != nil {
					fail("Acquire by %s: %v", who, err)
					return
				}
				if len(leases) == 0 {
					if idle++; idle > 2_000_000 {
						fail("%s found nothing due %d times in a row with %d of %d jobs succeeded: a key is stuck", who, idle, succeeded.Load(), events)
						return
					}
					runtime.Gosched()
					continue
				}
				idle = 0
				for _, l := range leases {
					start := tick.Add(1)
					for range rng.IntN(4) {
						runtime.Gosched()
					}
					var st webhooks.Settlement
					switch p := rng.IntN(100); {
					case p < 90:
						st = webhooks.Settlement{Lease: l, Outcome: webhooks.AttemptSucceeded}
					case p < 98:
						st = webhooks.Settlement{Lease: l, Outcome: webhooks.AttemptRetried, Failure: transient, RetryAt: base.Add(time.Duration(clock.Load()) * time.Microsecond)}
					default:
						st = webhooks.Settlement{Lease: l, Outcome: webhooks.AttemptAbandoned}
					}
					r := run{id: l.Key().EventID, start: start, end: tick.Add(1), succeeded: st.Outcome == webhooks.AttemptSucceeded}
					st.Now = now()
					if err := s.Settle(t.Context(), st); err != nil {
						fail("Settle(%s of %s) by %s: %v; want no error (leases last an hour of the logical clock)", st.Outcome, l.Job(), who, err)
						return
					}
					k, ok := keyOf[r.id]
					if !ok {
						fail("Acquire leased %s, an event the case did not enqueue", l.Job())
						return
					}
					runsMu.Lock()
					runs[k] = append(runs[k], r)
					runsMu.Unlock()
					if r.succeeded {
						succeeded.Add(1)
					}
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		return
	}
	for k := range keys {
		rs := runs[k]
		slices.SortFunc(rs, func(a, b run) int { return int(a.start - b.start) })
		var order []string
		for i, r := range rs {
			if i > 0 && r.start < rs[i-1].end {
				t.Fatalf("key_%03d: the run of %s (ticks %d–%d) overlaps the run of %s (ticks %d–%d); want one run at a time per key",
					k, r.id, r.start, r.end, rs[i-1].id, rs[i-1].start, rs[i-1].end)
			}
			if r.succeeded {
				order = append(order, r.id)
			}
		}
		if !slices.Equal(order, arrivals[k]) {
			t.Fatalf("key_%03d: jobs succeeded in the order %v; want the arrival order %v", k, order, arrivals[k])
		}
	}
	if n := succeeded.Load(); n != int64(events) {
		t.Errorf("%d jobs succeeded; want %d, each once", n, events)
	}
	wantNoJobDue(t, s, ledger, base.Add(time.Duration(clock.Load())*time.Microsecond+24*time.Hour), "every job succeeded")
}
