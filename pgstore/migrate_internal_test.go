package pgstore

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/pgstore/internal/pgtest"
)

// TestMigrateUpgradesVersion1: a schema that the first release migrated
// (version 1 only), holding items in every state, upgrades to the current
// version with every item intact, and the store then settles, acquires and
// replays them.
func TestMigrateUpgradesVersion1(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 2)
	s, err := New(pool, WithSchema(pgtest.NewSchema(t, pool)))
	require.NoError(t, err)
	ctx := t.Context()
	ms, err := Migrations(s.schema)
	require.NoError(t, err)
	require.NoError(t, s.migrate(ctx, ms[0]), "the first release applied 0001 alone")
	applied, err := s.AppliedMigrations(ctx)
	require.NoError(t, err)
	require.Equal(t, []int{1}, applied)

	base := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	key := func(id string) webhooks.InboxKey {
		return webhooks.InboxKey{Provider: "acme", Tenant: "t1", EventID: id}
	}
	ids := []string{"pending", "retrying", "leased", "expired", "succeeded", "dead"}
	for _, id := range ids {
		env := webhooks.Envelope{Key: key(id), EventType: "invoice.paid", Payload: []byte(id), PayloadSHA256: sha256.Sum256([]byte(id)), KeyID: "k1", ReceivedAt: base}
		res, err := s.Enqueue(ctx, env) // the version 1 statement, unchanged
		require.NoError(t, err)
		require.Equal(t, webhooks.EnqueueNew, res.Outcome)
	}
	// The other states as the first release's statements left them; the
	// CHECK constraints of 0001 hold them to its state machine.
	tokens := map[string]string{"leased": uuid.NewString(), "expired": uuid.NewString(), "succeeded": uuid.NewString()}
	table := quoteSchema(s.schema) + ".inbox_items"
	for _, u := range []struct {
		id, set string
		args    []any
	}{
		{"retrying", `attempts = 1, next_attempt_at = $2, last_error_class = 'error', last_error_message = '503',
			last_error_at = $3, updated_at = $3`, []any{base.Add(30 * time.Second), base.Add(time.Second)}},
		{"leased", `state = 'leased', attempts = 1, lease_token = $2::uuid, lease_expires_at = $3,
			next_attempt_at = $3, updated_at = $4`, []any{tokens["leased"], base.Add(time.Hour), base}},
		{"expired", `state = 'leased', attempts = 1, lease_token = $2::uuid, lease_expires_at = $3,
			next_attempt_at = $3, updated_at = $4`, []any{tokens["expired"], base.Add(time.Minute), base}},
		{"succeeded", `state = 'succeeded', attempts = 1, next_attempt_at = NULL, completed_at = $2,
			updated_at = $2`, []any{base.Add(time.Second)}},
		{"dead", `state = 'dead', attempts = 2, next_attempt_at = NULL, dead_at = $2, last_error_class = 'permanent',
			last_error_message = 'gone', last_error_at = $2, updated_at = $2`, []any{base.Add(2 * time.Second)}},
	} {
		tag, err := pool.Exec(ctx, `UPDATE `+table+` SET `+u.set+` WHERE event_id = $1`, append([]any{u.id}, u.args...)...)
		require.NoError(t, err, u.id)
		require.EqualValues(t, 1, tag.RowsAffected(), u.id)
	}
	before := map[string]webhooks.Item{}
	for _, id := range ids {
		before[id], err = s.Get(ctx, key(id)) // reads no column of later versions
		require.NoError(t, err)
	}

	require.NoError(t, s.Migrate(ctx))
	applied, err = s.AppliedMigrations(ctx)
	require.NoError(t, err)
	require.Equal(t, []int{1, 2}, applied)
	for _, id := range ids {
		it, err := s.Get(ctx, key(id))
		require.NoError(t, err)
		assert.Equal(t, before[id], it, "%s changed by the upgrade", id)
	}

	// A lease of the first release settles, and a settlement tried again
	// under it is now told apart from a stale one.
	leased := &webhooks.Lease{Token: tokens["leased"], Item: before["leased"]}
	now := base.Add(90 * time.Second)
	require.NoError(t, s.Settle(ctx, webhooks.Settlement{Lease: leased, Outcome: webhooks.AttemptSucceeded, Now: now}))
	assert.ErrorIs(t, s.Settle(ctx, webhooks.Settlement{Lease: leased, Outcome: webhooks.AttemptSucceeded, Now: now}), webhooks.ErrAlreadySettled)
	// An item settled before the upgrade kept no token: its lease is lost,
	// as it was under the first release.
	old := &webhooks.Lease{Token: tokens["succeeded"], Item: before["succeeded"]}
	assert.ErrorIs(t, s.Settle(ctx, webhooks.Settlement{Lease: old, Outcome: webhooks.AttemptSucceeded, Now: now}), webhooks.ErrLeaseLost)

	// Due items are acquired in due order; the expired lease is reclaimed.
	leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: now, LeaseDuration: time.Minute, Max: 10})
	require.NoError(t, err)
	got := map[string]bool{}
	var order []string
	for _, l := range leases {
		order = append(order, l.Key().EventID)
		got[l.Key().EventID] = l.Reclaimed
		require.NoError(t, s.Settle(ctx, webhooks.Settlement{Lease: l, Outcome: webhooks.AttemptSucceeded, Now: now}))
	}
	assert.Equal(t, []string{"pending", "retrying", "expired"}, order)
	assert.Equal(t, map[string]bool{"pending": false, "retrying": false, "expired": true}, got, "Reclaimed by item")
	assert.ErrorIs(t, s.Settle(ctx, webhooks.Settlement{
		Lease: &webhooks.Lease{Token: tokens["expired"], Item: before["expired"]}, Outcome: webhooks.AttemptSucceeded, Now: now,
	}), webhooks.ErrLeaseLost, "the first release's expired lease was taken over")

	require.NoError(t, s.ReplayDeadLetter(ctx, webhooks.ReplayRequest{Key: key("dead"), Now: now}))
	it, err := s.Get(ctx, key("dead"))
	require.NoError(t, err)
	assert.Equal(t, webhooks.StatePending, it.State)
	assert.Equal(t, 2, it.Attempts)
}
