package memstore

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

// TestRunningCountsTheUnexpiredLeases: through a random run of
// acquisitions, settlements of every outcome, extensions and the clock
// moving past leases, the due queue's count of running leases (what
// Limits.MaxRunning and the breaker's probe read) is always the number of
// the handler's jobs leased and unexpired, counted one by one. Mutation:
// a settlement leaves its entry in the heap of leases; an extension does
// not fix its place.
func TestRunningCountsTheUnexpiredLeases(t *testing.T) {
	s := NewInbox()
	ctx := t.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 200 {
		_, err := s.Enqueue(ctx, webhooks.Envelope{Key: webhooks.InboxKey{Provider: "p", Tenant: fmt.Sprint("t", i%7), EventID: fmt.Sprint("e", i)},
			EventType: "invoice.paid", ReceivedAt: now})
		if err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var held []*webhooks.Lease
	brute := func() int {
		n := 0
		for _, e := range s.jobs {
			if e.item.State == webhooks.StateLeased && e.item.LeaseExpiresAt.After(now) {
				n++
			}
		}
		return n
	}
	for step := range 2000 {
		switch k := rng.IntN(10); {
		case k < 3:
			leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: now, LeaseDuration: time.Duration(1+rng.IntN(60)) * time.Second, Max: 1 + rng.IntN(8)})
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, leases...)
		case k < 7 && len(held) > 0:
			i := rng.IntN(len(held))
			l := held[i]
			held = append(held[:i], held[i+1:]...)
			st := webhooks.Settlement{Lease: l, Now: now, Outcome: []webhooks.AttemptOutcome{webhooks.AttemptSucceeded, webhooks.AttemptRetried,
				webhooks.AttemptDeadLettered, webhooks.AttemptAbandoned}[rng.IntN(4)]}
			if st.Outcome == webhooks.AttemptRetried {
				st.RetryAt = now.Add(time.Duration(rng.IntN(30)) * time.Second)
			}
			if st.Outcome != webhooks.AttemptSucceeded && st.Outcome != webhooks.AttemptAbandoned {
				st.Failure = webhooks.Failure{Class: webhooks.FailureError, Message: "no"}
			}
			_ = s.Settle(ctx, st) // a lease lost to a takeover is refused: fine
		case k < 8 && len(held) > 0:
			l := held[rng.IntN(len(held))]
			_ = s.ExtendLease(ctx, webhooks.ExtendRequest{Lease: l, Now: now, Duration: time.Duration(1+rng.IntN(90)) * time.Second})
		default:
			now = now.Add(time.Duration(rng.IntN(20)) * time.Second)
		}
		s.mu.Lock()
		got, want := s.due[""].running(now), brute()
		s.mu.Unlock()
		if got != want {
			t.Fatalf("step %d: running(%s) = %d; want %d, the leased and unexpired jobs", step, now, got, want)
		}
	}
}
