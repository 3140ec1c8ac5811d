package pgstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/pgstore/internal/pgtest"
)

// BenchmarkEnqueueSlowCommit measures enqueue throughput with 16 concurrent
// enqueuers on a 16-connection pool when every commit takes 5ms to flush
// (commit_delay = 5000, commit_siblings = 0: a slow disk or a synchronous
// standby), depending on where the wake-up is sent:
//
//   - Enqueue: the store's notifier, after the commit, coalesced;
//   - notify-in-statement: pg_notify inside the enqueue statement, as
//     Enqueue did before; every commit holds the notification-queue lock
//     through its flush, so commits run one at a time;
//   - EnqueueTx/notify-in-tx: a transaction per enqueue, NOTIFY inside it
//     (EnqueueTx's default), the same serialisation;
//   - EnqueueTx/WithoutNotifyInTx: the same transactions without NOTIFY,
//     then Notify.
//
// Setting commit_delay needs a superuser; otherwise the benchmark is skipped.
//
//	WEBHOOKS_TEST_DATABASE_URL=… go test -run '^$' -bench EnqueueSlowCommit ./pgstore
func BenchmarkEnqueueSlowCommit(b *testing.B) {
	inTx := func(ctx context.Context, s *Store, env webhooks.Envelope) error {
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			_, err := s.EnqueueTx(ctx, tx, env)
			return err
		})
		if err == nil && !s.notifyInTx {
			s.Notify()
		}
		return err
	}
	for _, c := range []struct {
		name    string
		opts    []Option
		enqueue func(ctx context.Context, s *Store, env webhooks.Envelope) error
	}{
		{"Enqueue", nil, func(ctx context.Context, s *Store, env webhooks.Envelope) error {
			_, err := s.Enqueue(ctx, env)
			return err
		}},
		{"notify-in-statement", nil, func(ctx context.Context, s *Store, env webhooks.Envelope) error {
			_, err := s.enqueue(ctx, s.pool, env, true)
			return err
		}},
		{"EnqueueTx/notify-in-tx", nil, inTx},
		{"EnqueueTx/WithoutNotifyInTx", []Option{WithoutNotifyInTx()}, inTx},
	} {
		b.Run(c.name, func(b *testing.B) {
			pool := benchSlowCommitPool(b, 16, 5*time.Millisecond)
			s, err := New(pool, append([]Option{WithSchema(pgtest.NewSchema(b, pool))}, c.opts...)...)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Migrate(b.Context()); err != nil {
				b.Fatal(err)
			}
			payload := []byte(`{"id":"evt","type":"invoice.paid"}`)
			var seq atomic.Int64
			b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0))) // 16 goroutines
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					env := webhooks.Envelope{
						Key:           webhooks.InboxKey{Provider: "acme", Tenant: "t1", EventID: fmt.Sprintf("evt-%09d", seq.Add(1))},
						EventType:     "invoice.paid",
						Payload:       payload,
						PayloadSHA256: sha256.Sum256(payload),
						ReceivedAt:    time.Now(),
					}
					if err := c.enqueue(b.Context(), s, env); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "enqueues/s")
		})
	}
}

// benchSlowCommitPool returns a pool whose commits wait commitDelay before
// flushing, skipping b when the user may not set commit_delay.
func benchSlowCommitPool(b *testing.B, conns int32, commitDelay time.Duration) *pgxpool.Pool {
	b.Helper()
	cfg, err := pgxpool.ParseConfig(pgtest.DSN(b))
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns = conns
	cfg.MinConns = conns
	cfg.ConnConfig.RuntimeParams["commit_delay"] = fmt.Sprint(commitDelay.Microseconds())
	cfg.ConnConfig.RuntimeParams["commit_siblings"] = "0"
	pool, err := pgxpool.NewWithConfig(b.Context(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	if err := pool.Ping(b.Context()); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42501" {
			b.Skipf("the test database user may not set commit_delay: %v", err)
		}
		b.Fatal(err)
	}
	return pool
}
