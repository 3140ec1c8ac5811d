package pgstore_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/ops"
	"github.com/hookinbox/webhooks/pgstore"
)

// enqueueConcurrently enqueues envs[i] from goroutine i, all released at
// once, and returns the outcomes.
func enqueueConcurrently(t *testing.T, s *pgstore.Store, envs []webhooks.Envelope) []webhooks.EnqueueOutcome {
	t.Helper()
	outcomes := make([]webhooks.EnqueueOutcome, len(envs))
	errs := make([]error, len(envs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, env := range envs {
		wg.Go(func() {
			<-start
			res, err := s.Enqueue(t.Context(), env)
			outcomes[i], errs[i] = res.Outcome, err
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "Enqueue from goroutine %d", i)
	}
	return outcomes
}

func count[T comparable](xs []T, x T) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}

func TestConcurrentDuplicateEnqueue(t *testing.T) {
	t.Parallel()
	const n = 48
	pool := pgtest.NewPool(t, 8)
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool))
	k := testKey("evt-dup")
	envs := make([]webhooks.Envelope, n)
	for i := range envs {
		envs[i] = testEnvelope(k, `{"n":1}`, baseTime.Add(time.Duration(i)*time.Microsecond))
	}
	outcomes := enqueueConcurrently(t, s, envs)
	assert.Equal(t, 1, count(outcomes, webhooks.EnqueueNew), "outcomes %v", outcomes)
	assert.Equal(t, n-1, count(outcomes, webhooks.EnqueueDuplicate), "outcomes %v", outcomes)

	it, err := s.Get(t.Context(), k)
	require.NoError(t, err)
	assert.Equal(t, n-1, it.DuplicateCount)
	var rows int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT count(*) FROM "`+s.Schema()+`".inbox_events`).Scan(&rows))
	assert.Equal(t, 1, rows)
}

func TestConcurrentEnqueueMixedDigests(t *testing.T) {
	t.Parallel()
	const n = 40
	pool := pgtest.NewPool(t, 8)
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool))
	k := testKey("evt-mixed")
	envs := make([]webhooks.Envelope, n)
	for i := range envs {
		envs[i] = testEnvelope(k, []string{`{"v":"a"}`, `{"v":"b"}`}[i%2], baseTime)
	}
	outcomes := enqueueConcurrently(t, s, envs)
	require.Equal(t, 1, count(outcomes, webhooks.EnqueueNew), "outcomes %v", outcomes)

	winner := envs[0]
	for i, o := range outcomes {
		if o == webhooks.EnqueueNew {
			winner = envs[i]
		}
	}
	for i, o := range outcomes {
		if o == webhooks.EnqueueNew {
			continue
		}
		want := webhooks.EnqueueConflict
		if envs[i].PayloadSHA256 == winner.PayloadSHA256 {
			want = webhooks.EnqueueDuplicate
		}
		assert.Equal(t, want, o, "goroutine %d", i)
	}
	it, err := s.Get(t.Context(), k)
	require.NoError(t, err)
	assert.Equal(t, winner.PayloadSHA256, it.PayloadSHA256)
	assert.Equal(t, string(winner.Payload), string(it.Payload))
	assert.Equal(t, n/2-1, it.DuplicateCount, "only same-digest repeats count")
}

// notifications LISTENs on s's channel on a connection of its own and
// returns a channel of the payloads received.
func notifications(t *testing.T, s *pgstore.Store) <-chan string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), pgtest.DSN(t))
	require.NoError(t, err)
	_, err = conn.Exec(t.Context(), "LISTEN "+pgx.Identifier{s.NotifyChannel()}.Sanitize())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan string, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				return
			}
			out <- n.Payload
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = conn.Close(context.Background())
	})
	return out
}

// sendMarker notifies s's channel with payload marker. Notifications arrive
// in commit order, so once the marker is received, every notification
// committed before it has been received too.
func sendMarker(t *testing.T, s *pgstore.Store, db interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}, marker string) {
	t.Helper()
	_, err := db.Exec(t.Context(), "SELECT pg_notify($1, $2)", s.NotifyChannel(), marker)
	require.NoError(t, err)
}

// nextNotification returns the next payload, failing after a generous
// timeout.
func nextNotification(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case p := <-ch:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("no notification within 10s")
		return ""
	}
}

func TestEnqueueTx(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 3)
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool))
	ctx := t.Context()
	note := notifications(t, s)
	hostTable := `"` + s.Schema() + `".host_orders`
	_, err := pool.Exec(ctx, `CREATE TABLE `+hostTable+` (id text PRIMARY KEY)`)
	require.NoError(t, err)

	t.Run("rollback stores nothing and wakes nobody", func(t *testing.T) {
		tx := pgtest.Begin(t, pool)
		res, err := s.EnqueueTx(ctx, tx, testEnvelope(testKey("rolled-back"), "{}", baseTime))
		require.NoError(t, err)
		assert.Equal(t, webhooks.EnqueueNew, res.Outcome)
		_, err = tx.Exec(ctx, `INSERT INTO `+hostTable+` VALUES ('o1')`)
		require.NoError(t, err)
		require.NoError(t, tx.Rollback(ctx))

		_, err = s.Get(ctx, testKey("rolled-back"))
		require.ErrorIs(t, err, ops.ErrNotFound)
		sendMarker(t, s, pool, "after-rollback")
		assert.Equal(t, "after-rollback", nextNotification(t, note), "a rolled-back enqueue must not notify")
	})

	t.Run("commit stores the item with the host's write and wakes once", func(t *testing.T) {
		tx := pgtest.Begin(t, pool)
		res, err := s.EnqueueTx(ctx, tx, testEnvelope(testKey("committed"), "{}", baseTime))
		require.NoError(t, err)
		assert.Equal(t, webhooks.EnqueueNew, res.Outcome)
		// Same key again in the same transaction: a duplicate, no wake.
		res, err = s.EnqueueTx(ctx, tx, testEnvelope(testKey("committed"), "{}", baseTime))
		require.NoError(t, err)
		assert.Equal(t, webhooks.EnqueueDuplicate, res.Outcome)
		// And inside a savepoint (a subtransaction).
		sub, err := tx.Begin(ctx)
		require.NoError(t, err)
		res, err = s.EnqueueTx(ctx, sub, testEnvelope(testKey("committed"), `{"other":1}`, baseTime))
		require.NoError(t, err)
		assert.Equal(t, webhooks.EnqueueConflict, res.Outcome)
		require.NoError(t, sub.Commit(ctx))
		_, err = tx.Exec(ctx, `INSERT INTO `+hostTable+` VALUES ('o2')`)
		require.NoError(t, err)

		// Invisible to others until commit.
		_, err = s.Get(ctx, testKey("committed"))
		require.ErrorIs(t, err, ops.ErrNotFound)
		require.NoError(t, tx.Commit(ctx))

		it, err := s.Get(ctx, testKey("committed"))
		require.NoError(t, err)
		assert.Equal(t, 1, it.DuplicateCount)
		assert.Equal(t, 1, it.Conflicts, "the savepoint's conflicting delivery")
		assert.Len(t, it.Quarantine, 1)
		var orders int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM `+hostTable).Scan(&orders))
		assert.Equal(t, 1, orders, "only the committed host write is there")

		assert.Equal(t, "", nextNotification(t, note), "the commit notifies")
		sendMarker(t, s, pool, "after-commit")
		assert.Equal(t, "after-commit", nextNotification(t, note), "one notification per new item")
	})

	t.Run("a redelivery replays a dead letter with the host's transaction", func(t *testing.T) {
		env := testEnvelope(testKey("dead"), "{}", baseTime.Add(-time.Hour)) // due before the other subtests' items
		mustEnqueueNew(t, s, env)
		assert.Equal(t, "", nextNotification(t, note))
		l := acquireOne(t, s, baseTime, time.Minute)
		require.NotNil(t, l)
		require.Equal(t, env.Key, l.Key())
		require.NoError(t, s.Settle(ctx, deadLettered(l, webhooks.Failure{Class: webhooks.FailurePermanent, Message: "x"}, baseTime)))
		env.ReplayIfDead = true
		for _, commit := range []bool{false, true} {
			tx := pgtest.Begin(t, pool)
			res, err := s.EnqueueTx(ctx, tx, env)
			require.NoError(t, err)
			assert.Equal(t, webhooks.EnqueueResult{Outcome: webhooks.EnqueueDuplicate, State: webhooks.StatePending, Replayed: true}, res)
			it, err := s.Get(ctx, env.Key)
			require.NoError(t, err)
			assert.Equal(t, webhooks.StateDead, it.State, "invisible to others until commit")
			if !commit {
				require.NoError(t, tx.Rollback(ctx))
				continue
			}
			require.NoError(t, tx.Commit(ctx))
		}
		it, err := s.Get(ctx, env.Key)
		require.NoError(t, err)
		assert.Equal(t, webhooks.StatePending, it.State)
		require.Len(t, it.Audit, 1, "the rolled-back replay left no audit entry")
		assert.Equal(t, ops.ActionRedelivery, it.Audit[0].Action)
		assert.Equal(t, "", nextNotification(t, note), "the commit notifies")
		sendMarker(t, s, pool, "after-redelivery")
		assert.Equal(t, "after-redelivery", nextNotification(t, note), "one notification, of the committed replay")
	})

	t.Run("nil tx", func(t *testing.T) {
		_, err := s.EnqueueTx(ctx, nil, testEnvelope(testKey("x"), "{}", baseTime))
		require.ErrorContains(t, err, "pgstore:")
	})
}

func TestEnqueueNotifiesOnlyNewItems(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	note := notifications(t, s)
	env := testEnvelope(testKey("once"), "{}", baseTime)
	mustEnqueueNew(t, s, env)
	res, err := s.Enqueue(t.Context(), env)
	require.NoError(t, err)
	require.Equal(t, webhooks.EnqueueDuplicate, res.Outcome)
	assert.Equal(t, "", nextNotification(t, note))

	pool := pgtest.NewPool(t, 1)
	sendMarker(t, s, pool, "marker")
	assert.Equal(t, "marker", nextNotification(t, note), "a duplicate must not notify")
}

func TestEnqueueRejectsTextPostgresCannotStore(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	for _, k := range []webhooks.InboxKey{
		{Provider: "acme", Tenant: "t1", EventID: "bad\xff"},
		{Provider: "acme", Tenant: "t\x00", EventID: "e"},
	} {
		_, err := s.Enqueue(t.Context(), testEnvelope(k, "{}", baseTime))
		assert.ErrorContains(t, err, "pgstore:", "key %q", k)
		// Such an item cannot exist, and the other calls say so.
		_, err = s.Get(t.Context(), k)
		assert.ErrorIs(t, err, ops.ErrNotFound)
		_, err = s.Replay(t.Context(), ops.ReplayRequest{Key: k, Actor: "a", Reason: "r", Now: baseTime})
		assert.ErrorIs(t, err, ops.ErrNotFound)
		assert.ErrorIs(t, s.CloseDeadLetter(t.Context(), ops.CloseRequest{Key: k, Actor: "a", Reason: "r", Now: baseTime}), ops.ErrNotFound)
		l := &webhooks.Lease{Token: "00000000-0000-4000-8000-000000000000", Item: webhooks.Item{Key: k}}
		assert.ErrorIs(t, s.Settle(t.Context(), succeeded(l, baseTime)), webhooks.ErrLeaseLost)
		tenant := k.Tenant + "\xff"
		page, err := s.List(t.Context(), ops.Query{Tenant: &tenant, Limit: 10})
		assert.NoError(t, err)
		assert.Empty(t, page.Items)
		res, err := s.Replay(t.Context(), ops.ReplayRequest{Query: &ops.Query{Tenant: &tenant, Limit: 10}, Actor: "a", Reason: "r", Now: baseTime})
		assert.NoError(t, err)
		assert.Empty(t, res.Items)
	}
	// Payloads are bytes: anything goes.
	env := testEnvelope(testKey("binary"), "", baseTime)
	env.Payload = []byte{0, 0xff, 0xfe, '\n'}
	mustEnqueueNew(t, s, env)
	it, err := s.Get(t.Context(), env.Key)
	require.NoError(t, err)
	assert.Equal(t, env.Payload, it.Payload)
}

// TestEnqueueStoresHeadersWithNUL: jsonb cannot hold NUL, so a NUL byte in
// a header name or value is stored as U+FFFD (as invalid UTF-8 is) instead
// of failing every delivery of the event with a 503.
func TestEnqueueStoresHeadersWithNUL(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	env := testEnvelope(testKey("nul"), "{}", baseTime)
	env.Headers = http.Header{
		"X-Value":           {"a\x00b", "ok"},
		"X-Name\x00":        {"v1"},
		"X-Name\uFFFD":      {"v2"}, // the same name once cleaned: merged, in name order
		"X-Invalid\xff":     {"c\xffd"},
		"Content-Type":      {"application/json"},
		"X-Empty-Value\x00": {""},
	}
	mustEnqueueNew(t, s, env)
	it, err := s.Get(t.Context(), env.Key)
	require.NoError(t, err)
	assert.Equal(t, http.Header{
		"X-Value":             {"a\uFFFDb", "ok"},
		"X-Name\uFFFD":        {"v1", "v2"},
		"X-Invalid\uFFFD":     {"c\uFFFDd"},
		"Content-Type":        {"application/json"},
		"X-Empty-Value\uFFFD": {""},
	}, it.Headers)
	assert.Equal(t, "a\x00b", env.Headers["X-Value"][0], "the caller's headers are left alone")

	// A redelivery with the same headers is a duplicate, not an error.
	res, err := s.Enqueue(t.Context(), env)
	require.NoError(t, err)
	assert.Equal(t, webhooks.EnqueueDuplicate, res.Outcome)
}

// TestEnqueueTimesOutsideTimestamptz: OccurredAt is the provider's claim; one
// that timestamptz cannot hold is stored as unknown (zero) instead of failing
// every delivery. The range's ends themselves are kept. A zero ReceivedAt is
// stored as is.
func TestEnqueueTimesOutsideTimestamptz(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	first := time.Date(-4713, 11, 24, 0, 0, 0, 0, time.UTC)            // 4714-11-24 BC
	last := time.Date(294276, 12, 31, 23, 59, 59, 999999000, time.UTC) // 294276-12-31 23:59:59.999999
	for i, c := range []struct {
		occurred, want time.Time
	}{
		{time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC), time.Time{}},
		{time.Date(-5000, 1, 1, 0, 0, 0, 0, time.UTC), time.Time{}},
		{time.Date(1_000_000_000, 1, 1, 0, 0, 0, 0, time.UTC), time.Time{}}, // beyond int64 µs
		{first.Add(-time.Nanosecond), time.Time{}},
		{last.Add(time.Microsecond), time.Time{}},
		{first, first},
		{last, last},
		{time.Date(2026, 1, 2, 3, 4, 5, 6000, time.FixedZone("x", 3600)), time.Date(2026, 1, 2, 2, 4, 5, 6000, time.UTC)},
	} {
		env := testEnvelope(testKey(fmt.Sprintf("occurred-%d", i)), "{}", baseTime)
		env.OccurredAt = c.occurred
		mustEnqueueNew(t, s, env)
		it, err := s.Get(t.Context(), env.Key)
		require.NoError(t, err)
		assert.True(t, it.OccurredAt.Equal(c.want), "OccurredAt %v: stored %v, want %v", c.occurred, it.OccurredAt, c.want)
	}

	env := testEnvelope(testKey("received-zero"), "{}", time.Time{})
	mustEnqueueNew(t, s, env)
	it, err := s.Get(t.Context(), env.Key)
	require.NoError(t, err)
	assert.True(t, it.ReceivedAt.IsZero(), "ReceivedAt %v", it.ReceivedAt)
}
