package pgstore_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/internal/testing/testlog"
	"github.com/hookinbox/webhooks/pgstore"
)

func allVersions(t *testing.T) []int {
	t.Helper()
	ms, err := pgstore.Migrations(pgstore.DefaultSchema)
	require.NoError(t, err)
	var vs []int
	for _, m := range ms {
		vs = append(vs, m.Version)
	}
	return vs
}

func TestMigrationsRender(t *testing.T) {
	t.Parallel()
	ms, err := pgstore.Migrations(`My "Hooks"`)
	require.NoError(t, err)
	require.NotEmpty(t, ms)
	for i, m := range ms {
		assert.Equal(t, i+1, m.Version)
		assert.NotEmpty(t, m.Name)
		assert.NotContains(t, m.SQL, "{{schema}}", "migration %d still has the placeholder", m.Version)
		assert.Contains(t, m.SQL, `"My ""Hooks"""`, "migration %d does not use the quoted schema", m.Version)
	}
	assert.Equal(t, "init", ms[0].Name)

	_, err = pgstore.Migrations("")
	require.Error(t, err)
}

func TestMigrateIdempotent(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 2)
	schema := pgtest.NewSchema(t, pool)
	s := newStoreOn(t, pool, schema) // migrates once
	ctx := t.Context()

	for range 2 {
		require.NoError(t, s.Migrate(ctx))
	}
	got, err := s.AppliedMigrations(ctx)
	require.NoError(t, err)
	assert.Equal(t, allVersions(t), got)

	var rows int
	require.NoError(t, pool.QueryRow(ctx,
		`SELECT count(*) FROM "`+schema+`".`+pgstore.MigrationsTable).Scan(&rows))
	assert.Equal(t, len(allVersions(t)), rows, "each migration recorded once")
}

func TestMigrateConcurrentInstances(t *testing.T) {
	t.Parallel()
	poolA := pgtest.NewPool(t, 2)
	poolB := pgtest.NewPool(t, 2)
	schema := pgtest.NewSchema(t, poolA)
	a, err := pgstore.New(poolA, pgstore.WithSchema(schema), pgstore.WithLogger(testlog.Logger(t)))
	require.NoError(t, err)
	b, err := pgstore.New(poolB, pgstore.WithSchema(schema), pgstore.WithLogger(testlog.Logger(t)))
	require.NoError(t, err)

	for round := range 3 {
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, s := range []*pgstore.Store{a, b} {
			wg.Go(func() {
				<-start
				errs[i] = s.Migrate(t.Context())
			})
		}
		close(start)
		wg.Wait()
		require.NoError(t, errs[0], "round %d, instance A", round)
		require.NoError(t, errs[1], "round %d, instance B", round)
	}
	got, err := a.AppliedMigrations(t.Context())
	require.NoError(t, err)
	assert.Equal(t, allVersions(t), got)
	mustEnqueueNew(t, b, testEnvelope(testKey("e1"), "{}", baseTime))
}

func TestMigrateQuotesSchema(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 2)
	schema := pgtest.NewSchema(t, pool) + `."; DROP TABLE x; --`
	t.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+quote(schema)+` CASCADE`)
	})
	s := newStoreOn(t, pool, schema)
	mustEnqueueNew(t, s, testEnvelope(testKey("e1"), "{}", baseTime))
	leases, err := s.Acquire(t.Context(), acquireReq(baseTime, 1, 1))
	require.Error(t, err, "a sub-microsecond lease is refused")
	require.Empty(t, leases)
	// The statements run against the quoted schema too.
	l := acquireOne(t, s, baseTime, time.Minute)
	require.NotNil(t, l)
	require.NoError(t, s.Settle(t.Context(), succeeded(l, baseTime)))
	require.ErrorIs(t, s.Settle(t.Context(), succeeded(l, baseTime)), webhooks.ErrAlreadySettled)
	it, err := s.Get(t.Context(), l.Key())
	require.NoError(t, err)
	assert.Equal(t, webhooks.StateSucceeded, it.State)
}

func TestNotMigratedErrorSaysWhatToDo(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 1)
	s, err := pgstore.New(pool, pgstore.WithSchema(pgtest.NewSchema(t, pool)))
	require.NoError(t, err)
	_, err = s.Enqueue(t.Context(), testEnvelope(testKey("e1"), "{}", baseTime))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Migrate")
	applied, err := s.AppliedMigrations(t.Context())
	require.NoError(t, err)
	assert.Empty(t, applied)
}

func quote(ident string) string { return `"` + strings.ReplaceAll(ident, `"`, `""`) + `"` }

// TestMigrateWithoutDatabaseCreatePrivilege: a role that may not create
// schemas can migrate into a schema an administrator made for it, and is
// told clearly when the schema is missing.
func TestMigrateWithoutDatabaseCreatePrivilege(t *testing.T) {
	t.Parallel()
	admin := pgtest.NewPool(t, 1)
	ctx := t.Context()
	schema := pgtest.NewSchema(t, admin)
	role := schema + "_role"
	password := schema // random enough for a throwaway role
	var mayCreateRoles bool
	require.NoError(t, admin.QueryRow(ctx,
		`SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user`).Scan(&mayCreateRoles))
	if !mayCreateRoles {
		t.Skip("the test database user may not create roles; this test needs a throwaway role")
	}
	_, err := admin.Exec(ctx, `CREATE ROLE `+quote(role)+` LOGIN PASSWORD '`+password+`'`)
	require.NoError(t, err)
	t.Cleanup(func() {
		// Runs after the role's pool is closed and the schema dropped.
		_, err := admin.Exec(context.Background(), `DROP ROLE `+quote(role))
		assert.NoError(t, err)
	})
	var canCreate bool
	require.NoError(t, admin.QueryRow(ctx, `SELECT has_database_privilege($1, current_database(), 'CREATE')`, role).Scan(&canCreate))
	if canCreate {
		t.Skip("PUBLIC may create schemas in this database; nothing to test")
	}
	_, err = admin.Exec(ctx, `CREATE SCHEMA `+quote(schema)+` AUTHORIZATION `+quote(role))
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = admin.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+quote(schema)+` CASCADE`)
	})

	cfg, err := pgxpool.ParseConfig(pgtest.DSN(t))
	require.NoError(t, err)
	cfg.ConnConfig.User, cfg.ConnConfig.Password, cfg.MaxConns = role, password, 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)

	s, err := pgstore.New(pool, pgstore.WithSchema(schema), pgstore.WithLogger(testlog.Logger(t)))
	require.NoError(t, err)
	require.NoError(t, s.Migrate(ctx))
	require.NoError(t, s.Migrate(ctx))
	mustEnqueueNew(t, s, testEnvelope(testKey("e1"), "{}", baseTime))

	missing, err := pgstore.New(pool, pgstore.WithSchema(schema+"_missing"))
	require.NoError(t, err)
	err = missing.Migrate(ctx)
	require.ErrorContains(t, err, "pgstore: migration 0001_init")
	require.ErrorContains(t, err, "permission denied")
}
