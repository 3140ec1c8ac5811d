package storetest

import (
	"errors"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// handlerOpsCases are the fan-out cases that look at what operators see
// and do: they run in the Handlers group, on an ops.Store only.
var handlerOpsCases = []inboxCase{
	fanOutOpsCase("ReplayOneHandler", testReplayOneHandler),
	fanOutOpsCase("CloseOneHandler", testCloseOneHandler),
	fanOutOpsCase("ListByHandler", testListByHandler),
	fanOutOpsCase("StatsPerHandler", testStatsPerHandler),
	fanOutOpsCase("ReplayToNewHandler", testReplayToNewHandler),
}

// fanOutOpsCase makes an inboxCase of a case of the Handlers or
// OrderingKeys group that needs an ops.Store, skipped on any other store.
func fanOutOpsCase(name string, run func(t *testing.T, s opsStore)) inboxCase {
	return inboxCase{name, func(t *testing.T, s webhooks.InboxStore) {
		o, ok := s.(opsStore)
		if !ok {
			t.Skip("the store is not an ops.Store")
		}
		run(t, o)
	}}
}

// deadJobs enqueues the event id for handlers and dead-letters each job at
// deadAt.
func deadJobs(t *testing.T, s webhooks.InboxStore, id string, deadAt time.Time, handlers ...string) {
	t.Helper()
	mustEnqueue(t, s, jobsEnvelope(key(id), "p "+id, deadAt, handlers...))
	for _, h := range handlers {
		mustSettle(t, s, deadLetter(mustAcquireJob(t, s, h, key(id), deadAt, leaseFor), permanent, deadAt))
	}
}

// jobList lists q and returns the jobs as "eventID@handler".
func jobList(t *testing.T, s opsStore, q ops.Query) ([]string, string) {
	t.Helper()
	page, err := s.List(t.Context(), q)
	if err != nil {
		t.Fatalf("List(%s): %v", fmtQuery(q), err)
	}
	var jobs []string
	for _, it := range page.Items {
		jobs = append(jobs, it.Key.EventID+"@"+it.Handler)
	}
	return jobs, page.Next
}

// testReplayOneHandler: a replay of (Key, Handler) replays that job only,
// audited on it; a handler the event has no job of is not found.
// Mutation: replay the event's first job whatever Handler says.
func testReplayOneHandler(t *testing.T, s opsStore) {
	deadJobs(t, s, "evt_1", base, ledger, audit)
	for _, h := range []string{"", "metrics"} {
		req := replayOf(key("evt_1"), at(time.Second))
		req.Handler = h
		if _, err := s.Replay(t.Context(), req); !errors.Is(err, ops.ErrNotFound) {
			t.Errorf("Replay(evt_1, Handler %q), a handler it has no job of: error %v; want ops.ErrNotFound", h, err)
		}
	}
	req := replayOf(key("evt_1"), at(time.Second))
	req.Handler = ledger
	wantReplayed(t, "Replay(evt_1, Handler ledger)", mustReplay(t, s, req), []ops.Replayed{{Key: key("evt_1"), Handler: ledger, DueAt: at(time.Second)}})
	wantNoJobDue(t, s, audit, at(time.Hour), "only ledger's job was replayed")
	mustAcquireJob(t, s, ledger, key("evt_1"), at(time.Second), leaseFor)
	d := mustDetail(t, s, key("evt_1"))
	if a := jobOf(t, d, ledger).Audit; len(a) != 1 || a[0].Action != ops.ActionReplay {
		t.Errorf("ledger's audit trail after its replay:%s\nwant one replay", fmtAudits(a))
	}
	if a := jobOf(t, d, audit).Audit; len(a) != 0 {
		t.Errorf("audit's audit trail after ledger's replay:%s\nwant none", fmtAudits(a))
	}
}

// testCloseOneHandler: closing (Key, Handler) closes that job only; the
// dead letters then are the other job, the closed items that one.
// Mutation: close by InboxKey.
func testCloseOneHandler(t *testing.T, s opsStore) {
	deadJobs(t, s, "evt_1", base, ledger, audit)
	req := closeOf(key("evt_1"), at(time.Second))
	if err := s.CloseDeadLetter(t.Context(), req); !errors.Is(err, ops.ErrNotFound) {
		t.Errorf("CloseDeadLetter(evt_1, Handler \"\"), a handler it has no job of: error %v; want ops.ErrNotFound", err)
	}
	req.Handler = audit
	if err := s.CloseDeadLetter(t.Context(), req); err != nil {
		t.Fatalf("CloseDeadLetter(evt_1, Handler audit): %v", err)
	}
	if dead, _ := jobList(t, s, ops.Query{Limit: 10}); len(dead) != 1 || dead[0] != "evt_1@ledger" {
		t.Errorf("dead letters after audit's job was closed: %v; want [evt_1@ledger]", dead)
	}
	if closed, _ := jobList(t, s, ops.Query{State: webhooks.StateClosed, Limit: 10}); len(closed) != 1 || closed[0] != "evt_1@audit" {
		t.Errorf("closed items after audit's job was closed: %v; want [evt_1@audit]", closed)
	}
	if err := s.CloseDeadLetter(t.Context(), req); !errors.Is(err, ops.ErrNotDead) {
		t.Errorf("CloseDeadLetter(evt_1, Handler audit) again: error %v; want ops.ErrNotDead", err)
	}
}

// testListByHandler: dead letters are jobs, newest first, then by key and
// handler (descending); Query.Handler selects one handler's; pages of one
// walk them all, each once (the cursor holds the handler); a bulk replay
// with Query.Handler takes that handler's only. Mutation: a cursor
// without the handler.
func testListByHandler(t *testing.T, s opsStore) {
	deadJobs(t, s, "e1", at(time.Second), ledger, audit)
	deadJobs(t, s, "e2", at(2*time.Second), ledger, audit)
	all := []string{"e2@ledger", "e2@audit", "e1@ledger", "e1@audit"}
	if got, _ := jobList(t, s, ops.Query{Limit: 10}); !equalStrings(got, all) {
		t.Errorf("List(dead letters) = %v; want %v", got, all)
	}
	h := ledger
	if got, _ := jobList(t, s, ops.Query{Handler: &h, Limit: 10}); !equalStrings(got, []string{"e2@ledger", "e1@ledger"}) {
		t.Errorf("List(dead letters of ledger) = %v; want [e2@ledger e1@ledger]", got)
	}
	var walked []string
	q := ops.Query{Limit: 1}
	for range 10 {
		got, next := jobList(t, s, q)
		walked = append(walked, got...)
		if next == "" {
			break
		}
		q.After = next
	}
	if !equalStrings(walked, all) {
		t.Errorf("List(dead letters) one per page: %v; want %v", walked, all)
	}
	h = audit
	res := mustReplay(t, s, bulkReplay(ops.Query{Handler: &h, Limit: 10}, at(time.Minute)))
	wantReplayed(t, "bulk Replay(dead letters of audit)", res, []ops.Replayed{
		{Key: key("e2"), Handler: audit, DueAt: at(time.Minute)}, {Key: key("e1"), Handler: audit, DueAt: at(time.Minute)},
	})
	if got, _ := jobList(t, s, ops.Query{Limit: 10}); !equalStrings(got, []string{"e2@ledger", "e1@ledger"}) {
		t.Errorf("List(dead letters) after audit's were replayed = %v; want [e2@ledger e1@ledger]", got)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// testStatsPerHandler: Stats counts each handler's jobs apart (""
// first), and dead-letter groups by handler, provider and event type. A
// handler whose jobs all succeeded may be listed with zero counts or left
// out. Mutation: Stats.Handlers summed over every handler.
func testStatsPerHandler(t *testing.T, s opsStore) {
	mustEnqueue(t, s, envelope(key("d1"), "p", base)) // the default handler's, due
	mustEnqueue(t, s, jobsEnvelope(key("e1"), "p", base, ledger, audit, "archive"))
	// e2 is due after e1: the contract leaves which of two jobs due at
	// the same time one Acquire(Max 1) leases to the store.
	later := at(time.Millisecond)
	mustEnqueue(t, s, jobsEnvelope(key("e2"), "p", later, ledger))
	mustSettle(t, s, succeed(mustAcquireJob(t, s, "archive", key("e1"), base, leaseFor), base))
	mustSettle(t, s, deadLetter(mustAcquireJob(t, s, ledger, key("e1"), base, leaseFor), permanent, base))
	mustAcquireJob(t, s, ledger, key("e2"), later, leaseFor) // leased, unexpired
	mustSettle(t, s, retry(mustAcquireJob(t, s, audit, key("e1"), base, leaseFor), transient, at(time.Hour), base))

	now := at(time.Second)
	st := mustStats(t, s, now)
	zero := func() map[webhooks.State]int64 {
		return map[webhooks.State]int64{webhooks.StatePending: 0, webhooks.StateLeased: 0, webhooks.StateDead: 0, webhooks.StateClosed: 0, webhooks.StateWaiting: 0}
	}
	with := func(state webhooks.State, n int64) map[webhooks.State]int64 { m := zero(); m[state] = n; return m }
	want := []ops.HandlerStats{
		{Handler: "", States: with(webhooks.StatePending, 1), Due: 1, OldestDue: base},
		{Handler: audit, States: with(webhooks.StatePending, 1), Retrying: 1},
		{Handler: ledger, States: map[webhooks.State]int64{webhooks.StatePending: 0, webhooks.StateLeased: 1, webhooks.StateDead: 1, webhooks.StateClosed: 0, webhooks.StateWaiting: 0}, LeasesHeld: 1},
	}
	var got []ops.HandlerStats
	for _, h := range st.Handlers {
		if h.Handler == "archive" && h.Due == 0 && h.Retrying == 0 && h.LeasesHeld == 0 && h.OldestDue.IsZero() && sumStates(h.States) == 0 {
			continue // only succeeded jobs: listing it is allowed
		}
		got = append(got, h)
	}
	if len(got) != len(want) {
		t.Fatalf("Stats.Handlers = %+v; want %+v", st.Handlers, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Handler != w.Handler || g.Due != w.Due || g.Retrying != w.Retrying || g.LeasesHeld != w.LeasesHeld || !g.OldestDue.Equal(w.OldestDue) || !statesEqual(g.States, w.States) {
			t.Errorf("Stats.Handlers[%d] = %+v; want %+v", i, g, w)
		}
	}
	if st.Due != 1 || st.Retrying != 1 || st.LeasesHeld != 1 || st.States[webhooks.StateDead] != 1 {
		t.Errorf("Stats totals: Due %d, Retrying %d, LeasesHeld %d, dead %d; want 1, 1, 1, 1", st.Due, st.Retrying, st.LeasesHeld, st.States[webhooks.StateDead])
	}
	if wantGroups := []ops.Count{{Handler: ledger, Provider: "acme", EventType: "invoice.paid", N: 1}}; !equalCounts(st.DeadLetters, wantGroups) {
		t.Errorf("Stats.DeadLetters = %+v; want %+v", st.DeadLetters, wantGroups)
	}
}

func sumStates(m map[webhooks.State]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// statesEqual compares state counts, a missing state counting 0.
func statesEqual(a, b map[webhooks.State]int64) bool {
	for _, st := range []webhooks.State{webhooks.StatePending, webhooks.StateLeased, webhooks.StateDead, webhooks.StateClosed, webhooks.StateWaiting, webhooks.StateSucceeded} {
		if a[st] != b[st] {
			return false
		}
	}
	return true
}

func equalCounts(a, b []ops.Count) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// testReplayToNewHandler: a replay with ToHandler creates the event's job
// of that handler, pending with no attempts (ordered with ToOrdered, then
// waiting behind its key's head), audited on it, and leaves the selected
// job as it is; a bulk replay with ToHandler takes the events of
// Query.Handler's selected jobs; a job of ToHandler under way is left as
// it is (ErrNotFinished for one), a finished one replayed. Mutation:
// ToHandler replays the selected job instead.
func testReplayToNewHandler(t *testing.T, s opsStore) {
	mustEnqueue(t, s, jobsEnvelope(key("e1"), "p", base, ledger))
	mustSettle(t, s, succeed(mustAcquireJob(t, s, ledger, key("e1"), base, leaseFor), at(time.Second)))
	h := ledger
	req := bulkReplay(ops.Query{State: webhooks.StateSucceeded, Handler: &h, Limit: 10}, at(time.Minute))
	req.ToHandler = audit
	wantReplayed(t, "bulk Replay(succeeded jobs of ledger, ToHandler audit)", mustReplay(t, s, req), []ops.Replayed{{Key: key("e1"), Handler: audit, DueAt: at(time.Minute)}})
	wantNoJobDue(t, s, ledger, at(time.Hour), "ledger's job is left as it is")
	wantJob := jobItem(jobsEnvelope(key("e1"), "p", base, ledger), audit)
	wantJob.NextAttemptAt, wantJob.UpdatedAt = at(time.Minute), at(time.Minute)
	checkJob(t, s, wantJob, []ops.Attempt{}, "created by a replay to it")
	if a := jobOf(t, mustDetail(t, s, key("e1")), audit).Audit; len(a) != 1 || a[0].Action != ops.ActionReplay || !a[0].At.Equal(at(time.Minute)) {
		t.Errorf("the audit trail of the job a replay created:%s\nwant one replay at %s", fmtAudits(a), fmtTime(at(time.Minute)))
	}
	one := replayOf(key("e1"), at(2*time.Minute))
	one.ToHandler = audit
	if _, err := s.Replay(t.Context(), one); !errors.Is(err, ops.ErrNotFinished) {
		t.Errorf("Replay(e1, ToHandler audit) while audit's job is pending: error %v; want ops.ErrNotFinished", err)
	}
	l := mustAcquireJob(t, s, audit, key("e1"), at(time.Minute), leaseFor)
	mustSettle(t, s, succeed(l, at(2*time.Minute)))
	wantReplayed(t, "Replay(e1, ToHandler audit) after audit's job succeeded", mustReplay(t, s, one), []ops.Replayed{{Key: key("e1"), Handler: audit, DueAt: at(2 * time.Minute)}})
	if again := mustAcquireJob(t, s, audit, key("e1"), at(2*time.Minute), leaseFor); again.Attempt != 1 {
		t.Errorf("audit's job replayed to it again: Attempt %d; want 1 (a fresh budget)", again.Attempt)
	}

	if !webhooks.FanOutOf(s).OrderingKeys {
		return
	}
	for _, id := range []string{"o1", "o2"} {
		env := jobsEnvelope(key(id), "p", base, ledger)
		env.Ordering = webhooks.Ordering{Key: "cus_1"}
		mustEnqueue(t, s, env)
		r := replayOf(key(id), at(3*time.Minute))
		r.ToHandler, r.ToOrdered = "metrics", true
		mustReplay(t, s, r)
	}
	o2 := wantState(t, s, "o2", "metrics", webhooks.StateWaiting, "its job of metrics was created ordered, behind o1's")
	if !o2.Ordered {
		t.Errorf("the job a replay with ToOrdered created: Ordered false; want true")
	}
	wantLeases(t, s, "metrics", at(3*time.Minute), "metrics' ordered jobs of cus_1 run one at a time", "o1")
}
