package storetest

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	webhooks "github.com/hookinbox/webhooks"
)

var settleCases = []inboxCase{
	{"Complete", testComplete},
	{"FailRetry", testFailRetry},
	{"FailDeadLetter", testFailDeadLetter},
	{"FailTruncatesMessage", testFailTruncatesMessage},
	{"FailSanitizesMessage", testFailSanitizesMessage},
	{"Abandon", testAbandon},
	{"ExtendLease", testExtendLease},
	{"StaleTokenIsFenced", testStaleTokenIsFenced},
	{"SettledLeaseIsFenced", testSettledLeaseIsFenced},
	{"ExpiredCurrentLeaseMaySettle", testExpiredCurrentLeaseMaySettle},
}

func testComplete(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	l := mustAcquire(t, s, at(time.Second), leaseFor)
	now := at(2 * time.Second)
	if err := s.Complete(t.Context(), l, now); err != nil {
		t.Fatalf("Complete with the current token: %v; want no error", err)
	}
	want := leasedItem(enqueuedItem(env), at(time.Second), leaseFor)
	want.State = webhooks.StateSucceeded
	want.CompletedAt = now
	want.UpdatedAt = now
	want.LeaseExpiresAt = time.Time{}
	want.NextAttemptAt = time.Time{}
	checkStored(t, s, want, "after Complete")
	wantNothingDue(t, s, at(24*time.Hour), "a succeeded item is never due")
}

func testFailRetry(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	l := mustAcquire(t, s, at(time.Second), leaseFor)
	now, retryAt := at(2*time.Second), at(time.Minute)
	mustFail(t, s, l, transient, webhooks.RetryAtTime(retryAt), now)

	want := leasedItem(enqueuedItem(env), at(time.Second), leaseFor)
	want.State = webhooks.StatePending
	want.NextAttemptAt = retryAt
	want.LeaseExpiresAt = time.Time{}
	want.UpdatedAt = now
	want.LastError = &webhooks.ErrorRecord{Class: transient.Class, Message: transient.Message, At: now}
	checkStored(t, s, want, "after Fail with a retry decision")

	wantNothingDue(t, s, retryAt.Add(-time.Microsecond), "the retry is due 1µs later, at decision.RetryAt")
	again := mustAcquireKey(t, s, env.Key, retryAt, leaseFor)
	if again.Attempt != 2 {
		t.Errorf("AcquireNext after a retryable Fail: Lease.Attempt = %d; want 2", again.Attempt)
	}
	checkItem(t, "Lease.Item after a retryable Fail", again.Item, leasedItem(want, retryAt, leaseFor))
}

func testFailDeadLetter(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	l := mustAcquire(t, s, at(time.Second), leaseFor)
	now := at(2 * time.Second)
	mustFail(t, s, l, permanent, webhooks.DeadLetterDecision(), now)

	want := leasedItem(enqueuedItem(env), at(time.Second), leaseFor)
	want.State = webhooks.StateDead
	want.DeadAt = now
	want.NextAttemptAt = time.Time{}
	want.LeaseExpiresAt = time.Time{}
	want.UpdatedAt = now
	want.LastError = &webhooks.ErrorRecord{Class: permanent.Class, Message: permanent.Message, At: now}
	checkStored(t, s, want, "after Fail with a dead-letter decision")
	wantNothingDue(t, s, at(24*time.Hour), "a dead item is never due")
}

func testFailTruncatesMessage(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	l := mustAcquire(t, s, base, leaseFor)
	// One ASCII byte, then two-byte runes: the limit falls inside a rune.
	msg := "x" + strings.Repeat("é", webhooks.MaxErrorMessageBytes)
	wantMsg := webhooks.TruncateErrorMessage(msg)
	f := webhooks.Failure{Class: webhooks.FailurePanic, Message: msg, Transient: true}
	mustFail(t, s, l, f, webhooks.RetryAtTime(at(time.Minute)), at(time.Second))

	got := mustGet(t, s, env.Key)
	switch {
	case got.LastError == nil:
		t.Fatal("after Fail, LastError = nil; want the failure recorded")
	case got.LastError.Message != wantMsg:
		t.Errorf("after Fail with a %d-byte message, LastError.Message has %d bytes (valid UTF-8: %t); want webhooks.TruncateErrorMessage of it (%d bytes)",
			len(msg), len(got.LastError.Message), utf8.ValidString(got.LastError.Message), len(wantMsg))
	case got.LastError.Class != webhooks.FailurePanic:
		t.Errorf("LastError.Class = %q; want %q", got.LastError.Class, webhooks.FailurePanic)
	}
}

func testAbandon(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	first := mustAcquire(t, s, base, leaseFor)
	mustFail(t, s, first, transient, webhooks.RetryAtTime(at(10*time.Second)), at(time.Second))
	l := mustAcquireKey(t, s, env.Key, at(10*time.Second), leaseFor)
	if l.Attempt != 2 {
		t.Fatalf("second AcquireNext: Lease.Attempt = %d; want 2", l.Attempt)
	}

	now := at(11 * time.Second)
	if err := s.Abandon(t.Context(), l, now); err != nil {
		t.Fatalf("Abandon with the current token: %v; want no error", err)
	}
	want := enqueuedItem(env)
	want.Attempts = 1 // the abandoned attempt is not spent
	want.NextAttemptAt = now
	want.UpdatedAt = now
	want.LastError = &webhooks.ErrorRecord{Class: transient.Class, Message: transient.Message, At: at(time.Second)}
	checkStored(t, s, want, "after Abandon (attempt restored, due now, LastError kept)")

	again := mustAcquireKey(t, s, env.Key, now, leaseFor)
	if again.Attempt != 2 {
		t.Errorf("AcquireNext after Abandon: Lease.Attempt = %d; want 2 (the abandoned attempt again)", again.Attempt)
	}
}

func testExtendLease(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	l := mustAcquire(t, s, base, 10*time.Second)
	now, d := at(5*time.Second), 20*time.Second
	if err := s.ExtendLease(t.Context(), l, now, d); err != nil {
		t.Fatalf("ExtendLease with the current token: %v; want no error", err)
	}
	if !l.ExpiresAt.Equal(now.Add(d)) {
		t.Errorf("after ExtendLease, Lease.ExpiresAt = %s; want now+d = %s", fmtTime(l.ExpiresAt), fmtTime(now.Add(d)))
	}
	want := leasedItem(enqueuedItem(env), base, 10*time.Second)
	want.LeaseExpiresAt = now.Add(d)
	want.NextAttemptAt = now.Add(d)
	want.UpdatedAt = now
	checkStored(t, s, want, "after ExtendLease")

	wantNothingDue(t, s, at(10*time.Second), "the lease was extended past its first expiry")
	wantNothingDue(t, s, now.Add(d-time.Microsecond), "the extended lease is valid for 1µs more")
	again := mustAcquireKey(t, s, env.Key, now.Add(d), leaseFor)
	if again.Attempt != 2 || again.Token == l.Token {
		t.Errorf("AcquireNext at the extended expiry: Attempt %d, token reused %t; want Attempt 2 and a fresh token", again.Attempt, again.Token == l.Token)
	}
}

func testStaleTokenIsFenced(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	stale := mustAcquire(t, s, base, 10*time.Second)
	current := mustAcquireKey(t, s, env.Key, at(10*time.Second), time.Minute)
	want := mustGet(t, s, env.Key)

	ctx, now := t.Context(), at(11*time.Second)
	staleExpiry := stale.ExpiresAt
	wantLeaseLost(t, s.Complete(ctx, stale, now), "Complete with a stale token")
	wantLeaseLost(t, s.Fail(ctx, stale, transient, webhooks.RetryAtTime(at(time.Hour)), now), "Fail (retry) with a stale token")
	wantLeaseLost(t, s.Fail(ctx, stale, permanent, webhooks.DeadLetterDecision(), now), "Fail (dead letter) with a stale token")
	wantLeaseLost(t, s.Abandon(ctx, stale, now), "Abandon with a stale token")
	wantLeaseLost(t, s.ExtendLease(ctx, stale, now, time.Hour), "ExtendLease with a stale token")
	if !stale.ExpiresAt.Equal(staleExpiry) {
		t.Errorf("a fenced ExtendLease changed Lease.ExpiresAt to %s; want it unchanged at %s", fmtTime(stale.ExpiresAt), fmtTime(staleExpiry))
	}
	checkItem(t, "Get after settling with a stale token (nothing may change)", mustGet(t, s, env.Key), want)

	forged := *current
	forged.Token = "00000000-0000-4000-8000-000000000000"
	wantLeaseLost(t, s.Complete(ctx, &forged, now), "Complete with a token never issued")
	missing := *current
	missing.Item.Key = key("no_such_item")
	wantLeaseLost(t, s.Complete(ctx, &missing, now), "Complete of an item that does not exist")
	checkItem(t, "Get after settling with wrong tokens (nothing may change)", mustGet(t, s, env.Key), want)

	if err := s.Complete(ctx, current, now); err != nil {
		t.Errorf("Complete with the current token after stale attempts: %v; want no error", err)
	}
}

func testSettledLeaseIsFenced(t *testing.T, s webhooks.InboxStore) {
	ctx := t.Context()
	settle := []struct {
		name string
		do   func(l *webhooks.Lease, now time.Time) error
	}{
		{"Complete", func(l *webhooks.Lease, now time.Time) error { return s.Complete(ctx, l, now) }},
		{"Fail (retry)", func(l *webhooks.Lease, now time.Time) error {
			return s.Fail(ctx, l, transient, webhooks.RetryAtTime(at(time.Hour)), now)
		}},
		{"Fail (dead letter)", func(l *webhooks.Lease, now time.Time) error {
			return s.Fail(ctx, l, permanent, webhooks.DeadLetterDecision(), now)
		}},
		// Abandon last: its item stays due, and each round acquires the
		// only due item.
		{"Abandon", func(l *webhooks.Lease, now time.Time) error { return s.Abandon(ctx, l, now) }},
	}
	for i, first := range settle {
		env := envelope(key(first.name), "p", at(time.Duration(i)*time.Second))
		mustEnqueue(t, s, env)
		l := mustAcquireKey(t, s, env.Key, env.ReceivedAt, leaseFor)
		if err := first.do(l, env.ReceivedAt.Add(time.Millisecond)); err != nil {
			t.Fatalf("%s with the current token: %v; want no error", first.name, err)
		}
		want := mustGet(t, s, env.Key)
		for _, then := range settle {
			wantLeaseLost(t, then.do(l, env.ReceivedAt.Add(2*time.Millisecond)), then.name+" after "+first.name+" with the same token")
		}
		wantLeaseLost(t, s.ExtendLease(ctx, l, env.ReceivedAt.Add(2*time.Millisecond), time.Hour), "ExtendLease after "+first.name+" with the same token")
		checkItem(t, "Get after settling a lease twice (nothing may change)", mustGet(t, s, env.Key), want)
	}
}

func testExpiredCurrentLeaseMaySettle(t *testing.T, s webhooks.InboxStore) {
	ctx := t.Context()
	a := envelope(key("a"), "a", base)
	b := envelope(key("b"), "b", at(time.Second))
	mustEnqueue(t, s, a)
	la := mustAcquireKey(t, s, a.Key, base, 10*time.Second)
	late := at(time.Hour)
	if err := s.ExtendLease(ctx, la, late, time.Minute); err != nil {
		t.Errorf("ExtendLease of an expired lease nobody took: %v; want no error (fencing is by token only)", err)
	}
	if err := s.Complete(ctx, la, late); err != nil {
		t.Fatalf("Complete of an expired lease nobody took: %v; want no error (fencing is by token only)", err)
	}
	if got := mustGet(t, s, a.Key); got.State != webhooks.StateSucceeded || !got.CompletedAt.Equal(late) {
		t.Errorf("after completing an expired lease: State %s, CompletedAt %s; want %s at %s", got.State, fmtTime(got.CompletedAt), webhooks.StateSucceeded, fmtTime(late))
	}

	mustEnqueue(t, s, b)
	lb := mustAcquireKey(t, s, b.Key, at(time.Second), 10*time.Second)
	mustFail(t, s, lb, transient, webhooks.RetryAtTime(late.Add(time.Minute)), late)
	if got := mustGet(t, s, b.Key); got.State != webhooks.StatePending || !got.NextAttemptAt.Equal(late.Add(time.Minute)) {
		t.Errorf("after failing an expired lease: State %s, NextAttemptAt %s; want %s at %s", got.State, fmtTime(got.NextAttemptAt), webhooks.StatePending, fmtTime(late.Add(time.Minute)))
	}
}

func testFailSanitizesMessage(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	l := mustAcquire(t, s, base, leaseFor)
	msg := "bad \xff byte and a NUL \x00 here"
	mustFail(t, s, l, webhooks.Failure{Class: webhooks.FailureError, Message: msg, Transient: true}, webhooks.RetryAtTime(at(time.Minute)), at(time.Second))
	got := mustGet(t, s, env.Key)
	want := webhooks.TruncateErrorMessage(msg)
	if got.LastError == nil || got.LastError.Message != want {
		t.Errorf("after Fail with a message holding invalid UTF-8 and NUL, LastError = %s; want Message %q (webhooks.TruncateErrorMessage)", fmtErrorRecord(got.LastError), want)
	}
}
