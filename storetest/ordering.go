package storetest

import (
	"fmt"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// orderingCases pin ordering keys (webhooks.FanOutSupport.OrderingKeys):
// of an ordered handler's jobs of one provider, tenant and key, one at a
// time is pending or leased, the head; the others wait and become the
// head one by one, in (Version, arrival) order, when the head succeeds or
// dies; the flags and the stale guard.
var orderingCases = []inboxCase{
	{"OneAtATimePerKey", testOneAtATimePerKey},
	{"OccurrenceOrder", testOccurrenceOrder},
	{"OlderVersionDemotesUnstartedHead", testOlderVersionDemotesUnstartedHead},
	{"StartedHeadKeepsKey", testStartedHeadKeepsKey},
	{"RetryingHeadHoldsOnlyItsKey", testRetryingHeadHoldsOnlyItsKey},
	{"CrashedHeadTakenOver", testCrashedHeadTakenOver},
	{"AbandonKeepsHead", testAbandonKeepsHead},
	{"UnorderedHandlerIgnoresKey", testUnorderedHandlerIgnoresKey},
	{"DeadHeadReleasesAndFlags", testDeadHeadReleasesAndFlags},
	fanOutOpsCase("OvertookNamesNearestDeadLetter", testOvertookNamesNearestDeadLetter),
	{"StaleGuard", testStaleGuard},
	{"ReplayIntoBusyKey", testReplayIntoBusyKey},
	fanOutOpsCase("HeldKeysInStats", testHeldKeysInStats),
}

// hasOrderingKeys reports whether s runs ordered jobs in key order.
func hasOrderingKeys(s webhooks.InboxStore) bool {
	f := webhooks.FanOutOf(s)
	return f.Handlers && f.OrderingKeys
}

// ordered returns the envelope of event id of ordering key okey at
// version, received at receivedAt, stored for ledger's ordered job.
func ordered(id, okey string, version int64, receivedAt time.Time) webhooks.Envelope {
	env := envelope(key(id), "p "+id, receivedAt)
	env.Jobs = []webhooks.Job{{Handler: ledger, Ordered: true}}
	env.Ordering = webhooks.Ordering{Key: okey, Version: version}
	return env
}

// wantLeases requires Acquire(Handler: handler, Max 100) at now to lease
// exactly the events ids, in any order, and returns the leases by event ID.
func wantLeases(t *testing.T, s webhooks.InboxStore, handler string, now time.Time, why string, ids ...string) map[string]*webhooks.Lease {
	t.Helper()
	leases := acquireFor(t, s, handler, now, leaseFor, 100)
	got := map[string]*webhooks.Lease{}
	for _, l := range leases {
		got[l.Key().EventID] = l
	}
	ok := len(got) == len(ids) && len(leases) == len(ids)
	for _, id := range ids {
		ok = ok && got[id] != nil
	}
	if !ok {
		t.Fatalf("Acquire(Handler %q, Now %s) leased %s; want exactly %v: %s", handler, fmtTime(now), leaseKeys(leases), ids, why)
	}
	return got
}

// wantState requires the stored job of handler of event id to be in
// state, when the store is an ops.Store, and returns it.
func wantState(t *testing.T, s webhooks.InboxStore, id, handler string, state webhooks.State, why string) webhooks.Item {
	t.Helper()
	o, ok := s.(ops.Store)
	if !ok {
		return webhooks.Item{}
	}
	j := jobOf(t, mustDetail(t, o, key(id)), handler)
	if j.State != state {
		t.Errorf("Get(%s).Jobs[%q].State = %s; want %s: %s", id, handler, j.State, state, why)
	}
	if state == webhooks.StateWaiting && !j.NextAttemptAt.IsZero() {
		t.Errorf("Get(%s).Jobs[%q] is waiting with NextAttemptAt %s; want zero: a waiting job is not due", id, handler, fmtTime(j.NextAttemptAt))
	}
	return j.Item
}

// testOneAtATimePerKey: of three jobs of one key only the first is
// pending (the others wait, not due, though the event's summary state is
// pending); each becomes pending, due at the settlement's Now, when the
// one before it succeeds; another key runs beside them. Mutation: enqueue
// every keyed job as pending.
func testOneAtATimePerKey(t *testing.T, s webhooks.InboxStore) {
	for i, id := range []string{"a1", "a2", "a3"} {
		wantEnqueue(t, s, ordered(id, "cus_a", 0, at(time.Duration(i)*time.Microsecond)), webhooks.EnqueueResult{Outcome: webhooks.EnqueueNew, State: webhooks.StatePending}, "of a job of a key")
	}
	mustEnqueue(t, s, ordered("b1", "cus_b", 0, base))
	now := at(time.Second)
	got := wantLeases(t, s, ledger, now, "one job per key is pending", "a1", "b1")
	want := leasedItem(jobItem(ordered("a1", "cus_a", 0, base), ledger), now, leaseFor)
	checkItem(t, "the lease on a key's first job", got["a1"].Item, want)
	wantState(t, s, "a2", ledger, webhooks.StateWaiting, "a1 is the head of cus_a")
	wantState(t, s, "a3", ledger, webhooks.StateWaiting, "a1 is the head of cus_a")
	wantNoJobDue(t, s, ledger, at(time.Minute), "a2 and a3 wait until a1 ends, b1 is leased")

	done := at(2 * time.Second)
	mustSettle(t, s, succeed(got["a1"], done))
	a2 := wantState(t, s, "a2", ledger, webhooks.StatePending, "a1 succeeded")
	if _, ok := s.(ops.Store); ok && (!a2.NextAttemptAt.Equal(done) || !a2.UpdatedAt.Equal(done)) {
		t.Errorf("a2 after a1 succeeded: NextAttemptAt %s, UpdatedAt %s; want both %s, the settlement's Now", fmtTime(a2.NextAttemptAt), fmtTime(a2.UpdatedAt), fmtTime(done))
	}
	l := wantLeases(t, s, ledger, done, "a1 succeeded: a2 is due at once, a3 still waits", "a2")["a2"]
	if l.Attempt != 1 || l.Item.Overtook != "" {
		t.Errorf("the lease on a2: Attempt %d, Overtook %q; want 1, none", l.Attempt, l.Item.Overtook)
	}
	mustSettle(t, s, succeed(l, at(3*time.Second)))
	mustSettle(t, s, succeed(wantLeases(t, s, ledger, at(3*time.Second), "a2 succeeded", "a3")["a3"], at(4*time.Second)))
	mustSettle(t, s, succeed(got["b1"], at(4*time.Second)))
	wantNoJobDue(t, s, ledger, at(24*time.Hour), "every job succeeded")
}

// testOccurrenceOrder: jobs that arrive behind a head in the order v30,
// v10, v20 run v10, v20, v30: the provider's occurrence order, not
// arrival. Mutation: promotion by arrival (seq).
func testOccurrenceOrder(t *testing.T, s webhooks.InboxStore) {
	mustEnqueue(t, s, ordered("head", "cus_1", 5, base))
	head := wantLeases(t, s, ledger, base, "the head", "head")["head"]
	for i, v := range []int64{30, 10, 20} {
		mustEnqueue(t, s, ordered(fmt.Sprintf("v%d", v), "cus_1", v, at(time.Duration(i+1)*time.Second)))
	}
	now := at(10 * time.Second)
	mustSettle(t, s, succeed(head, now))
	for _, id := range []string{"v10", "v20", "v30"} {
		l := wantLeases(t, s, ledger, now, "the key runs its jobs by version: v10, v20, v30", id)[id]
		now = now.Add(time.Second)
		mustSettle(t, s, succeed(l, now))
	}
	wantNoJobDue(t, s, ledger, at(24*time.Hour), "every job succeeded")
}

// testOlderVersionDemotesUnstartedHead: an event of an older version that
// arrives while its key's head is pending and was never leased takes the
// head's place, and the old head waits, to run next: v200 then v100
// arriving run v100, then v200. A job of no version (0) or of the head's
// version demotes nothing. Mutation: never demote (v200 runs first), or
// demote without the version check.
func testOlderVersionDemotesUnstartedHead(t *testing.T, s webhooks.InboxStore) {
	mustEnqueue(t, s, ordered("v200", "cus_1", 200, base))
	wantEnqueue(t, s, ordered("v100", "cus_1", 100, at(time.Second)), webhooks.EnqueueResult{Outcome: webhooks.EnqueueNew, State: webhooks.StatePending}, "of an older version behind an unstarted head")
	wantState(t, s, "v200", ledger, webhooks.StateWaiting, "v100, older, arrived before v200 started")
	wantState(t, s, "v100", ledger, webhooks.StatePending, "it took the unstarted v200's place")
	// Key cus_2: no version and the same version demote nothing.
	mustEnqueue(t, s, ordered("w200", "cus_2", 200, base))
	mustEnqueue(t, s, ordered("w0", "cus_2", 0, at(time.Second)))
	mustEnqueue(t, s, ordered("w200b", "cus_2", 200, at(2*time.Second)))

	now := at(3 * time.Second)
	got := wantLeases(t, s, ledger, now, "v100 demoted the unstarted v200; w200 is cus_2's head", "v100", "w200")
	if l := got["v100"]; l.Applied != 0 || l.Attempt != 1 || l.Item.Overtook != "" {
		t.Errorf("the lease on v100: Applied %d, Attempt %d, Overtook %q; want 0, 1, none", l.Applied, l.Attempt, l.Item.Overtook)
	}
	wantNoJobDue(t, s, ledger, now, "v200 waits behind v100; w0 and w200b behind w200")
	now = now.Add(time.Second)
	mustSettle(t, s, succeed(got["v100"], now))
	mustSettle(t, s, succeed(got["w200"], now))
	got = wantLeases(t, s, ledger, now, "v100 succeeded: the demoted v200 is next; w0 (version 0) runs by version before w200b", "v200", "w0")
	if l := got["v200"]; l.Applied != 100 || l.Attempt != 1 {
		t.Errorf("the lease on the demoted v200: Applied %d, Attempt %d; want 100, 1", l.Applied, l.Attempt)
	}
	now = now.Add(time.Second)
	mustSettle(t, s, succeed(got["v200"], now))
	mustSettle(t, s, succeed(got["w0"], now))
	mustSettle(t, s, succeed(wantLeases(t, s, ledger, now, "w0 succeeded", "w200b")["w200b"], now))
	wantNoJobDue(t, s, ledger, at(24*time.Hour), "every job succeeded")
}

// testStartedHeadKeepsKey: a head that has started keeps its key when an
// older version arrives: one leased and abandoned (its attempt not
// counted), one retried, and, on a webhooks.LeaseStarter, one whose lease
// was held and given back unstarted. The older job waits and runs after it, told by
// the stale guard that the newer version was applied. Mutation: demote a
// head whatever its leases (the older job runs first).
func testStartedHeadKeepsKey(t *testing.T, s webhooks.InboxStore) {
	mustEnqueue(t, s, ordered("a200", "cus_a", 200, base))
	mustEnqueue(t, s, ordered("b200", "cus_b", 200, base))
	got := wantLeases(t, s, ledger, base, "the heads", "a200", "b200")
	mustSettle(t, s, abandon(got["a200"], at(time.Second)))
	mustSettle(t, s, retry(got["b200"], transient, at(time.Second), at(time.Second)))
	mustEnqueue(t, s, ordered("a100", "cus_a", 100, at(2*time.Second)))
	mustEnqueue(t, s, ordered("b100", "cus_b", 100, at(2*time.Second)))
	wantState(t, s, "a100", ledger, webhooks.StateWaiting, "a200 was leased before a100 arrived")
	wantState(t, s, "b100", ledger, webhooks.StateWaiting, "b200 was attempted before b100 arrived")

	now := at(3 * time.Second)
	got = wantLeases(t, s, ledger, now, "the started heads keep their keys", "a200", "b200")
	now = now.Add(time.Second)
	mustSettle(t, s, succeed(got["a200"], now))
	mustSettle(t, s, succeed(got["b200"], now))
	got = wantLeases(t, s, ledger, now, "the older jobs run after the heads", "a100", "b100")
	for _, id := range []string{"a100", "b100"} {
		if got[id].Applied != 200 {
			t.Errorf("the lease on %s, older than the head that ran before it: Applied %d; want 200", id, got[id].Applied)
		}
	}
	if !is[webhooks.LeaseStarter](s) {
		return
	}
	// A head whose lease was held and given back unstarted was leased: it
	// keeps its key too, though no attempt of it started.
	mustEnqueue(t, s, ordered("c200", "cus_c", 200, now))
	held := acquireWith(t, s, webhooks.AcquireRequest{Now: now, LeaseDuration: leaseFor, Max: 1, Hold: true, Start: 0, Handler: ledger})
	if len(held) != 1 || !held[0].Held {
		t.Fatalf("Acquire(Hold, Start 0) leased %s; want c200, held", leaseKeys(held))
	}
	mustSettle(t, s, abandon(held[0], now))
	mustEnqueue(t, s, ordered("c100", "cus_c", 100, now))
	wantState(t, s, "c100", ledger, webhooks.StateWaiting, "c200 was leased (held) before c100 arrived")
	got = wantLeases(t, s, ledger, now, "c200, given back unstarted, keeps cus_c", "c200")
	mustSettle(t, s, succeed(got["c200"], now))
	if l := wantLeases(t, s, ledger, now, "c200 succeeded", "c100")["c100"]; l.Applied != 200 {
		t.Errorf("the lease on c100: Applied %d; want 200", l.Applied)
	}
}

// testRetryingHeadHoldsOnlyItsKey: a head retried an hour later keeps its
// key: the job behind it waits (and is not due) until the head succeeds,
// while another key's jobs run one after another. Mutation: promote on a
// retry.
func testRetryingHeadHoldsOnlyItsKey(t *testing.T, s webhooks.InboxStore) {
	for _, id := range []string{"a1", "a2"} {
		mustEnqueue(t, s, ordered(id, "cus_a", 0, base))
	}
	for _, id := range []string{"b1", "b2"} {
		mustEnqueue(t, s, ordered(id, "cus_b", 0, base))
	}
	got := wantLeases(t, s, ledger, base, "the heads", "a1", "b1")
	mustSettle(t, s, retry(got["a1"], transient, at(time.Hour), at(time.Second)))
	wantState(t, s, "a2", ledger, webhooks.StateWaiting, "a1 is retried: it keeps cus_a")
	mustSettle(t, s, succeed(got["b1"], at(2*time.Second)))
	b2 := wantLeases(t, s, ledger, at(time.Minute), "a1 holds cus_a until it ends; b1 succeeded", "b2")["b2"]
	mustSettle(t, s, succeed(b2, at(time.Minute)))
	wantNoJobDue(t, s, ledger, at(time.Hour-time.Microsecond), "a1 is due in an hour and a2 waits behind it")
	a1 := wantLeases(t, s, ledger, at(time.Hour), "a1 is due again; a2 still waits", "a1")["a1"]
	if a1.Attempt != 2 {
		t.Errorf("a1's second lease: Attempt %d; want 2", a1.Attempt)
	}
	mustSettle(t, s, succeed(a1, at(time.Hour+time.Second)))
	wantLeases(t, s, ledger, at(time.Hour+time.Second), "a1 succeeded", "a2")
}

// testCrashedHeadTakenOver: a head whose lease expired is taken over as
// usual (Reclaimed), and the job behind it still waits; the crashed
// lease's settlement is refused and promotes nothing. Mutation: promote
// when a head's lease expires, or on a refused settlement.
func testCrashedHeadTakenOver(t *testing.T, s webhooks.InboxStore) {
	for _, id := range []string{"a1", "a2"} {
		mustEnqueue(t, s, ordered(id, "cus_a", 0, base))
	}
	old := acquireFor(t, s, ledger, base, time.Second, 10)
	if len(old) != 1 || old[0].Key().EventID != "a1" {
		t.Fatalf("Acquire(Handler ledger) leased %s; want a1 alone", leaseKeys(old))
	}
	taken := wantLeases(t, s, ledger, at(2*time.Second), "a1's lease expired: a1 is taken over, a2 waits", "a1")["a1"]
	if !taken.Reclaimed || taken.Attempt != 2 {
		t.Errorf("the lease taking a1 over: Reclaimed %t, Attempt %d; want true, 2", taken.Reclaimed, taken.Attempt)
	}
	wantLeaseLost(t, s.Settle(t.Context(), succeed(old[0], at(3*time.Second))), "Settle(a1 under its crashed lease's token)")
	wantNoJobDue(t, s, ledger, at(3*time.Second), "a1 is leased again and a2 waits behind it")
	mustSettle(t, s, succeed(taken, at(4*time.Second)))
	wantLeases(t, s, ledger, at(4*time.Second), "a1 succeeded under its new lease", "a2")
}

// testAbandonKeepsHead: an abandoned head stays its key's head, due at
// once, its attempt not counted; the job behind it waits. Mutation:
// promote on an abandon.
func testAbandonKeepsHead(t *testing.T, s webhooks.InboxStore) {
	for _, id := range []string{"a1", "a2"} {
		mustEnqueue(t, s, ordered(id, "cus_a", 0, base))
	}
	l := wantLeases(t, s, ledger, base, "the head", "a1")["a1"]
	mustSettle(t, s, abandon(l, at(time.Second)))
	wantState(t, s, "a2", ledger, webhooks.StateWaiting, "a1 was abandoned: it keeps cus_a")
	again := wantLeases(t, s, ledger, at(time.Second), "a1 was abandoned: it is due again at once, a2 waits", "a1")["a1"]
	if again.Attempt != 1 {
		t.Errorf("a1's lease after it was abandoned: Attempt %d; want 1 (an abandon is not counted)", again.Attempt)
	}
}

// testUnorderedHandlerIgnoresKey: the key orders only ordered jobs: of
// events of one key, an unordered handler's jobs, ordered jobs of events
// with no key, and default jobs (nil Jobs) all run at once, and each
// item says whether it is ordered. Mutation: key every job.
func testUnorderedHandlerIgnoresKey(t *testing.T, s webhooks.InboxStore) {
	for i := range 3 {
		env := ordered(fmt.Sprintf("e%d", i), "cus_1", int64(i+1), base)
		env.Jobs = append(env.Jobs, webhooks.Job{Handler: audit})
		mustEnqueue(t, s, env)
		nokey := ordered(fmt.Sprintf("n%d", i), "", 0, base)
		mustEnqueue(t, s, nokey)
		def := envelope(key(fmt.Sprintf("d%d", i)), "p", base)
		def.Ordering = webhooks.Ordering{Key: "cus_1", Version: int64(i + 1)}
		mustEnqueue(t, s, def)
	}
	got := wantLeases(t, s, audit, base, "audit's jobs are unordered", "e0", "e1", "e2")
	if it := got["e1"].Item; it.Ordered || it.Ordering != (webhooks.Ordering{Key: "cus_1", Version: 2}) {
		t.Errorf("the lease on audit's job of e1: Ordered %t, Ordering %+v; want false, {cus_1 2}", it.Ordered, it.Ordering)
	}
	got = wantLeases(t, s, ledger, base, "ledger's jobs of cus_1 run one at a time; those of no key at once", "e0", "n0", "n1", "n2")
	if it := got["e0"].Item; !it.Ordered || it.Ordering != (webhooks.Ordering{Key: "cus_1", Version: 1}) {
		t.Errorf("the lease on ledger's job of e0: Ordered %t, Ordering %+v; want true, {cus_1 1}", it.Ordered, it.Ordering)
	}
	wantLeases(t, s, "", base, "default jobs are unordered", "d0", "d1", "d2")
}

// testDeadHeadReleasesAndFlags: a head dead-lettered releases its key: the
// next job becomes the head, flagged Overtook with the dead letter's event
// ID, and so does every later head of the key while that dead letter is
// neither replayed nor closed, whether it was waiting or arrived to an
// idle key; after the dead letter is closed, heads are not flagged.
// Mutation: no promotion on a dead head, or no memory of the dead letter.
func testDeadHeadReleasesAndFlags(t *testing.T, s webhooks.InboxStore) {
	for _, id := range []string{"a1", "a2"} {
		mustEnqueue(t, s, ordered(id, "cus_a", 0, base))
	}
	l := wantLeases(t, s, ledger, base, "the head", "a1")["a1"]
	mustSettle(t, s, deadLetter(l, permanent, at(time.Second)))
	a2 := wantLeases(t, s, ledger, at(time.Second), "a1 died: a2 is the head", "a2")["a2"]
	if a2.Item.Overtook != "a1" {
		t.Errorf("the lease on a2, promoted past the dead a1: Item.Overtook %q; want \"a1\"", a2.Item.Overtook)
	}
	mustSettle(t, s, succeed(a2, at(2*time.Second)))
	if it := wantState(t, s, "a2", ledger, webhooks.StateSucceeded, "it succeeded"); hasOps(s) && it.Overtook != "a1" {
		t.Errorf("Get(a2) after it succeeded: Overtook %q; want \"a1\", kept", it.Overtook)
	}
	mustEnqueue(t, s, ordered("a3", "cus_a", 0, at(3*time.Second)))
	a3 := wantLeases(t, s, ledger, at(3*time.Second), "a3 arrived to an idle key", "a3")["a3"]
	if a3.Item.Overtook != "a1" {
		t.Errorf("the lease on a3, the head of a key whose dead a1 is neither replayed nor closed: Item.Overtook %q; want \"a1\"", a3.Item.Overtook)
	}
	o, ok := s.(opsStore)
	if !ok {
		return
	}
	mustEnqueue(t, s, ordered("a4", "cus_a", 0, at(4*time.Second)))
	closing := closeOf(key("a1"), at(5*time.Second))
	closing.Handler = ledger
	if err := o.CloseDeadLetter(t.Context(), closing); err != nil {
		t.Fatalf("CloseDeadLetter(a1): %v", err)
	}
	mustSettle(t, s, succeed(a3, at(6*time.Second)))
	a4 := wantLeases(t, s, ledger, at(6*time.Second), "a3 succeeded", "a4")["a4"]
	if a4.Item.Overtook != "" {
		t.Errorf("the lease on a4, promoted after a1 was closed: Item.Overtook %q; want none", a4.Item.Overtook)
	}
}

// testOvertookNamesNearestDeadLetter: a job that becomes its key's head
// is flagged with the dead letter of its key, neither replayed nor
// closed, nearest before it in key order (version, then arrival); a dead
// letter after it in that order, or one replayed or closed, is not named.
// Each way a job becomes a head is tried: promoted, arrived to an idle
// key, replayed into an idle key, made by a replay to its handler. Mutations: the last dead letter named
// whatever its place (b2 is flagged b1); a replayed job never flagged (a2
// is not flagged a1); a replayed or closed dead letter still named (a4 is
// flagged a2, b4 b1).
func testOvertookNamesNearestDeadLetter(t *testing.T, s opsStore) {
	now := base
	step := func() time.Time { now = now.Add(time.Second); return now }
	die := func(id string) {
		t.Helper()
		l := wantLeases(t, s, ledger, now, "it is the head", id)[id]
		mustSettle(t, s, deadLetter(l, permanent, step()))
	}
	run := func(id, overtook, why string) {
		t.Helper()
		l := wantLeases(t, s, ledger, now, "it is the head", id)[id]
		if l.Item.Overtook != overtook {
			t.Errorf("the lease on %s, %s: Item.Overtook %q; want %q", id, why, l.Item.Overtook, overtook)
		}
		mustSettle(t, s, succeed(l, step()))
	}
	replay := func(id string) {
		t.Helper()
		req := replayOf(key(id), step())
		req.Handler = ledger
		mustReplay(t, s, req)
	}
	for i, id := range []string{"a1", "a2", "a3"} {
		mustEnqueue(t, s, ordered(id, "cus_a", int64(i+1), now))
	}
	die("a1")
	die("a2")
	run("a3", "a2", "promoted past the dead a1 and a2")
	replay("a2")
	run("a2", "a1", "replayed into an idle key while the older a1 is dead")
	mustEnqueue(t, s, ordered("a4", "cus_a", 4, step()))
	run("a4", "a1", "arrived while a1 is dead and a2, which died after it, was replayed")
	replay("a1")
	run("a1", "", "replayed while no older dead letter is left")
	mustEnqueue(t, s, ordered("a5", "cus_a", 5, step()))
	run("a5", "", "arrived after every dead letter was replayed")

	for _, b := range []struct {
		id      string
		version int64
	}{{"b0", 8}, {"b1", 10}} {
		mustEnqueue(t, s, ordered(b.id, "cus_a", b.version, step()))
		die(b.id)
	}
	mustEnqueue(t, s, ordered("b2", "cus_a", 6, step()))
	mustEnqueue(t, s, ordered("b3", "cus_a", 20, step()))
	run("b2", "", "arrived to an idle key, older (version 6) than the dead b0 and b1 (versions 8 and 10)")
	run("b3", "b1", "promoted, newer (version 20) than the dead b0 and b1")
	closing := closeOf(key("b1"), step())
	closing.Handler = ledger
	if err := s.CloseDeadLetter(t.Context(), closing); err != nil {
		t.Fatalf("CloseDeadLetter(b1): %v", err)
	}
	mustEnqueue(t, s, ordered("b4", "cus_a", 30, step()))
	run("b4", "b0", "arrived after b1, the last to die, was closed, while b0 is dead")

	// A replay to ledger of an event that has no job of it makes one,
	// ordered: the head of the idle key.
	env := jobsEnvelope(key("c1"), "p c1", step(), audit)
	env.Ordering = webhooks.Ordering{Key: "cus_a", Version: 40}
	mustEnqueue(t, s, env)
	to := replayOf(key("c1"), step())
	to.ToHandler, to.ToOrdered = ledger, true
	mustReplay(t, s, to)
	run("c1", "b0", "its job of ledger was made by a replay to ledger while b0 is dead")
}

// testStaleGuard: a lease's Applied is the newest version of its key that
// succeeded, not skipped: 0 at first; a success raises it (never lowers
// it); a success noted FailureSkipped leaves it. Mutation: a skipped
// success raises it.
func testStaleGuard(t *testing.T, s webhooks.InboxStore) {
	mustEnqueue(t, s, ordered("v100", "cus_1", 100, base))
	first := wantLeases(t, s, ledger, base, "the head", "v100")["v100"]
	// v100 has started: the older v50 waits behind it.
	for _, c := range []struct {
		id      string
		version int64
	}{{"v50", 50}, {"v200", 200}, {"v300", 300}} {
		mustEnqueue(t, s, ordered(c.id, "cus_1", c.version, base))
	}
	skipped := webhooks.Failure{Class: webhooks.FailureSkipped, Message: "the handler skipped it (webhooks.Skip)"}
	now := at(time.Second)
	for _, step := range []struct {
		id      string
		applied int64
		skip    bool
	}{{"v100", 0, false}, {"v50", 100, false}, {"v200", 100, true}, {"v300", 100, false}} {
		l := first
		if step.id != "v100" {
			l = wantLeases(t, s, ledger, now, "the key's jobs run by version", step.id)[step.id]
		}
		if l.Applied != step.applied {
			t.Errorf("the lease on %s: Applied %d; want %d", step.id, l.Applied, step.applied)
		}
		now = now.Add(time.Second)
		st := succeed(l, now)
		if step.skip {
			st.Failure = skipped
		}
		mustSettle(t, s, st)
	}
	mustEnqueue(t, s, ordered("v10", "cus_1", 10, now))
	if l := wantLeases(t, s, ledger, now, "v10 arrived to an idle key", "v10")["v10"]; l.Applied != 300 {
		t.Errorf("the lease on v10 after v300 succeeded: Applied %d; want 300", l.Applied)
	}
	mustEnqueue(t, s, ordered("other", "cus_2", 1, now))
	if l := wantLeases(t, s, ledger, now, "another key", "other")["other"]; l.Applied != 0 {
		t.Errorf("the lease on the first job of another key: Applied %d; want 0", l.Applied)
	}
}

// testReplayIntoBusyKey: a dead keyed job replayed while its key has a
// head waits behind that head, then runs before the later jobs (by
// version), no longer run past by them; the stale guard tells it what
// was applied meanwhile. Mutation: a replayed keyed job made pending
// whatever its key.
func testReplayIntoBusyKey(t *testing.T, s webhooks.InboxStore) {
	o, ok := s.(opsStore)
	if !ok {
		t.Skip("the store is not an ops.Store: the case replays a dead letter")
	}
	for i, id := range []string{"a1", "a2"} {
		mustEnqueue(t, s, ordered(id, "cus_a", int64(i+1), base))
	}
	mustSettle(t, s, deadLetter(wantLeases(t, s, ledger, base, "the head", "a1")["a1"], permanent, at(time.Second)))
	a2 := wantLeases(t, s, ledger, at(time.Second), "a1 died", "a2")["a2"]
	mustEnqueue(t, s, ordered("a3", "cus_a", 3, at(2*time.Second)))
	req := replayOf(key("a1"), at(3*time.Second))
	req.Handler = ledger
	mustReplay(t, o, req)
	wantState(t, s, "a1", ledger, webhooks.StateWaiting, "it was replayed while a2 holds the key")
	wantNoJobDue(t, s, ledger, at(3*time.Second), "a2 holds the key; a1 (replayed) and a3 wait")
	mustSettle(t, s, succeed(a2, at(4*time.Second)))
	a1 := wantLeases(t, s, ledger, at(4*time.Second), "a2 succeeded: the replayed a1 (version 1) runs before a3 (version 3)", "a1")["a1"]
	if a1.Applied != 2 || a1.Item.Overtook != "" || a1.Attempt != 1 {
		t.Errorf("the lease on the replayed a1: Applied %d, Overtook %q, Attempt %d; want 2 (a2's version), none, 1", a1.Applied, a1.Item.Overtook, a1.Attempt)
	}
	mustSettle(t, s, succeed(a1, at(5*time.Second)))
	a3 := wantLeases(t, s, ledger, at(5*time.Second), "a1 succeeded", "a3")["a3"]
	if a3.Applied != 2 || a3.Item.Overtook != "" {
		t.Errorf("the lease on a3: Applied %d, Overtook %q; want 2 (a1's version 1 is older), none (a1 was replayed)", a3.Applied, a3.Item.Overtook)
	}
}

// hasOps reports whether s is an ops.Store.
func hasOps(s webhooks.InboxStore) bool { return is[ops.Store](s) }
