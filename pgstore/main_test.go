package pgstore_test

import (
	"context"
	"crypto/sha256"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
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

// testKey returns an inbox key of provider "acme", tenant "t1".
func testKey(eventID string) webhooks.InboxKey {
	return webhooks.InboxKey{Provider: "acme", Tenant: "t1", EventID: eventID}
}

// testEnvelope returns an envelope for k with payload, received at receivedAt.
func testEnvelope(k webhooks.InboxKey, payload string, receivedAt time.Time) webhooks.Envelope {
	return webhooks.Envelope{
		Key:           k,
		EventType:     "invoice.paid",
		Payload:       []byte(payload),
		Headers:       http.Header{"Content-Type": {"application/json"}},
		PayloadSHA256: sha256.Sum256([]byte(payload)),
		KeyID:         "k1",
		ReceivedAt:    receivedAt,
	}
}

// baseTime is a fixed time at microsecond precision.
var baseTime = time.Date(2026, 3, 4, 5, 6, 7, 891011000, time.UTC)

// mustEnqueueNew enqueues env and requires EnqueueNew.
func mustEnqueueNew(t testing.TB, s *pgstore.Store, env webhooks.Envelope) {
	t.Helper()
	res, err := s.Enqueue(context.Background(), env)
	require.NoError(t, err)
	require.Equal(t, webhooks.EnqueueNew, res.Outcome, "Enqueue(%s)", env.Key)
}
