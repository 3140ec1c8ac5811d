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

// reopenCases are the bulk replays that undo an operator's mistake (closed
// dead letters replayed, succeeded items run again), and the bounds of a
// bulk replay.
var reopenCases = []inboxCase{
	opsCase("BulkReplayClosedWhenAsked", testBulkReplayClosedWhenAsked),
	opsCase("BulkReplaySucceededWhenAsked", testBulkReplaySucceededWhenAsked),
	opsCase("BulkReplayLimits", testBulkReplayLimits),
	opsCase("BulkReplayInBatches", testBulkReplayInBatches),
	opsCase("BulkReplayKeepsToItsSelection", testBulkReplayKeepsToItsSelection),
	opsCase("BulkReplayCursorKeepsItsLimit", testBulkReplayCursorKeepsItsLimit),
}

// testBulkReplayClosedWhenAsked: a bulk replay takes closed items only
// when its query asks for them by state, and then only closed ones.
func testBulkReplayClosedWhenAsked(t *testing.T, s opsStore) {
	specs := mixedDeadLetters(t, s)
	closed := []webhooks.InboxKey{specs[0].key, specs[5].key, specs[6].key}
	for i, k := range closed {
		mustClose(t, s, closeOf(k, at(time.Hour+time.Duration(i)*time.Minute)))
	}
	now := at(2 * time.Hour)
	q := ops.Query{State: webhooks.StateClosed, Limit: 100}
	req := bulkReplay(q, now)
	req.DryRun = true
	dry := mustReplay(t, s, req)
	req.DryRun = false
	res := mustReplay(t, s, req)
	wantReplayed(t, "Replay of closed items after its dry run", res, dry.Items)
	want := []webhooks.InboxKey{closed[2], closed[1], closed[0]} // newest closing first
	if got := replayedKeys(res); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Replay(%s) replayed:%s\nwant the closed items, newest closing first:%s", fmtReplay(bulkReplay(q, now)), fmtKeys(got), fmtKeys(want))
	}
	for _, k := range closed {
		if it := mustGet(t, s, k); it.State != webhooks.StatePending || !it.ClosedAt.IsZero() {
			t.Errorf("Get(%s) after a bulk replay of closed items: State %s, ClosedAt %s; want %s, none", fmtKey(k), it.State, fmtTime(it.ClosedAt), webhooks.StatePending)
		}
	}
	if got := len(mustList(t, s, ops.Query{Limit: 100}).Items); got != len(specs)-len(closed) {
		t.Errorf("after a bulk replay of closed items, %d dead letters listed; want the %d left dead", got, len(specs)-len(closed))
	}
}

// testBulkReplaySucceededWhenAsked: a bulk replay runs succeeded items
// again only when its query asks for them by state; From and To bound
// when they completed.
func testBulkReplaySucceededWhenAsked(t *testing.T, s opsStore) {
	var keys []webhooks.InboxKey
	for i := range 4 {
		env := envelope(key(fmt.Sprintf("ok_%d", i)), fmt.Sprint(i), at(time.Duration(i)*time.Minute))
		mustEnqueue(t, s, env)
		l := mustAcquireKey(t, s, env.Key, env.ReceivedAt, leaseFor)
		mustSettle(t, s, succeed(l, env.ReceivedAt.Add(time.Second)))
		keys = append(keys, env.Key)
	}
	makeDead(t, s, envelope(key("dead"), "d", at(time.Hour)), at(time.Hour))
	now := at(2 * time.Hour)
	q := ops.Query{State: webhooks.StateSucceeded, From: at(time.Minute), To: at(3 * time.Minute), Limit: 100}
	res := mustReplay(t, s, bulkReplay(q, now))
	want := []webhooks.InboxKey{keys[2], keys[1]} // completed in [1m, 3m), newest first
	if got := replayedKeys(res); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Replay(%s) replayed:%s\nwant the succeeded items completed in the window, newest first:%s", fmtReplay(bulkReplay(q, now)), fmtKeys(got), fmtKeys(want))
	}
	for i, k := range keys {
		wantState := webhooks.StateSucceeded
		if i == 1 || i == 2 {
			wantState = webhooks.StatePending
		}
		if it := mustGet(t, s, k); it.State != wantState {
			t.Errorf("Get(%s) after a bulk replay of succeeded items: State %s; want %s", fmtKey(k), it.State, wantState)
		}
	}
	if it := mustGet(t, s, key("dead")); it.State != webhooks.StateDead {
		t.Errorf("a bulk replay of succeeded items replayed a dead letter: State %s; want %s", it.State, webhooks.StateDead)
	}
}

// mustList requires List(q) to succeed.
func mustList(t *testing.T, s opsStore, q ops.Query) ops.Page {
	t.Helper()
	p, err := s.List(t.Context(), q)
	if err != nil {
		t.Fatalf("List(%s): %v; want no error", fmtQuery(q), err)
	}
	return p
}

// testBulkReplayLimits: a bulk replay over the most items one may take, or
// spread over longer than the most a spread may last (2,999 dead letters
// once went to the 2170s), is refused with ErrInvalidRequest and changes
// nothing; the most is allowed.
func testBulkReplayLimits(t *testing.T, s opsStore) {
	env := envelope(key("evt_1"), "p", base)
	makeDead(t, s, env, base)
	before := mustDetail(t, s, env.Key)
	now := at(time.Hour)
	tooMany := bulkReplay(ops.Query{Limit: ops.MaxReplayLimit + 1}, now)
	tooLong := bulkReplay(ops.Query{Limit: 10}, now)
	tooLong.Spread = ops.MaxReplaySpread + time.Microsecond
	centuries := bulkReplay(ops.Query{Limit: 10}, now)
	centuries.Spread = 150 * 365 * 24 * time.Hour
	for _, req := range []ops.ReplayRequest{tooMany, tooLong, centuries} {
		for _, dry := range []bool{true, false} {
			req.DryRun = dry
			res, err := s.Replay(t.Context(), req)
			if !errors.Is(err, ops.ErrInvalidRequest) || len(res.Items) != 0 {
				t.Errorf("Replay(%s) = %d items, error %v; want none and an error wrapping ops.ErrInvalidRequest", fmtReplay(req), len(res.Items), err)
			}
		}
	}
	checkStored(t, s, before.Item, "after refused bulk replays (nothing may change)")

	most := bulkReplay(ops.Query{Limit: ops.MaxReplayLimit}, now)
	most.Spread = ops.MaxReplaySpread
	res := mustReplay(t, s, most)
	wantReplayed(t, "Replay(the most items, the longest spread)", res, []ops.Replayed{{Key: env.Key, DueAt: now}})
	if res.Done != 1 || res.Total != 1 || res.Next != "" {
		t.Errorf("Replay(the most items) of one dead letter: Done %d, Total %d, Next %q; want 1, 1 and none", res.Done, res.Total, res.Next)
	}
}

// manyDeadLetters dead-letters n items of one provider, one a second from
// base, e0000 first, and returns their keys newest first.
func manyDeadLetters(t *testing.T, s opsStore, n int) []webhooks.InboxKey {
	t.Helper()
	keys := make([]webhooks.InboxKey, n)
	for i := range n {
		env := envelope(key(fmt.Sprintf("e%04d", i)), fmt.Sprint(i), at(time.Duration(i)*time.Second))
		mustEnqueue(t, s, env)
		keys[n-1-i] = env.Key
	}
	for done := 0; done < n; {
		leases, err := acquire(t, s, at(time.Duration(n)*time.Second), leaseFor, 100)
		if err != nil || len(leases) == 0 {
			t.Fatalf("setup: Acquire = %d leases, %v; want up to 100", len(leases), err)
		}
		for _, l := range leases {
			mustSettle(t, s, deadLetter(l, permanent, l.Item.ReceivedAt))
		}
		done += len(leases)
	}
	return keys
}

// replayCalls runs the bulk replay req to its end, a call at a time, and
// returns every call's result.
func replayCalls(t *testing.T, s opsStore, req ops.ReplayRequest) []ops.ReplayResult {
	t.Helper()
	q := *req.Query
	req.Query = &q
	var calls []ops.ReplayResult
	for {
		res := mustReplay(t, s, req)
		calls = append(calls, res)
		if res.Next == "" {
			return calls
		}
		if len(calls) > ops.MaxReplayLimit/ops.ReplayBatch {
			t.Fatalf("Replay(%s) goes on after %d calls", fmtReplay(req), len(calls))
		}
		q.After = res.Next
	}
}

// testBulkReplayInBatches: a bulk replay larger than ops.ReplayBatch goes
// through it a call at a time, by cursor, each item at its place in the
// spread over the whole replay; a dry run's cursor does not continue a
// replay, nor a listing's; an item the replay already replayed, dead again
// before the replay ends, is not taken again, and one replayed by someone
// else meanwhile is not either: it is skipped, and the replay ends with
// Done equal to Total.
func testBulkReplayInBatches(t *testing.T, s opsStore) {
	const n = ops.ReplayBatch + 100
	keys := manyDeadLetters(t, s, n)
	now := at(2 * time.Hour)
	req := bulkReplay(ops.Query{Limit: ops.MaxReplayLimit}, now)
	req.Spread = n * time.Second // item i due at now + i seconds
	want := make([]ops.Replayed, n)
	for i, k := range keys {
		want[i] = ops.Replayed{Key: k, DueAt: now.Add(time.Duration(i) * time.Second)}
	}

	req.DryRun = true
	dry := replayCalls(t, s, req)
	if len(dry) != 2 || len(dry[0].Items) != ops.ReplayBatch || dry[0].Done != ops.ReplayBatch || dry[0].Total != n ||
		dry[1].Done != n || dry[1].Total != n {
		t.Fatalf("Replay(DryRun) of %d dead letters: %d calls; want 2: %d items (Done %d of Total %d), then the rest", n, len(dry), ops.ReplayBatch, ops.ReplayBatch, n)
	}
	wantReplayed(t, "Replay(DryRun) of two batches", ops.ReplayResult{Items: append(dry[0].Items, dry[1].Items...)}, want)
	wantList(t, s, ops.Query{}, keys)

	req.DryRun = false
	first := req
	q := *req.Query
	q.After = dry[0].Next
	first.Query = &q
	if _, err := s.Replay(t.Context(), first); !errors.Is(err, ops.ErrInvalidCursor) {
		t.Errorf("Replay continued with a dry run's cursor: error %v; want ops.ErrInvalidCursor", err)
	}
	page := mustList(t, s, ops.Query{Limit: 2})
	q.After = page.Next
	if _, err := s.Replay(t.Context(), first); !errors.Is(err, ops.ErrInvalidCursor) {
		t.Errorf("Replay with a listing's cursor: error %v; want ops.ErrInvalidCursor", err)
	}
	wantList(t, s, ops.Query{}, keys) // nothing replayed

	res := mustReplay(t, s, req)
	if len(res.Items) != ops.ReplayBatch || res.Done != ops.ReplayBatch || res.Total != n || res.Next == "" {
		t.Fatalf("Replay of %d dead letters, first call: %d items, Done %d, Total %d, Next %q; want %d, %d, %d and a cursor",
			n, len(res.Items), res.Done, res.Total, res.Next, ops.ReplayBatch, ops.ReplayBatch, n)
	}
	wantReplayed(t, "Replay of two batches, first call", res, want[:ops.ReplayBatch])

	// Meanwhile the first item dies again, and one of the second batch is
	// replayed by someone else.
	l := mustAcquireKey(t, s, keys[0], now, leaseFor)
	mustSettle(t, s, deadLetter(l, permanent, now.Add(time.Second)))
	mustReplay(t, s, replayOf(keys[n-50], now))

	q = *req.Query
	q.After = res.Next
	req.Query = &q
	res = mustReplay(t, s, req)
	if res.Done != n || res.Total != n || res.Next != "" {
		t.Errorf("Replay of %d dead letters, second call: Done %d, Total %d, Next %q; want %d (the one that left the dead letters skipped), %d and none", n, res.Done, res.Total, res.Next, n, n)
	}
	// The second call's items take the places after the first call's, in
	// the order it finds them.
	second := slices.Concat(keys[ops.ReplayBatch:n-50], keys[n-49:])
	want = want[:0]
	for i, k := range second {
		want = append(want, ops.Replayed{Key: k, DueAt: now.Add(time.Duration(ops.ReplayBatch+i) * time.Second)})
	}
	wantReplayed(t, "Replay of two batches, second call", res, want)
	for _, r := range res.Items {
		checkAudit(t, s, r.Key, []ops.Audit{replayAudit(now)}, "after a replay in two batches")
	}
	wantList(t, s, ops.Query{}, keys[:1])
}

// testBulkReplayKeepsToItsSelection: a bulk replay goes through the items
// it selected when it began, and no others. Two operators replay the
// newest dead letters at once: the one replaying ops.ReplayBatch+10 has
// gone through its first batch when the other replays the newest 10 left,
// the rest of the first one's selection. The first then ends with nothing
// more to replay (Done = Total), and does not take in their place older
// dead letters it never selected.
func testBulkReplayKeepsToItsSelection(t *testing.T, s opsStore) {
	const limit = ops.ReplayBatch + 10
	keys := manyDeadLetters(t, s, limit+10)
	now := at(2 * time.Hour)
	req := bulkReplay(ops.Query{Limit: limit}, now)
	req.Spread = limit * time.Second
	first := mustReplay(t, s, req)
	if len(first.Items) != ops.ReplayBatch || first.Done != ops.ReplayBatch || first.Total != limit || first.Next == "" {
		t.Fatalf("Replay(Limit %d), first call: %d items, Done %d, Total %d, Next %q; want %d, %d, %d and a cursor",
			limit, len(first.Items), first.Done, first.Total, first.Next, ops.ReplayBatch, ops.ReplayBatch, limit)
	}
	other := mustReplay(t, s, bulkReplay(ops.Query{Limit: 10}, now.Add(time.Second)))
	wantReplayed(t, "the other operator's Replay(Limit 10)", other, replayedAt(keys[ops.ReplayBatch:limit], now.Add(time.Second)))

	q := *req.Query
	q.After = first.Next
	req.Query = &q
	res := mustReplay(t, s, req)
	if len(res.Items) != 0 || res.Done != limit || res.Total != limit || res.Next != "" {
		t.Errorf("Replay(Limit %d), second call, after another replay took the rest of its selection: items:%s\nDone %d, Total %d, Next %q; "+
			"want no item (the older dead letters were never selected), Done %d of Total %d and no cursor",
			limit, fmtReplayed(res.Items), res.Done, res.Total, res.Next, limit, limit)
	}
	wantList(t, s, ops.Query{}, keys[limit:])
}

// replayedAt is keys, each due at due.
func replayedAt(keys []webhooks.InboxKey, due time.Time) []ops.Replayed {
	out := make([]ops.Replayed, len(keys))
	for i, k := range keys {
		out[i] = ops.Replayed{Key: k, DueAt: due}
	}
	return out
}

// testBulkReplayCursorKeepsItsLimit: a bulk replay's cursor goes on only
// with a Query.Limit that admits the Total it selected: continued with a
// smaller limit, the replay is refused with ErrInvalidCursor and nothing
// changes; with a larger one it goes on.
func testBulkReplayCursorKeepsItsLimit(t *testing.T, s opsStore) {
	const limit = ops.ReplayBatch + 10
	keys := manyDeadLetters(t, s, limit)
	now := at(2 * time.Hour)
	req := bulkReplay(ops.Query{Limit: limit}, now)
	for _, dry := range []bool{true, false} {
		req.DryRun = dry
		first := mustReplay(t, s, req)
		if first.Total != limit || first.Next == "" {
			t.Fatalf("Replay(%s), first call: Total %d, Next %q; want %d and a cursor", fmtReplay(req), first.Total, first.Next, limit)
		}
		tampered := req
		q := *req.Query
		q.Limit, q.After = ops.ReplayBatch, first.Next
		tampered.Query = &q
		res, err := s.Replay(t.Context(), tampered)
		if !errors.Is(err, ops.ErrInvalidCursor) || len(res.Items) != 0 {
			t.Errorf("Replay(%s), continuing a replay of Total %d with a smaller Limit: %d items, error %v; want none and an error wrapping ops.ErrInvalidCursor",
				fmtReplay(tampered), first.Total, len(res.Items), err)
		}
		left := keys // a dry run changes nothing
		if !dry {
			left = keys[ops.ReplayBatch:]
		}
		wantList(t, s, ops.Query{}, left)

		q.Limit = ops.MaxReplayLimit
		res = mustReplay(t, s, tampered)
		wantReplayed(t, "Replay continued with a larger Limit", res, replayedAt(keys[ops.ReplayBatch:], now))
		if res.Done != limit || res.Total != limit || res.Next != "" {
			t.Errorf("Replay(%s) continued with a larger Limit: Done %d, Total %d, Next %q; want %d, %d and no cursor", fmtReplay(tampered), res.Done, res.Total, res.Next, limit, limit)
		}
	}
}
