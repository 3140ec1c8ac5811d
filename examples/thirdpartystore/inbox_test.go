package thirdpartystore_test

import (
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/storetest"

	"example.com/thirdpartystore"
)

// TestInbox runs the conformance suite on the store, pipeline and
// operators' side. It has none of the optional features, so their cases
// are skipped.
func TestInbox(t *testing.T) {
	storetest.RunInbox(t, func(*testing.T) storetest.Store {
		return thirdpartystore.New()
	}, storetest.Features{})
}

// TestReplay runs the replay-guard cases; this module reuses memstore's.
func TestReplay(t *testing.T) {
	storetest.RunReplay(t, func(*testing.T) webhooks.ReplayStore {
		return memstore.NewReplay()
	})
}

// TestSettledCountsWhatWentThrough tests what the store adds.
func TestSettledCountsWhatWentThrough(t *testing.T) {
	s := thirdpartystore.New()
	ctx := t.Context()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	env := webhooks.Envelope{
		Key:           webhooks.InboxKey{Provider: "acme", EventID: "evt_1"},
		PayloadSHA256: sha256.Sum256(nil),
		ReceivedAt:    now,
	}
	if _, err := s.Enqueue(ctx, env); err != nil {
		t.Fatal(err)
	}
	leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: now, LeaseDuration: time.Minute, Max: 1})
	if err != nil || len(leases) != 1 {
		t.Fatalf("Acquire = %d leases, %v; want 1", len(leases), err)
	}
	done := webhooks.Settlement{Lease: leases[0], Outcome: webhooks.AttemptSucceeded, Now: now}
	if err := s.Settle(ctx, done); err != nil {
		t.Fatal(err)
	}
	if err := s.Settle(ctx, done); !errors.Is(err, webhooks.ErrAlreadySettled) {
		t.Fatalf("Settle again = %v; want ErrAlreadySettled", err)
	}
	if got := s.Settled(webhooks.AttemptSucceeded); got != 1 {
		t.Errorf("Settled(succeeded) = %d; want 1 (the repeat did not go through)", got)
	}
}
