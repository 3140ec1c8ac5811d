package webhooks_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
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

const e2eSecret = "e2e-signing-secret-0123456789"

// demoOptions signs "timestamp.body" with HMAC-SHA256, hex, "sha256=" prefix.
func demoOptions() webhooks.HMACOptions {
	return webhooks.HMACOptions{
		SignedRequest: webhooks.SignedRequest{
			SignatureHeader: "X-Signature",
			SignaturePrefix: "sha256=",
			SignedContent:   "{timestamp}.{body}",
			Timestamp:       webhooks.TimestampSource{Header: "X-Timestamp"},
			Event:           webhooks.EventSource{IDHeader: "X-Event-Id", TypeHeader: "X-Event-Type"},
		},
	}
}

func signedRequest(t *testing.T, url, id, typ, body string, at time.Time) *http.Request {
	t.Helper()
	ts := strconv.FormatInt(at.Unix(), 10)
	m := hmac.New(sha256.New, []byte(e2eSecret))
	m.Write([]byte(ts + "." + body))
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("X-Timestamp", ts)
	req.Header.Set("X-Signature", "sha256="+hex.EncodeToString(m.Sum(nil)))
	req.Header.Set("X-Event-Id", id)
	req.Header.Set("X-Event-Type", typ)
	return req
}

func do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

type e2e struct {
	srv   *httptest.Server
	store *observedStore
	clock *webhookstest.Clock
	proc  *webhooks.Processor
	logs  *syncBuffer
}

func newE2E(t *testing.T, mux *webhooks.Mux) *e2e {
	t.Helper()
	e := &e2e{store: newObservedStore(), clock: webhookstest.NewClock(base), logs: &syncBuffer{}}
	logger := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts := demoOptions()
	opts.Clock = e.clock
	v, err := webhooks.NewHMACVerifier(opts, webhooks.TenantSecrets(map[string][]string{"shop1": {e2eSecret}}))
	require.NoError(t, err)
	registry := webhooks.NewRegistry()
	registry.MustRegister("demo", v)
	e.proc, err = webhooks.NewProcessor(e.store, mux, webhooks.WithClock(e.clock), webhooks.WithLogger(logger), webhooks.WithPollInterval(time.Hour))
	require.NoError(t, err)
	replay := memstore.NewReplay()
	gw, err := webhooks.NewReceiver(registry, e.store, webhooks.WithReplayStore(replay), webhooks.WithClock(e.clock), webhooks.WithLogger(logger), webhooks.WithProcessor(e.proc), webhooks.WithMaxBodyBytes(1024))
	require.NoError(t, err)
	e.srv = httptest.NewServer(gw)
	t.Cleanup(e.srv.Close)
	runProcessor(t, e.proc)
	return e
}

func TestEndToEnd(t *testing.T) {
	t.Parallel()
	var flakyCalls, badCalls atomic.Int32
	fixed := atomic.Bool{}
	mux := webhooks.NewMux()
	require.NoError(t, mux.HandleFunc("order.created", func(context.Context, webhooks.Event) error {
		if flakyCalls.Add(1) <= 2 {
			return errors.New("inventory service timed out")
		}
		return nil
	}))
	require.NoError(t, mux.HandleFunc("order.refund", func(context.Context, webhooks.Event) error {
		badCalls.Add(1)
		if !fixed.Load() {
			return webhooks.Permanent(errors.New("refund amount missing"))
		}
		return nil
	}))
	e := newE2E(t, mux)
	url := e.srv.URL + "/webhooks/demo/shop1"
	flaky := webhooks.InboxKey{Provider: "demo", Tenant: "shop1", EventID: "o1"}
	bad := webhooks.InboxKey{Provider: "demo", Tenant: "shop1", EventID: "r1"}

	code, _ := do(t, signedRequest(t, url, "o1", "order.created", `{"order":1}`, e.clock.Now()))
	require.Equal(t, http.StatusAccepted, code)
	require.Equal(t, "retried", e.store.next(t).Op)
	it := get(t, e.store, flaky)
	assert.Equal(t, 1, it.Attempts)
	assert.True(t, it.NextAttemptAt.Equal(base.Add(5*time.Second)), "retry after 5s, got %v", it.NextAttemptAt)

	// The provider retries the delivery while we retry the handler: a duplicate.
	code, _ = do(t, signedRequest(t, url, "o1", "order.created", `{"order":1}`, e.clock.Now()))
	assert.Equal(t, http.StatusOK, code)

	e.clock.Advance(5 * time.Second)
	e.proc.Wake()
	require.Equal(t, "retried", e.store.next(t).Op)
	it = get(t, e.store, flaky)
	assert.Equal(t, 2, it.Attempts)
	assert.True(t, it.NextAttemptAt.Equal(base.Add(15*time.Second)), "retry 10s later, got %v", it.NextAttemptAt)

	e.clock.Advance(10 * time.Second)
	e.proc.Wake()
	require.Equal(t, "succeeded", e.store.next(t).Op)
	it = get(t, e.store, flaky)
	assert.Equal(t, webhooks.StateSucceeded, it.State)
	assert.Equal(t, 3, it.Attempts)
	assert.Equal(t, 1, it.DuplicateCount)
	assert.EqualValues(t, 3, flakyCalls.Load())

	code, _ = do(t, signedRequest(t, url, "r1", "order.refund", `{"refund":1}`, e.clock.Now()))
	require.Equal(t, http.StatusAccepted, code)
	require.Equal(t, "dead_lettered", e.store.next(t).Op)
	it = get(t, e.store, bad)
	assert.Equal(t, webhooks.StateDead, it.State)
	assert.Equal(t, 1, it.Attempts)
	assert.Equal(t, "refund amount missing", it.LastError.Message)
	shop1 := "shop1"
	page, err := e.store.List(context.Background(), ops.Query{Tenant: &shop1, Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	assert.Equal(t, bad, page.Items[0].Key)

	// The bug is fixed; an operator replays the dead letter.
	fixed.Store(true)
	e.clock.Advance(time.Minute)
	_, err = e.store.Replay(context.Background(), ops.ReplayRequest{Key: bad, Actor: "ops@example.com", Reason: "refund parser fixed", Now: e.clock.Now()})
	require.NoError(t, err)
	e.proc.Wake()
	require.Equal(t, "succeeded", e.store.next(t).Op)
	it = get(t, e.store, bad)
	assert.Equal(t, webhooks.StateSucceeded, it.State)
	assert.Equal(t, 1, it.Attempts, "a replay gives a fresh budget by default")
	assert.EqualValues(t, 2, badCalls.Load(), "the replay ran the handler again")
	assert.NotContains(t, e.logs.String(), e2eSecret)
}

func TestEndToEndBadInput(t *testing.T) {
	t.Parallel()
	var handled atomic.Int32
	mux := webhooks.NewMux()
	require.NoError(t, mux.HandleFunc("*", func(context.Context, webhooks.Event) error { handled.Add(1); return nil }))
	e := newE2E(t, mux)
	url := e.srv.URL + "/webhooks/demo/shop1"
	now := e.clock.Now()

	valid := func() *http.Request { return signedRequest(t, url, "e1", "x", `{"ok":true}`, now) }
	cases := []struct {
		name   string
		req    func() *http.Request
		code   int
		reason string
	}{
		{"empty body", func() *http.Request {
			r := signedRequest(t, url, "e1", "x", "", now)
			return r
		}, 401, "empty_body"},
		{"missing signature", func() *http.Request { r := valid(); r.Header.Del("X-Signature"); return r }, 401, "missing_signature"},
		{"duplicated signature header", func() *http.Request {
			r := valid()
			r.Header.Add("X-Signature", r.Header.Get("X-Signature"))
			return r
		}, 401, "malformed_header"},
		{"non-hex signature", func() *http.Request {
			r := valid()
			r.Header.Set("X-Signature", "sha256="+strings.Repeat("zz", 32))
			return r
		}, 401, "malformed_header"},
		{"wrong-length signature", func() *http.Request { r := valid(); r.Header.Set("X-Signature", "sha256=abcd"); return r }, 401, "malformed_header"},
		{"wrong prefix", func() *http.Request {
			r := valid()
			r.Header.Set("X-Signature", strings.Replace(r.Header.Get("X-Signature"), "sha256=", "sha1=", 1))
			return r
		}, 401, "malformed_header"},
		{"forged signature", func() *http.Request {
			r := valid()
			r.Header.Set("X-Signature", "sha256="+strings.Repeat("ab", 32))
			return r
		}, 401, "bad_signature"},
		{"tampered body", func() *http.Request {
			r := valid()
			r.Body = io.NopCloser(strings.NewReader(`{"ok":false}`))
			r.ContentLength = int64(len(`{"ok":false}`))
			return r
		}, 401, "bad_signature"},
		{"timestamp far past", func() *http.Request { return signedRequest(t, url, "e1", "x", `{}`, now.Add(-6*time.Minute)) }, 401, "timestamp_expired"},
		{"timestamp in the future", func() *http.Request { return signedRequest(t, url, "e1", "x", `{}`, now.Add(6*time.Minute)) }, 401, "timestamp_expired"},
		{"non-numeric timestamp", func() *http.Request { r := valid(); r.Header.Set("X-Timestamp", "yesterday"); return r }, 401, "malformed_timestamp"},
		{"missing timestamp", func() *http.Request { r := valid(); r.Header.Del("X-Timestamp"); return r }, 401, "missing_timestamp"},
		{"missing event ID", func() *http.Request { r := valid(); r.Header.Del("X-Event-Id"); return r }, 401, "missing_event_id"},
		{"body over the limit", func() *http.Request {
			return signedRequest(t, url, "e1", "x", strings.Repeat("a", 1025), now)
		}, 413, ""},
		{"unknown provider", func() *http.Request { return signedRequest(t, e.srv.URL+"/webhooks/stripe", "e1", "x", `{}`, now) }, 404, ""},
		{"GET", func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, url, nil)
			return r
		}, 405, ""},
	}
	for _, c := range cases {
		code, body := do(t, c.req())
		assert.Equal(t, c.code, code, "%s: %s", c.name, body)
		if c.reason != "" {
			assert.Contains(t, body, `"reason":"`+c.reason+`"`, c.name)
		}
		assert.NotContains(t, body, e2eSecret, c.name)
	}

	// Nothing was stored: no item exists and nothing is due, ever.
	_, err := e.store.Get(context.Background(), webhooks.InboxKey{Provider: "demo", EventID: "e1"})
	assert.ErrorIs(t, err, ops.ErrNotFound)
	assert.Nil(t, acquire(t, e.store, base.Add(100*365*24*time.Hour), time.Minute), "the inbox is empty after only bad input")
	assert.Zero(t, handled.Load())

	logs := e.logs.String()
	assert.NotContains(t, logs, e2eSecret, "no secret in the logs")
	assert.Contains(t, logs, `"reason":"bad_signature"`, "rejections are logged with their reason")
	assert.Contains(t, logs, `"reason":"malformed_timestamp"`)

	// The valid request still goes through afterwards.
	code, _ := do(t, valid())
	assert.Equal(t, http.StatusAccepted, code)
	require.Equal(t, "succeeded", e.store.next(t).Op)
	assert.EqualValues(t, 1, handled.Load())
}
