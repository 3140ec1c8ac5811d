package pgstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	webhooks "github.com/hookinbox/webhooks"
)

// DefaultEnqueueBatch is the most envelopes one group commit of Enqueue
// stores (see WithEnqueueBatch).
const DefaultEnqueueBatch = 128

// DefaultEnqueueBatchBytes is the most bytes of payloads and headers one
// group commit of Enqueue stores (see WithEnqueueBatchBytes). A statement
// of 4 MiB took 0.07–0.15 s on a loaded two-core machine, and one of 32
// MiB 1.5 s, so a caller queued behind the two batches in flight still
// has most of a Receiver's 2-second store deadline left.
const DefaultEnqueueBatchBytes = 4 << 20

// groupedEnvelopeMax is the largest envelope (payload and headers) that
// goes through a group commit; a larger one is stored by a statement of
// its own, on its own connection. Grouping saves a commit per row, which
// is most of what a small row costs; a row of 256 KiB or more costs its
// sending and its WAL, which a batch does not share out but only queues
// behind one of the two statements in flight: a burst of 1 MiB bodies
// went through faster without grouping (0.77× the time per MiB).
const groupedEnvelopeMax = 256 << 10

// enqueueBatchesInFlight bounds the group commits running at once. One is
// enough to keep the WAL flush busy; the second statement's parse, insert
// and index work overlaps the first one's flush, which is where a second
// core helps. More only spread the same callers over more, smaller
// batches and take more connections from the pool.
const enqueueBatchesInFlight = 2

// committer groups concurrent Enqueue calls into multi-row statements, one
// commit each (group commit).
//
// A caller queues its request. When fewer than enqueueBatchesInFlight
// batches are running, it starts one at once, with whatever is queued: a
// lone caller never waits for company. Otherwise it waits, and the
// requests that queue while the running batches are in flight go together
// in the next one, taken as soon as a batch finishes: the busier the
// database, the larger the batches, with no timer anywhere (PostgreSQL's
// commit_delay idea, without its sleep).
//
// A batch runs on a goroutine of its own, which takes the next batch while
// requests are queued and ends when none is: nothing runs while the store
// is idle, so there is nothing to close. Every caller answers its own
// context: a caller whose context ends while it waits returns at once with
// the context's error. If its request was still queued, it is
// withdrawn and nothing is stored; if its batch was already running, the
// batch goes on and its item may be stored, durable but unacknowledged: the
// caller was told it failed, so the provider delivers again and finds a
// duplicate (at-least-once). A batch's statement is cancelled only when
// every caller in it has gone.
//
// A caller's payload is its own until its batch starts: the batch then
// copies the payloads it holds into one buffer of its own (at most
// maxBytes, two batches at a time), and a caller that gives up while its
// batch runs waits for that copy, which takes no I/O, before it returns,
// so the batch never reads a buffer the caller reuses. Queued requests,
// which may be many when the database is slow, hold no copy.
type committer struct {
	s        *Store
	maxBatch int
	maxBytes int64
	maxRuns  int

	mu      sync.Mutex
	queue   []*enqueueRequest
	running int // batches in flight

	// Tests' hooks, set before the first call: queued is called whenever
	// a request queues (under mu), started with each batch's size, in
	// requests and bytes, before its statement runs.
	queued  func()
	started func(n int, bytes int64)
}

// enqueueRequest is one Enqueue waiting for its batch. Its inputs are
// checked and encoded by the caller before it queues; its payload is the
// caller's until its batch copies it (enqueueBatch.own).
type enqueueRequest struct {
	key                   webhooks.InboxKey
	eventType, keyID      string
	apiVersion, traceLink string
	payload               []byte
	headers               *string // JSON; nil for NULL (see encodeHeaders)
	digest                [sha256.Size]byte
	occurredAt            *time.Time
	receivedAt            time.Time
	dueAt                 *time.Time // nil: the database's now
	jobs                  []webhooks.Job
	ordering              webhooks.Ordering
	ctx                   context.Context

	// Set under committer.mu.
	batch *enqueueBatch // the batch it went into; nil while queued
	gone  bool          // the caller returned without waiting for the answer

	// The answer, written before done is closed.
	res   webhooks.EnqueueResult
	err   error
	alone bool // run the statement alone: the batch failed on some row's data
	done  chan struct{}
}

// size is what r counts against WithEnqueueBatchBytes: its payload and
// encoded headers, by far the most of what the statement sends for it.
func (r *enqueueRequest) size() int64 {
	n := len(r.payload)
	if r.headers != nil {
		n += len(*r.headers)
	}
	return int64(n)
}

// enqueueBatch is the requests of one statement.
type enqueueBatch struct {
	reqs   []*enqueueRequest
	bytes  int64 // their sizes
	ctx    context.Context
	cancel context.CancelFunc
	live   int // callers still waiting; under committer.mu
	// owned is closed once the batch holds its own copy of the payloads.
	owned chan struct{}
}

func newCommitter(s *Store, maxBatch int, maxBytes int64) *committer {
	return &committer{s: s, maxBatch: maxBatch, maxBytes: maxBytes, maxRuns: enqueueBatchesInFlight}
}

// enqueue stores r in a group commit and returns its answer, or r.ctx's
// error once r.ctx is done. With alone set, r must be run by itself
// (rowDataError).
func (c *committer) enqueue(r *enqueueRequest) (res webhooks.EnqueueResult, alone bool, err error) {
	r.done = make(chan struct{})
	c.mu.Lock()
	c.queue = append(c.queue, r)
	if c.queued != nil {
		c.queued()
	}
	if c.running < c.maxRuns {
		c.running++
		b := c.takeLocked()
		go c.run(b)
	}
	c.mu.Unlock()

	select {
	case <-r.done:
		return r.res, r.alone, r.err
	case <-r.ctx.Done():
	}
	c.mu.Lock()
	select {
	case <-r.done: // answered meanwhile: the answer is better than an error
		c.mu.Unlock()
		return r.res, r.alone, r.err
	default:
	}
	r.gone = true
	b := r.batch
	if b == nil {
		c.queue = slices.DeleteFunc(c.queue, func(q *enqueueRequest) bool { return q == r })
	} else if b.live--; b.live == 0 {
		b.cancel()
	}
	c.mu.Unlock()
	if b != nil {
		<-b.owned // the batch no longer reads the caller's payload
	}
	return webhooks.EnqueueResult{}, false, r.ctx.Err()
}

// takeLocked takes the next batch from the queue: up to maxBatch requests
// and maxBytes bytes in queue order (a request larger than maxBytes goes
// alone), at most one per key; later requests for a key already in the
// batch stay queued for the next one, since one statement cannot insert a
// key and then count it as a duplicate. It returns nil when the queue is
// empty.
func (c *committer) takeLocked() *enqueueBatch {
	if len(c.queue) == 0 {
		return nil
	}
	n := min(len(c.queue), c.maxBatch)
	b := &enqueueBatch{reqs: make([]*enqueueRequest, 0, n), owned: make(chan struct{})}
	var seen map[webhooks.InboxKey]bool
	rest := c.queue[:0]
	for i, r := range c.queue {
		if len(b.reqs) == c.maxBatch || len(b.reqs) > 0 && b.bytes+r.size() > c.maxBytes {
			rest = append(rest, c.queue[i:]...)
			break
		}
		if len(c.queue) > 1 {
			if seen == nil {
				seen = make(map[webhooks.InboxKey]bool, n)
			}
			if seen[r.key] {
				rest = append(rest, r)
				continue
			}
			seen[r.key] = true
		}
		r.batch = b
		b.reqs = append(b.reqs, r)
		b.bytes += r.size()
	}
	clear(c.queue[len(rest):])
	c.queue = rest
	b.live = len(b.reqs)
	// The statement keeps the first caller's context values (a tracer's
	// span, say) but is cancelled only when every caller has gone.
	b.ctx, b.cancel = context.WithCancel(context.WithoutCancel(b.reqs[0].ctx))
	return b
}

// run stores b, then the batches that queued meanwhile, until the queue is
// empty.
func (c *committer) run(b *enqueueBatch) {
	for b != nil {
		c.store(b)
		c.mu.Lock()
		b = c.takeLocked()
		if b == nil {
			c.running--
		}
		c.mu.Unlock()
	}
}

// store runs b's statement and answers its callers.
func (c *committer) store(b *enqueueBatch) {
	defer b.cancel()
	b.own()
	if c.started != nil {
		c.started(len(b.reqs), b.bytes)
	}
	// A row lock is taken in key order, by every batch, so two batches
	// with keys in common never wait for each other in a cycle.
	slices.SortFunc(b.reqs, func(x, y *enqueueRequest) int { return x.key.Compare(y.key) })
	results, err := c.s.enqueueBatch(b.ctx, b.reqs)
	alone := err != nil && len(b.reqs) > 1 && rowDataError(err)
	for i, r := range b.reqs {
		switch {
		case alone:
			r.alone = true
		case err != nil:
			r.err = err
		default:
			r.res = results[i]
		}
		close(r.done)
	}
}

// own copies the payloads of b's requests into one buffer of b's own and
// points the requests at it, then closes b.owned: from then on, their
// callers may return and reuse theirs.
func (b *enqueueBatch) own() {
	n := 0
	for _, r := range b.reqs {
		n += len(r.payload)
	}
	buf := make([]byte, 0, n)
	for _, r := range b.reqs {
		start := len(buf)
		buf = append(buf, r.payload...)
		r.payload = buf[start:len(buf):len(buf)]
	}
	close(b.owned)
}

// rowDataError reports whether err is PostgreSQL refusing some row's data
// (SQLSTATE classes 22, data exception, and 23, integrity constraint
// violation), which the statement without that row might not meet. Enqueue
// checks every value PostgreSQL could refuse before it queues, so this is
// a safety net: such a batch is run again one request at a time, by each
// caller, and only the offending envelope fails.
func rowDataError(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (strings.HasPrefix(pgErr.Code, "22") || strings.HasPrefix(pgErr.Code, "23"))
}
