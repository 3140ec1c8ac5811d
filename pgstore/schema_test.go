package pgstore_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/internal/testing/testlog"
	"github.com/hookinbox/webhooks/pgstore"
)

// syncBuffer is a log destination the processor's goroutines share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestUnmigratedSchemaRefusesToServe: on a schema Migrate never ran in,
// the first call of the receiver's path (Enqueue) and of the processor's
// (Acquire) fail saying what to do, and Processor.Run stops with that
// error instead of retrying and warning at every poll. Once migrated, the
// same store serves.
func TestUnmigratedSchemaRefusesToServe(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 2)
	schema := pgtest.NewSchema(t, pool)
	s, err := pgstore.New(pool, pgstore.WithSchema(schema), pgstore.WithLogger(testlog.Logger(t)))
	require.NoError(t, err)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Microsecond)
	want := `pgstore: schema "` + schema + `" has no inbox: run (*Store).Migrate (or hookinbox migrate -schema ` + schema + `)`

	err = s.CheckSchema(ctx)
	require.ErrorIs(t, err, webhooks.ErrStoreNotReady)
	assert.Equal(t, want, err.Error())
	_, err = s.Enqueue(ctx, testEnvelope(testKey("evt_1"), `{"id":1}`, now))
	require.ErrorIs(t, err, webhooks.ErrStoreNotReady)
	assert.Contains(t, err.Error(), want)
	_, err = s.Acquire(ctx, webhooks.AcquireRequest{Now: now, LeaseDuration: time.Minute, Max: 10})
	require.ErrorIs(t, err, webhooks.ErrStoreNotReady)
	assert.Contains(t, err.Error(), want)
	assert.Contains(t, err.Error(), "(SQLSTATE 42P01)", "the statement's own error follows")

	var logs syncBuffer
	p, err := webhooks.NewProcessor(s, webhooks.NewMux(),
		webhooks.WithPollInterval(time.Millisecond),
		webhooks.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(runCtx) }()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second): // the safety net of a test that would otherwise hang
		cancel()
		<-done
		t.Fatalf("Processor.Run on an unmigrated schema did not return within 10s; it logged %d warnings:\n%s",
			strings.Count(logs.String(), "level=WARN"), firstLines(logs.String(), 3))
	}
	require.ErrorIs(t, err, webhooks.ErrStoreNotReady, "Run on an unmigrated schema")
	assert.Contains(t, err.Error(), want)
	assert.NotContains(t, logs.String(), "acquisition", "no warning about lost acquisition replies")

	require.NoError(t, s.Migrate(ctx))
	require.NoError(t, s.CheckSchema(ctx))
	_, err = s.Enqueue(ctx, testEnvelope(testKey("evt_1"), `{"id":1}`, now))
	require.NoError(t, err, "the migrated schema serves")
	leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: now, LeaseDuration: time.Minute, Max: 10})
	require.NoError(t, err)
	assert.Len(t, leases, 1)
}

func firstLines(s string, n int) string {
	lines := strings.SplitAfterN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "")
}

// TestCheckSchemaTakesAHostsOwnMigrations: a schema made from Migrations
// by the host's own tool, which records nothing in MigrationsTable, is
// taken as it is.
func TestCheckSchemaTakesAHostsOwnMigrations(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 2)
	schema := pgtest.NewSchema(t, pool)
	ctx := t.Context()
	ms, err := pgstore.Migrations(schema)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
	require.NoError(t, err)
	for _, m := range ms {
		_, err := pool.Exec(ctx, m.SQL)
		require.NoError(t, err, "migration %d", m.Version)
	}
	s, err := pgstore.New(pool, pgstore.WithSchema(schema), pgstore.WithLogger(testlog.Logger(t)))
	require.NoError(t, err)
	require.NoError(t, s.CheckSchema(ctx))
}
