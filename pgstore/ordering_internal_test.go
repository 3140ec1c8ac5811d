package pgstore

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
)

// TestOrderingKeysInOneBatch: envelopes of one key stored by one group
// commit statement (enqueueBatchSQL) make one head, the lowest version,
// and the others wait, to run in version order; two handlers of one
// event, one ordered, make one keyed and one unkeyed job.
func TestOrderingKeysInOneBatch(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 2)
	s := newMigratedStore(t, pool)
	ctx := t.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var reqs []*enqueueRequest
	for _, e := range []struct {
		id, key string
		version int64
	}{{"g2", "G", 2}, {"g3", "G", 3}, {"g1", "G", 1}, {"h1", "H", 1}} {
		r, err := s.newEnqueueRequest(ctx, webhooks.Envelope{
			Key: webhooks.InboxKey{Provider: "p", EventID: e.id}, ReceivedAt: now, Payload: []byte("{}"),
			Jobs:     []webhooks.Job{{Handler: "ledger", Ordered: true}, {Handler: "audit"}},
			Ordering: webhooks.Ordering{Key: e.key, Version: e.version},
		})
		require.NoError(t, err)
		reqs = append(reqs, r)
	}
	res, err := s.enqueueBatch(ctx, reqs)
	require.NoError(t, err)
	require.Len(t, res, 4)
	acquire := func(handler string) map[string]*webhooks.Lease {
		leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: now, LeaseDuration: time.Minute, Max: 10, Handler: handler})
		require.NoError(t, err)
		m := map[string]*webhooks.Lease{}
		for _, l := range leases {
			m[l.Key().EventID] = l
		}
		return m
	}
	assert.Len(t, acquire("audit"), 4, "audit is unordered: every job at once")
	for _, want := range []string{"g1", "g2", "g3"} {
		got := acquire("ledger")
		delete(got, "h1")
		require.Len(t, got, 1, "one head of G at a time; want %s", want)
		require.Equal(t, []string{want}, keysOf(got), "by version")
		require.NoError(t, s.Settle(ctx, webhooks.Settlement{Lease: got[want], Outcome: webhooks.AttemptSucceeded, Now: now}))
	}
}

// TestOrderingKeysDemoteInOneBatch: a group commit statement
// (enqueueBatchSQL) demotes a key's head that has not started when the
// batch brings an older version of the key: the batch's oldest job is the
// head, and the old head waits, in (version, arrival) order with the
// others. A head that has started (leased), or a batch job of no version,
// demotes nothing. Mutation: no demotion in enqueueBatchSQL.
func TestOrderingKeysDemoteInOneBatch(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 2)
	s := newMigratedStore(t, pool)
	ctx := t.Context()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type ev = struct {
		id, key string
		version int64
	}
	batch := func(evs ...ev) {
		t.Helper()
		var reqs []*enqueueRequest
		for _, e := range evs {
			r, err := s.newEnqueueRequest(ctx, webhooks.Envelope{
				Key: webhooks.InboxKey{Provider: "p", EventID: e.id}, ReceivedAt: now, Payload: []byte("{}"),
				Jobs:     []webhooks.Job{{Handler: "ledger", Ordered: true}},
				Ordering: webhooks.Ordering{Key: e.key, Version: e.version},
			})
			require.NoError(t, err)
			reqs = append(reqs, r)
		}
		res, err := s.enqueueBatch(ctx, reqs)
		require.NoError(t, err)
		require.Len(t, res, len(evs))
	}
	acquire := func() map[string]*webhooks.Lease {
		leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: now, LeaseDuration: time.Minute, Max: 10, Handler: "ledger"})
		require.NoError(t, err)
		m := map[string]*webhooks.Lease{}
		for _, l := range leases {
			m[l.Key().EventID] = l
		}
		return m
	}
	batch(ev{"h200", "H", 200})
	require.Contains(t, acquire(), "h200", "H's head starts")
	batch(ev{"g200", "G", 200}, ev{"i200", "I", 200})
	batch(ev{"g150", "G", 150}, ev{"g100", "G", 100}, ev{"h100", "H", 100}, ev{"i0", "I", 0})
	got := acquire()
	require.ElementsMatch(t, []string{"g100", "i200"}, keysOf(got), "g100 demoted the unstarted g200; the leased h200 and i200 (i0 has no version) keep their keys")
	var state string
	require.NoError(t, pool.QueryRow(ctx, `SELECT state FROM `+pgx.Identifier{s.Schema()}.Sanitize()+`.inbox_jobs WHERE event_id = 'g200'`).Scan(&state))
	assert.Equal(t, "waiting", state)
	require.NoError(t, s.Settle(ctx, webhooks.Settlement{Lease: got["g100"], Outcome: webhooks.AttemptSucceeded, Now: now}))
	for _, want := range []string{"g150", "g200"} {
		got = acquire()
		require.Contains(t, got, want, "by version")
		require.NoError(t, s.Settle(ctx, webhooks.Settlement{Lease: got[want], Outcome: webhooks.AttemptSucceeded, Now: now}))
	}
}

func keysOf(m map[string]*webhooks.Lease) []string {
	var out []string
	for id := range m {
		out = append(out, id)
	}
	return out
}
