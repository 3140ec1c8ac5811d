package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

var closeCases = []inboxCase{
	opsCase("Close", testClose),
	opsCase("CloseNotDead", testCloseNotDead),
	opsCase("CloseInvalidRequest", testCloseInvalidRequest),
	opsCase("CloseRacesReplay", testCloseRacesReplay),
	opsCase("ClosedStaysClosedOnDelivery", testClosedStaysClosedOnDelivery),
	opsCase("ListClosed", testListClosed),
}

// mustClose requires req to succeed.
func mustClose(t *testing.T, s opsStore, req ops.CloseRequest) {
	t.Helper()
	if err := s.CloseDeadLetter(t.Context(), req); err != nil {
		t.Fatalf("CloseDeadLetter(%s): %v; want no error", fmtKey(req.Key), err)
	}
}

// closeAudit is the audit entry closeOf records at now.
func closeAudit(now time.Time) ops.Audit {
	req := closeOf(webhooks.InboxKey{}, now)
	return ops.Audit{Action: ops.ActionClose, At: now, Actor: req.Actor, Reason: req.Reason, Ticket: req.Ticket}
}

func testClose(t *testing.T, s opsStore) {
	env := envelope(key("evt_1"), "p", base)
	dead := deadAfterTwoAttempts(t, s, env)
	now := at(time.Hour)
	mustClose(t, s, closeOf(env.Key, now))

	want := dead
	want.State = webhooks.StateClosed
	want.ClosedAt = now
	want.UpdatedAt = now
	checkStored(t, s, want, "after Close (DeadAt, LastError and payload kept)")
	checkAudit(t, s, env.Key, []ops.Audit{closeAudit(now)}, "after Close")
	wantList(t, s, ops.Query{}, nil)
	wantList(t, s, ops.Query{State: webhooks.StateClosed}, []webhooks.InboxKey{env.Key})
	wantNothingDue(t, s, at(24*time.Hour), "a closed item is never due")
	if len(mustDetail(t, s, env.Key).History) != 2 {
		t.Errorf("Get after Close: the history does not hold the two attempts; want it kept")
	}
}

func testCloseNotDead(t *testing.T, s opsStore) {
	pending := envelope(key("pending"), "p", at(time.Hour))
	leased := envelope(key("leased"), "l", base)
	succeeded := envelope(key("succeeded"), "s", at(time.Second))
	closed := envelope(key("closed"), "c", at(2*time.Second))
	mustEnqueue(t, s, pending)
	mustEnqueue(t, s, leased)
	mustAcquireKey(t, s, leased.Key, base, leaseFor)
	mustEnqueue(t, s, succeeded)
	l := mustAcquireKey(t, s, succeeded.Key, at(time.Second), leaseFor)
	mustSettle(t, s, succeed(l, at(2*time.Second)))
	makeDead(t, s, closed, at(2*time.Second))
	mustClose(t, s, closeOf(closed.Key, at(3*time.Second)))

	for _, k := range []webhooks.InboxKey{pending.Key, leased.Key, succeeded.Key, closed.Key} {
		before := mustDetail(t, s, k)
		if err := s.CloseDeadLetter(t.Context(), closeOf(k, at(4*time.Second))); !errors.Is(err, ops.ErrNotDead) {
			t.Errorf("Close of a %s item: error %v; want an error wrapping ops.ErrNotDead", before.State, err)
		}
		checkStored(t, s, before.Item, "after Close of an item that is not dead (nothing may change)")
		checkAudit(t, s, k, before.Audit, "after Close of an item that is not dead (nothing recorded)")
	}
	if err := s.CloseDeadLetter(t.Context(), closeOf(key("missing"), at(4*time.Second))); !errors.Is(err, ops.ErrNotFound) {
		t.Errorf("Close of a missing item: error %v; want an error wrapping ops.ErrNotFound", err)
	}
}

func testCloseInvalidRequest(t *testing.T, s opsStore) {
	env := envelope(key("evt_1"), "p", base)
	makeDead(t, s, env, base)
	before := mustGet(t, s, env.Key)
	for _, broken := range []func(*ops.CloseRequest){
		func(r *ops.CloseRequest) { r.Actor = "" },
		func(r *ops.CloseRequest) { r.Reason = "" },
		func(r *ops.CloseRequest) { r.Actor, r.Reason = " ", " " },
	} {
		req := closeOf(env.Key, at(time.Hour))
		broken(&req)
		if err := s.CloseDeadLetter(t.Context(), req); !errors.Is(err, ops.ErrInvalidRequest) {
			t.Errorf("CloseDeadLetter(Actor %q, Reason %q): error %v; want an error wrapping ops.ErrInvalidRequest", req.Actor, req.Reason, err)
		}
	}
	checkStored(t, s, before, "after invalid closings (nothing may change)")
	checkAudit(t, s, env.Key, nil, "after invalid closings")
}

// testCloseRacesReplay: a closing and a replay of one dead letter at once:
// either the replay comes first, and the closing finds the item no longer
// dead, or the closing does, and the replay undoes it; the item ends
// pending either way, with what happened in its audit trail.
func testCloseRacesReplay(t *testing.T, s opsStore) {
	const rounds = 10
	for i := range rounds {
		env := envelope(key(fmt.Sprintf("evt_%02d", i)), "p", at(time.Duration(i)*time.Second))
		makeDead(t, s, env, env.ReceivedAt)
		errs := make([]error, 2)
		runConcurrently(2, func(w int) {
			if w == 0 {
				errs[0] = s.CloseDeadLetter(t.Context(), closeOf(env.Key, at(time.Hour)))
			} else {
				_, errs[1] = s.Replay(t.Context(), replayOf(env.Key, at(time.Hour)))
			}
		})
		it := mustDetail(t, s, env.Key)
		var actions []string
		for _, a := range it.Audit {
			actions = append(actions, a.Action)
		}
		switch {
		case errs[1] != nil:
			t.Errorf("round %d: Replay failed (%v); want it to succeed whether the item was dead or closed", i, errs[1])
		case errs[0] == nil:
			if it.State != webhooks.StatePending || fmt.Sprint(actions) != fmt.Sprint([]string{ops.ActionClose, ops.ActionReplay}) {
				t.Errorf("round %d: Close came first: State %s, audit %v; want %s, [close replay]", i, it.State, actions, webhooks.StatePending)
			}
		case !errors.Is(errs[0], ops.ErrNotDead) || it.State != webhooks.StatePending || fmt.Sprint(actions) != fmt.Sprint([]string{ops.ActionReplay}):
			t.Errorf("round %d: Close error %v, State %s, audit %v; want ops.ErrNotDead (the replay came first), %s, [replay]", i, errs[0], it.State, actions, webhooks.StatePending)
		}
	}
}

// testClosedStaysClosedOnDelivery: a delivery of a closed item's event,
// even one asking to replay dead letters, leaves it closed.
func testClosedStaysClosedOnDelivery(t *testing.T, s opsStore) {
	env := envelope(key("evt_1"), "p", base)
	makeDead(t, s, env, base)
	mustClose(t, s, closeOf(env.Key, at(time.Minute)))
	for _, replayIfDead := range []bool{false, true} {
		again := env
		again.ReceivedAt = at(time.Hour)
		again.ReplayIfDead = replayIfDead
		res, err := s.Enqueue(t.Context(), again)
		want := webhooks.EnqueueResult{Outcome: webhooks.EnqueueDuplicate, State: webhooks.StateClosed}
		if err != nil || res != want {
			t.Errorf("Enqueue(ReplayIfDead %t) of a closed item's event = %+v, %v; want %+v", replayIfDead, res, err, want)
		}
	}
	conflict := envelope(env.Key, "other", at(2*time.Hour))
	conflict.ReplayIfDead = true
	res, err := s.Enqueue(t.Context(), conflict)
	if want := (webhooks.EnqueueResult{Outcome: webhooks.EnqueueConflict, State: webhooks.StateClosed}); err != nil || res != want {
		t.Errorf("Enqueue of a conflicting delivery of a closed item = %+v, %v; want %+v", res, err, want)
	}
	d := mustDetail(t, s, env.Key)
	if d.State != webhooks.StateClosed || d.DuplicateCount != 2 || len(d.Audit) != 1 || d.Conflicts != 1 {
		t.Errorf("after deliveries of a closed item: State %s, DuplicateCount %d, %d audit entries, %d conflicts; want %s, 2, 1 (the closing), 1",
			d.State, d.DuplicateCount, len(d.Audit), d.Conflicts, webhooks.StateClosed)
	}
}

// testListClosed: closed items are listed by when they were closed, newest
// first, with the same filters, paging and cursors as dead letters.
func testListClosed(t *testing.T, s opsStore) {
	specs := pagingSpecs()
	makeDeadLetters(t, s, specs)
	// Close them in the reverse of their dead order, in four groups of
	// equal times, so the closed order is not the dead order.
	var closedSpecs []deadSpec
	for i, k := range newestFirst(specs, ops.Query{}) {
		c := deadSpec{key: k, eventType: "invoice.paid", deadAt: at(time.Hour + time.Duration(i/4)*time.Minute)}
		mustClose(t, s, closeOf(k, c.deadAt))
		closedSpecs = append(closedSpecs, c)
	}
	closedQ := func(q ops.Query) ops.Query { q.State = webhooks.StateClosed; return q }
	wantList(t, s, ops.Query{}, nil)
	wantList(t, s, closedQ(ops.Query{}), newestFirst(closedSpecs, ops.Query{}))
	for _, q := range []ops.Query{
		{Provider: "beta"},
		{Tenant: tenant("")},
		{From: at(time.Hour + time.Minute), To: at(time.Hour + 3*time.Minute)},
	} {
		wantList(t, s, closedQ(q), newestFirst(closedSpecs, q))
	}
	for _, limit := range []int{1, 4, 5, 13} {
		walkPages(t, s, closedQ(ops.Query{Limit: limit}), newestFirst(closedSpecs, ops.Query{}))
	}
	first, err := s.List(t.Context(), closedQ(ops.Query{Limit: 2}))
	if err != nil || first.Next == "" {
		t.Fatalf("List(closed, Limit 2) = %v, Next %q; want a Next cursor", err, first.Next)
	}
	if _, err := s.List(t.Context(), ops.Query{After: first.Next, Limit: 2}); !errors.Is(err, ops.ErrInvalidCursor) {
		t.Errorf("List(dead letters) with a cursor of closed items: error %v; want ops.ErrInvalidCursor", err)
	}
}
