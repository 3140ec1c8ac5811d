package webhooks_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

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
