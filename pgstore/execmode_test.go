package pgstore_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/ops"
	"github.com/hookinbox/webhooks/pgstore"
)

// TestExecModes runs the store on pools whose statements run in each of
// pgx's query exec modes (pgtest.ExecModes), as a host's pool may be set
// up (ConnConfig.DefaultQueryExecMode, or default_query_exec_mode in the
// connection string; exec or simple_protocol behind a pooler in
// transaction mode). In exec and simple_protocol a parameter travels as
// text typed by its Go type, or interpolated into the statement, so a
// parameter whose Go type is not its column's fails there only.
//
// Each mode runs the cases below, which between them run the store's
// statements with the inputs the modes encode differently: bodies of
// every byte value, headers that need quoting and cleaning, NULLs (the
// database clock makes every "now" NULL), arrays. With
// WEBHOOKS_TEST_LONG=1 each mode but the default also runs the whole
// conformance suite (TestInboxConformance and TestReplayConformance run it
// in the default mode): a run of it per mode doubles the package's time
// under -race. To run all of the package's tests in one mode, add
// default_query_exec_mode=<mode> to WEBHOOKS_TEST_DATABASE_URL.
func TestExecModes(t *testing.T) {
	t.Parallel()
	long := os.Getenv("WEBHOOKS_TEST_LONG") == "1"
	for _, m := range pgtest.ExecModes() {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			configure := pgtest.InExecMode(m.Mode)
			newPool := func(t *testing.T) *pgxpool.Pool {
				t.Helper()
				return pgtest.NewPoolWith(t, storePoolConns, configure)
			}
			for _, c := range []struct {
				name string
				run  func(t *testing.T, pool *pgxpool.Pool)
			}{
				{"Bytes", testExecModeBytes},
				{"DatabaseClock", testExecModeDatabaseClock},
				{"Listener", testExecModeListener},
				{"CompleteTx", testExecModeCompleteTx},
				{"List", testExecModeList},
				{"Retention", testExecModeRetention},
			} {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.run(t, newPool(t))
				})
			}
			t.Run("Conformance", func(t *testing.T) {
				switch {
				case m.Mode == pgx.QueryExecModeCacheStatement:
					t.Skip("TestInboxConformance and TestReplayConformance run the suite in the default mode")
				case !long:
					t.Skip("set WEBHOOKS_TEST_LONG=1 to run the conformance suite in this mode too")
				}
				t.Parallel()
				schemas := newRecycledSchemas(t, configure)
				runInboxConformanceWith(t, schemas, otherRunFeatures())
				runReplayConformance(t, schemas)
			})
		})
	}
}

// bodyEnvelope returns an envelope for k with payload and headers.
func bodyEnvelope(k webhooks.InboxKey, payload []byte, headers http.Header) webhooks.Envelope {
	return webhooks.Envelope{
		Key:           k,
		EventType:     "invoice.paid",
		Payload:       payload,
		Headers:       headers,
		PayloadSHA256: sha256.Sum256(payload),
		KeyID:         "k1",
		ReceivedAt:    baseTime,
	}
}

// testExecModeBytes: payloads (bytea) and headers (jsonb) come back
// exactly as they went in (headers cleaned as encodeHeaders documents),
// stored by each enqueue statement (a group commit, a statement of its
// own, EnqueueTx), quarantined by each, and read back by Get and Acquire.
func testExecModeBytes(t *testing.T, pool *pgxpool.Pool) {
	ctx := t.Context()
	every := make([]byte, 256)
	for i := range every {
		every[i] = byte(i)
	}
	odd := http.Header{
		"X-Quote": {`it's "quoted", \back\slash\, \x41, \\x00, $1, ?, ''`},
		"X-Text":  {"héllo ✓ 🎉", ""},
		"X-Bad":   {"a\xffb\x00c"},
	}
	oddStored := http.Header{
		"X-Quote": odd["X-Quote"],
		"X-Text":  odd["X-Text"],
		"X-Bad":   {"a\uFFFDb\uFFFDc"},
	}
	bodies := []struct {
		name            string
		payload         []byte
		headers, stored http.Header
	}{
		{"every byte", every, odd, oddStored},
		{"invalid UTF-8", []byte("\xff\xfe\xc3\x28\xed\xa0\x80\x00 \\x00 '\\'"), nil, nil},
		{"quotes", []byte(`'); DROP TABLE inbox_items; -- E'\'' $1 \x`), http.Header{}, http.Header{}},
		{"empty", []byte{}, odd, oddStored},
		// Over 256 KiB: Enqueue stores it by a statement of its own.
		{"large", bytes.Repeat(every, 1100), odd, oddStored},
	}

	schema := pgtest.NewSchema(t, pool)
	grouped := newStoreOn(t, pool, schema)
	single := newStoreOn(t, pool, schema, pgstore.WithEnqueueBatch(1))
	tx := pgtest.Begin(t, pool)
	type want struct {
		payload []byte
		headers http.Header
	}
	stored := map[webhooks.InboxKey]want{}
	for _, how := range []struct {
		name    string
		enqueue func(webhooks.Envelope) (webhooks.EnqueueResult, error)
	}{
		{"grouped", func(env webhooks.Envelope) (webhooks.EnqueueResult, error) { return grouped.Enqueue(ctx, env) }},
		{"alone", func(env webhooks.Envelope) (webhooks.EnqueueResult, error) { return single.Enqueue(ctx, env) }},
		{"in a transaction", func(env webhooks.Envelope) (webhooks.EnqueueResult, error) { return grouped.EnqueueTx(ctx, tx, env) }},
	} {
		for _, b := range bodies {
			k := testKey(how.name + ": " + b.name)
			env := bodyEnvelope(k, b.payload, b.headers)
			for _, step := range []struct {
				env  webhooks.Envelope
				want webhooks.EnqueueOutcome
			}{
				{env, webhooks.EnqueueNew},
				{env, webhooks.EnqueueDuplicate},
				{bodyEnvelope(k, append([]byte("other "), b.payload...), b.headers), webhooks.EnqueueConflict},
			} {
				res, err := how.enqueue(step.env)
				require.NoError(t, err, "%s: %s", how.name, b.name)
				require.Equal(t, step.want, res.Outcome, "%s: %s", how.name, b.name)
			}
			stored[k] = want{b.payload, b.stored}
		}
	}
	require.NoError(t, tx.Commit(ctx))

	for k, w := range stored {
		d, err := grouped.Get(ctx, k)
		require.NoError(t, err, "Get(%s)", k)
		assert.Empty(t, byteDiff(w.payload, d.Item.Payload), "Get(%s): payload", k)
		assert.Equal(t, w.headers, d.Item.Headers, "Get(%s)", k)
		if assert.Len(t, d.Quarantine, 1, "Get(%s)", k) {
			q := d.Quarantine[0]
			assert.Empty(t, byteDiff(append([]byte("other "), w.payload...), q.Payload), "Get(%s): quarantined payload", k)
			assert.Equal(t, w.headers, q.Headers, "Get(%s): quarantined", k)
		}
	}
	leases, err := grouped.Acquire(ctx, acquireReq(baseTime, time.Minute, len(stored)+1))
	require.NoError(t, err)
	require.Len(t, leases, len(stored))
	for _, l := range leases {
		w := stored[l.Key()]
		assert.Empty(t, byteDiff(w.payload, l.Item.Payload), "Acquire: %s: payload", l.Key())
		assert.Equal(t, w.headers, l.Item.Headers, "Acquire: %s", l.Key())
	}
}

// byteDiff says how got differs from want, or returns "" when they are
// equal.
func byteDiff(want, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	i := 0
	for i < min(len(want), len(got)) && want[i] == got[i] {
		i++
	}
	return fmt.Sprintf("%d bytes, want %d; they differ from byte %d on (% x…, want % x…)",
		len(got), len(want), i, got[i:min(len(got), i+8)], want[i:min(len(want), i+8)])
}

// testExecModeDatabaseClock runs every kind of statement with the
// database clock, which makes each "now" parameter NULL (a nil
// *time.Time, also inside arrays): enqueues, acquisitions (held, with an
// ID, repeated), starts, renewals, settlements one by one and in a batch,
// redelivery of a dead letter in a transaction, replays, closing,
// listing, stats, replay keys and retention.
func testExecModeDatabaseClock(t *testing.T, pool *pgxpool.Pool) {
	ctx := t.Context()
	schema := pgtest.NewSchema(t, pool)
	s := newStoreOn(t, pool, schema, pgstore.WithDatabaseClock())
	single := newStoreOn(t, pool, schema, pgstore.WithDatabaseClock(), pgstore.WithEnqueueBatch(1))
	require.NoError(t, s.CheckSchema(ctx))
	now := time.Now()
	for i := range 6 {
		enq := s
		if i%2 == 1 {
			enq = single
		}
		mustEnqueueNew(t, enq, testEnvelope(testKey(fmt.Sprintf("e%d", i)), "{}", now))
	}

	leases, err := s.Acquire(ctx, webhooks.AcquireRequest{
		Now: now, LeaseDuration: time.Minute, Max: 10, Hold: true, Start: 2, ID: "acq-1", Worker: "w1", Version: "v1",
	})
	require.NoError(t, err)
	require.Len(t, leases, 6)
	again, err := s.RepeatAcquisition(ctx, webhooks.RepeatRequest{ID: "acq-1", Now: now})
	require.NoError(t, err)
	assert.Len(t, again, 6, "RepeatAcquisition")
	for i, err := range s.StartLeases(ctx, webhooks.StartRequest{Leases: leases[2:], Now: now, Duration: time.Minute}) {
		require.NoError(t, err, "StartLeases: lease %d", i)
	}
	require.NoError(t, s.ExtendLease(ctx, webhooks.ExtendRequest{Lease: leases[0], Now: now, Duration: 2 * time.Minute}))

	failure := webhooks.Failure{Class: webhooks.FailureError, Message: "upstream 503", Transient: true}
	require.NoError(t, s.Settle(ctx, succeeded(leases[0], now)))
	require.NoError(t, s.Settle(ctx, retried(leases[1], failure, now.Add(time.Hour), now)))
	for i, err := range s.SettleBatch(ctx, []webhooks.Settlement{
		succeeded(leases[2], now),
		retried(leases[3], failure, now.Add(time.Hour), now),
		deadLettered(leases[4], webhooks.Failure{Class: webhooks.FailurePermanent, Message: "bad"}, now),
		abandoned(leases[5], now),
	}) {
		require.NoError(t, err, "SettleBatch: settlement %d", i)
	}
	require.ErrorIs(t, s.Settle(ctx, succeeded(leases[0], now)), webhooks.ErrAlreadySettled)

	st, err := s.Stats(ctx, ops.StatsRequest{Now: now})
	require.NoError(t, err)
	assert.Equal(t, map[webhooks.State]int64{
		webhooks.StatePending: 3, webhooks.StateLeased: 0, webhooks.StateSucceeded: 2,
		webhooks.StateDead: 1, webhooks.StateClosed: 0,
	}, st.States, "Stats")
	assert.Equal(t, int64(1), st.Due, "Stats: the abandoned item is due, the retries in an hour")
	dead, err := s.List(ctx, ops.Query{Provider: "acme", Tenant: new("t1"), Limit: 10})
	require.NoError(t, err)
	require.Len(t, dead.Items, 1, "List")
	assert.Equal(t, testKey("e4"), dead.Items[0].Key)

	// A provider's redelivery replays the dead letter, in the host's
	// transaction (which notifies from there).
	tx := pgtest.Begin(t, pool)
	redelivered := testEnvelope(testKey("e4"), "{}", now)
	redelivered.ReplayIfDead = true
	res, err := s.EnqueueTx(ctx, tx, redelivered)
	require.NoError(t, err)
	assert.True(t, res.Replayed, "EnqueueTx of a dead letter's redelivery replays it")
	require.NoError(t, tx.Commit(ctx))

	// Operators replay the succeeded items (bulk, spread), and close what
	// dies again.
	bulk, err := s.Replay(ctx, ops.ReplayRequest{
		Query: &ops.Query{State: webhooks.StateSucceeded, Limit: 10}, Actor: "ops", Reason: "test", Spread: time.Second, Now: now,
	})
	require.NoError(t, err)
	assert.Equal(t, 2, bulk.Done, "bulk Replay")
	leases, err = s.Acquire(ctx, acquireReq(now, time.Minute, 10))
	require.NoError(t, err)
	require.Len(t, leases, 3, "due now: e5 (abandoned), e4 (redelivered) and the first of the spread; the other within it, e1 and e3 in an hour")
	for _, l := range leases {
		require.NoError(t, s.Settle(ctx, deadLettered(l, webhooks.Failure{Class: webhooks.FailurePermanent, Message: "again"}, now)))
	}
	one, err := s.Replay(ctx, ops.ReplayRequest{Key: leases[0].Key(), Actor: "ops", Reason: "test", Now: now})
	require.NoError(t, err)
	assert.Equal(t, 1, one.Done, "Replay of one item")
	require.NoError(t, s.CloseDeadLetter(ctx, ops.CloseRequest{Key: leases[1].Key(), Actor: "ops", Reason: "test", Now: now}))
	closed, err := s.List(ctx, ops.Query{State: webhooks.StateClosed, Limit: 10})
	require.NoError(t, err)
	assert.Len(t, closed.Items, 1, "List closed")
	d, err := s.Get(ctx, leases[1].Key())
	require.NoError(t, err)
	assert.Equal(t, webhooks.StateClosed, d.Item.State)
	assert.NotEmpty(t, d.History)
	assert.NotEmpty(t, d.Audit)

	// Replay keys and retention, both by the server's clock.
	digest := sha256.Sum256([]byte("body"))
	reg := replayReg(webhooks.ReplayRegistration{Provider: "acme", Key: "r1"}, digest, now, now.Add(time.Microsecond))
	out, err := s.Register(ctx, reg)
	require.NoError(t, err)
	assert.Equal(t, webhooks.ReplayNew, out)
	n, err := s.DeleteExpiredReplayKeys(ctx, now, 10)
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "DeleteExpiredReplayKeys")
	n, err = s.DeleteClosed(ctx, now.Add(time.Hour), 10)
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "DeleteClosed")
	n, err = s.DeleteSucceeded(ctx, now.Add(time.Hour), 10)
	require.NoError(t, err)
	assert.Zero(t, n, "DeleteSucceeded: nothing succeeded is left")
}

// testExecModeListener: a Listener on the pool wakes on each kind of
// notification: Enqueue's (the notifier's), EnqueueTx's (in the
// transaction) and Notify.
func testExecModeListener(t *testing.T, pool *pgxpool.Pool) {
	ctx := t.Context()
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool))
	wakes := startListener(t, s)
	awaitWake(t, wakes, "Listen wakes once it listens")

	drain(wakes)
	mustEnqueueNew(t, s, testEnvelope(testKey("a"), "{}", baseTime))
	awaitWake(t, wakes, "after Enqueue")

	drain(wakes)
	tx := pgtest.Begin(t, pool)
	res, err := s.EnqueueTx(ctx, tx, testEnvelope(testKey("b"), "{}", baseTime))
	require.NoError(t, err)
	require.Equal(t, webhooks.EnqueueNew, res.Outcome)
	require.NoError(t, tx.Commit(ctx))
	awaitWake(t, wakes, "after EnqueueTx committed")

	drain(wakes)
	s.Notify()
	awaitWake(t, wakes, "after Notify")
}

// testExecModeCompleteTx: CompleteTx completes an item in the host's
// transaction, a second time there too, and refuses a stale token, failing
// the transaction.
func testExecModeCompleteTx(t *testing.T, pool *pgxpool.Pool) {
	ctx := t.Context()
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool))
	mustEnqueueNew(t, s, testEnvelope(testKey("a"), "{}", baseTime))
	mustEnqueueNew(t, s, testEnvelope(testKey("b"), "{}", baseTime))
	leases, err := s.Acquire(ctx, acquireReq(baseTime, time.Minute, 2))
	require.NoError(t, err)
	require.Len(t, leases, 2)
	event := func(l *webhooks.Lease) webhooks.Event {
		k := l.Key()
		return webhooks.Event{Provider: k.Provider, Tenant: k.Tenant, ID: k.EventID, LeaseToken: l.Token}
	}

	tx := pgtest.Begin(t, pool)
	require.NoError(t, s.CompleteTx(ctx, tx, event(leases[0])))
	require.NoError(t, s.CompleteTx(ctx, tx, event(leases[0])), "a second completion in the same transaction")
	require.NoError(t, tx.Commit(ctx))
	d, err := s.Get(ctx, leases[0].Key())
	require.NoError(t, err)
	assert.Equal(t, webhooks.StateSucceeded, d.Item.State)

	stale := event(leases[1])
	stale.LeaseToken = "00000000-0000-4000-8000-000000000000"
	tx = pgtest.Begin(t, pool)
	require.ErrorIs(t, s.CompleteTx(ctx, tx, stale), webhooks.ErrLeaseLost)
	require.Error(t, tx.Commit(ctx), "a refused completion fails the transaction")
	d, err = s.Get(ctx, leases[1].Key())
	require.NoError(t, err)
	assert.Equal(t, webhooks.StateLeased, d.Item.State)
}

// testExecModeList: List pages dead letters with every filter and a
// cursor, by the caller's clock.
func testExecModeList(t *testing.T, pool *pgxpool.Pool) {
	ctx := t.Context()
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool))
	for i := range 3 {
		env := testEnvelope(testKey(fmt.Sprintf("e%d", i)), "{}", baseTime)
		env.APIVersion = "2026-01"
		mustEnqueueNew(t, s, env)
	}
	leases, err := s.Acquire(ctx, acquireReq(baseTime, time.Minute, 3))
	require.NoError(t, err)
	require.Len(t, leases, 3)
	for i, l := range leases {
		require.NoError(t, s.Settle(ctx, deadLettered(l, webhooks.Failure{Class: webhooks.FailurePermanent, Message: "bad"},
			baseTime.Add(time.Duration(i)*time.Second))))
	}
	q := ops.Query{
		Provider: "acme", Tenant: new("t1"), EventType: "invoice.paid", ErrorClass: webhooks.FailurePermanent, APIVersion: "2026-01",
		From: baseTime, To: baseTime.Add(time.Minute), Limit: 2,
	}
	var got []webhooks.InboxKey
	for range 3 {
		page, err := s.List(ctx, q)
		require.NoError(t, err)
		for _, it := range page.Items {
			got = append(got, it.Key)
		}
		if page.Next == "" {
			break
		}
		q.After = page.Next
	}
	assert.Equal(t, []webhooks.InboxKey{leases[2].Key(), leases[1].Key(), leases[0].Key()}, got, "List, newest dead first, in two pages")
}

// testExecModeRetention: each retention method deletes what it should, by
// the caller's clock.
func testExecModeRetention(t *testing.T, pool *pgxpool.Pool) {
	ctx := t.Context()
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool))
	for i := range 3 {
		mustEnqueueNew(t, s, testEnvelope(testKey(fmt.Sprintf("e%d", i)), "{}", baseTime))
	}
	leases, err := s.Acquire(ctx, acquireReq(baseTime, time.Minute, 3))
	require.NoError(t, err)
	require.Len(t, leases, 3)
	for i, err := range s.SettleBatch(ctx, []webhooks.Settlement{
		succeeded(leases[0], baseTime),
		succeeded(leases[1], baseTime),
		deadLettered(leases[2], webhooks.Failure{Class: webhooks.FailurePermanent, Message: "bad"}, baseTime),
	}) {
		require.NoError(t, err, "SettleBatch: settlement %d", i)
	}
	require.NoError(t, s.CloseDeadLetter(ctx, ops.CloseRequest{Key: leases[2].Key(), Actor: "ops", Reason: "test", Now: baseTime}))
	out, err := s.Register(ctx, replayReg(webhooks.ReplayRegistration{Provider: "acme", Key: "r1"},
		sha256.Sum256([]byte("body")), baseTime, baseTime.Add(time.Minute)))
	require.NoError(t, err)
	require.Equal(t, webhooks.ReplayNew, out)

	later := baseTime.Add(time.Hour)
	n, err := s.DeleteSucceeded(ctx, later, 1)
	require.NoError(t, err)
	assert.Equal(t, int64(2), n, "DeleteSucceeded")
	n, err = s.DeleteClosed(ctx, later, 1)
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "DeleteClosed")
	n, err = s.DeleteExpiredReplayKeys(ctx, later, 1)
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "DeleteExpiredReplayKeys")
}
