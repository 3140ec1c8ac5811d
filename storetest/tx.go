package storetest

import (
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

var completeInTxCases = []completeInTxCase{
	{"Committed", testCompleteInTxCommitted},
	{"RolledBack", testCompleteInTxRolledBack},
	{"StaleToken", testCompleteInTxStaleToken},
}

// completed completes ev in a transaction that then commits (or rolls
// back) and fails the test unless both succeed.
func completed(t *testing.T, s webhooks.InboxStore, complete completeInTx, ev webhooks.Event, commit bool, what string) {
	t.Helper()
	completeErr, commitErr := complete(t, s, ev, commit)
	if completeErr != nil {
		t.Fatalf("%s: the completion returned %v; want no error", what, completeErr)
	}
	if commitErr != nil {
		t.Fatalf("%s: the completion succeeded but the transaction's commit returned %v; want no error", what, commitErr)
	}
}

// refusedInTx requires a completion whose transaction then tries to
// commit to be refused with ErrLeaseLost (lost is true) or
// ErrAlreadySettled, and the commit to fail.
func refusedInTx(t *testing.T, s webhooks.InboxStore, complete completeInTx, ev webhooks.Event, lost bool, what string) {
	t.Helper()
	completeErr, commitErr := complete(t, s, ev, true)
	if lost {
		wantLeaseLost(t, completeErr, what)
	} else {
		wantAlreadySettled(t, completeErr, what)
	}
	if commitErr == nil {
		t.Errorf("%s: the transaction committed after the completion was refused; want its commit to fail, so that a handler that ignores the refusal cannot commit its own writes", what)
	}
}

// wantCompletedInTx requires the stored item of an ops.Store to be as a
// succeeded completion leaves a leased one, at a completion time of the
// store's choosing, and returns it.
func wantCompletedInTx(t *testing.T, s webhooks.InboxStore, leased webhooks.Item, when string) webhooks.Item {
	t.Helper()
	o, ok := s.(ops.Store)
	if !ok {
		return webhooks.Item{}
	}
	got := mustGet(t, o, leased.Key)
	if got.CompletedAt.IsZero() {
		t.Errorf("Get(%s) %s: CompletedAt is zero; want the completion time", leased.Key, when)
	}
	want := succeededItem(leased, got.CompletedAt)
	checkItem(t, "Get("+leased.Key.String()+") "+when+" (UpdatedAt is the completion time)", got, want)
	return want
}

// testCompleteInTxCommitted: a completion whose transaction commits makes
// the item succeeded, once: the Processor's own settlement afterwards
// finds it settled, and so does a second completion.
func testCompleteInTxCommitted(t *testing.T, s webhooks.InboxStore, complete completeInTx) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	now := at(time.Second)
	l := mustAcquire(t, s, now, leaseFor)
	completed(t, s, complete, l.Event(), true, "CompleteInTx(commit) under the current token")
	want := wantCompletedInTx(t, s, leasedItem(enqueuedItem(env), now, leaseFor), "after CompleteInTx(commit)")
	checkHistory(t, s, env.Key, []ops.Attempt{attemptOf(1, webhooks.AttemptSucceeded, now, want.CompletedAt, webhooks.Failure{})},
		"after CompleteInTx(commit) (the completion is the attempt's settlement)")

	later := at(2 * time.Second)
	wantRefused(t, s, l, later, webhooks.ErrAlreadySettled, "the token whose transaction completed the item")
	refusedInTx(t, s, complete, l.Event(), false, "CompleteInTx(commit) again under the same token")
	checkStored(t, s, want, "after settling a completed item again (nothing may change)")
	wantNothingDue(t, s, at(24*time.Hour), "a succeeded item is never due")
}

// testCompleteInTxRolledBack: a completion whose transaction rolls back
// leaves the item leased under the same token, which then settles it as
// the Processor would after a failed handler.
func testCompleteInTxRolledBack(t *testing.T, s webhooks.InboxStore, complete completeInTx) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	now := at(time.Second)
	l := mustAcquire(t, s, now, leaseFor)
	leased := leasedItem(enqueuedItem(env), now, leaseFor)
	completed(t, s, complete, l.Event(), false, "CompleteInTx(roll back) under the current token")
	checkStored(t, s, leased, "after CompleteInTx(roll back) (nothing may change)")
	wantNothingDue(t, s, now.Add(leaseFor-time.Microsecond), "the lease is still valid")

	failedAt, retryAt := at(2*time.Second), at(time.Minute)
	if err := s.Settle(t.Context(), retry(l, transient, retryAt, failedAt)); err != nil {
		t.Fatalf("Settle(retried) after the completion rolled back: %v; want no error (the lease is still current)", err)
	}
	want := leased
	want.State = webhooks.StatePending
	want.NextAttemptAt = retryAt
	want.LeaseExpiresAt = time.Time{}
	want.UpdatedAt = failedAt
	want.LastError = &webhooks.ErrorRecord{Class: transient.Class, Message: transient.Message, At: failedAt}
	checkStored(t, s, want, "after a rolled-back completion and Settle(retried)")
	checkHistory(t, s, env.Key, []ops.Attempt{attemptOf(1, webhooks.AttemptRetried, now, failedAt, transient)},
		"after a rolled-back completion and Settle(retried) (the completion left nothing)")
}

// testCompleteInTxStaleToken: a completion under a token that is not the
// item's current one is refused with ErrLeaseLost, so the host's
// transaction fails (its commit returns an error), and the item stays as
// its current holder has it.
func testCompleteInTxStaleToken(t *testing.T, s webhooks.InboxStore, complete completeInTx) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	stale := mustAcquire(t, s, base, 10*time.Second)
	now := at(10 * time.Second)
	current := mustAcquireKey(t, s, env.Key, now, leaseFor)
	want := stored(t, s, env.Key)

	refusedInTx(t, s, complete, stale.Event(), true, "CompleteInTx(commit) under a lease taken over by another")
	forged := current.Event()
	forged.LeaseToken = "00000000-0000-4000-8000-000000000000"
	refusedInTx(t, s, complete, forged, true, "CompleteInTx(commit) under a token never issued")
	checkStored(t, s, want, "after CompleteInTx under wrong tokens (nothing may change)")

	completed(t, s, complete, current.Event(), true, "CompleteInTx(commit) under the current token after stale attempts")
	wantCompletedInTx(t, s, leasedItem(leasedItem(enqueuedItem(env), base, 10*time.Second), now, leaseFor), "after CompleteInTx(commit) under the current token")
}
