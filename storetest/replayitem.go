package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

var replayOneCases = []inboxCase{
	opsCase("ReplayOne", func(t *testing.T, s opsStore) { testReplayOne(t, s, webhooks.StateDead, false) }),
	opsCase("ReplayOneKeepAttempts", func(t *testing.T, s opsStore) { testReplayOne(t, s, webhooks.StateDead, true) }),
	opsCase("ReplayClosed", func(t *testing.T, s opsStore) { testReplayOne(t, s, webhooks.StateClosed, false) }),
	opsCase("ReplaySucceeded", func(t *testing.T, s opsStore) { testReplayOne(t, s, webhooks.StateSucceeded, false) }),
	opsCase("ReplayOneAsRedelivery", testReplayOneAsRedelivery),
	opsCase("ReplayOneDryRun", testReplayOneDryRun),
	opsCase("ReplayNotFinished", testReplayNotFinished),
	opsCase("ReplayMissing", testReplayMissing),
	opsCase("ReplayInvalidRequest", testReplayInvalidRequest),
	opsCase("ReplayConcurrent", testReplayConcurrent),
}

// The operator the suite's replays and closings come from.
const (
	actor  = "alice@example.com"
	reason = "the handler is fixed in v1.2.4"
	ticket = "INC-1234"
)

// replayOf asks for an audited replay of k at now.
func replayOf(k webhooks.InboxKey, now time.Time) ops.ReplayRequest {
	return ops.ReplayRequest{Key: k, Actor: actor, Reason: reason, Ticket: ticket, Now: now}
}

// bulkReplay asks for an audited replay of the dead letters q selects.
func bulkReplay(q ops.Query, now time.Time) ops.ReplayRequest {
	return ops.ReplayRequest{Query: &q, Actor: actor, Reason: reason, Ticket: ticket, Now: now}
}

// closeOf asks for an audited closing of k at now.
func closeOf(k webhooks.InboxKey, now time.Time) ops.CloseRequest {
	return ops.CloseRequest{Key: k, Actor: actor, Reason: "a duplicate of an order we refunded by hand", Ticket: ticket, Now: now}
}

// fmtReplay prints req for failure messages.
func fmtReplay(req ops.ReplayRequest) string {
	target := "Key " + fmtKey(req.Key)
	if req.Query != nil {
		target = "Query " + fmtQuery(*req.Query)
	}
	return fmt.Sprintf("{%s Actor %q Reason %q Ticket %q KeepAttempts %t DryRun %t Spread %v Redelivery %t Now %s}",
		target, req.Actor, req.Reason, req.Ticket, req.KeepAttempts, req.DryRun, req.Spread, req.Redelivery, fmtTime(req.Now))
}

// mustReplay requires req to succeed.
func mustReplay(t *testing.T, s opsStore, req ops.ReplayRequest) ops.ReplayResult {
	t.Helper()
	res, err := s.Replay(t.Context(), req)
	if err != nil {
		t.Fatalf("Replay(%s): %v; want no error", fmtReplay(req), err)
	}
	return res
}

// checkAudit requires the audit trail of k to be want, oldest first.
func checkAudit(t *testing.T, s opsStore, k webhooks.InboxKey, want []ops.Audit, when string) {
	t.Helper()
	got := mustDetail(t, s, k).Audit
	ok := len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		g, w := got[i], want[i]
		ok = g.Action == w.Action && g.At.Equal(w.At) && g.Actor == w.Actor && g.Reason == w.Reason && g.Ticket == w.Ticket
	}
	if !ok {
		t.Errorf("Get(%s).Audit %s:%s\nwant:%s", fmtKey(k), when, fmtAudits(got), fmtAudits(want))
	}
}

func fmtAudits(as []ops.Audit) string {
	return fmtList(as, func(a ops.Audit) string {
		return fmt.Sprintf("{%s at %s by %q: %q, ticket %q}", a.Action, fmtTime(a.At), a.Actor, a.Reason, a.Ticket)
	})
}

// replayAudit is the audit entry replayOf and bulkReplay record at now.
func replayAudit(now time.Time) ops.Audit {
	return ops.Audit{Action: ops.ActionReplay, At: now, Actor: actor, Reason: reason, Ticket: ticket}
}

// deadAfterTwoAttempts enqueues env, fails it once with a retry and then
// dead-letters it at base+11s, and returns the stored item (see stored).
func deadAfterTwoAttempts(t *testing.T, s webhooks.InboxStore, env webhooks.Envelope) webhooks.Item {
	t.Helper()
	mustEnqueue(t, s, env)
	l := mustAcquireKey(t, s, env.Key, base, leaseFor)
	mustSettle(t, s, retry(l, transient, at(10*time.Second), at(time.Second)))
	l = mustAcquireKey(t, s, env.Key, at(10*time.Second), leaseFor)
	mustSettle(t, s, deadLetter(l, permanent, at(11*time.Second)))
	it := stored(t, s, env.Key)
	if _, ok := s.(ops.Store); ok && (it.State != webhooks.StateDead || it.Attempts != 2) {
		t.Fatalf("setup: item is %s after %d attempts; want %s after 2", it.State, it.Attempts, webhooks.StateDead)
	}
	return it
}

// replayedItem returns the dead item as a replay at now, due at due,
// leaves it: pending, its payload and last error as they were.
func replayedItem(dead webhooks.Item, now, due time.Time, resetAttempts bool) webhooks.Item {
	want := dead
	want.State = webhooks.StatePending
	want.NextAttemptAt = due
	want.DeadAt = time.Time{}
	want.UpdatedAt = now
	if resetAttempts {
		want.Attempts = 0
	}
	return want
}

// wantReplayed requires res to list exactly want, in order.
func wantReplayed(t *testing.T, call string, res ops.ReplayResult, want []ops.Replayed) {
	t.Helper()
	ok := len(res.Items) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = res.Items[i].Key == want[i].Key && res.Items[i].DueAt.Equal(want[i].DueAt)
	}
	if !ok {
		t.Errorf("%s reported:%s\nwant:%s", call, fmtReplayed(res.Items), fmtReplayed(want))
	}
}

func fmtReplayed(rs []ops.Replayed) string {
	return fmtList(rs, func(r ops.Replayed) string { return fmtKey(r.Key) + " due " + fmtTime(r.DueAt) })
}

// testReplayOne: one item replayed by its key, whether dead, closed (an
// operator's closing undone) or succeeded (run again), becomes pending,
// due at Now, with a fresh attempt budget unless KeepAttempts, its
// payload and last error kept and the time of the state it left cleared;
// the audit trail records the replay, the history keeps the earlier
// attempts and numbers the next after them.
func testReplayOne(t *testing.T, s opsStore, from webhooks.State, keepAttempts bool) {
	env := envelope(key("evt_1"), "p", base)
	history := []ops.Attempt{
		attemptOf(1, webhooks.AttemptRetried, base, at(time.Second), transient),
		attemptOf(2, webhooks.AttemptDeadLettered, at(10*time.Second), at(11*time.Second), permanent),
	}
	var audit []ops.Audit
	switch from {
	case webhooks.StateSucceeded:
		mustEnqueue(t, s, env)
		l := mustAcquireKey(t, s, env.Key, base, leaseFor)
		mustSettle(t, s, succeed(l, at(time.Second)))
		history = []ops.Attempt{attemptOf(1, webhooks.AttemptSucceeded, base, at(time.Second), webhooks.Failure{})}
	case webhooks.StateClosed:
		deadAfterTwoAttempts(t, s, env)
		mustClose(t, s, closeOf(env.Key, at(time.Minute)))
		audit = append(audit, closeAudit(at(time.Minute)))
	default:
		deadAfterTwoAttempts(t, s, env)
	}
	before := mustGet(t, s, env.Key)
	now := at(time.Hour)
	req := replayOf(env.Key, now)
	req.KeepAttempts = keepAttempts
	res := mustReplay(t, s, req)
	wantReplayed(t, "Replay of one "+string(from)+" item", res, []ops.Replayed{{Key: env.Key, DueAt: now}})
	if res.Done != 1 || res.Total != 1 || res.Next != "" {
		t.Errorf("Replay of one %s item: Done %d, Total %d, Next %q; want 1, 1 and none", from, res.Done, res.Total, res.Next)
	}

	want := replayedItem(before, now, now, !keepAttempts)
	want.ClosedAt, want.CompletedAt = time.Time{}, time.Time{}
	checkStored(t, s, want, fmt.Sprintf("after Replay(KeepAttempts %t) of a %s item (payload and LastError kept)", keepAttempts, from))
	checkAudit(t, s, env.Key, append(audit, replayAudit(now)), "after Replay")
	wantList(t, s, ops.Query{}, nil)
	wantList(t, s, ops.Query{State: webhooks.StateClosed}, nil)

	wantNothingDue(t, s, now.Add(-time.Microsecond), "a replayed item is due at the replay's Now")
	l := mustAcquireKey(t, s, env.Key, now, leaseFor)
	if l.Attempt != want.Attempts+1 || l.Reclaimed {
		t.Errorf("Acquire after Replay(KeepAttempts %t): Lease.Attempt %d, Reclaimed %t; want %d, false", keepAttempts, l.Attempt, l.Reclaimed, want.Attempts+1)
	}
	mustSettle(t, s, succeed(l, now.Add(time.Second)))
	checkHistory(t, s, env.Key, append(history, attemptOf(len(history)+1, webhooks.AttemptSucceeded, now, now.Add(time.Second), webhooks.Failure{})),
		"after the replayed item succeeded (the earlier attempts kept, numbers unique)")
}

func testReplayOneAsRedelivery(t *testing.T, s opsStore) {
	env := envelope(key("evt_1"), "p", base)
	makeDead(t, s, env, base)
	req := replayOf(env.Key, at(time.Hour))
	req.Redelivery = true
	req.Actor, req.Reason, req.Ticket = "provider", "resent from the provider's dashboard", ""
	mustReplay(t, s, req)
	checkAudit(t, s, env.Key, []ops.Audit{{Action: ops.ActionRedelivery, At: at(time.Hour), Actor: "provider", Reason: req.Reason}},
		"after Replay(Redelivery)")
}

// testReplayOneDryRun: a dry run reports what a replay would do and
// changes nothing; it fails as the replay would.
func testReplayOneDryRun(t *testing.T, s opsStore) {
	env := envelope(key("evt_1"), "p", base)
	makeDead(t, s, env, base)
	mustEnqueue(t, s, envelope(key("pending"), "q", at(time.Hour)))
	before := mustDetail(t, s, env.Key)
	req := replayOf(env.Key, at(time.Minute))
	req.DryRun = true
	res := mustReplay(t, s, req)
	wantReplayed(t, "Replay(DryRun) of one dead item", res, []ops.Replayed{{Key: env.Key, DueAt: at(time.Minute)}})
	checkItem(t, "Get after Replay(DryRun) (nothing may change)", mustGet(t, s, env.Key), before.Item)
	checkAudit(t, s, env.Key, nil, "after Replay(DryRun)")

	req.Key = key("pending")
	if _, err := s.Replay(t.Context(), req); !errors.Is(err, ops.ErrNotFinished) {
		t.Errorf("Replay(DryRun) of a pending item: error %v; want ops.ErrNotFinished, as the replay would fail", err)
	}
	req.Key = key("missing")
	if _, err := s.Replay(t.Context(), req); !errors.Is(err, ops.ErrNotFound) {
		t.Errorf("Replay(DryRun) of a missing item: error %v; want ops.ErrNotFound, as the replay would fail", err)
	}
}

// testReplayNotFinished: an item that is pending or leased is not
// replayed: it runs, or is about to, already.
func testReplayNotFinished(t *testing.T, s opsStore) {
	ctx := t.Context()
	pending := envelope(key("pending"), "p", at(time.Hour)) // never due in this case
	leased := envelope(key("leased"), "l", base)
	mustEnqueue(t, s, pending)
	mustEnqueue(t, s, leased)
	mustAcquireKey(t, s, leased.Key, base, leaseFor)

	for _, k := range []webhooks.InboxKey{pending.Key, leased.Key} {
		before := mustDetail(t, s, k)
		for _, keep := range []bool{false, true} {
			for _, dry := range []bool{false, true} {
				req := replayOf(k, at(4*time.Second))
				req.KeepAttempts, req.DryRun = keep, dry
				res, err := s.Replay(ctx, req)
				if !errors.Is(err, ops.ErrNotFinished) || len(res.Items) != 0 {
					t.Errorf("Replay(%s) of a %s item = %d items, error %v; want none and an error wrapping ops.ErrNotFinished", fmtReplay(req), before.State, len(res.Items), err)
				}
			}
		}
		checkStored(t, s, before.Item, "after Replay of an item that has not finished (nothing may change)")
		checkAudit(t, s, k, before.Audit, "after Replay of an item that has not finished (nothing recorded)")
	}
}

func testReplayMissing(t *testing.T, s opsStore) {
	mustEnqueue(t, s, envelope(key("evt_1"), "p", base))
	for _, k := range []webhooks.InboxKey{key("evt_2"), {Provider: "acme", Tenant: "", EventID: "evt_1"}, {}} {
		if _, err := s.Replay(t.Context(), replayOf(k, base)); !errors.Is(err, ops.ErrNotFound) {
			t.Errorf("Replay of the missing key %s: error %v; want an error wrapping ops.ErrNotFound", fmtKey(k), err)
		}
	}
}

// testReplayInvalidRequest: a replay without an actor or a reason, or
// with a query that cannot select dead letters, is refused with
// ErrInvalidRequest and changes nothing.
func testReplayInvalidRequest(t *testing.T, s opsStore) {
	env := envelope(key("evt_1"), "p", base)
	makeDead(t, s, env, base)
	before := mustDetail(t, s, env.Key)
	now := at(time.Hour)
	var reqs []ops.ReplayRequest
	for _, bulk := range []bool{false, true} {
		r := replayOf(env.Key, now)
		if bulk {
			r = bulkReplay(ops.Query{Limit: 10}, now)
		}
		for _, broken := range []func(*ops.ReplayRequest){
			func(r *ops.ReplayRequest) { r.Actor = "" },
			func(r *ops.ReplayRequest) { r.Reason = "" },
			func(r *ops.ReplayRequest) { r.Actor, r.Reason = " ", "\t" },
			func(r *ops.ReplayRequest) { r.Actor, r.Reason, r.DryRun = "", "", true },
			func(r *ops.ReplayRequest) { r.Spread = -time.Second },
			func(r *ops.ReplayRequest) { r.Spread = ops.MaxReplaySpread + time.Microsecond },
		} {
			c := r
			broken(&c)
			reqs = append(reqs, c)
		}
	}
	for _, q := range []ops.Query{{Limit: 0}, {Limit: -1}, {Limit: ops.MaxReplayLimit + 1}, {State: webhooks.StatePending, Limit: 10}, {State: webhooks.StateLeased, Limit: 10}} {
		reqs = append(reqs, bulkReplay(q, now))
	}
	both := bulkReplay(ops.Query{Limit: 10}, now)
	both.Key = env.Key
	reqs = append(reqs, both)
	for _, req := range reqs {
		res, err := s.Replay(t.Context(), req)
		if !errors.Is(err, ops.ErrInvalidRequest) || len(res.Items) != 0 {
			t.Errorf("Replay(%s) = %d items, error %v; want none and an error wrapping ops.ErrInvalidRequest", fmtReplay(req), len(res.Items), err)
		}
	}
	checkStored(t, s, before.Item, "after invalid replays (nothing may change)")
	checkAudit(t, s, env.Key, nil, "after invalid replays")
}

func testReplayConcurrent(t *testing.T, s opsStore) {
	const n = 10
	env := envelope(key("evt_1"), "p", base)
	deadAfterTwoAttempts(t, s, env)
	replayed := make([]bool, n)
	runConcurrently(n, func(i int) {
		req := replayOf(env.Key, at(time.Hour))
		req.KeepAttempts = i%2 == 0
		_, err := s.Replay(t.Context(), req)
		if err != nil && !errors.Is(err, ops.ErrNotFinished) {
			t.Errorf("concurrent Replay: %v; want no error, or one wrapping ops.ErrNotFinished once another call replayed the item", err)
		}
		replayed[i] = err == nil
	})
	if c := countOutcomes(replayed)[true]; c != 1 {
		t.Errorf("%d concurrent Replay of one item: %d succeeded; want exactly 1 (the others find it pending)", n, c)
	}
	if got := mustGet(t, s, env.Key); got.State != webhooks.StatePending {
		t.Errorf("after concurrent Replay: State %s; want %s", got.State, webhooks.StatePending)
	}
	checkAudit(t, s, env.Key, []ops.Audit{replayAudit(at(time.Hour))}, "after concurrent Replay (one recorded)")
}
