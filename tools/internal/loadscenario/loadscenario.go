// Package loadscenario measures hookinbox under load: the Receiver over
// loopback HTTP, Enqueue called directly, a Processor draining a backlog,
// receiving and processing at once, and the wake-up of an idle Processor.
// Every scenario runs the library's real code against memstore or a real
// PostgreSQL (pgstore), and returns its figures as a Result.
//
// The loadtest command (tools/loadtest) runs one scenario from flags; the
// comparison with River and with hand-written SQL (tools/queuebench, a
// module of its own) runs them beside their references, in one run.
package loadscenario

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/ops"
	"github.com/hookinbox/webhooks/pgstore"
)

// Config describes the system under load. The zero value of a field takes
// the default its comment gives.
type Config struct {
	// DSN names the PostgreSQL database; empty runs on memstore. Use a
	// database of its own: the scenarios create, fill and drop a schema.
	DSN string
	// Schema is the pgstore schema. Defaults to "hookinbox_load". It is
	// dropped and created anew by every scenario.
	Schema string
	// PoolConns is the pgx pool's size. Defaults to 16.
	PoolConns int
	// EnqueueBatch is pgstore's WithEnqueueBatch. Defaults to the store's.
	EnqueueBatch int
	// Workers is the Processor's WithWorkers. Defaults to the library's.
	Workers int
	// BodyBytes is the size of each webhook's body. Defaults to 2048.
	BodyBytes int
	// Logger receives the library's logs. Defaults to errors only, on
	// standard error.
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Schema == "" {
		c.Schema = "hookinbox_load"
	}
	if c.PoolConns == 0 {
		c.PoolConns = 16
	}
	if c.BodyBytes == 0 {
		c.BodyBytes = 2048
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	}
	return c
}

// Store is the store under load, made fresh for one scenario.
type Store interface {
	webhooks.InboxStore
	webhooks.ReplayStore
	ops.Store
}

// memStores is memstore's inbox and replay store in one Store.
type memStores struct {
	*memstore.Inbox
	replay *memstore.Replay
}

func (m memStores) Register(ctx context.Context, reg webhooks.ReplayRegistration) (webhooks.ReplayOutcome, error) {
	return m.replay.Register(ctx, reg)
}

// system is one scenario's store and, for PostgreSQL, its pool.
type system struct {
	cfg   Config
	store Store
	pg    *pgstore.Store // nil on memstore
	pool  *pgxpool.Pool  // nil on memstore
}

// open makes an empty store: on PostgreSQL, a migrated schema of its own.
func open(ctx context.Context, cfg Config) (*system, error) {
	cfg = cfg.withDefaults()
	sys := &system{cfg: cfg}
	if cfg.DSN == "" {
		sys.store = memStores{memstore.NewInbox(), memstore.NewReplay()}
		return sys, nil
	}
	pcfg, err := pgxpool.ParseConfig(cfg.DSN)
	if err != nil {
		return nil, err
	}
	pcfg.MaxConns = int32(cfg.PoolConns)
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, err
	}
	if _, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{cfg.Schema}.Sanitize()+" CASCADE"); err != nil {
		pool.Close()
		return nil, err
	}
	opts := []pgstore.Option{pgstore.WithSchema(cfg.Schema), pgstore.WithLogger(cfg.Logger)}
	if cfg.EnqueueBatch > 0 {
		opts = append(opts, pgstore.WithEnqueueBatch(cfg.EnqueueBatch))
	}
	s, err := pgstore.New(pool, opts...)
	if err == nil {
		err = s.Migrate(ctx)
	}
	if err != nil {
		pool.Close()
		return nil, err
	}
	sys.store, sys.pg, sys.pool = s, s, pool
	return sys, nil
}

func (s *system) close() {
	if s.pool != nil {
		s.pool.Close()
	}
}

// table is the quoted inbox table.
func (s *system) table(name string) string { return pgx.Identifier{s.cfg.Schema, name}.Sanitize() }

// pending counts the items not yet done: pending or leased.
func (s *system) pending(ctx context.Context) (int64, error) {
	st, err := s.store.Stats(ctx, ops.StatsRequest{Now: time.Now()})
	if err != nil {
		return 0, err
	}
	return st.States[webhooks.StatePending] + st.States[webhooks.StateLeased], nil
}

// processor returns a Processor over s running h, with wake-ups from the
// store's listener on PostgreSQL, the configured workers and opts.
func (s *system) processor(h webhooks.DispatcherFunc, opts ...webhooks.ProcessorOption) (*webhooks.Processor, error) {
	all := []webhooks.ProcessorOption{webhooks.WithLogger(s.cfg.Logger)}
	if s.pg != nil {
		all = append(all, webhooks.WithWakeSource(s.pg.Listener()))
	}
	if s.cfg.Workers > 0 {
		all = append(all, webhooks.WithWorkers(s.cfg.Workers))
	}
	return webhooks.NewProcessor(s.store, h, append(all, opts...)...)
}

// DBCounters are the database's counters a scenario reports the change of.
type DBCounters struct {
	commits int64
	walLSN  string
}

// PerItem sets r's commits and WAL per processed item between two
// readings.
func (r *Result) PerItem(ctx context.Context, dsn string, before, after DBCounters) {
	if r.Processed == 0 {
		return
	}
	r.CommitsPerItem = float64(after.commits-before.commits) / float64(r.Processed)
	r.WALPerItem = float64(walDiff(ctx, dsn, before.walLSN, after.walLSN)) / float64(r.Processed)
}

// Counters reads the commits of pool's database and the WAL position.
func Counters(ctx context.Context, pool *pgxpool.Pool) (DBCounters, error) {
	var c DBCounters
	err := pool.QueryRow(ctx, countersSQL).Scan(&c.commits, &c.walLSN)
	return c, err
}

// counters reads the commits of the database and the WAL position.
func (s *system) counters(ctx context.Context) (DBCounters, error) {
	var c DBCounters
	if s.pool == nil {
		return c, nil
	}
	err := s.pool.QueryRow(ctx, countersSQL).Scan(&c.commits, &c.walLSN)
	return c, err
}

const countersSQL = `SELECT xact_commit, pg_current_wal_lsn()::text
	FROM pg_stat_database WHERE datname = current_database()`

// countersAtExit closes the pool, then reads the counters on a connection
// of its own. A backend reports its commits to the statistics when it has
// been idle a while (up to ten seconds) or when it exits: closing the pool
// makes every backend of the scenario report them.
func (s *system) countersAtExit(ctx context.Context) (DBCounters, error) {
	s.pool.Close()
	return CountersAtExit(ctx, s.cfg.DSN)
}

// CountersAtExit reads the commits of dsn's database and the WAL position,
// on a connection of its own, once the backends of pools just closed have
// exited (and so reported their commits).
func CountersAtExit(ctx context.Context, dsn string) (DBCounters, error) {
	var c DBCounters
	time.Sleep(300 * time.Millisecond)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return c, err
	}
	defer conn.Close(ctx)
	err = conn.QueryRow(ctx, countersSQL).Scan(&c.commits, &c.walLSN)
	return c, err
}

// walDiff is the WAL written between two positions, or 0 if it cannot be
// read.
func walDiff(ctx context.Context, dsn, from, to string) int64 {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0
	}
	defer conn.Close(ctx)
	var n int64
	_ = conn.QueryRow(ctx, "SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::bigint", to, from).Scan(&n)
	return n
}

// vacuum brings the tables' statistics and visibility map up to date, as
// autovacuum would after a bulk load.
func (s *system) vacuum(ctx context.Context) error {
	if s.pool == nil {
		return nil
	}
	_, err := s.pool.Exec(ctx, "VACUUM ANALYZE "+s.table("inbox_events")+", "+s.table("inbox_jobs"))
	return err
}

// Result is what a scenario measured. Fields a scenario does not measure
// are zero.
type Result struct {
	Scenario string
	Store    string // "pgstore" or "memstore"
	Elapsed  time.Duration

	// Requests, answered with a status in 2xx, per second (HTTP), or
	// calls per second (direct Enqueue).
	AckedPerSec float64
	Acked       int64
	Errors      int64
	// Latency of the acknowledgements.
	Latency Percentiles

	// Items processed per second, and their number.
	ProcessedPerSec float64
	Processed       int64
	// Backlog (items pending or leased) at the start and end.
	BacklogStart, BacklogEnd int64
	// From an item's enqueue to its handler's start (wake scenario).
	Wake Percentiles

	// Database commits and WAL bytes per processed (or acknowledged) item.
	CommitsPerItem float64
	WALPerItem     float64
	// Peak heap in use during the scenario.
	PeakHeapBytes uint64
}

// Percentiles of a latency distribution.
type Percentiles struct {
	P50, P90, P99, Max time.Duration
	N                  int
}

// LatencyOf returns the percentiles of d, which it sorts.
func LatencyOf(d []time.Duration) Percentiles { return percentiles(d) }

func percentiles(d []time.Duration) Percentiles {
	if len(d) == 0 {
		return Percentiles{}
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	at := func(q float64) time.Duration { return d[min(len(d)-1, int(q*float64(len(d))))] }
	return Percentiles{P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: d[len(d)-1], N: len(d)}
}

func (p Percentiles) String() string {
	return fmt.Sprintf("p50 %s p90 %s p99 %s max %s (n %d)", ms(p.P50), ms(p.P90), ms(p.P99), ms(p.Max), p.N)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }

// String formats r on one line, key=value, leaving out what was not
// measured.
func (r Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s store=%s elapsed=%s", r.Scenario, r.Store, r.Elapsed.Round(time.Millisecond))
	if r.Acked > 0 || r.Errors > 0 {
		fmt.Fprintf(&b, " acked=%d acked/s=%.0f errors=%d latency[%s]", r.Acked, r.AckedPerSec, r.Errors, r.Latency)
	}
	if r.Processed > 0 {
		fmt.Fprintf(&b, " processed=%d processed/s=%.0f", r.Processed, r.ProcessedPerSec)
	}
	if r.BacklogStart != 0 || r.BacklogEnd != 0 {
		fmt.Fprintf(&b, " backlog=%d→%d", r.BacklogStart, r.BacklogEnd)
	}
	if r.Wake.N > 0 {
		fmt.Fprintf(&b, " wake[%s]", r.Wake)
	}
	if r.CommitsPerItem > 0 {
		fmt.Fprintf(&b, " commits/item=%.3f wal/item=%.0fB", r.CommitsPerItem, r.WALPerItem)
	}
	if r.PeakHeapBytes > 0 {
		fmt.Fprintf(&b, " peak_heap=%.1fMB", float64(r.PeakHeapBytes)/(1<<20))
	}
	return b.String()
}

// heapWatch samples the heap in use every 50ms until stopped, keeping the
// peak.
type heapWatch struct {
	stop chan struct{}
	done chan struct{}
	peak uint64
}

func watchHeap() *heapWatch {
	w := &heapWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			w.peak = max(w.peak, ms.HeapInuse)
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
		}
	}()
	return w
}

// Peak stops the watch and returns the peak.
func (w *heapWatch) Peak() uint64 {
	close(w.stop)
	<-w.done
	return w.peak
}

// latencies collects durations from many goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d []time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d...)
	l.mu.Unlock()
}

// storeName names the store a config runs on.
func (c Config) storeName() string {
	if c.DSN == "" {
		return "memstore"
	}
	return "pgstore"
}

// errNoDB is returned by scenarios that need PostgreSQL.
var errNoDB = errors.New("loadscenario: this scenario needs PostgreSQL: give a DSN")

// Median returns, field by field, the median of rs (the lower middle of
// an even count), as one Result named after the first.
func Median(rs []Result) Result {
	if len(rs) == 0 {
		return Result{}
	}
	out := Result{Scenario: rs[0].Scenario, Store: rs[0].Store}
	mid := func(f func(Result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		sort.Float64s(v)
		return v[(len(v)-1)/2]
	}
	dur := func(f func(Result) time.Duration) time.Duration {
		return time.Duration(mid(func(r Result) float64 { return float64(f(r)) }))
	}
	out.Elapsed = dur(func(r Result) time.Duration { return r.Elapsed })
	out.AckedPerSec = mid(func(r Result) float64 { return r.AckedPerSec })
	out.Acked = int64(mid(func(r Result) float64 { return float64(r.Acked) }))
	out.Errors = int64(mid(func(r Result) float64 { return float64(r.Errors) }))
	pct := func(get func(Result) Percentiles) Percentiles {
		return Percentiles{
			P50: dur(func(r Result) time.Duration { return get(r).P50 }),
			P90: dur(func(r Result) time.Duration { return get(r).P90 }),
			P99: dur(func(r Result) time.Duration { return get(r).P99 }),
			Max: dur(func(r Result) time.Duration { return get(r).Max }),
			N:   int(mid(func(r Result) float64 { return float64(get(r).N) })),
		}
	}
	out.Latency = pct(func(r Result) Percentiles { return r.Latency })
	out.Wake = pct(func(r Result) Percentiles { return r.Wake })
	out.ProcessedPerSec = mid(func(r Result) float64 { return r.ProcessedPerSec })
	out.Processed = int64(mid(func(r Result) float64 { return float64(r.Processed) }))
	out.BacklogStart = int64(mid(func(r Result) float64 { return float64(r.BacklogStart) }))
	out.BacklogEnd = int64(mid(func(r Result) float64 { return float64(r.BacklogEnd) }))
	out.CommitsPerItem = mid(func(r Result) float64 { return r.CommitsPerItem })
	out.WALPerItem = mid(func(r Result) float64 { return r.WALPerItem })
	out.PeakHeapBytes = uint64(mid(func(r Result) float64 { return float64(r.PeakHeapBytes) }))
	return out
}
