package storetest

import (
	"crypto/sha256"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

// RunInbox runs the InboxStore conformance cases, each on a store returned
// by newStore. See the package documentation for what newStore must do.
func RunInbox(t *testing.T, newStore func(t *testing.T) webhooks.InboxStore) {
	t.Helper()
	fresh := func(t *testing.T) webhooks.InboxStore {
		t.Helper()
		s := newStore(t)
		if s == nil {
			t.Fatal("newStore returned a nil InboxStore; want a fresh, empty store")
		}
		return s
	}
	// The group returns only when its parallel cases are done, so callers
	// may tear down shared resources after RunInbox returns.
	t.Run("InboxStore", func(t *testing.T) {
		for _, c := range inboxCases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				c.run(t, fresh(t))
			})
		}
		t.Run("BatchAcquirer", func(t *testing.T) {
			t.Parallel()
			if _, ok := fresh(t).(webhooks.BatchAcquirer); !ok {
				t.Log("the store does not implement webhooks.BatchAcquirer: batch cases not applicable")
				return
			}
			for _, c := range batchCases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					s := fresh(t)
					c.run(t, s, s.(webhooks.BatchAcquirer))
				})
			}
		})
	})
}

// RunReplay runs the ReplayStore conformance cases, each on a store returned
// by newStore. See the package documentation for what newStore must do.
func RunReplay(t *testing.T, newStore func(t *testing.T) webhooks.ReplayStore) {
	t.Helper()
	t.Run("ReplayStore", func(t *testing.T) {
		for _, c := range replayCases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				s := newStore(t)
				if s == nil {
					t.Fatal("newStore returned a nil ReplayStore; want a fresh, empty store")
				}
				c.run(t, s)
			})
		}
	})
}

type inboxCase struct {
	name string
	run  func(t *testing.T, s webhooks.InboxStore)
}

type batchCase struct {
	name string
	run  func(t *testing.T, s webhooks.InboxStore, b webhooks.BatchAcquirer)
}

type replayCase struct {
	name string
	run  func(t *testing.T, s webhooks.ReplayStore)
}

// inboxCases are all InboxStore cases, in the order they are reported.
var inboxCases = slices.Concat(enqueueCases, leaseCases, settleCases, deadLetterCases, itemCases)

// base is the time every case starts from: microsecond precision, as
// PostgreSQL keeps it. Cases only add whole microseconds or more.
var base = time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)

// at returns base+d.
func at(d time.Duration) time.Time { return base.Add(d) }

// leaseFor is the lease duration cases use when they do not care.
const leaseFor = time.Minute

// key returns an inbox key of provider "acme", tenant "t1".
func key(eventID string) webhooks.InboxKey {
	return webhooks.InboxKey{Provider: "acme", Tenant: "t1", EventID: eventID}
}

// envelope returns a complete envelope for k with payload, received at
// receivedAt.
func envelope(k webhooks.InboxKey, payload string, receivedAt time.Time) webhooks.Envelope {
	return webhooks.Envelope{
		Key:       k,
		EventType: "invoice.paid",
		Payload:   []byte(payload),
		Headers: http.Header{
			"Content-Type": {"application/json"},
			"X-Trace":      {"a", "b"},
		},
		PayloadSHA256: sha256.Sum256([]byte(payload)),
		KeyID:         "key-2026",
		OccurredAt:    receivedAt.Add(-90 * time.Second),
		ReceivedAt:    receivedAt,
	}
}

// enqueuedItem is the item the semantics require right after env was
// enqueued as new.
func enqueuedItem(env webhooks.Envelope) webhooks.Item {
	return webhooks.Item{
		Key:           env.Key,
		EventType:     env.EventType,
		Payload:       env.Payload,
		Headers:       env.Headers,
		PayloadSHA256: env.PayloadSHA256,
		KeyID:         env.KeyID,
		State:         webhooks.StatePending,
		NextAttemptAt: env.ReceivedAt,
		LastSeenAt:    env.ReceivedAt,
		OccurredAt:    env.OccurredAt,
		ReceivedAt:    env.ReceivedAt,
		UpdatedAt:     env.ReceivedAt,
	}
}

// leasedItem returns want as AcquireNext(now, d) must leave it.
func leasedItem(want webhooks.Item, now time.Time, d time.Duration) webhooks.Item {
	want.State = webhooks.StateLeased
	want.Attempts++
	want.LeaseExpiresAt = now.Add(d)
	want.NextAttemptAt = now.Add(d)
	want.UpdatedAt = now
	return want
}

// mustEnqueue enqueues env and requires the outcome EnqueueNew.
func mustEnqueue(t *testing.T, s webhooks.InboxStore, env webhooks.Envelope) {
	t.Helper()
	res, err := s.Enqueue(t.Context(), env)
	if err != nil {
		t.Fatalf("Enqueue(%s): %v; want no error", env.Key, err)
	}
	if res.Outcome != webhooks.EnqueueNew {
		t.Fatalf("Enqueue(%s) of a new key: outcome %v, want %v", env.Key, res.Outcome, webhooks.EnqueueNew)
	}
}

// mustAcquire requires AcquireNext(now, d) to lease an item.
func mustAcquire(t *testing.T, s webhooks.InboxStore, now time.Time, d time.Duration) *webhooks.Lease {
	t.Helper()
	l, err := s.AcquireNext(t.Context(), now, d)
	if err != nil {
		t.Fatalf("AcquireNext(now=%s, %v): %v; want no error", fmtTime(now), d, err)
	}
	if l == nil {
		t.Fatalf("AcquireNext(now=%s, %v) = nil; want a lease on a due item", fmtTime(now), d)
	}
	return l
}

// mustAcquireKey requires AcquireNext(now, d) to lease the item k.
func mustAcquireKey(t *testing.T, s webhooks.InboxStore, k webhooks.InboxKey, now time.Time, d time.Duration) *webhooks.Lease {
	t.Helper()
	l := mustAcquire(t, s, now, d)
	if l.Key() != k {
		t.Fatalf("AcquireNext(now=%s) leased %s; want %s", fmtTime(now), l.Key(), k)
	}
	return l
}

// wantNothingDue requires AcquireNext(now, ...) to return (nil, nil).
func wantNothingDue(t *testing.T, s webhooks.InboxStore, now time.Time, why string) {
	t.Helper()
	l, err := s.AcquireNext(t.Context(), now, leaseFor)
	if err != nil {
		t.Fatalf("AcquireNext(now=%s): %v; want (nil, nil) because %s", fmtTime(now), err, why)
	}
	if l != nil {
		t.Fatalf("AcquireNext(now=%s) leased %s (attempt %d); want nil because %s", fmtTime(now), l.Key(), l.Attempt, why)
	}
}

// mustGet returns the stored item k.
func mustGet(t *testing.T, s webhooks.InboxStore, k webhooks.InboxKey) webhooks.Item {
	t.Helper()
	it, err := s.Get(t.Context(), k)
	if err != nil {
		t.Fatalf("Get(%s): %v; want the item", k, err)
	}
	return it
}

// checkStored requires the stored item to equal want.
func checkStored(t *testing.T, s webhooks.InboxStore, want webhooks.Item, when string) {
	t.Helper()
	checkItem(t, "Get("+want.Key.String()+") "+when, mustGet(t, s, want.Key), want)
}

// wantLeaseLost requires err to wrap webhooks.ErrLeaseLost.
func wantLeaseLost(t *testing.T, err error, call string) {
	t.Helper()
	if !errors.Is(err, webhooks.ErrLeaseLost) {
		t.Errorf("%s: error %v; want an error wrapping webhooks.ErrLeaseLost", call, err)
	}
}

// mustFail fails lease at now with decision.
func mustFail(t *testing.T, s webhooks.InboxStore, l *webhooks.Lease, f webhooks.Failure, d webhooks.RetryDecision, now time.Time) {
	t.Helper()
	if err := s.Fail(t.Context(), l, f, d, now); err != nil {
		t.Fatalf("Fail(%s, %+v) with the current token: %v; want no error", l.Key(), d, err)
	}
}

// transient and permanent are the failures cases record.
var (
	transient = webhooks.Failure{Class: webhooks.FailureError, Message: "upstream returned 503", Transient: true}
	permanent = webhooks.Failure{Class: webhooks.FailurePermanent, Message: "invoice does not exist"}
)

// makeDead enqueues env and dead-letters it at deadAt (its only attempt).
// No other item may be due at deadAt.
func makeDead(t *testing.T, s webhooks.InboxStore, env webhooks.Envelope, deadAt time.Time) {
	t.Helper()
	mustEnqueue(t, s, env)
	l := mustAcquireKey(t, s, env.Key, deadAt, leaseFor)
	mustFail(t, s, l, permanent, webhooks.DeadLetterDecision(), deadAt)
}
