package pgstore_test

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks/pgstore"
)

func TestNewValidates(t *testing.T) {
	t.Parallel()
	_, err := pgstore.New(nil)
	require.ErrorContains(t, err, "pgstore:")

	// New does not connect, so an unconnected pool is enough here.
	cfg, err := pgxpool.ParseConfig("postgres://nobody@127.0.0.1:1/none")
	require.NoError(t, err)
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)

	for _, bad := range []string{"", strings.Repeat("s", 64), "bad\x00name", "bad\xffname"} {
		_, err := pgstore.New(pool, pgstore.WithSchema(bad))
		assert.ErrorContains(t, err, "pgstore: the schema name", "schema %q", bad)
	}

	s, err := pgstore.New(pool)
	require.NoError(t, err)
	assert.Equal(t, pgstore.DefaultSchema, s.Schema())
	assert.Equal(t, "webhooks.inbox", s.NotifyChannel())

	long := strings.Repeat("é", 31) // 62 bytes: fits, but its channel would not
	s, err = pgstore.New(pool, pgstore.WithSchema(long))
	require.NoError(t, err)
	assert.LessOrEqual(t, len(s.NotifyChannel()), 63)
	other, err := pgstore.New(pool, pgstore.WithSchema(strings.Repeat("é", 30)+"e"))
	require.NoError(t, err)
	assert.NotEqual(t, s.NotifyChannel(), other.NotifyChannel())
}
