package pgstore_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/pgstore"
)

// The notification lock and Enqueue: see
// TestEnqueueCommitsWithoutTheNotificationLock in notify_internal_test.go.

// TestEnqueueTxWithoutNotifyInTx: with WithoutNotifyInTx, EnqueueTx sends
// nothing in the host's transaction; Notify sends the wake-up afterwards.
func TestEnqueueTxWithoutNotifyInTx(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 3)
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool), pgstore.WithoutNotifyInTx())
	ctx := t.Context()
	note := notifications(t, s)

	tx := pgtest.Begin(t, pool)
	res, err := s.EnqueueTx(ctx, tx, testEnvelope(testKey("quiet"), "{}", baseTime))
	require.NoError(t, err)
	require.Equal(t, webhooks.EnqueueNew, res.Outcome)
	require.NoError(t, tx.Commit(ctx))
	sendMarker(t, s, pool, "after-commit")
	assert.Equal(t, "after-commit", nextNotification(t, note), "the transaction sent no notification")

	s.Notify()
	assert.Equal(t, "", nextNotification(t, note), "Notify sends one")

	// Plain Enqueue still notifies, through the notifier.
	mustEnqueueNew(t, s, testEnvelope(testKey("plain"), "{}", baseTime))
	assert.Equal(t, "", nextNotification(t, note))
}
