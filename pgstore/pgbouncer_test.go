package pgstore_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/internal/testing/testlog"
	"github.com/hookinbox/webhooks/ops"
	"github.com/hookinbox/webhooks/pgstore"
	"github.com/hookinbox/webhooks/providers"
	"github.com/hookinbox/webhooks/storetest"
	"github.com/hookinbox/webhooks/webhookstest"
)

// The tests here run the store through a real PgBouncer in front of the
// test database (pgtest.StartPgBouncer; skipped where pgbouncer is not
// installed, required in CI).

// transactionPoolingModes are pgx's query exec modes (its
// default_query_exec_mode connection parameter) the store is tested in
// behind transaction pooling: those that keep no prepared statement on a
// server connection past one round trip, for the pooler hands it to other
// clients between transactions. exec, which pgstore's documentation
// recommends there, runs always, the groups of pooledFeatures; the whole
// suites, and the other modes, under WEBHOOKS_TEST_LONG=1.
//
// pgx's default, cache_statement, prepares named statements once per
// client connection, and fails there (prepared statement "stmtcache_…"
// already exists, SQLSTATE 42P05). describe_exec prepares the unnamed
// statement in one round trip and runs it in the next, which may reach
// another server connection: unnamed prepared statement does not exist
// (SQLSTATE 26000), or another client's (bind message supplies 8
// parameters, but prepared statement "" requires 1).
var transactionPoolingModes = []struct {
	mode string
	long bool
}{
	{"exec", false},
	{"simple_protocol", true},
	{"cache_describe", true},
}

// runConformance runs the inbox and replay conformance suites, with f,
// on stores whose pools, the one that migrates the schemas too, connect
// to dsn.
func runConformance(t *testing.T, dsn string, f storetest.Features) {
	schemas := newRecycledSchemasAt(t, dsn, nil)
	runInboxConformanceWith(t, schemas, f)
	runReplayConformance(t, schemas)
}

// pooledFeatures are the suite's features through a pooler:
// otherRunFeatures, and, without WEBHOOKS_TEST_LONG=1, only the groups
// whose cases run each kind of the hot path's statements and the store's
// own transactions through it (enqueue, every settlement, start, repeat,
// the Limits acquisitions' advisory lock and batch, CompleteTx), to keep
// make test within its two minutes; the whole suite runs through the
// pooler in every mode under WEBHOOKS_TEST_LONG=1 (.ci/run's long steps).
func pooledFeatures() storetest.Features {
	f := otherRunFeatures()
	if os.Getenv("WEBHOOKS_TEST_LONG") != "1" {
		f.Groups = []string{"Pipeline", "BatchSettler", "LeaseStarter", "AcquisitionRepeater", "Limits", "CompleteInTx"}
	}
	return f
}

// TestPgBouncerTransactionPoolingConformance runs the conformance suites
// through transaction pooling, in transactionPoolingModes.
func TestPgBouncerTransactionPoolingConformance(t *testing.T) {
	t.Parallel()
	for _, m := range transactionPoolingModes {
		t.Run(m.mode, func(t *testing.T) {
			t.Parallel()
			if m.long && os.Getenv("WEBHOOKS_TEST_LONG") != "1" {
				t.Skipf("the conformance suites through transaction pooling in pgx's %s mode run under WEBHOOKS_TEST_LONG=1 (exec runs always)", m.mode)
			}
			b := pgtest.StartPgBouncer(t, pgtest.PgBouncerConfig{Mode: pgtest.TransactionPooling})
			runConformance(t, pgtest.WithParam(t, b.DSN, "default_query_exec_mode", m.mode), pooledFeatures())
		})
	}
}

// TestPgBouncerSessionPoolingConformance runs the conformance suites
// through session pooling with pgx's defaults, under WEBHOOKS_TEST_LONG=1
// only: it adds several seconds, for a mode that keeps each client's
// server connection for its whole session (the other tests here use it
// too). The pooler has a server connection for each client connection the
// suite may hold at once, or it would make the surplus wait: the admin
// pool's, and a pool's worth for each case running in parallel (go test
// -parallel) and for the store each group of cases holds while they run.
func TestPgBouncerSessionPoolingConformance(t *testing.T) {
	t.Parallel()
	if os.Getenv("WEBHOOKS_TEST_LONG") != "1" {
		t.Skip("the conformance suites through session pooling run under WEBHOOKS_TEST_LONG=1 (TestTwoInstancesThroughPgBouncer/session runs always)")
	}
	parallel := flag.Lookup("test.parallel").Value.(flag.Getter).Get().(int)
	size := 2 + storePoolConns*(parallel+1)
	b := pgtest.StartPgBouncer(t, pgtest.PgBouncerConfig{Mode: pgtest.SessionPooling, PoolSize: size})
	runConformance(t, b.DSN, pooledFeatures())
}

// bouncedPool returns a pool of storePoolConns connections through b, in
// pgx's query exec mode (empty: pgx's default).
func bouncedPool(t *testing.T, b *pgtest.PgBouncer, mode string) *pgxpool.Pool {
	t.Helper()
	dsn := b.DSN
	if mode != "" {
		dsn = pgtest.WithParam(t, dsn, "default_query_exec_mode", mode)
	}
	return pgtest.NewPoolAt(t, dsn, storePoolConns, nil)
}

// warnLog is a logger's handler that writes to the test's output and
// keeps the messages of the warnings.
type warnLog struct {
	slog.Handler
	mu    sync.Mutex
	warns []string
	seen  chan string // each warning's message, when there is room
}

func newWarnLog(t *testing.T) (*slog.Logger, *warnLog) {
	w := &warnLog{Handler: slog.NewTextHandler(testlog.Output(t), nil), seen: make(chan string, 100)}
	return slog.New(w), w
}

func (w *warnLog) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		w.mu.Lock()
		w.warns = append(w.warns, r.Message)
		w.mu.Unlock()
		select {
		case w.seen <- r.Message:
		default:
		}
	}
	return w.Handler.Handle(ctx, r)
}

// all returns the warnings' messages so far.
func (w *warnLog) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.warns)
}

// count returns how many warnings so far contain s.
func (w *warnLog) count(s string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, m := range w.warns {
		if strings.Contains(m, s) {
			n++
		}
	}
	return n
}

// wakeSourceFunc adapts a function to webhooks.WakeSource.
type wakeSourceFunc func(ctx context.Context, wake func()) error

func (f wakeSourceFunc) Listen(ctx context.Context, wake func()) error { return f(ctx, wake) }

// runProcessor runs p until the returned stop is called, or the test ends.
func runProcessor(t *testing.T, p *webhooks.Processor) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	running := make(chan error, 1)
	go func() { running <- p.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			assert.NoError(t, <-running, "Run")
		})
	}
	t.Cleanup(stop)
	return stop
}

// lostNotifications is the start of the listener's warning that its own
// notification did not come back.
const lostNotifications = "pgstore: notifications do not reach the listener"

// TestListenerBehindTransactionPooling: behind transaction pooling LISTEN
// does not outlive its statement, so the listener's own notification never
// comes back. It says so once, wakes no one, keeps its goroutine until its
// context ends, and a Processor on the same store finds the work by
// polling.
func TestListenerBehindTransactionPooling(t *testing.T) {
	t.Parallel()
	b := pgtest.StartPgBouncer(t, pgtest.PgBouncerConfig{Mode: pgtest.TransactionPooling})
	pool := bouncedPool(t, b, "exec")
	logger, log := newWarnLog(t)
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool), pgstore.WithLogger(logger))

	var (
		handled sync.WaitGroup
		wakes   atomic.Int32
	)
	const items = 20
	handled.Add(items)
	mux := webhooks.NewMux()
	require.NoError(t, mux.HandleFunc("*", func(context.Context, webhooks.Event) error {
		handled.Done()
		return nil
	}))
	listener := s.Listener()
	p, err := webhooks.NewProcessor(s, mux,
		webhooks.WithPollInterval(100*time.Millisecond),
		webhooks.WithWakeSource(wakeSourceFunc(func(ctx context.Context, wake func()) error {
			return listener.Listen(ctx, func() { wakes.Add(1); wake() })
		})),
		webhooks.WithLogger(logger))
	require.NoError(t, err)
	start := time.Now()
	stop := runProcessor(t, p)

	select {
	case msg := <-log.seen:
		require.Contains(t, msg, lostNotifications)
	case <-time.After(15 * time.Second):
		t.Fatal("the listener behind transaction pooling did not warn within 15s")
	}
	t.Logf("the listener warned %v after starting", time.Since(start).Round(time.Millisecond))
	for i := range items {
		mustEnqueueNew(t, s, testEnvelope(testKey(fmt.Sprintf("e%02d", i)), "{}", time.Now()))
	}
	enqueued := time.Now()
	finished := make(chan struct{})
	go func() { handled.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(30 * time.Second):
		t.Fatal("the items enqueued after the warning were not all handled within 30s of polling")
	}
	t.Logf("%d items handled %v after they were enqueued, by polling every 100ms", items, time.Since(enqueued).Round(time.Millisecond))
	stop()
	assert.Equal(t, 1, log.count(lostNotifications), "one warning")
	assert.Zero(t, log.count("reconnecting"), "the listener does not try again")
	assert.Zero(t, wakes.Load(), "nothing woke the processor")
}

// TestListenerDirect: on a connection of its own the listener's check
// passes: it wakes once it listens, then within milliseconds of an
// enqueue, and warns of nothing. Another listener's check notification
// wakes no one.
func TestListenerDirect(t *testing.T) {
	t.Parallel()
	logger, log := newWarnLog(t)
	s := newStore(t, pgstore.WithLogger(logger))
	wakes := startListener(t, s)
	awaitWake(t, wakes, "Listen wakes once its own notification came back")
	drain(wakes)
	enqueued := time.Now()
	mustEnqueueNew(t, s, testEnvelope(testKey("e1"), "{}", baseTime))
	awaitWake(t, wakes, "enqueue of a new item")
	t.Logf("woken %v after the enqueue", time.Since(enqueued).Round(time.Microsecond))

	// A second listener checks with a notification the first receives
	// too, before the enqueue's that follows: the first must wake once,
	// for the enqueue. No signal says a wake-up will not come: the test
	// waits 200ms for a second one, many times what one takes here.
	drain(wakes)
	awaitWake(t, startListener(t, s), "a second listener's check")
	mustEnqueueNew(t, s, testEnvelope(testKey("e2"), "{}", baseTime))
	awaitWake(t, wakes, "enqueue after the second listener's check")
	select {
	case <-wakes:
		t.Error("woken twice: the second listener's check woke the first")
	case <-time.After(200 * time.Millisecond):
	}
	assert.Empty(t, log.all())
}

// TestDirectListenerWokenThroughPgBouncer is the setup docs/postgresql.md
// gives for transaction pooling: the store on a pool through PgBouncer,
// its Listener on a store of its own straight to PostgreSQL, in the same
// schema. An enqueue through the pooler wakes it: the Processor, which
// never polls in this test, handles the item.
func TestDirectListenerWokenThroughPgBouncer(t *testing.T) {
	t.Parallel()
	b := pgtest.StartPgBouncer(t, pgtest.PgBouncerConfig{Mode: pgtest.TransactionPooling})
	pooled := bouncedPool(t, b, "exec")
	logger, log := newWarnLog(t)
	schema := pgtest.NewSchema(t, pooled)
	s := newStoreOn(t, pooled, schema, pgstore.WithLogger(logger))
	wakeStore, err := pgstore.New(pgtest.NewPool(t, 2), pgstore.WithSchema(schema), pgstore.WithLogger(logger))
	require.NoError(t, err)

	handled := make(chan time.Time, 1)
	mux := webhooks.NewMux()
	require.NoError(t, mux.HandleFunc("*", func(context.Context, webhooks.Event) error {
		handled <- time.Now()
		return nil
	}))
	woken := make(chan struct{}, 100)
	listener := wakeStore.Listener()
	p, err := webhooks.NewProcessor(s, mux,
		webhooks.WithPollInterval(time.Hour), // only the wake-up finds the item
		webhooks.WithWakeSource(wakeSourceFunc(func(ctx context.Context, wake func()) error {
			return listener.Listen(ctx, func() {
				wake()
				select {
				case woken <- struct{}{}:
				default:
				}
			})
		})),
		webhooks.WithLogger(logger))
	require.NoError(t, err)
	runProcessor(t, p)
	awaitWake(t, woken, "the direct listener listens")

	enqueued := time.Now()
	mustEnqueueNew(t, s, testEnvelope(testKey("e1"), "{}", enqueued))
	select {
	case at := <-handled:
		t.Logf("handled %v after an enqueue through PgBouncer", at.Sub(enqueued).Round(time.Microsecond))
	case <-time.After(15 * time.Second):
		t.Fatal("an enqueue through PgBouncer did not wake the direct listener's processor within 15s")
	}
	assert.Empty(t, log.all())
}

// TestListenerBehindTransactionPoolingUnlistens: once the listener gives
// up behind transaction pooling it sends UNLISTEN, which PgBouncer hands to
// the server connection it got back last: here the one that ran LISTEN
// (nothing else runs). That connection must not keep listening, or every
// later notification would go to whichever client holds it at the time
// (pgx keeps them, unread, on that pooled connection). The probes are new
// clients, each sending a notification on the channel: a server
// connection still listening would hand it straight back.
func TestListenerBehindTransactionPoolingUnlistens(t *testing.T) {
	t.Parallel()
	b := pgtest.StartPgBouncer(t, pgtest.PgBouncerConfig{Mode: pgtest.TransactionPooling})
	dsn := pgtest.WithParam(t, b.DSN, "default_query_exec_mode", "exec")
	pool := pgtest.NewPoolAt(t, dsn, storePoolConns, nil)
	logger, log := newWarnLog(t)
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool), pgstore.WithLogger(logger))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var wakes atomic.Int32
	go func() { done <- s.Listener().Listen(ctx, func() { wakes.Add(1) }) }()
	select {
	case msg := <-log.seen:
		require.Contains(t, msg, lostNotifications)
	case <-time.After(15 * time.Second):
		t.Fatal("the listener behind transaction pooling did not warn within 15s")
	}

	for i := range pgtest.PgBouncerPoolSize {
		conn, err := pgx.Connect(t.Context(), dsn)
		require.NoError(t, err)
		_, err = conn.Exec(t.Context(), "SELECT pg_notify($1, 'probe')", s.NotifyChannel())
		require.NoError(t, err)
		// A notification to the sending session itself is read before the
		// statement's end: it is buffered by now, if it came.
		wctx, stop := context.WithTimeout(t.Context(), 10*time.Millisecond)
		_, err = conn.WaitForNotification(wctx)
		stop()
		assert.ErrorIs(t, err, context.DeadlineExceeded, "probe %d: a server connection still listens on the channel", i)
		require.NoError(t, conn.Close(t.Context()))
	}

	select {
	case err := <-done:
		t.Fatalf("Listen returned before its context ended: %v", err)
	default:
	}
	cancel()
	require.NoError(t, <-done)
	assert.Equal(t, 1, log.count(lostNotifications))
	assert.Zero(t, wakes.Load())
}

// TestTwoInstancesThroughPgBouncer is two instances of a host, each a
// Receiver and a Processor on a store whose pool goes through one
// PgBouncer: in transaction pooling (pgx's exec mode), where they are
// woken as docs/postgresql.md says, by a Listener on a store of its own
// straight to PostgreSQL; and in session pooling with pgx's defaults, where
// the Listener shares the pooled store. GitHub deliveries go to either
// instance, some a second time to the other; some handlers fail once, some
// outlast a lease renewal. Every delivery is answered 2xx, stored once and
// handled to success (twice for those that failed once, once for the
// others); the operators' calls and retention work through the pooler too.
func TestTwoInstancesThroughPgBouncer(t *testing.T) {
	t.Parallel()
	t.Run("transaction", func(t *testing.T) {
		t.Parallel()
		b := pgtest.StartPgBouncer(t, pgtest.PgBouncerConfig{Mode: pgtest.TransactionPooling})
		runTwoInstances(t, b, "exec", true)
	})
	t.Run("session", func(t *testing.T) {
		t.Parallel()
		// A server connection for each client one: three pools and the
		// listeners' connections.
		b := pgtest.StartPgBouncer(t, pgtest.PgBouncerConfig{Mode: pgtest.SessionPooling, PoolSize: 3*storePoolConns + 2})
		runTwoInstances(t, b, "", false)
	})
}

// runTwoInstances is TestTwoInstancesThroughPgBouncer through b, with
// pgx's query exec mode (empty: its default); directListener gives the
// Listeners stores of their own straight to PostgreSQL.
func runTwoInstances(t *testing.T, b *pgtest.PgBouncer, mode string, directListener bool) {
	const (
		deliveries  = 200
		redeliverEa = 10 // every redeliverEa-th delivery is sent to both instances
		failEach    = 25 // every failEach-th fails its first attempt
		slowEach    = 40 // every slowEach-th runs past a renewal of its lease
		lease       = 300 * time.Millisecond
	)
	seedPool := bouncedPool(t, b, mode)
	schema := pgtest.NewSchema(t, seedPool)
	seed := newStoreOn(t, seedPool, schema) // migrated through the pooler

	secret := webhookstest.NewSecret("github")
	signer, err := webhookstest.NewSigner("github", secret)
	require.NoError(t, err)
	github, err := providers.New("github", providers.Config{Secrets: webhooks.StaticSecrets(secret)})
	require.NoError(t, err)
	registry := webhooks.NewRegistry()
	require.NoError(t, registry.Register("github", github))

	var (
		mu      sync.Mutex
		runs    = map[string]int{}
		handled sync.WaitGroup
	)
	handled.Add(deliveries)
	number := func(id string) int {
		var i int
		_, _ = fmt.Sscanf(id, "evt-%d", &i)
		return i
	}
	handler := func(ctx context.Context, ev webhooks.Event) error {
		mu.Lock()
		runs[ev.ID]++
		n := runs[ev.ID]
		mu.Unlock()
		i := number(ev.ID)
		if i%failEach == 0 && n == 1 {
			return errors.New("first attempt fails")
		}
		if i%slowEach == 0 {
			select { // the handler's work, outlasting its lease unless renewed
			case <-time.After(2 * lease):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		handled.Done()
		return nil
	}
	policy := webhooks.ExponentialPolicy{InitialDelay: time.Millisecond, MaxDelay: time.Millisecond}
	receivers := make([]*webhooks.Receiver, 2)
	for i := range receivers {
		s := newStoreOn(t, bouncedPool(t, b, mode), schema)
		wakes := s
		if directListener {
			var err error
			wakes, err = pgstore.New(pgtest.NewPool(t, 2), pgstore.WithSchema(schema), pgstore.WithLogger(testlog.Logger(t)))
			require.NoError(t, err)
		}
		mux := webhooks.NewMux()
		require.NoError(t, mux.HandleFunc("*", handler))
		p, err := webhooks.NewProcessor(s, mux,
			webhooks.WithWorkers(4),
			webhooks.WithLeaseDuration(lease),
			webhooks.WithRetryPolicy(policy),
			webhooks.WithPollInterval(200*time.Millisecond),
			webhooks.WithWakeSource(wakes.Listener()),
			webhooks.WithLogger(testlog.Logger(t)),
			webhooks.WithWorkerIdentity(fmt.Sprintf("instance-%d", i), "test"))
		require.NoError(t, err)
		receivers[i], err = webhooks.NewReceiver(registry, s, webhooks.WithReplayStore(s), webhooks.WithProcessor(p))
		require.NoError(t, err)
		runProcessor(t, p)
	}

	start := time.Now()
	var acked, duplicates, refused atomic.Int32
	send := func(to int, d *webhookstest.Delivery) {
		req, err := d.Request(t.Context())
		if !assert.NoError(t, err) {
			return
		}
		rec := httptest.NewRecorder()
		receivers[to].ServeHTTP(rec, req)
		switch {
		case rec.Code == http.StatusAccepted:
			acked.Add(1)
		case rec.Code >= 200 && rec.Code < 300:
			duplicates.Add(1)
		default:
			refused.Add(1)
			t.Errorf("delivery %s to instance %d: %d %s", d.EventID, to, rec.Code, rec.Body)
		}
	}
	var senders sync.WaitGroup
	work := make(chan int)
	for range 4 {
		senders.Go(func() {
			for i := range work {
				d, err := signer.Sign("https://hooks.example.com/webhooks/github", webhookstest.Message{ID: fmt.Sprintf("evt-%04d", i)})
				if !assert.NoError(t, err) {
					continue
				}
				send(i%2, d)
				if i%redeliverEa == 0 {
					send(1-i%2, d)
				}
			}
		})
	}
	for i := range deliveries {
		work <- i
	}
	close(work)
	senders.Wait()
	require.False(t, t.Failed())
	finished := make(chan struct{})
	go func() { handled.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(time.Minute):
		t.Fatal("not every delivery was handled within a minute")
	}
	elapsed := time.Since(start)

	ctx := t.Context()
	var attempts, retried int
	for i := range deliveries {
		id := fmt.Sprintf("evt-%04d", i)
		it, err := seed.Get(ctx, webhooks.InboxKey{Provider: "github", EventID: id})
		require.NoError(t, err, id)
		assert.Equal(t, webhooks.StateSucceeded, it.State, id)
		want := 1
		if i%failEach == 0 {
			want = 2
			retried++
		}
		assert.Equal(t, want, it.Attempts, "%s attempts", id)
		mu.Lock()
		assert.Equal(t, want, runs[id], "%s handler runs", id)
		mu.Unlock()
		attempts += it.Attempts
	}
	assert.Equal(t, int32(deliveries), acked.Load(), "new deliveries answered 202")
	assert.Equal(t, int32(deliveries/redeliverEa), duplicates.Load(), "redeliveries answered as duplicates")
	stats, err := seed.Stats(ctx, ops.StatsRequest{Now: time.Now()})
	require.NoError(t, err)
	assert.Zero(t, stats.Due)
	assert.Zero(t, stats.LeasesHeld)
	if !stats.SucceededEstimated {
		assert.Equal(t, int64(deliveries), stats.States[webhooks.StateSucceeded])
	}
	dead, err := seed.List(ctx, ops.Query{Limit: 10})
	require.NoError(t, err)
	assert.Empty(t, dead.Items, "no dead letters")
	deleted, err := seed.DeleteSucceeded(ctx, time.Now().Add(time.Hour), 64)
	require.NoError(t, err)
	assert.Equal(t, int64(deliveries), deleted, "retention through the pooler")
	_, err = seed.DeleteExpiredReplayKeys(ctx, time.Now().Add(365*24*time.Hour), 64)
	require.NoError(t, err)
	t.Logf("through PgBouncer (%s pooling, pgx mode %q): %d deliveries, %d acked 202, %d redeliveries answered as duplicates, %d refused; "+
		"%d handled, %d attempts (%d retried), all within %v",
		b.Mode, mode, deliveries, acked.Load(), duplicates.Load(), refused.Load(), deliveries, attempts, retried, elapsed.Round(time.Millisecond))
}

// TestListenerThroughSessionPooling: session pooling keeps a server
// connection for the listener's whole session, so LISTEN works there: its
// check passes, and an enqueue wakes it.
func TestListenerThroughSessionPooling(t *testing.T) {
	t.Parallel()
	// Room for the pool and the connection the listener takes out of it.
	b := pgtest.StartPgBouncer(t, pgtest.PgBouncerConfig{Mode: pgtest.SessionPooling, PoolSize: storePoolConns + 1})
	pool := bouncedPool(t, b, "")
	logger, log := newWarnLog(t)
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool), pgstore.WithLogger(logger))
	wakes := startListener(t, s)
	awaitWake(t, wakes, "Listen wakes once its own notification came back")
	drain(wakes)
	mustEnqueueNew(t, s, testEnvelope(testKey("e1"), "{}", baseTime))
	awaitWake(t, wakes, "enqueue of a new item")
	assert.Empty(t, log.all())
}
