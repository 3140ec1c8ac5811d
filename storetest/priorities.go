package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// priorityCases pin webhooks.FlowSupport.Priorities: a job keeps the
// priority it was stored with, and an acquisition with Priorities leases
// the due jobs of each listed priority, highest first, before the others,
// the longest due first within each; one without leases by due time.
var priorityCases = []inboxCase{
	{"HigherFirst", testPrioritiesHigherFirst},
	{"OthersByDue", testPrioritiesOthersByDue},
	{"WithoutPrioritiesByDue", testPrioritiesIgnoredWithout},
	{"NotDueWaits", testPrioritiesNotDueWaits},
	{"WithinLimitsAndPauses", testPrioritiesWithinLimitsAndPauses},
	{"Replays", testPrioritiesReplays},
	{"ProcessorRunsHigherFirst", testPrioritiesProcessor},
}

// hasPriorities reports whether s keeps jobs' priorities.
func hasPriorities(s webhooks.InboxStore) bool { return webhooks.FlowOf(s).Priorities }

// priorityEnvelope returns an envelope of the event id, of type
// eventType, received (and due) at receivedAt, whose one job, of the
// default handler, has priority.
func priorityEnvelope(id, eventType string, priority int, receivedAt time.Time) webhooks.Envelope {
	env := envelope(key(id), "p "+id, receivedAt)
	env.EventType = eventType
	env.Jobs = []webhooks.Job{{Priority: priority}}
	return env
}

// pjob is a job a priority case enqueues: its event's ID, and its
// priority.
type pjob struct {
	id       string
	priority int
}

// enqueuePriorities enqueues, for each of jobs, the event of its ID with
// its priority, the i-th received at at(i ms), requiring an ops.Store to
// keep the priority.
func enqueuePriorities(t *testing.T, s webhooks.InboxStore, jobs ...pjob) {
	t.Helper()
	for i, j := range jobs {
		env := priorityEnvelope(j.id, "invoice.paid", j.priority, at(time.Duration(i)*time.Millisecond))
		mustEnqueue(t, s, env)
		if o, ok := s.(ops.Store); ok {
			if got := mustGet(t, o, env.Key).Priority; got != j.priority {
				t.Fatalf("Get(%s).Priority = %d after Enqueue with Job.Priority %d; want %d", fmtKey(env.Key), got, j.priority, j.priority)
			}
		}
	}
}

// wantPrioritized requires Acquire(Max max, Priorities priorities, Limits
// l) at now to lease exactly the jobs of want, in that order, each lease's
// item with the job's priority, and returns the leases.
func wantPrioritized(t *testing.T, s webhooks.InboxStore, now time.Time, max int, priorities []int, l webhooks.Limits, why string, want ...pjob) []*webhooks.Lease {
	t.Helper()
	leases, err := s.Acquire(t.Context(), webhooks.AcquireRequest{Now: now, LeaseDuration: leaseFor, Max: max,
		Worker: worker, Version: version, Priorities: priorities, Limits: l})
	if err != nil {
		t.Fatalf("Acquire(Now %s, Max %d, Priorities %v, Limits %+v): %v; want no error", fmtTime(now), max, priorities, l, err)
	}
	got := make([]pjob, 0, len(leases))
	for _, le := range leases {
		got = append(got, pjob{le.Key().EventID, le.Item.Priority})
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Acquire(Now %s, Max %d, Priorities %v, Limits %+v) leased %v; want %v (event ID, Item.Priority), in that order: %s",
			fmtTime(now), max, priorities, l, got, want, why)
	}
	return leases
}

// testPrioritiesHigherFirst: with Priorities 10, 5, 3, the due jobs of 10
// are leased first, then those of 5, then 3, then the others, each the
// longest due first, though the others were due before them all; within
// one acquisition the leases come in that order. Mutation: the store
// ignores Priorities; it reads the priorities in the wrong order.
func testPrioritiesHigherFirst(t *testing.T, s webhooks.InboxStore) {
	enqueuePriorities(t, s, pjob{"a-0", 0}, pjob{"b-0", 0}, pjob{"p-5", 5}, pjob{"q-10", 10}, pjob{"r-10", 10}, pjob{"s-3", 3})
	levels := []int{10, 5, 3}
	wantPrioritized(t, s, at(time.Second), 3, levels, webhooks.Limits{}, "10s first, by due, then 5", pjob{"q-10", 10}, pjob{"r-10", 10}, pjob{"p-5", 5})
	wantPrioritized(t, s, at(time.Second), 2, levels, webhooks.Limits{}, "then 3, then the others by due", pjob{"s-3", 3}, pjob{"a-0", 0})
	wantPrioritized(t, s, at(time.Second), 5, levels, webhooks.Limits{}, "the last", pjob{"b-0", 0})
	wantPrioritized(t, s, at(time.Second), 5, levels, webhooks.Limits{}, "every job is leased already")
}

// testPrioritiesOthersByDue: a job of a priority the acquisition does not
// list goes with the others (priority 0), by due time. Mutation: the
// others' scan skips every job of a priority above 0.
func testPrioritiesOthersByDue(t *testing.T, s webhooks.InboxStore) {
	enqueuePriorities(t, s, pjob{"w-7", 7}, pjob{"y-0", 0}, pjob{"x-7", 7}, pjob{"z-10", 10})
	wantPrioritized(t, s, at(time.Second), 10, []int{10}, webhooks.Limits{}, "7 is not listed: it goes with 0, by due", pjob{"z-10", 10}, pjob{"w-7", 7}, pjob{"y-0", 0}, pjob{"x-7", 7})
}

// testPrioritiesIgnoredWithout: without Priorities, an acquisition leases
// by due time alone, whatever the jobs' priorities.
func testPrioritiesIgnoredWithout(t *testing.T, s webhooks.InboxStore) {
	enqueuePriorities(t, s, pjob{"w-7", 7}, pjob{"y-0", 0}, pjob{"x-7", 7}, pjob{"z-10", 10})
	wantPrioritized(t, s, at(time.Second), 10, nil, webhooks.Limits{}, "no Priorities: by due", pjob{"w-7", 7}, pjob{"y-0", 0}, pjob{"x-7", 7}, pjob{"z-10", 10})
}

// testPrioritiesNotDueWaits: a job of a higher priority that is not due
// (a retry, a lease not expired) holds back no job of a lower one; once
// due again it goes first again. Mutation: the scan of a priority stops
// the acquisition when its first job is not due.
func testPrioritiesNotDueWaits(t *testing.T, s webhooks.InboxStore) {
	enqueuePriorities(t, s, pjob{"h-10", 10}, pjob{"l-0", 0}, pjob{"m-0", 0}, pjob{"n-0", 0})
	levels := []int{10}
	h := wantPrioritized(t, s, at(time.Second), 1, levels, webhooks.Limits{}, "10 first", pjob{"h-10", 10})
	mustSettle(t, s, retry(h[0], transient, at(time.Minute), at(2*time.Second)))
	wantPrioritized(t, s, at(3*time.Second), 1, levels, webhooks.Limits{}, "h-10 retries at 1 min: the others run", pjob{"l-0", 0})
	wantPrioritized(t, s, at(time.Minute), 2, levels, webhooks.Limits{}, "h-10 is due again: first again", pjob{"h-10", 10}, pjob{"m-0", 0})
	// At 3 min the leases of h-10, l-0 and m-0 have expired: h-10 is
	// taken over first, then n-0, due the longest of the others.
	wantPrioritized(t, s, at(3*time.Minute), 2, levels, webhooks.Limits{}, "expired leases: the 10 first", pjob{"h-10", 10}, pjob{"n-0", 0})
}

// testPrioritiesWithinLimitsAndPauses: Limits bound an acquisition with
// Priorities as any other (MaxRunning counts the jobs of every priority),
// and a pause that holds the jobs of a priority leaves the others to run.
// Mutation: the limited statement ignores Priorities; the scans of a
// priority do not pass over held jobs.
func testPrioritiesWithinLimitsAndPauses(t *testing.T, s webhooks.InboxStore) {
	for i, spec := range []struct {
		id, eventType string
		priority      int
	}{{"a-0", "analytics.viewed", 0}, {"b-0", "analytics.viewed", 0}, {"p-10", "payment.succeeded", 10}, {"q-10", "payment.succeeded", 10}, {"r-10", "payment.succeeded", 10}} {
		mustEnqueue(t, s, priorityEnvelope(spec.id, spec.eventType, spec.priority, at(time.Duration(i)*time.Millisecond)))
	}
	// Under a cap of 2 (or, on a store without Limits, asked for 2): the
	// first two 10s.
	levels, max, limits := []int{10}, 2, webhooks.Limits{}
	if hasLimits(s) {
		max, limits = 10, webhooks.Limits{MaxRunning: 2}
	}
	for _, l := range wantPrioritized(t, s, at(time.Second), max, levels, limits, "a cap of 2: the first two 10s", pjob{"p-10", 10}, pjob{"q-10", 10}) {
		mustSettle(t, s, succeed(l, at(2*time.Second)))
	}
	ps, ok := s.(webhooks.PauseStore)
	if !ok {
		return
	}
	scope := webhooks.PauseScope{Types: "payment.*"}
	if err := ps.Pause(t.Context(), scopedPause("", scope, at(3*time.Second))); err != nil {
		t.Fatalf("Pause(%s): %v", scope, err)
	}
	wantPrioritized(t, s, at(4*time.Second), 10, levels, webhooks.Limits{}, "the payments are held: the analytics run", pjob{"a-0", 0}, pjob{"b-0", 0})
	if err := ps.Resume(t.Context(), scopedResume("", scope, at(5*time.Second))); err != nil {
		t.Fatalf("Resume(%s): %v", scope, err)
	}
	wantPrioritized(t, s, at(6*time.Second), 10, levels, webhooks.Limits{}, "resumed", pjob{"r-10", 10})
}

// testPrioritiesReplays: a replayed job keeps its priority, and goes
// before jobs of a lower one that were due before it; a replay to another
// handler makes its job of ops.ReplayRequest.ToPriority. Mutation: the
// replay to a handler stores priority 0.
func testPrioritiesReplays(t *testing.T, s webhooks.InboxStore) {
	o, ok := s.(ops.Store)
	if !ok {
		t.Skip("the store is not an ops.Store: nothing replays")
	}
	enqueuePriorities(t, s, pjob{"d-10", 10})
	l := wantPrioritized(t, s, at(time.Second), 1, []int{10}, webhooks.Limits{}, "the only job", pjob{"d-10", 10})
	mustSettle(t, s, deadLetter(l[0], permanent, at(2*time.Second)))
	mustEnqueue(t, s, priorityEnvelope("e-0", "invoice.paid", 0, at(3*time.Second)))
	if _, err := o.Replay(t.Context(), replayOf(key("d-10"), at(4*time.Second))); err != nil {
		t.Fatalf("Replay(d-10): %v", err)
	}
	wantPrioritized(t, s, at(5*time.Second), 1, []int{10}, webhooks.Limits{}, "the replayed 10 before the 0 due before it", pjob{"d-10", 10})
	if !hasHandlers(s) {
		return
	}
	to := replayOf(key("e-0"), at(6*time.Second))
	to.ToHandler, to.ToPriority = audit, 7
	if _, err := o.Replay(t.Context(), to); err != nil {
		t.Fatalf("Replay(e-0, ToHandler %q, ToPriority 7): %v", audit, err)
	}
	if j := jobOf(t, mustDetail(t, o, key("e-0")), audit); j.Priority != 7 {
		t.Errorf("the job Replay(ToHandler %q, ToPriority 7) made has Priority %d; want 7", audit, j.Priority)
	}
}

// testPrioritiesProcessor: a Processor of one worker runs a handler with
// TypePriorities {"payment.*": 10}, its events stored with the jobs
// webhooks.Handlers.Jobs gives them (as a Receiver stores them): the
// three payments, received after twenty analytics events, run first.
// Mutation: the Processor acquires without the handler's priorities;
// Handlers.Jobs gives every job priority 0.
func testPrioritiesProcessor(t *testing.T, s webhooks.InboxStore) {
	var (
		mu    sync.Mutex
		order []string
	)
	done := make(chan struct{})
	d := webhooks.DispatcherFunc(func(_ context.Context, ev webhooks.Event) error {
		mu.Lock()
		defer mu.Unlock()
		if order = append(order, ev.Type); len(order) == 23 {
			close(done)
		}
		return nil
	})
	hs := webhooks.Handlers{{Dispatcher: d, TypePriorities: map[string]int{"payment.*": 10}}}
	for i := range 23 {
		eventType := "analytics.viewed"
		if i >= 20 {
			eventType = "payment.succeeded"
		}
		env := envelope(key(fmt.Sprintf("e%02d", i)), "p", at(time.Duration(i)*time.Millisecond))
		env.EventType = eventType
		env.Jobs = hs.Jobs(env.Key.Provider, eventType)
		mustEnqueue(t, s, env)
	}
	runProcessors(t, s, hs, 1, 1, 20*time.Millisecond)
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("after a minute, not every event was handled")
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"payment.succeeded", "payment.succeeded", "payment.succeeded"}
	if !slices.Equal(order[:3], want) {
		t.Errorf("the first three events run were %v; want the three payments (priority 10), received last", order[:3])
	}
}
