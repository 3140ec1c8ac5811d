package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

var historyCases = slices.Concat(historyRuns([]historyRun{
	// Three attempts recorded with their outcomes, times, errors, worker
	// and version.
	{"HistoryFailsTwiceThenSucceeds", []historyStep{
		{at(time.Second), at(2 * time.Second), 1, failed(webhooks.AttemptRetried, failure503, at(time.Minute))},
		{at(time.Minute), at(time.Minute + 30*time.Second), 2, failed(webhooks.AttemptRetried, failureSlow, at(5*time.Minute))},
		{at(5 * time.Minute), at(5*time.Minute + time.Second), 3, succeed},
	}, 3},
	{"HistoryDeadLettered", []historyStep{{base, at(time.Second), 1, failed(webhooks.AttemptDeadLettered, permanent, time.Time{})}}, 1},
	// An abandoned attempt is not counted against the retry policy
	// (Item.Attempts, Lease.Attempt) but has a number of its own.
	{"HistoryAbandonedHasItsOwnNumber", []historyStep{
		{base, at(time.Second), 1, abandon},
		{at(time.Second), at(2 * time.Second), 1, abandon},
		{at(2 * time.Second), at(3 * time.Second), 1, succeed},
	}, 1},
}), []inboxCase{
	opsCase("HistorySucceededWithANote", testHistorySucceededWithANote),
	opsCase("HistoryCrashed", testHistoryCrashed),
	opsCase("HistoryLeaseLostOnSettle", testHistoryLeaseLostOnSettle),
	opsCase("HistoryLeaseLostOnExtend", testHistoryLeaseLostOnExtend),
	opsCase("HistoryUnchangedByRefusedCalls", testHistoryUnchangedByRefusedCalls),
	opsCase("DetailIsACopy", testDetailIsACopy),
	opsCase("GetMissing", testGetMissing),
})

// Failures of the history's runs.
var (
	failure503  = webhooks.Failure{Class: webhooks.FailureError, Message: "upstream returned 503", Transient: true}
	failureSlow = webhooks.Failure{Class: webhooks.FailureTimeout, Message: "handler did not finish within 30s", Transient: true}
)

// historyRun is an item's attempts, each acquired and settled by the
// suite's worker, and the attempts the item counts after them.
type historyRun struct {
	name     string
	steps    []historyStep
	attempts int
}

// historyStep is an acquisition at acquired, giving a lease numbered
// attempt, settled at settled.
type historyStep struct {
	acquired, settled time.Time
	attempt           int
	settle            func(l *webhooks.Lease, now time.Time) webhooks.Settlement
}

// failed returns the settlement with outcome and f of a failed attempt,
// retried at retryAt.
func failed(outcome webhooks.AttemptOutcome, f webhooks.Failure, retryAt time.Time) func(*webhooks.Lease, time.Time) webhooks.Settlement {
	return func(l *webhooks.Lease, now time.Time) webhooks.Settlement {
		return webhooks.Settlement{Lease: l, Outcome: outcome, Failure: f, RetryAt: retryAt, Now: now}
	}
}

// historyRuns makes a case of each run: after each step the history holds
// every attempt so far, numbered in order, with its outcome, times,
// failure, worker and version.
func historyRuns(runs []historyRun) []inboxCase {
	var cases []inboxCase
	for _, r := range runs {
		cases = append(cases, opsCase(r.name, func(t *testing.T, s opsStore) {
			env := envelope(key("evt_1"), "p", base)
			mustEnqueue(t, s, env)
			checkHistory(t, s, env.Key, nil, "of a new item")
			var want []ops.Attempt
			for i, step := range r.steps {
				l := mustAcquireKey(t, s, env.Key, step.acquired, leaseFor)
				if l.Attempt != step.attempt {
					t.Errorf("Acquire #%d: Lease.Attempt = %d; want %d", i+1, l.Attempt, step.attempt)
				}
				st := step.settle(l, step.settled)
				mustSettle(t, s, st)
				var f webhooks.Failure
				if st.Outcome != webhooks.AttemptSucceeded && st.Outcome != webhooks.AttemptAbandoned {
					f = st.Failure
				}
				want = append(want, attemptOf(i+1, st.Outcome, step.acquired, step.settled, f))
				checkHistory(t, s, env.Key, want, fmt.Sprintf("after %d attempts", i+1))
			}
			if it := mustGet(t, s, env.Key); it.Attempts != r.attempts {
				t.Errorf("Item.Attempts = %d after the run; want %d", it.Attempts, r.attempts)
			}
		}))
	}
	return cases
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

func fmtAttempts(as []ops.Attempt) string { return fmtList(as, fmtAttempt) }

// testHistorySucceededWithANote: a succeeded settlement's Failure is a
// note the history keeps (the Processor's FailureNoHandler for an event
// acknowledged without a handler), by Settle and by SettleBatch alike; it
// is never the item's LastError.
func testHistorySucceededWithANote(t *testing.T, s opsStore) {
	note := webhooks.Failure{Class: webhooks.FailureNoHandler, Message: `no handler for event type "ping": acknowledged without being handled`}
	// two is due 1µs after one: Acquire(Max 1) takes the longest due, and
	// which of two items due at once it takes is not the contract's.
	one, two := envelope(key("evt_1"), "p", base), envelope(key("evt_2"), "p", at(time.Microsecond))
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
	wantRefused(t, s, second, now, webhooks.ErrAlreadySettled, "the token that settled the item")
	wantRefused(t, s, first, now, webhooks.ErrLeaseLost, "the token of an earlier, settled attempt")
	forged := *second
	forged.Token = "00000000-0000-4000-8000-000000000000"
	wantLeaseLost(t, s.Settle(t.Context(), succeed(&forged, now)), "Settle with a token never issued")
	checkHistory(t, s, env.Key, want, "after refused settlements (nothing may change)")
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
