package webhooks_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/ops"
	"github.com/hookinbox/webhooks/webhookstest"
)

// settled is one lease settlement seen by observedStore.
type settled struct {
	Op  string // an AttemptOutcome, or "extend"
	Key webhooks.InboxKey
	Err error
	Now time.Time
}

// observedStore reports every settlement on a channel, so tests wait on a
// signal instead of sleeping.
type observedStore struct {
	*memstore.Inbox
	events chan settled
}

func newObservedStore() *observedStore {
	return &observedStore{Inbox: memstore.NewInbox(), events: make(chan settled, 100)}
}

func (s *observedStore) Settle(ctx context.Context, st webhooks.Settlement) error {
	err := s.Inbox.Settle(ctx, st)
	s.events <- settled{Op: string(st.Outcome), Key: st.Lease.Key(), Err: err, Now: st.Now}
	return err
}

// SettleBatch settles each lease through Settle, so that every settlement
// is observed when the Processor settles in batches (memstore is a
// webhooks.BatchSettler).
func (s *observedStore) SettleBatch(ctx context.Context, ss []webhooks.Settlement) []error {
	return settleEach(ctx, s.Settle, ss)
}

// settleEach settles ss one by one with settle.
func settleEach(ctx context.Context, settle func(context.Context, webhooks.Settlement) error, ss []webhooks.Settlement) []error {
	errs := make([]error, len(ss))
	for i, st := range ss {
		errs[i] = settle(ctx, st)
	}
	return errs
}

func (s *observedStore) ExtendLease(ctx context.Context, req webhooks.ExtendRequest) error {
	err := s.Inbox.ExtendLease(ctx, req)
	s.events <- settled{Op: "extend", Key: req.Lease.Key(), Err: err, Now: req.Now}
	return err
}

// acquire leases at most one due item at now for d.
func acquire(t *testing.T, s webhooks.LeaseStore, now time.Time, d time.Duration) *webhooks.Lease {
	t.Helper()
	leases, err := s.Acquire(context.Background(), webhooks.AcquireRequest{Now: now, LeaseDuration: d, Max: 1})
	require.NoError(t, err)
	if len(leases) == 0 {
		return nil
	}
	return leases[0]
}

// next waits for the next settlement other than lease extensions.
func (s *observedStore) next(t *testing.T) settled {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e := <-s.events:
			if e.Op != "extend" {
				return e
			}
		case <-timeout:
			t.Fatal("no lease was settled within 10s")
		}
	}
}

func (s *observedStore) nextExtend(t *testing.T) settled {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e := <-s.events:
			if e.Op == "extend" {
				return e
			}
		case <-timeout:
			t.Fatal("no lease extension within 10s")
		}
	}
}

func enqueue(t *testing.T, s webhooks.Enqueuer, id, typ string, at time.Time) webhooks.InboxKey {
	t.Helper()
	key := webhooks.InboxKey{Provider: "acme", EventID: id}
	res, err := s.Enqueue(context.Background(), webhooks.Envelope{Key: key, EventType: typ, Payload: []byte(`{}`), ReceivedAt: at})
	require.NoError(t, err)
	require.Equal(t, webhooks.EnqueueNew, res.Outcome)
	return key
}

// runProcessor starts p.Run and returns a stop function that cancels it and
// waits for it to return.
func runProcessor(t *testing.T, p *webhooks.Processor) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				assert.NoError(t, err)
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return within 10s of cancellation")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func get(t *testing.T, s *observedStore, key webhooks.InboxKey) ops.Detail {
	t.Helper()
	it, err := s.Get(context.Background(), key)
	require.NoError(t, err)
	return it
}

func TestProcessorRetriesThenSucceeds(t *testing.T) {
	t.Parallel()
	store, clock := newObservedStore(), webhookstest.NewClock(base)
	var calls atomic.Int32
	mux := webhooks.NewMux()
	require.NoError(t, mux.HandleFunc("order.*", func(_ context.Context, ev webhooks.Event) error {
		n := calls.Add(1)
		assert.EqualValues(t, n, ev.Attempt, "the event carries its attempt number")
		if n <= 2 {
			return errors.New("downstream unavailable")
		}
		return nil
	}))
	p, err := webhooks.NewProcessor(store, mux, webhooks.WithClock(clock), webhooks.WithPollInterval(time.Hour))
	require.NoError(t, err)
	key := enqueue(t, store, "e1", "order.created", base)
	runProcessor(t, p)
	p.Wake()

	require.Equal(t, "retried", store.next(t).Op)
	it := get(t, store, key)
	assert.Equal(t, webhooks.StatePending, it.State)
	assert.Equal(t, 1, it.Attempts)
	assert.True(t, it.NextAttemptAt.Equal(base.Add(5*time.Second)), "first retry after the 5s initial delay, got %v", it.NextAttemptAt)
	require.NotNil(t, it.LastError)
	assert.Equal(t, webhooks.FailureError, it.LastError.Class)
	assert.Equal(t, "downstream unavailable", it.LastError.Message)

	clock.Advance(5 * time.Second)
	p.Wake()
	require.Equal(t, "retried", store.next(t).Op)
	it = get(t, store, key)
	assert.Equal(t, 2, it.Attempts)
	assert.True(t, it.NextAttemptAt.Equal(base.Add(15*time.Second)), "second retry 10s after the second failure, got %v", it.NextAttemptAt)

	clock.Advance(9 * time.Second)
	p.Wake()
	clock.Advance(time.Second)
	p.Wake()
	require.Equal(t, "succeeded", store.next(t).Op)
	it = get(t, store, key)
	assert.Equal(t, webhooks.StateSucceeded, it.State)
	assert.Equal(t, 3, it.Attempts)
	assert.True(t, it.CompletedAt.Equal(base.Add(15*time.Second)))
	assert.EqualValues(t, 3, calls.Load())
}

func TestProcessorDeadLetters(t *testing.T) {
	t.Parallel()
	store, clock := newObservedStore(), webhookstest.NewClock(base)
	mux := webhooks.NewMux()
	require.NoError(t, mux.HandleFunc("bad", func(context.Context, webhooks.Event) error {
		return webhooks.Permanent(errors.New("cannot parse order"))
	}))
	p, err := webhooks.NewProcessor(store, mux, webhooks.WithClock(clock))
	require.NoError(t, err)
	bad := enqueue(t, store, "bad", "bad", base)
	runProcessor(t, p)
	p.Wake()
	store.next(t)

	it := get(t, store, bad)
	assert.Equal(t, webhooks.StateDead, it.State)
	assert.Equal(t, 1, it.Attempts)
	assert.True(t, it.DeadAt.Equal(base))
	assert.Equal(t, webhooks.FailurePermanent, it.LastError.Class)
	assert.Equal(t, "cannot parse order", it.LastError.Message)
}

func TestProcessorExhaustsAttempts(t *testing.T) {
	t.Parallel()
	store, clock := newObservedStore(), webhookstest.NewClock(base)
	mux := webhooks.NewMux()
	require.NoError(t, mux.HandleFunc("*", func(context.Context, webhooks.Event) error {
		return webhooks.RetryAfter(errors.New("429"), time.Minute)
	}))
	p, err := webhooks.NewProcessor(store, mux, webhooks.WithClock(clock),
		webhooks.WithRetryPolicy(webhooks.ExponentialPolicy{MaxAttempts: 2}))
	require.NoError(t, err)
	key := enqueue(t, store, "e", "x", base)
	runProcessor(t, p)
	p.Wake()
	store.next(t)
	it := get(t, store, key)
	assert.True(t, it.NextAttemptAt.Equal(base.Add(time.Minute)), "the handler's Retry-After (1m) beats the 5s backoff")
	clock.Advance(time.Minute)
	p.Wake()
	store.next(t)
	it = get(t, store, key)
	assert.Equal(t, webhooks.StateDead, it.State)
	assert.Equal(t, 2, it.Attempts)
}

func TestProcessorRecoversPanics(t *testing.T) {
	t.Parallel()
	store, _, p := newTestProcessor(t, func(context.Context, webhooks.Event) error { panic("nil map") })
	key := enqueue(t, store, "e", "x", base)
	runProcessor(t, p)
	p.Wake()
	require.Equal(t, "retried", store.next(t).Op)
	it := get(t, store, key)
	assert.Equal(t, webhooks.StatePending, it.State, "a panic is a transient failure")
	assert.Equal(t, webhooks.FailurePanic, it.LastError.Class)
	assert.Contains(t, it.LastError.Message, "nil map")
}

func TestProcessorShutdownAbandons(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	var sawCancel atomic.Bool
	store, _, p := newTestProcessor(t, func(ctx context.Context, _ webhooks.Event) error {
		close(started)
		<-ctx.Done()
		sawCancel.Store(true)
		return ctx.Err()
	}, webhooks.WithShutdownGrace(0))
	key := enqueue(t, store, "e", "x", base)
	stop := runProcessor(t, p)
	p.Wake()
	<-started
	stop()
	assert.True(t, sawCancel.Load())
	require.Equal(t, "abandoned", store.next(t).Op)
	it := get(t, store, key)
	assert.Equal(t, webhooks.StatePending, it.State)
	assert.Equal(t, 0, it.Attempts, "cancellation does not spend an attempt")
	assert.Nil(t, it.LastError)
	assert.True(t, it.NextAttemptAt.Equal(base), "due again at once")
}

func TestProcessorShutdownGraceLetsHandlersFinish(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}), make(chan struct{})
	shutdownSeen := make(chan struct{})
	ws := &fakeWakeSource{listening: make(chan struct{}), stopped: shutdownSeen}
	var handlerErr error
	store, _, p := newTestProcessor(t, func(ctx context.Context, _ webhooks.Event) error {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
		}
		// The shutdown began before the release, yet within its grace
		// the handler's context is still live: it may finish its work.
		handlerErr = ctx.Err()
		return handlerErr
	}, webhooks.WithShutdownGrace(time.Minute), webhooks.WithWakeSource(ws))
	key := enqueue(t, store, "e", "x", base)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	<-ws.listening
	p.Wake()
	<-started
	cancel()
	<-shutdownSeen // the wake source's Listen returned: Run saw the shutdown
	close(release)
	require.NoError(t, <-done)
	assert.NoError(t, handlerErr, "the handler's context was cancelled within the grace period")
	require.Equal(t, "succeeded", store.next(t).Op)
	assert.Equal(t, webhooks.StateSucceeded, get(t, store, key).State)
}

func TestProcessorPollsWhenTheWakeSourceFails(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	ws := webhooksWakeSourceFunc(func(context.Context, func()) error { return errors.New("listen: connection refused") })
	var handled atomic.Int32
	store, _, p := newTestProcessor(t, func(context.Context, webhooks.Event) error { handled.Add(1); return nil },
		webhooks.WithWakeSource(ws), webhooks.WithPollInterval(time.Millisecond), webhooks.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	runProcessor(t, p)
	logs.waitFor(t, "wake source stopped; falling back to polling")
	key := enqueue(t, store, "e", "x", base) // nobody calls Wake: only polling finds it
	require.Equal(t, "succeeded", store.next(t).Op)
	assert.Equal(t, webhooks.StateSucceeded, get(t, store, key).State)
	assert.EqualValues(t, 1, handled.Load())
}

// webhooksWakeSourceFunc adapts a function to webhooks.WakeSource.
type webhooksWakeSourceFunc func(ctx context.Context, wake func()) error

func (f webhooksWakeSourceFunc) Listen(ctx context.Context, wake func()) error { return f(ctx, wake) }

func TestProcessorRenewsLeaseAndStopsWhenLost(t *testing.T) {
	t.Parallel()
	store, clock := newObservedStore(), webhookstest.NewClock(base)
	started := make(chan struct{})
	cause := make(chan error, 1)
	mux := webhooks.NewMux()
	require.NoError(t, mux.HandleFunc("*", func(ctx context.Context, _ webhooks.Event) error {
		close(started)
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return ctx.Err()
	}))
	const lease = 30 * time.Millisecond
	p, err := webhooks.NewProcessor(store, mux, webhooks.WithClock(clock), webhooks.WithLeaseDuration(lease))
	require.NoError(t, err)
	key := enqueue(t, store, "e", "x", base)
	runProcessor(t, p)
	p.Wake()
	<-started

	// The renewal moves the expiry forward from the clock's now, so another
	// worker cannot take the item while the handler runs. (Renewals tick on
	// real time; wait for one made after the clock moved.)
	clock.Advance(20 * time.Millisecond)
	for {
		e := store.nextExtend(t)
		require.NoError(t, e.Err)
		if !e.Now.Before(base.Add(20 * time.Millisecond)) {
			break
		}
	}
	it := get(t, store, key)
	assert.Equal(t, webhooks.StateLeased, it.State)
	assert.False(t, it.LeaseExpiresAt.Before(base.Add(20*time.Millisecond+lease)), "lease extended to now+duration, got %v", it.LeaseExpiresAt)
	assert.Nil(t, acquire(t, store, clock.Now(), time.Minute), "a renewed lease is not up for grabs")

	// Let the lease lapse and another worker take it: the handler is told.
	// Renewals use the clock's now, so at now+lease the lease has lapsed
	// whatever renewals happen meanwhile.
	clock.Advance(time.Hour)
	stolen := acquire(t, store, clock.Now().Add(lease), time.Hour)
	require.NotNil(t, stolen)
	assert.True(t, stolen.Reclaimed, "taken over from an expired lease")
	select {
	case c := <-cause:
		assert.ErrorIs(t, c, webhooks.ErrLeaseLost)
	case <-time.After(10 * time.Second):
		t.Fatal("the handler was not cancelled after its lease was lost")
	}
	it = get(t, store, key)
	assert.Equal(t, webhooks.StateLeased, it.State, "the loser settles nothing")
	assert.Equal(t, 2, it.Attempts)
	require.NoError(t, store.Inbox.Settle(context.Background(), webhooks.Settlement{Lease: stolen, Outcome: webhooks.AttemptSucceeded, Now: clock.Now().Add(lease)}),
		"the new holder's token still works")
}

// losingStore refuses the lease extensions of one item with ErrLeaseLost
// once lose is set, as a store does after another worker took it over.
type losingStore struct {
	*observedStore
	key  webhooks.InboxKey
	lose atomic.Bool
}

func (s *losingStore) ExtendLease(ctx context.Context, req webhooks.ExtendRequest) error {
	if s.lose.Load() && req.Lease.Key() == s.key {
		s.events <- settled{Op: "extend", Key: s.key, Err: webhooks.ErrLeaseLost, Now: req.Now}
		return fmt.Errorf("taken over: %w", webhooks.ErrLeaseLost)
	}
	return s.observedStore.ExtendLease(ctx, req)
}

// TestProcessorRenewsQueuedLeases: a lease waiting for a free worker is
// renewed like a running one, and one lost while it waits is not run.
func TestProcessorRenewsQueuedLeases(t *testing.T) {
	t.Parallel()
	release, started := make(chan struct{}), make(chan struct{})
	var ranQueued atomic.Bool
	mux := webhooks.NewMux()
	require.NoError(t, mux.HandleFunc("*", func(ctx context.Context, ev webhooks.Event) error {
		if ev.ID == "queued" {
			ranQueued.Store(true)
			return nil
		}
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}))
	store := &losingStore{observedStore: newObservedStore()}
	logs := &syncBuffer{}
	p, err := webhooks.NewProcessor(store, mux, webhooks.WithClock(webhookstest.NewClock(base)), webhooks.WithWorkers(1),
		webhooks.WithLeaseDuration(30*time.Millisecond), webhooks.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	require.NoError(t, err)
	enqueue(t, store, "running", "x", base)
	store.key = enqueue(t, store, "queued", "x", base) // due with it, behind it
	stop := runProcessor(t, p)
	p.Wake()
	<-started
	// The one worker is busy; the second item waits, leased, in the
	// queue, and its lease is renewed.
	for e := store.nextExtend(t); e.Key != store.key; e = store.nextExtend(t) {
		require.NoError(t, e.Err)
	}
	// Then it is lost (another worker took it over): the item is not run
	// when the worker frees up.
	store.lose.Store(true)
	logs.waitFor(t, "lease lost while its item waited for a worker")
	close(release)
	require.Equal(t, "succeeded", store.next(t).Op)
	logs.waitFor(t, "lease lost before its handler started")
	stop()
	assert.False(t, ranQueued.Load(), "a lease lost while queued is not run")
	it := get(t, store.observedStore, store.key)
	assert.Equal(t, 0, it.Attempts, "a lease lost before it started is not started: its item's new holder counts its own attempt")
	assert.Empty(t, it.History)
}

func TestProcessorHandlerTimeout(t *testing.T) {
	t.Parallel()
	store, _, p := newTestProcessor(t, func(ctx context.Context, _ webhooks.Event) error {
		<-ctx.Done()
		return ctx.Err()
	}, webhooks.WithHandlerTimeout(10*time.Millisecond))
	key := enqueue(t, store, "e", "x", base)
	runProcessor(t, p)
	p.Wake()
	require.Equal(t, "retried", store.next(t).Op)
	it := get(t, store, key)
	assert.Equal(t, webhooks.FailureTimeout, it.LastError.Class)
	assert.Equal(t, 1, it.Attempts, "a timeout spends the attempt")
}

func TestProcessorRunsWorkersConcurrently(t *testing.T) {
	t.Parallel()
	const workers = 4
	var running sync.WaitGroup
	running.Add(workers)
	allIn := make(chan struct{})
	go func() { running.Wait(); close(allIn) }()
	store, _, p := newTestProcessor(t, func(ctx context.Context, _ webhooks.Event) error {
		running.Done()
		select {
		case <-allIn:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}, webhooks.WithWorkers(workers))
	var keys []webhooks.InboxKey
	for i := range workers {
		keys = append(keys, enqueue(t, store, string(rune('a'+i)), "x", base))
	}
	runProcessor(t, p)
	p.Wake()
	for range workers {
		require.Equal(t, "succeeded", store.next(t).Op, "all four handlers must run at once to get past the barrier")
	}
	for _, k := range keys {
		assert.Equal(t, webhooks.StateSucceeded, get(t, store, k).State)
	}
}

// fakeWakeSource wakes the processor on demand and records its lifetime.
type fakeWakeSource struct {
	listening, stopped chan struct{}
	wake               func()
}

func (f *fakeWakeSource) Listen(ctx context.Context, wake func()) error {
	f.wake = wake
	close(f.listening)
	<-ctx.Done()
	close(f.stopped)
	return ctx.Err()
}

func TestProcessorWakeSource(t *testing.T) {
	t.Parallel()
	store, clock := newObservedStore(), webhookstest.NewClock(base)
	mux := webhooks.NewMux()
	require.NoError(t, mux.HandleFunc("*", func(context.Context, webhooks.Event) error { return nil }))
	ws := &fakeWakeSource{listening: make(chan struct{}), stopped: make(chan struct{})}
	p, err := webhooks.NewProcessor(store, mux, webhooks.WithClock(clock), webhooks.WithWakeSource(ws), webhooks.WithPollInterval(time.Hour))
	require.NoError(t, err)
	stop := runProcessor(t, p)
	<-ws.listening
	key := enqueue(t, store, "e", "x", base)
	ws.wake()
	require.Equal(t, "succeeded", store.next(t).Op, "a wake-up from the source starts the work without waiting an hour's poll")
	assert.Equal(t, webhooks.StateSucceeded, get(t, store, key).State)
	stop()
	select {
	case <-ws.stopped:
	default:
		t.Fatal("Run returned before the wake source's Listen did")
	}
}

func TestProcessorRunOnce(t *testing.T) {
	t.Parallel()
	store := newObservedStore()
	started := make(chan struct{})
	mux := webhooks.NewMux()
	require.NoError(t, mux.HandleFunc("*", func(ctx context.Context, _ webhooks.Event) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}))
	p, err := webhooks.NewProcessor(store, mux, webhooks.WithClock(webhookstest.NewClock(base)), webhooks.WithShutdownGrace(0))
	require.NoError(t, err)
	enqueue(t, store, "e", "x", base)
	stop := runProcessor(t, p)
	<-started // a handler runs, so Run is running

	err = p.Run(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "already running")
	stop()
	require.Equal(t, "abandoned", store.next(t).Op)

	// Once stopped, it can run again.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.NoError(t, p.Run(ctx))
}

func TestNewProcessorValidates(t *testing.T) {
	t.Parallel()
	s, m := newObservedStore(), webhooks.NewMux()
	for _, o := range []webhooks.ProcessorOption{
		webhooks.WithWorkers(0),
		webhooks.WithLeaseDuration(time.Millisecond),
		webhooks.WithPollInterval(0),
		webhooks.WithHandlerTimeout(-1),
		webhooks.WithProcessorStoreTimeout(0),
		webhooks.WithRetryPolicy(nil),
		webhooks.WithRetryPolicy(webhooks.ExponentialPolicy{Jitter: 2}),
		webhooks.WithRetryPolicy(&webhooks.ExponentialPolicy{Jitter: 2}),
	} {
		_, err := webhooks.NewProcessor(s, m, o)
		assert.Error(t, err)
	}
	_, err := webhooks.NewProcessor(nil, m)
	assert.Error(t, err)
}

func TestProcessorDeadLettersCrashLoops(t *testing.T) {
	t.Parallel()
	store, clock := newObservedStore(), webhookstest.NewClock(base)
	var ran atomic.Bool
	mux := webhooks.NewMux()
	require.NoError(t, mux.HandleFunc("*", func(context.Context, webhooks.Event) error { ran.Store(true); return nil }))
	p, err := webhooks.NewProcessor(store, mux, webhooks.WithClock(clock),
		webhooks.WithRetryPolicy(&webhooks.ExponentialPolicy{MaxAttempts: 2}))
	require.NoError(t, err)
	key := enqueue(t, store, "poison", "x", base)
	// Two workers took it and died without settling.
	for i := range 2 {
		require.NotNil(t, acquire(t, store, base.Add(time.Duration(i)*time.Second), time.Second))
	}
	clock.Advance(2 * time.Second)
	runProcessor(t, p)
	p.Wake()
	require.Equal(t, "dead_lettered", store.next(t).Op)
	it := get(t, store, key)
	assert.Equal(t, webhooks.StateDead, it.State)
	assert.Equal(t, webhooks.FailureLeaseExpired, it.LastError.Class)
	assert.Contains(t, it.LastError.Message, "attempt 2 ended without being settled")
	assert.Equal(t, 2, it.Attempts, "the attempts that ran, as many as the policy allows: the dead-lettering is no attempt")
	assert.Equal(t, []webhooks.AttemptOutcome{ops.OutcomeCrashed, ops.OutcomeCrashed}, outcomesOf(it), "the history holds the attempts that ran")
	assert.False(t, ran.Load(), "an item over its attempt limit is not run again")
}

func TestProcessorRunsReclaimedItemsWithBudgetLeft(t *testing.T) {
	t.Parallel()
	var seen atomic.Int32
	store, clock, p := newTestProcessor(t, func(_ context.Context, ev webhooks.Event) error {
		seen.Store(int32(ev.Attempt))
		return nil
	})
	key := enqueue(t, store, "e", "x", base)
	require.NotNil(t, acquire(t, store, base, time.Second), "a worker takes it and dies")
	clock.Advance(time.Second)
	runProcessor(t, p)
	p.Wake()
	require.Equal(t, "succeeded", store.next(t).Op)
	assert.EqualValues(t, 2, seen.Load(), "the crashed attempt counts; the second runs")
	assert.Equal(t, webhooks.StateSucceeded, get(t, store, key).State)
}

func TestProcessorAsksThePolicyAboutTheItem(t *testing.T) {
	t.Parallel()
	got := make(chan webhooks.FailedAttempt, 1)
	policy := webhooks.RetryPolicyFunc(func(f webhooks.FailedAttempt) webhooks.RetryDecision {
		got <- f
		if f.EventType == "payout.failed" {
			return webhooks.RetryDecision{RetryAt: f.Now.Add(42 * time.Second)}
		}
		return webhooks.RetryDecision{DeadLetter: true}
	})
	long := strings.Repeat("é", 3000) + "\x00\xff"
	store, clock, p := newTestProcessor(t, func(context.Context, webhooks.Event) error {
		return errors.New(long)
	}, webhooks.WithRetryPolicy(policy))
	received := base.Add(-time.Hour)
	payout := enqueue(t, store, "p1", "payout.failed", received)
	runProcessor(t, p)
	p.Wake()
	require.Equal(t, "retried", store.next(t).Op)
	f := <-got
	assert.Equal(t, payout, f.Key)
	assert.Equal(t, "payout.failed", f.EventType)
	assert.Equal(t, 1, f.Attempt)
	assert.True(t, f.ReceivedAt.Equal(received), "the policy sees when the webhook was first received")
	assert.True(t, f.Now.Equal(clock.Now()))
	assert.Equal(t, webhooks.FailureError, f.Failure.Class)
	it := get(t, store, payout)
	assert.True(t, it.NextAttemptAt.Equal(base.Add(42*time.Second)), "the type's own delay, got %v", it.NextAttemptAt)
	assert.LessOrEqual(t, len(it.LastError.Message), 2048, "messages are cut before they reach the store")
	assert.True(t, utf8.ValidString(it.LastError.Message))
	assert.NotContains(t, it.LastError.Message, "\x00")
	assert.True(t, strings.HasPrefix(long, it.LastError.Message), "cut, not rewritten")

	other := enqueue(t, store, "i1", "invoice.paid", base)
	p.Wake()
	require.Equal(t, "dead_lettered", store.next(t).Op)
	<-got
	assert.Equal(t, webhooks.StateDead, get(t, store, other).State)
}

func TestProcessorTimeoutKeepsHandlerClassification(t *testing.T) {
	t.Parallel()
	store, _, p := newTestProcessor(t, func(ctx context.Context, _ webhooks.Event) error {
		<-ctx.Done()
		return webhooks.Permanent(errors.New("gave up: order does not exist"))
	}, webhooks.WithHandlerTimeout(5*time.Millisecond))
	key := enqueue(t, store, "e", "x", base)
	runProcessor(t, p)
	p.Wake()
	require.Equal(t, "dead_lettered", store.next(t).Op)
	it := get(t, store, key)
	assert.Equal(t, webhooks.StateDead, it.State, "a Permanent error returned after the deadline still dead-letters")
	assert.Equal(t, webhooks.FailurePermanent, it.LastError.Class)
}

func TestProcessorStartsNothingAfterShutdown(t *testing.T) {
	t.Parallel()
	store := newObservedStore()
	var ran atomic.Int32
	mux := webhooks.NewMux()
	require.NoError(t, mux.HandleFunc("*", func(context.Context, webhooks.Event) error { ran.Add(1); return nil }))
	p, err := webhooks.NewProcessor(store, mux, webhooks.WithClock(webhookstest.NewClock(base)), webhooks.WithShutdownGrace(time.Minute))
	require.NoError(t, err)
	key := enqueue(t, store, "e", "x", base)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 100 {
		require.NoError(t, p.Run(ctx))
	}
	assert.Zero(t, ran.Load(), "a cancelled Run starts no handler, grace or not")
	it := get(t, store, key)
	assert.Equal(t, webhooks.StatePending, it.State)
	assert.Equal(t, 0, it.Attempts)
}

// flakyLeaseStore fails the first acquisition, and the first failCompletes
// completions: before they reach the store, or, with lostReplies, after the
// store applied them (a reply lost on the way back).
type flakyLeaseStore struct {
	*observedStore
	failCompletes int32
	lostReplies   bool
	acquireFailed atomic.Bool
	completes     atomic.Int32
}

func (f *flakyLeaseStore) Acquire(ctx context.Context, req webhooks.AcquireRequest) ([]*webhooks.Lease, error) {
	if f.acquireFailed.CompareAndSwap(false, true) {
		return nil, errors.New("connection reset")
	}
	return f.observedStore.Acquire(ctx, req)
}

func (f *flakyLeaseStore) Settle(ctx context.Context, st webhooks.Settlement) error {
	if st.Outcome == webhooks.AttemptSucceeded && f.completes.Add(1) <= f.failCompletes {
		if f.lostReplies {
			_ = f.observedStore.Inbox.Settle(ctx, st)
		}
		f.events <- settled{Op: string(st.Outcome), Key: st.Lease.Key(), Err: errors.New("timeout")}
		return errors.New("timeout")
	}
	return f.observedStore.Settle(ctx, st)
}

func (f *flakyLeaseStore) SettleBatch(ctx context.Context, ss []webhooks.Settlement) []error {
	return settleEach(ctx, f.Settle, ss)
}

func TestProcessorSurvivesStoreErrors(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, store *flakyLeaseStore) (*webhookstest.Clock, *webhooks.Processor, *atomic.Int32, *syncBuffer, webhooks.InboxKey) {
		clock, logs := webhookstest.NewClock(base), &syncBuffer{}
		var runs atomic.Int32
		mux := webhooks.NewMux()
		mux.MustHandleFunc("*", func(context.Context, webhooks.Event) error { runs.Add(1); return nil })
		p, err := webhooks.NewProcessor(store, mux, webhooks.WithClock(clock), webhooks.WithLogger(slog.New(slog.NewTextHandler(logs, nil))),
			webhooks.WithPollInterval(5*time.Millisecond), webhooks.WithLeaseDuration(30*time.Second))
		require.NoError(t, err)
		key := enqueue(t, store, "e", "x", base)
		runProcessor(t, p)
		return clock, p, &runs, logs, key
	}

	t.Run("a failed completion is tried again", func(t *testing.T) {
		store := &flakyLeaseStore{observedStore: newObservedStore(), failCompletes: 1}
		_, _, runs, _, key := run(t, store)
		// The first acquisition fails; the next poll succeeds; the first
		// completion fails and is tried again at once.
		require.Error(t, store.next(t).Err)
		require.NoError(t, store.next(t).Err)
		it := get(t, store.observedStore, key)
		assert.Equal(t, webhooks.StateSucceeded, it.State)
		assert.Equal(t, 1, it.Attempts)
		assert.EqualValues(t, 1, runs.Load())
	})
	t.Run("a lost reply is found committed", func(t *testing.T) {
		store := &flakyLeaseStore{observedStore: newObservedStore(), failCompletes: 1, lostReplies: true}
		_, _, runs, logs, key := run(t, store)
		require.Error(t, store.next(t).Err)
		second := store.next(t)
		assert.ErrorIs(t, second.Err, webhooks.ErrAlreadySettled, "the retry finds the first completion applied")
		assert.Equal(t, webhooks.StateSucceeded, get(t, store.observedStore, key).State)
		assert.EqualValues(t, 1, runs.Load())
		// The log says the settlement committed, not that the item will be
		// retried.
		logs.waitFor(t, "had committed although its reply was lost")
		assert.NotContains(t, logs.String(), "will be retried")
	})
	t.Run("a completion that fails twice waits out its lease", func(t *testing.T) {
		store := &flakyLeaseStore{observedStore: newObservedStore(), failCompletes: 2}
		clock, p, runs, logs, key := run(t, store)
		require.Error(t, store.next(t).Err)
		require.Error(t, store.next(t).Err)
		assert.Equal(t, webhooks.StateLeased, get(t, store.observedStore, key).State)
		logs.waitFor(t, "outcome is unknown")
		clock.Advance(30 * time.Second)
		p.Wake()
		third := store.next(t)
		require.Equal(t, "succeeded", third.Op)
		require.NoError(t, third.Err)
		it := get(t, store.observedStore, key)
		assert.Equal(t, webhooks.StateSucceeded, it.State)
		assert.Equal(t, 2, it.Attempts, "the unsettled first attempt counts")
		assert.EqualValues(t, 2, runs.Load(), "at least once: the handler ran again after the lost completion")
	})
}

// zeroPolicy returns a retry decision with no time, as a careless custom
// policy might.
var zeroPolicy = webhooks.RetryPolicyFunc(func(webhooks.FailedAttempt) webhooks.RetryDecision {
	return webhooks.RetryDecision{}
})

func TestProcessorClampsPastRetryTimes(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	store, _, p := newTestProcessor(t, func(context.Context, webhooks.Event) error {
		if calls.Add(1) == 1 {
			return errors.New("once")
		}
		return nil
	}, webhooks.WithRetryPolicy(zeroPolicy))
	key := enqueue(t, store, "e", "x", base)
	runProcessor(t, p)
	p.Wake()
	require.Equal(t, "retried", store.next(t).Op)
	require.Equal(t, "succeeded", store.next(t).Op)
	assert.Equal(t, webhooks.StateSucceeded, get(t, store, key).State)
}

// newTestProcessor returns a processor over a fresh observed store and a fake
// clock at base, running h for every event type, with opts added.
func newTestProcessor(t *testing.T, h func(context.Context, webhooks.Event) error, opts ...webhooks.ProcessorOption) (*observedStore, *webhookstest.Clock, *webhooks.Processor) {
	t.Helper()
	store, clock := newObservedStore(), webhookstest.NewClock(base)
	mux := webhooks.NewMux()
	require.NoError(t, mux.HandleFunc("*", h))
	p, err := webhooks.NewProcessor(store, mux, append([]webhooks.ProcessorOption{webhooks.WithClock(clock)}, opts...)...)
	require.NoError(t, err)
	return store, clock, p
}

// batchStore settles in batches through memstore, one by one, recording
// the size of every batch and failing if Settle is called instead.
type batchStore struct {
	*memstore.Inbox
	mu      sync.Mutex
	batches []int
	single  atomic.Int32
}

func (b *batchStore) Settle(ctx context.Context, st webhooks.Settlement) error {
	b.single.Add(1)
	return b.Inbox.Settle(ctx, st)
}

func (b *batchStore) SettleBatch(ctx context.Context, ss []webhooks.Settlement) []error {
	b.mu.Lock()
	b.batches = append(b.batches, len(ss))
	b.mu.Unlock()
	errs := make([]error, len(ss))
	for i, st := range ss {
		errs[i] = b.Inbox.Settle(ctx, st)
	}
	return errs
}

func TestProcessorSettlesInBatches(t *testing.T) {
	t.Parallel()
	store := &batchStore{Inbox: memstore.NewInbox()}
	const n = 40
	var handled sync.WaitGroup
	handled.Add(n)
	mux := webhooks.NewMux()
	mux.MustHandleFunc("*", func(_ context.Context, ev webhooks.Event) error {
		defer handled.Done()
		if ev.ID == "fail" {
			return webhooks.Permanent(errors.New("bad"))
		}
		return nil
	})
	p, err := webhooks.NewProcessor(store, mux, webhooks.WithClock(webhookstest.NewClock(base)), webhooks.WithWorkers(8), webhooks.WithLogger(discard))
	require.NoError(t, err)
	keys := []webhooks.InboxKey{enqueue(t, store, "fail", "x", base)}
	for i := range n - 1 {
		keys = append(keys, enqueue(t, store, fmt.Sprint(i), "x", base))
	}
	stop := runProcessor(t, p)
	p.Wake()
	handled.Wait()
	stop() // Run returns only once every settlement went to the store

	assert.Zero(t, store.single.Load(), "a BatchSettler settles through SettleBatch only")
	total := 0
	for _, size := range store.batches {
		total += size
	}
	assert.Equal(t, n, total, "every lease settled exactly once, in batches %v", store.batches)
	for _, k := range keys {
		it, err := store.Get(context.Background(), k)
		require.NoError(t, err)
		want := webhooks.StateSucceeded
		if k.EventID == "fail" {
			want = webhooks.StateDead
		}
		assert.Equal(t, want, it.State, k.EventID)
	}
}

// lostReplyStore lets its first acquisition that leases anything commit
// in the store and then answers it with an error, as when the connection
// dies after the commit and before the reply. It records the ID of every
// acquisition and of every repeat (memstore is an AcquisitionRepeater).
type lostReplyStore struct {
	*observedStore
	lost    atomic.Bool
	mu      sync.Mutex
	ids     []string // AcquireRequest.ID of each call
	repeats []string // RepeatRequest.ID of each call
	// lostID is the ID of the acquisition whose reply was lost.
	lostID string
}

func (s *lostReplyStore) RepeatAcquisition(ctx context.Context, req webhooks.RepeatRequest) ([]*webhooks.Lease, error) {
	s.mu.Lock()
	s.repeats = append(s.repeats, req.ID)
	s.mu.Unlock()
	return s.observedStore.RepeatAcquisition(ctx, req)
}

func (s *lostReplyStore) Acquire(ctx context.Context, req webhooks.AcquireRequest) ([]*webhooks.Lease, error) {
	leases, err := s.observedStore.Acquire(ctx, req)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids = append(s.ids, req.ID)
	if err == nil && len(leases) > 0 && s.lost.CompareAndSwap(false, true) {
		s.lostID = req.ID
		return nil, errors.New("read tcp 127.0.0.1:5432: connection reset by peer")
	}
	return leases, err
}

// TestProcessorRecoversALostAcquisitionReply: the store leased the items
// but the reply was lost. The processor asks for the same acquisition
// again and runs the items it was granted, once each, on the attempt the
// lost acquisition counted, while their leases are valid (the clock never
// moves, so they cannot expire and be taken over); nothing is recorded as
// crashed.
func TestProcessorRecoversALostAcquisitionReply(t *testing.T) {
	t.Parallel()
	store := &lostReplyStore{observedStore: newObservedStore()}
	clock, logs := webhookstest.NewClock(base), &syncBuffer{}
	mux, runs := countingMux()
	p, err := webhooks.NewProcessor(store, mux, webhooks.WithClock(clock), webhooks.WithLogger(slog.New(slog.NewTextHandler(logs, nil))),
		webhooks.WithPollInterval(5*time.Millisecond), webhooks.WithLeaseDuration(30*time.Second))
	require.NoError(t, err)
	keys := []webhooks.InboxKey{enqueue(t, store, "a", "x", base), enqueue(t, store, "b", "x", base), enqueue(t, store, "c", "x", base)}
	stop := runProcessor(t, p)
	for range keys {
		s := store.next(t)
		require.Equal(t, string(webhooks.AttemptSucceeded), s.Op, "settlement of %s", s.Key)
		require.NoError(t, s.Err)
	}
	stop()

	require.Equal(t, base, clock.Now(), "the leases never expired: the clock did not move")
	for _, k := range keys {
		d := get(t, store.observedStore, k)
		assert.Equal(t, webhooks.StateSucceeded, d.State, k)
		assert.Equal(t, 1, d.Attempts, "%s: the attempt the lost acquisition counted is the one that ran", k)
		require.Len(t, d.History, 1, k)
		assert.Equal(t, webhooks.AttemptSucceeded, d.History[0].Outcome, k)
		assert.Equal(t, 1, d.History[0].Number, k)
	}
	assert.Equal(t, map[webhooks.InboxKey]int{keys[0]: 1, keys[1]: 1, keys[2]: 1}, runs(), "each item ran once")

	store.mu.Lock()
	ids, repeats, lostID := slices.Clone(store.ids), slices.Clone(store.repeats), store.lostID
	store.mu.Unlock()
	require.NotEmpty(t, lostID, "the lost acquisition had an ID")
	assert.Equal(t, []string{lostID}, repeats, "the processor asked for the lost acquisition again, by its ID, once (RepeatAcquisition), and for no other")
	assert.Equal(t, 1, strings.Count(strings.Join(ids, " "), lostID), "no acquisition reuses the lost one's ID: the repeat returned its leases")
	assert.Contains(t, logs.String(), "level=WARN msg=\"acquiring inbox items failed; retrying after the poll interval with the same acquisition ID")
	assert.NotContains(t, logs.String(), "level=ERROR")
}

// pipelineOnly hides every capability of its store but the pipeline's.
type pipelineOnly struct{ webhooks.InboxStore }

// TestProcessorLostReplyWithoutARepeater: with a store that cannot answer
// an acquisition again (no AcquisitionRepeater), the leases of a lost
// reply wait out their expiry and are then taken over, Reclaimed, as
// after a crash: each item still runs, once.
func TestProcessorLostReplyWithoutARepeater(t *testing.T) {
	t.Parallel()
	lost := &lostReplyStore{observedStore: newObservedStore()}
	store := pipelineOnly{lost}
	clock := webhookstest.NewClock(base)
	mux, runs := countingMux()
	p, err := webhooks.NewProcessor(store, mux, webhooks.WithClock(clock), webhooks.WithLogger(discard),
		webhooks.WithPollInterval(time.Millisecond), webhooks.WithLeaseDuration(30*time.Second))
	require.NoError(t, err)
	keys := []webhooks.InboxKey{enqueue(t, lost, "a", "x", base), enqueue(t, lost, "b", "x", base)}
	stop := runProcessor(t, p)
	for deadline := time.Now().Add(10 * time.Second); !lost.lost.Load(); time.Sleep(time.Millisecond) { // polled: no signal of the lost reply
		require.True(t, time.Now().Before(deadline), "no acquisition within 10s")
	}
	clock.Advance(30 * time.Second) // the lost reply's leases expire
	for range keys {
		s := lost.next(t)
		require.Equal(t, string(webhooks.AttemptSucceeded), s.Op, "settlement of %s", s.Key)
	}
	stop()
	lost.mu.Lock()
	defer lost.mu.Unlock()
	assert.Empty(t, lost.repeats, "the store is no AcquisitionRepeater: nothing is asked for again")
	assert.Equal(t, map[webhooks.InboxKey]int{keys[0]: 1, keys[1]: 1}, runs(), "each item ran once")
	for _, k := range keys {
		assert.Equal(t, 2, get(t, lost.observedStore, k).Attempts, "%s: the lost reply's attempt counts, as a crash", k)
	}
}

// TestProcessorNamesEachAcquisition: every acquisition that got an answer
// is followed by one with a new ID.
func TestProcessorNamesEachAcquisition(t *testing.T) {
	t.Parallel()
	store := &lostReplyStore{observedStore: newObservedStore()}
	store.lost.Store(true) // no lost reply here
	mux := webhooks.NewMux()
	mux.MustHandleFunc("*", func(context.Context, webhooks.Event) error { return nil })
	p, err := webhooks.NewProcessor(store, mux, webhooks.WithClock(webhookstest.NewClock(base)), webhooks.WithPollInterval(time.Millisecond))
	require.NoError(t, err)
	enqueue(t, store, "a", "x", base)
	stop := runProcessor(t, p)
	require.Equal(t, string(webhooks.AttemptSucceeded), store.next(t).Op)
	for range 3 {
		p.Wake()
	}
	stop()
	store.mu.Lock()
	defer store.mu.Unlock()
	require.NotEmpty(t, store.ids)
	seen := map[string]bool{}
	for _, id := range store.ids {
		assert.NotEmpty(t, id)
		assert.False(t, seen[id], "ID %q used twice", id)
		seen[id] = true
	}
}

// doubleGrantStore makes one acquisition's reply lost after two grants
// under its ID: the call's own, and a second one as a statement that timed
// out here and committed late would make. The repeat then returns more
// leases than the processor asked for.
type doubleGrantStore struct {
	*observedStore
	lost  atomic.Bool
	extra int
}

func (s *doubleGrantStore) Acquire(ctx context.Context, req webhooks.AcquireRequest) ([]*webhooks.Lease, error) {
	leases, err := s.observedStore.Acquire(ctx, req)
	if err == nil && len(leases) > 0 && s.lost.CompareAndSwap(false, true) {
		late := req
		late.Max = s.extra
		if _, err := s.observedStore.Acquire(ctx, late); err != nil {
			return nil, err
		}
		return nil, errors.New("read tcp 127.0.0.1:5432: i/o timeout")
	}
	return leases, err
}

// TestProcessorGivesBackLeasesBeyondItsWorkers: a repeated acquisition
// that returns more leases than there are free workers gives the rest
// back unrun, without counting their attempt; every item runs once, and
// Run returns when stopped.
func TestProcessorGivesBackLeasesBeyondItsWorkers(t *testing.T) {
	t.Parallel()
	store := &doubleGrantStore{observedStore: newObservedStore(), extra: 5}
	mux, runs := countingMux()
	p, err := webhooks.NewProcessor(store, mux, webhooks.WithClock(webhookstest.NewClock(base)), webhooks.WithWorkers(1),
		webhooks.WithPollInterval(time.Millisecond), webhooks.WithLogger(discard))
	require.NoError(t, err)
	const items = 10
	keys := make([]webhooks.InboxKey, items)
	for i := range keys {
		keys[i] = enqueue(t, store, fmt.Sprint("e", i), "x", base)
	}
	stop := runProcessor(t, p)
	succeeded := 0
	for succeeded < items {
		if s := store.next(t); s.Op == string(webhooks.AttemptSucceeded) {
			succeeded++
		}
	}
	stop()
	require.True(t, store.lost.Load(), "the double grant happened")
	for _, k := range keys {
		d := get(t, store.observedStore, k)
		assert.Equal(t, webhooks.StateSucceeded, d.State, k)
		assert.Equal(t, 1, d.Attempts, "%s: a lease given back unrun does not count its attempt", k)
	}
	ran := runs()
	for _, k := range keys {
		assert.Equal(t, 1, ran[k], "%s ran once", k.EventID)
	}
}

// downStore fails every acquisition and every repeat, and records each
// call's ID and whether it was a repeat.
type downStore struct {
	*observedStore
	mu    sync.Mutex
	calls []acquisitionCall
}

type acquisitionCall struct {
	id     string
	repeat bool
}

func (s *downStore) Acquire(_ context.Context, req webhooks.AcquireRequest) ([]*webhooks.Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, acquisitionCall{req.ID, false})
	return nil, errors.New("connection refused")
}

func (s *downStore) RepeatAcquisition(_ context.Context, req webhooks.RepeatRequest) ([]*webhooks.Lease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, acquisitionCall{req.ID, true})
	return nil, errors.New("connection refused")
}

func (s *downStore) waitCalls(t *testing.T, n int) []acquisitionCall {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		s.mu.Lock()
		calls := slices.Clone(s.calls)
		s.mu.Unlock()
		if len(calls) >= n {
			return calls
		}
		require.True(t, time.Now().Before(deadline), "fewer than %d acquisitions within 10s", n)
	}
}

// TestProcessorStopsRepeatingAfterALease: a failed acquisition is asked
// for again by its ID until a lease duration has passed since it failed;
// then whatever it leased has expired, and the next one is new.
func TestProcessorStopsRepeatingAfterALease(t *testing.T) {
	t.Parallel()
	store := &downStore{observedStore: newObservedStore()}
	clock := webhookstest.NewClock(base)
	p, err := webhooks.NewProcessor(store, webhooks.NewMux(), webhooks.WithClock(clock), webhooks.WithPollInterval(time.Millisecond),
		webhooks.WithLeaseDuration(30*time.Second), webhooks.WithLogger(discard))
	require.NoError(t, err)
	stop := runProcessor(t, p)
	calls := store.waitCalls(t, 3)
	first := calls[0]
	assert.False(t, first.repeat)
	for _, c := range calls[1:] {
		assert.Equal(t, first.id, c.id, "a failed acquisition is asked for again")
		assert.True(t, c.repeat, "asked for again with RepeatAcquisition")
	}
	clock.Advance(30 * time.Second)
	n := len(store.waitCalls(t, 0))
	calls = store.waitCalls(t, n+2)
	stop()
	last := calls[len(calls)-1]
	assert.NotEqual(t, first.id, last.id, "a lease duration after the failure, a new acquisition")
	fresh := slices.IndexFunc(calls, func(c acquisitionCall) bool { return c.id != first.id })
	require.GreaterOrEqual(t, fresh, 0)
	assert.False(t, calls[fresh].repeat, "the new acquisition is a first call")
}

// countingMux returns a mux whose handler succeeds for every event, and a
// function that returns how many times each item's handler ran so far.
func countingMux() (*webhooks.Mux, func() map[webhooks.InboxKey]int) {
	var (
		mu   sync.Mutex
		runs = map[webhooks.InboxKey]int{}
	)
	mux := webhooks.NewMux()
	mux.MustHandleFunc("*", func(_ context.Context, ev webhooks.Event) error {
		mu.Lock()
		defer mu.Unlock()
		runs[webhooks.InboxKey{Provider: ev.Provider, Tenant: ev.Tenant, EventID: ev.ID}]++
		return nil
	})
	return mux, func() map[webhooks.InboxKey]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(runs)
	}
}

// notReadyStore answers every acquisition with an error wrapping
// ErrStoreNotReady, as pgstore does on a schema never migrated.
type notReadyStore struct {
	*downStore
}

func (s *notReadyStore) Acquire(ctx context.Context, req webhooks.AcquireRequest) ([]*webhooks.Lease, error) {
	_, _ = s.downStore.Acquire(ctx, req)
	return nil, fmt.Errorf("test store: schema %q has no inbox: %w", "hooks", webhooks.ErrStoreNotReady)
}

// TestProcessorStopsWhenTheStoreIsNotReady: an acquisition that fails
// with ErrStoreNotReady stops Run, which says so once and returns the
// error, after stopping its wake source, instead of repeating it at every
// poll.
func TestProcessorStopsWhenTheStoreIsNotReady(t *testing.T) {
	t.Parallel()
	store := &notReadyStore{&downStore{observedStore: newObservedStore()}}
	logs := &syncBuffer{}
	ws := &fakeWakeSource{listening: make(chan struct{}), stopped: make(chan struct{})}
	p, err := webhooks.NewProcessor(store, webhooks.NewMux(), webhooks.WithClock(webhookstest.NewClock(base)),
		webhooks.WithPollInterval(time.Millisecond), webhooks.WithWakeSource(ws), webhooks.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	require.NoError(t, err)
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { done <- p.Run(ctx) }()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second): // the safety net of a test that would otherwise hang
		cancel()
		<-done
		t.Fatalf("Run did not return within 10s of a store that is not ready; %d acquisitions", len(store.waitCalls(t, 0)))
	}
	require.ErrorIs(t, err, webhooks.ErrStoreNotReady)
	assert.ErrorContains(t, err, `schema "hooks" has no inbox`)
	assert.Len(t, store.waitCalls(t, 0), 1, "one acquisition, not repeated")
	assert.Equal(t, 1, strings.Count(logs.String(), "level=ERROR"), "said once:\n%s", logs)
	assert.Contains(t, logs.String(), "the processor stops")
	assert.NotContains(t, logs.String(), "level=WARN", "no warning about a lost acquisition reply")
	select {
	case <-ws.stopped:
	default:
		t.Fatal("Run returned before the wake source's Listen did")
	}
	// A store that is only down keeps Run going (TestProcessorStopsRepeatingAfterALease).
}
