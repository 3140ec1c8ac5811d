package webhooks_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/webhookstest"
)

// extendSignalStore is memstore that says, before each lease extension
// reaches the store, which item's lease is being extended.
type extendSignalStore struct {
	*memstore.Inbox
	extending chan webhooks.InboxKey
}

func (s *extendSignalStore) ExtendLease(ctx context.Context, req webhooks.ExtendRequest) error {
	select {
	case s.extending <- req.Lease.Key():
	default: // nobody is waiting for it
	}
	return s.Inbox.ExtendLease(ctx, req)
}

// endAttemptHook calls end from EndAttempt.
type endAttemptHook struct {
	end func(webhooks.Event, webhooks.Settlement)
}

func (endAttemptHook) StartReceive(ctx context.Context, _ webhooks.ReceiveStartData) context.Context {
	return ctx
}
func (endAttemptHook) EndReceive(context.Context, webhooks.ReceiveEndData) {}
func (endAttemptHook) StartAttempt(ctx context.Context, _ webhooks.AttemptStartData) context.Context {
	return ctx
}
func (h endAttemptHook) EndAttempt(_ context.Context, d webhooks.AttemptEndData) {
	h.end(d.Event, d.Settlement)
}

// TestProcessorStartDoesNotRaceRenewal: the one worker's next lease waited,
// held, in the queue and is being extended by the renewer when the worker
// takes it and starts it. The start must not read what the extension
// writes (run with -race: the race detector sees what the assertions
// cannot). The observer of the first attempt returns once an extension of
// the waiting lease is on its way to the store, so that nothing orders the
// extension's effects before the start.
func TestProcessorStartDoesNotRaceRenewal(t *testing.T) {
	t.Parallel()
	store := &extendSignalStore{Inbox: memstore.NewInbox(), extending: make(chan webhooks.InboxKey)}
	first := enqueue(t, store, "first", "x", base)
	queued := enqueue(t, store, "queued", "x", base)
	obs := endAttemptHook{end: func(ev webhooks.Event, _ webhooks.Settlement) {
		if ev.ID != first.EventID {
			return
		}
		for k := range store.extending {
			if k == queued {
				return
			}
		}
	}}
	done := make(chan struct{})
	p, err := webhooks.NewProcessor(store, webhooks.DispatcherFunc(func(_ context.Context, ev webhooks.Event) error {
		if ev.ID == queued.EventID {
			close(done)
		}
		return nil
	}), webhooks.WithClock(webhookstest.NewClock(base)), webhooks.WithWorkers(1), webhooks.WithLeaseDuration(30*time.Millisecond),
		webhooks.WithObserver(obs), webhooks.WithLogger(discard))
	require.NoError(t, err)
	runProcessor(t, p)
	p.Wake()
	<-done
}

// startFailingStore is memstore whose StartLeases answers err for the
// lease of one item, once.
type startFailingStore struct {
	*observedStore
	key  webhooks.InboxKey
	err  error
	once sync.Once
}

func (s *startFailingStore) StartLeases(ctx context.Context, req webhooks.StartRequest) []error {
	errs := make([]error, len(req.Leases))
	var rest []*webhooks.Lease
	var at []int
	for i, l := range req.Leases {
		failed := false
		if l.Key() == s.key {
			s.once.Do(func() { failed = true })
		}
		if failed {
			errs[i] = s.err
			continue
		}
		rest, at = append(rest, l), append(at, i)
	}
	for j, err := range s.observedStore.StartLeases(ctx, webhooks.StartRequest{Leases: rest, Now: req.Now, Duration: req.Duration}) {
		errs[at[j]] = err
	}
	return errs
}

// startTest runs a Processor with one worker on store over two items due
// together: "running", whose handler holds the worker until release is
// closed, and "queued", which waits for it, held. It returns the queued
// item's key and the processor's logs.
func startTest(t *testing.T, store interface {
	webhooks.InboxStore
	webhooks.LeaseStarter
}, ran func(id string), release <-chan struct{}) (running, queued webhooks.InboxKey, logs *syncBuffer, stop func()) {
	t.Helper()
	started := make(chan struct{})
	running = enqueue(t, store, "running", "x", base)
	queued = enqueue(t, store, "queued", "x", base)
	logs = &syncBuffer{}
	p, err := webhooks.NewProcessor(store, webhooks.DispatcherFunc(func(ctx context.Context, ev webhooks.Event) error {
		ran(ev.ID)
		if ev.ID == running.EventID {
			close(started)
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return nil
	}), webhooks.WithClock(webhookstest.NewClock(base)), webhooks.WithWorkers(1), webhooks.WithShutdownGrace(0),
		webhooks.WithPollInterval(10*time.Millisecond), webhooks.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	require.NoError(t, err)
	stop = runProcessor(t, p)
	p.Wake()
	<-started
	return running, queued, logs, stop
}

// TestProcessorStartLostLeaseIsNotRun: a held lease the store refuses to
// start as lost (another instance took the item over) is neither run nor
// settled, and costs its item nothing.
func TestProcessorStartLostLeaseIsNotRun(t *testing.T) {
	t.Parallel()
	store := &startFailingStore{observedStore: newObservedStore(), err: fmt.Errorf("taken over: %w", webhooks.ErrLeaseLost)}
	var mu sync.Mutex
	ranIDs := map[string]int{}
	release := make(chan struct{})
	running, queued, logs, stop := startTest(t, store, func(id string) { mu.Lock(); ranIDs[id]++; mu.Unlock() }, release)
	store.key = queued // before the worker is free to take it
	close(release)
	require.Equal(t, settled{Op: "succeeded", Key: running}, withoutTime(store.next(t)))
	logs.waitFor(t, "the store refused to start the held lease")
	stop()
	for {
		select {
		case e := <-store.events:
			if e.Op != "extend" {
				t.Errorf("%s of %s after its start was refused as lost; want no settlement", e.Op, e.Key)
			}
			continue
		default:
		}
		break
	}
	mu.Lock()
	assert.Equal(t, map[string]int{"running": 1}, ranIDs, "the lost lease did not run")
	mu.Unlock()
	it := get(t, store.observedStore, queued)
	assert.Equal(t, 0, it.Attempts, "a lease never started costs nothing")
	assert.Empty(t, it.History)
}

// TestProcessorStartFailureGivesTheLeaseBack: a held lease whose start
// failed (the store did not answer) is given back unrun, its attempt not
// counted, and runs at the next acquisition.
func TestProcessorStartFailureGivesTheLeaseBack(t *testing.T) {
	t.Parallel()
	store := &startFailingStore{observedStore: newObservedStore(), err: errors.New("connection reset")}
	release := make(chan struct{})
	runs := make(chan string, 10)
	running, queued, logs, _ := startTest(t, store, func(id string) { runs <- id }, release)
	store.key = queued
	close(release)
	ops := map[webhooks.InboxKey][]string{}
	for len(ops[running]) < 1 || len(ops[queued]) < 2 {
		e := store.next(t)
		require.NoError(t, e.Err)
		ops[e.Key] = append(ops[e.Key], e.Op)
	}
	assert.Equal(t, map[webhooks.InboxKey][]string{running: {"succeeded"}, queued: {"abandoned", "succeeded"}}, ops,
		"the lease whose start failed was given back unrun, and run at the next acquisition")
	logs.waitFor(t, "starting a held lease failed")
	assert.Equal(t, "running", <-runs)
	assert.Equal(t, "queued", <-runs)
	assert.Empty(t, runs, "the lease whose start failed did not run before it was given back")
	it := get(t, store.observedStore, queued)
	assert.Equal(t, 1, it.Attempts, "the start that failed cost nothing; the run that followed counts")
	require.Len(t, it.History, 1)
	assert.Equal(t, webhooks.AttemptSucceeded, it.History[0].Outcome)
}

func withoutTime(s settled) settled {
	s.Now = time.Time{}
	return s
}
