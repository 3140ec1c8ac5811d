package storetest

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

var settleCases = slices.Concat(settleOutcomeCases, []inboxCase{
	{"SettleInvalid", testSettleInvalid},
	{"SettleAgainIsAlreadySettled", testSettleAgainIsAlreadySettled},
	{"SettledTokenLostAfterReacquire", testSettledTokenLostAfterReacquire},
	{"StaleTokenIsFenced", testStaleTokenIsFenced},
	{"ExtendLease", testExtendLease},
	{"ExpiredCurrentLeaseMaySettle", testExpiredCurrentLeaseMaySettle},
	{"FailureMessageRoundTrips", testFailureMessageRoundTrips},
})

// settleOutcomeCases settle an item's second attempt, the first retried,
// with each outcome, and require the item the contract describes (stored,
// when the store is an ops.Store) and due when it says: never for a
// succeeded or dead item, at RetryAt for a retried one, at once, its
// attempt not counted, for an abandoned one.
var settleOutcomeCases = settleOutcomes([]settleOutcome{
	{"SettleSucceeded", succeed, func(want webhooks.Item, now time.Time) (webhooks.Item, time.Time) {
		return succeededItem(want, now), time.Time{}
	}},
	{"SettleRetried", func(l *webhooks.Lease, now time.Time) webhooks.Settlement {
		return retry(l, transient, at(time.Hour), now)
	},
		func(want webhooks.Item, now time.Time) (webhooks.Item, time.Time) {
			want.State, want.NextAttemptAt, want.LeaseExpiresAt, want.UpdatedAt = webhooks.StatePending, at(time.Hour), time.Time{}, now
			want.LastError = &webhooks.ErrorRecord{Class: transient.Class, Message: transient.Message, At: now}
			return want, at(time.Hour)
		}},
	{"SettleDeadLettered", func(l *webhooks.Lease, now time.Time) webhooks.Settlement { return deadLetter(l, permanent, now) },
		func(want webhooks.Item, now time.Time) (webhooks.Item, time.Time) {
			want.State, want.DeadAt, want.NextAttemptAt, want.LeaseExpiresAt, want.UpdatedAt = webhooks.StateDead, now, time.Time{}, time.Time{}, now
			want.LastError = &webhooks.ErrorRecord{Class: permanent.Class, Message: permanent.Message, At: now}
			return want, time.Time{}
		}},
	{"SettleAbandoned", abandon, func(want webhooks.Item, now time.Time) (webhooks.Item, time.Time) {
		// Not counted, due at Now, the last error kept.
		want.State, want.Attempts, want.NextAttemptAt, want.LeaseExpiresAt, want.UpdatedAt = webhooks.StatePending, want.Attempts-1, now, time.Time{}, now
		return want, now
	}},
})

type settleOutcome struct {
	name   string
	settle func(l *webhooks.Lease, now time.Time) webhooks.Settlement
	// after returns the item as the settlement at now leaves the leased
	// item want, and when it is due again (zero: never).
	after func(want webhooks.Item, now time.Time) (webhooks.Item, time.Time)
}

func settleOutcomes(outcomes []settleOutcome) []inboxCase {
	var cases []inboxCase
	for _, o := range outcomes {
		cases = append(cases, inboxCase{o.name, func(t *testing.T, s webhooks.InboxStore) {
			env := envelope(key("evt_1"), "p", base)
			mustEnqueue(t, s, env)
			first := mustAcquire(t, s, base, leaseFor)
			mustSettle(t, s, retry(first, transient, at(10*time.Second), at(time.Second)))
			l := mustAcquireKey(t, s, env.Key, at(10*time.Second), leaseFor)
			if l.Attempt != 2 {
				t.Fatalf("second Acquire: Lease.Attempt = %d; want 2", l.Attempt)
			}
			now := at(11 * time.Second)
			st := o.settle(l, now)
			mustSettle(t, s, st)
			want, due := o.after(leasedItem(retriedItem(enqueuedItem(env), base, at(time.Second), at(10*time.Second)), at(10*time.Second), leaseFor), now)
			checkStored(t, s, want, "after Settle("+string(st.Outcome)+")")
			if due.IsZero() {
				wantNothingDue(t, s, at(24*time.Hour), "a "+string(want.State)+" item is never due")
				return
			}
			wantNothingDue(t, s, due.Add(-time.Microsecond), "it is due 1µs later")
			again := mustAcquireKey(t, s, env.Key, due, leaseFor)
			if again.Attempt != want.Attempts+1 || again.Reclaimed {
				t.Errorf("Acquire after Settle(%s): Lease.Attempt %d, Reclaimed %t; want %d, false (the item was pending, not taken from an expired lease)",
					st.Outcome, again.Attempt, again.Reclaimed, want.Attempts+1)
			}
			checkItem(t, "Lease.Item after Settle("+string(st.Outcome)+")", again.Item, leasedItem(want, due, leaseFor))
		}})
	}
	return cases
}

// retriedItem returns the item want leased at leasedAt as a retry at now,
// due at retryAt, leaves it.
func retriedItem(want webhooks.Item, leasedAt, now, retryAt time.Time) webhooks.Item {
	want = leasedItem(want, leasedAt, leaseFor)
	want.State, want.NextAttemptAt, want.LeaseExpiresAt, want.UpdatedAt = webhooks.StatePending, retryAt, time.Time{}, now
	want.LastError = &webhooks.ErrorRecord{Class: transient.Class, Message: transient.Message, At: now}
	return want
}

// testSettleInvalid: a settlement without a lease or with an outcome the
// contract does not name is refused with an error that is neither
// ErrLeaseLost nor ErrAlreadySettled (the caller's bug, not a lost race),
// and changes nothing.
func testSettleInvalid(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	l := mustAcquire(t, s, at(time.Second), leaseFor)
	want := stored(t, s, env.Key)
	now := at(2 * time.Second)

	refused := func(err error, call string) {
		t.Helper()
		switch {
		case err == nil:
			t.Errorf("%s = nil; want an error", call)
		case errors.Is(err, webhooks.ErrLeaseLost), errors.Is(err, webhooks.ErrAlreadySettled):
			t.Errorf("%s: error %v; want an error saying the request is invalid, not that the lease is lost or settled", call, err)
		}
	}
	for _, outcome := range []webhooks.AttemptOutcome{"", "bogus", "SUCCEEDED"} {
		st := retry(l, transient, at(time.Minute), now)
		st.Outcome = outcome
		refused(s.Settle(t.Context(), st), `Settle(Outcome "`+string(outcome)+`")`)
	}
	refused(s.Settle(t.Context(), webhooks.Settlement{Outcome: webhooks.AttemptSucceeded, Now: now}), "Settle with a nil Lease")
	refused(s.ExtendLease(t.Context(), webhooks.ExtendRequest{Now: now, Duration: time.Minute}), "ExtendLease with a nil Lease")
	checkStored(t, s, want, "after invalid settlements (nothing may change)")

	mustSettle(t, s, succeed(l, now))
}

// settlements are the four outcomes, each as a function of the lease and
// the time. Abandoned is last: its item stays due.
var settlements = []struct {
	name string
	of   func(l *webhooks.Lease, now time.Time) webhooks.Settlement
}{
	{"succeeded", succeed},
	{"retried", func(l *webhooks.Lease, now time.Time) webhooks.Settlement {
		return retry(l, transient, at(time.Hour), now)
	}},
	{"dead_lettered", func(l *webhooks.Lease, now time.Time) webhooks.Settlement {
		return deadLetter(l, permanent, now)
	}},
	{"abandoned", abandon},
}

// wantRefused requires every settlement of l at now, and ExtendLease, to
// be refused with an error wrapping want (webhooks.ErrLeaseLost or
// ErrAlreadySettled), and ExtendLease to leave l as it was; what names l.
func wantRefused(t *testing.T, s webhooks.InboxStore, l *webhooks.Lease, now time.Time, want error, what string) {
	t.Helper()
	check := wantLeaseLost
	if want == webhooks.ErrAlreadySettled {
		check = wantAlreadySettled
	}
	for _, st := range settlements {
		check(t, s.Settle(t.Context(), st.of(l, now)), "Settle("+st.name+") under "+what)
	}
	expiry := l.ExpiresAt
	check(t, extend(t, s, l, now, time.Hour), "ExtendLease under "+what)
	if !l.ExpiresAt.Equal(expiry) {
		t.Errorf("a refused ExtendLease changed Lease.ExpiresAt to %s; want it unchanged at %s", fmtTime(l.ExpiresAt), fmtTime(expiry))
	}
}

// testSettleAgainIsAlreadySettled: a settlement tried again under the token
// that settled the item (its reply was lost, say) reports ErrAlreadySettled
// whatever its outcome, and so does ExtendLease; nothing changes.
func testSettleAgainIsAlreadySettled(t *testing.T, s webhooks.InboxStore) {
	for i, first := range settlements {
		env := envelope(key(first.name), "p", at(time.Duration(i)*time.Second))
		mustEnqueue(t, s, env)
		l := mustAcquireKey(t, s, env.Key, env.ReceivedAt, leaseFor)
		mustSettle(t, s, first.of(l, env.ReceivedAt.Add(time.Millisecond)))
		want := stored(t, s, env.Key)
		wantRefused(t, s, l, env.ReceivedAt.Add(2*time.Millisecond), webhooks.ErrAlreadySettled, "the token that settled the item ("+first.name+")")
		checkStored(t, s, want, "after settling "+first.name+" again (nothing may change)")
	}
}

// testSettledTokenLostAfterReacquire: once another lease has been taken on
// the item, the token that settled it earlier is stale like any other:
// ErrLeaseLost, before and after the new lease settles.
func testSettledTokenLostAfterReacquire(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	old := mustAcquire(t, s, base, leaseFor)
	mustSettle(t, s, retry(old, transient, at(time.Second), at(time.Millisecond)))
	current := mustAcquireKey(t, s, env.Key, at(time.Second), leaseFor)
	want := stored(t, s, env.Key)

	now := at(2 * time.Second)
	wantRefused(t, s, old, now, webhooks.ErrLeaseLost, "a token that settled the item before it was leased again")
	checkStored(t, s, want, "after settling under the earlier token (nothing may change)")

	mustSettle(t, s, succeed(current, now))
	want = stored(t, s, env.Key)
	wantLeaseLost(t, s.Settle(t.Context(), succeed(old, now)), "Settle(succeeded) under an earlier lease's token after the current lease settled")
	wantAlreadySettled(t, s.Settle(t.Context(), succeed(current, now)), "Settle(succeeded) again under the token that settled the item")
	checkStored(t, s, want, "after settling under old tokens (nothing may change)")
}

func testStaleTokenIsFenced(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	stale := mustAcquire(t, s, base, 10*time.Second)
	current := mustAcquireKey(t, s, env.Key, at(10*time.Second), time.Minute)
	want := stored(t, s, env.Key)

	ctx, now := t.Context(), at(11*time.Second)
	wantRefused(t, s, stale, now, webhooks.ErrLeaseLost, "a stale token")
	checkStored(t, s, want, "after settling with a stale token (nothing may change)")

	forged := *current
	forged.Token = "00000000-0000-4000-8000-000000000000"
	wantLeaseLost(t, s.Settle(ctx, succeed(&forged, now)), "Settle with a token never issued")
	forged.Token = "not a token this store makes"
	wantLeaseLost(t, s.Settle(ctx, succeed(&forged, now)), "Settle with a malformed token")
	missing := *current
	missing.Item.Key = key("no_such_item")
	wantLeaseLost(t, s.Settle(ctx, succeed(&missing, now)), "Settle of an item that does not exist")
	checkStored(t, s, want, "after settling with wrong tokens (nothing may change)")

	if err := s.Settle(ctx, succeed(current, now)); err != nil {
		t.Errorf("Settle(succeeded) with the current token after stale attempts: %v; want no error", err)
	}
}

func testExtendLease(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	l := mustAcquire(t, s, base, 10*time.Second)
	now, d := at(5*time.Second), 20*time.Second
	if err := extend(t, s, l, now, d); err != nil {
		t.Fatalf("ExtendLease with the current token: %v; want no error", err)
	}
	if !l.ExpiresAt.Equal(at(10 * time.Second)) {
		t.Errorf("after ExtendLease, Lease.ExpiresAt = %s; want %s, as Acquire granted it: a store changes no lease it returned "+
			"(its holder reads it while the lease is being extended); the item's LeaseExpiresAt moves", fmtTime(l.ExpiresAt), fmtTime(at(10*time.Second)))
	}
	want := leasedItem(enqueuedItem(env), base, 10*time.Second)
	want.LeaseExpiresAt = now.Add(d)
	want.NextAttemptAt = now.Add(d)
	want.UpdatedAt = now
	checkStored(t, s, want, "after ExtendLease")

	wantNothingDue(t, s, at(10*time.Second), "the lease was extended past its first expiry")
	wantNothingDue(t, s, now.Add(d-time.Microsecond), "the extended lease is valid for 1µs more")
	again := mustAcquireKey(t, s, env.Key, now.Add(d), leaseFor)
	if again.Attempt != 2 || !again.Reclaimed || again.Token == l.Token {
		t.Errorf("Acquire at the extended expiry: Attempt %d, Reclaimed %t, token reused %t; want Attempt 2, Reclaimed, a fresh token",
			again.Attempt, again.Reclaimed, again.Token == l.Token)
	}
}

func testExpiredCurrentLeaseMaySettle(t *testing.T, s webhooks.InboxStore) {
	a := envelope(key("a"), "a", base)
	b := envelope(key("b"), "b", at(time.Second))
	mustEnqueue(t, s, a)
	la := mustAcquireKey(t, s, a.Key, base, 10*time.Second)
	late := at(time.Hour)
	if err := extend(t, s, la, late, time.Minute); err != nil {
		t.Errorf("ExtendLease of an expired lease nobody took: %v; want no error (fencing is by token only)", err)
	}
	if err := s.Settle(t.Context(), succeed(la, late)); err != nil {
		t.Fatalf("Settle(succeeded) of an expired lease nobody took: %v; want no error (fencing is by token only)", err)
	}
	if o, ok := s.(ops.Store); ok {
		if got := mustGet(t, o, a.Key); got.State != webhooks.StateSucceeded || !got.CompletedAt.Equal(late) {
			t.Errorf("after settling an expired lease: State %s, CompletedAt %s; want %s at %s", got.State, fmtTime(got.CompletedAt), webhooks.StateSucceeded, fmtTime(late))
		}
	}

	mustEnqueue(t, s, b)
	lb := mustAcquireKey(t, s, b.Key, at(time.Second), 10*time.Second)
	mustSettle(t, s, retry(lb, transient, late.Add(time.Minute), late))
	wantNothingDue(t, s, late.Add(time.Minute-time.Microsecond), "a succeeded when settled late, and b is due at its retry time")
	if l := mustAcquireKey(t, s, b.Key, late.Add(time.Minute), leaseFor); l.Attempt != 2 || l.Reclaimed {
		t.Errorf("Acquire of the item retried by an expired lease: Attempt %d, Reclaimed %t; want 2, false (it was settled, not taken over)", l.Attempt, l.Reclaimed)
	}
}

// testFailureMessageRoundTrips: a failure message as the Processor hands it
// over (up to 2048 bytes of valid UTF-8 without NUL) is stored byte for
// byte, whatever the width of its characters.
func testFailureMessageRoundTrips(t *testing.T, s webhooks.InboxStore) {
	const limit = 2048
	// Two-, three- and four-byte characters, 9 bytes a group, then five
	// bytes to reach the limit exactly.
	mixed := strings.Repeat("é世🙂", limit/9) + "🙂x"
	wide := strings.Repeat("🙂", limit/4)
	for _, msg := range []string{mixed, wide} {
		if len(msg) != limit || !utf8.ValidString(msg) {
			t.Fatalf("suite bug: the message has %d bytes (valid UTF-8: %t); want %d", len(msg), utf8.ValidString(msg), limit)
		}
	}
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	check := func(got *webhooks.ErrorRecord, msg string, class webhooks.FailureClass, when string) {
		t.Helper()
		if got == nil || got.Message != msg || got.Class != class {
			t.Errorf("%s with a %d-byte message: LastError = %s; want Class %q and the message byte for byte", when, len(msg), fmtErrorRecord(got), class)
		}
	}
	l := mustAcquire(t, s, base, leaseFor)
	mustSettle(t, s, retry(l, webhooks.Failure{Class: webhooks.FailurePanic, Message: mixed, Transient: true}, at(time.Second), at(time.Millisecond)))
	if o, ok := s.(ops.Store); ok {
		check(mustGet(t, o, env.Key).LastError, mixed, webhooks.FailurePanic, "Get after Settle(retried)")
	}
	l = mustAcquireKey(t, s, env.Key, at(time.Second), leaseFor)
	check(l.Item.LastError, mixed, webhooks.FailurePanic, "Lease.Item after Settle(retried)")
	mustSettle(t, s, deadLetter(l, webhooks.Failure{Class: webhooks.FailurePermanent, Message: wide}, at(2*time.Second)))
	if o, ok := s.(ops.Store); ok {
		check(mustGet(t, o, env.Key).LastError, wide, webhooks.FailurePermanent, "Get after Settle(dead_lettered)")
	}
}
