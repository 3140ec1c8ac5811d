package webhooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
)

// acquireFails is a lease store whose database has no inbox table: every
// acquisition fails, as it does before the migrations ran.
type acquireFails struct{ *memstore.Inbox }

func (acquireFails) Acquire(context.Context, webhooks.AcquireRequest) ([]*webhooks.Lease, error) {
	return nil, errors.New(`relation "webhooks.inbox_items" does not exist`)
}

// TestReceiverAndProcessorLogByDefault: without WithLogger, a Receiver
// and a Processor log to slog.Default(), so that a wrong secret, a store
// that is down and a missing migration are visible without wiring. It
// replaces the default logger, so it does not run in parallel.
func TestReceiverAndProcessorLogByDefault(t *testing.T) {
	logs := new(syncBuffer)
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(logs, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })

	registry := webhooks.NewRegistry()
	registry.MustRegister("acme", headerVerifier)
	inbox := &flakyInbox{Enqueuer: memstore.NewInbox()}
	receiver, err := webhooks.NewReceiver(registry, inbox, webhooks.WithReplayStore(memstore.NewReplay()))
	require.NoError(t, err)
	post := func(sig string) int {
		req := httptest.NewRequest(http.MethodPost, "/webhooks/acme", strings.NewReader(`{"id":"e1"}`))
		req.Header.Set("X-Sig", sig)
		req.Header.Set("X-Id", "e1")
		rec := httptest.NewRecorder()
		receiver.ServeHTTP(rec, req)
		return rec.Code
	}

	require.Equal(t, http.StatusUnauthorized, post("wrong"))
	logs.waitFor(t, `"msg":"webhook rejected"`)

	inbox.down.Store(true)
	require.Equal(t, http.StatusServiceUnavailable, post("ok"))
	logs.waitFor(t, `"msg":"webhook not stored"`)
	assert.Contains(t, logs.String(), "connection refused")

	processor, err := webhooks.NewProcessor(acquireFails{memstore.NewInbox()}, webhooks.NewMux())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- processor.Run(ctx) }()
	logs.waitFor(t, `"msg":"acquiring inbox items failed`)
	assert.Contains(t, logs.String(), "does not exist")
	cancel()
	<-done
}

// TestProcessorNamesItsWorkerByDefault: without WithWorkerIdentity, the
// attempt history names the worker as "host:pid", and no version; with it,
// the host's names.
func TestProcessorNamesItsWorkerByDefault(t *testing.T) {
	t.Parallel()
	host, err := os.Hostname()
	require.NoError(t, err)
	for _, tc := range []struct {
		name            string
		opts            []webhooks.ProcessorOption
		worker, version string
	}{
		{"default", nil, host + ":" + strconv.Itoa(os.Getpid()), ""},
		{"WithWorkerIdentity", []webhooks.ProcessorOption{webhooks.WithWorkerIdentity("billing-7", "v1.4.2")}, "billing-7", "v1.4.2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store, clock, p := newTestProcessor(t, func(context.Context, webhooks.Event) error { return nil },
				append([]webhooks.ProcessorOption{webhooks.WithLogger(discard)}, tc.opts...)...)
			key := enqueue(t, store, "e1", "invoice.paid", clock.Now())
			runProcessor(t, p)
			require.Equal(t, string(webhooks.AttemptSucceeded), store.next(t).Op)
			d, err := store.Get(t.Context(), key)
			require.NoError(t, err)
			require.Len(t, d.History, 1)
			assert.Equal(t, tc.worker, d.History[0].Worker)
			assert.Equal(t, tc.version, d.History[0].Version)
		})
	}
}

// withCounter is a slog.Handler that counts the WithAttrs calls that name
// an event (event_id).
type withCounter struct {
	slog.Handler
	n *atomic.Int64
}

func (h withCounter) WithAttrs(as []slog.Attr) slog.Handler {
	for _, a := range as {
		if a.Key == "event_id" {
			h.n.Add(1)
		}
	}
	return withCounter{h.Handler.WithAttrs(as), h.n}
}

// TestJobLogsNameTheirJob: what the Processor logs of a job carries the
// job's attributes and the source line of the call that logged it; a job
// that logs nothing at the logger's level (here, successes at Warn) costs
// no Logger.With. Mutation: the attributes are added for every job.
func TestJobLogsNameTheirJob(t *testing.T) {
	t.Parallel()
	logs := new(syncBuffer)
	var with atomic.Int64
	logger := slog.New(withCounter{slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn, AddSource: true}), &with})
	store := memstore.NewInbox()
	mux := webhooks.NewMux()
	require.NoError(t, mux.HandleFunc("ok", func(context.Context, webhooks.Event) error { return nil }))
	require.NoError(t, mux.HandleFunc("bad", func(context.Context, webhooks.Event) error { return errors.New("downstream refused") }))
	p, err := webhooks.NewProcessor(store, mux, webhooks.WithLogger(logger), webhooks.WithWorkers(1))
	require.NoError(t, err)
	for i, typ := range []string{"ok", "ok", "ok", "bad"} {
		_, err := store.Enqueue(t.Context(), webhooks.Envelope{Key: webhooks.InboxKey{Provider: "acme", Tenant: "t1", EventID: "e" + strconv.Itoa(i)},
			EventType: typ, ReceivedAt: time.Now().Add(time.Duration(i-10) * time.Second)})
		require.NoError(t, err)
	}
	defer runProcessor(t, p)()
	logs.waitFor(t, "event failed; will retry")
	var line map[string]any
	for l := range strings.Lines(logs.String()) {
		if strings.Contains(l, "event failed; will retry") {
			require.NoError(t, json.Unmarshal([]byte(l), &line))
		}
	}
	for k, v := range map[string]any{"provider": "acme", "tenant": "t1", "event_id": "e3", "event_type": "bad", "attempt": float64(1), "err": "downstream refused"} {
		assert.Equal(t, v, line[k], k)
	}
	assert.NotContains(t, line, "handler", "one unnamed handler: no handler attribute")
	src, _ := line["source"].(map[string]any)
	assert.Contains(t, src["file"], "settle.go", "the source is the line that logged, not the job logger's")
	assert.EqualValues(t, 1, with.Load(), "only the failed job's logger took its attributes")
}
