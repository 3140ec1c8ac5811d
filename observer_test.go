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
	receives []webhooks.ReceiveResult
	starts   []webhooks.Event
	ends     []webhooks.AttemptOutcome
	ctxSeen  []bool // whether EndAttempt saw StartAttempt's context
}

func (r *recorder) StartReceive(ctx context.Context, route webhooks.Route) (context.Context, string) {
	return context.WithValue(ctx, ctxKey{}, "receive"), "trace-of-" + route.Provider
}

func (r *recorder) EndReceive(ctx context.Context, res webhooks.ReceiveResult, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ctx.Value(ctxKey{}) != "receive" || ctx.Err() != nil {
		res.Status = 0 // not the live context StartReceive returned
	}
	r.receives = append(r.receives, res)
}

func (r *recorder) StartAttempt(ctx context.Context, ev webhooks.Event) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts = append(r.starts, ev)
	return context.WithValue(ctx, ctxKey{}, "attempt")
}

func (r *recorder) EndAttempt(ctx context.Context, ev webhooks.Event, s webhooks.Settlement) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ends = append(r.ends, s.Outcome)
	r.ctxSeen = append(r.ctxSeen, ctx.Value(ctxKey{}) == "attempt")
}

func TestObserver(t *testing.T) {
	t.Parallel()
	obs := &recorder{}
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
	assert.Equal(t, "trace-of-acme", get(t, store, key).TraceLink, "the receive's link is stored with the item")

	runProcessor(t, p)
	p.Wake()
	require.Equal(t, "retried", store.next(t).Op)
	clock.Advance(time.Minute)
	p.Wake()
	require.Equal(t, "succeeded", store.next(t).Op)

	obs.mu.Lock()
	defer obs.mu.Unlock()
	require.Len(t, obs.receives, 2)
	assert.Equal(t, webhooks.StatusAccepted, obs.receives[0].Status)
	assert.Equal(t, key, obs.receives[0].Key)
	assert.Equal(t, webhooks.StatusRejected, obs.receives[1].Status)
	assert.Equal(t, webhooks.ReasonBadSignature, obs.receives[1].Reason)
	assert.Equal(t, webhooks.Route{Provider: "acme"}, obs.receives[1].Route, "a rejected request's route is reported too")
	require.Len(t, obs.starts, 2)
	assert.Equal(t, "trace-of-acme", obs.starts[0].TraceLink, "an attempt can link to its receive")
	assert.Equal(t, []webhooks.AttemptOutcome{webhooks.AttemptRetried, webhooks.AttemptSucceeded}, obs.ends)
	assert.Equal(t, []bool{true, true}, obs.ctxSeen)
}
