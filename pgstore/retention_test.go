package pgstore_test

import (
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/pgstore/internal/pgtest"
)

func TestDeleteSucceeded(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()

	// 23 items succeed one minute apart; one more stays pending, one is
	// dead, one is leased. All were received long ago.
	const succeeded = 23
	for i := range succeeded + 3 {
		mustEnqueueNew(t, s, testEnvelope(testKey(fmt.Sprintf("e%02d", i)), fmt.Sprint(i), baseTime.Add(-time.Hour)))
	}
	for i := range succeeded {
		now := baseTime.Add(time.Duration(i) * time.Minute)
		l, err := s.AcquireNext(ctx, now, time.Minute)
		require.NoError(t, err)
		require.NotNil(t, l)
		require.NoError(t, s.Complete(ctx, l, now))
	}
	l, err := s.AcquireNext(ctx, baseTime, time.Hour)
	require.NoError(t, err)
	require.NoError(t, s.Fail(ctx, l, webhooks.Failure{Class: webhooks.FailurePermanent, Message: "x"}, webhooks.DeadLetterDecision(), baseTime))
	_, err = s.AcquireNext(ctx, baseTime, time.Hour)
	require.NoError(t, err)

	_, err = s.DeleteSucceeded(ctx, baseTime, 0)
	require.ErrorContains(t, err, "batch size")

	// Items completed before baseTime+17m: 17 of them, in batches of 5.
	n, err := s.DeleteSucceeded(ctx, baseTime.Add(17*time.Minute), 5)
	require.NoError(t, err)
	assert.Equal(t, int64(17), n)
	n, err = s.DeleteSucceeded(ctx, baseTime.Add(17*time.Minute), 5)
	require.NoError(t, err)
	assert.Zero(t, n, "nothing left to delete")

	states := map[webhooks.State]int{}
	for i := range succeeded + 3 {
		it, err := s.Get(ctx, testKey(fmt.Sprintf("e%02d", i)))
		if i < 17 {
			assert.ErrorIs(t, err, webhooks.ErrNotFound, "e%02d", i)
			continue
		}
		require.NoError(t, err)
		states[it.State]++
	}
	assert.Equal(t, map[webhooks.State]int{
		webhooks.StateSucceeded: succeeded - 17,
		webhooks.StateDead:      1,
		webhooks.StateLeased:    1,
		webhooks.StatePending:   1,
	}, states)

	// Batches of one, until done.
	n, err = s.DeleteSucceeded(ctx, baseTime.Add(time.Hour), 1)
	require.NoError(t, err)
	assert.Equal(t, int64(succeeded-17), n)

	// A deleted item's ID is forgotten: a redelivery is new again.
	mustEnqueueNew(t, s, testEnvelope(testKey("e00"), "0", baseTime))
}

func TestDeleteExpiredReplayKeys(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	digest := sha256.Sum256([]byte("body"))
	key := func(i int) webhooks.ReplayKey {
		return webhooks.ReplayKey{Provider: "acme", Tenant: "t1", Key: fmt.Sprintf("r%02d", i)}
	}
	// Key i expires at baseTime + i minutes.
	for i := range 30 {
		out, err := s.Register(ctx, key(i), digest, baseTime.Add(-time.Hour), baseTime.Add(time.Duration(i)*time.Minute))
		require.NoError(t, err)
		require.Equal(t, webhooks.ReplayNew, out)
	}
	_, err := s.DeleteExpiredReplayKeys(ctx, baseTime, -1)
	require.ErrorContains(t, err, "batch size")

	// Expired at baseTime+12m: keys 0..12.
	n, err := s.DeleteExpiredReplayKeys(ctx, baseTime.Add(12*time.Minute), 4)
	require.NoError(t, err)
	assert.Equal(t, int64(13), n)
	n, err = s.DeleteExpiredReplayKeys(ctx, baseTime.Add(12*time.Minute), 4)
	require.NoError(t, err)
	assert.Zero(t, n)

	var rows int
	require.NoError(t, pgtest.NewPool(t, 1).QueryRow(ctx, `SELECT count(*) FROM `+quote(s.Schema())+`.replay_keys`).Scan(&rows))
	assert.Equal(t, 17, rows)

	// An unexpired key is still seen; a deleted one registers anew.
	out, err := s.Register(ctx, key(20), digest, baseTime.Add(12*time.Minute), baseTime.Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, webhooks.ReplaySeen, out)
	out, err = s.Register(ctx, key(3), digest, baseTime.Add(12*time.Minute), baseTime.Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, webhooks.ReplayNew, out)
}
