package storetest

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	webhooks "github.com/hookinbox/webhooks"
)

var leaseCases = []inboxCase{
	{"AcquireNextEmpty", testAcquireNextEmpty},
	{"AcquireNextLeases", testAcquireNextLeases},
	{"AcquireNextNotYetDue", testAcquireNextNotYetDue},
	{"AcquireNextDueOrder", testAcquireNextDueOrder},
	{"AcquireNextExclusive", testAcquireNextExclusive},
	{"AcquireNextExpiredLease", testAcquireNextExpiredLease},
	{"ReacquireExpiredExclusive", testReacquireExpiredExclusive},
	{"SettleRacesReacquire", testSettleRacesReacquire},
	{"LeaseDurationMustBePositive", testLeaseDurationMustBePositive},
}

func testAcquireNextEmpty(t *testing.T, s webhooks.InboxStore) {
	wantNothingDue(t, s, at(time.Hour), "the store is empty")
}

func testAcquireNextLeases(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), `{"id":"evt_1"}`, base)
	mustEnqueue(t, s, env)
	now, d := at(time.Second), 30*time.Second
	l := mustAcquire(t, s, now, d)

	if id, err := uuid.Parse(l.Token); err != nil || id.Version() != 4 {
		t.Errorf("Lease.Token = %q; want a random (version 4) UUID string", l.Token)
	}
	if !l.ExpiresAt.Equal(now.Add(d)) {
		t.Errorf("Lease.ExpiresAt = %s; want now+d = %s", fmtTime(l.ExpiresAt), fmtTime(now.Add(d)))
	}
	if l.Attempt != 1 {
		t.Errorf("Lease.Attempt = %d; want 1 on the first acquisition", l.Attempt)
	}
	want := leasedItem(enqueuedItem(env), now, d)
	checkItem(t, "Lease.Item", l.Item, want)
	checkStored(t, s, want, "after AcquireNext")
}

func testAcquireNextNotYetDue(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("later"), "later", at(10*time.Second))
	mustEnqueue(t, s, env)
	wantNothingDue(t, s, at(10*time.Second-time.Microsecond), "the only item is due 1µs later")
	checkStored(t, s, enqueuedItem(env), "after an AcquireNext that found nothing due")
	mustAcquireKey(t, s, env.Key, at(10*time.Second), leaseFor) // due when NextAttemptAt == now
}

func testAcquireNextDueOrder(t *testing.T, s webhooks.InboxStore) {
	// "early" is leased at base for 10s, so it is due again at base+10s,
	// between "mid" (received at base+5s) and "late" (base+15s). Then five
	// more items are enqueued in shuffled order.
	early := envelope(key("early"), "early", base)
	mustEnqueue(t, s, early)
	mustAcquireKey(t, s, early.Key, base, 10*time.Second)
	mustEnqueue(t, s, envelope(key("late"), "late", at(15*time.Second)))
	mustEnqueue(t, s, envelope(key("mid"), "mid", at(5*time.Second)))
	want := []webhooks.InboxKey{key("mid"), key("early"), key("late")}
	offsets := []int{16, 17, 18, 19, 20}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(offsets), func(i, j int) { offsets[i], offsets[j] = offsets[j], offsets[i] })
	for _, o := range offsets {
		mustEnqueue(t, s, envelope(key(fmt.Sprintf("n%d", o)), "x", at(time.Duration(o)*time.Second)))
	}
	for o := 16; o <= 20; o++ {
		want = append(want, key(fmt.Sprintf("n%d", o)))
	}

	var got []webhooks.InboxKey
	for range want {
		got = append(got, mustAcquire(t, s, at(time.Hour), leaseFor).Key())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("AcquireNext order:%s\nwant the smallest due time first (NextAttemptAt, or LeaseExpiresAt for an expired lease):%s",
				fmtKeys(got), fmtKeys(want))
		}
	}
	wantNothingDue(t, s, at(time.Hour), "every item is leased until base+1h1m")
}

func testAcquireNextExclusive(t *testing.T, s webhooks.InboxStore) {
	const items, workers = 100, 20
	for i := range items {
		mustEnqueue(t, s, envelope(key(fmt.Sprintf("evt_%03d", i)), fmt.Sprint(i), at(time.Duration(i)*time.Millisecond)))
	}
	now := at(time.Minute)
	got := make([][]*webhooks.Lease, workers)
	runConcurrently(workers, func(w int) {
		for {
			l, err := s.AcquireNext(t.Context(), now, time.Hour)
			if err != nil {
				t.Errorf("concurrent AcquireNext: %v; want no error", err)
				return
			}
			if l == nil {
				return
			}
			got[w] = append(got[w], l)
		}
	})
	leases := checkExclusive(t, "concurrent AcquireNext", got, items)
	wantNothingDue(t, s, now, "every item is leased for an hour")
	for _, l := range leases {
		if err := s.Complete(t.Context(), l, now); err != nil {
			t.Errorf("Complete(%s) with a lease from concurrent AcquireNext: %v; want no error (each lease must be current)", l.Key(), err)
		}
	}
}

// checkExclusive requires the leases that concurrent acquirers got to cover
// exactly n items, each once, on attempt 1, with distinct tokens.
func checkExclusive(t *testing.T, what string, got [][]*webhooks.Lease, n int) []*webhooks.Lease {
	t.Helper()
	var all []*webhooks.Lease
	byKey := make(map[webhooks.InboxKey]int)
	tokens := make(map[string]webhooks.InboxKey)
	for _, ls := range got {
		for _, l := range ls {
			all = append(all, l)
			byKey[l.Key()]++
			if k, ok := tokens[l.Token]; ok {
				t.Errorf("%s: token %q issued for both %s and %s; want a fresh token per lease", what, l.Token, k, l.Key())
			}
			tokens[l.Token] = l.Key()
			if l.Attempt != 1 {
				t.Errorf("%s: %s leased with Attempt %d; want 1 (no item may be leased twice)", what, l.Key(), l.Attempt)
			}
		}
	}
	for k, c := range byKey {
		if c != 1 {
			t.Errorf("%s: %s leased %d times; want exactly once", what, k, c)
		}
	}
	if len(all) != n || len(byKey) != n {
		t.Errorf("%s: %d leases on %d distinct items; want %d leases on %d items", what, len(all), len(byKey), n, n)
	}
	return all
}

func testAcquireNextExpiredLease(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	first := mustAcquire(t, s, base, 10*time.Second)
	wantNothingDue(t, s, at(10*time.Second-time.Microsecond), "the lease is valid for 1µs more")

	now, d := at(10*time.Second), 20*time.Second
	second := mustAcquireKey(t, s, env.Key, now, d)
	if second.Token == first.Token {
		t.Errorf("re-acquisition after expiry reused token %q; want a fresh token", first.Token)
	}
	if second.Attempt != 2 {
		t.Errorf("re-acquisition after expiry: Lease.Attempt = %d; want 2 (the expired attempt counts)", second.Attempt)
	}
	if !second.ExpiresAt.Equal(now.Add(d)) {
		t.Errorf("re-acquisition after expiry: Lease.ExpiresAt = %s; want %s", fmtTime(second.ExpiresAt), fmtTime(now.Add(d)))
	}
	want := leasedItem(leasedItem(enqueuedItem(env), base, 10*time.Second), now, d)
	checkItem(t, "Lease.Item of the re-acquisition", second.Item, want)
	checkStored(t, s, want, "after re-acquisition of an expired lease")
}

func testLeaseDurationMustBePositive(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	for _, d := range []time.Duration{0, -time.Second} {
		l, err := s.AcquireNext(t.Context(), at(time.Second), d)
		if err == nil || l != nil {
			t.Errorf("AcquireNext(d=%v) = (%v, %v); want (nil, an error): the lease duration must be positive", d, l, err)
		}
	}
	checkStored(t, s, enqueuedItem(env), "after AcquireNext with a non-positive duration (nothing may change)")

	now := at(time.Second)
	l := mustAcquireKey(t, s, env.Key, now, leaseFor)
	want := leasedItem(enqueuedItem(env), now, leaseFor)
	for _, d := range []time.Duration{0, -time.Second} {
		if err := s.ExtendLease(t.Context(), l, at(2*time.Second), d); err == nil {
			t.Errorf("ExtendLease(d=%v) = nil; want an error: the duration must be positive", d)
		}
		if !l.ExpiresAt.Equal(now.Add(leaseFor)) {
			t.Errorf("ExtendLease(d=%v) that failed set Lease.ExpiresAt to %s; want it unchanged at %s", d, fmtTime(l.ExpiresAt), fmtTime(now.Add(leaseFor)))
		}
	}
	checkStored(t, s, want, "after ExtendLease with a non-positive duration (nothing may change)")
}

// testReacquireExpiredExclusive: many acquirers racing for items whose leases
// all expired at once each get a distinct item, exactly once.
func testReacquireExpiredExclusive(t *testing.T, s webhooks.InboxStore) {
	const items, workers = 60, 12
	for i := range items {
		mustEnqueue(t, s, envelope(key(fmt.Sprintf("evt_%03d", i)), fmt.Sprint(i), base))
	}
	old := make(map[webhooks.InboxKey]string)
	for range items {
		l := mustAcquire(t, s, base, 10*time.Second)
		old[l.Key()] = l.Token
	}
	now := at(10 * time.Second)
	got := make([][]*webhooks.Lease, workers)
	runConcurrently(workers, func(w int) {
		for {
			l, err := s.AcquireNext(t.Context(), now, time.Hour)
			if err != nil {
				t.Errorf("concurrent AcquireNext of expired leases: %v; want no error", err)
				return
			}
			if l == nil {
				return
			}
			got[w] = append(got[w], l)
		}
	})
	byKey := make(map[webhooks.InboxKey]int)
	for _, ls := range got {
		for _, l := range ls {
			byKey[l.Key()]++
			if l.Token == old[l.Key()] {
				t.Errorf("re-acquired %s with its expired token; want a fresh one", l.Key())
			}
			if l.Attempt != 2 {
				t.Errorf("re-acquired %s with Attempt %d; want 2", l.Key(), l.Attempt)
			}
		}
	}
	if len(byKey) != items {
		t.Errorf("concurrent re-acquisition covered %d of %d expired items", len(byKey), items)
	}
	for k, c := range byKey {
		if c != 1 {
			t.Errorf("expired %s re-acquired %d times by concurrent acquirers; want exactly once", k, c)
		}
	}
}

// testSettleRacesReacquire: the old holder settling (Complete or
// ExtendLease) while another acquirer takes over its expired lease. Exactly
// one side wins: either the settle succeeded and nothing is due, or the
// acquirer got the item and the old token is fenced.
func testSettleRacesReacquire(t *testing.T, s webhooks.InboxStore) {
	const rounds = 40
	for i := range rounds {
		env := envelope(key(fmt.Sprintf("evt_%03d", i)), "p", base)
		mustEnqueue(t, s, env)
		first := mustAcquireKey(t, s, env.Key, base, time.Second)
		now := at(time.Second)
		var settleErr, acquireErr error
		var second *webhooks.Lease
		extend := i%2 == 1
		runConcurrently(2, func(w int) {
			if w == 0 {
				if extend {
					settleErr = s.ExtendLease(t.Context(), first, now, time.Hour)
				} else {
					settleErr = s.Complete(t.Context(), first, now)
				}
				return
			}
			second, acquireErr = s.AcquireNext(t.Context(), now, time.Hour)
		})
		if acquireErr != nil {
			t.Fatalf("AcquireNext racing a settle: %v", acquireErr)
		}
		switch {
		case settleErr == nil && second != nil:
			t.Errorf("round %d: the old holder's settle succeeded and another acquirer also got %s; want exactly one winner", i, second.Key())
		case settleErr != nil && second == nil:
			t.Errorf("round %d: the settle failed (%v) and nobody acquired the item; want exactly one winner", i, settleErr)
		case settleErr != nil:
			wantLeaseLost(t, settleErr, "settle of a lease taken over concurrently")
			if err := s.Complete(t.Context(), second, now); err != nil {
				t.Errorf("round %d: the new holder could not complete: %v", i, err)
			}
		default:
			if !extend {
				if it := mustGet(t, s, env.Key); it.State != webhooks.StateSucceeded {
					t.Errorf("round %d: Complete won, but the item is %s", i, it.State)
				}
			} else if err := s.Complete(t.Context(), first, now); err != nil {
				t.Errorf("round %d: ExtendLease won, but its holder could not complete: %v", i, err)
			}
		}
	}
}
