package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/ops"
	"github.com/hookinbox/webhooks/webhookstest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// logLines is the standard logger's output, which the quick start's
// handlers write to, waited on line by line.
type logLines struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case l.wrote <- struct{}{}:
	default:
	}
	return l.buf.Write(p)
}

func (l *logLines) await(t *testing.T, substr string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		l.mu.Lock()
		found := strings.Contains(l.buf.String(), substr)
		l.mu.Unlock()
		if found {
			return
		}
		select {
		case <-l.wrote:
		case <-timeout:
			t.Fatalf("the quick start did not log %q within 10s", substr)
		}
	}
}

// TestQuickStart runs the quick start's wiring, mounted as main mounts it,
// and sends it what a new GitHub webhook sends first (its ping), a type
// the host has no handler for and a push: the push is handled, the others
// answered 200, and the inbox holds no dead letter.
func TestQuickStart(t *testing.T) {
	const secret = "It's a Secret to Everybody"
	t.Setenv("GITHUB_WEBHOOK_SECRET", secret)
	t.Setenv("STRIPE_WEBHOOK_SECRET", webhookstest.NewSecret("stripe"))
	logs := &logLines{wrote: make(chan struct{}, 1)}
	log.SetOutput(logs)
	t.Cleanup(func() { log.SetOutput(nil) })

	inbox, replay := memstore.NewInbox(), memstore.NewReplay()
	receiver, processor, err := wire(inbox, replay)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- processor.Run(ctx) }()
	mux := http.NewServeMux()
	mux.Handle("/webhooks/", receiver)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	send := func(typ, id string) (int, string) {
		t.Helper()
		req := webhookstest.NewRequest(t, "github", srv.URL+"/webhooks/github", secret, webhookstest.Message{Type: typ, ID: id})
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var body struct{ Status string }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		return resp.StatusCode, body.Status
	}
	code, status := send("ping", "delivery-ping")
	assert.Equal(t, http.StatusOK, code, "GitHub's ping is answered 200")
	assert.Equal(t, "ignored", status)
	code, status = send("issues", "delivery-issues")
	assert.Equal(t, http.StatusOK, code, "a type without a handler is answered 200")
	assert.Equal(t, "ignored", status)
	code, status = send("push", "delivery-push")
	assert.Equal(t, http.StatusAccepted, code)
	assert.Equal(t, "accepted", status)
	logs.await(t, "push delivery-push")

	cancel()
	require.NoError(t, <-done)
	stats, err := inbox.Stats(context.Background(), ops.StatsRequest{Now: time.Now()})
	require.NoError(t, err)
	assert.Zero(t, stats.States[webhooks.StateDead], "no dead letter: %v", stats.States)
	assert.Equal(t, map[webhooks.State]int64{webhooks.StateSucceeded: 1}, nonzero(stats.States), "only the push was stored, and it succeeded")
}

func nonzero(m map[webhooks.State]int64) map[webhooks.State]int64 {
	out := map[webhooks.State]int64{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}
