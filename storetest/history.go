package storetest

import (
	"fmt"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

var historyCases = []inboxCase{
	opsCase("HistoryFailsTwiceThenSucceeds", testHistoryFailsTwiceThenSucceeds),
	opsCase("HistoryDeadLettered", testHistoryDeadLettered),
	opsCase("HistorySucceededWithANote", testHistorySucceededWithANote),
	opsCase("HistoryAbandonedHasItsOwnNumber", testHistoryAbandonedHasItsOwnNumber),
	opsCase("HistoryCrashed", testHistoryCrashed),
	opsCase("HistoryLeaseLostOnSettle", testHistoryLeaseLostOnSettle),
	opsCase("HistoryLeaseLostOnExtend", testHistoryLeaseLostOnExtend),
	opsCase("HistoryUnchangedByRefusedCalls", testHistoryUnchangedByRefusedCalls),
	opsCase("HistoryNumbersContinueAfterReplay", testHistoryNumbersContinueAfterReplay),
	opsCase("DetailIsACopy", testDetailIsACopy),
	opsCase("GetMissing", testGetMissing),
}

// attemptOf is the history entry of an attempt made by the suite's worker.
func attemptOf(n int, outcome webhooks.AttemptOutcome, started, finished time.Time, f webhooks.Failure) ops.Attempt {
	return ops.Attempt{
		Number: n, Outcome: outcome, StartedAt: started, FinishedAt: finished,
		ErrorClass: f.Class, Error: f.Message, Worker: worker, Version: version,
	}
}

// checkHistory requires the stored history of k to be want, oldest first,
// when the store is an ops.Store.
func checkHistory(t *testing.T, s webhooks.InboxStore, k webhooks.InboxKey, want []ops.Attempt, when string) {
	t.Helper()
	o, ok := s.(ops.Store)
	if !ok {
		return
	}
	got := mustDetail(t, o, k).History
	if len(got) != len(want) {
		t.Errorf("Get(%s).History %s has %d attempts:%s\nwant %d:%s", fmtKey(k), when, len(got), fmtAttempts(got), len(want), fmtAttempts(want))
		return
	}
	for i := range want {
		if d := diffAttempt(got[i], want[i]); d != "" {
			t.Errorf("Get(%s).History[%d] %s: %s", fmtKey(k), i, when, d)
		}
	}
}

func diffAttempt(g, w ops.Attempt) string {
	if g.Number == w.Number && g.Outcome == w.Outcome && g.StartedAt.Equal(w.StartedAt) && g.FinishedAt.Equal(w.FinishedAt) &&
		g.ErrorClass == w.ErrorClass && g.Error == w.Error && g.Worker == w.Worker && g.Version == w.Version {
		return ""
	}
	return fmt.Sprintf("got %s\n\twant %s", fmtAttempt(g), fmtAttempt(w))
}

func fmtAttempt(a ops.Attempt) string {
	return fmt.Sprintf("{#%d %s started %s finished %s error %q %q worker %q version %q}",
		a.Number, a.Outcome, fmtTime(a.StartedAt), fmtTime(a.FinishedAt), a.ErrorClass, a.Error, a.Worker, a.Version)
}

func fmtAttempts(as []ops.Attempt) string {
	s := ""
	for _, a := range as {
		s += "\n\t" + fmtAttempt(a)
	}
	if s == "" {
		s = " (none)"
	}
	return s
}

// testHistoryFailsTwiceThenSucceeds: the first "done means": three
// attempts recorded with their outcomes, times, errors, worker and version,
// and the item's last error cleared once it succeeded.
func testHistoryFailsTwiceThenSucceeds(t *testing.T, s opsStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	checkHistory(t, s, env.Key, nil, "of a new item")

	first := webhooks.Failure{Class: webhooks.FailureError, Message: "upstream returned 503", Transient: true}
	second := webhooks.Failure{Class: webhooks.FailureTimeout, Message: "handler did not finish within 30s", Transient: true}
	l := mustAcquire(t, s, at(time.Second), leaseFor)
	mustSettle(t, s, retry(l, first, at(time.Minute), at(2*time.Second)))
	l = mustAcquireKey(t, s, env.Key, at(time.Minute), leaseFor)
	mustSettle(t, s, retry(l, second, at(5*time.Minute), at(time.Minute+30*time.Second)))
	checkHistory(t, s, env.Key, []ops.Attempt{
		attemptOf(1, webhooks.AttemptRetried, at(time.Second), at(2*time.Second), first),
		attemptOf(2, webhooks.AttemptRetried, at(time.Minute), at(time.Minute+30*time.Second), second),
	}, "after two failed attempts")

	l = mustAcquireKey(t, s, env.Key, at(5*time.Minute), leaseFor)
	if l.Attempt != 3 {
		t.Errorf("third Acquire: Lease.Attempt = %d; want 3", l.Attempt)
	}
	mustSettle(t, s, succeed(l, at(5*time.Minute+time.Second)))
	checkHistory(t, s, env.Key, []ops.Attempt{
		attemptOf(1, webhooks.AttemptRetried, at(time.Second), at(2*time.Second), first),
		attemptOf(2, webhooks.AttemptRetried, at(time.Minute), at(time.Minute+30*time.Second), second),
		attemptOf(3, webhooks.AttemptSucceeded, at(5*time.Minute), at(5*time.Minute+time.Second), webhooks.Failure{}),
	}, "after two failed attempts and a success")
	it := mustGet(t, s, env.Key)
	if it.State != webhooks.StateSucceeded || it.Attempts != 3 || it.LastError != nil {
		t.Errorf("after two failures and a success: State %s, Attempts %d, LastError %s; want %s, 3, nil (the history keeps the failures)",
			it.State, it.Attempts, fmtErrorRecord(it.LastError), webhooks.StateSucceeded)
	}
}

func testHistoryDeadLettered(t *testing.T, s opsStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	l := mustAcquire(t, s, base, leaseFor)
	mustSettle(t, s, deadLetter(l, permanent, at(time.Second)))
	checkHistory(t, s, env.Key, []ops.Attempt{
		attemptOf(1, webhooks.AttemptDeadLettered, base, at(time.Second), permanent),
	}, "after Settle(dead_lettered)")
}

// testHistorySucceededWithANote: a succeeded settlement's Failure is a
// note the history keeps (the Processor's FailureNoHandler for an event
// acknowledged without a handler), by Settle and by SettleBatch alike; it
// is never the item's LastError.
func testHistorySucceededWithANote(t *testing.T, s opsStore) {
	note := webhooks.Failure{Class: webhooks.FailureNoHandler, Message: `no handler for event type "ping": acknowledged without being handled`}
	one, two := envelope(key("evt_1"), "p", base), envelope(key("evt_2"), "p", base)
	mustEnqueue(t, s, one)
	mustEnqueue(t, s, two)
	l := mustAcquireKey(t, s, one.Key, base, leaseFor)
	st := succeed(l, at(time.Second))
	st.Failure = note
	mustSettle(t, s, st)
	l = mustAcquireKey(t, s, two.Key, at(time.Second), leaseFor)
	st = succeed(l, at(2*time.Second))
	st.Failure = note
	if b, ok := s.(webhooks.BatchSettler); ok {
		if errs := b.SettleBatch(t.Context(), []webhooks.Settlement{st}); len(errs) != 1 || errs[0] != nil {
			t.Fatalf("SettleBatch(succeeded with a note): %v; want [nil]", errs)
		}
	} else {
		mustSettle(t, s, st)
	}
	for i, k := range []webhooks.InboxKey{one.Key, two.Key} {
		checkHistory(t, s, k, []ops.Attempt{
			attemptOf(1, webhooks.AttemptSucceeded, at(time.Duration(i)*time.Second), at(time.Duration(i+1)*time.Second), note),
		}, "after Settle(succeeded) with a note")
		if it := mustGet(t, s, k); it.State != webhooks.StateSucceeded || it.LastError != nil {
			t.Errorf("Get(%s) after Settle(succeeded) with a note: State %s, LastError %s; want %s, nil", fmtKey(k), it.State, fmtErrorRecord(it.LastError), webhooks.StateSucceeded)
		}
	}
}

// testHistoryAbandonedHasItsOwnNumber: an abandoned attempt is not counted
// against the retry policy (Item.Attempts) but has a number of its own in
// the history.
func testHistoryAbandonedHasItsOwnNumber(t *testing.T, s opsStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	l := mustAcquire(t, s, base, leaseFor)
	mustSettle(t, s, abandon(l, at(time.Second)))
	l = mustAcquireKey(t, s, env.Key, at(time.Second), leaseFor)
	if l.Attempt != 1 {
		t.Errorf("Acquire after an abandoned attempt: Lease.Attempt = %d; want 1 (the abandoned attempt is not counted)", l.Attempt)
	}
	mustSettle(t, s, abandon(l, at(2*time.Second)))
	l = mustAcquireKey(t, s, env.Key, at(2*time.Second), leaseFor)
	mustSettle(t, s, succeed(l, at(3*time.Second)))
	checkHistory(t, s, env.Key, []ops.Attempt{
		attemptOf(1, webhooks.AttemptAbandoned, base, at(time.Second), webhooks.Failure{}),
		attemptOf(2, webhooks.AttemptAbandoned, at(time.Second), at(2*time.Second), webhooks.Failure{}),
		attemptOf(3, webhooks.AttemptSucceeded, at(2*time.Second), at(3*time.Second), webhooks.Failure{}),
	}, "after two abandoned attempts and a success")
	if it := mustGet(t, s, env.Key); it.Attempts != 1 {
		t.Errorf("Item.Attempts = %d after two abandoned attempts and a success; want 1", it.Attempts)
	}
}

// testHistoryCrashed: an attempt whose lease expired unsettled is recorded
// as crashed, finished at its lease's expiry, when the item is taken over;
// the takeover is an attempt of its own.
func testHistoryCrashed(t *testing.T, s opsStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	mustAcquire(t, s, base, 10*time.Second)
	checkHistory(t, s, env.Key, nil, "while the first attempt is running")

	second, err := s.Acquire(t.Context(), webhooks.AcquireRequest{Now: at(15 * time.Second), LeaseDuration: leaseFor, Max: 1, Worker: "other-host:7", Version: "v2"})
	if err != nil || len(second) != 1 || !second[0].Reclaimed {
		t.Fatalf("Acquire after the lease expired = %d leases, %v; want one reclaimed lease", len(second), err)
	}
	crashed := attemptOf(1, ops.OutcomeCrashed, base, at(10*time.Second), webhooks.Failure{})
	checkHistory(t, s, env.Key, []ops.Attempt{crashed}, "after the expired lease was taken over")

	mustSettle(t, s, retry(second[0], transient, at(time.Hour), at(20*time.Second)))
	checkHistory(t, s, env.Key, []ops.Attempt{
		crashed,
		{Number: 2, Outcome: webhooks.AttemptRetried, StartedAt: at(15 * time.Second), FinishedAt: at(20 * time.Second),
			ErrorClass: transient.Class, Error: transient.Message, Worker: "other-host:7", Version: "v2"},
	}, "after the takeover failed")
}

// testHistoryLeaseLostOnSettle: a crashed attempt whose worker comes back
// and settles becomes lease_lost, finished when it tried and with the
// error it carried; the item is not changed.
func testHistoryLeaseLostOnSettle(t *testing.T, s opsStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	stale := mustAcquire(t, s, base, 10*time.Second)
	current := mustAcquireKey(t, s, env.Key, at(10*time.Second), leaseFor)
	want := mustGet(t, s, env.Key)

	late := webhooks.Failure{Class: webhooks.FailureError, Message: "database unreachable", Transient: true}
	wantLeaseLost(t, s.Settle(t.Context(), retry(stale, late, at(time.Hour), at(12*time.Second))), "Settle(retried) of a lease taken over")
	checkItem(t, "Get after a stale settlement (nothing may change but the history)", mustGet(t, s, env.Key), want)
	lost := attemptOf(1, ops.OutcomeLeaseLost, base, at(12*time.Second), late)
	checkHistory(t, s, env.Key, []ops.Attempt{lost}, "after the crashed attempt's worker came back and settled")

	mustSettle(t, s, succeed(current, at(13*time.Second)))
	checkHistory(t, s, env.Key, []ops.Attempt{
		lost,
		attemptOf(2, webhooks.AttemptSucceeded, at(10*time.Second), at(13*time.Second), webhooks.Failure{}),
	}, "after the takeover succeeded")
}

// testHistoryLeaseLostOnExtend: the same when the worker comes back to
// extend its lease; without a failure to report, the attempt keeps none.
func testHistoryLeaseLostOnExtend(t *testing.T, s opsStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	stale := mustAcquire(t, s, base, 10*time.Second)
	mustAcquireKey(t, s, env.Key, at(10*time.Second), leaseFor)
	wantLeaseLost(t, extend(t, s, stale, at(11*time.Second), leaseFor), "ExtendLease of a lease taken over")
	checkHistory(t, s, env.Key, []ops.Attempt{
		attemptOf(1, ops.OutcomeLeaseLost, base, at(11*time.Second), webhooks.Failure{}),
	}, "after the crashed attempt's worker came back to extend its lease")
}

// testHistoryUnchangedByRefusedCalls: a settlement tried again under the
// token that settled the item, a forged token and a token of an attempt
// that settled normally add nothing to the history and change no entry.
func testHistoryUnchangedByRefusedCalls(t *testing.T, s opsStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	first := mustAcquire(t, s, base, leaseFor)
	mustSettle(t, s, retry(first, transient, at(time.Second), at(time.Millisecond)))
	second := mustAcquireKey(t, s, env.Key, at(time.Second), leaseFor)
	mustSettle(t, s, succeed(second, at(2*time.Second)))
	want := []ops.Attempt{
		attemptOf(1, webhooks.AttemptRetried, base, at(time.Millisecond), transient),
		attemptOf(2, webhooks.AttemptSucceeded, at(time.Second), at(2*time.Second), webhooks.Failure{}),
	}
	checkHistory(t, s, env.Key, want, "after a retry and a success")

	now := at(3 * time.Second)
	for _, st := range settlements {
		wantAlreadySettled(t, s.Settle(t.Context(), st.of(second, now)), "Settle("+st.name+") again under the token that settled the item")
		wantLeaseLost(t, s.Settle(t.Context(), st.of(first, now)), "Settle("+st.name+") under the token of an earlier, settled attempt")
	}
	wantLeaseLost(t, extend(t, s, first, now, leaseFor), "ExtendLease under the token of an earlier, settled attempt")
	forged := *second
	forged.Token = "00000000-0000-4000-8000-000000000000"
	wantLeaseLost(t, s.Settle(t.Context(), succeed(&forged, now)), "Settle with a token never issued")
	checkHistory(t, s, env.Key, want, "after refused settlements (nothing may change)")
}

// testHistoryNumbersContinueAfterReplay: attempt numbers stay unique when
// a replay resets the attempts the retry policy counts (as it does by
// default).
func testHistoryNumbersContinueAfterReplay(t *testing.T, s opsStore) {
	env := envelope(key("evt_1"), "p", base)
	deadAfterTwoAttempts(t, s, env)
	mustReplay(t, s, replayOf(env.Key, at(time.Hour)))
	l := mustAcquireKey(t, s, env.Key, at(time.Hour), leaseFor)
	if l.Attempt != 1 {
		t.Errorf("Acquire after a replay: Lease.Attempt = %d; want 1", l.Attempt)
	}
	mustSettle(t, s, succeed(l, at(time.Hour+time.Second)))
	checkHistory(t, s, env.Key, []ops.Attempt{
		attemptOf(1, webhooks.AttemptRetried, base, at(time.Second), transient),
		attemptOf(2, webhooks.AttemptDeadLettered, at(10*time.Second), at(11*time.Second), permanent),
		attemptOf(3, webhooks.AttemptSucceeded, at(time.Hour), at(time.Hour+time.Second), webhooks.Failure{}),
	}, "after a replay that reset the attempts and a success")
}

// testDetailIsACopy: changing what Get returned changes nothing stored.
func testDetailIsACopy(t *testing.T, s opsStore) {
	env := envelope(key("evt_1"), "p", base)
	deadAfterTwoAttempts(t, s, env)
	conflict := envelope(env.Key, "other", at(time.Minute))
	if res, err := s.Enqueue(t.Context(), conflict); err != nil || res.Outcome != webhooks.EnqueueConflict {
		t.Fatalf("Enqueue of a conflicting delivery = %+v, %v; want a conflict", res, err)
	}
	mustReplay(t, s, replayOf(env.Key, at(time.Hour)))
	want := mustDetail(t, s, env.Key)
	if len(want.History) != 2 || len(want.Audit) != 1 || len(want.Quarantine) != 1 {
		t.Fatalf("setup: Get = %d attempts, %d audit entries, %d quarantined; want 2, 1, 1", len(want.History), len(want.Audit), len(want.Quarantine))
	}

	got := mustDetail(t, s, env.Key)
	got.History[0].Error = "changed"
	got.Audit[0].Actor = "changed"
	got.Quarantine[0].Payload[0] = 'X'
	got.Quarantine[0].Headers.Set("X-Trace", "changed")
	got.Payload[0] = 'X'
	again := mustDetail(t, s, env.Key)
	checkItem(t, "Get after the caller changed a Detail", again.Item, want.Item)
	if again.History[0].Error != want.History[0].Error || again.Audit[0].Actor != want.Audit[0].Actor ||
		string(again.Quarantine[0].Payload) != "other" || !headersEqual(again.Quarantine[0].Headers, conflict.Headers) {
		t.Errorf("after the caller changed a Detail's history, audit trail and quarantine, Get returns them changed; want copies")
	}
}
