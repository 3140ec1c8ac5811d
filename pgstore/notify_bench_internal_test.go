package pgstore

import (
	"context"
	"crypto/sha256"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
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
			pool := pgtest.NewSlowCommitPool(b, 16, 5*time.Millisecond)
			s := newMigratedStore(b, pool, c.opts...)
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
