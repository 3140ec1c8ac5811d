package webhooks_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/ops"
)

// crashableStore is memstore as a process sees it until it crashes: after
// crash, nothing the process does reaches the store any more, as when it
// was killed (its leases stay as they were, to expire).
type crashableStore struct {
	*memstore.Inbox
	crashed atomic.Bool
}

var errCrashed = errors.New("the process is gone")

func (s *crashableStore) crash() { s.crashed.Store(true) }

func (s *crashableStore) Acquire(ctx context.Context, req webhooks.AcquireRequest) ([]*webhooks.Lease, error) {
	if s.crashed.Load() {
		return nil, errCrashed
	}
	return s.Inbox.Acquire(ctx, req)
}

func (s *crashableStore) Settle(ctx context.Context, st webhooks.Settlement) error {
	if s.crashed.Load() {
		return errCrashed
	}
	return s.Inbox.Settle(ctx, st)
}

func (s *crashableStore) SettleBatch(ctx context.Context, ss []webhooks.Settlement) []error {
	return settleEach(ctx, s.Settle, ss)
}

func (s *crashableStore) StartLeases(ctx context.Context, req webhooks.StartRequest) []error {
	if s.crashed.Load() {
		errs := make([]error, len(req.Leases))
		for i := range errs {
			errs[i] = errCrashed
		}
		return errs
	}
	return s.Inbox.StartLeases(ctx, req)
}

func (s *crashableStore) ExtendLease(ctx context.Context, req webhooks.ExtendRequest) error {
	if s.crashed.Load() {
		return errCrashed
	}
	return s.Inbox.ExtendLease(ctx, req)
}

// TestProcessorCrashChargesOnlyWhatRan: one acquisition leases a poison
// event and, queued behind it for the one worker, an ordinary one; the
// process crashes while the poison's handler runs. When both leases have
// expired and another processor takes the items over, the poison's
// crashed attempt counts, and the ordinary event's, which never ran,
// does not.
func TestProcessorCrashChargesOnlyWhatRan(t *testing.T) {
	t.Parallel()
	inbox, clock := memstore.NewInbox(), newFakeClock(base)
	poison := enqueue(t, inbox, "poison", "x", base)
	neighbour := enqueue(t, inbox, "neighbour", "x", base) // due with it, enqueued after

	crashing := &crashableStore{Inbox: inbox}
	running := make(chan string, 2)
	mux := webhooks.NewMux()
	mux.MustHandleFunc("*", func(ctx context.Context, ev webhooks.Event) error {
		running <- ev.ID
		<-ctx.Done() // the poison: it brings the process down
		return ctx.Err()
	})
	first, err := webhooks.NewProcessor(crashing, mux, webhooks.WithClock(clock), webhooks.WithWorkers(1),
		webhooks.WithLeaseDuration(time.Second), webhooks.WithShutdownGrace(0), webhooks.WithLogger(discard))
	require.NoError(t, err)
	stop := runProcessor(t, first)
	first.Wake()
	require.Equal(t, "poison", <-running, "the poison runs first; the ordinary event waits for the worker")
	crashing.crash()
	stop()
	select {
	case id := <-running:
		t.Fatalf("%s ran in the crashed process", id)
	default:
	}
	for _, k := range []webhooks.InboxKey{poison, neighbour} {
		d, err := inbox.Get(context.Background(), k)
		require.NoError(t, err)
		require.Equal(t, webhooks.StateLeased, d.State, "%s was leased by the crashed process", k.EventID)
	}

	clock.Advance(2 * time.Second) // both leases expired
	store := &observedStore{Inbox: inbox, events: make(chan settled, 100)}
	second, err := webhooks.NewProcessor(store, webhooks.DispatcherFunc(func(context.Context, webhooks.Event) error { return nil }),
		webhooks.WithClock(clock), webhooks.WithWorkers(1), webhooks.WithLogger(discard))
	require.NoError(t, err)
	runProcessor(t, second)
	second.Wake()
	require.Equal(t, "succeeded", store.next(t).Op)
	require.Equal(t, "succeeded", store.next(t).Op)

	it := get(t, store, poison)
	assert.Equal(t, 2, it.Attempts, "the poison's crashed attempt counts")
	assert.Equal(t, []webhooks.AttemptOutcome{ops.OutcomeCrashed, webhooks.AttemptSucceeded}, outcomesOf(it))
	it = get(t, store, neighbour)
	assert.Equal(t, 1, it.Attempts, "the crash cost nothing to the event that waited beside the poison")
	assert.Equal(t, []webhooks.AttemptOutcome{webhooks.AttemptSucceeded}, outcomesOf(it), "its history shows no attempt that never ran")
}

func outcomesOf(d ops.Detail) []webhooks.AttemptOutcome {
	out := make([]webhooks.AttemptOutcome, len(d.History))
	for i, a := range d.History {
		out[i] = a.Outcome
	}
	return out
}
