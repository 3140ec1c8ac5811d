package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/internal/testing/testlog"
)

// newMigratedStore returns a migrated store on pool, in a fresh schema
// dropped when t ends: the internal tests' newStoreOn.
func newMigratedStore(t testing.TB, pool *pgxpool.Pool, opts ...Option) *Store {
	t.Helper()
	s, err := New(pool, append([]Option{WithSchema(pgtest.NewSchema(t, pool)), WithLogger(testlog.Logger(t))}, opts...)...)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, s.Migrate(ctx))
	return s
}
