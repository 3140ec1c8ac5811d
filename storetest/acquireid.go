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

// acquireIDCases check AcquireRequest.ID and Repeat: an acquisition asked
// for again with its ID returns the leases still granted under it, and
// nothing more.
var acquireIDCases = []inboxCase{
	{"AcquireIDReturnsHeldLeases", testAcquireIDReturnsHeldLeases},
	{"AcquireIDSkipsSettled", testAcquireIDSkipsSettled},
	{"AcquireIDSkipsExpired", testAcquireIDSkipsExpired},
	{"AcquireIDWithoutHeldLeases", testAcquireIDWithoutHeldLeases},
	{"AcquireIDEmpty", testAcquireIDEmpty},
	{"AcquireIDsNeverShare", testAcquireIDsNeverShare},
	{"AcquireIDKeepsReclaimed", testAcquireIDKeepsReclaimed},
	{"AcquireIDAfterExtend", testAcquireIDAfterExtend},
}

// acquireID makes a first acquisition under id: Acquire(Now: now,
// LeaseDuration: d, Max: max, ID: id).
func acquireID(t *testing.T, s Store, id string, now time.Time, d time.Duration, max int) []*webhooks.Lease {
	t.Helper()
	return acquireWith(t, s, webhooks.AcquireRequest{Now: now, LeaseDuration: d, Max: max, Worker: worker, Version: version, ID: id})
}

// repeatID asks for the acquisition id again, as after a lost reply: the
// same request with Repeat set.
func repeatID(t *testing.T, s Store, id string, now time.Time, d time.Duration, max int) []*webhooks.Lease {
	t.Helper()
	return acquireWith(t, s, webhooks.AcquireRequest{Now: now, LeaseDuration: d, Max: max, Worker: worker, Version: version, ID: id, Repeat: true})
}

func acquireWith(t *testing.T, s Store, req webhooks.AcquireRequest) []*webhooks.Lease {
	t.Helper()
	leases, err := s.Acquire(t.Context(), req)
	if err != nil {
		t.Fatalf("Acquire(Now %s, Max %d, ID %q, Repeat %t): %v; want no error", fmtTime(req.Now), req.Max, req.ID, req.Repeat, err)
	}
	for _, l := range leases {
		if l == nil {
			t.Fatalf("Acquire(ID %q, Repeat %t) returned a nil *Lease; want leases", req.ID, req.Repeat)
		}
	}
	return leases
}

// sameLeases requires got to be want as a set, lease by lease: the same
// items, tokens, attempt numbers, Reclaimed and expiry.
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
		if g.Token != w.Token {
			t.Errorf("%s: the lease on %s has token %q; want the held lease's %q", call, g.Key(), g.Token, w.Token)
		}
		if g.Attempt != w.Attempt {
			t.Errorf("%s: the lease on %s has Attempt %d; want the held lease's %d (no new attempt)", call, g.Key(), g.Attempt, w.Attempt)
		}
		if g.Reclaimed != w.Reclaimed {
			t.Errorf("%s: the lease on %s has Reclaimed %t; want %t, as first reported", call, g.Key(), g.Reclaimed, w.Reclaimed)
		}
		if g.Held != w.Held {
			t.Errorf("%s: the lease on %s has Held %t; want %t, as it is", call, g.Key(), g.Held, w.Held)
		}
		if !g.ExpiresAt.Equal(w.ExpiresAt) {
			t.Errorf("%s: the lease on %s expires at %s; want %s", call, g.Key(), fmtTime(g.ExpiresAt), fmtTime(w.ExpiresAt))
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
func enqueueN(t *testing.T, s Store, n int) []webhooks.Envelope {
	t.Helper()
	envs := make([]webhooks.Envelope, n)
	for i := range envs {
		envs[i] = envelope(key(fmt.Sprintf("evt_%d", i)), fmt.Sprint(i), at(time.Duration(i)*time.Second))
		mustEnqueue(t, s, envs[i])
	}
	return envs
}

// unchanged requires the stored items of envs to be as they were in
// before (item and history), after call.
func unchanged(t *testing.T, s Store, before map[webhooks.InboxKey]ops.Detail, call string) {
	t.Helper()
	for k, d := range before {
		checkStored(t, s, d.Item, "after "+call)
		checkHistory(t, s, k, d.History, "after "+call)
	}
}

// snapshot returns the stored detail of each envelope's item.
func snapshot(t *testing.T, s Store, envs []webhooks.Envelope) map[webhooks.InboxKey]ops.Detail {
	t.Helper()
	m := make(map[webhooks.InboxKey]ops.Detail, len(envs))
	for _, env := range envs {
		m[env.Key] = mustDetail(t, s, env.Key)
	}
	return m
}

// testAcquireIDReturnsHeldLeases: asked for again with its ID (its reply
// was lost), an acquisition returns the same leases and does nothing else:
// no other due item is leased, no attempt is counted or recorded.
func testAcquireIDReturnsHeldLeases(t *testing.T, s Store) {
	envs := enqueueN(t, s, 3)
	now := at(10 * time.Second)
	first := acquireID(t, s, "acq-1", now, leaseFor, 2)
	if len(first) != 2 {
		t.Fatalf("Acquire(Max 2, ID acq-1) with 3 items due leased %d; want 2", len(first))
	}
	before := snapshot(t, s, envs)
	for _, retryAt := range []time.Time{now, now.Add(time.Second), now.Add(leaseFor - time.Microsecond)} {
		for _, max := range []int{1, 2, 10} {
			call := fmt.Sprintf("Acquire(Now %s, Max %d) with the ID of an acquisition whose 2 leases are held", fmtTime(retryAt), max)
			sameLeases(t, call, repeatID(t, s, "acq-1", retryAt, leaseFor, max), first)
			unchanged(t, s, before, call)
		}
	}
	// The third item is still there for anyone else.
	l := mustAcquireKey(t, s, envs[2].Key, now.Add(time.Second), leaseFor)
	if l.Attempt != 1 {
		t.Errorf("Acquire of the item the repeats left: Attempt %d; want 1", l.Attempt)
	}
}

// testAcquireIDSkipsSettled: a lease settled since is not returned; once
// every lease of the ID is settled, the ID acquires as usual.
func testAcquireIDSkipsSettled(t *testing.T, s Store) {
	envs := enqueueN(t, s, 4)
	now := at(10 * time.Second)
	first := acquireID(t, s, "acq-1", now, leaseFor, 3)
	if len(first) != 3 {
		t.Fatalf("Acquire(Max 3, ID acq-1) with 4 items due leased %d; want 3", len(first))
	}
	byKey := map[webhooks.InboxKey]*webhooks.Lease{}
	for _, l := range first {
		byKey[l.Key()] = l
	}
	a, b, c := byKey[envs[0].Key], byKey[envs[1].Key], byKey[envs[2].Key]
	if a == nil || b == nil || c == nil {
		t.Fatalf("Acquire(Max 3) leased %s; want the three longest due, evt_0, evt_1 and evt_2", leaseKeys(first))
	}
	mustSettle(t, s, succeed(a, now))
	mustSettle(t, s, retry(b, transient, now.Add(time.Hour), now))
	sameLeases(t, "Acquire with the ID after two of its three leases were settled", repeatID(t, s, "acq-1", now.Add(time.Second), leaseFor, 3),
		[]*webhooks.Lease{c})

	mustSettle(t, s, abandon(c, now.Add(2*time.Second)))
	// Nothing is granted under the ID any more: it leases the due items, the
	// abandoned one and the one never leased, as any acquisition would.
	later := now.Add(3 * time.Second)
	got := repeatID(t, s, "acq-1", later, leaseFor, 3)
	if keys := leaseKeys(got); keys != "[evt_2 evt_3]" {
		t.Fatalf("Acquire with the ID after all its leases were settled leased %s; want the due items [evt_2 evt_3]", keys)
	}
	for _, l := range got {
		if l.Token == c.Token {
			t.Errorf("the abandoned item was leased again with its old token %q; want a fresh one", c.Token)
		}
		if !l.ExpiresAt.Equal(later.Add(leaseFor)) {
			t.Errorf("Lease.ExpiresAt of %s = %s; want %s", l.Key(), fmtTime(l.ExpiresAt), fmtTime(later.Add(leaseFor)))
		}
	}
	// And those leases are granted under the ID in turn.
	sameLeases(t, "Acquire with the ID after it leased anew", repeatID(t, s, "acq-1", later, leaseFor, 3), got)
}

// testAcquireIDSkipsExpired: a lease that expired is not returned under
// its ID (its expiry is the first instant it is not valid), and another
// acquisition may take its item over.
func testAcquireIDSkipsExpired(t *testing.T, s Store) {
	envs := enqueueN(t, s, 2)
	now := at(10 * time.Second)
	first := acquireID(t, s, "acq-1", now, 10*time.Second, 2)
	if len(first) != 2 {
		t.Fatalf("Acquire(Max 2, ID acq-1) leased %d; want 2", len(first))
	}
	expiry := now.Add(10 * time.Second)
	sameLeases(t, "Acquire with the ID 1µs before its leases expire", repeatID(t, s, "acq-1", expiry.Add(-time.Microsecond), leaseFor, 2), first)

	// At the expiry another acquisition takes one item over (either: they
	// are due at the same time).
	other := acquireID(t, s, "acq-2", expiry, leaseFor, 1)
	if len(other) != 1 {
		t.Fatalf("Acquire(Max 1, ID acq-2) at the leases' expiry leased %s; want one of the expired leases", leaseKeys(other))
	}
	rest := envs[0].Key
	if other[0].Key() == rest {
		rest = envs[1].Key
	}
	if !other[0].Reclaimed || other[0].Attempt != 2 {
		t.Errorf("the takeover of an expired lease: Reclaimed %t, Attempt %d; want true, 2", other[0].Reclaimed, other[0].Attempt)
	}
	// The first ID holds nothing valid now: it leases as usual, which
	// takes over its own other expired lease, with a fresh token.
	got := repeatID(t, s, "acq-1", expiry, leaseFor, 2)
	if len(got) != 1 || got[0].Key() != rest {
		t.Fatalf("Acquire with the ID at its leases' expiry leased %s; want only the other expired lease, on %s, taken over", leaseKeys(got), rest.EventID)
	}
	for _, l := range first {
		if l.Token == got[0].Token || l.Token == other[0].Token {
			t.Errorf("an expired lease on %s was returned with its token; want a new lease", l.Key())
		}
	}
	if !got[0].Reclaimed || got[0].Attempt != 2 {
		t.Errorf("the takeover under the first ID: Reclaimed %t, Attempt %d; want true, 2", got[0].Reclaimed, got[0].Attempt)
	}
	sameLeases(t, "Acquire(ID acq-2) after the takeovers", repeatID(t, s, "acq-2", expiry, leaseFor, 2), other)
}

// testAcquireIDWithoutHeldLeases: a new ID leases as an acquisition
// without one does: the longest due first, fresh tokens, attempts counted.
func testAcquireIDWithoutHeldLeases(t *testing.T, s Store) {
	envs := enqueueN(t, s, 3)
	now := at(10 * time.Second)
	got := acquireID(t, s, "acq-1", now, 30*time.Second, 2)
	if keys := leaseKeysInOrder(got); len(keys) != 2 || keys[0] != envs[0].Key || keys[1] != envs[1].Key {
		t.Fatalf("Acquire(Max 2) with a new ID leased %s; want evt_0 then evt_1, the longest due first", leaseKeys(got))
	}
	for i, l := range got {
		if l.Token == "" || l.Attempt != 1 || l.Reclaimed {
			t.Errorf("lease on %s: Token %q, Attempt %d, Reclaimed %t; want a token, 1, false", l.Key(), l.Token, l.Attempt, l.Reclaimed)
		}
		want := leasedItem(enqueuedItem(envs[i]), now, 30*time.Second)
		checkItem(t, "Lease.Item", l.Item, want)
		checkStored(t, s, want, "after Acquire with a new ID")
	}
	if got[0].Token == got[1].Token {
		t.Errorf("two leases share the token %q; want one each", got[0].Token)
	}
	// A repeat of an acquisition that leased nothing leases as usual too.
	rest := repeatID(t, s, "acq-never-answered", now, 30*time.Second, 2)
	if keys := leaseKeysInOrder(rest); len(keys) != 1 || keys[0] != envs[2].Key {
		t.Fatalf("Acquire(Max 2, Repeat) with an ID that holds nothing leased %s; want evt_2, the one left due", leaseKeys(rest))
	}
}

// leaseKeysInOrder returns the keys of leases, in order.
func leaseKeysInOrder(leases []*webhooks.Lease) []webhooks.InboxKey {
	keys := make([]webhooks.InboxKey, len(leases))
	for i, l := range leases {
		keys[i] = l.Key()
	}
	return keys
}

// testAcquireIDEmpty: an acquisition without an ID names nothing: each
// call leases other due items.
func testAcquireIDEmpty(t *testing.T, s Store) {
	envs := enqueueN(t, s, 3)
	now := at(10 * time.Second)
	for i, env := range envs {
		acquire := acquireID
		if i%2 == 1 {
			acquire = repeatID // a repeat without an ID names nothing either
		}
		got := acquire(t, s, "", now, leaseFor, 1)
		if len(got) != 1 || got[0].Key() != env.Key {
			t.Fatalf("Acquire #%d without an ID leased %s; want %s, the next due", i+1, leaseKeys(got), env.Key.EventID)
		}
	}
	wantNothingDue(t, s, now, "every item is leased")
}

// testAcquireIDsNeverShare: acquisitions with different IDs never return
// one another's leases, however many they are.
func testAcquireIDsNeverShare(t *testing.T, s Store) {
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
	owner := map[webhooks.InboxKey]int{}
	for w, leases := range got {
		for _, l := range leases {
			if o, ok := owner[l.Key()]; ok {
				t.Errorf("%s was leased under acq-%d and acq-%d; want one holder", l.Key(), o, w)
			}
			owner[l.Key()] = w
		}
	}
	if len(owner) != workers*3 {
		t.Errorf("%d concurrent acquisitions of 3 leased %d items in all; want %d", workers, len(owner), workers*3)
	}
	for w, leases := range got {
		sameLeases(t, fmt.Sprintf("Acquire(ID acq-%d) again", w), repeatID(t, s, fmt.Sprintf("acq-%d", w), now.Add(time.Second), leaseFor, 3), leases)
	}
}

// testAcquireIDKeepsReclaimed: a repeat of an acquisition that took an
// expired lease over reports Reclaimed as the first did, and records the
// crashed attempt once.
func testAcquireIDKeepsReclaimed(t *testing.T, s Store) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	mustAcquireKey(t, s, env.Key, base, 10*time.Second)
	now := at(10 * time.Second)
	first := acquireID(t, s, "acq-1", now, leaseFor, 1)
	if len(first) != 1 || !first[0].Reclaimed || first[0].Attempt != 2 {
		t.Fatalf("Acquire(ID acq-1) of an expired lease: %d leases; want one, Reclaimed, attempt 2", len(first))
	}
	before := snapshot(t, s, []webhooks.Envelope{env})
	if n := len(before[env.Key].History); n != 1 {
		t.Errorf("after the takeover the history holds %d attempts; want the crashed one", n)
	}
	sameLeases(t, "Acquire(ID acq-1) again", repeatID(t, s, "acq-1", now.Add(time.Second), leaseFor, 1), first)
	unchanged(t, s, before, "Acquire(ID acq-1) again")
}

// testAcquireIDAfterExtend: a lease extended since is returned as it is
// now, valid until its new expiry.
func testAcquireIDAfterExtend(t *testing.T, s Store) {
	envs := enqueueN(t, s, 1)
	now := at(10 * time.Second)
	first := acquireID(t, s, "acq-1", now, 10*time.Second, 1)
	if len(first) != 1 {
		t.Fatalf("Acquire(ID acq-1) leased %d; want 1", len(first))
	}
	if err := extend(t, s, first[0], now.Add(5*time.Second), time.Minute); err != nil {
		t.Fatalf("ExtendLease: %v; want no error", err)
	}
	before := snapshot(t, s, envs)
	got := repeatID(t, s, "acq-1", now.Add(30*time.Second), leaseFor, 1)
	extended := *first[0]
	extended.ExpiresAt = now.Add(5*time.Second + time.Minute)
	sameLeases(t, "Acquire(ID acq-1) after the lease was extended, past its first expiry", got, []*webhooks.Lease{&extended})
	unchanged(t, s, before, "Acquire(ID acq-1) after the lease was extended")
}
