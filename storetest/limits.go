package storetest

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

// limitsCases pin webhooks.FlowSupport.Limits: an acquisition grants no
// more than its Limits allow, counted over every caller of the store;
// and processorLimitsCases, Processors under them.
var limitsCases = append([]inboxCase{
	{"MaxRunning", testMaxRunning},
	{"RateBucket", testRateBucket},
	{"TwoInstancesUnderCap", testTwoInstancesUnderCap},
	{"TwoInstancesUnderRate", testTwoInstancesUnderRate},
}, processorLimitsCases...)

// hasLimits reports whether s keeps Limits over its callers.
func hasLimits(s webhooks.InboxStore) bool { return webhooks.FlowOf(s).Limits }

// acquireLimited is acquireFor under limits.
func acquireLimited(t *testing.T, s webhooks.InboxStore, handler string, now time.Time, max int, l webhooks.Limits) []*webhooks.Lease {
	t.Helper()
	leases, err := s.Acquire(t.Context(), webhooks.AcquireRequest{Now: now, LeaseDuration: leaseFor, Max: max,
		Worker: worker, Version: version, Handler: handler, Limits: l})
	if err != nil {
		t.Fatalf("Acquire(Handler %q, Now %s, Max %d, Limits %+v): %v; want no error", handler, fmtTime(now), max, l, err)
	}
	return leases
}

// wantLimited requires Acquire(Handler: handler, Max 10, Limits l) at now
// to lease n jobs, and returns them.
func wantLimited(t *testing.T, s webhooks.InboxStore, handler string, now time.Time, l webhooks.Limits, n int, why string) []*webhooks.Lease {
	t.Helper()
	leases := acquireLimited(t, s, handler, now, 10, l)
	if len(leases) != n {
		t.Fatalf("Acquire(Handler %q, Now %s, Max 10, Limits %+v) leased %d: %s; want %d because %s",
			handler, fmtTime(now), l, len(leases), leaseKeys(leases), n, why)
	}
	return leases
}

// enqueueJobs enqueues n events for handler, id prefix-0.., received at
// receivedAt.
func enqueueJobs(t *testing.T, s webhooks.InboxStore, prefix string, n int, receivedAt time.Time, handler string) {
	t.Helper()
	for i := range n {
		mustEnqueue(t, s, jobsEnvelope(key(fmt.Sprintf("%s-%04d", prefix, i)), "p", receivedAt, handler))
	}
}

// testMaxRunning: at most MaxRunning of a handler's jobs are leased and
// unexpired at once, over calls; a settlement makes room; an expired
// lease does not count (taking it over does); held leases count; another
// handler's jobs are counted apart. Mutations: MaxRunning ignored, or
// applied per call; expired leases counted; every handler counted
// together.
func testMaxRunning(t *testing.T, s webhooks.InboxStore) {
	capped := webhooks.Limits{MaxRunning: 2}
	enqueueJobs(t, s, "l", 5, base, ledger)
	enqueueJobs(t, s, "a", 3, base, audit)
	first := wantLimited(t, s, ledger, base, capped, 2, "the cap is 2")
	wantLimited(t, s, ledger, at(time.Second), capped, 0, "two leases of ledger are held")
	wantLimited(t, s, audit, at(time.Second), capped, 2, "audit's jobs are counted apart")
	mustSettle(t, s, succeed(first[0], at(2*time.Second)))
	wantLimited(t, s, ledger, at(2*time.Second), capped, 1, "one lease was settled")
	wantLimited(t, s, ledger, at(2*time.Second), webhooks.Limits{MaxRunning: 3}, 1, "a cap of 3 leaves room for one more")
	// first[1] has expired; those of 2 s have not: 2 run.
	wantLimited(t, s, ledger, base.Add(leaseFor), webhooks.Limits{MaxRunning: 3}, 1, "one lease expired: its job is taken over, and counts")
	wantLimited(t, s, ledger, at(2*time.Second).Add(2*leaseFor), capped, 2, "every lease expired")

	if !is[webhooks.LeaseStarter](s) {
		return
	}
	enqueueJobs(t, s, "h", 3, base, "held")
	held, err := s.Acquire(t.Context(), webhooks.AcquireRequest{Now: base, LeaseDuration: leaseFor, Max: 3, Hold: true, Start: 0,
		Worker: worker, Version: version, Handler: "held", Limits: capped})
	if err != nil || len(held) != 2 {
		t.Fatalf("Acquire(Handler held, Hold, Start 0, MaxRunning 2): %d leases, %v; want 2", len(held), err)
	}
	wantLimited(t, s, "held", base, capped, 0, "two held leases count as running")
}

// testRateBucket: a handler's leases take tokens from a bucket of Burst
// tokens (Rate rounded up when Burst is 0) refilled at Rate per second of
// the callers' Now, kept over calls and never above Burst; a lease given
// back does not return its token; handlers have buckets of their own.
// Mutations: the bucket not kept between calls, refilled above Burst, or
// refilled by whole seconds.
func testRateBucket(t *testing.T, s webhooks.InboxStore) {
	l := webhooks.Limits{Rate: 1, Burst: 3}
	enqueueJobs(t, s, "l", 20, base, ledger)
	first := wantLimited(t, s, ledger, base, l, 3, "a full bucket holds Burst (3) tokens")
	wantLimited(t, s, ledger, base, l, 0, "the bucket is empty")
	mustSettle(t, s, webhooks.Settlement{Lease: first[0], Outcome: webhooks.AttemptAbandoned, Now: base})
	wantLimited(t, s, ledger, at(999*time.Millisecond), l, 0, "a token takes a second (Rate 1), and a lease given back keeps its token")
	wantLimited(t, s, ledger, at(time.Second), l, 1, "one token a second")
	wantLimited(t, s, ledger, at(2500*time.Millisecond), l, 1, "1.5 s make 1.5 tokens: one lease")
	wantLimited(t, s, ledger, at(3*time.Second), l, 1, "the half token and another half")
	wantLimited(t, s, ledger, at(time.Hour), l, 3, "an hour's refill stops at Burst")
	// Burst 0: the leases of one second.
	enqueueJobs(t, s, "a", 10, base, audit)
	wantLimited(t, s, audit, base, webhooks.Limits{Rate: 2.5}, 3, "Burst 0 with Rate 2.5: a bucket of 3")
	wantLimited(t, s, audit, at(400*time.Millisecond), webhooks.Limits{Rate: 2.5}, 1, "a token every 400 ms")
	wantLimited(t, s, ledger, at(2*time.Hour), l, 3, "ledger's bucket refilled while audit's was spent")
}

// testTwoInstancesUnderCap: two instances of four workers each lease and
// run a capped handler's jobs concurrently, each worker holding a lease
// for a while: the leases held at once never exceed MaxRunning, which is
// reached, and every job runs. Mutation: the cap counted without seeing
// a concurrent caller's leases.
func testTwoInstancesUnderCap(t *testing.T, s webhooks.InboxStore) {
	const (
		events  = 100
		workers = 2 * 4
		limit   = 2
	)
	var clock atomic.Int64 // µs after base, one per call
	now := func() time.Time { return base.Add(time.Duration(clock.Add(1)) * time.Microsecond) }
	enqueueJobs(t, s, "e", events, base, ledger)
	var (
		running, high, done atomic.Int64
		failed              atomic.Bool
		fail                = func(format string, args ...any) {
			if failed.CompareAndSwap(false, true) {
				t.Errorf(format, args...)
			}
		}
		wg sync.WaitGroup
	)
	deadline := time.Now().Add(time.Minute)
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 0xca9))
			for done.Load() < events && !failed.Load() {
				if time.Now().After(deadline) {
					fail("after a minute, %d of %d jobs ran", done.Load(), events)
					return
				}
				leases, err := s.Acquire(t.Context(), webhooks.AcquireRequest{Now: now(), LeaseDuration: leaseFor, Max: 2,
					Worker: fmt.Sprintf("instance-%d/worker-%d", w/4, w%4), Version: version, Handler: ledger,
					Limits: webhooks.Limits{MaxRunning: limit}})
				if err != nil {
					fail("Acquire: %v", err)
					return
				}
				if len(leases) == 0 {
					time.Sleep(time.Millisecond) // at the cap: a lease ends within a few hundred µs
					continue
				}
				n := running.Add(int64(len(leases)))
				for h := high.Load(); n > h && !high.CompareAndSwap(h, n); h = high.Load() {
				}
				time.Sleep(time.Duration(rng.IntN(300)) * time.Microsecond)
				running.Add(-int64(len(leases))) // before the store sees the settlement
				for _, l := range leases {
					if err := s.Settle(t.Context(), succeed(l, now())); err != nil {
						fail("Settle(%s): %v", l.Key(), err)
						return
					}
					done.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		return
	}
	if h := high.Load(); h != limit {
		t.Errorf("leases held at once, at most: %d; want %d (MaxRunning), reached and never exceeded", h, limit)
	}
}

// testTwoInstancesUnderRate: two instances acquire a rate-limited
// handler's jobs at the same moments, every 200 ms of a 10 s run: together
// they lease the Rate's 500, plus the full bucket they start with, no
// more. Mutation: a bucket read by both callers before either spends.
func testTwoInstancesUnderRate(t *testing.T, s webhooks.InboxStore) {
	const (
		rate, burst = 50, 10
		run         = 10 * time.Second
		step        = 200 * time.Millisecond
	)
	l := webhooks.Limits{Rate: rate, Burst: burst}
	enqueueJobs(t, s, "e", 600, base, ledger)
	var leased atomic.Int64
	for now := base; !now.After(base.Add(run)); now = now.Add(step) {
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				leases, err := s.Acquire(t.Context(), webhooks.AcquireRequest{Now: now, LeaseDuration: leaseFor, Max: 100,
					Worker: worker, Version: version, Handler: ledger, Limits: l})
				if err != nil {
					t.Errorf("Acquire at %s: %v", fmtTime(now), err)
				}
				leased.Add(int64(len(leases)))
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
	}
	if n, want := leased.Load(), int64(rate*run/time.Second); n < want || n > want+burst {
		t.Errorf("two instances leased %d over %v at Rate %d, Burst %d; want %d to %d (the rate's, plus the first full bucket)", n, run, rate, burst, want, want+burst)
	}
}
