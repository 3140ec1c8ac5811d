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
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/internal/testing/testlog"
	"github.com/hookinbox/webhooks/pgstore"
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
	s, err := pgstore.New(pool, append([]pgstore.Option{pgstore.WithSchema(schema), pgstore.WithLogger(testlog.Logger(t))}, opts...)...)
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

// acquireReq asks for up to max items due at now, leased for d.
func acquireReq(now time.Time, d time.Duration, max int) webhooks.AcquireRequest {
	return webhooks.AcquireRequest{Now: now, LeaseDuration: d, Max: max}
}

// acquireOne leases the longest-due item at now for d, or returns nil when
// none is due.
func acquireOne(t testing.TB, s *pgstore.Store, now time.Time, d time.Duration) *webhooks.Lease {
	t.Helper()
	leases, err := s.Acquire(context.Background(), acquireReq(now, d, 1))
	require.NoError(t, err)
	require.LessOrEqual(t, len(leases), 1)
	if len(leases) == 0 {
		return nil
	}
	return leases[0]
}

// succeeded settles l as succeeded at now.
func succeeded(l *webhooks.Lease, now time.Time) webhooks.Settlement {
	return webhooks.Settlement{Lease: l, Outcome: webhooks.AttemptSucceeded, Now: now}
}

// retried settles l as failed with f, due again at retryAt.
func retried(l *webhooks.Lease, f webhooks.Failure, retryAt, now time.Time) webhooks.Settlement {
	return webhooks.Settlement{Lease: l, Outcome: webhooks.AttemptRetried, Failure: f, RetryAt: retryAt, Now: now}
}

// deadLettered settles l as failed for good with f.
func deadLettered(l *webhooks.Lease, f webhooks.Failure, now time.Time) webhooks.Settlement {
	return webhooks.Settlement{Lease: l, Outcome: webhooks.AttemptDeadLettered, Failure: f, Now: now}
}

// abandoned gives l back unfinished.
func abandoned(l *webhooks.Lease, now time.Time) webhooks.Settlement {
	return webhooks.Settlement{Lease: l, Outcome: webhooks.AttemptAbandoned, Now: now}
}
