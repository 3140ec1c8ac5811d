package storetest

import (
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

var redeliveryCases = []inboxCase{
	{"RedeliveryReplaysDeadLetter", testRedeliveryReplaysDeadLetter},
	{"RedeliveryOnlyOfDeadLetters", testRedeliveryOnlyOfDeadLetters},
	{"RedeliveryConcurrent", testRedeliveryConcurrent},
}

// wantEnqueue requires Enqueue(env) to answer want.
func wantEnqueue(t *testing.T, s webhooks.InboxStore, env webhooks.Envelope, want webhooks.EnqueueResult, what string) {
	t.Helper()
	if res, err := s.Enqueue(t.Context(), env); err != nil || res != want {
		t.Errorf("Enqueue(%s) %s = %+v, %v; want %+v", fmtKey(env.Key), what, res, err, want)
	}
}

// wantRedeliveryAudit requires the audit trail of k to be one redelivery at at,
// when the store is an ops.Store.
func wantRedeliveryAudit(t *testing.T, s webhooks.InboxStore, k webhooks.InboxKey, at time.Time) {
	t.Helper()
	if o, ok := s.(ops.Store); ok {
		d := mustDetail(t, o, k)
		if len(d.Audit) != 1 || d.Audit[0].Action != ops.ActionRedelivery || d.Audit[0].Actor != "provider" ||
			d.Audit[0].Reason == "" || !d.Audit[0].At.Equal(at) {
			t.Errorf("Get().Audit after a redelivery replayed the dead letter:%s\nwant one %s entry by \"provider\" at %s, with a reason",
				fmtAudits(d.Audit), ops.ActionRedelivery, fmtTime(at))
		}
	}
}

// testRedeliveryReplaysDeadLetter: a duplicate of a dead letter replays it
// only when the envelope asks to: pending, due at the envelope's
// ReceivedAt, its attempts kept, recorded as the provider's redelivery.
func testRedeliveryReplaysDeadLetter(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), "p", base)
	dead := deadAfterTwoAttempts(t, s, env)

	plain := env
	plain.ReceivedAt = at(time.Minute)
	wantEnqueue(t, s, plain, webhooks.EnqueueResult{Outcome: webhooks.EnqueueDuplicate, State: webhooks.StateDead}, "of a dead letter without ReplayIfDead")
	dead.DuplicateCount, dead.LastSeenAt = 1, plain.ReceivedAt
	checkStored(t, s, dead, "after a duplicate without ReplayIfDead (still dead)")
	wantNothingDue(t, s, at(time.Hour-time.Microsecond), "a duplicate without ReplayIfDead leaves a dead letter dead")

	redelivery := env
	redelivery.ReceivedAt = at(time.Hour)
	redelivery.ReplayIfDead = true
	wantEnqueue(t, s, redelivery, webhooks.EnqueueResult{Outcome: webhooks.EnqueueDuplicate, State: webhooks.StatePending, Replayed: true}, "(ReplayIfDead) of a dead letter")
	want := replayedItem(dead, redelivery.ReceivedAt, redelivery.ReceivedAt, false)
	want.DuplicateCount, want.LastSeenAt = 2, redelivery.ReceivedAt
	checkStored(t, s, want, "after a redelivery replayed the dead letter (due at its ReceivedAt, attempts kept)")
	wantRedeliveryAudit(t, s, env.Key, redelivery.ReceivedAt)
	if l := mustAcquireKey(t, s, env.Key, redelivery.ReceivedAt, leaseFor); l.Attempt != 3 || l.Item.DuplicateCount != 2 {
		t.Errorf("Acquire after a redelivery replay: Lease.Attempt %d, Item.DuplicateCount %d; want 3 (the attempts kept) and 2", l.Attempt, l.Item.DuplicateCount)
	}
}

// testRedeliveryOnlyOfDeadLetters: ReplayIfDead on a duplicate of an item
// in any other state, or on a conflicting delivery of a dead letter, is a
// plain duplicate (or conflict).
func testRedeliveryOnlyOfDeadLetters(t *testing.T, s webhooks.InboxStore) {
	pending := envelope(key("pending"), "p", at(time.Hour))
	leased := envelope(key("leased"), "l", base)
	succeeded := envelope(key("succeeded"), "s", at(time.Second))
	dead := envelope(key("dead"), "d", at(2*time.Second))
	mustEnqueue(t, s, pending)
	mustEnqueue(t, s, leased)
	mustAcquireKey(t, s, leased.Key, base, leaseFor)
	mustEnqueue(t, s, succeeded)
	l := mustAcquireKey(t, s, succeeded.Key, at(time.Second), leaseFor)
	mustSettle(t, s, succeed(l, at(2*time.Second)))
	makeDead(t, s, dead, at(2*time.Second))

	for _, c := range []struct {
		env   webhooks.Envelope
		state webhooks.State
	}{{pending, webhooks.StatePending}, {leased, webhooks.StateLeased}, {succeeded, webhooks.StateSucceeded}} {
		env, state := c.env, c.state
		before := stored(t, s, env.Key)
		again := env
		again.ReplayIfDead = true
		again.ReceivedAt = at(3 * time.Second)
		wantEnqueue(t, s, again, webhooks.EnqueueResult{Outcome: webhooks.EnqueueDuplicate, State: state}, "(ReplayIfDead) of a "+string(state)+" item")
		before.DuplicateCount, before.LastSeenAt = 1, again.ReceivedAt
		checkStored(t, s, before, "after a duplicate with ReplayIfDead of an item that is not dead")
	}
	other := conflicting(dead.Key, 1, at(3*time.Second))
	other.ReplayIfDead = true
	wantConflict(t, s, other, webhooks.StateDead)
	if o, ok := s.(ops.Store); ok {
		if d := mustDetail(t, o, dead.Key); d.State != webhooks.StateDead || len(d.Audit) != 0 {
			t.Errorf("after a conflicting delivery with ReplayIfDead of a dead letter: State %s, %d audit entries; want %s and none", d.State, len(d.Audit), webhooks.StateDead)
		}
	}
	wantNothingDue(t, s, at(leaseFor-time.Microsecond), "no duplicate made an item due: the pending one is due at 1h, the leased one leased for a minute")
}

func testRedeliveryConcurrent(t *testing.T, s webhooks.InboxStore) {
	const n = 10
	env := envelope(key("evt_1"), "p", base)
	makeDead(t, s, env, base)
	results := make([]webhooks.EnqueueResult, n)
	runConcurrently(n, func(i int) {
		again := env
		again.ReplayIfDead = true
		again.ReceivedAt = at(time.Minute)
		res, err := s.Enqueue(t.Context(), again)
		if err != nil {
			t.Errorf("concurrent Enqueue(ReplayIfDead): %v", err)
		}
		results[i] = res
	})
	replayed := 0
	for _, r := range results {
		if r.Outcome != webhooks.EnqueueDuplicate || r.State != webhooks.StatePending {
			t.Errorf("concurrent Enqueue(ReplayIfDead) of a dead letter = %+v; want a duplicate of a now pending item", r)
		}
		if r.Replayed {
			replayed++
		}
	}
	if replayed != 1 {
		t.Errorf("%d concurrent redeliveries of a dead letter: %d reported Replayed; want exactly 1", n, replayed)
	}
	if l := mustAcquireKey(t, s, env.Key, at(time.Minute), leaseFor); l.Item.DuplicateCount != n {
		t.Errorf("after %d concurrent redeliveries: Lease.Item.DuplicateCount %d; want %d", n, l.Item.DuplicateCount, n)
	}
	wantRedeliveryAudit(t, s, env.Key, at(time.Minute))
}
