package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// repeatCases pin webhooks.AcquisitionRepeater for the stores that have
// it: an acquisition asked for again by its ID returns the leases it
// still holds, as they are, and does nothing else.
var repeatCases = []inboxCase{
	{"RepeatReturnsGrantedLeases", testRepeatReturnsGrantedLeases},
	{"RepeatSkipsSettled", testRepeatSkipsSettled},
	{"RepeatSkipsExpired", testRepeatSkipsExpired},
	{"RepeatNamesOneAcquisition", testRepeatNamesOneAcquisition},
	{"RepeatKeepsReclaimed", testRepeatKeepsReclaimed},
	{"RepeatAfterExtend", testRepeatAfterExtend},
	{"RepeatKeepsHeld", testRepeatKeepsHeld},
	{"RepeatHigherPriorityFirst", testRepeatHigherPriorityFirst},
}

// testRepeatHigherPriorityFirst: a repeat returns the leases of a higher
// priority first, so that a caller with fewer free workers than leases,
// which gives the rest back, keeps the most urgent; here of an
// acquisition that leased by due time alone. Mutation: the store returns
// them by expiry (pgstore) or as leased (memstore).
func testRepeatHigherPriorityFirst(t *testing.T, s webhooks.InboxStore) {
	if !hasPriorities(s) {
		t.Skip("the store does not keep jobs' priorities")
	}
	enqueuePriorities(t, s, pjob{"a-0", 0}, pjob{"b-10", 10}, pjob{"c-0", 0}, pjob{"d-5", 5})
	first := acquireID(t, s, "acq-p", at(time.Second), leaseFor, 4)
	if len(first) != 4 {
		t.Fatalf("Acquire(Max 4, ID acq-p) leased %d; want 4", len(first))
	}
	got := mustRepeat(t, repeater(s), "acq-p", at(2*time.Second))
	var priorities []int
	for _, l := range got {
		priorities = append(priorities, l.Item.Priority)
	}
	if want := []int{10, 5, 0, 0}; !slices.Equal(priorities, want) {
		t.Errorf("RepeatAcquisition(acq-p) returned leases of priorities %v; want %v, the highest first", priorities, want)
	}
}

// acquireWith requires Acquire(req) to succeed, with no nil lease.
func acquireWith(t *testing.T, s webhooks.InboxStore, req webhooks.AcquireRequest) []*webhooks.Lease {
	t.Helper()
	leases, err := s.Acquire(t.Context(), req)
	if err != nil {
		t.Fatalf("Acquire(Now %s, Max %d, ID %q): %v; want no error", fmtTime(req.Now), req.Max, req.ID, err)
	}
	for _, l := range leases {
		if l == nil {
			t.Fatalf("Acquire(ID %q) returned a nil *Lease; want leases", req.ID)
		}
	}
	return leases
}

// acquireID makes an acquisition under id: Acquire(Now: now,
// LeaseDuration: d, Max: max, ID: id).
func acquireID(t *testing.T, s webhooks.InboxStore, id string, now time.Time, d time.Duration, max int) []*webhooks.Lease {
	t.Helper()
	return acquireWith(t, s, webhooks.AcquireRequest{Now: now, LeaseDuration: d, Max: max, Worker: worker, Version: version, ID: id})
}

// mustRepeat asks for the acquisition id again at now, as after a lost
// reply.
func mustRepeat(t *testing.T, r webhooks.AcquisitionRepeater, id string, now time.Time) []*webhooks.Lease {
	t.Helper()
	leases, err := r.RepeatAcquisition(t.Context(), webhooks.RepeatRequest{ID: id, Now: now})
	if err != nil {
		t.Fatalf("RepeatAcquisition(ID %q, Now %s): %v; want no error", id, fmtTime(now), err)
	}
	return leases
}

// repeater returns s as a webhooks.AcquisitionRepeater: the cases of the
// group run only on one.
func repeater(s webhooks.InboxStore) webhooks.AcquisitionRepeater {
	return s.(webhooks.AcquisitionRepeater)
}

// sameLeases requires got to be want as a set, lease by lease: the same
// items, tokens, attempt numbers, Reclaimed, Held and expiry.
func sameLeases(t *testing.T, call string, got, want []*webhooks.Lease) {
	t.Helper()
	byKey := make(map[webhooks.InboxKey]*webhooks.Lease, len(want))
	for _, l := range want {
		byKey[l.Key()] = l
	}
	if len(got) != len(want) {
		t.Errorf("%s returned %d leases (%s); want the %d held (%s)", call, len(got), leaseKeys(got), len(want), leaseKeys(want))
	}
	for _, g := range got {
		w := byKey[g.Key()]
		if w == nil {
			t.Errorf("%s returned a lease on %s, which was not granted under its ID; want only %s", call, g.Key(), leaseKeys(want))
			continue
		}
		if g.Token != w.Token || g.Attempt != w.Attempt || g.Reclaimed != w.Reclaimed || g.Held != w.Held || !g.ExpiresAt.Equal(w.ExpiresAt) {
			t.Errorf("%s: the lease on %s is {Token %q Attempt %d Reclaimed %t Held %t ExpiresAt %s}; want the granted lease, as it is: {%q %d %t %t %s}",
				call, g.Key(), g.Token, g.Attempt, g.Reclaimed, g.Held, fmtTime(g.ExpiresAt), w.Token, w.Attempt, w.Reclaimed, w.Held, fmtTime(w.ExpiresAt))
		}
		if g.Item.State != webhooks.StateLeased {
			t.Errorf("%s: the lease on %s has Item.State %s; want %s", call, g.Key(), g.Item.State, webhooks.StateLeased)
		}
	}
}

// leaseKeys lists the event IDs of leases, sorted, for messages.
func leaseKeys(leases []*webhooks.Lease) string {
	ids := make([]string, len(leases))
	for i, l := range leases {
		ids[i] = l.Key().EventID
	}
	slices.Sort(ids)
	return "[" + strings.Join(ids, " ") + "]"
}

// enqueueN enqueues n items evt_0… received 1s apart from base.
func enqueueN(t *testing.T, s webhooks.InboxStore, n int) []webhooks.Envelope {
	t.Helper()
	envs := make([]webhooks.Envelope, n)
	for i := range envs {
		envs[i] = envelope(key(fmt.Sprintf("evt_%d", i)), fmt.Sprint(i), at(time.Duration(i)*time.Second))
		mustEnqueue(t, s, envs[i])
	}
	return envs
}

// snapshot returns the stored detail of each envelope's item, when the
// store is an ops.Store, for unchanged.
func snapshot(t *testing.T, s webhooks.InboxStore, envs ...webhooks.Envelope) map[webhooks.InboxKey]ops.Detail {
	t.Helper()
	m := make(map[webhooks.InboxKey]ops.Detail, len(envs))
	if o, ok := s.(ops.Store); ok {
		for _, env := range envs {
			m[env.Key] = mustDetail(t, o, env.Key)
		}
	}
	return m
}

// unchanged requires the stored items to be as they were in before (item
// and history), after call.
func unchanged(t *testing.T, s webhooks.InboxStore, before map[webhooks.InboxKey]ops.Detail, call string) {
	t.Helper()
	for k, d := range before {
		checkStored(t, s, d.Item, "after "+call)
		checkHistory(t, s, k, d.History, "after "+call)
	}
}

// testRepeatReturnsGrantedLeases: asked for again with its ID (its reply
// was lost), an acquisition returns the same leases, until they expire,
// and does nothing else: no other due item is leased, no attempt is
// counted or recorded.
func testRepeatReturnsGrantedLeases(t *testing.T, s webhooks.InboxStore) {
	envs := enqueueN(t, s, 3)
	now := at(10 * time.Second)
	first := acquireID(t, s, "acq-1", now, leaseFor, 2)
	if len(first) != 2 {
		t.Fatalf("Acquire(Max 2, ID acq-1) with 3 items due leased %d; want 2", len(first))
	}
	before := snapshot(t, s, envs...)
	for _, again := range []time.Time{now, now.Add(time.Second), now.Add(leaseFor - time.Microsecond)} {
		call := fmt.Sprintf("RepeatAcquisition(Now %s) of an acquisition whose 2 leases are held", fmtTime(again))
		sameLeases(t, call, mustRepeat(t, repeater(s), "acq-1", again), first)
		unchanged(t, s, before, call)
	}
	// The third item is still there for anyone else.
	if l := mustAcquireKey(t, s, envs[2].Key, now.Add(time.Second), leaseFor); l.Attempt != 1 {
		t.Errorf("Acquire of the item the repeats left: Attempt %d; want 1", l.Attempt)
	}
}

// testRepeatSkipsSettled: a lease settled since is not returned; once
// every lease of the ID is settled, none is; an acquisition made again
// under the ID is returned in turn.
func testRepeatSkipsSettled(t *testing.T, s webhooks.InboxStore) {
	envs := enqueueN(t, s, 4)
	now := at(10 * time.Second)
	first := acquireID(t, s, "acq-1", now, leaseFor, 3)
	byKey := map[webhooks.InboxKey]*webhooks.Lease{}
	for _, l := range first {
		byKey[l.Key()] = l
	}
	a, b, c := byKey[envs[0].Key], byKey[envs[1].Key], byKey[envs[2].Key]
	if len(first) != 3 || a == nil || b == nil || c == nil {
		t.Fatalf("Acquire(Max 3, ID acq-1) leased %s; want the three longest due, evt_0, evt_1 and evt_2", leaseKeys(first))
	}
	mustSettle(t, s, succeed(a, now))
	mustSettle(t, s, retry(b, transient, now.Add(time.Hour), now))
	sameLeases(t, "RepeatAcquisition after two of its three leases were settled", mustRepeat(t, repeater(s), "acq-1", now.Add(time.Second)), []*webhooks.Lease{c})
	mustSettle(t, s, abandon(c, now.Add(2*time.Second)))
	later := now.Add(3 * time.Second)
	sameLeases(t, "RepeatAcquisition after all its leases were settled", mustRepeat(t, repeater(s), "acq-1", later), nil)

	got := acquireID(t, s, "acq-1", later, leaseFor, 3)
	if keys := leaseKeys(got); keys != "[evt_2 evt_3]" {
		t.Fatalf("Acquire under the ID again leased %s; want the due items [evt_2 evt_3]", keys)
	}
	sameLeases(t, "RepeatAcquisition after the ID leased anew", mustRepeat(t, repeater(s), "acq-1", later), got)
}

// testRepeatSkipsExpired: a lease that expired is not returned (its expiry
// is the first instant it is not valid), nor is a lease another
// acquisition took over.
func testRepeatSkipsExpired(t *testing.T, s webhooks.InboxStore) {
	enqueueN(t, s, 2)
	now := at(10 * time.Second)
	first := acquireID(t, s, "acq-1", now, 10*time.Second, 2)
	if len(first) != 2 {
		t.Fatalf("Acquire(Max 2, ID acq-1) leased %d; want 2", len(first))
	}
	expiry := now.Add(10 * time.Second)
	sameLeases(t, "RepeatAcquisition 1µs before its leases expire", mustRepeat(t, repeater(s), "acq-1", expiry.Add(-time.Microsecond)), first)
	sameLeases(t, "RepeatAcquisition at its leases' expiry", mustRepeat(t, repeater(s), "acq-1", expiry), nil)

	other := acquireID(t, s, "acq-2", expiry, leaseFor, 1)
	if len(other) != 1 || !other[0].Reclaimed || other[0].Attempt != 2 {
		t.Fatalf("Acquire(Max 1, ID acq-2) at the leases' expiry leased %s; want one of the expired leases, Reclaimed, attempt 2", leaseKeys(other))
	}
	rest := first[0]
	if rest.Key() == other[0].Key() {
		rest = first[1]
	}
	// Asked at a time its leases were valid, the first ID returns the one
	// lease nobody took over: the other is granted under acq-2 now.
	sameLeases(t, "RepeatAcquisition of the first ID after another took one of its leases over",
		mustRepeat(t, repeater(s), "acq-1", expiry.Add(-time.Microsecond)), []*webhooks.Lease{rest})
	sameLeases(t, "RepeatAcquisition(ID acq-2) after the takeover", mustRepeat(t, repeater(s), "acq-2", expiry), other)
}

// testRepeatNamesOneAcquisition: concurrent acquisitions under different
// IDs are each returned alone; an ID that granted nothing, and the empty
// ID, name nothing.
func testRepeatNamesOneAcquisition(t *testing.T, s webhooks.InboxStore) {
	const items, workers = 24, 6
	enqueueN(t, s, items)
	now := at(time.Minute)
	got := make([][]*webhooks.Lease, workers)
	runConcurrently(workers, func(w int) {
		leases, err := s.Acquire(t.Context(), webhooks.AcquireRequest{Now: now, LeaseDuration: leaseFor, Max: 3, ID: fmt.Sprintf("acq-%d", w)})
		if err != nil {
			t.Errorf("concurrent Acquire(ID acq-%d): %v; want no error", w, err)
		}
		got[w] = leases
	})
	checkExclusive(t, "concurrent Acquire(Max 3) under their own IDs", got, workers*3)
	for w, leases := range got {
		sameLeases(t, fmt.Sprintf("RepeatAcquisition(ID acq-%d)", w), mustRepeat(t, repeater(s), fmt.Sprintf("acq-%d", w), now.Add(time.Second)), leases)
	}
	acquire(t, s, now, leaseFor, 1) // without an ID
	for _, id := range []string{"", "acq-never-made"} {
		sameLeases(t, fmt.Sprintf("RepeatAcquisition(ID %q)", id), mustRepeat(t, repeater(s), id, now.Add(time.Second)), nil)
	}
}

// testRepeatKeepsReclaimed: a repeat of an acquisition that took an
// expired lease over reports Reclaimed as the first did, and records the
// crashed attempt once.
func testRepeatKeepsReclaimed(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	mustAcquireKey(t, s, env.Key, base, 10*time.Second)
	now := at(10 * time.Second)
	first := acquireID(t, s, "acq-1", now, leaseFor, 1)
	if len(first) != 1 || !first[0].Reclaimed || first[0].Attempt != 2 {
		t.Fatalf("Acquire(ID acq-1) of an expired lease: %d leases; want one, Reclaimed, attempt 2", len(first))
	}
	checkHistory(t, s, env.Key, []ops.Attempt{attemptOf(1, ops.OutcomeCrashed, base, now, webhooks.Failure{})}, "after the takeover")
	before := snapshot(t, s, env)
	sameLeases(t, "RepeatAcquisition(ID acq-1)", mustRepeat(t, repeater(s), "acq-1", now.Add(time.Second)), first)
	unchanged(t, s, before, "RepeatAcquisition(ID acq-1)")
}

// testRepeatAfterExtend: a lease extended since is returned as it is now,
// valid until its new expiry.
func testRepeatAfterExtend(t *testing.T, s webhooks.InboxStore) {
	envs := enqueueN(t, s, 1)
	now := at(10 * time.Second)
	first := acquireID(t, s, "acq-1", now, 10*time.Second, 1)
	if len(first) != 1 {
		t.Fatalf("Acquire(ID acq-1) leased %d; want 1", len(first))
	}
	if err := extend(t, s, first[0], now.Add(5*time.Second), time.Minute); err != nil {
		t.Fatalf("ExtendLease: %v; want no error", err)
	}
	before := snapshot(t, s, envs...)
	extended := *first[0]
	extended.ExpiresAt = now.Add(5*time.Second + time.Minute)
	sameLeases(t, "RepeatAcquisition(ID acq-1) after the lease was extended, past its first expiry",
		mustRepeat(t, repeater(s), "acq-1", now.Add(30*time.Second)), []*webhooks.Lease{&extended})
	unchanged(t, s, before, "RepeatAcquisition(ID acq-1) after the lease was extended")
}

// testRepeatKeepsHeld: a repeat returns held leases (webhooks.LeaseStarter)
// as they are.
func testRepeatKeepsHeld(t *testing.T, s webhooks.InboxStore) {
	if !is[webhooks.LeaseStarter](s) {
		t.Skip("the store is not a webhooks.LeaseStarter")
	}
	mustEnqueue(t, s, envelope(key("evt_1"), "p", base))
	mustEnqueue(t, s, envelope(key("evt_2"), "p", at(time.Microsecond)))
	first := acquireWith(t, s, webhooks.AcquireRequest{Now: at(time.Second), LeaseDuration: leaseFor, Max: 2, Hold: true, Start: 1, Worker: worker, Version: version, ID: "acq-1"})
	if len(first) != 2 || first[0].Held || !first[1].Held {
		t.Fatalf("Acquire(Max 2, Hold, Start 1, ID) = %d leases; want one started and one held", len(first))
	}
	sameLeases(t, "RepeatAcquisition", mustRepeat(t, repeater(s), "acq-1", at(2*time.Second)), first)
}
