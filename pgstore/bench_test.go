package pgstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/pgstore"
)

// The benchmarks are sized for a small machine (two cores, a local server):
// pools of at most four connections.

func BenchmarkEnqueue(b *testing.B) {
	s := newStore(b)
	payload := `{"id":"evt","type":"invoice.paid","data":{"amount":1200,"currency":"eur"}}`
	i := 0
	for b.Loop() {
		i++
		env := testEnvelope(testKey(fmt.Sprintf("evt-%09d", i)), payload, baseTime)
		if _, err := s.Enqueue(b.Context(), env); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnqueueParallel calls Enqueue from 16 goroutines on a
// 4-connection pool, with group commit (the default) and without
// (WithEnqueueBatch(1): a statement and commit per call).
func BenchmarkEnqueueParallel(b *testing.B) {
	for _, c := range []struct {
		name  string
		batch int
	}{{"grouped", pgstore.DefaultEnqueueBatch}, {"single", 1}} {
		b.Run(c.name, func(b *testing.B) {
			s := newStore(b, pgstore.WithEnqueueBatch(c.batch))
			payload := strings.Repeat(`{"id":"evt","type":"invoice.paid","data":{"amount":1200,"currency":"eur"}}`, 28) // 2 KiB
			var n atomic.Int64
			b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0))) // 16 goroutines
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					env := testEnvelope(testKey(fmt.Sprintf("evt-%09d", n.Add(1))), payload, baseTime)
					if _, err := s.Enqueue(b.Context(), env); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func BenchmarkEnqueueDuplicate(b *testing.B) {
	s := newStore(b)
	env := testEnvelope(testKey("evt-dup"), "{}", baseTime)
	mustEnqueueNew(b, s, env)
	for b.Loop() {
		if _, err := s.Enqueue(b.Context(), env); err != nil {
			b.Fatal(err)
		}
	}
}

// fillPending inserts n due items directly, outside the timer.
func fillPending(b *testing.B, pool *pgxpool.Pool, s *pgstore.Store, from, n int) {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	_, err := pool.Exec(b.Context(), pgtest.InsertItemsSQL((s.Schema()), `provider, tenant, event_id, event_type, payload,
			payload_sha256, key_id, state, next_attempt_at, last_seen_at, received_at, updated_at`, `SELECT 'acme', 't1', 'evt-' || g, 'invoice.paid', '\x7b7d', sha256('\x7b7d'), 'k1',
			'pending', $1::timestamptz, $1::timestamptz, $1::timestamptz, $1::timestamptz
		FROM generate_series($2::int, $3::int) AS g`), baseTime, from, from+n-1)
	require.NoError(b, err)
}

func benchmarkAcquireSettle(b *testing.B, batch int) {
	pool := pgtest.NewPool(b, 2)
	s := newStoreOn(b, pool, pgtest.NewSchema(b, pool))
	const fill = 2000
	next := 0
	var leases []*webhooks.Lease
	now := baseTime.Add(time.Second)
	for b.Loop() {
		if len(leases) == 0 {
			var err error
			leases, err = s.Acquire(b.Context(), acquireReq(now, time.Minute, batch))
			if err != nil {
				b.Fatal(err)
			}
			if len(leases) == 0 {
				fillPending(b, pool, s, next, fill)
				next += fill
				continue
			}
		}
		if err := s.Settle(b.Context(), succeeded(leases[0], now)); err != nil {
			b.Fatal(err)
		}
		leases = leases[1:]
	}
}

// BenchmarkAcquireSettle measures one item's Acquire (Max 1) and Settle
// (an iteration that finds nothing due refills the inbox untimed).
func BenchmarkAcquireSettle(b *testing.B) { benchmarkAcquireSettle(b, 1) }

// BenchmarkAcquireBatchSettle is BenchmarkAcquireSettle with Max 16: one
// iteration is one Settle, plus an acquisition every 16.
func BenchmarkAcquireBatchSettle(b *testing.B) { benchmarkAcquireSettle(b, 16) }

// BenchmarkAcquire measures leasing a batch of 100 due items in one
// Acquire; the items are inserted untimed. ns/item is per leased item.
func BenchmarkAcquire(b *testing.B) {
	pool := pgtest.NewPool(b, 2)
	s := newStoreOn(b, pool, pgtest.NewSchema(b, pool))
	const batch = 100
	next := 0
	now := baseTime.Add(time.Second)
	leased := 0
	for b.Loop() {
		fillPending(b, pool, s, next, batch) // untimed
		next += batch
		leases, err := s.Acquire(b.Context(), acquireReq(now, time.Minute, batch))
		if err != nil || len(leases) != batch {
			b.Fatalf("Acquire: %d leases, %v", len(leases), err)
		}
		leased += len(leases)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(leased), "ns/item")
}

// BenchmarkSettleBatch measures settling leases as succeeded with one
// SettleBatch of size settlements (size 1 is the round trip of Settle);
// the items are inserted and leased untimed. ns/item is per settlement.
func BenchmarkSettleBatch(b *testing.B) {
	for _, size := range []int{1, 16, 128} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			pool := pgtest.NewPool(b, 2)
			s := newStoreOn(b, pool, pgtest.NewSchema(b, pool))
			next := 0
			now := baseTime.Add(time.Second)
			settled := 0
			for b.Loop() {
				fillPending(b, pool, s, next, size)
				b.StopTimer()
				next += size
				leases, err := s.Acquire(b.Context(), acquireReq(now, time.Minute, size))
				if err != nil || len(leases) != size {
					b.Fatalf("Acquire: %d leases, %v", len(leases), err)
				}
				sts := make([]webhooks.Settlement, len(leases))
				for i, l := range leases {
					sts[i] = succeeded(l, now)
				}
				b.StartTimer()
				for i, err := range s.SettleBatch(b.Context(), sts) {
					if err != nil {
						b.Fatalf("SettleBatch entry %d: %v", i, err)
					}
				}
				settled += size
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(settled), "ns/item")
		})
	}
}

func BenchmarkRegister(b *testing.B) {
	s := newStore(b)
	d := [32]byte{1}
	i := 0
	for b.Loop() {
		i++
		k := webhooks.ReplayRegistration{Provider: "acme", Key: fmt.Sprintf("r-%09d", i)}
		if _, err := s.Register(b.Context(), replayReg(k, d, baseTime, baseTime.Add(time.Hour))); err != nil {
			b.Fatal(err)
		}
	}
}

// keyedEnvelope is the benchmarks' envelope i with one job of handler
// "ledger": unordered for keys "none", ordered in a key of its own for
// "distinct", and in one of 100 keys (i mod 100) for "100"; unordered,
// of one of 1,000 tenants (i mod 1,000), for "tenants", of one of 10
// for "tenants10".
func keyedEnvelope(keys string, i int) webhooks.Envelope {
	env := testEnvelope(testKey(fmt.Sprintf("evt-%09d", i)), `{"id":"evt","type":"invoice.paid"}`, baseTime)
	env.Jobs = []webhooks.Job{{Handler: "ledger", Ordered: keys != "none"}}
	switch keys {
	case "tenants":
		env.Key.Tenant = fmt.Sprintf("tenant-%04d", i%1000)
		env.Jobs[0].Ordered = false
	case "tenants10":
		env.Key.Tenant = fmt.Sprintf("tenant-%04d", i%10)
		env.Jobs[0].Ordered = false
	case "priorities":
		env.Jobs[0].Ordered = false
		switch i % 10 {
		case 0:
			env.Jobs[0].Priority = 10
		case 1:
			env.Jobs[0].Priority = 5
		}
	case "distinct":
		env.Ordering = webhooks.Ordering{Key: fmt.Sprint("obj-", i), Version: int64(i)}
	case "100":
		env.Ordering = webhooks.Ordering{Key: fmt.Sprint("obj-", i%100), Version: int64(i)}
	}
	return env
}

// enqueueKeyed stores envelopes from to from+n-1 in one transaction,
// outside the timer.
func enqueueKeyed(b *testing.B, pool *pgxpool.Pool, s *pgstore.Store, keys string, from, n int) {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	tx, err := pool.Begin(b.Context())
	require.NoError(b, err)
	defer func() { _ = tx.Rollback(b.Context()) }()
	for i := from; i < from+n; i++ {
		if _, err := s.EnqueueTx(b.Context(), tx, keyedEnvelope(keys, i)); err != nil {
			b.Fatal(err)
		}
	}
	require.NoError(b, tx.Commit(b.Context()))
}

// BenchmarkAcquireSettleKeys is the Processor's path for an ordered
// handler: Acquire (Max 100) and SettleBatch (100 succeeded) timed, the
// enqueue of 100 events untimed, ns/item per job. keys=none: unordered
// jobs; distinct: each job the head of a key of its own (a key row
// written at enqueue and at settlement, no promotion); 100: 100 keys with
// a job waiting behind each head, so every settlement also promotes the
// key's next job. The gate: keyed ≥ 0.8× unkeyed.
func BenchmarkAcquireSettleKeys(b *testing.B) {
	for _, keys := range []string{"none", "distinct", "100"} {
		b.Run("keys="+keys, func(b *testing.B) {
			pool := pgtest.NewPool(b, 2)
			s := newStoreOn(b, pool, pgtest.NewSchema(b, pool))
			const batch = 100
			now := baseTime.Add(time.Second)
			next := 0
			if keys == "100" {
				enqueueKeyed(b, pool, s, keys, next, batch) // the heads
				next += batch
			}
			done := 0
			for b.Loop() {
				enqueueKeyed(b, pool, s, keys, next, batch)
				next += batch
				req := acquireReq(now, time.Minute, batch)
				req.Handler = "ledger"
				leases, err := s.Acquire(b.Context(), req)
				if err != nil || len(leases) != batch {
					b.Fatalf("Acquire: %d leases, %v", len(leases), err)
				}
				sts := make([]webhooks.Settlement, len(leases))
				for i, l := range leases {
					sts[i] = succeeded(l, now)
				}
				for i, err := range s.SettleBatch(b.Context(), sts) {
					if err != nil {
						b.Fatalf("SettleBatch entry %d: %v", i, err)
					}
				}
				done += batch
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(done), "ns/item")
		})
	}
}

// BenchmarkAcquireKeys is BenchmarkAcquireSettleKeys' acquisition alone:
// Acquire (Max 100) timed; the enqueue and the settlement untimed.
func BenchmarkAcquireKeys(b *testing.B) {
	for _, keys := range []string{"none", "distinct", "100"} {
		b.Run("keys="+keys, func(b *testing.B) {
			pool := pgtest.NewPool(b, 2)
			s := newStoreOn(b, pool, pgtest.NewSchema(b, pool))
			const batch = 100
			now := baseTime.Add(time.Second)
			next := 0
			if keys == "100" {
				enqueueKeyed(b, pool, s, keys, next, batch)
				next += batch
			}
			done := 0
			for b.Loop() {
				enqueueKeyed(b, pool, s, keys, next, batch)
				next += batch
				req := acquireReq(now, time.Minute, batch)
				req.Handler = "ledger"
				leases, err := s.Acquire(b.Context(), req)
				if err != nil || len(leases) != batch {
					b.Fatalf("Acquire: %d leases, %v", len(leases), err)
				}
				done += batch
				b.StopTimer()
				sts := make([]webhooks.Settlement, len(leases))
				for i, l := range leases {
					sts[i] = succeeded(l, now)
				}
				for i, err := range s.SettleBatch(b.Context(), sts) {
					if err != nil {
						b.Fatalf("SettleBatch entry %d: %v", i, err)
					}
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(done), "ns/item")
		})
	}
}

// BenchmarkAcquireLimits is BenchmarkAcquireKeys' unordered acquisition
// under webhooks.Limits that do not bind (a cap and a rate far above what
// runs), with the previous acquisition's 100 leases still running, so the
// cap counts them: the cost of the advisory lock, the count and the
// bucket over a plain acquisition (limits=none). Acquire (Max 100)
// timed; the enqueue and the settlement untimed. The fair cases spread
// the events over 1,000 tenants (each batch, 100 of them, one job each:
// the walk's worst case) or 10 (ten jobs each), and acquire with Fair,
// which walks the tenants: those of the running leases and those of the
// new batch (none,tenants=… is the plain acquisition of the same
// events). The priorities cases give a tenth of the jobs priority 10 and
// a tenth 5, and acquire with Priorities 10, 5 (none,priorities: the
// plain acquisition of the same jobs). The gates: limited ≥ 0.8×
// plain, and Fair with caps among many tenants ≥ 0.8× plain.
func BenchmarkAcquireLimits(b *testing.B) {
	all := webhooks.Limits{MaxRunning: webhooks.MaxLimitCount, Rate: webhooks.MaxLimitRate, Burst: webhooks.MaxLimitCount}
	levels := []int{10, 5}
	for _, c := range []struct {
		name       string
		limits     webhooks.Limits
		fair       bool
		keys       string // keyedEnvelope's
		priorities []int
	}{
		{"none", webhooks.Limits{}, false, "none", nil},
		{"cap", webhooks.Limits{MaxRunning: webhooks.MaxLimitCount}, false, "none", nil},
		{"rate", webhooks.Limits{Rate: webhooks.MaxLimitRate, Burst: webhooks.MaxLimitCount}, false, "none", nil},
		{"cap+rate", all, false, "none", nil},
		{"none,tenants=1000", webhooks.Limits{}, false, "tenants", nil},
		{"fair,tenants=1000", webhooks.Limits{}, true, "tenants", nil},
		{"fair+cap+rate,tenants=1000", all, true, "tenants", nil},
		{"none,tenants=10", webhooks.Limits{}, false, "tenants10", nil},
		{"fair+cap+rate,tenants=10", all, true, "tenants10", nil},
		// A tenth of the jobs of priority 10, a tenth of 5: acquired by
		// due time alone, then with those priorities first.
		{"none,priorities", webhooks.Limits{}, false, "priorities", nil},
		{"priorities", webhooks.Limits{}, false, "priorities", levels},
		{"priorities+cap+rate", all, false, "priorities", levels},
	} {
		b.Run("limits="+c.name, func(b *testing.B) {
			pool := pgtest.NewPool(b, 2)
			s := newStoreOn(b, pool, pgtest.NewSchema(b, pool))
			const batch = 100
			now := baseTime.Add(time.Second)
			next, done := 0, 0
			var running []*webhooks.Lease
			for b.Loop() {
				enqueueKeyed(b, pool, s, c.keys, next, batch)
				next += batch
				req := acquireReq(now, time.Minute, batch)
				req.Handler, req.Limits, req.Fair, req.Priorities = "ledger", c.limits, c.fair, c.priorities
				leases, err := s.Acquire(b.Context(), req)
				if err != nil || len(leases) != batch {
					b.Fatalf("Acquire: %d leases, %v", len(leases), err)
				}
				done += batch
				b.StopTimer()
				sts := make([]webhooks.Settlement, len(running))
				for i, l := range running {
					sts[i] = succeeded(l, now)
				}
				for i, err := range s.SettleBatch(b.Context(), sts) {
					if err != nil {
						b.Fatalf("SettleBatch entry %d: %v", i, err)
					}
				}
				running = leases
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(done), "ns/item")
		})
	}
}

// BenchmarkEnqueueKeys is BenchmarkEnqueue with one job of handler
// "ledger", unordered or in ordering keys as keyedEnvelope makes them: the
// cost of the key row's upsert at enqueue.
func BenchmarkEnqueueKeys(b *testing.B) {
	for _, keys := range []string{"none", "distinct", "100"} {
		b.Run("keys="+keys, func(b *testing.B) {
			s := newStore(b)
			i := 0
			for b.Loop() {
				i++
				if _, err := s.Enqueue(b.Context(), keyedEnvelope(keys, i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkProcessorDrain is the Processor's whole path on pgstore: a
// backlog of b.N due events (stored untimed, 1,000 a transaction) drained
// by one Processor with the default options (100 workers) and a no-op
// handler, from its start until every event was handled; ns/item per
// event. Its CPU profile (-cpuprofile) shows the Go side of a drain.
func BenchmarkProcessorDrain(b *testing.B) {
	pool := pgtest.NewPool(b, 4)
	s := newStoreOn(b, pool, pgtest.NewSchema(b, pool))
	n := b.N
	for from := 0; from < n; from += 1000 {
		enqueueKeyed(b, pool, s, "none", from, min(1000, n-from))
	}
	var handled atomic.Int64
	all := make(chan struct{})
	d := webhooks.DispatcherFunc(func(context.Context, webhooks.Event) error {
		if handled.Add(1) == int64(n) {
			close(all)
		}
		return nil
	})
	p, err := webhooks.NewProcessor(s, webhooks.Handlers{{Name: "ledger", Dispatcher: d}},
		webhooks.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(b, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	b.ResetTimer()
	go func() { done <- p.Run(ctx) }()
	<-all
	b.StopTimer()
	cancel()
	require.NoError(b, <-done)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/item")
}
