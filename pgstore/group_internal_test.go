package pgstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
)

// groupHarness drives a store's committer step by step: one batch at a
// time, batches held up by a row a test transaction locks, calls queued
// behind them counted.
type groupHarness struct {
	t    *testing.T
	s    *Store
	pool *pgxpool.Pool

	mu      sync.Mutex
	queued  int // calls that queued so far
	batches []int
	// batchBytes is each batch's size in bytes, as batches in requests.
	batchBytes []int64
	waiting    map[int]chan struct{} // closed once queued reaches the key
	onStart    func(n int)           // called as a batch of n starts
	holder     int32                 // the backend of hold's transaction
}

func newGroupHarness(t *testing.T, opts ...Option) *groupHarness {
	t.Helper()
	return newGroupHarnessWith(t, nil, opts...)
}

// newGroupHarnessWith is newGroupHarness on a pool that configure, when not
// nil, sets up (see pgtest.NewPoolWith).
func newGroupHarnessWith(t *testing.T, configure func(*pgxpool.Config), opts ...Option) *groupHarness {
	t.Helper()
	pool := pgtest.NewPoolWith(t, 6, configure)
	h := &groupHarness{t: t, s: newMigratedStore(t, pool, opts...), pool: pool}
	c := h.s.committer
	c.maxRuns = 1
	h.waiting = make(map[int]chan struct{})
	c.queued = func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.queued++
		if ch := h.waiting[h.queued]; ch != nil {
			close(ch)
			delete(h.waiting, h.queued)
		}
	}
	c.started = func(n int, bytes int64) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.batches = append(h.batches, n)
		h.batchBytes = append(h.batchBytes, bytes)
		if h.onStart != nil {
			h.onStart(n)
		}
	}
	return h
}

// untilQueued returns a channel closed once n calls in all have queued.
func (h *groupHarness) untilQueued(n int) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := make(chan struct{})
	if h.queued >= n {
		close(ch)
		return ch
	}
	h.waiting[n] = ch
	return ch
}

func (h *groupHarness) wait(ch <-chan struct{}, what string) {
	h.t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		h.t.Fatalf("timed out waiting for %s", what)
	}
}

// hold inserts key's row in a transaction of its own and keeps it open,
// so a statement storing key waits for it; release ends it (rolled back:
// the waiting statement then inserts the key itself).
func (h *groupHarness) hold(eventID string) (release func()) {
	h.t.Helper()
	tx, err := h.pool.Begin(context.Background())
	require.NoError(h.t, err)
	_, err = h.s.EnqueueTx(context.Background(), tx, envelopeOf(eventID, "held"))
	require.NoError(h.t, err)
	require.NoError(h.t, tx.QueryRow(context.Background(), "SELECT pg_backend_pid()").Scan(&h.holder))
	var once sync.Once
	release = func() { once.Do(func() { _ = tx.Rollback(context.Background()) }) }
	h.t.Cleanup(release)
	return release
}

func (h *groupHarness) queuedSoFar() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.queued
}

// call is an Enqueue running in the background.
type call struct {
	res  webhooks.EnqueueResult
	err  error
	done chan struct{}
}

func (h *groupHarness) enqueue(ctx context.Context, env webhooks.Envelope) *call {
	c := &call{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.res, c.err = h.s.Enqueue(ctx, env)
	}()
	return c
}

func (c *call) wait(t *testing.T) *call {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(20 * time.Second):
		t.Fatal("Enqueue did not return within 20s")
	}
	return c
}

func envelopeOf(eventID, payload string) webhooks.Envelope {
	return webhooks.Envelope{
		Key:           webhooks.InboxKey{Provider: "acme", Tenant: "t1", EventID: eventID},
		EventType:     "invoice.paid",
		Payload:       []byte(payload),
		PayloadSHA256: sha256.Sum256([]byte(payload)),
		KeyID:         "k1",
		ReceivedAt:    time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC),
	}
}

// stored reports whether the item eventID exists.
func (h *groupHarness) stored(eventID string) bool {
	h.t.Helper()
	var n int
	require.NoError(h.t, h.pool.QueryRow(context.Background(),
		"SELECT count(*) FROM "+quoteSchema(h.s.schema)+".inbox_events WHERE event_id = $1", eventID).Scan(&n))
	return n == 1
}

// queueBehindHeldBatch starts a batch that waits for a held row, then
// queues envs behind it, and returns the held batch's call, its release
// and the queued calls.
func (h *groupHarness) queueBehindHeldBatch(ctx context.Context, envs ...webhooks.Envelope) (*call, func(), []*call) {
	h.t.Helper()
	release := h.hold("held")
	start := h.queuedSoFar()
	started := h.untilQueued(start + 1)
	first := h.enqueue(context.Background(), envelopeOf("held", "held"))
	h.wait(started, "the held batch")
	// Queued is not yet running: wait until the held batch's statement
	// waits for the held row, so that no call queued next can join it.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
		var blocked int
		require.NoError(h.t, h.pool.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))", h.holder).Scan(&blocked))
		if blocked > 0 {
			break
		}
		require.True(h.t, time.Now().Before(deadline), "the held batch did not wait for the held row within 20s")
	}
	var calls []*call
	for i, env := range envs {
		queued := h.untilQueued(start + 2 + i)
		calls = append(calls, h.enqueue(ctx, env))
		h.wait(queued, fmt.Sprintf("call %d to queue", i+1))
	}
	return first, release, calls
}

func TestGroupCommitOneStatementForCallsThatQueued(t *testing.T) {
	t.Parallel()
	h := newGroupHarness(t)
	stored := envelopeOf("dup", "a")
	res, err := h.s.Enqueue(t.Context(), stored)
	require.NoError(t, err)
	require.Equal(t, webhooks.EnqueueNew, res.Outcome, "a lone call is stored at once")

	envs := []webhooks.Envelope{
		envelopeOf("new1", "x"), envelopeOf("dup", "a"), envelopeOf("new2", "y"), envelopeOf("dup", "b"),
		envelopeOf("race", "r1"), envelopeOf("race", "r1"), envelopeOf("race", "r2"),
	}
	first, release, calls := h.queueBehindHeldBatch(t.Context(), envs...)
	release()
	require.NoError(t, first.wait(t).err)
	assert.Equal(t, webhooks.EnqueueNew, first.res.Outcome)
	want := []webhooks.EnqueueOutcome{
		webhooks.EnqueueNew, webhooks.EnqueueDuplicate, webhooks.EnqueueNew, webhooks.EnqueueConflict,
		webhooks.EnqueueNew, webhooks.EnqueueDuplicate, webhooks.EnqueueConflict,
	}
	for i, c := range calls {
		require.NoError(t, c.wait(t).err, "call %d", i)
		assert.Equal(t, want[i], c.res.Outcome, "call %d (%s)", i, envs[i].Key.EventID)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	// The lone call, the held one, then the queued calls: one statement for
	// all but the repeats of a key already in it, which go in the next.
	assert.Equal(t, []int{1, 1, 4, 2, 1}, h.batches, "batch sizes")
}

// TestGroupCommitInEveryExecMode: a batch of several envelopes, with
// NULLs among their arrays' elements (no headers, no OccurredAt) and a
// conflicting delivery to quarantine, is stored in each of pgx's exec
// modes, every payload byte for byte (see TestExecModes).
func TestGroupCommitInEveryExecMode(t *testing.T) {
	t.Parallel()
	every := make([]byte, 256)
	for i := range every {
		every[i] = byte(i)
	}
	for _, m := range pgtest.ExecModes() {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			h := newGroupHarnessWith(t, pgtest.InExecMode(m.Mode))
			first := envelopeOf("dup", "first")
			res, err := h.s.Enqueue(t.Context(), first)
			require.NoError(t, err)
			require.Equal(t, webhooks.EnqueueNew, res.Outcome)

			withHeaders := envelopeOf("every byte", "")
			withHeaders.Payload, withHeaders.PayloadSHA256 = every, sha256.Sum256(every)
			withHeaders.Headers = http.Header{"X-Quote": {`it's "q" \x41 $1`}, "X-Bad": {"\xff"}}
			withHeaders.OccurredAt = withHeaders.ReceivedAt.Add(-time.Minute)
			conflict := envelopeOf("dup", "\x00\xff'")
			envs := []webhooks.Envelope{withHeaders, envelopeOf("plain", "\xfe\x00"), conflict}
			held, release, calls := h.queueBehindHeldBatch(t.Context(), envs...)
			release()
			require.NoError(t, held.wait(t).err)
			for i, want := range []webhooks.EnqueueOutcome{webhooks.EnqueueNew, webhooks.EnqueueNew, webhooks.EnqueueConflict} {
				require.NoError(t, calls[i].wait(t).err, "call %d", i)
				assert.Equal(t, want, calls[i].res.Outcome, "call %d", i)
			}
			h.mu.Lock()
			assert.Equal(t, []int{1, 1, 3}, h.batches, "batch sizes: the three queued calls went in one statement")
			h.mu.Unlock()

			for _, env := range envs[:2] {
				d, err := h.s.Get(t.Context(), env.Key)
				require.NoError(t, err)
				assert.True(t, bytes.Equal(env.Payload, d.Item.Payload), "%s: payload % x", env.Key, d.Item.Payload)
				assert.True(t, d.Item.OccurredAt.Equal(env.OccurredAt), "%s: OccurredAt", env.Key)
			}
			d, err := h.s.Get(t.Context(), withHeaders.Key)
			require.NoError(t, err)
			assert.Equal(t, http.Header{"X-Quote": withHeaders.Headers["X-Quote"], "X-Bad": {"\uFFFD"}}, d.Item.Headers)
			d, err = h.s.Get(t.Context(), first.Key)
			require.NoError(t, err)
			require.Len(t, d.Quarantine, 1)
			assert.True(t, bytes.Equal(conflict.Payload, d.Quarantine[0].Payload), "quarantined payload % x", d.Quarantine[0].Payload)
			assert.Nil(t, d.Quarantine[0].Headers, "no headers: NULL")
		})
	}
}

// TestGroupCommitFailedCommitFailsOnlyItsCallers: a batch whose commit
// fails (a deferred constraint trigger refuses one of its rows) answers
// every one of its callers with the error and stores none of their items;
// the batch before it and calls after it are not affected.
func TestGroupCommitFailedCommitFailsOnlyItsCallers(t *testing.T) {
	t.Parallel()
	h := newGroupHarness(t)
	schema := quoteSchema(h.s.schema)
	_, err := h.pool.Exec(t.Context(), `
		CREATE FUNCTION `+schema+`.refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.event_id = 'poison' THEN RAISE EXCEPTION 'poisoned at commit'; END IF;
			RETURN NULL;
		END $$;
		CREATE CONSTRAINT TRIGGER refuse_poison AFTER INSERT ON `+schema+`.inbox_events
			DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION `+schema+`.refuse_poison()`)
	require.NoError(t, err)

	envs := []webhooks.Envelope{envelopeOf("a", "a"), envelopeOf("poison", "p"), envelopeOf("b", "b")}
	first, release, calls := h.queueBehindHeldBatch(t.Context(), envs...)
	release()
	require.NoError(t, first.wait(t).err, "the batch before is not affected")
	assert.True(t, h.stored("held"))
	for i, c := range calls {
		err := c.wait(t).err
		require.Error(t, err, "call %d (%s) is in the batch whose commit failed", i, envs[i].Key.EventID)
		assert.Contains(t, err.Error(), "poisoned at commit")
		assert.False(t, h.stored(envs[i].Key.EventID), "%s: nothing of a failed batch is stored", envs[i].Key.EventID)
	}
	res, err := h.s.Enqueue(t.Context(), envelopeOf("a", "a"))
	require.NoError(t, err, "a later call is not affected")
	assert.Equal(t, webhooks.EnqueueNew, res.Outcome)
	h.mu.Lock()
	defer h.mu.Unlock()
	assert.Equal(t, []int{1, 3, 1}, h.batches, "batch sizes")
}

// TestGroupCommitRowErrorFailsItsEnvelopeAlone: when PostgreSQL refuses one
// row's data (here a CHECK constraint the test adds), the batch is run
// again one envelope at a time, and only that envelope fails.
func TestGroupCommitRowErrorFailsItsEnvelopeAlone(t *testing.T) {
	t.Parallel()
	h := newGroupHarness(t)
	_, err := h.pool.Exec(t.Context(), `ALTER TABLE `+quoteSchema(h.s.schema)+`.inbox_events
		ADD CONSTRAINT no_poison CHECK (event_id <> 'poison')`)
	require.NoError(t, err)

	envs := []webhooks.Envelope{envelopeOf("a", "a"), envelopeOf("poison", "p"), envelopeOf("b", "b")}
	first, release, calls := h.queueBehindHeldBatch(t.Context(), envs...)
	release()
	require.NoError(t, first.wait(t).err)
	for i, c := range calls {
		c.wait(t)
		if envs[i].Key.EventID == "poison" {
			assert.ErrorContains(t, c.err, "no_poison")
			continue
		}
		require.NoError(t, c.err, envs[i].Key.EventID)
		assert.Equal(t, webhooks.EnqueueNew, c.res.Outcome)
		assert.True(t, h.stored(envs[i].Key.EventID))
	}
	assert.False(t, h.stored("poison"))
}

// TestGroupCommitCanceledWhileQueued: a call cancelled while it waits for
// a batch returns at once with its context's error and is stored by none.
func TestGroupCommitCanceledWhileQueued(t *testing.T) {
	t.Parallel()
	h := newGroupHarness(t)
	ctx, cancel := context.WithCancel(t.Context())
	first, release, calls := h.queueBehindHeldBatch(ctx, envelopeOf("gone", "g"))
	other := h.enqueue(t.Context(), envelopeOf("stays", "s"))
	cancel()
	err := calls[0].wait(t).err
	require.ErrorIs(t, err, context.Canceled, "returned while its batch had not started")
	release()
	require.NoError(t, first.wait(t).err)
	require.NoError(t, other.wait(t).err)
	assert.Equal(t, webhooks.EnqueueNew, other.res.Outcome)
	assert.False(t, h.stored("gone"), "a request withdrawn before its batch stores nothing")
	h.mu.Lock()
	defer h.mu.Unlock()
	assert.Equal(t, []int{1, 1}, h.batches, "the cancelled call left the queue")
}

// TestGroupCommitCanceledWhileRunning: a call cancelled while its batch's
// statement runs returns at once with its context's error; the batch goes
// on for the others, so its item is stored, durable but unacknowledged,
// and the provider's next delivery is a duplicate.
func TestGroupCommitCanceledWhileRunning(t *testing.T) {
	t.Parallel()
	h := newGroupHarness(t)
	ctx, cancel := context.WithCancel(t.Context())
	releaseSecond := h.hold("held2")
	first, release, calls := h.queueBehindHeldBatch(t.Context(), envelopeOf("held2", "held2"))
	queued := h.untilQueued(3)
	victimEnv := envelopeOf("victim", "v")
	victimEnv.Payload = []byte("v") // a buffer of the caller's, reused once it returned
	victim := h.enqueue(ctx, victimEnv)
	h.wait(queued, "the victim to queue")
	started, reused := make(chan struct{}), make(chan struct{})
	h.mu.Lock()
	h.onStart = func(n int) {
		if n == 2 {
			close(started)
			// The statement is not sent before the victim gave up and
			// wrote over its buffer.
			<-reused
		}
	}
	h.mu.Unlock()
	release()
	require.NoError(t, first.wait(t).err)
	h.wait(started, "the second batch (held2 and the victim) to start")
	cancel()
	require.ErrorIs(t, victim.wait(t).err, context.Canceled, "returned while its batch runs")
	victimEnv.Payload[0] = 'X' // the caller's buffer is its own again
	close(reused)
	select {
	case <-calls[0].done:
		t.Fatal("the batch's other caller returned; its statement must still be waiting")
	default:
	}
	releaseSecond()
	require.NoError(t, calls[0].wait(t).err)
	assert.True(t, h.stored("victim"), "the batch went on: the item is durable though unacknowledged")
	var payload []byte
	require.NoError(t, h.pool.QueryRow(t.Context(), "SELECT payload FROM "+quoteSchema(h.s.schema)+".inbox_events WHERE event_id = 'victim'").Scan(&payload))
	assert.Equal(t, "v", string(payload), "the batch stored the payload as given, not the buffer the caller reused")
	res, err := h.s.Enqueue(t.Context(), envelopeOf("victim", "v"))
	require.NoError(t, err)
	assert.Equal(t, webhooks.EnqueueDuplicate, res.Outcome, "the provider's next delivery")
}

// TestGroupCommitCancelledBatch: a batch whose every caller has gone is
// cancelled, so its statement does not wait on for nobody.
func TestGroupCommitCancelledBatch(t *testing.T) {
	t.Parallel()
	h := newGroupHarness(t)
	release := h.hold("held")
	defer release()
	ctx, cancel := context.WithCancel(t.Context())
	queued := h.untilQueued(1)
	c := h.enqueue(ctx, envelopeOf("held", "mine"))
	h.wait(queued, "the batch")
	cancel()
	require.ErrorIs(t, c.wait(t).err, context.Canceled)
	// The statement was cancelled: the committer is free at once for the
	// next call, though the row is still held.
	res, err := h.s.Enqueue(t.Context(), envelopeOf("next", "n"))
	require.NoError(t, err)
	assert.Equal(t, webhooks.EnqueueNew, res.Outcome)
}

// TestGroupCommitBatchBytes: a batch holds at most WithEnqueueBatchBytes
// bytes of payloads and headers, in queue order, however many calls
// queued; an envelope larger than the bound goes in a statement of its own.
func TestGroupCommitBatchBytes(t *testing.T) {
	t.Parallel()
	const bound = 1000
	h := newGroupHarness(t, WithEnqueueBatchBytes(bound))
	var envs []webhooks.Envelope
	for i, size := range []int{400, 400, 400, 1500, 300, 300} {
		env := envelopeOf(fmt.Sprint("e", i), strings.Repeat("x", size))
		if i == 5 {
			env.Headers = http.Header{"X-Pad": {strings.Repeat("h", 500)}} // headers count too
		}
		envs = append(envs, env)
	}
	first, release, calls := h.queueBehindHeldBatch(t.Context(), envs...)
	release()
	require.NoError(t, first.wait(t).err)
	for i, c := range calls {
		require.NoError(t, c.wait(t).err, "call %d", i)
		assert.Equal(t, webhooks.EnqueueNew, c.res.Outcome, "call %d", i)
		assert.True(t, h.stored(envs[i].Key.EventID), "call %d", i)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	// The held call, then 400+400; 400 (1500 does not fit beside it); 1500
	// alone; 300 alone (the last one's headers do not fit beside it); the
	// last one.
	assert.Equal(t, []int{1, 2, 1, 1, 1, 1}, h.batches, "batch sizes")
	for i, n := range h.batchBytes {
		assert.True(t, n <= bound || h.batches[i] == 1, "batch %d holds %d bytes in %d envelopes", i, n, h.batches[i])
	}
	assert.Equal(t, int64(1500), h.batchBytes[3], "the large envelope went alone")

	_, err := New(h.pool, WithEnqueueBatchBytes(0))
	assert.Error(t, err)
}

// TestLargeEnvelopesGoAlone: an envelope over groupedEnvelopeMax is
// stored by a statement of its own, not queued behind a group commit: one
// arriving while a batch is held is stored before the batch is released.
func TestLargeEnvelopesGoAlone(t *testing.T) {
	t.Parallel()
	h := newGroupHarness(t)
	first, release, _ := h.queueBehindHeldBatch(t.Context())
	large := envelopeOf("large", strings.Repeat("x", groupedEnvelopeMax+1))
	// Queued behind the held batch instead, it would wait until this
	// bound, which only a broken test reaches.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res, err := h.s.Enqueue(ctx, large)
	require.NoError(t, err)
	assert.Equal(t, webhooks.EnqueueNew, res.Outcome)
	assert.True(t, h.stored("large"), "stored while the held batch is still running")
	release()
	require.NoError(t, first.wait(t).err)
	h.mu.Lock()
	defer h.mu.Unlock()
	assert.Equal(t, []int{1}, h.batches, "only the held call went through a group commit")
}

// TestEnqueueBatchLeavesPayloadsOutOfItsSort: the batch statement sorts
// its rows by key (the lock order) without their payloads, and keeps no
// payload in a CTE it reads twice, so a batch of large bodies is not
// written to temporary files on its way to the table: the plan of one of
// 8 MiB under a work_mem of 1 MiB uses no temporary buffer.
func TestEnqueueBatchLeavesPayloadsOutOfItsSort(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 2)
	s := newMigratedStore(t, pool)
	body := strings.Repeat("a", 1<<20)
	var reqs []*enqueueRequest
	for i := range 8 {
		r, err := s.newEnqueueRequest(t.Context(), envelopeOf(fmt.Sprint("big-", 7-i), body))
		require.NoError(t, err)
		reqs = append(reqs, r)
	}
	var plan strings.Builder
	err := pgx.BeginFunc(t.Context(), pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(t.Context(), "SET LOCAL work_mem = '1MB'"); err != nil {
			return err
		}
		rows, err := tx.Query(t.Context(), "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) "+s.sql.enqueueBatch, enqueueBatchArgs(reqs)...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				return err
			}
			plan.WriteString(line + "\n")
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return errRollback // EXPLAIN ANALYZE ran the insert
	})
	require.ErrorIs(t, err, errRollback)
	assert.Contains(t, plan.String(), "Sort Key: input.provider", "rows are still inserted in key order")
	assert.NotContains(t, plan.String(), "temp read", "no temporary buffers:\n%s", plan.String())
	assert.NotContains(t, plan.String(), "external", "no sort on disk:\n%s", plan.String())
}

// TestEnqueueBatchOne: WithEnqueueBatch(1) stores each call by itself.
func TestEnqueueBatchOne(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 2)
	s := newMigratedStore(t, pool, WithEnqueueBatch(1))
	assert.Nil(t, s.committer)
	res, err := s.Enqueue(t.Context(), envelopeOf("a", "a"))
	require.NoError(t, err)
	assert.Equal(t, webhooks.EnqueueNew, res.Outcome)
	_, err = New(pool, WithEnqueueBatch(0))
	assert.Error(t, err)
}

// TestEnqueueBatchStatementIsAtomic: the batch statement inside a
// transaction that rolls back leaves nothing, quarantine included.
func TestEnqueueBatchStatementIsAtomic(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 2)
	s := newMigratedStore(t, pool)
	_, err := s.Enqueue(t.Context(), envelopeOf("c", "stored"))
	require.NoError(t, err)
	err = pgx.BeginFunc(t.Context(), pool, func(tx pgx.Tx) error {
		reqs := []*enqueueRequest{}
		for _, env := range []webhooks.Envelope{envelopeOf("a", "a"), envelopeOf("c", "other")} {
			r, err := s.newEnqueueRequest(t.Context(), env)
			require.NoError(t, err)
			reqs = append(reqs, r)
		}
		rows, err := tx.Query(t.Context(), s.sql.enqueueBatch, enqueueBatchArgs(reqs)...)
		require.NoError(t, err)
		n := 0
		for rows.Next() {
			n++
		}
		require.NoError(t, rows.Err())
		assert.Equal(t, 2, n)
		return errRollback
	})
	require.ErrorIs(t, err, errRollback)
	d, err := s.Get(t.Context(), envelopeOf("c", "").Key)
	require.NoError(t, err)
	assert.Zero(t, d.Conflicts)
	assert.Empty(t, d.Quarantine)
}
