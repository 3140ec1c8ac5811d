package storetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

var acquireCases = []inboxCase{
	{"AcquireEmpty", testAcquireEmpty},
	{"AcquireLeases", testAcquireLeases},
	{"AcquireNotYetDue", testAcquireNotYetDue},
	{"AcquireDueOrder", testAcquireDueOrder},
	{"AcquireMax", testAcquireMax},
	{"AcquireDueOnly", testAcquireDueOnly},
	{"AcquireInvalidRequest", testAcquireInvalidRequest},
	{"AcquireExclusive", testAcquireExclusive},
	{"AcquireExpiredLease", testAcquireExpiredLease},
	{"ReacquireExpiredExclusive", testReacquireExpiredExclusive},
	{"SettleRacesReacquire", testSettleRacesReacquire},
	{"LeaseDurationMustBePositive", testLeaseDurationMustBePositive},
	{"AcquireWithAnID", testAcquireWithAnID},
}

// testAcquireWithAnID: an acquisition with an ID leases as one without:
// the longest due first, fresh tokens, attempts counted; another under the
// same ID leases other items (Acquire never returns leases it granted
// before, whatever its ID).
func testAcquireWithAnID(t *testing.T, s webhooks.InboxStore) {
	envs := enqueueN(t, s, 3)
	now, d := at(10*time.Second), 30*time.Second
	got := acquireID(t, s, "acq-1", now, d, 2)
	if len(got) != 2 || got[0].Key() != envs[0].Key || got[1].Key() != envs[1].Key {
		t.Fatalf("Acquire(Max 2, ID acq-1) leased %s; want evt_0 then evt_1, the longest due first", leaseKeys(got))
	}
	for i, l := range got {
		if l.Token == "" || l.Attempt != 1 || l.Reclaimed {
			t.Errorf("lease on %s: Token %q, Attempt %d, Reclaimed %t; want a token, 1, false", l.Key(), l.Token, l.Attempt, l.Reclaimed)
		}
		want := leasedItem(enqueuedItem(envs[i]), now, d)
		checkItem(t, "Lease.Item", l.Item, want)
		checkStored(t, s, want, "after Acquire with an ID")
	}
	if got[0].Token == got[1].Token {
		t.Errorf("two leases share the token %q; want one each", got[0].Token)
	}
	if rest := acquireID(t, s, "acq-1", now, d, 2); len(rest) != 1 || rest[0].Key() != envs[2].Key {
		t.Fatalf("a second Acquire(Max 2) under the same ID leased %s; want evt_2, the one left due", leaseKeys(rest))
	}
	wantNothingDue(t, s, now, "every item is leased")
}

func testAcquireEmpty(t *testing.T, s webhooks.InboxStore) {
	wantNothingDue(t, s, at(time.Hour), "the store is empty")
}

func testAcquireLeases(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), `{"id":"evt_1"}`, base)
	mustEnqueue(t, s, env)
	now, d := at(time.Second), 30*time.Second
	l := mustAcquire(t, s, now, d)

	if l.Token == "" {
		t.Errorf("Lease.Token is empty; want a token only this lease holds")
	}
	if !l.ExpiresAt.Equal(now.Add(d)) {
		t.Errorf("Lease.ExpiresAt = %s; want Now+LeaseDuration = %s", fmtTime(l.ExpiresAt), fmtTime(now.Add(d)))
	}
	if l.Attempt != 1 {
		t.Errorf("Lease.Attempt = %d; want 1 on the first acquisition", l.Attempt)
	}
	if l.Reclaimed {
		t.Errorf("Lease.Reclaimed = true for a pending item; want false (no earlier lease expired)")
	}
	want := leasedItem(enqueuedItem(env), now, d)
	checkItem(t, "Lease.Item", l.Item, want)
	checkStored(t, s, want, "after Acquire")
}

func testAcquireNotYetDue(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("later"), "later", at(10*time.Second))
	mustEnqueue(t, s, env)
	wantNothingDue(t, s, at(10*time.Second-time.Microsecond), "the only item is due 1µs later")
	checkStored(t, s, enqueuedItem(env), "after an Acquire that found nothing due")
	mustAcquireKey(t, s, env.Key, at(10*time.Second), leaseFor) // due when NextAttemptAt == Now
}

func testAcquireDueOrder(t *testing.T, s webhooks.InboxStore) {
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
	if !slices.Equal(got, want) {
		t.Fatalf("Acquire(Max 1) order:%s\nwant the smallest due time first (NextAttemptAt, or LeaseExpiresAt for an expired lease):%s",
			fmtKeys(got), fmtKeys(want))
	}
	wantNothingDue(t, s, at(time.Hour), "every item is leased until base+1h1m")
}

func testAcquireMax(t *testing.T, s webhooks.InboxStore) {
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
	for call, wantLen := range []int{4, 4, 2, 0} {
		leases, err := acquire(t, s, now, d, 4)
		if err != nil {
			t.Fatalf("Acquire(Max 4) #%d: %v; want no error", call+1, err)
		}
		if len(leases) != wantLen {
			t.Fatalf("Acquire(Max 4) #%d returned %d leases; want %d (10 due items, 4 per call)", call+1, len(leases), wantLen)
		}
		for _, l := range leases {
			got = append(got, l.Key())
			if tokens[l.Token] {
				t.Errorf("Acquire reused token %q; want a fresh token per lease", l.Token)
			}
			tokens[l.Token] = true
			if l.Attempt != 1 || l.Reclaimed || !l.ExpiresAt.Equal(now.Add(d)) {
				t.Errorf("Acquire lease on %s: Attempt %d, Reclaimed %t, ExpiresAt %s; want 1, false, %s",
					l.Key(), l.Attempt, l.Reclaimed, fmtTime(l.ExpiresAt), fmtTime(now.Add(d)))
			}
			want := leasedItem(enqueuedItem(envs[l.Key()]), now, d)
			checkItem(t, "Acquire Lease.Item", l.Item, want)
			checkStored(t, s, want, "after Acquire(Max 4)")
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("Acquire(Max 4) leased, over all calls:%s\nwant the longest due first:%s", fmtKeys(got), fmtKeys(want))
	}
	wantNothingDue(t, s, now.Add(d-time.Microsecond), "every lease is valid for 1µs more")
	if l := mustAcquire(t, s, now.Add(d), leaseFor); l.Attempt != 2 || !l.Reclaimed {
		t.Errorf("Acquire after the leases expired: Attempt %d, Reclaimed %t; want 2, true", l.Attempt, l.Reclaimed)
	}
}

func testAcquireDueOnly(t *testing.T, s webhooks.InboxStore) {
	a := envelope(key("a"), "a", base)
	mustEnqueue(t, s, a)
	first := mustAcquireKey(t, s, a.Key, base, 5*time.Second) // due again at base+5s
	mustEnqueue(t, s, envelope(key("b"), "b", at(time.Second)))
	mustEnqueue(t, s, envelope(key("c"), "c", at(10*time.Second)))
	mustEnqueue(t, s, envelope(key("d"), "d", at(10*time.Second+time.Microsecond)))

	leases, err := acquire(t, s, at(10*time.Second), time.Minute, 10)
	if err != nil {
		t.Fatalf("Acquire(Max 10): %v; want no error", err)
	}
	got := make([]webhooks.InboxKey, len(leases))
	for i, l := range leases {
		got[i] = l.Key()
	}
	want := []webhooks.InboxKey{key("b"), key("a"), key("c")}
	if !slices.Equal(got, want) {
		t.Fatalf("Acquire(Now base+10s, Max 10) leased:%s\nwant the due items only, smallest due time first (d is due 1µs later):%s", fmtKeys(got), fmtKeys(want))
	}
	for i, l := range leases {
		if wantReclaimed := i == 1; l.Reclaimed != wantReclaimed {
			t.Errorf("Acquire lease on %s: Reclaimed %t; want %t (only a's lease had expired)", l.Key(), l.Reclaimed, wantReclaimed)
		}
	}
	if la := leases[1]; la.Attempt != 2 || la.Token == first.Token {
		t.Errorf("Acquire of an expired lease: Attempt %d, token reused %t; want Attempt 2 and a fresh token", la.Attempt, la.Token == first.Token)
	}
	wantLeaseLost(t, s.Settle(t.Context(), succeed(first, at(11*time.Second))), "Settle(succeeded) with the token a later acquisition replaced")
}

func testAcquireInvalidRequest(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	for _, c := range []struct {
		d   time.Duration
		max int
	}{{leaseFor, 0}, {leaseFor, -1}, {0, 10}, {-time.Second, 10}, {0, 0}} {
		leases, err := acquire(t, s, at(time.Second), c.d, c.max)
		if err == nil || len(leases) != 0 {
			t.Errorf("Acquire(LeaseDuration %v, Max %d) = (%d leases, %v); want no leases and an error: LeaseDuration must be positive and Max at least 1", c.d, c.max, len(leases), err)
		}
	}
	checkStored(t, s, enqueuedItem(env), "after Acquire with invalid requests (nothing may change)")
	if l := mustAcquire(t, s, at(time.Second), leaseFor); l.Attempt != 1 {
		t.Errorf("Acquire after invalid requests: Lease.Attempt = %d; want 1 (they counted nothing)", l.Attempt)
	}
}

// acquireUntilNone runs workers acquirers at once, worker w leasing up to
// max(w) items at now for d per call until a call leases nothing, and
// returns what each got.
func acquireUntilNone(t *testing.T, s webhooks.InboxStore, workers int, now time.Time, d time.Duration, max func(w int) int) [][]*webhooks.Lease {
	got := make([][]*webhooks.Lease, workers)
	runConcurrently(workers, func(w int) {
		for {
			leases, err := acquire(t, s, now, d, max(w))
			if err != nil {
				t.Errorf("concurrent Acquire(Max %d): %v; want no error", max(w), err)
				return
			}
			if len(leases) > max(w) {
				t.Errorf("Acquire(Max %d) returned %d leases; want at most %d", max(w), len(leases), max(w))
			}
			if len(leases) == 0 {
				return
			}
			got[w] = append(got[w], leases...)
		}
	})
	return got
}

// testAcquireExclusive: concurrent acquirers, one item or seven a call,
// lease every item once; each lease settles.
func testAcquireExclusive(t *testing.T, s webhooks.InboxStore) {
	const items, workers = 100, 20
	for i := range items {
		mustEnqueue(t, s, envelope(key(fmt.Sprintf("evt_%03d", i)), fmt.Sprint(i), at(time.Duration(i)*time.Millisecond)))
	}
	now := at(time.Minute)
	got := acquireUntilNone(t, s, workers, now, time.Hour, func(w int) int { return 1 + 6*(w%2) })
	leases := checkExclusive(t, "concurrent Acquire(Max 1 and 7)", got, items)
	wantNothingDue(t, s, now, "every item is leased for an hour")
	for _, l := range leases {
		if err := s.Settle(t.Context(), succeed(l, now)); err != nil {
			t.Errorf("Settle(succeeded) of %s with a lease from concurrent Acquire: %v; want no error (each lease must be current)", l.Key(), err)
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
			if l.Attempt != 1 || l.Reclaimed {
				t.Errorf("%s: %s leased with Attempt %d, Reclaimed %t; want 1, false (no item may be leased twice)", what, l.Key(), l.Attempt, l.Reclaimed)
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

func testAcquireExpiredLease(t *testing.T, s webhooks.InboxStore) {
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
	if !second.Reclaimed {
		t.Errorf("re-acquisition after expiry: Lease.Reclaimed = false; want true (the earlier lease expired unsettled)")
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
	now := at(time.Second)
	l := mustAcquireKey(t, s, env.Key, now, leaseFor)
	want := leasedItem(enqueuedItem(env), now, leaseFor)
	for _, d := range []time.Duration{0, -time.Second} {
		if err := extend(t, s, l, at(2*time.Second), d); err == nil {
			t.Errorf("ExtendLease(Duration %v) = nil; want an error: the duration must be positive", d)
		}
		if !l.ExpiresAt.Equal(now.Add(leaseFor)) {
			t.Errorf("ExtendLease(Duration %v) that failed set Lease.ExpiresAt to %s; want it unchanged at %s", d, fmtTime(l.ExpiresAt), fmtTime(now.Add(leaseFor)))
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
	got := acquireUntilNone(t, s, workers, now, time.Hour, func(w int) int { return 1 + w%3 })
	byKey := make(map[webhooks.InboxKey]int)
	for _, ls := range got {
		for _, l := range ls {
			byKey[l.Key()]++
			if l.Token == old[l.Key()] {
				t.Errorf("re-acquired %s with its expired token; want a fresh one", l.Key())
			}
			if l.Attempt != 2 || !l.Reclaimed {
				t.Errorf("re-acquired %s with Attempt %d, Reclaimed %t; want 2, true", l.Key(), l.Attempt, l.Reclaimed)
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

// testSettleRacesReacquire: the old holder settling (Settle or ExtendLease)
// while another acquirer takes over its expired lease. Exactly one side
// wins: either the settlement went through and nothing is due, or the
// acquirer got the item and the old token is fenced.
func testSettleRacesReacquire(t *testing.T, s webhooks.InboxStore) {
	const rounds = 40
	for i := range rounds {
		env := envelope(key(fmt.Sprintf("evt_%03d", i)), "p", base)
		mustEnqueue(t, s, env)
		first := mustAcquireKey(t, s, env.Key, base, time.Second)
		now := at(time.Second)
		var (
			settleErr, acquireErr error
			second                []*webhooks.Lease
		)
		extending := i%2 == 1
		runConcurrently(2, func(w int) {
			if w == 0 {
				if extending {
					settleErr = extend(t, s, first, now, time.Hour)
				} else {
					settleErr = s.Settle(t.Context(), succeed(first, now))
				}
				return
			}
			second, acquireErr = acquire(t, s, now, time.Hour, 1)
		})
		if acquireErr != nil {
			t.Fatalf("Acquire racing a settlement: %v", acquireErr)
		}
		switch {
		case settleErr == nil && len(second) > 0:
			t.Errorf("round %d: the old holder's settlement went through and another acquirer also got %s; want exactly one winner", i, second[0].Key())
		case settleErr != nil && len(second) == 0:
			t.Errorf("round %d: the settlement failed (%v) and nobody acquired the item; want exactly one winner", i, settleErr)
		case settleErr != nil:
			wantLeaseLost(t, settleErr, "settlement of a lease taken over concurrently")
			if err := s.Settle(t.Context(), succeed(second[0], now)); err != nil {
				t.Errorf("round %d: the new holder could not settle: %v", i, err)
			}
		default:
			if !extending {
				if o, ok := s.(ops.Store); ok {
					if it := mustGet(t, o, env.Key); it.State != webhooks.StateSucceeded {
						t.Errorf("round %d: Settle won, but the item is %s", i, it.State)
					}
				}
				wantNothingDue(t, s, at(24*time.Hour), "Settle won: the item succeeded, and the earlier rounds' items were settled")
			} else if err := s.Settle(t.Context(), succeed(first, now)); err != nil {
				t.Errorf("round %d: ExtendLease won, but its holder could not settle: %v", i, err)
			}
		}
	}
}
