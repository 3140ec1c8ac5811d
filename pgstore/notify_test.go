package pgstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/pgstore"
	"github.com/hookinbox/webhooks/pgstore/internal/pgtest"
)

// notifyLockHolder is a session seen holding PostgreSQL's notification-queue
// lock: the lock a notifying transaction takes at commit (a lock on the
// shared object pg_database/0) and keeps until its commit is flushed.
type notifyLockHolder struct {
	pid   uint32
	query string
}

// watchNotifyLock polls pg_locks until stop is closed and returns the
// sessions it saw holding the notification-queue lock, each with the
// statement it was running then.
//
// pg_locks and pg_stat_activity are not read atomically together: a
// session may release the lock and start its next statement in between,
// and then the lock would be pinned on that statement. So each poll reads
// the sessions' statements before and after reading the locks, and takes a
// holder's statement only when it is the same one (same query_start) both
// times, that is, it ran throughout.
func watchNotifyLock(t *testing.T, stop <-chan struct{}) <-chan []notifyLockHolder {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), pgtest.DSN(t))
	require.NoError(t, err)
	out := make(chan []notifyLockHolder, 1)
	go func() {
		defer func() { _ = conn.Close(context.Background()) }()
		var seen []notifyLockHolder
		defer func() { out <- seen }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			// Each statement is its own transaction, so each reads a fresh
			// pg_stat_activity.
			before, err := statements(conn)
			if err != nil {
				t.Errorf("watching pg_stat_activity: %v", err)
				return
			}
			rows, _ := conn.Query(context.Background(), `
				SELECT pid FROM pg_locks
				WHERE locktype = 'object' AND classid = 'pg_database'::regclass
					AND objid = 0 AND granted`)
			pids, err := pgx.CollectRows(rows, pgx.RowTo[uint32])
			if err != nil {
				t.Errorf("watching pg_locks: %v", err)
				return
			}
			after, err := statements(conn)
			if err != nil {
				t.Errorf("watching pg_stat_activity: %v", err)
				return
			}
			for _, pid := range pids {
				b, okB := before[pid]
				a, okA := after[pid]
				if okB && okA && b.start.Equal(a.start) && b.query == a.query {
					seen = append(seen, notifyLockHolder{pid: pid, query: a.query})
				}
			}
			time.Sleep(500 * time.Microsecond)
		}
	}()
	return out
}

// statement is what a session is running, as pg_stat_activity shows it.
type statement struct {
	query string
	start time.Time
}

// statements returns the statement of every client session.
func statements(conn *pgx.Conn) (map[uint32]statement, error) {
	rows, _ := conn.Query(context.Background(),
		`SELECT pid, query, query_start FROM pg_stat_activity WHERE query_start IS NOT NULL`)
	m := map[uint32]statement{}
	var (
		pid uint32
		st  statement
	)
	_, err := pgx.ForEachRow(rows, []any{&pid, &st.query, &st.start}, func() error {
		m[pid] = st
		return nil
	})
	return m, err
}

// TestEnqueueCommitsWithoutTheNotificationLock: a transaction that sends
// NOTIFY holds the cluster-wide notification-queue lock from its pre-commit
// step until its commit record is flushed, so notifying commits run one at a
// time. Enqueue must not notify in its own statement (the store's notifier
// sends the wake-up separately); EnqueueTx, by default, notifies inside the
// host's transaction and does take the lock when that commits. Commits are
// slowed to 40ms so that a held lock is easy to see.
func TestEnqueueCommitsWithoutTheNotificationLock(t *testing.T) {
	t.Parallel()
	plain := pgtest.NewPool(t, 1)
	schema := pgtest.NewSchema(t, plain)
	newStoreOn(t, plain, schema) // migrate without slow commits
	slow := pgtest.NewSlowCommitPool(t, 2, 40*time.Millisecond)
	s, err := pgstore.New(slow, pgstore.WithSchema(schema), pgstore.WithLogger(testLogger(t)))
	require.NoError(t, err)
	ctx := t.Context()
	wakes := startListener(t, s)
	awaitWake(t, wakes, "Listen wakes once it listens")
	drain(wakes)

	// EnqueueTx: the host's COMMIT holds the lock. (This also shows the
	// watch can see the lock.)
	pids := map[uint32]bool{}
	stop := make(chan struct{})
	seenCh := watchNotifyLock(t, stop)
	seenTxLock := func(seen []notifyLockHolder) bool {
		for _, h := range seen {
			if pids[h.pid] && strings.EqualFold(h.query, "commit") {
				return true
			}
		}
		return false
	}
	var seen []notifyLockHolder
	for i := 0; ; i++ {
		require.Less(t, i, 100, "the notification lock was never seen held by an EnqueueTx commit")
		tx, err := slow.Begin(ctx)
		require.NoError(t, err)
		pids[tx.Conn().PgConn().PID()] = true
		_, err = s.EnqueueTx(ctx, tx, testEnvelope(testKey(fmt.Sprintf("tx-%d", i)), "{}", baseTime))
		require.NoError(t, err)
		require.NoError(t, tx.Commit(ctx))
		if i%4 == 3 {
			close(stop)
			seen = <-seenCh
			if seenTxLock(seen) {
				break
			}
			stop = make(chan struct{})
			seenCh = watchNotifyLock(t, stop)
		}
	}

	// Enqueue: its statement never holds the lock (the notifier's own
	// SELECT pg_notify may, briefly), and its wake-ups still arrive.
	drain(wakes)
	stop = make(chan struct{})
	seenCh = watchNotifyLock(t, stop)
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Go(func() {
			for i := range 6 {
				_, err := s.Enqueue(ctx, testEnvelope(testKey(fmt.Sprintf("plain-%d-%d", g, i)), "{}", baseTime))
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	close(stop)
	var held int
	for _, h := range <-seenCh {
		if strings.Contains(h.query, schema) {
			held++
		}
	}
	assert.Zero(t, held, "times an enqueue statement was seen holding the notification lock during its commit")
	awaitWake(t, wakes, "the notifier wakes the listener after Enqueue")
}

// TestEnqueueTxWithoutNotifyInTx: with WithoutNotifyInTx, EnqueueTx sends
// nothing in the host's transaction; Notify sends the wake-up afterwards.
func TestEnqueueTxWithoutNotifyInTx(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 3)
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool), pgstore.WithoutNotifyInTx())
	ctx := t.Context()
	note := notifications(t, s)

	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	res, err := s.EnqueueTx(ctx, tx, testEnvelope(testKey("quiet"), "{}", baseTime))
	require.NoError(t, err)
	require.Equal(t, webhooks.EnqueueNew, res.Outcome)
	require.NoError(t, tx.Commit(ctx))
	sendMarker(t, s, pool, "after-commit")
	assert.Equal(t, "after-commit", nextNotification(t, note), "the transaction sent no notification")

	s.Notify()
	assert.Equal(t, "", nextNotification(t, note), "Notify sends one")

	// Plain Enqueue still notifies, through the notifier.
	mustEnqueueNew(t, s, testEnvelope(testKey("plain"), "{}", baseTime))
	assert.Equal(t, "", nextNotification(t, note))
}
