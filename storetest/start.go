package storetest

import (
	"fmt"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// startCases pin webhooks.LeaseStarter for the stores that have it: a crash
// costs an attempt only to the leases that had started.
var startCases = []inboxCase{
	{"StartHoldsLeasesPastMaxMinusHold", testStartHoldsLeases},
	{"StartHoldRange", testStartHoldRange},
	{"StartWithoutHoldStartsEveryLease", testStartWithoutHold},
	{"StartHeldLeaseExpiredCostsNothing", testStartHeldLeaseExpiredCostsNothing},
	{"StartReclaimedLeaseIsHeld", testStartReclaimedLeaseIsHeld},
	{"StartDeadLetterUnstarted", testStartDeadLetterUnstarted},
	{"StartAbandonUnstarted", testStartAbandonUnstarted},
	{"StartSettleUnstartedStartsIt", testStartSettleUnstartedStartsIt},
	{"StartLeasesFencedAndIdempotent", testStartLeasesFencedAndIdempotent},
	{"StartReclaimedJudgedByDeadLetter", testStartReclaimedJudgedByDeadLetter},
	{"StartReclaimedGivenBackStaysReclaimed", testStartReclaimedGivenBackStaysReclaimed},
	{"StartStartedLeasesFirstAmongTies", testStartStartedLeasesFirstAmongTies},
}

// leaseStarter returns s as a webhooks.LeaseStarter: the cases of the
// group run only on one.
func leaseStarter(s webhooks.InboxStore) webhooks.LeaseStarter { return s.(webhooks.LeaseStarter) }

// acquireHold calls Acquire(Now: now, LeaseDuration: d, Max: max, Hold:
// true, Start: start), as the Processor acquires from a LeaseStarter with
// start free workers.
func acquireHold(t *testing.T, s webhooks.InboxStore, now time.Time, d time.Duration, max, start int) []*webhooks.Lease {
	t.Helper()
	return acquireWith(t, s, webhooks.AcquireRequest{Now: now, LeaseDuration: d, Max: max, Hold: true, Start: start, Worker: worker, Version: version})
}

// start requires StartLeases(leases at now for d) to succeed for each.
func start(t *testing.T, ls webhooks.LeaseStarter, now time.Time, d time.Duration, leases ...*webhooks.Lease) {
	t.Helper()
	errs := ls.StartLeases(t.Context(), webhooks.StartRequest{Leases: leases, Now: now, Duration: d})
	if len(errs) != len(leases) {
		t.Fatalf("StartLeases(%d leases) returned %d errors; want one per lease", len(leases), len(errs))
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("StartLeases: lease on %s: %v; want nil", leases[i].Key(), err)
		}
	}
}

// settleEither settles st with Settle, or with SettleBatch when batch is
// set and the store has it.
func settleEither(t *testing.T, s webhooks.InboxStore, st webhooks.Settlement, batch bool) {
	t.Helper()
	if b, ok := s.(webhooks.BatchSettler); ok && batch {
		if errs := b.SettleBatch(t.Context(), []webhooks.Settlement{st}); len(errs) != 1 || errs[0] != nil {
			t.Fatalf("SettleBatch(%s of %s): %v; want [nil]", st.Outcome, st.Lease.Key(), errs)
		}
		return
	}
	mustSettle(t, s, st)
}

// testStartHoldsLeases: of Max leases with Start n, the first n are
// started (counted, Held false) and the rest held (not counted, Attempt
// the number they will have, no history).
func testStartHoldsLeases(t *testing.T, s webhooks.InboxStore) {
	var keys []webhooks.InboxKey
	for i, id := range []string{"evt_1", "evt_2", "evt_3"} {
		env := envelope(key(id), "p", at(time.Duration(i)*time.Microsecond))
		mustEnqueue(t, s, env)
		keys = append(keys, env.Key)
	}
	leases := acquireHold(t, s, at(time.Second), leaseFor, 3, 1)
	if len(leases) != 3 {
		t.Fatalf("Acquire(Max 3, Start 1) returned %d leases; want 3", len(leases))
	}
	for i, l := range leases {
		if l.Key() != keys[i] {
			t.Fatalf("Acquire(Max 3, Start 1): lease %d is on %s; want %s (the longest due first)", i, l.Key(), keys[i])
		}
		wantHeld, counted := i >= 1, 1
		if wantHeld {
			counted = 0
		}
		if l.Held != wantHeld {
			t.Errorf("Acquire(Max 3, Start 1): lease %d (%s) Held = %t; want %t (the first Start start)", i, l.Key(), l.Held, wantHeld)
		}
		if l.Attempt != 1 {
			t.Errorf("Acquire(Max 3, Start 1): lease %d Attempt = %d; want 1 (a held lease has the number its attempt will have)", i, l.Attempt)
		}
		if l.Item.Attempts != counted {
			t.Errorf("Acquire(Max 3, Start 1): lease %d Item.Attempts = %d; want %d", i, l.Item.Attempts, counted)
		}
		wantAttempts(t, s, l.Key(), counted, "after Acquire(Max 3, Start 1)")
		if l.Item.State != webhooks.StateLeased {
			t.Errorf("lease %d: Item.State = %s; want %s: a held lease is a lease", i, l.Item.State, webhooks.StateLeased)
		}
	}
	wantNothingDue(t, s, at(2*time.Second), "held leases are leases: nobody else may take their items")
}

func testStartHoldRange(t *testing.T, s webhooks.InboxStore) {
	mustEnqueue(t, s, envelope(key("evt_1"), "p", base))
	for _, start := range []int{-1, 3} {
		_, err := s.Acquire(t.Context(), webhooks.AcquireRequest{Now: base, LeaseDuration: leaseFor, Max: 2, Hold: true, Start: start})
		if err == nil {
			t.Errorf("Acquire(Max 2, Hold, Start %d): no error; want one (Start is between 0 and Max)", start)
		}
	}
	leases := acquireHold(t, s, base, leaseFor, 2, 0)
	if len(leases) != 1 || !leases[0].Held {
		t.Errorf("Acquire(Max 2, Hold, Start 0) = %d leases, held %v; want one held lease", len(leases), len(leases) == 1 && leases[0].Held)
	}
}

// testStartWithoutHold: a caller that does not ask for held leases (one
// that knows nothing of LeaseStarter, such as a store wrapping this one)
// gets every lease started, a reclaimed one included, as from any store.
func testStartWithoutHold(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	mustAcquire(t, s, base, 10*time.Second)
	l := mustAcquire(t, s, at(10*time.Second), leaseFor)
	if l.Held || !l.Reclaimed || l.Attempt != 2 {
		t.Errorf("Acquire without Hold of an expired lease: Held %t, Reclaimed %t, Attempt %d; want false, true, 2", l.Held, l.Reclaimed, l.Attempt)
	}
	wantAttempts(t, s, env.Key, 2, "after Acquire without Hold took an expired lease over")
}

// testStartHeldLeaseExpiredCostsNothing: the holder crashed while the
// lease waited for a worker; the takeover records and counts nothing for
// it, and is not Reclaimed.
func testStartHeldLeaseExpiredCostsNothing(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	held := acquireHold(t, s, base, 10*time.Second, 1, 0)
	if len(held) != 1 || !held[0].Held {
		t.Fatalf("Acquire(Max 1, Hold, Start 0) = %d leases; want one held lease", len(held))
	}
	leases := acquireHold(t, s, at(10*time.Second), leaseFor, 1, 1)
	if len(leases) != 1 {
		t.Fatalf("Acquire after the held lease expired = %d leases; want 1", len(leases))
	}
	l := leases[0]
	if l.Reclaimed {
		t.Errorf("Acquire after a held lease expired unstarted: Reclaimed = true; want false (nothing ran)")
	}
	if l.Held {
		t.Errorf("Acquire(Max 1, Start 1) after a held lease expired: Held = true; want false (nothing crashed, so it starts at once)")
	}
	if l.Attempt != 1 {
		t.Errorf("Acquire after a held lease expired unstarted: Attempt = %d; want 1 (it cost no attempt)", l.Attempt)
	}
	checkHistory(t, s, env.Key, nil, "after a held lease expired unstarted and was taken over")
	wantAttempts(t, s, env.Key, 1, "after the takeover started")
	mustSettle(t, s, succeed(l, at(11*time.Second)))
	checkHistory(t, s, env.Key, []ops.Attempt{
		attemptOf(1, webhooks.AttemptSucceeded, at(10*time.Second), at(11*time.Second), webhooks.Failure{}),
	}, "after the takeover succeeded")
}

// testStartReclaimedLeaseIsHeld: a lease taken over from an expired
// started one is held whatever Hold says, its crashed attempt counted; an
// unstarted takeover that expires again keeps it Reclaimed and costs
// nothing more.
func testStartReclaimedLeaseIsHeld(t *testing.T, s webhooks.InboxStore) {
	ls := leaseStarter(s)
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	acquireHold(t, s, base, 10*time.Second, 1, 1) // started, then its worker dies
	crashed := attemptOf(1, ops.OutcomeCrashed, base, at(10*time.Second), webhooks.Failure{})
	for round, now := range []time.Time{at(10 * time.Second), at(20 * time.Second)} {
		leases := acquireHold(t, s, now, 10*time.Second, 1, 1)
		if len(leases) != 1 {
			t.Fatalf("takeover %d: %d leases; want 1", round+1, len(leases))
		}
		l := leases[0]
		if !l.Reclaimed || !l.Held || l.Attempt != 2 {
			t.Errorf("takeover %d: Reclaimed %t, Held %t, Attempt %d; want true, true, 2 (held, so the policy decides first; the crashed attempt counts)",
				round+1, l.Reclaimed, l.Held, l.Attempt)
		}
		wantAttempts(t, s, env.Key, 1, "while the takeover is held")
		checkHistory(t, s, env.Key, []ops.Attempt{crashed}, "while the takeover is held")
	}
	leases := acquireHold(t, s, at(30*time.Second), leaseFor, 1, 1)
	start(t, ls, at(31*time.Second), leaseFor, leases...)
	mustSettle(t, s, succeed(leases[0], at(32*time.Second)))
	checkHistory(t, s, env.Key, []ops.Attempt{
		crashed,
		attemptOf(2, webhooks.AttemptSucceeded, at(31*time.Second), at(32*time.Second), webhooks.Failure{}),
	}, "after the third takeover started and succeeded")
	wantAttempts(t, s, env.Key, 2, "after the third takeover started and succeeded")
}

// reclaimedHeld makes env's item crash once and returns the held lease
// that takes it over at 10s.
func reclaimedHeld(t *testing.T, s webhooks.InboxStore, env webhooks.Envelope) *webhooks.Lease {
	t.Helper()
	mustEnqueue(t, s, env)
	acquireHold(t, s, base, 10*time.Second, 1, 1)
	leases := acquireHold(t, s, at(10*time.Second), leaseFor, 1, 1)
	if len(leases) != 1 || !leases[0].Held || !leases[0].Reclaimed {
		t.Fatalf("the takeover of a crashed lease: %d leases; want one held and reclaimed", len(leases))
	}
	return leases[0]
}

// testStartDeadLetterUnstarted: a crash loop's item dead-lettered
// without running again counts only the attempts that ran.
func testStartDeadLetterUnstarted(t *testing.T, s webhooks.InboxStore) {
	for _, batch := range []bool{false, true} {
		env := envelope(key(map[bool]string{false: "one", true: "batch"}[batch]), "p", base)
		l := reclaimedHeld(t, s, env)
		expired := webhooks.Failure{Class: webhooks.FailureLeaseExpired, Message: "attempt 1 ended without being settled", Transient: true}
		settleEither(t, s, deadLetter(l, expired, at(11*time.Second)), batch)
		if o, ok := s.(ops.Store); ok {
			it := mustGet(t, o, env.Key)
			if it.State != webhooks.StateDead || it.Attempts != 1 || it.LastError == nil || it.LastError.Class != webhooks.FailureLeaseExpired {
				t.Errorf("dead-lettered unstarted (batch %t): State %s, Attempts %d, LastError %s; want %s, 1 (only the attempt that ran), %s",
					batch, it.State, it.Attempts, fmtErrorRecord(it.LastError), webhooks.StateDead, webhooks.FailureLeaseExpired)
			}
		}
		wantEnqueue(t, s, env, webhooks.EnqueueResult{Outcome: webhooks.EnqueueDuplicate, State: webhooks.StateDead}, "after its unstarted lease was dead-lettered")
		checkHistory(t, s, env.Key, []ops.Attempt{
			attemptOf(1, ops.OutcomeCrashed, base, at(10*time.Second), webhooks.Failure{}),
		}, "after an unstarted lease was dead-lettered")
	}
}

// testStartAbandonUnstarted: a held lease given back leaves no trace.
func testStartAbandonUnstarted(t *testing.T, s webhooks.InboxStore) {
	for i, batch := range []bool{false, true} {
		env := envelope(key(map[bool]string{false: "one", true: "batch"}[batch]), "p", base)
		mustEnqueue(t, s, env)
		now := at(time.Duration(i) * time.Minute)
		leases := acquireHold(t, s, now, leaseFor, 1, 0)
		if len(leases) != 1 || leases[0].Key() != env.Key {
			t.Fatalf("Acquire(Max 1, Hold, Start 0): %d leases; want one on %s", len(leases), env.Key)
		}
		settleEither(t, s, abandon(leases[0], now.Add(time.Second)), batch)
		if o, ok := s.(ops.Store); ok {
			it := mustGet(t, o, env.Key)
			if it.State != webhooks.StatePending || it.Attempts != 0 || !it.NextAttemptAt.Equal(now.Add(time.Second)) {
				t.Errorf("abandoned unstarted (batch %t): State %s, Attempts %d, due %s; want %s, 0, %s", batch, it.State, it.Attempts,
					fmtTime(it.NextAttemptAt), webhooks.StatePending, fmtTime(now.Add(time.Second)))
			}
		}
		checkHistory(t, s, env.Key, nil, "after an unstarted lease was given back")
		l := mustAcquireKey(t, s, env.Key, now.Add(time.Second), leaseFor)
		if l.Attempt != 1 {
			t.Errorf("Acquire after an unstarted lease was given back: Attempt = %d; want 1", l.Attempt)
		}
		mustSettle(t, s, succeed(l, now.Add(2*time.Second)))
	}
}

// testStartSettleUnstartedStartsIt: a held lease settled as succeeded or
// retried ran: it is started by the settlement.
func testStartSettleUnstartedStartsIt(t *testing.T, s webhooks.InboxStore) {
	for _, batch := range []bool{false, true} {
		id := map[bool]string{false: "one", true: "batch"}[batch]
		ok, failed := envelope(key(id+"_ok"), "p", base), envelope(key(id+"_failed"), "p", base)
		mustEnqueue(t, s, ok)
		mustEnqueue(t, s, failed)
		leases := acquireHold(t, s, base, leaseFor, 2, 0)
		if len(leases) != 2 {
			t.Fatalf("Acquire(Max 2, Hold, Start 0): %d leases; want 2", len(leases))
		}
		for _, l := range leases {
			if l.Key() == ok.Key {
				settleEither(t, s, succeed(l, at(time.Second)), batch)
				checkHistory(t, s, l.Key(), []ops.Attempt{
					attemptOf(1, webhooks.AttemptSucceeded, at(time.Second), at(time.Second), webhooks.Failure{}),
				}, "after a held lease was settled succeeded")
			} else {
				settleEither(t, s, retry(l, transient, at(time.Hour), at(time.Second)), batch)
				checkHistory(t, s, l.Key(), []ops.Attempt{
					attemptOf(1, webhooks.AttemptRetried, at(time.Second), at(time.Second), transient),
				}, "after a held lease was settled retried")
			}
			wantAttempts(t, s, l.Key(), 1, "after a held lease was settled as it ran")
		}
	}
}

// testStartLeasesFencedAndIdempotent: StartLeases counts once, moves the
// expiry, and refuses a stale or settled token; ExtendLease does not
// start a lease.
func testStartLeasesFencedAndIdempotent(t *testing.T, s webhooks.InboxStore) {
	ls := leaseStarter(s)
	env, other := envelope(key("evt_1"), "p", base), envelope(key("evt_2"), "p", base)
	mustEnqueue(t, s, env)
	mustEnqueue(t, s, other)
	leases := acquireHold(t, s, base, 10*time.Second, 2, 0)
	if len(leases) != 2 {
		t.Fatalf("Acquire(Max 2, Hold, Start 0): %d leases; want 2", len(leases))
	}
	l, o := leases[0], leases[1]
	if l.Key() != env.Key {
		l, o = o, l
	}
	if err := extend(t, s, l, at(time.Second), 10*time.Second); err != nil {
		t.Fatalf("ExtendLease of a held lease: %v; want nil", err)
	}
	wantAttempts(t, s, env.Key, 0, "after ExtendLease of a held lease (it does not start it)")

	start(t, ls, at(2*time.Second), 20*time.Second, l)
	if !l.Held || !l.ExpiresAt.Equal(at(10*time.Second)) {
		t.Errorf("after StartLeases: Lease.Held %t, ExpiresAt %s; want true, %s, as Acquire returned it: a store changes no lease it returned",
			l.Held, fmtTime(l.ExpiresAt), fmtTime(at(10*time.Second)))
	}
	if o, ok := s.(ops.Store); ok {
		if it := mustGet(t, o, env.Key); it.Attempts != 1 || !it.LeaseExpiresAt.Equal(at(22*time.Second)) {
			t.Errorf("Get after StartLeases: Attempts %d, LeaseExpiresAt %s; want 1, %s", it.Attempts, fmtTime(it.LeaseExpiresAt), fmtTime(at(22*time.Second)))
		}
	}
	start(t, ls, at(3*time.Second), 20*time.Second, l)
	wantAttempts(t, s, env.Key, 1, "after StartLeases again (starting is idempotent)")

	stale := *o
	stale.Token = "00000000-0000-4000-8000-000000000000"
	mustSettle(t, s, succeed(l, at(4*time.Second)))
	errs := ls.StartLeases(t.Context(), webhooks.StartRequest{Leases: []*webhooks.Lease{&stale, l, o}, Now: at(5 * time.Second), Duration: leaseFor})
	if len(errs) != 3 {
		t.Fatalf("StartLeases(3 leases) returned %d errors; want 3", len(errs))
	}
	wantLeaseLost(t, errs[0], "StartLeases with a token the store never issued")
	wantAlreadySettled(t, errs[1], "StartLeases of a settled lease")
	if errs[2] != nil {
		t.Errorf("StartLeases of a held lease beside refused ones: %v; want nil (each lease is fenced on its own)", errs[2])
	}
	checkHistory(t, s, env.Key, []ops.Attempt{
		attemptOf(1, webhooks.AttemptSucceeded, at(2*time.Second), at(4*time.Second), webhooks.Failure{}),
	}, "after a started lease succeeded")
	wantAttempts(t, s, other.Key, 1, "after StartLeases of its held lease")
}

// wantLease requires l to be Reclaimed, Held and numbered as given.
func wantLease(t *testing.T, l *webhooks.Lease, reclaimed, held bool, attempt int, what string) {
	t.Helper()
	if l.Reclaimed != reclaimed || l.Held != held || l.Attempt != attempt {
		t.Errorf("%s: Reclaimed %t, Held %t, Attempt %d; want %t, %t, %d", what, l.Reclaimed, l.Held, l.Attempt, reclaimed, held, attempt)
	}
}

// testStartReclaimedJudgedByDeadLetter: a crash loop's item dead-lettered
// unstarted, its crash judged, and replayed (with its attempts kept or
// not) is not Reclaimed again, neither when leased, nor when asked for
// again by its acquisition's ID, nor when that lease expires unstarted
// and is taken over: nothing crashed since.
func testStartReclaimedJudgedByDeadLetter(t *testing.T, s webhooks.InboxStore) {
	o, ok := s.(opsStore)
	if !ok {
		t.Skip("the store is not an ops.Store: the case replays a dead letter")
	}
	for _, keep := range []bool{true, false} {
		env := envelope(key(map[bool]string{true: "kept", false: "reset"}[keep]), "p", base)
		l := reclaimedHeld(t, s, env)
		expired := webhooks.Failure{Class: webhooks.FailureLeaseExpired, Message: "attempt 1 ended without being settled", Transient: true}
		mustSettle(t, s, deadLetter(l, expired, at(11*time.Second)))
		req := replayOf(env.Key, at(12*time.Second))
		req.KeepAttempts = keep
		mustReplay(t, o, req)
		attempts := map[bool]int{true: 1, false: 0}[keep]

		acq := webhooks.AcquireRequest{Now: at(12 * time.Second), LeaseDuration: 10 * time.Second, Max: 1, Hold: true, Start: 0,
			Worker: worker, Version: version, ID: "acq-" + env.Key.EventID}
		leases := acquireWith(t, s, acq)
		if len(leases) != 1 {
			t.Fatalf("Acquire after the replay (KeepAttempts %t): %d leases; want 1", keep, len(leases))
		}
		wantLease(t, leases[0], false, true, attempts+1, fmt.Sprintf("the lease after the replay (KeepAttempts %t)", keep))
		if r, ok := s.(webhooks.AcquisitionRepeater); ok {
			again := mustRepeat(t, r, acq.ID, at(13*time.Second))
			if len(again) != 1 {
				t.Fatalf("the repeated acquisition (KeepAttempts %t): %d leases; want 1", keep, len(again))
			}
			wantLease(t, again[0], false, true, attempts+1, fmt.Sprintf("the repeated acquisition after the replay (KeepAttempts %t): Reclaimed as first reported", keep))
		}

		taken := acquireHold(t, s, at(22*time.Second), leaseFor, 1, 1)
		if len(taken) != 1 {
			t.Fatalf("the takeover of the expired held lease (KeepAttempts %t): %d leases; want 1", keep, len(taken))
		}
		wantLease(t, taken[0], false, false, attempts+1,
			fmt.Sprintf("the takeover of a held lease that expired after the replay (KeepAttempts %t): nothing crashed since the dead-lettering judged the crash, so it starts", keep))
		wantAttempts(t, s, env.Key, attempts+1, "after the takeover started")
		mustSettle(t, s, succeed(taken[0], at(23*time.Second)))
		checkHistory(t, s, env.Key, []ops.Attempt{
			attemptOf(1, ops.OutcomeCrashed, base, at(10*time.Second), webhooks.Failure{}),
			attemptOf(2, webhooks.AttemptSucceeded, at(22*time.Second), at(23*time.Second), webhooks.Failure{}),
		}, "after the replayed item succeeded")
	}
}

// testStartReclaimedGivenBackStaysReclaimed: a lease taken over from a
// crashed attempt and given back unstarted (a shutdown, a start that
// failed) ran nothing, so its crash is still to be judged: the next lease
// is Reclaimed, and so is the takeover of that lease when it expires
// unstarted; nothing is counted or recorded for either.
func testStartReclaimedGivenBackStaysReclaimed(t *testing.T, s webhooks.InboxStore) {
	ls := leaseStarter(s)
	for _, batch := range []bool{false, true} {
		env := envelope(key(map[bool]string{false: "one", true: "batch"}[batch]), "p", base)
		l := reclaimedHeld(t, s, env)
		settleEither(t, s, abandon(l, at(11*time.Second)), batch)
		crashed := []ops.Attempt{attemptOf(1, ops.OutcomeCrashed, base, at(10*time.Second), webhooks.Failure{})}

		leases := acquireHold(t, s, at(11*time.Second), 10*time.Second, 1, 1)
		if len(leases) != 1 {
			t.Fatalf("Acquire after the reclaimed lease was given back (batch %t): %d leases; want 1", batch, len(leases))
		}
		wantLease(t, leases[0], true, true, 2, fmt.Sprintf("the lease after a reclaimed one was given back unstarted (batch %t)", batch))
		taken := acquireHold(t, s, at(21*time.Second), leaseFor, 1, 1)
		if len(taken) != 1 {
			t.Fatalf("the takeover of that lease (batch %t): %d leases; want 1", batch, len(taken))
		}
		wantLease(t, taken[0], true, true, 2, fmt.Sprintf("the takeover of that lease once it expired unstarted (batch %t)", batch))
		wantAttempts(t, s, env.Key, 1, "while its crash is still to be judged")
		checkHistory(t, s, env.Key, crashed, "while its crash is still to be judged")
		start(t, ls, at(22*time.Second), leaseFor, taken[0])
		mustSettle(t, s, succeed(taken[0], at(23*time.Second)))
		checkHistory(t, s, env.Key, append(crashed,
			attemptOf(2, webhooks.AttemptSucceeded, at(22*time.Second), at(23*time.Second), webhooks.Failure{})), "after it ran")
	}
}

// wantStartedFirst requires the first n of leases to be started and the
// others held.
func wantStartedFirst(t *testing.T, leases []*webhooks.Lease, n int, what string) {
	t.Helper()
	for i, l := range leases {
		if l.Held != (i >= n) {
			t.Errorf("%s: lease %d of %d (%s) Held = %t; want the first %d started and the rest held, in the order returned", what, i, len(leases), l.Key(), l.Held, n)
		}
	}
}

// testStartStartedLeasesFirstAmongTies: items due at the same time (a
// replay without a spread makes many; one acquisition's leases expire
// together) come back with the started leases first, so the caller's
// free workers take exactly those.
func testStartStartedLeasesFirstAmongTies(t *testing.T, s webhooks.InboxStore) {
	const n, started = 8, 3
	for i := range n {
		mustEnqueue(t, s, envelope(key(fmt.Sprintf("evt_%d", n-i)), "p", base)) // enqueued against key order
	}
	leases := acquireHold(t, s, base, 10*time.Second, n, started)
	if len(leases) != n {
		t.Fatalf("Acquire(Max %d, Start %d) of items due together: %d leases; want %d", n, started, len(leases), n)
	}
	wantStartedFirst(t, leases, started, "items due together")
	for _, l := range leases[:started] {
		mustSettle(t, s, succeed(l, at(time.Second)))
	}
	// The held leases expire together and are taken over, unstarted, due
	// at their common expiry.
	taken := acquireHold(t, s, at(10*time.Second), leaseFor, n, 2)
	if len(taken) != n-started {
		t.Fatalf("the takeover of %d held leases that expired together: %d leases; want %d", n-started, len(taken), n-started)
	}
	wantStartedFirst(t, taken, 2, "the takeover of held leases that expired together")
}
