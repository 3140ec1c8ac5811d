package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// scopedPauseCases pin pauses narrowed by a webhooks.PauseScope: the jobs
// a pause holds are parked (pending, unleased, their attempts and due
// times kept) while the handler's other jobs run; jobs that become due
// while it holds are held too; the end of the pause gives them back in
// their order.
var scopedPauseCases = []inboxCase{
	{"ScopeHoldsItsJobs", testScopeHoldsItsJobs},
	{"ScopeHoldsRetriesAndExpiredLeases", testScopeHoldsRetriesAndExpiredLeases},
	{"ScopesOfEveryHandlerOverlap", testScopesOfEveryHandlerOverlap},
	{"ScopeHoldsAnOrderingKey", testScopeHoldsAnOrderingKey},
	{"ScopeHoldsReplays", testScopeHoldsReplays},
	{"ProbePassesOverHeldJobs", testProbePassesOverHeldJobs},
	{"EveryHandlerHoldsTheProbe", testEveryHandlerHoldsTheProbe},
}

// scopedEnvelope returns an envelope of the event id of provider and
// tenant, of type eventType, received at receivedAt, for the unordered
// jobs of handlers.
func scopedEnvelope(provider, tenant, id, eventType string, receivedAt time.Time, handlers ...string) webhooks.Envelope {
	env := jobsEnvelope(webhooks.InboxKey{Provider: provider, Tenant: tenant, EventID: id}, "p "+id, receivedAt, handlers...)
	env.EventType = eventType
	return env
}

// scopedPause returns an operator's pause of handler in scope at now.
func scopedPause(handler string, scope webhooks.PauseScope, now time.Time) webhooks.PauseRequest {
	req := pauseOf(handler, webhooks.PauseOperator, now, time.Time{})
	req.Scope = scope
	return req
}

// scopedResume returns an operator's resume of handler in scope at now.
func scopedResume(handler string, scope webhooks.PauseScope, now time.Time) webhooks.ResumeRequest {
	req := resumeOf(handler, webhooks.PauseOperator, now)
	req.Scope = scope
	return req
}

// wantLeased requires Acquire(Handler: handler, Max 100) at now to lease
// exactly the events ids, in that order when ordered, and returns the
// leases by event ID.
func wantLeased(t *testing.T, s webhooks.InboxStore, handler string, now time.Time, ordered bool, why string, ids ...string) map[string]*webhooks.Lease {
	t.Helper()
	leases := acquireFor(t, s, handler, now, leaseFor, 100)
	got := make([]string, 0, len(leases))
	byID := map[string]*webhooks.Lease{}
	for _, l := range leases {
		got = append(got, l.Key().EventID)
		byID[l.Key().EventID] = l
	}
	want := slices.Clone(ids)
	if !ordered {
		slices.Sort(got)
		slices.Sort(want)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Acquire(Handler %q, Now %s) leased %v; want %v: %s", handler, fmtTime(now), got, ids, why)
	}
	return byID
}

// wantRan is wantLeased, then a success of each lease at now.
func wantRan(t *testing.T, s webhooks.InboxStore, handler string, now time.Time, ordered bool, why string, ids ...string) {
	t.Helper()
	for _, l := range wantLeased(t, s, handler, now, ordered, why, ids...) {
		mustSettle(t, s, succeed(l, now))
	}
}

// wantParked requires the job of handler of the event k, when the store
// is an ops.Store, to be pending with attempts attempts, due at due.
func wantParked(t *testing.T, s webhooks.InboxStore, k webhooks.InboxKey, handler string, attempts int, due time.Time) {
	t.Helper()
	o, ok := s.(ops.Store)
	if !ok {
		return
	}
	j := jobOf(t, mustDetail(t, o, k), handler)
	if j.State != webhooks.StatePending || j.Attempts != attempts || !j.NextAttemptAt.Equal(due) {
		t.Errorf("job %s of %s while held: state %s, %d attempts, due %s; want pending, %d, due %s",
			fmtKey(k), handler, j.State, j.Attempts, fmtTime(j.NextAttemptAt), attempts, fmtTime(due))
	}
}

// wantParkedCount requires Stats.Parked at now to be n, when the store is
// an ops.Store: the held jobs are parked, out of the due range, not only
// passed over by acquisitions.
func wantParkedCount(t *testing.T, s webhooks.InboxStore, now time.Time, n int64, why string) {
	t.Helper()
	if o, ok := s.(opsStore); ok {
		if st := mustStats(t, o, now); st.Parked != n {
			t.Errorf("Stats.Parked at %s: %d; want %d: %s", fmtTime(now), st.Parked, n, why)
		}
	}
}

// testScopeHoldsItsJobs: a pause of ledger's jobs of one tenant's
// invoice events holds those only (its other jobs, and audit's, run),
// keeps them pending with no attempt and their due times, holds an
// event of the scope that arrives while it holds, counts them in Stats,
// is listed with its scope and is ended by a resume of that scope only;
// then the held jobs run, the longest due first, on their first attempt.
// Mutations: the scope ignored (everything held, or nothing); a held job
// given a new due time; an arrival not held; the resume ending a pause
// of another scope; the held jobs' order lost.
func testScopeHoldsItsJobs(t *testing.T, s webhooks.InboxStore) {
	ps := s.(webhooks.PauseStore)
	scope := webhooks.PauseScope{Provider: "acme", Tenant: "t1", Types: "invoice.*"}
	mustEnqueue(t, s, scopedEnvelope("acme", "t1", "inv-1", "invoice.paid", base, ledger, audit))
	mustEnqueue(t, s, scopedEnvelope("acme", "t1", "inv-2", "invoice.payment.failed", at(time.Second), ledger, audit))
	mustEnqueue(t, s, scopedEnvelope("acme", "t1", "cus-1", "customer.created", at(2*time.Second), ledger, audit))
	mustEnqueue(t, s, scopedEnvelope("acme", "t2", "inv-3", "invoice.paid", at(3*time.Second), ledger, audit))
	mustEnqueue(t, s, scopedEnvelope("other", "t1", "inv-4", "invoice.paid", at(4*time.Second), ledger, audit))
	mustEnqueue(t, s, scopedEnvelope("acme", "t1", "inv", "invoice", at(5*time.Second), ledger, audit))
	mustEnqueue(t, s, scopedEnvelope("acme", "t1", "inv-dot", "invoice.", at(6*time.Second), ledger, audit))
	if err := ps.Pause(t.Context(), scopedPause(ledger, scope, at(10*time.Second))); err != nil {
		t.Fatalf("Pause(ledger, %s): %v", scope, err)
	}
	mustEnqueue(t, s, scopedEnvelope("acme", "t1", "inv-5", "invoice.created", at(20*time.Second), ledger, audit))

	wantRan(t, s, ledger, at(time.Minute), false, "acme/t1's invoice.* jobs are held (not invoice, nor invoice.)",
		"cus-1", "inv-3", "inv-4", "inv", "inv-dot")
	wantRan(t, s, audit, at(time.Minute), false, "the pause is ledger's",
		"inv-1", "inv-2", "cus-1", "inv-3", "inv-4", "inv", "inv-dot", "inv-5")
	wantNoJobDue(t, s, ledger, at(time.Hour), "what is left of ledger's jobs is held")
	acme1 := func(id string) webhooks.InboxKey {
		return webhooks.InboxKey{Provider: "acme", Tenant: "t1", EventID: id}
	}
	wantParked(t, s, acme1("inv-1"), ledger, 0, base)
	wantParked(t, s, acme1("inv-2"), ledger, 0, at(time.Second))
	wantParked(t, s, acme1("inv-5"), ledger, 0, at(20*time.Second))
	if o, ok := s.(opsStore); ok {
		st := mustStats(t, o, at(time.Hour))
		var ledgerParked int64 = -1
		for _, h := range st.Handlers {
			if h.Handler == ledger {
				ledgerParked = h.Parked
			}
		}
		if st.Parked != 3 || ledgerParked != 3 || st.Due != 0 {
			t.Errorf("Stats while 3 jobs are held: Parked %d, ledger's %d, Due %d; want 3, 3, 0", st.Parked, ledgerParked, st.Due)
		}
		if len(st.Paused) != 1 || st.Paused[0].Scope != scope || st.Paused[0].Handler != ledger {
			t.Errorf("Stats.Paused: %+v; want ledger's pause of %s", st.Paused, scope)
		}
	}
	for _, other := range []webhooks.PauseScope{{}, {Provider: "acme", Tenant: "t1"}, {Provider: "acme", Tenant: "t1", Types: "invoice.paid"}} {
		if err := ps.Resume(t.Context(), scopedResume(ledger, other, at(time.Hour))); !errors.Is(err, webhooks.ErrNotPaused) {
			t.Errorf("Resume(ledger, %s) while %s is paused: %v; want webhooks.ErrNotPaused", other, scope, err)
		}
	}
	wantNoJobDue(t, s, ledger, at(time.Hour), "a resume of another scope ends nothing")
	if err := ps.Resume(t.Context(), scopedResume(ledger, scope, at(2*time.Hour))); err != nil {
		t.Fatalf("Resume(ledger, %s): %v", scope, err)
	}
	for _, id := range []string{"inv-1", "inv-2", "inv-5"} {
		l := mustAcquireJob(t, s, ledger, acme1(id), at(2*time.Hour), leaseFor)
		if l.Attempt != 1 {
			t.Errorf("the lease on %s after the resume: Attempt %d; want 1", id, l.Attempt)
		}
	}
	p := mustPauses(t, ps, 10)
	if len(p) != 1 || p[0].Scope != scope || !p[0].EndedAt.Equal(at(2*time.Hour)) {
		t.Errorf("Pauses after the resume: %+v; want the pause of %s, ended at %s", p, scope, fmtTime(at(2*time.Hour)))
	}
}

// testScopeHoldsRetriesAndExpiredLeases: a job leased when a scoped pause
// began is held once it is retried, and once its lease expires: neither
// is leased again while the pause holds, and both are after its end.
// Mutations: a retry not held; an expired lease taken over.
func testScopeHoldsRetriesAndExpiredLeases(t *testing.T, s webhooks.InboxStore) {
	ps := s.(webhooks.PauseStore)
	scope := webhooks.PauseScope{Provider: "acme"}
	mustEnqueue(t, s, scopedEnvelope("acme", "t1", "r", "invoice.paid", base, ledger))
	mustEnqueue(t, s, scopedEnvelope("acme", "t1", "x", "invoice.paid", at(time.Second), ledger))
	mustEnqueue(t, s, scopedEnvelope("acme", "t1", "a", "invoice.paid", at(time.Second), ledger))
	mustEnqueue(t, s, scopedEnvelope("acme", "t1", "b", "invoice.paid", at(time.Second), ledger))
	mustEnqueue(t, s, scopedEnvelope("other", "t1", "o", "invoice.paid", at(time.Hour), ledger))
	leases := wantLeased(t, s, ledger, at(2*time.Second), false, "nothing is paused yet", "r", "x", "a", "b")
	if err := ps.Pause(t.Context(), scopedPause(ledger, scope, at(3*time.Second))); err != nil {
		t.Fatalf("Pause(ledger, %s): %v", scope, err)
	}
	mustSettle(t, s, retry(leases["r"], transient, at(5*time.Second), at(4*time.Second)))
	mustSettle(t, s, abandon(leases["a"], at(4*time.Second)))
	// b's retry, in a batch where the store settles so.
	settleEither(t, s, retry(leases["b"], transient, at(6*time.Second), at(4*time.Second)), is[webhooks.BatchSettler](s))
	wantParkedCount(t, s, at(4*time.Second), 3, "r's and b's retries and a's abandoned lease are parked")
	// x's lease expires at 2 s + leaseFor.
	wantRan(t, s, ledger, at(time.Hour), false, "the retries, a's abandoned lease and x's expired lease are held", "o")
	wantParked(t, s, webhooks.InboxKey{Provider: "acme", Tenant: "t1", EventID: "r"}, ledger, 1, at(5*time.Second))
	wantParked(t, s, webhooks.InboxKey{Provider: "acme", Tenant: "t1", EventID: "a"}, ledger, 0, at(4*time.Second))
	if err := ps.Resume(t.Context(), scopedResume(ledger, scope, at(2*time.Hour))); err != nil {
		t.Fatalf("Resume(ledger, %s): %v", scope, err)
	}
	got := wantLeased(t, s, ledger, at(2*time.Hour), true,
		"the pause ended: a's give-back (due at 4 s), r's retry (at 5 s), b's (at 6 s), then x's expired lease (at 62 s), in due order", "a", "r", "b", "x")
	if got["r"].Attempt != 2 {
		t.Errorf("r's lease after the resume: Attempt %d; want 2 (its first failed)", got["r"].Attempt)
	}
}

// testScopesOfEveryHandlerOverlap: a pause of every handler's jobs of one
// provider holds them for ledger and audit alike; a second pause of
// ledger's invoice.paid jobs overlaps it; ending the first gives back
// what the second does not hold, ending the second the rest. A pause of
// every handler with no scope holds every job. Mutations: EveryHandler
// matching no handler; a job given back while another pause holds it.
func testScopesOfEveryHandlerOverlap(t *testing.T, s webhooks.InboxStore) {
	ps := s.(webhooks.PauseStore)
	acme := webhooks.PauseScope{Provider: "acme"}
	paid := webhooks.PauseScope{Types: "invoice.paid"}
	mustEnqueue(t, s, scopedEnvelope("acme", "t1", "a-paid", "invoice.paid", base, ledger, audit))
	mustEnqueue(t, s, scopedEnvelope("acme", "t1", "a-cus", "customer.created", at(time.Second), ledger, audit))
	mustEnqueue(t, s, scopedEnvelope("other", "t1", "o-paid", "invoice.paid", at(2*time.Second), ledger, audit))
	if err := ps.Pause(t.Context(), scopedPause(webhooks.EveryHandler, acme, at(3*time.Second))); err != nil {
		t.Fatalf("Pause(every handler, %s): %v", acme, err)
	}
	if err := ps.Pause(t.Context(), scopedPause(ledger, paid, at(4*time.Second))); err != nil {
		t.Fatalf("Pause(ledger, %s): %v", paid, err)
	}
	wantRan(t, s, audit, at(time.Minute), false, "acme is held for every handler", "o-paid")
	wantNoJobDue(t, s, ledger, at(time.Minute), "acme is held for every handler, invoice.paid for ledger")
	if p := mustPauses(t, ps, 0); len(p) != 2 || p[0].Handler != webhooks.EveryHandler || p[0].Scope != acme || p[1].Handler != ledger || p[1].Scope != paid {
		t.Errorf("Pauses: %+v; want every handler's of %s, then ledger's of %s", p, acme, paid)
	}
	wantParkedCount(t, s, at(time.Minute), 5, "every job of acme (two events, two handlers) and ledger's o-paid")
	if err := ps.Resume(t.Context(), scopedResume(webhooks.EveryHandler, acme, at(time.Hour))); err != nil {
		t.Fatalf("Resume(every handler, %s): %v", acme, err)
	}
	wantParkedCount(t, s, at(time.Hour), 2, "ledger's invoice.paid jobs stay parked (a-paid, o-paid)")
	wantRan(t, s, audit, at(time.Hour), false, "acme's pause ended", "a-paid", "a-cus")
	wantRan(t, s, ledger, at(time.Hour), false, "invoice.paid is still held for ledger", "a-cus")
	if err := ps.Resume(t.Context(), scopedResume(ledger, paid, at(2*time.Hour))); err != nil {
		t.Fatalf("Resume(ledger, %s): %v", paid, err)
	}
	wantRan(t, s, ledger, at(2*time.Hour), true, "every pause ended", "a-paid", "o-paid")

	mustEnqueue(t, s, scopedEnvelope("acme", "t1", "later", "customer.created", at(3*time.Hour), ledger, audit))
	if err := ps.Pause(t.Context(), scopedPause(webhooks.EveryHandler, webhooks.PauseScope{}, at(3*time.Hour))); err != nil {
		t.Fatalf("Pause(every handler): %v", err)
	}
	wantNoJobDue(t, s, ledger, at(4*time.Hour), "every handler is paused")
	wantNoJobDue(t, s, audit, at(4*time.Hour), "every handler is paused")
	if err := ps.Resume(t.Context(), scopedResume(webhooks.EveryHandler, webhooks.PauseScope{}, at(4*time.Hour))); err != nil {
		t.Fatalf("Resume(every handler): %v", err)
	}
	wantLeased(t, s, audit, at(4*time.Hour), false, "the pause of every handler ended", "later")
}

// testScopeHoldsAnOrderingKey: a pause of a type holds an ordered key's
// head of that type, and the key's later jobs of other types wait behind
// it; after the resume they run in the key's order. Mutations: a later
// job of the key leased past its held head.
func testScopeHoldsAnOrderingKey(t *testing.T, s webhooks.InboxStore) {
	if !hasOrderingKeys(s) {
		t.Skip("the store does not run ordered jobs in key order (webhooks.FanOutOf(store).OrderingKeys is false)")
	}
	ps := s.(webhooks.PauseStore)
	scope := webhooks.PauseScope{Types: "invoice.paid"}
	if err := ps.Pause(t.Context(), scopedPause(ledger, scope, base)); err != nil {
		t.Fatalf("Pause(ledger, %s): %v", scope, err)
	}
	first := ordered("k-1", "k", 1, at(time.Second))
	second := ordered("k-2", "k", 2, at(2*time.Second))
	second.EventType = "customer.updated"
	mustEnqueue(t, s, first)
	mustEnqueue(t, s, second)
	other := ordered("j-1", "j", 1, at(3*time.Second))
	other.EventType = "customer.updated"
	mustEnqueue(t, s, other)
	wantRan(t, s, ledger, at(time.Minute), false, "key k's head is held, so k-2 waits; key j runs", "j-1")
	wantParked(t, s, key("k-1"), ledger, 0, at(time.Second))
	wantState(t, s, "k-2", ledger, webhooks.StateWaiting, "its key's head is held")
	if err := ps.Resume(t.Context(), scopedResume(ledger, scope, at(time.Hour))); err != nil {
		t.Fatalf("Resume(ledger, %s): %v", scope, err)
	}
	got := wantLeased(t, s, ledger, at(time.Hour), false, "the pause ended: k's head", "k-1")
	mustSettle(t, s, succeed(got["k-1"], at(time.Hour)))
	wantRan(t, s, ledger, at(time.Hour), false, "k-1 succeeded: k-2 is next", "k-2")

	// A key's next job that the pause holds is parked when it becomes the
	// head, and its later jobs wait behind it.
	if err := ps.Pause(t.Context(), scopedPause(ledger, scope, at(2*time.Hour))); err != nil {
		t.Fatalf("Pause(ledger, %s) again: %v", scope, err)
	}
	for i, typ := range []string{"customer.updated", "invoice.paid", "customer.deleted"} {
		env := ordered(fmt.Sprintf("m-%d", i+1), "m", int64(i+1), at(2*time.Hour+time.Duration(i)*time.Second))
		env.EventType = typ
		mustEnqueue(t, s, env)
	}
	got = wantLeased(t, s, ledger, at(3*time.Hour), false, "m's head is not held", "m-1")
	mustSettle(t, s, succeed(got["m-1"], at(3*time.Hour)))
	wantNoJobDue(t, s, ledger, at(4*time.Hour), "m-2, m's head now, is held, and m-3 waits behind it")
	wantParkedCount(t, s, at(4*time.Hour), 1, "the promoted m-2 is parked")
	wantState(t, s, "m-3", ledger, webhooks.StateWaiting, "its key's head is held")
	if err := ps.Resume(t.Context(), scopedResume(ledger, scope, at(5*time.Hour))); err != nil {
		t.Fatalf("Resume(ledger, %s) again: %v", scope, err)
	}
	got = wantLeased(t, s, ledger, at(5*time.Hour), false, "the pause ended: m-2", "m-2")
	mustSettle(t, s, succeed(got["m-2"], at(5*time.Hour)))
	wantLeased(t, s, ledger, at(5*time.Hour), false, "then m-3", "m-3")
}

// testProbePassesOverHeldJobs: while a breaker's pause of ledger waits for
// its probe, and a scoped pause holds some of ledger's jobs (one whose
// lease expired after the pause began, which no store parks), no probe is
// claimed while only held jobs are due, and then the probe is one the
// scope does not hold. Mutations: the probe leasing a held job; a probe
// claimed with nothing it may lease.
func testProbePassesOverHeldJobs(t *testing.T, s webhooks.InboxStore) {
	ps := s.(webhooks.PauseStore)
	scope := webhooks.PauseScope{Provider: "acme"}
	mustEnqueue(t, s, scopedEnvelope("acme", "t1", "held", "invoice.paid", base, ledger))
	// Due a millisecond later: which of two jobs due at one instant
	// Acquire(Max 1) leases is the store's to choose.
	mustEnqueue(t, s, scopedEnvelope("acme", "t1", "parked", "invoice.paid", at(time.Millisecond), ledger))
	mustAcquireJob(t, s, ledger, webhooks.InboxKey{Provider: "acme", Tenant: "t1", EventID: "held"}, base, leaseFor)
	if err := ps.Pause(t.Context(), scopedPause(ledger, scope, at(time.Second))); err != nil {
		t.Fatalf("Pause(ledger, %s): %v", scope, err)
	}
	if err := ps.Pause(t.Context(), pauseOf(ledger, webhooks.PauseBreaker, at(time.Second), at(90*time.Second))); err != nil {
		t.Fatalf("Pause(ledger, breaker): %v", err)
	}
	wantNoJobDue(t, s, ledger, at(2*time.Minute), "the only due jobs are held")
	for _, p := range mustPauses(t, ps, 0) {
		if p.Cause == webhooks.PauseBreaker && !p.ProbeUntil.IsZero() {
			t.Errorf("the breaker's pause claimed a probe (ProbeUntil %s) with only held jobs due; want none", fmtTime(p.ProbeUntil))
		}
	}
	mustEnqueue(t, s, scopedEnvelope("other", "t1", "free", "invoice.paid", at(2*time.Minute), ledger))
	got := wantLeased(t, s, ledger, at(3*time.Minute), false, "the probe is the job the scope does not hold", "free")
	if !got["free"].Probe {
		t.Errorf("the lease on free: Probe false; want the breaker's probe")
	}
}

// testScopeHoldsReplays: dead letters replayed while a scoped pause holds
// them, one by one or in bulk, are held; the replays' answers give their
// due times; after the resume they run. Mutations: a replay not held; a
// replay answering the parked job's stored due time.
func testScopeHoldsReplays(t *testing.T, s webhooks.InboxStore) {
	o, ok := s.(ops.Store)
	if !ok {
		t.Skip("the store is not an ops.Store: nothing replays")
	}
	ps := s.(webhooks.PauseStore)
	scope := webhooks.PauseScope{Provider: "acme"}
	acme := func(id string) webhooks.InboxKey {
		return webhooks.InboxKey{Provider: "acme", Tenant: "t1", EventID: id}
	}
	for i, id := range []string{"d1", "d2"} {
		mustEnqueue(t, s, scopedEnvelope("acme", "t1", id, "invoice.paid", at(time.Duration(i)*time.Second), ledger))
		mustSettle(t, s, deadLetter(mustAcquireJob(t, s, ledger, acme(id), at(time.Minute), leaseFor), permanent, at(time.Minute)))
	}
	if err := ps.Pause(t.Context(), scopedPause(ledger, scope, at(2*time.Minute))); err != nil {
		t.Fatalf("Pause(ledger, %s): %v", scope, err)
	}
	one := replayOf(acme("d1"), at(3*time.Minute))
	one.Handler = ledger
	res, err := o.Replay(t.Context(), one)
	if err != nil || len(res.Items) != 1 || !res.Items[0].DueAt.Equal(at(3*time.Minute)) {
		t.Fatalf("Replay(d1) while acme is held: %+v, %v; want d1, due at %s", res, err, fmtTime(at(3*time.Minute)))
	}
	res, err = o.Replay(t.Context(), bulkReplay(ops.Query{Limit: 100}, at(4*time.Minute)))
	if err != nil || len(res.Items) != 1 || res.Items[0].Key != acme("d2") || !res.Items[0].DueAt.Equal(at(4*time.Minute)) {
		t.Fatalf("bulk Replay while acme is held: %+v, %v; want d2, due at %s", res, err, fmtTime(at(4*time.Minute)))
	}
	wantNoJobDue(t, s, ledger, at(time.Hour), "the replayed jobs are held")
	wantParkedCount(t, s, at(time.Hour), 2, "both replays are parked")
	// A replay to another handler makes that handler's job, parked while
	// a pause of its handler holds it.
	if webhooks.FanOutOf(s).Handlers {
		if err := ps.Pause(t.Context(), scopedPause(audit, scope, at(5*time.Minute))); err != nil {
			t.Fatalf("Pause(audit, %s): %v", scope, err)
		}
		to := replayOf(acme("d1"), at(6*time.Minute))
		to.Handler, to.ToHandler = ledger, audit
		if res, err := o.Replay(t.Context(), to); err != nil || len(res.Items) != 1 || !res.Items[0].DueAt.Equal(at(6*time.Minute)) {
			t.Fatalf("Replay(d1, ToHandler audit) while acme is held for audit: %+v, %v; want audit's job due at %s", res, err, fmtTime(at(6*time.Minute)))
		}
		wantNoJobDue(t, s, audit, at(time.Hour), "audit's new job is held")
		wantParkedCount(t, s, at(time.Hour), 3, "the job the replay made for audit is parked")
		if err := ps.Resume(t.Context(), scopedResume(audit, scope, at(2*time.Hour))); err != nil {
			t.Fatalf("Resume(audit, %s): %v", scope, err)
		}
		wantLeased(t, s, audit, at(2*time.Hour), false, "audit's pause ended", "d1")
	}
	wantParked(t, s, acme("d1"), ledger, 0, at(3*time.Minute))
	wantParked(t, s, acme("d2"), ledger, 0, at(4*time.Minute))
	if err := ps.Resume(t.Context(), scopedResume(ledger, scope, at(2*time.Hour))); err != nil {
		t.Fatalf("Resume(ledger, %s): %v", scope, err)
	}
	wantLeased(t, s, ledger, at(2*time.Hour), true, "the pause ended: the replays, in due order", "d1", "d2")
}

// testEveryHandlerHoldsTheProbe: a pause of every handler's jobs holds a
// breaker's probe too: past the cool-down, nothing is leased and no probe
// claimed until it ends; then the probe runs. Mutation: the probe claimed
// (and a job leased) under the pause of every handler.
func testEveryHandlerHoldsTheProbe(t *testing.T, s webhooks.InboxStore) {
	ps := s.(webhooks.PauseStore)
	enqueueJobs(t, s, "l", 1, base, ledger)
	if err := ps.Pause(t.Context(), pauseOf(ledger, webhooks.PauseBreaker, base, at(10*time.Second))); err != nil {
		t.Fatalf("Pause(ledger, breaker): %v", err)
	}
	if err := ps.Pause(t.Context(), scopedPause(webhooks.EveryHandler, webhooks.PauseScope{}, at(time.Second))); err != nil {
		t.Fatalf("Pause(every handler): %v", err)
	}
	wantNoJobDue(t, s, ledger, at(time.Minute), "every handler is paused, past ledger's cool-down")
	for _, p := range mustPauses(t, ps, 0) {
		if p.Cause == webhooks.PauseBreaker && !p.ProbeUntil.IsZero() {
			t.Errorf("the breaker's pause claimed a probe (ProbeUntil %s) while every handler is paused; want none", fmtTime(p.ProbeUntil))
		}
	}
	if err := ps.Resume(t.Context(), scopedResume(webhooks.EveryHandler, webhooks.PauseScope{}, at(2*time.Minute))); err != nil {
		t.Fatalf("Resume(every handler): %v", err)
	}
	leases := acquireFor(t, s, ledger, at(2*time.Minute), leaseFor, 10)
	if len(leases) != 1 || !leases[0].Probe {
		t.Fatalf("Acquire(ledger) after the pause of every handler ended leased %s; want its one job as the breaker's probe", leaseKeys(leases))
	}
}
