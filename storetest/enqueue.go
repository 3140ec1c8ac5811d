package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

var enqueueCases = []inboxCase{
	{"EnqueueNew", testEnqueueNew},
	{"EnqueueDuplicate", testEnqueueDuplicate},
	{"EnqueueConflict", testEnqueueConflict},
	{"EnqueueReportsCurrentState", testEnqueueReportsCurrentState},
	{"EnqueueConcurrentSameKey", testEnqueueConcurrentSameKey},
	{"EnqueueConcurrentConflictingPayloads", testEnqueueConcurrentConflictingPayloads},
	{"EnqueueKeysAreExact", testEnqueueKeysAreExact},
	{"APIVersionKept", testAPIVersionKept},
}

// testAPIVersionKept: the API version of the first delivery is the item's;
// later deliveries do not change it, whatever theirs.
func testAPIVersionKept(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), "p", base)
	env.APIVersion = "2023-10-16"
	mustEnqueue(t, s, env)
	none := envelope(key("evt_2"), "q", base)
	none.APIVersion = ""
	mustEnqueue(t, s, none)
	again := env
	again.APIVersion = "2025-06-30"
	again.ReceivedAt = at(time.Second)
	wantEnqueue(t, s, again, webhooks.EnqueueResult{Outcome: webhooks.EnqueueDuplicate, State: webhooks.StatePending}, "with another API version")
	leases, err := acquire(t, s, at(time.Second), leaseFor, 2)
	if err != nil || len(leases) != 2 {
		t.Fatalf("Acquire(Max 2) = %d leases, %v; want both items", len(leases), err)
	}
	for _, l := range leases {
		want := map[webhooks.InboxKey]string{env.Key: "2023-10-16", none.Key: ""}[l.Key()]
		if l.Item.APIVersion != want {
			t.Errorf("Lease.Item.APIVersion of %s = %q; want %q, the first delivery's", fmtKey(l.Key()), l.Item.APIVersion, want)
		}
		want2 := enqueuedItem(map[webhooks.InboxKey]webhooks.Envelope{env.Key: env, none.Key: none}[l.Key()])
		if l.Key() == env.Key {
			want2.DuplicateCount, want2.LastSeenAt = 1, again.ReceivedAt
		}
		checkStored(t, s, leasedItem(want2, at(time.Second), leaseFor), "after a duplicate with another API version")
	}
}

func testEnqueueNew(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), `{"id":"evt_1"}`, base)
	res, err := s.Enqueue(t.Context(), env)
	if err != nil {
		t.Fatalf("Enqueue of a new key: %v; want no error", err)
	}
	want := webhooks.EnqueueResult{Outcome: webhooks.EnqueueNew, State: webhooks.StatePending}
	if res != want {
		t.Errorf("Enqueue of a new key = %+v; want %+v", res, want)
	}
	checkStored(t, s, enqueuedItem(env), "after Enqueue")
}

func testEnqueueDuplicate(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), `{"id":"evt_1"}`, base)
	mustEnqueue(t, s, env)
	want := enqueuedItem(env)

	for i := 1; i <= 2; i++ {
		// A redelivery: same key and digest, other metadata. Only the
		// duplicate count and last-seen time may change.
		again := env
		again.ReceivedAt = at(time.Duration(i) * time.Second)
		again.OccurredAt = at(time.Hour)
		again.EventType = "invoice.changed"
		again.KeyID = "other-key"
		again.Headers = map[string][]string{"X-Redelivery": {"yes"}}
		res, err := s.Enqueue(t.Context(), again)
		if err != nil {
			t.Fatalf("Enqueue duplicate #%d: %v; want no error", i, err)
		}
		wantRes := webhooks.EnqueueResult{Outcome: webhooks.EnqueueDuplicate, State: webhooks.StatePending}
		if res != wantRes {
			t.Errorf("Enqueue duplicate #%d = %+v; want %+v", i, res, wantRes)
		}
		want.DuplicateCount = i
		want.LastSeenAt = again.ReceivedAt
		checkStored(t, s, want, "after a duplicate Enqueue (only DuplicateCount and LastSeenAt change)")
	}
	l := mustAcquireKey(t, s, env.Key, at(time.Hour), leaseFor)
	checkItem(t, "Lease.Item after two duplicates", l.Item, leasedItem(want, at(time.Hour), leaseFor))
}

func testEnqueueConflict(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), `{"id":"evt_1","amount":1}`, base)
	mustEnqueue(t, s, env)

	other := envelope(key("evt_1"), `{"id":"evt_1","amount":2}`, at(time.Second))
	res, err := s.Enqueue(t.Context(), other)
	if err != nil {
		t.Fatalf("Enqueue with another payload digest: %v; want no error", err)
	}
	want := webhooks.EnqueueResult{Outcome: webhooks.EnqueueConflict, State: webhooks.StatePending}
	if res != want {
		t.Errorf("Enqueue with another payload digest = %+v; want %+v", res, want)
	}
	checkStored(t, s, enqueuedItem(env), "after a conflicting Enqueue (nothing may change)")
	l := mustAcquireKey(t, s, env.Key, at(time.Hour), leaseFor)
	checkItem(t, "Lease.Item after a conflicting Enqueue (the first delivery's, unchanged)", l.Item, leasedItem(enqueuedItem(env), at(time.Hour), leaseFor))
}

func testEnqueueReportsCurrentState(t *testing.T, s webhooks.InboxStore) {
	ctx := t.Context()
	check := func(env webhooks.Envelope, state webhooks.State) {
		t.Helper()
		res, err := s.Enqueue(ctx, env)
		if err != nil {
			t.Fatalf("Enqueue duplicate of a %s item: %v; want no error", state, err)
		}
		if want := (webhooks.EnqueueResult{Outcome: webhooks.EnqueueDuplicate, State: state}); res != want {
			t.Errorf("Enqueue duplicate of a %s item = %+v; want %+v", state, res, want)
		}
		conflict := env
		conflict.Payload = []byte("something else")
		conflict.PayloadSHA256[0] ^= 0xff
		res, err = s.Enqueue(ctx, conflict)
		if err != nil {
			t.Fatalf("Enqueue conflict on a %s item: %v; want no error", state, err)
		}
		if want := (webhooks.EnqueueResult{Outcome: webhooks.EnqueueConflict, State: state}); res != want {
			t.Errorf("Enqueue conflict on a %s item = %+v; want %+v", state, res, want)
		}
	}

	done := envelope(key("done"), "done", base)
	mustEnqueue(t, s, done)
	check(done, webhooks.StatePending)
	l := mustAcquireKey(t, s, done.Key, at(time.Second), leaseFor)
	check(done, webhooks.StateLeased)
	mustSettle(t, s, succeed(l, at(2*time.Second)))
	check(done, webhooks.StateSucceeded)
	wantNothingDue(t, s, at(time.Hour), "a duplicate of a succeeded item must not make it pending again")

	dead := envelope(key("dead"), "dead", at(3*time.Second))
	makeDead(t, s, dead, at(4*time.Second))
	check(dead, webhooks.StateDead)
	wantNothingDue(t, s, at(time.Hour), "a duplicate of a dead item must not make it pending again")

	if o, ok := s.(ops.Store); ok {
		if got := mustGet(t, o, done.Key); got.DuplicateCount != 3 || got.State != webhooks.StateSucceeded {
			t.Errorf("Get(done) after 3 duplicates and 3 conflicts: DuplicateCount %d, State %s; want 3, %s",
				got.DuplicateCount, got.State, webhooks.StateSucceeded)
		}
	}
}

func testEnqueueConcurrentSameKey(t *testing.T, s webhooks.InboxStore) {
	const n = 50
	env := envelope(key("evt_race"), `{"id":"evt_race"}`, base)
	outcomes := make([]webhooks.EnqueueOutcome, n)
	runConcurrently(n, func(i int) {
		res, err := s.Enqueue(t.Context(), env)
		if err != nil {
			t.Errorf("concurrent Enqueue #%d: %v; want no error", i, err)
		}
		outcomes[i] = res.Outcome
	})
	counts := countOutcomes(outcomes)
	if counts[webhooks.EnqueueNew] != 1 || counts[webhooks.EnqueueDuplicate] != n-1 {
		t.Errorf("%d concurrent Enqueue of one key: outcomes %v; want exactly 1 new and %d duplicate", n, counts, n-1)
	}
	want := enqueuedItem(env)
	want.DuplicateCount = n - 1
	checkStored(t, s, want, "after concurrent Enqueue of one key")
	mustAcquireKey(t, s, env.Key, base, leaseFor)
	wantNothingDue(t, s, base, "concurrent Enqueue of one key must store exactly one item")
}

func testEnqueueConcurrentConflictingPayloads(t *testing.T, s webhooks.InboxStore) {
	const n = 40
	envs := [2]webhooks.Envelope{
		envelope(key("evt_race"), "payload A", base),
		envelope(key("evt_race"), "payload B", base),
	}
	outcomes := make([]webhooks.EnqueueOutcome, n)
	runConcurrently(n, func(i int) {
		res, err := s.Enqueue(t.Context(), envs[i%2])
		if err != nil {
			t.Errorf("concurrent Enqueue #%d: %v; want no error", i, err)
		}
		outcomes[i] = res.Outcome
	})
	winner, news := -1, 0
	for i, o := range outcomes {
		if o == webhooks.EnqueueNew {
			winner, news = i%2, news+1
		}
	}
	if news != 1 {
		t.Fatalf("%d concurrent Enqueue of one key: %d reported new; want exactly 1", n, news)
	}
	for i, o := range outcomes {
		switch {
		case o == webhooks.EnqueueNew:
		case i%2 == winner && o != webhooks.EnqueueDuplicate:
			t.Errorf("Enqueue #%d of the stored payload = %v; want %v (or new for exactly one call)", i, o, webhooks.EnqueueDuplicate)
		case i%2 != winner && o != webhooks.EnqueueConflict:
			t.Errorf("Enqueue #%d of the other payload = %v; want %v", i, o, webhooks.EnqueueConflict)
		}
	}
	want := enqueuedItem(envs[winner])
	want.DuplicateCount = n/2 - 1
	checkStored(t, s, want, "after concurrent Enqueue of two payloads (the one reported new is stored; conflicts change nothing)")
	l := mustAcquireKey(t, s, want.Key, base, leaseFor)
	checkItem(t, "Lease.Item after concurrent Enqueue of two payloads", l.Item, leasedItem(want, base, leaseFor))
}

func testEnqueueKeysAreExact(t *testing.T, s webhooks.InboxStore) {
	keys := []webhooks.InboxKey{
		{Provider: "acme", Tenant: "", EventID: "evt_1"},
		{Provider: "acme", Tenant: "t1", EventID: "evt_1"},
		{Provider: "Acme", Tenant: "t1", EventID: "evt_1"},
		{Provider: "acme", Tenant: "T1", EventID: "evt_1"},
		{Provider: "acme", Tenant: "t1", EventID: "EVT_1"},
		{Provider: "acme", Tenant: "t1", EventID: "evt_1 "},
		{Provider: "acme/t1", Tenant: "", EventID: "evt_1"},
		{Provider: "other", Tenant: "", EventID: "evt_1"},
	}
	for i, k := range keys {
		env := envelope(k, string(rune('a'+i)), at(time.Duration(i)*time.Second))
		res, err := s.Enqueue(t.Context(), env)
		if err != nil {
			t.Fatalf("Enqueue(%s): %v; want no error", fmtKey(k), err)
		}
		if res.Outcome != webhooks.EnqueueNew {
			t.Errorf("Enqueue(%s) = %v; want %v: keys are exact and byte-wise, tenant \"\" is its own tenant",
				fmtKey(k), res.Outcome, webhooks.EnqueueNew)
		}
	}
	for i, k := range keys {
		checkStored(t, s, enqueuedItem(envelope(k, string(rune('a'+i)), at(time.Duration(i)*time.Second))), "of one of several similar keys")
	}
}

// runConcurrently calls f(0) … f(n-1) on n goroutines released at once, and
// waits for them.
func runConcurrently(n int, f func(i int)) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			f(i)
		})
	}
	close(start)
	wg.Wait()
}

func countOutcomes[O comparable](outcomes []O) map[O]int {
	m := make(map[O]int)
	for _, o := range outcomes {
		m[o]++
	}
	return m
}

// canceledContext returns a context that is already canceled.
func canceledContext() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// wantCanceled requires err to wrap context.Canceled.
func wantCanceled(t *testing.T, err error, call string) {
	t.Helper()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("%s with a canceled context: error %v; want an error wrapping context.Canceled", call, err)
	}
}
