package pgstore_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks/pgstore"
	"github.com/hookinbox/webhooks/pgstore/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// storePoolConns is the pool size of an ordinary test's store: small, since
// many tests run at once against a server with ~100 connections.
const storePoolConns = 4

// newStore returns a migrated store in a fresh schema on its own pool.
func newStore(t testing.TB, opts ...pgstore.Option) *pgstore.Store {
	t.Helper()
	pool := pgtest.NewPool(t, storePoolConns)
	return newStoreOn(t, pool, pgtest.NewSchema(t, pool), opts...)
}

// newStoreOn returns a migrated store for schema on pool.
func newStoreOn(t testing.TB, pool *pgxpool.Pool, schema string, opts ...pgstore.Option) *pgstore.Store {
	t.Helper()
	s, err := pgstore.New(pool, append([]pgstore.Option{pgstore.WithSchema(schema)}, opts...)...)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, s.Migrate(ctx))
	return s
}
