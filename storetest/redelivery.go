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

// testRedeliveryReplaysDeadLetter: a duplicate of a dead letter replays it
// only when the envelope asks to: pending, due at the envelope's
// ReceivedAt, recorded as the provider's redelivery.
func testRedeliveryReplaysDeadLetter(t *testing.T, s Store) {
	env := envelope(key("evt_1"), "p", base)
	dead := deadAfterTwoAttempts(t, s, env)

	plain := env
	plain.ReceivedAt = at(time.Minute)
	res, err := s.Enqueue(t.Context(), plain)
	if want := (webhooks.EnqueueResult{Outcome: webhooks.EnqueueDuplicate, State: webhooks.StateDead}); err != nil || res != want {
		t.Errorf("Enqueue duplicate of a dead letter without ReplayIfDead = %+v, %v; want %+v", res, err, want)
	}
	dead.DuplicateCount, dead.LastSeenAt = 1, plain.ReceivedAt
	checkStored(t, s, dead, "after a duplicate without ReplayIfDead (still dead)")

	redelivery := env
	redelivery.ReceivedAt = at(time.Hour)
	redelivery.ReplayIfDead = true
	res, err = s.Enqueue(t.Context(), redelivery)
	if want := (webhooks.EnqueueResult{Outcome: webhooks.EnqueueDuplicate, State: webhooks.StatePending, Replayed: true}); err != nil || res != want {
		t.Errorf("Enqueue(ReplayIfDead) duplicate of a dead letter = %+v, %v; want %+v", res, err, want)
	}
	want := replayedItem(dead, redelivery.ReceivedAt, redelivery.ReceivedAt, false)
	want.DuplicateCount, want.LastSeenAt = 2, redelivery.ReceivedAt
	checkStored(t, s, want, "after a redelivery replayed the dead letter (due at its ReceivedAt, attempts kept)")
	d := mustDetail(t, s, env.Key)
	if len(d.Audit) != 1 || d.Audit[0].Action != ops.ActionRedelivery || d.Audit[0].Actor != "provider" ||
		d.Audit[0].Reason == "" || !d.Audit[0].At.Equal(redelivery.ReceivedAt) {
		t.Errorf("Get().Audit after a redelivery replayed the dead letter:%s\nwant one %s entry by \"provider\" at %s, with a reason",
			fmtAudits(d.Audit), ops.ActionRedelivery, fmtTime(redelivery.ReceivedAt))
	}
	l := mustAcquireKey(t, s, env.Key, redelivery.ReceivedAt, leaseFor)
	if l.Attempt != 3 {
		t.Errorf("Acquire after a redelivery replay: Lease.Attempt = %d; want 3", l.Attempt)
	}
}

// testRedeliveryOnlyOfDeadLetters: ReplayIfDead on a duplicate of an item
// in any other state, or on a conflicting delivery of a dead letter, is a
// plain duplicate (or conflict).
func testRedeliveryOnlyOfDeadLetters(t *testing.T, s Store) {
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

	for _, env := range []webhooks.Envelope{pending, leased, succeeded} {
		before := mustGet(t, s, env.Key)
		again := env
		again.ReplayIfDead = true
		again.ReceivedAt = at(3 * time.Second)
		res, err := s.Enqueue(t.Context(), again)
		if want := (webhooks.EnqueueResult{Outcome: webhooks.EnqueueDuplicate, State: before.State}); err != nil || res != want {
			t.Errorf("Enqueue(ReplayIfDead) duplicate of a %s item = %+v, %v; want %+v", before.State, res, err, want)
		}
		before.DuplicateCount, before.LastSeenAt = 1, again.ReceivedAt
		checkStored(t, s, before, "after a duplicate with ReplayIfDead of an item that is not dead")
	}
	other := conflicting(dead.Key, 1, at(3*time.Second))
	other.ReplayIfDead = true
	wantConflict(t, s, other, webhooks.StateDead)
	if d := mustDetail(t, s, dead.Key); d.State != webhooks.StateDead || len(d.Audit) != 0 {
		t.Errorf("after a conflicting delivery with ReplayIfDead of a dead letter: State %s, %d audit entries; want %s and none", d.State, len(d.Audit), webhooks.StateDead)
	}
}

func testRedeliveryConcurrent(t *testing.T, s Store) {
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
	if d := mustDetail(t, s, env.Key); d.DuplicateCount != n || len(d.Audit) != 1 {
		t.Errorf("after %d concurrent redeliveries: DuplicateCount %d, %d audit entries; want %d and 1", n, d.DuplicateCount, len(d.Audit), n)
	}
}
