package webhooks_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/ops"
	"github.com/hookinbox/webhooks/webhookstest"
)

// crashableStore is memstore as a process sees it until it crashes: after
// crash, nothing the process does reaches the store any more, as when it
// was killed (its leases stay as they were, to expire).
type crashableStore struct {
	*memstore.Inbox
	crashed atomic.Bool
	// settled, when set, is told the key of each settlement the store
	// applied; starting, of each lease StartLeases is asked to start.
	settled, starting chan<- webhooks.InboxKey
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
	err := s.Inbox.Settle(ctx, st)
	if err == nil && s.settled != nil {
		s.settled <- st.Lease.Key()
	}
	return err
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
	if s.starting != nil {
		for _, l := range req.Leases {
			s.starting <- l.Key()
		}
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
	inbox, clock := memstore.NewInbox(), webhookstest.NewClock(base)
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

// TestProcessorCrashLoopBesideRunningNeighbours: a poison event crashes
// its process at every attempt, and the first time three ordinary events
// of the same acquisition run beside it, as they do when workers are free
// (the default: 100). The process is restarted after each crash, once the
// leases it held expired. The neighbours pay for the crash they ran
// beside, and for no other: a lease taken over from a crashed attempt
// runs alone, with no other handler running or lease starting until it is
// settled, so the poison crashes alone from then on and ends dead after
// the retry budget's attempts. An ordinary handler finishes only once the
// poison either started beside it (the crash loop this test is about) or
// is waiting to run alone, as if it took longer than the poison.
func TestProcessorCrashLoopBesideRunningNeighbours(t *testing.T) {
	t.Parallel()
	const budget = 3
	inbox, clock := memstore.NewInbox(), webhookstest.NewClock(base)
	poison := enqueue(t, inbox, "poison", "x", base)
	var neighbours []webhooks.InboxKey
	for _, id := range []string{"n1", "n2", "n3"} {
		neighbours = append(neighbours, enqueue(t, inbox, id, "x", base))
	}
	all := append([]webhooks.InboxKey{poison}, neighbours...)
	state := func(k webhooks.InboxKey) webhooks.State {
		d, err := inbox.Get(context.Background(), k)
		require.NoError(t, err)
		return d.State
	}
	done := func() bool {
		for _, k := range all {
			if s := state(k); s != webhooks.StateSucceeded && s != webhooks.StateDead {
				return false
			}
		}
		return true
	}

	type running struct {
		id      string
		proceed chan struct{}
	}
	crashes := 0
	for round := 1; !done(); round++ {
		require.LessOrEqual(t, round, 2*budget+2, "the crash loop did not end")
		settled, starting := make(chan webhooks.InboxKey, 16), make(chan webhooks.InboxKey, 16)
		store := &crashableStore{Inbox: inbox, settled: settled, starting: starting}
		started := make(chan running)
		logs := &syncBuffer{}
		p, err := webhooks.NewProcessor(store, webhooks.DispatcherFunc(func(ctx context.Context, ev webhooks.Event) error {
			r := running{ev.ID, make(chan struct{})}
			select {
			case started <- r:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case <-r.proceed: // an ordinary event's handler finishes
				return nil
			case <-ctx.Done(): // the crash
				return ctx.Err()
			}
		}), webhooks.WithClock(clock), webhooks.WithLeaseDuration(time.Second), webhooks.WithShutdownGrace(0),
			webhooks.WithRetryPolicy(webhooks.ExponentialPolicy{MaxAttempts: budget}),
			webhooks.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
		require.NoError(t, err)
		stop := runProcessor(t, p)
		p.Wake()

		// poisonStartedOrWaits waits until the poison's lease is being
		// started, or the poison waits to run alone, or is settled.
		poisonStarted := false
		poisonStartedOrWaits := func() (startedBeside bool) {
			timeout := time.After(10 * time.Second)
			for {
				changed := logs.changes()
				switch {
				case poisonStarted:
					return true
				case strings.Contains(logs.String(), "runs alone") && strings.Contains(logs.String(), "event_id=poison"),
					state(poison) == webhooks.StateDead:
					return false
				}
				select {
				case k := <-starting:
					poisonStarted = poisonStarted || k == poison
				case <-settled:
				case <-changed:
				case <-timeout:
					t.Fatalf("round %d: the poison neither started nor waited within 10s; logs:\n%s", round, logs.String())
				}
			}
		}
		inFlight := map[string]bool{}
		for crashed := false; !crashed && !done(); {
			select {
			case r := <-started:
				inFlight[r.id] = true
				switch {
				case round == 1 && len(inFlight) < len(all):
					// The first time, every event runs beside the poison.
				case round == 1 || r.id == poison.EventID:
					delete(inFlight, r.id)
					if round > 1 {
						assert.Empty(t, inFlight, "round %d: the poison, taken over from a crashed attempt, ran beside other handlers", round)
					}
					store.crash()
					crashes++
					crashed = true
				case !poisonStartedOrWaits():
					delete(inFlight, r.id)
					close(r.proceed)
				}
			case <-settled:
			case k := <-starting:
				poisonStarted = poisonStarted || k == poison
			case <-time.After(10 * time.Second):
				t.Fatalf("round %d: nothing ran or settled within 10s", round)
			}
		}
		stop()
		clock.Advance(2 * time.Second) // the crashed process's leases expired
	}

	d, err := inbox.Get(context.Background(), poison)
	require.NoError(t, err)
	assert.Equal(t, webhooks.StateDead, d.State)
	assert.Equal(t, budget, d.Attempts, "the poison's attempts are the retry budget")
	want := make([]webhooks.AttemptOutcome, budget)
	for i := range want {
		want[i] = ops.OutcomeCrashed
	}
	assert.Equal(t, want, outcomesOf(d), "each attempt crashed; the dead-lettering ran nothing")
	assert.Equal(t, budget, crashes, "one crash per attempt")
	for _, k := range neighbours {
		d, err := inbox.Get(context.Background(), k)
		require.NoError(t, err)
		assert.Equal(t, webhooks.StateSucceeded, d.State, "%s: %v", k.EventID, outcomesOf(d))
		assert.Equal(t, 2, d.Attempts, "%s paid for the crash it ran beside, and for no other", k.EventID)
		assert.Equal(t, []webhooks.AttemptOutcome{ops.OutcomeCrashed, webhooks.AttemptSucceeded}, outcomesOf(d), k.EventID)
	}
}
