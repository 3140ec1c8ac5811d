package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

var batchCases = []batchCase{
	{"AcquireBatchMax", testAcquireBatchMax},
	{"AcquireBatchDueOnly", testAcquireBatchDueOnly},
	{"AcquireBatchInvalidArguments", testAcquireBatchInvalidArguments},
	{"AcquireBatchConcurrent", testAcquireBatchConcurrent},
}

func testAcquireBatchMax(t *testing.T, s webhooks.InboxStore, b webhooks.BatchAcquirer) {
	var want []webhooks.InboxKey
	envs := map[webhooks.InboxKey]webhooks.Envelope{}
	for _, i := range []int{3, 7, 0, 9, 5, 1, 8, 2, 6, 4} {
		env := envelope(key(fmt.Sprintf("evt_%d", i)), fmt.Sprint(i), at(time.Duration(i)*time.Second))
		envs[env.Key] = env
		mustEnqueue(t, s, env)
	}
	for i := range 10 {
		want = append(want, key(fmt.Sprintf("evt_%d", i)))
	}

	now, d := at(time.Minute), 30*time.Second
	var got []webhooks.InboxKey
	tokens := make(map[string]bool)
	for batch, wantLen := range []int{4, 4, 2, 0} {
		leases, err := b.AcquireBatch(t.Context(), now, d, 4)
		if err != nil {
			t.Fatalf("AcquireBatch(max=4) #%d: %v; want no error", batch+1, err)
		}
		if len(leases) != wantLen {
			t.Fatalf("AcquireBatch(max=4) #%d returned %d leases; want %d (10 due items, 4 per batch)", batch+1, len(leases), wantLen)
		}
		for _, l := range leases {
			got = append(got, l.Key())
			if tokens[l.Token] {
				t.Errorf("AcquireBatch reused token %q; want a fresh token per lease", l.Token)
			}
			tokens[l.Token] = true
			if l.Attempt != 1 || !l.ExpiresAt.Equal(now.Add(d)) {
				t.Errorf("AcquireBatch lease on %s: Attempt %d, ExpiresAt %s; want 1, %s", l.Key(), l.Attempt, fmtTime(l.ExpiresAt), fmtTime(now.Add(d)))
			}
			want := leasedItem(enqueuedItem(envs[l.Key()]), now, d)
			checkItem(t, "AcquireBatch Lease.Item", l.Item, want)
			checkStored(t, s, want, "after AcquireBatch")
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("AcquireBatch leased, over all batches:%s\nwant the oldest due first:%s", fmtKeys(got), fmtKeys(want))
	}
	wantNothingDue(t, s, now.Add(d-time.Microsecond), "every batch lease is valid for 1µs more")
	if l := mustAcquire(t, s, now.Add(d), leaseFor); l.Attempt != 2 {
		t.Errorf("AcquireNext after the batch leases expired: Attempt %d; want 2", l.Attempt)
	}
}

func testAcquireBatchDueOnly(t *testing.T, s webhooks.InboxStore, b webhooks.BatchAcquirer) {
	a := envelope(key("a"), "a", base)
	mustEnqueue(t, s, a)
	first := mustAcquireKey(t, s, a.Key, base, 5*time.Second) // due again at base+5s
	mustEnqueue(t, s, envelope(key("b"), "b", at(time.Second)))
	mustEnqueue(t, s, envelope(key("c"), "c", at(10*time.Second)))
	mustEnqueue(t, s, envelope(key("d"), "d", at(10*time.Second+time.Microsecond)))

	leases, err := b.AcquireBatch(t.Context(), at(10*time.Second), time.Minute, 10)
	if err != nil {
		t.Fatalf("AcquireBatch: %v; want no error", err)
	}
	got := make([]webhooks.InboxKey, len(leases))
	for i, l := range leases {
		got[i] = l.Key()
	}
	want := []webhooks.InboxKey{key("b"), key("a"), key("c")}
	if !slices.Equal(got, want) {
		t.Fatalf("AcquireBatch(now=base+10s, max=10) leased:%s\nwant the due items only, smallest due time first (d is due 1µs later):%s", fmtKeys(got), fmtKeys(want))
	}
	if la := leases[1]; la.Attempt != 2 || la.Token == first.Token {
		t.Errorf("AcquireBatch of an expired lease: Attempt %d, token reused %t; want Attempt 2 and a fresh token", la.Attempt, la.Token == first.Token)
	}
	wantLeaseLost(t, s.Complete(t.Context(), first, at(11*time.Second)), "Complete with the token a batch re-acquisition replaced")
}

func testAcquireBatchInvalidArguments(t *testing.T, s webhooks.InboxStore, b webhooks.BatchAcquirer) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	for _, c := range []struct {
		d   time.Duration
		max int
	}{{leaseFor, 0}, {leaseFor, -1}, {0, 10}, {-time.Second, 10}} {
		leases, err := b.AcquireBatch(t.Context(), at(time.Second), c.d, c.max)
		if err == nil || len(leases) != 0 {
			t.Errorf("AcquireBatch(d=%v, max=%d) = (%d leases, %v); want no leases and an error: d and max must be positive", c.d, c.max, len(leases), err)
		}
	}
	checkStored(t, s, enqueuedItem(env), "after AcquireBatch with invalid arguments (nothing may change)")
	_, err := b.AcquireBatch(canceledContext(), at(time.Second), leaseFor, 10)
	wantCanceled(t, err, "AcquireBatch")
	checkStored(t, s, enqueuedItem(env), "after AcquireBatch with a canceled context (nothing may change)")
}

func testAcquireBatchConcurrent(t *testing.T, s webhooks.InboxStore, b webhooks.BatchAcquirer) {
	const items, workers, max = 60, 6, 7
	for i := range items {
		mustEnqueue(t, s, envelope(key(fmt.Sprintf("evt_%02d", i)), fmt.Sprint(i), at(time.Duration(i)*time.Millisecond)))
	}
	now := at(time.Minute)
	got := make([][]*webhooks.Lease, workers)
	runConcurrently(workers, func(w int) {
		for {
			leases, err := b.AcquireBatch(t.Context(), now, time.Hour, max)
			if err != nil {
				t.Errorf("concurrent AcquireBatch: %v; want no error", err)
				return
			}
			if len(leases) > max {
				t.Errorf("AcquireBatch(max=%d) returned %d leases; want at most %d", max, len(leases), max)
			}
			if len(leases) == 0 {
				return
			}
			got[w] = append(got[w], leases...)
		}
	})
	checkExclusive(t, "concurrent AcquireBatch", got, items)
	wantNothingDue(t, s, now, "every item is leased for an hour")
}
