package otelwebhooks_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/ops"
	"github.com/hookinbox/webhooks/otelwebhooks"
)

// countingStore counts Stats calls, and fails them while failing is set.
type countingStore struct {
	ops.Store
	calls   atomic.Int32
	failing atomic.Bool
}

func (s *countingStore) Stats(ctx context.Context, req ops.StatsRequest) (ops.Stats, error) {
	s.calls.Add(1)
	if s.failing.Load() {
		return ops.Stats{}, errors.New("database is down")
	}
	return s.Store.Stats(ctx, req)
}

func TestStatsGauges(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	inbox := memstore.NewInbox()
	due := time.Now().Add(-90 * time.Second)
	for _, id := range []string{"a", "b", "c"} {
		_, err := inbox.Enqueue(ctx, webhooks.Envelope{Key: webhooks.InboxKey{Provider: "acme", EventID: id}, EventType: "order.paid", ReceivedAt: due})
		require.NoError(t, err)
	}
	leases, err := inbox.Acquire(ctx, webhooks.AcquireRequest{Now: due, LeaseDuration: time.Minute, Max: 1})
	require.NoError(t, err)
	require.NoError(t, inbox.Settle(ctx, webhooks.Settlement{Lease: leases[0], Outcome: webhooks.AttemptDeadLettered, Failure: webhooks.Failure{Class: webhooks.FailurePermanent}, Now: due}))

	store := &countingStore{Store: inbox}
	s := newSDK(t)
	obs, err := otelwebhooks.New(otelwebhooks.WithMeterProvider(s.meters), otelwebhooks.WithStats(store), otelwebhooks.WithStatsMaxAge(time.Hour))
	require.NoError(t, err)

	rm := s.collect(t)
	items := counts(t, find(t, rm, "webhooks.items"))
	assert.Equal(t, 2.0, items["state=pending"])
	assert.Equal(t, 1.0, items["state=dead"])
	assert.Zero(t, items["state=succeeded"])
	assert.Equal(t, map[string]float64{"": 2}, counts(t, find(t, rm, "webhooks.backlog")))
	age := counts(t, find(t, rm, "webhooks.oldest_due.age"))[""]
	assert.InDelta(t, 90, age, 30, "the oldest due item waited about 90 s")
	assert.Equal(t, "s", find(t, rm, "webhooks.oldest_due.age").Unit)
	assert.Equal(t, map[string]float64{"event_type=order.paid,provider=acme": 1}, counts(t, find(t, rm, "webhooks.dead_letters")))
	assert.Equal(t, map[string]float64{"": 0}, counts(t, find(t, rm, "webhooks.leases_held")))

	// Collections within the max age reuse the stats.
	for range 5 {
		s.collect(t)
	}
	assert.Equal(t, int32(1), store.calls.Load(), "one Stats call however often metrics are collected")

	// Close stops the gauges.
	require.NoError(t, obs.Close())
	rm = s.collect(t)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			assert.NotEqual(t, "webhooks.backlog", m.Name)
		}
	}
}

func TestStatsGaugesWhenTheStoreFails(t *testing.T) {
	t.Parallel()
	store := &countingStore{Store: memstore.NewInbox()}
	store.failing.Store(true)
	s := newSDK(t)
	obs, err := otelwebhooks.New(otelwebhooks.WithMeterProvider(s.meters), otelwebhooks.WithStats(store), otelwebhooks.WithStatsMaxAge(0))
	require.NoError(t, err)
	defer obs.Close()
	rm := s.collect(t)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			assert.NotEqual(t, "webhooks.backlog", m.Name, "a failed fetch observes nothing, rather than zeros")
		}
	}
	store.failing.Store(false)
	rm = s.collect(t)
	assert.Equal(t, map[string]float64{"": 0}, counts(t, find(t, rm, "webhooks.backlog")), "with a max age of 0 every collection fetches")
	assert.Equal(t, int32(2), store.calls.Load())
}

func TestNewRefusesANegativeMaxAge(t *testing.T) {
	t.Parallel()
	_, err := otelwebhooks.New(otelwebhooks.WithStatsMaxAge(-time.Second))
	assert.ErrorContains(t, err, "must not be negative")
}

// TestDeadLetterGaugeBounded: the dead-letter gauge observes the groups
// Stats lists, the largest ones, and one series for the rest, so event
// types chosen by senders cannot add series without bound; the series
// still add up to every dead letter.
func TestDeadLetterGaugeBounded(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	inbox := memstore.NewInbox()
	at := time.Now().Add(-time.Minute)
	const groups = ops.DefaultDeadLetterGroups + 5
	for i := range groups {
		k := webhooks.InboxKey{Provider: "acme", EventID: fmt.Sprint("e", i)}
		_, err := inbox.Enqueue(ctx, webhooks.Envelope{Key: k, EventType: fmt.Sprintf("attacker.%02d", i), ReceivedAt: at})
		require.NoError(t, err)
		leases, err := inbox.Acquire(ctx, webhooks.AcquireRequest{Now: at, LeaseDuration: time.Minute, Max: 1})
		require.NoError(t, err)
		require.NoError(t, inbox.Settle(ctx, webhooks.Settlement{Lease: leases[0], Outcome: webhooks.AttemptDeadLettered, Failure: webhooks.Failure{Class: webhooks.FailurePermanent}, Now: at}))
	}
	s := newSDK(t)
	obs, err := otelwebhooks.New(otelwebhooks.WithMeterProvider(s.meters), otelwebhooks.WithStats(inbox))
	require.NoError(t, err)
	defer obs.Close()

	dead := counts(t, find(t, s.collect(t), "webhooks.dead_letters"))
	assert.Len(t, dead, ops.DefaultDeadLetterGroups+1, "the largest groups and one for the rest: %v", dead)
	assert.Equal(t, 5.0, dead["event_type=other,provider=other"], "the groups beyond the largest")
	total := 0.0
	for _, n := range dead {
		total += n
	}
	assert.Equal(t, float64(groups), total, "the series add up to every dead letter")
}
