package memstore

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/storetest"
)

func TestInbox(t *testing.T) {
	storetest.RunInbox(t, func(*testing.T) webhooks.InboxStore { return NewInbox() })
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
		k := webhooks.ReplayKey{Provider: "acme", Key: fmt.Sprint("old-", i)}
		if _, err := r.Register(ctx, k, digest, base, base.Add(time.Second)); err != nil {
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
		k := webhooks.ReplayKey{Provider: "acme", Key: fmt.Sprint("new-", i)}
		if _, err := r.Register(ctx, k, digest, later, later.Add(time.Hour)); err != nil {
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
	k := webhooks.ReplayKey{Provider: "acme", Key: "k"}
	a, b := sha256.Sum256([]byte("a")), sha256.Sum256([]byte("b"))
	register := func(d [sha256.Size]byte, now, exp time.Time, want webhooks.ReplayOutcome) {
		t.Helper()
		got, err := r.Register(ctx, k, d, now, exp)
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
	if err := s.Complete(ctx, nil, base); err == nil {
		t.Error("Complete(nil lease) = nil error; want an error")
	}
	if err := s.Fail(ctx, nil, webhooks.Failure{}, webhooks.DeadLetterDecision(), base); err == nil {
		t.Error("Fail(nil lease) = nil error; want an error")
	}
	if err := s.Abandon(ctx, nil, base); err == nil {
		t.Error("Abandon(nil lease) = nil error; want an error")
	}
	if err := s.ExtendLease(ctx, nil, base, time.Minute); err == nil {
		t.Error("ExtendLease(nil lease) = nil error; want an error")
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

// BenchmarkAcquireNextComplete leases and completes one item per iteration
// from a backlog of 10,000 due items, topping the backlog up as it drains.
func BenchmarkAcquireNextComplete(b *testing.B) {
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
		l, err := s.AcquireNext(ctx, now, time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if l == nil {
			b.StopTimer()
			fill()
			b.StartTimer()
			continue
		}
		if err := s.Complete(ctx, l, now); err != nil {
			b.Fatal(err)
		}
	}
}

func TestInboxDeleteSucceeded(t *testing.T) {
	t.Parallel()
	s := NewInbox()
	ctx := t.Context()
	enqueue := func(id string) {
		t.Helper()
		_, err := s.Enqueue(ctx, webhooks.Envelope{Key: webhooks.InboxKey{Provider: "p", EventID: id}, PayloadSHA256: sha256.Sum256([]byte(id)), ReceivedAt: base})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"old", "new", "pending"} {
		enqueue(id)
	}
	for i, at := range []time.Time{base.Add(time.Hour), base.Add(3 * time.Hour)} {
		l, err := s.AcquireNext(ctx, base, time.Minute)
		if err != nil || l == nil {
			t.Fatalf("AcquireNext %d: %v, %v", i, l, err)
		}
		if err := s.Complete(ctx, l, at); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.DeleteSucceeded(ctx, base.Add(2*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("DeleteSucceeded = %d, %v; want 1 (only the item completed before the cutoff)", n, err)
	}
	if got := s.Len(); got != 2 {
		t.Errorf("Len() = %d after deleting one of three; want 2", got)
	}
	// The deleted item was the first one acquired and completed, "old".
	if _, err := s.Get(ctx, webhooks.InboxKey{Provider: "p", EventID: "old"}); err == nil {
		t.Error(`Get("old") found the deleted item`)
	}
	res, err := s.Enqueue(ctx, webhooks.Envelope{Key: webhooks.InboxKey{Provider: "p", EventID: "old"}, ReceivedAt: base})
	if err != nil || res.Outcome != webhooks.EnqueueNew {
		t.Errorf("re-enqueue after deletion = %v, %v; want new", res.Outcome, err)
	}
}
