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

var statsCases = []inboxCase{
	opsCase("StatsEmpty", testStatsEmpty),
	opsCase("StatsCounts", testStatsCounts),
	opsCase("StatsDeadLetterGroupsBounded", testStatsDeadLetterGroupsBounded),
}

// mustStats returns Stats at now.
func mustStats(t *testing.T, s opsStore, now time.Time) ops.Stats {
	t.Helper()
	st, err := s.Stats(t.Context(), ops.StatsRequest{Now: now})
	if err != nil {
		t.Fatalf("Stats(Now %s): %v; want no error", fmtTime(now), err)
	}
	return st
}

// checkStats compares got with want, the succeeded count only when the
// store does not estimate it.
func checkStats(t *testing.T, got, want ops.Stats, when string) {
	t.Helper()
	for _, state := range []webhooks.State{webhooks.StatePending, webhooks.StateLeased, webhooks.StateSucceeded, webhooks.StateDead, webhooks.StateClosed, webhooks.StateWaiting} {
		if state == webhooks.StateSucceeded && got.SucceededEstimated {
			if got.States[state] < 0 {
				t.Errorf("Stats %s: States[%s] = %d (estimated); want an estimate of at least 0", when, state, got.States[state])
			}
			continue
		}
		if got.States[state] != want.States[state] {
			t.Errorf("Stats %s: States[%s] = %d; want %d", when, state, got.States[state], want.States[state])
		}
	}
	for _, c := range []struct {
		name      string
		got, want int64
	}{{"Due", got.Due, want.Due}, {"Retrying", got.Retrying, want.Retrying}, {"LeasesHeld", got.LeasesHeld, want.LeasesHeld}} {
		if c.got != c.want {
			t.Errorf("Stats %s: %s = %d; want %d", when, c.name, c.got, c.want)
		}
	}
	if !got.OldestDue.Equal(want.OldestDue) {
		t.Errorf("Stats %s: OldestDue = %s; want %s", when, fmtTime(got.OldestDue), fmtTime(want.OldestDue))
	}
	if !slices.Equal(got.DeadLetters, want.DeadLetters) {
		t.Errorf("Stats %s: DeadLetters = %v; want %v (the largest groups first, then by provider and event type)", when, got.DeadLetters, want.DeadLetters)
	}
	if got.MoreDeadLetters != want.MoreDeadLetters {
		t.Errorf("Stats %s: MoreDeadLetters = %+v; want %+v (the groups beyond DeadLetters and their dead letters)", when, got.MoreDeadLetters, want.MoreDeadLetters)
	}
}

func testStatsEmpty(t *testing.T, s opsStore) {
	checkStats(t, mustStats(t, s, base), ops.Stats{}, "of an empty store")
}

// testStatsCounts: the stats: counts by state, dead letters by
// provider and event type, the backlog, retries and leases held.
func testStatsCounts(t *testing.T, s opsStore) {
	now := at(time.Hour)
	// Dead letters: acme/charge.failed ×3, beta/invoice.paid ×2,
	// acme/invoice.paid ×2 (ties ordered by provider, then event type),
	// and one closed, not counted with them.
	var specs []deadSpec
	for i, g := range []struct{ provider, eventType string }{
		{"acme", "charge.failed"}, {"beta", "invoice.paid"}, {"acme", "invoice.paid"}, {"acme", "charge.failed"},
		{"beta", "invoice.paid"}, {"acme", "charge.failed"}, {"acme", "invoice.paid"}, {"acme", "charge.failed"},
	} {
		specs = append(specs, deadSpec{webhooks.InboxKey{Provider: g.provider, Tenant: "t1", EventID: fmt.Sprintf("dead_%d", i)}, g.eventType, at(time.Duration(i) * time.Second)})
	}
	makeDeadLetters(t, s, specs)
	mustClose(t, s, closeOf(specs[7].key, at(10*time.Second)))

	// Succeeded: three.
	for i := range 3 {
		env := envelope(key(fmt.Sprintf("done_%d", i)), "d", at(20*time.Second))
		mustEnqueue(t, s, env)
		l := mustAcquireKey(t, s, env.Key, at(20*time.Second), leaseFor)
		mustSettle(t, s, succeed(l, at(21*time.Second)))
	}
	// Leased: one valid at now, one expired (due, the oldest).
	expired := envelope(key("expired"), "e", at(30*time.Second))
	mustEnqueue(t, s, expired)
	mustAcquireKey(t, s, expired.Key, at(30*time.Second), time.Minute) // expires at 1m30s
	held := envelope(key("held"), "h", at(40*time.Second))
	mustEnqueue(t, s, held)
	mustAcquireKey(t, s, held.Key, at(40*time.Second), 2*time.Hour)
	// Pending: one retrying and due, one retrying not due, one new and
	// due, one new not due.
	retrying := envelope(key("retrying"), "r", at(50*time.Second))
	mustEnqueue(t, s, retrying)
	l := mustAcquireKey(t, s, retrying.Key, at(50*time.Second), leaseFor)
	mustSettle(t, s, retry(l, transient, at(30*time.Minute), at(51*time.Second)))
	later := envelope(key("retrying_later"), "rl", at(52*time.Second))
	mustEnqueue(t, s, later)
	l = mustAcquireKey(t, s, later.Key, at(52*time.Second), leaseFor)
	mustSettle(t, s, retry(l, transient, at(2*time.Hour), at(53*time.Second)))
	mustEnqueue(t, s, envelope(key("new"), "n", at(45*time.Minute)))
	mustEnqueue(t, s, envelope(key("future"), "f", at(3*time.Hour)))

	want := ops.Stats{
		States: map[webhooks.State]int64{
			webhooks.StatePending: 4, webhooks.StateLeased: 2, webhooks.StateSucceeded: 3,
			webhooks.StateDead: 7, webhooks.StateClosed: 1,
		},
		Due:        3, // expired, retrying, new
		Retrying:   2,
		LeasesHeld: 1,
		OldestDue:  at(90 * time.Second),
		DeadLetters: []ops.Count{
			{Provider: "acme", EventType: "charge.failed", N: 3},
			{Provider: "acme", EventType: "invoice.paid", N: 2},
			{Provider: "beta", EventType: "invoice.paid", N: 2},
		},
	}
	checkStats(t, mustStats(t, s, now), want, "of items in every state")

	// Three hours later everything pending or leased is due, and no lease
	// is held.
	want.Due, want.LeasesHeld = 6, 0
	checkStats(t, mustStats(t, s, at(3*time.Hour)), want, "three hours later")
}

// testStatsDeadLetterGroupsBounded: senders choose event types, so the
// dead-letter groups Stats lists are bounded: the largest
// ops.DefaultDeadLetterGroups by default, or StatsRequest.DeadLetterGroups,
// and the rest counted in MoreDeadLetters; the dead count is every dead
// letter's.
func testStatsDeadLetterGroupsBounded(t *testing.T, s opsStore) {
	const groups = ops.DefaultDeadLetterGroups + 3
	var specs []deadSpec
	for g := range groups {
		// One dead letter a group, three in the last: the largest.
		n := 1
		if g == groups-1 {
			n = 3
		}
		for i := range n {
			specs = append(specs, deadSpec{key(fmt.Sprintf("g%02d_%d", g, i)), fmt.Sprintf("type.%02d", g), at(time.Duration(len(specs)) * time.Second)})
		}
	}
	makeDeadLetters(t, s, specs)
	now := at(time.Hour)
	largestFirst := []ops.Count{{Provider: "acme", EventType: fmt.Sprintf("type.%02d", groups-1), N: 3}}
	for g := range groups - 1 {
		largestFirst = append(largestFirst, ops.Count{Provider: "acme", EventType: fmt.Sprintf("type.%02d", g), N: 1})
	}
	for _, c := range []struct {
		bound, want int
	}{
		{0, ops.DefaultDeadLetterGroups},
		{1, 1},
		{5, 5},
		{groups, groups},
		{groups + 1, groups},
	} {
		st, err := s.Stats(t.Context(), ops.StatsRequest{Now: now, DeadLetterGroups: c.bound})
		if err != nil {
			t.Fatalf("Stats(DeadLetterGroups %d): %v; want no error", c.bound, err)
		}
		want := ops.Stats{
			States:          map[webhooks.State]int64{webhooks.StateDead: int64(len(specs))},
			DeadLetters:     largestFirst[:c.want],
			MoreDeadLetters: ops.More{Groups: int64(groups - c.want), N: int64(groups - c.want)},
		}
		checkStats(t, st, want, fmt.Sprintf("of %d dead-letter groups, DeadLetterGroups %d", groups, c.bound))
	}
	if _, err := s.Stats(t.Context(), ops.StatsRequest{Now: now, DeadLetterGroups: -1}); !errors.Is(err, ops.ErrInvalidRequest) {
		t.Errorf("Stats(DeadLetterGroups -1) error = %v; want one wrapping ops.ErrInvalidRequest", err)
	}
}
