package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/internal/testing/testlog"
	"github.com/hookinbox/webhooks/pgstore"
)

// newBusinessStore returns a store, its pool, and a business table of the
// host's in the store's schema ("<schema>".invoices).
func newBusinessStore(t *testing.T, conns int32) (*pgstore.Store, *pgxpool.Pool, string) {
	t.Helper()
	pool := pgtest.NewPool(t, conns)
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool))
	invoices := quote(s.Schema()) + ".invoices"
	_, err := pool.Exec(t.Context(), `CREATE TABLE `+invoices+` (event_id text PRIMARY KEY)`)
	require.NoError(t, err)
	return s, pool, invoices
}

// handle is a handler's work as the CompleteTx documentation shows it: the
// business write, then the completion, in one transaction that commits
// only if both succeed.
func handle(ctx context.Context, s *pgstore.Store, pool *pgxpool.Pool, invoices string, ev webhooks.Event) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO `+invoices+` (event_id) VALUES ($1)`, ev.ID); err != nil {
			return err
		}
		return s.CompleteTx(ctx, tx, ev)
	})
}

func countRows(t *testing.T, pool *pgxpool.Pool, table string) int {
	t.Helper()
	var n int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT count(*) FROM `+table).Scan(&n))
	return n
}

// TestCompleteTxWithTheHostsWrites: the business write and the completion
// commit together; a stale token fails the host's transaction, so neither
// is kept.
func TestCompleteTxWithTheHostsWrites(t *testing.T) {
	t.Parallel()
	s, pool, invoices := newBusinessStore(t, 3)
	ctx := t.Context()
	mustEnqueueNew(t, s, testEnvelope(testKey("paid"), "{}", baseTime))
	mustEnqueueNew(t, s, testEnvelope(testKey("late"), "{}", baseTime.Add(time.Second)))

	l := acquireOne(t, s, baseTime, time.Minute)
	require.NoError(t, handle(ctx, s, pool, invoices, l.Event()))
	assert.Equal(t, 1, countRows(t, pool, invoices), "the business row committed")
	it, err := s.Get(ctx, l.Key())
	require.NoError(t, err)
	assert.Equal(t, webhooks.StateSucceeded, it.State)
	assert.Equal(t, 1, it.Attempts)
	assert.ErrorIs(t, s.Settle(ctx, succeeded(l, baseTime)), webhooks.ErrAlreadySettled, "the Processor's own settlement")

	// A worker whose lease was taken over: its transaction fails.
	stale := acquireOne(t, s, baseTime.Add(time.Second), time.Minute)
	require.Equal(t, "late", stale.Key().EventID)
	current := acquireOne(t, s, baseTime.Add(time.Second+time.Minute), time.Minute)
	require.NotNil(t, current)
	before, err := s.Get(ctx, stale.Key())
	require.NoError(t, err)
	err = handle(ctx, s, pool, invoices, stale.Event())
	require.ErrorIs(t, err, webhooks.ErrLeaseLost)
	assert.Equal(t, 1, countRows(t, pool, invoices), "the stale worker's business row rolled back")
	after, err := s.Get(ctx, stale.Key())
	require.NoError(t, err)
	assert.Equal(t, before, after)
	require.NoError(t, handle(ctx, s, pool, invoices, current.Event()))
	assert.Equal(t, 2, countRows(t, pool, invoices))
}

// TestCompleteTxRefuses: every refusal fails the host's transaction, so a
// handler that ignores CompleteTx's error still cannot commit its writes.
func TestCompleteTxRefuses(t *testing.T) {
	t.Parallel()
	s, pool, invoices := newBusinessStore(t, 2)
	ctx := t.Context()
	mustEnqueueNew(t, s, testEnvelope(testKey("e1"), "{}", baseTime))
	l := acquireOne(t, s, baseTime, time.Minute)
	before, err := s.Get(ctx, l.Key())
	require.NoError(t, err)

	require.ErrorContains(t, s.CompleteTx(ctx, nil, l.Event()), "pgx.Tx")
	for name, ev := range map[string]webhooks.Event{
		"no lease token":     {Provider: "acme", Tenant: "t1", ID: "e1"},
		"a malformed token":  {Provider: "acme", Tenant: "t1", ID: "e1", LeaseToken: "not-a-uuid"},
		"an unstorable key":  {Provider: "acme", Tenant: "t1", ID: "e1\xff", LeaseToken: l.Token},
		"another item's key": {Provider: "acme", Tenant: "t1", ID: "e2", LeaseToken: l.Token},
		"a forged token":     {Provider: "acme", Tenant: "t1", ID: "e1", LeaseToken: "00000000-0000-4000-8000-000000000000"},
	} {
		tx := pgtest.Begin(t, pool)
		_, err := tx.Exec(ctx, `INSERT INTO `+invoices+` (event_id) VALUES ($1)`, name)
		require.NoError(t, err)
		assert.ErrorIs(t, s.CompleteTx(ctx, tx, ev), webhooks.ErrLeaseLost, name)
		// The handler ignores the refusal and commits: the commit fails.
		assert.ErrorIs(t, tx.Commit(ctx), pgx.ErrTxCommitRollback, name)
	}
	assert.Zero(t, countRows(t, pool, invoices), "no business write of a refused completion is kept")
	after, err := s.Get(ctx, l.Key())
	require.NoError(t, err)
	assert.Equal(t, before, after, "a refused completion changes nothing")

	require.NoError(t, handle(ctx, s, pool, invoices, l.Event()))
	assert.Equal(t, 1, countRows(t, pool, invoices))
	it, err := s.Get(ctx, l.Key())
	require.NoError(t, err)
	assert.Equal(t, webhooks.StateSucceeded, it.State)

	// Completing it again is ErrAlreadySettled, and fails that transaction too.
	tx := pgtest.Begin(t, pool)
	assert.ErrorIs(t, s.CompleteTx(ctx, tx, l.Event()), webhooks.ErrAlreadySettled)
	assert.ErrorIs(t, tx.Commit(ctx), pgx.ErrTxCommitRollback)
}

// TestCompleteTxTwiceInOneTransaction: a handler that completes its event
// twice in one transaction is not refused the second time, and the
// transaction commits the completion once.
func TestCompleteTxTwiceInOneTransaction(t *testing.T) {
	t.Parallel()
	s, pool, invoices := newBusinessStore(t, 2)
	ctx := t.Context()
	mustEnqueueNew(t, s, testEnvelope(testKey("e1"), "{}", baseTime))
	l := acquireOne(t, s, baseTime, time.Minute)
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO `+invoices+` (event_id) VALUES ('e1')`); err != nil {
			return err
		}
		if err := s.CompleteTx(ctx, tx, l.Event()); err != nil {
			return err
		}
		return s.CompleteTx(ctx, tx, l.Event())
	}))
	assert.Equal(t, 1, countRows(t, pool, invoices))
	d, err := s.Get(ctx, l.Key())
	require.NoError(t, err)
	assert.Equal(t, webhooks.StateSucceeded, d.State)
	assert.Len(t, d.History, 1)
}

// TestCompleteTxFailsTheTransactionWithADoneContext: a refusal fails the
// host's transaction even when the handler's context is already done.
func TestCompleteTxFailsTheTransactionWithADoneContext(t *testing.T) {
	t.Parallel()
	s, pool, invoices := newBusinessStore(t, 2)
	tx := pgtest.Begin(t, pool)
	_, err := tx.Exec(t.Context(), `INSERT INTO `+invoices+` (event_id) VALUES ('x')`)
	require.NoError(t, err)
	done, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, s.CompleteTx(done, tx, webhooks.Event{Provider: "acme", ID: "e1"}), webhooks.ErrLeaseLost)
	assert.ErrorIs(t, tx.Commit(t.Context()), pgx.ErrTxCommitRollback)
	assert.Zero(t, countRows(t, pool, invoices))
}

// awaitBlockedBy waits until another session waits for a lock held by the
// session with backend process ID pid.
func awaitBlockedBy(t *testing.T, pool *pgxpool.Pool, pid uint32) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		require.NoError(t, pool.QueryRow(t.Context(),
			`SELECT count(*) FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))`, int32(pid)).Scan(&n))
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no session came to wait for the transaction's row lock")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestSettlementWaitingOnCompleteTx: a settlement or lease extension that
// waits for the row a host's transaction completed reads the row as that
// transaction left it: settled when it committed (ErrAlreadySettled, not
// ErrLeaseLost), still leased when it rolled back.
func TestSettlementWaitingOnCompleteTx(t *testing.T) {
	t.Parallel()
	s, pool, _ := newBusinessStore(t, 4)
	ctx := t.Context()
	for _, c := range []struct {
		name    string
		commit  bool
		call    func(l *webhooks.Lease) error
		wantErr error
	}{
		{"settle, committed", true, func(l *webhooks.Lease) error { return s.Settle(ctx, succeeded(l, baseTime)) }, webhooks.ErrAlreadySettled},
		{"extend, committed", true, func(l *webhooks.Lease) error {
			return s.ExtendLease(ctx, webhooks.ExtendRequest{Lease: l, Now: baseTime, Duration: time.Minute})
		}, webhooks.ErrAlreadySettled},
		{"settle, rolled back", false, func(l *webhooks.Lease) error { return s.Settle(ctx, succeeded(l, baseTime)) }, nil},
	} {
		k := testKey(c.name)
		mustEnqueueNew(t, s, testEnvelope(k, "{}", baseTime))
		l := acquireOne(t, s, baseTime, time.Minute)
		require.Equal(t, k, l.Key())

		tx := pgtest.Begin(t, pool)
		var pid uint32
		require.NoError(t, tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid))
		require.NoError(t, s.CompleteTx(ctx, tx, l.Event()))
		done := make(chan error, 1)
		go func() { done <- c.call(l) }()
		awaitBlockedBy(t, pool, pid)
		if c.commit {
			require.NoError(t, tx.Commit(ctx))
		} else {
			require.NoError(t, tx.Rollback(ctx))
		}
		err := <-done
		if c.wantErr == nil {
			assert.NoError(t, err, c.name)
		} else {
			assert.ErrorIs(t, err, c.wantErr, c.name)
			assert.False(t, errors.Is(err, webhooks.ErrLeaseLost), "%s: %v", c.name, err)
		}
		it, err := s.Get(ctx, k)
		require.NoError(t, err)
		assert.Equal(t, webhooks.StateSucceeded, it.State, c.name)
	}
}

// signalingStore reports each settlement the Processor makes.
type signalingStore struct {
	*pgstore.Store
	settled chan error
}

func (s signalingStore) Settle(ctx context.Context, st webhooks.Settlement) error {
	err := s.Store.Settle(ctx, st)
	s.settled <- err
	return err
}

// SettleBatch reports each settlement of a batch: the Store is a
// webhooks.BatchSettler, and the Processor settles through it.
func (s signalingStore) SettleBatch(ctx context.Context, sts []webhooks.Settlement) []error {
	errs := s.Store.SettleBatch(ctx, sts)
	for _, err := range errs {
		s.settled <- err
	}
	return errs
}

// TestProcessorWithCompleteTx: a Processor's handler completes its event
// in its own transaction. When it commits, the item succeeded once and the
// Processor's own settlement changes nothing; when the handler fails after
// CompleteTx, its transaction rolls back and the Processor retries the item.
func TestProcessorWithCompleteTx(t *testing.T) {
	t.Parallel()
	s, pool, invoices := newBusinessStore(t, 4)
	store := signalingStore{s, make(chan error, 1)}
	mux := webhooks.NewMux()
	require.NoError(t, mux.HandleFunc("*", func(ctx context.Context, ev webhooks.Event) error {
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `INSERT INTO `+invoices+` (event_id) VALUES ($1)`, ev.ID); err != nil {
				return err
			}
			if err := s.CompleteTx(ctx, tx, ev); err != nil {
				return err
			}
			if ev.ID == "fails" {
				return errors.New("the handler fails after completing: everything rolls back")
			}
			return nil
		})
	}))
	p, err := webhooks.NewProcessor(store, mux,
		webhooks.WithWorkers(1),
		webhooks.WithPollInterval(time.Hour), // woken by the test only
		webhooks.WithLogger(testlog.Logger(t)),
	)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	running := make(chan error, 1)
	go func() { running <- p.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-running)
	}()

	mustEnqueueNew(t, s, testEnvelope(testKey("commits"), "{}", time.Now()))
	p.Wake()
	require.ErrorIs(t, <-store.settled, webhooks.ErrAlreadySettled, "the Processor's settlement after the handler's commit")
	it, err := s.Get(t.Context(), testKey("commits"))
	require.NoError(t, err)
	assert.Equal(t, webhooks.StateSucceeded, it.State)
	assert.Equal(t, 1, it.Attempts)
	assert.Equal(t, 1, countRows(t, pool, invoices))

	mustEnqueueNew(t, s, testEnvelope(testKey("fails"), "{}", time.Now()))
	p.Wake()
	require.NoError(t, <-store.settled, "the Processor settles the failed attempt")
	it, err = s.Get(t.Context(), testKey("fails"))
	require.NoError(t, err)
	assert.Equal(t, webhooks.StatePending, it.State, "retried")
	require.NotNil(t, it.LastError)
	assert.Contains(t, it.LastError.Message, "everything rolls back")
	assert.Equal(t, 1, countRows(t, pool, invoices), "the failed handler's business row rolled back")
}
