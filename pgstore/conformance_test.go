package pgstore_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/pgstore"
	"github.com/hookinbox/webhooks/pgstore/internal/pgtest"
	"github.com/hookinbox/webhooks/storetest"
)

// txStore is a store with the pool that completeInTx begins its
// transactions on.
type txStore struct {
	*pgstore.Store
	pool *pgxpool.Pool
}

func TestInboxConformance(t *testing.T) {
	t.Parallel()
	storetest.RunInbox(t, func(t *testing.T) webhooks.InboxStore {
		pool := pgtest.NewPool(t, storePoolConns)
		return txStore{newStoreOn(t, pool, pgtest.NewSchema(t, pool)), pool}
	}, storetest.Features{CompleteInTx: completeInTx})
}

// completeInTx is storetest's hook for CompleteTx: it completes ev in a
// transaction of its own and commits or rolls back.
func completeInTx(t *testing.T, s webhooks.InboxStore, ev webhooks.Event, commit bool) error {
	t.Helper()
	ts := s.(txStore)
	ctx := t.Context()
	tx, err := ts.pool.Begin(ctx)
	if err != nil {
		t.Fatalf("beginning a transaction: %v", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // a no-op after Commit
	if err := ts.CompleteTx(ctx, tx, ev); err != nil {
		return err
	}
	if !commit {
		return tx.Rollback(ctx)
	}
	return tx.Commit(ctx)
}

func TestReplayConformance(t *testing.T) {
	t.Parallel()
	storetest.RunReplay(t, func(t *testing.T) webhooks.ReplayStore { return newStore(t) })
}
