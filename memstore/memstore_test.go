package memstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
	"github.com/hookinbox/webhooks/storetest"
)

func TestInbox(t *testing.T) {
	storetest.RunInbox(t, func(*testing.T) webhooks.InboxStore { return NewInbox() }, storetest.Features{})
}

func TestReplay(t *testing.T) {
	storetest.RunReplay(t, func(*testing.T) webhooks.ReplayStore { return NewReplay() })
}

var base = time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)

func TestReplayEvictsExpiredKeys(t *testing.T) {
	t.Parallel()
	r := NewReplay()
	ctx := t.Context()
	digest := sha256.Sum256([]byte("p"))
	const expired = 3*evictPerRegister + 10
	for i := range expired {
		k := webhooks.ReplayRegistration{Provider: "acme", Key: fmt.Sprint("old-", i)}
		if _, err := r.Register(ctx, replayReg(k, digest, base, base.Add(time.Second))); err != nil {
			t.Fatalf("Register: %v", err)
		}
	}
	if got := r.Len(); got != expired {
		t.Fatalf("Len() = %d after %d registrations; want %d", got, expired, expired)
	}

	// Each later Register evicts up to evictPerRegister expired keys and
	// adds its own, so after four calls all expired keys are gone.
	later := base.Add(time.Minute)
	for i := range 4 {
		k := webhooks.ReplayRegistration{Provider: "acme", Key: fmt.Sprint("new-", i)}
		if _, err := r.Register(ctx, replayReg(k, digest, later, later.Add(time.Hour))); err != nil {
			t.Fatalf("Register: %v", err)
		}
		want := max(expired-(i+1)*evictPerRegister, 0) + i + 1
		if got := r.Len(); got != want {
			t.Errorf("Len() after %d later Register calls = %d; want %d (evicting %d expired keys per call)", i+1, got, want, evictPerRegister)
		}
	}
	if got := len(r.expiries); got != 4 {
		t.Errorf("expiry queue holds %d entries after eviction; want 4 (one per live key)", got)
	}
}

func TestReplayEvictionKeepsReregisteredKey(t *testing.T) {
	t.Parallel()
	r := NewReplay()
	ctx := t.Context()
	k := webhooks.ReplayRegistration{Provider: "acme", Key: "k"}
	a, b := sha256.Sum256([]byte("a")), sha256.Sum256([]byte("b"))
	register := func(d [sha256.Size]byte, now, exp time.Time, want webhooks.ReplayOutcome) {
		t.Helper()
		got, err := r.Register(ctx, replayReg(k, d, now, exp))
		if err != nil || got != want {
			t.Fatalf("Register(now=%v) = (%v, %v); want (%v, nil)", now, got, err, want)
		}
	}
	register(a, base, base.Add(time.Second), webhooks.ReplayNew)
	// Registered again after expiry: the stale queue entry for the first
	// registration must not evict the second.
	register(b, base.Add(2*time.Second), base.Add(time.Hour), webhooks.ReplayNew)
	register(b, base.Add(3*time.Second), base.Add(time.Hour), webhooks.ReplaySeen)
	register(a, base.Add(4*time.Second), base.Add(time.Hour), webhooks.ReplayConflict)
	if got := r.Len(); got != 1 {
		t.Errorf("Len() = %d; want 1", got)
	}
}

func TestInboxNilArguments(t *testing.T) {
	t.Parallel()
	s := NewInbox()
	ctx := t.Context()
	var nilCtx context.Context
	if _, err := s.Enqueue(nilCtx, webhooks.Envelope{}); err == nil {
		t.Error("Enqueue(nil ctx) = nil error; want an error")
	}
	if _, err := s.Acquire(nilCtx, webhooks.AcquireRequest{Now: base, LeaseDuration: time.Minute, Max: 1}); err == nil {
		t.Error("Acquire(nil ctx) = nil error; want an error")
	}
	for _, o := range []webhooks.AttemptOutcome{webhooks.AttemptSucceeded, webhooks.AttemptRetried, webhooks.AttemptDeadLettered, webhooks.AttemptAbandoned} {
		if err := s.Settle(ctx, webhooks.Settlement{Outcome: o, Now: base}); err == nil {
			t.Errorf("Settle(%s, nil Lease) = nil error; want an error", o)
		}
	}
	if err := s.ExtendLease(ctx, webhooks.ExtendRequest{Now: base, Duration: time.Minute}); err == nil {
		t.Error("ExtendLease(nil Lease) = nil error; want an error")
	}
}

func BenchmarkEnqueue(b *testing.B) {
	s := NewInbox()
	ctx := b.Context()
	env := webhooks.Envelope{
		EventType: "invoice.paid",
		Payload:   []byte(`{"id":"evt","amount":100}`),
		Headers:   map[string][]string{"Content-Type": {"application/json"}},
	}
	env.PayloadSHA256 = sha256.Sum256(env.Payload)
	i := 0
	for b.Loop() {
		env.Key = webhooks.InboxKey{Provider: "acme", EventID: fmt.Sprint("evt_", i)}
		env.ReceivedAt = base.Add(time.Duration(i) * time.Microsecond)
		if _, err := s.Enqueue(ctx, env); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkAcquireSettle leases and settles (succeeded) one item per
// iteration from a backlog of 10,000 due items, topping the backlog up as
// it drains.
func BenchmarkAcquireSettle(b *testing.B) { benchmarkAcquireSettle(b, webhooks.Limits{}) }

// BenchmarkAcquireSettleUnderCap is BenchmarkAcquireSettle under a cap
// (Limits.MaxRunning) that does not bind: each acquisition counts the
// handler's running leases beside the backlog of 10,000.
func BenchmarkAcquireSettleUnderCap(b *testing.B) {
	benchmarkAcquireSettle(b, webhooks.Limits{MaxRunning: 100})
}

func benchmarkAcquireSettle(b *testing.B, limits webhooks.Limits) {
	const backlog = 10_000
	s := NewInbox()
	ctx := b.Context()
	payload := []byte(`{"id":"evt","amount":100}`)
	now := base.Add(time.Hour)
	n := 0
	fill := func() {
		for range backlog {
			env := webhooks.Envelope{
				Key:           webhooks.InboxKey{Provider: "acme", EventID: fmt.Sprint("evt_", n)},
				Payload:       payload,
				PayloadSHA256: sha256.Sum256(payload),
				ReceivedAt:    base.Add(time.Duration(n%backlog) * time.Millisecond),
			}
			if _, err := s.Enqueue(ctx, env); err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	fill()
	for b.Loop() {
		leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: now, LeaseDuration: time.Minute, Max: 1, Limits: limits})
		if err != nil {
			b.Fatal(err)
		}
		if len(leases) == 0 {
			b.StopTimer()
			fill()
			b.StartTimer()
			continue
		}
		if err := s.Settle(ctx, webhooks.Settlement{Lease: leases[0], Outcome: webhooks.AttemptSucceeded, Now: now}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestInboxDeleteSucceeded: DeleteSucceeded removes exactly the succeeded
// items completed before the cutoff, keeps items in every other state, and
// Len counts what is left; a removed event's ID is new again.
func TestInboxDeleteSucceeded(t *testing.T) {
	t.Parallel()
	s := NewInbox()
	ctx := t.Context()
	k := func(id string) webhooks.InboxKey { return webhooks.InboxKey{Provider: "p", EventID: id} }
	enqueue := func(id string, at time.Time) {
		t.Helper()
		res, err := s.Enqueue(ctx, webhooks.Envelope{Key: k(id), PayloadSHA256: sha256.Sum256([]byte(id)), ReceivedAt: at})
		if err != nil || res.Outcome != webhooks.EnqueueNew {
			t.Fatalf("Enqueue(%s) = %v, %v; want new", id, res.Outcome, err)
		}
	}
	// settle leases the only due item, id, at base and settles it as
	// outcome at settledAt.
	settle := func(id string, outcome webhooks.AttemptOutcome, settledAt time.Time) {
		t.Helper()
		leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: base, LeaseDuration: time.Minute, Max: 1})
		if err != nil || len(leases) != 1 || leases[0].Key() != k(id) {
			t.Fatalf("Acquire for %s = %v, %v; want a lease on it", id, leases, err)
		}
		st := webhooks.Settlement{Lease: leases[0], Outcome: outcome, Now: settledAt}
		if err := s.Settle(ctx, st); err != nil {
			t.Fatalf("Settle(%s, %s): %v", id, outcome, err)
		}
	}
	cutoff := base.Add(2 * time.Hour)
	for _, c := range []struct {
		id        string
		outcome   webhooks.AttemptOutcome
		settledAt time.Time
	}{
		{"old", webhooks.AttemptSucceeded, base.Add(time.Hour)},
		{"older", webhooks.AttemptSucceeded, base.Add(time.Minute)},
		{"at-cutoff", webhooks.AttemptSucceeded, cutoff},
		{"new", webhooks.AttemptSucceeded, base.Add(3 * time.Hour)},
		{"dead", webhooks.AttemptDeadLettered, base.Add(time.Minute)},
	} {
		enqueue(c.id, base)
		settle(c.id, c.outcome, c.settledAt)
	}
	enqueue("leased", base)
	if _, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: base, LeaseDuration: time.Hour, Max: 1}); err != nil {
		t.Fatal(err)
	}
	enqueue("pending", base.Add(time.Hour))
	if got := s.Len(); got != 7 {
		t.Fatalf("Len() = %d with 7 items stored; want 7", got)
	}

	if n, err := s.DeleteSucceeded(canceledContext(), cutoff); err == nil || n != 0 {
		t.Errorf("DeleteSucceeded with a canceled context = %d, %v; want 0 and an error", n, err)
	}
	if got := s.Len(); got != 7 {
		t.Errorf("Len() = %d after DeleteSucceeded with a canceled context; want 7 (nothing removed)", got)
	}

	n, err := s.DeleteSucceeded(ctx, cutoff)
	if err != nil || n != 2 {
		t.Fatalf("DeleteSucceeded(cutoff) = %d, %v; want 2 (the succeeded items completed before the cutoff)", n, err)
	}
	if got := s.Len(); got != 5 {
		t.Errorf("Len() = %d after deleting 2 of 7 items; want 5", got)
	}
	for _, id := range []string{"old", "older"} {
		if _, err := s.Get(ctx, k(id)); !errors.Is(err, ops.ErrNotFound) {
			t.Errorf("Get(%s) after DeleteSucceeded: error %v; want ops.ErrNotFound", id, err)
		}
	}
	for id, state := range map[string]webhooks.State{
		"at-cutoff": webhooks.StateSucceeded, // completed at, not before, the cutoff
		"new":       webhooks.StateSucceeded,
		"dead":      webhooks.StateDead,
		"leased":    webhooks.StateLeased,
		"pending":   webhooks.StatePending,
	} {
		it, err := s.Get(ctx, k(id))
		if err != nil || it.State != state {
			t.Errorf("Get(%s) after DeleteSucceeded = %s, %v; want it kept, %s", id, it.State, err, state)
		}
	}
	page, err := s.List(ctx, ops.Query{Limit: 10})
	if err != nil || len(page.Items) != 1 || page.Items[0].Key != k("dead") {
		t.Errorf("List after DeleteSucceeded = %d items, %v; want the dead item", len(page.Items), err)
	}
	if n, err := s.DeleteSucceeded(ctx, cutoff); err != nil || n != 0 {
		t.Errorf("DeleteSucceeded(cutoff) again = %d, %v; want 0, nil", n, err)
	}

	// The removed event's ID is forgotten: a delivery of it is new again.
	enqueue("old", base.Add(4*time.Hour))
	if got := s.Len(); got != 6 {
		t.Errorf("Len() = %d after enqueueing a removed ID again; want 6", got)
	}
}

func canceledContext() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// TestInboxDeleteClosed: DeleteClosed removes exactly the items closed
// before the cutoff, with their history, and nothing in another state.
func TestInboxDeleteClosed(t *testing.T) {
	t.Parallel()
	s := NewInbox()
	ctx := t.Context()
	k := func(id string) webhooks.InboxKey { return webhooks.InboxKey{Provider: "p", EventID: id} }
	// dead dead-letters id at base.
	dead := func(id string) {
		t.Helper()
		if _, err := s.Enqueue(ctx, webhooks.Envelope{Key: k(id), PayloadSHA256: sha256.Sum256([]byte(id)), ReceivedAt: base}); err != nil {
			t.Fatal(err)
		}
		leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: base, LeaseDuration: time.Minute, Max: 1})
		if err != nil || len(leases) != 1 {
			t.Fatalf("Acquire for %s = %v, %v; want a lease", id, leases, err)
		}
		if err := s.Settle(ctx, webhooks.Settlement{Lease: leases[0], Outcome: webhooks.AttemptDeadLettered, Failure: webhooks.Failure{Class: webhooks.FailurePermanent}, Now: base}); err != nil {
			t.Fatal(err)
		}
	}
	cutoff := base.Add(2 * time.Hour)
	for id, closedAt := range map[string]time.Time{"old": base.Add(time.Hour), "at-cutoff": cutoff, "new": base.Add(3 * time.Hour)} {
		dead(id)
		if err := s.CloseDeadLetter(ctx, ops.CloseRequest{Key: k(id), Actor: "a", Reason: "r", Now: closedAt}); err != nil {
			t.Fatal(err)
		}
	}
	dead("still-dead")

	if n, err := s.DeleteClosed(canceledContext(), cutoff); err == nil || n != 0 {
		t.Errorf("DeleteClosed with a canceled context = %d, %v; want 0 and an error", n, err)
	}
	if n, err := s.DeleteClosed(ctx, cutoff); err != nil || n != 1 {
		t.Fatalf("DeleteClosed(cutoff) = %d, %v; want 1 (the item closed before the cutoff)", n, err)
	}
	if _, err := s.Get(ctx, k("old")); !errors.Is(err, ops.ErrNotFound) {
		t.Errorf("Get(old) after DeleteClosed: %v; want ops.ErrNotFound", err)
	}
	for id, state := range map[string]webhooks.State{"at-cutoff": webhooks.StateClosed, "new": webhooks.StateClosed, "still-dead": webhooks.StateDead} {
		if d, err := s.Get(ctx, k(id)); err != nil || d.State != state {
			t.Errorf("Get(%s) after DeleteClosed = %s, %v; want it kept, %s", id, d.State, err, state)
		}
	}
	page, err := s.List(ctx, ops.Query{State: webhooks.StateClosed, Limit: 10})
	if err != nil || len(page.Items) != 2 {
		t.Errorf("List(closed) after DeleteClosed = %d items, %v; want the 2 kept", len(page.Items), err)
	}
}

// replayReg is k with a digest and times.
func replayReg(k webhooks.ReplayRegistration, digest [32]byte, now, expiresAt time.Time) webhooks.ReplayRegistration {
	k.PayloadSHA256, k.Now, k.ExpiresAt = digest, now, expiresAt
	return k
}

// TestInboxRetentionForgetsIdleKeys: an ordering key's applied version
// (the stale guard) outlives its jobs until DeleteSucceeded runs with a
// cutoff after the key last changed. Mutation: forget keys whatever their
// age (or never).
func TestInboxRetentionForgetsIdleKeys(t *testing.T) {
	t.Parallel()
	s := NewInbox()
	ctx := t.Context()
	run := func(id string, version int64, now time.Time) *webhooks.Lease {
		t.Helper()
		env := webhooks.Envelope{
			Key: webhooks.InboxKey{Provider: "acme", EventID: id}, EventType: "invoice.paid", Payload: []byte(id),
			PayloadSHA256: sha256.Sum256([]byte(id)), ReceivedAt: now,
			Jobs: []webhooks.Job{{Handler: "ledger", Ordered: true}}, Ordering: webhooks.Ordering{Key: "cus_1", Version: version},
		}
		if _, err := s.Enqueue(ctx, env); err != nil {
			t.Fatal(err)
		}
		leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: now, LeaseDuration: time.Minute, Max: 1, Handler: "ledger"})
		if err != nil || len(leases) != 1 {
			t.Fatalf("Acquire: %d leases, %v", len(leases), err)
		}
		if err := s.Settle(ctx, webhooks.Settlement{Lease: leases[0], Outcome: webhooks.AttemptSucceeded, Now: now}); err != nil {
			t.Fatal(err)
		}
		return leases[0]
	}
	run("a1", 5, base)
	if n, err := s.DeleteSucceeded(ctx, base); n != 0 || err != nil {
		t.Fatalf("DeleteSucceeded(base) = %d, %v; want 0", n, err)
	}
	if l := run("a2", 1, base.Add(time.Second)); l.Applied != 5 {
		t.Errorf("Applied after a1 (version 5) succeeded = %d; want 5", l.Applied)
	}
	if n, err := s.DeleteSucceeded(ctx, base.Add(time.Second)); n != 1 || err != nil {
		t.Fatalf("DeleteSucceeded(base+1s) = %d, %v; want 1 (a1)", n, err)
	}
	if l := run("a3", 1, base.Add(2*time.Second)); l.Applied != 5 {
		t.Errorf("Applied after a retention that kept the key (changed at base+1s) = %d; want 5", l.Applied)
	}
	if n, err := s.DeleteSucceeded(ctx, base.Add(time.Hour)); n != 2 || err != nil {
		t.Fatalf("DeleteSucceeded(base+1h) = %d, %v; want 2", n, err)
	}
	if l := run("a4", 1, base.Add(2*time.Hour)); l.Applied != 0 {
		t.Errorf("Applied after the key was idle past the retention = %d; want 0 (forgotten)", l.Applied)
	}
}
