package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

var bulkReplayCases = []inboxCase{
	opsCase("BulkReplayDryRunThenReplay", testBulkReplayDryRunThenReplay),
	opsCase("BulkReplaySelects", testBulkReplaySelects),
	opsCase("BulkReplayLimitNewestFirst", testBulkReplayLimitNewestFirst),
	opsCase("BulkReplaySpread", testBulkReplaySpread),
	opsCase("BulkReplayRate", testBulkReplayRate),
	opsCase("BulkReplayNeverReplaysClosed", testBulkReplayNeverReplaysClosed),
	opsCase("BulkReplayConcurrent", testBulkReplayConcurrent),
}

// mixedDeadLetters dead-letters items of two providers, two tenants (one
// of them none), two event types, two error classes and two API versions,
// one a minute, and returns their specs.
func mixedDeadLetters(t *testing.T, s opsStore) []deadSpec {
	t.Helper()
	var specs []deadSpec
	i := 0
	for _, p := range []string{"acme", "beta"} {
		for _, tn := range []string{"", "t1"} {
			for _, et := range []string{"invoice.paid", "charge.failed"} {
				i++
				d := deadSpec{webhooks.InboxKey{Provider: p, Tenant: tn, EventID: fmt.Sprintf("e%02d", i)}, et, at(time.Duration(i) * time.Minute)}
				env := envelope(d.key, d.key.String(), d.deadAt)
				env.EventType = et
				env.APIVersion = []string{"2024-01-01", "2025-06-30"}[i%2]
				mustEnqueue(t, s, env)
				l := mustAcquireKey(t, s, env.Key, d.deadAt, leaseFor)
				f := permanent
				if i%3 == 0 {
					f = webhooks.Failure{Class: webhooks.FailureTimeout, Message: "too slow"}
				}
				mustSettle(t, s, deadLetter(l, f, d.deadAt))
				specs = append(specs, d)
			}
		}
	}
	return specs
}

// testBulkReplayDryRunThenReplay: the "done means": a dry run
// changes nothing and reports the set, with due times, that the same
// request then replays.
func testBulkReplayDryRunThenReplay(t *testing.T, s opsStore) {
	specs := mixedDeadLetters(t, s)
	mustEnqueue(t, s, envelope(key("pending"), "p", at(24*time.Hour)))
	before := make(map[webhooks.InboxKey]ops.Detail)
	for _, d := range specs {
		before[d.key] = mustDetail(t, s, d.key)
	}
	now := at(time.Hour)
	q := ops.Query{Provider: "acme", Limit: 3}
	req := bulkReplay(q, now)
	req.Spread = 30 * time.Minute
	req.DryRun = true
	dry := mustReplay(t, s, req)
	want := newestFirst(specs, q)[:3]
	if got := replayedKeys(dry); !slices.Equal(got, want) {
		t.Errorf("Replay(%s) reported:%s\nwant the newest %d matching dead letters:%s", fmtReplay(req), fmtKeys(got), len(want), fmtKeys(want))
	}
	for _, d := range specs {
		checkItem(t, "Get after a bulk Replay(DryRun) (nothing may change)", mustGet(t, s, d.key), before[d.key].Item)
		checkAudit(t, s, d.key, nil, "after a bulk Replay(DryRun)")
	}
	wantList(t, s, ops.Query{}, newestFirst(specs, ops.Query{}))

	req.DryRun = false
	real := mustReplay(t, s, req)
	wantReplayed(t, "Replay after its dry run", real, dry.Items)
	for _, r := range real.Items {
		checkStored(t, s, replayedItem(before[r.Key].Item, now, r.DueAt, true), "after a bulk Replay")
		checkAudit(t, s, r.Key, []ops.Audit{replayAudit(now)}, "after a bulk Replay")
	}
	rest := slices.DeleteFunc(newestFirst(specs, ops.Query{}), func(k webhooks.InboxKey) bool { return slices.Contains(want, k) })
	wantList(t, s, ops.Query{}, rest)
}

func replayedKeys(res ops.ReplayResult) []webhooks.InboxKey {
	var keys []webhooks.InboxKey
	for _, r := range res.Items {
		keys = append(keys, r.Key)
	}
	return keys
}

// testBulkReplaySelects: every filter of the query selects as List does,
// and a dry run reports exactly what the replay then does.
func testBulkReplaySelects(t *testing.T, s opsStore) {
	specs := mixedDeadLetters(t, s)
	now := at(time.Hour)
	for _, q := range []ops.Query{
		{Provider: "beta"},
		{Tenant: tenant("")},
		{Tenant: tenant("t1"), EventType: "charge.failed"},
		{ErrorClass: webhooks.FailureTimeout},
		{APIVersion: "2024-01-01"},
		{From: at(3 * time.Minute), To: at(6 * time.Minute)},
		{Provider: "gamma"},
	} {
		q.Limit = 100
		page, err := s.List(t.Context(), q)
		if err != nil {
			t.Fatalf("List(%s): %v", fmtQuery(q), err)
		}
		req := bulkReplay(q, now)
		req.DryRun = true
		dry := mustReplay(t, s, req)
		if got, want := replayedKeys(dry), keysOf(page.Items); !slices.Equal(got, want) {
			t.Errorf("Replay(%s) reported:%s\nwant what List selects:%s", fmtReplay(req), fmtKeys(got), fmtKeys(want))
		}
	}
	// One real run with a filter, then the rest.
	q := ops.Query{ErrorClass: webhooks.FailureTimeout, Limit: 100}
	req := bulkReplay(q, now)
	req.DryRun = true
	dry := mustReplay(t, s, req)
	req.DryRun = false
	wantReplayed(t, "Replay(ErrorClass timeout) after its dry run", mustReplay(t, s, req), dry.Items)
	for _, r := range dry.Items {
		if it := mustGet(t, s, r.Key); it.State != webhooks.StatePending || !it.NextAttemptAt.Equal(now) {
			t.Errorf("Get(%s) after a bulk Replay: State %s due %s; want %s due %s", fmtKey(r.Key), it.State, fmtTime(it.NextAttemptAt), webhooks.StatePending, fmtTime(now))
		}
	}
	left := mustReplay(t, s, bulkReplay(ops.Query{Limit: 100}, at(2*time.Hour)))
	if got := len(left.Items) + len(dry.Items); got != len(specs) {
		t.Errorf("two bulk replays replayed %d + %d items; want all %d dead letters once", len(dry.Items), len(left.Items), len(specs))
	}
	wantList(t, s, ops.Query{}, nil)
}

func testBulkReplayLimitNewestFirst(t *testing.T, s opsStore) {
	specs := pagingSpecs()
	makeDeadLetters(t, s, specs)
	all := newestFirst(specs, ops.Query{})
	var got []webhooks.InboxKey
	for i := range 3 {
		res := mustReplay(t, s, bulkReplay(ops.Query{Limit: 5}, at(time.Hour+time.Duration(i)*time.Second)))
		if want := min(5, len(all)-len(got)); len(res.Items) != want {
			t.Errorf("bulk Replay #%d (Limit 5) replayed %d items; want %d", i+1, len(res.Items), want)
		}
		got = append(got, replayedKeys(res)...)
	}
	if !slices.Equal(got, all) {
		t.Errorf("three bulk replays of 5 replayed, in order:%s\nwant the dead letters newest first:%s", fmtKeys(got), fmtKeys(all))
	}
}

// testBulkReplaySpread: item i of n is due at Now + Spread*i/n, inside the
// window [Now, Now+Spread), newest first; a worker at Now finds only the
// first due.
func testBulkReplaySpread(t *testing.T, s opsStore) {
	var specs, more []deadSpec
	for i := range 10 {
		specs = append(specs, deadSpec{key(fmt.Sprintf("e%02d", i)), "invoice.paid", at(time.Duration(i) * time.Second)})
	}
	for i := range 7 {
		more = append(more, deadSpec{key(fmt.Sprintf("f%02d", i)), "charge.failed", at(time.Minute + time.Duration(i)*time.Second)})
	}
	makeDeadLetters(t, s, append(specs, more...))
	now, spread := at(time.Hour), 10*time.Minute
	req := bulkReplay(ops.Query{EventType: "invoice.paid", Limit: 100}, now)
	req.Spread = spread
	res := mustReplay(t, s, req)
	var want []ops.Replayed
	for i, k := range newestFirst(specs, ops.Query{}) {
		want = append(want, ops.Replayed{Key: k, DueAt: now.Add(spread * time.Duration(i) / 10)})
	}
	wantReplayed(t, "Replay(10 items, Spread 10m)", res, want)
	for _, r := range want {
		if it := mustGet(t, s, r.Key); !it.NextAttemptAt.Equal(r.DueAt) {
			t.Errorf("Get(%s).NextAttemptAt = %s after a spread replay; want %s", fmtKey(r.Key), fmtTime(it.NextAttemptAt), fmtTime(r.DueAt))
		}
	}
	leases, err := acquire(t, s, now, leaseFor, 10)
	if err != nil || len(leases) != 1 || leases[0].Key() != want[0].Key {
		t.Errorf("Acquire(Now of the spread replay, Max 10) = %d leases, %v; want only the first item, %s", len(leases), err, fmtKey(want[0].Key))
	}

	// Seven items over a second do not divide evenly: every due time is
	// still in the window, in order, the first at Now.
	now, spread = at(3*time.Hour), time.Second
	req = bulkReplay(ops.Query{EventType: "charge.failed", Limit: 100}, now)
	req.Spread = spread
	res = mustReplay(t, s, req)
	if len(res.Items) != 7 {
		t.Fatalf("Replay(7 items, Spread 1s) replayed %d items; want 7", len(res.Items))
	}
	for i, r := range res.Items {
		if r.DueAt.Before(now) || !r.DueAt.Before(now.Add(spread)) || (i == 0 && !r.DueAt.Equal(now)) || (i > 0 && r.DueAt.Before(res.Items[i-1].DueAt)) {
			t.Errorf("Replay(7 items, Spread 1s) item %d due %s; want due times in [%s, %s), non-decreasing, the first at Now",
				i, fmtTime(r.DueAt), fmtTime(now), fmtTime(now.Add(spread)))
		}
		if it := mustGet(t, s, r.Key); !it.NextAttemptAt.Equal(r.DueAt) {
			t.Errorf("Get(%s).NextAttemptAt = %s; want %s, as Replay reported", fmtKey(r.Key), fmtTime(it.NextAttemptAt), fmtTime(r.DueAt))
		}
	}
}

// testBulkReplayRate: with Rate, item i is due at Now + i/Rate; and the
// replayed jobs go through the handler's Limits like any other, on a
// store that keeps them. Mutations: Rate ignored; replayed jobs leased
// past the Limits.
func testBulkReplayRate(t *testing.T, s opsStore) {
	var specs []deadSpec
	for i := range 10 {
		specs = append(specs, deadSpec{key(fmt.Sprintf("e%02d", i)), "invoice.paid", at(time.Duration(i) * time.Second)})
	}
	makeDeadLetters(t, s, specs)
	now := at(time.Hour)
	req := bulkReplay(ops.Query{Limit: 100}, now)
	req.Rate = 4
	var want []ops.Replayed
	for i, k := range newestFirst(specs, ops.Query{}) {
		want = append(want, ops.Replayed{Key: k, DueAt: now.Add(time.Duration(i) * 250 * time.Millisecond)})
	}
	wantReplayed(t, "Replay(10 items, Rate 4)", mustReplay(t, s, req), want)
	if leases, err := acquire(t, s, now.Add(time.Second), leaseFor, 100); err != nil || len(leases) != 5 {
		t.Errorf("Acquire a second after a replay at Rate 4 = %d leases, %v; want 5 (due at 0, 250, 500, 750 ms and 1 s)", len(leases), err)
	}
	if !webhooks.FlowOf(s).Limits {
		return
	}
	limited, err := s.Acquire(t.Context(), webhooks.AcquireRequest{Now: now.Add(time.Hour), LeaseDuration: leaseFor, Max: 100,
		Worker: worker, Version: version, Limits: webhooks.Limits{Rate: 1, Burst: 2}})
	if err != nil || len(limited) != 2 {
		t.Errorf("Acquire under Limits {Rate 1, Burst 2} of 5 replayed jobs due = %d leases, %v; want 2: a replay goes through the limits", len(limited), err)
	}
}

// testBulkReplayNeverReplaysClosed: the "done means": a closed
// dead letter is never replayed by a bulk replay, whatever the query.
func testBulkReplayNeverReplaysClosed(t *testing.T, s opsStore) {
	specs := mixedDeadLetters(t, s)
	closed := []webhooks.InboxKey{specs[0].key, specs[5].key}
	for _, k := range closed {
		if err := s.CloseDeadLetter(t.Context(), closeOf(k, at(time.Hour))); err != nil {
			t.Fatalf("CloseDeadLetter(%s): %v", fmtKey(k), err)
		}
	}
	for _, q := range []ops.Query{{Limit: 100}, {Provider: specs[0].key.Provider, Tenant: tenant(specs[0].key.Tenant), Limit: 100}, {State: webhooks.StateDead, Limit: 100}} {
		req := bulkReplay(q, at(2*time.Hour))
		req.DryRun = true
		for _, k := range replayedKeys(mustReplay(t, s, req)) {
			if slices.Contains(closed, k) {
				t.Errorf("Replay(%s) would replay the closed item %s; want closed items never replayed by a query", fmtReplay(req), fmtKey(k))
			}
		}
	}
	res := mustReplay(t, s, bulkReplay(ops.Query{Limit: 100}, at(2*time.Hour)))
	if len(res.Items) != len(specs)-len(closed) {
		t.Errorf("bulk Replay of everything replayed %d items; want the %d dead ones", len(res.Items), len(specs)-len(closed))
	}
	for _, k := range closed {
		if it := mustGet(t, s, k); it.State != webhooks.StateClosed {
			t.Errorf("Get(%s) after a bulk replay of everything: State %s; want %s", fmtKey(k), it.State, webhooks.StateClosed)
		}
	}
	wantList(t, s, ops.Query{State: webhooks.StateClosed}, []webhooks.InboxKey{closed[1], closed[0]})
}

// testBulkReplayConcurrent: bulk replays racing over one set replay each
// item once: items that stopped being dead are skipped, not failed.
func testBulkReplayConcurrent(t *testing.T, s opsStore) {
	const n = 6
	specs := mixedDeadLetters(t, s)
	results := make([]ops.ReplayResult, n)
	runConcurrently(n, func(i int) {
		res, err := s.Replay(t.Context(), bulkReplay(ops.Query{Limit: 100}, at(time.Hour)))
		if err != nil {
			t.Errorf("concurrent bulk Replay: %v; want no error (items replayed by another run are skipped)", err)
		}
		results[i] = res
	})
	seen := make(map[webhooks.InboxKey]int)
	for _, res := range results {
		for _, r := range res.Items {
			seen[r.Key]++
		}
	}
	for _, d := range specs {
		if seen[d.key] != 1 {
			t.Errorf("%d concurrent bulk replays replayed %s %d times; want exactly once", n, fmtKey(d.key), seen[d.key])
		}
		checkAudit(t, s, d.key, []ops.Audit{replayAudit(at(time.Hour))}, "after concurrent bulk replays (one recorded)")
	}
}
