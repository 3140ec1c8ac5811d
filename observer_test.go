package webhooks_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/webhookstest"
)

type ctxKey struct{}

// recorder is an Observer that records what it is told.
type recorder struct {
	mu       sync.Mutex
	receives []webhooks.ReceiveEndData
	starts   []webhooks.Event
	ends     []webhooks.AttemptEndData
	ctxSeen  []bool // whether EndAttempt saw StartAttempt's context
}

type receiveKey struct{}

func (r *recorder) StartReceive(ctx context.Context, d webhooks.ReceiveStartData) context.Context {
	return context.WithValue(context.WithValue(ctx, ctxKey{}, "receive"), receiveKey{}, d.Route)
}

func (r *recorder) EndReceive(ctx context.Context, d webhooks.ReceiveEndData) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ctx.Value(ctxKey{}) != "receive" || ctx.Err() != nil {
		d.Result.Status = 0 // not the live context StartReceive returned
	}
	r.receives = append(r.receives, d)
}

func (r *recorder) StartAttempt(ctx context.Context, d webhooks.AttemptStartData) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts = append(r.starts, d.Event)
	return context.WithValue(ctx, ctxKey{}, "attempt")
}

func (r *recorder) EndAttempt(ctx context.Context, d webhooks.AttemptEndData) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ends = append(r.ends, d)
	r.ctxSeen = append(r.ctxSeen, ctx.Value(ctxKey{}) == "attempt")
}

// linkingRecorder is a recorder that also links items to their receives
// (TraceLinker), by the context StartReceive returned.
type linkingRecorder struct{ *recorder }

func (linkingRecorder) TraceLink(ctx context.Context) string {
	route, _ := ctx.Value(receiveKey{}).(webhooks.Route)
	return "trace-of-" + route.Provider
}

func TestObserver(t *testing.T) {
	t.Parallel()
	obs := linkingRecorder{&recorder{}}
	var calls int
	mux := webhooks.NewMux()
	mux.MustHandleFunc("*", func(ctx context.Context, ev webhooks.Event) error {
		calls++
		if ctx.Value(ctxKey{}) != "attempt" {
			return webhooks.Permanent(errors.New("the dispatcher did not get StartAttempt's context"))
		}
		if calls == 1 {
			return errors.New("once")
		}
		return nil
	})
	store, clock := newObservedStore(), webhookstest.NewClock(base)
	p, err := webhooks.NewProcessor(store, mux, webhooks.WithClock(clock), webhooks.WithObserver(obs), webhooks.WithLogger(discard))
	require.NoError(t, err)
	r := webhooks.NewRegistry()
	r.MustRegister("acme", headerVerifier)
	rcv, err := webhooks.NewReceiver(r, store, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithClock(clock), webhooks.WithObserver(obs), webhooks.WithLogger(discard))
	require.NoError(t, err)

	require.Equal(t, http.StatusAccepted, post(t, rcv, "/webhooks/acme", `{}`, okHeaders("e1")).Code)
	require.Equal(t, http.StatusUnauthorized, post(t, rcv, "/webhooks/acme", `{}`, map[string]string{"X-Sig": "forged", "X-Id": "e2"}).Code)
	key := webhooks.InboxKey{Provider: "acme", EventID: "e1"}
	assert.Equal(t, "trace-of-acme", get(t, store, key).TraceLink, "the receive's link (TraceLinker) is stored with the item")

	runProcessor(t, p)
	p.Wake()
	require.Equal(t, "retried", store.next(t).Op)
	clock.Advance(time.Minute)
	p.Wake()
	require.Equal(t, "succeeded", store.next(t).Op)

	obs.mu.Lock()
	defer obs.mu.Unlock()
	require.Len(t, obs.receives, 2)
	assert.Equal(t, webhooks.StatusAccepted, obs.receives[0].Result.Status)
	assert.Equal(t, key, obs.receives[0].Result.Key)
	assert.NoError(t, obs.receives[0].Err)
	assert.Positive(t, obs.receives[0].StoreTime, "the stores' time is measured")
	assert.Equal(t, webhooks.StatusRejected, obs.receives[1].Result.Status)
	assert.Equal(t, webhooks.ReasonBadSignature, obs.receives[1].Result.Reason)
	assert.ErrorIs(t, obs.receives[1].Err, webhooks.ReasonBadSignature, "the error Receive returns")
	assert.Equal(t, webhooks.Route{Provider: "acme"}, obs.receives[1].Route, "a rejected request's route is reported too")
	assert.Zero(t, obs.receives[1].StoreTime, "no store was called")
	require.Len(t, obs.starts, 2)
	assert.Equal(t, "trace-of-acme", obs.starts[0].TraceLink, "an attempt can link to its receive")
	require.Len(t, obs.ends, 2)
	assert.Equal(t, webhooks.AttemptRetried, obs.ends[0].Settlement.Outcome)
	assert.Equal(t, webhooks.FailureError, obs.ends[0].Settlement.Failure.Class)
	assert.Equal(t, webhooks.AttemptSucceeded, obs.ends[1].Settlement.Outcome)
	assert.Equal(t, "e1", obs.ends[1].Event.ID)
	assert.False(t, obs.ends[0].LeaseLost || obs.ends[1].LeaseLost)
	assert.Equal(t, []bool{true, true}, obs.ctxSeen)
}

// TestObserverWithoutTraceLinker: an Observer that does not link items to
// their receives (no TraceLinker) stores no link; it is still told
// everything else.
func TestObserverWithoutTraceLinker(t *testing.T) {
	t.Parallel()
	obs := &recorder{}
	r := webhooks.NewRegistry()
	r.MustRegister("acme", headerVerifier)
	inbox := memstore.NewInbox()
	rcv, err := webhooks.NewReceiver(r, inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithObserver(obs), webhooks.WithLogger(discard))
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, post(t, rcv, "/webhooks/acme", `{}`, okHeaders("e1")).Code)
	it, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: "acme", EventID: "e1"})
	require.NoError(t, err)
	assert.Empty(t, it.TraceLink)
	obs.mu.Lock()
	defer obs.mu.Unlock()
	require.Len(t, obs.receives, 1)
	assert.Equal(t, webhooks.StatusAccepted, obs.receives[0].Result.Status)
}

// TestObserverLeaseLost: an attempt whose lease is lost while its handler
// runs is reported with LeaseLost and no settlement: nothing is settled.
func TestObserverLeaseLost(t *testing.T) {
	t.Parallel()
	store := &losingStore{observedStore: newObservedStore()}
	store.lose.Store(true)
	store.key = enqueue(t, store, "e", "x", base)
	obs := &recorder{}
	mux := webhooks.NewMux()
	mux.MustHandleFunc("*", func(ctx context.Context, _ webhooks.Event) error {
		<-ctx.Done() // until the renewer finds the lease lost
		return ctx.Err()
	})
	// Renewals tick on real time, a third of the lease.
	p, err := webhooks.NewProcessor(store, mux, webhooks.WithClock(webhookstest.NewClock(base)), webhooks.WithLeaseDuration(30*time.Millisecond),
		webhooks.WithObserver(obs), webhooks.WithLogger(discard))
	require.NoError(t, err)
	stop := runProcessor(t, p)
	p.Wake()
	for e := store.nextExtend(t); e.Err == nil; e = store.nextExtend(t) {
	}
	stop() // Run returns once the attempt is over, the observer told
	obs.mu.Lock()
	defer obs.mu.Unlock()
	require.Len(t, obs.ends, 1)
	assert.True(t, obs.ends[0].LeaseLost)
	assert.Zero(t, obs.ends[0].Settlement.Outcome, "nothing is settled")
	assert.Equal(t, "e", obs.ends[0].Event.ID)
	assert.Equal(t, []bool{true}, obs.ctxSeen)
}
