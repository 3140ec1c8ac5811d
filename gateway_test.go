package webhooks_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
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

// headerVerifier accepts requests whose X-Sig header is "ok", taking the event
// ID and type from X-Id and X-Type.
var headerVerifier = webhooks.VerifierFunc(func(_ context.Context, _ webhooks.Route, r *webhooks.Request) (webhooks.Verification, error) {
	switch r.Header.Get("X-Sig") {
	case "":
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonMissingSignature, "no X-Sig")
	case "ok":
	case "down":
		return webhooks.Verification{}, errors.New("credential store unreachable")
	case "panic":
		panic("verifier bug")
	default:
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonBadSignature, "")
	}
	return webhooks.Verification{EventID: r.Header.Get("X-Id"), EventType: r.Header.Get("X-Type"), KeyID: "k1", ReplayKey: r.Header.Get("X-Nonce")}, nil
})

type gatewayFixture struct {
	gw     *webhooks.Receiver
	inbox  *memstore.Inbox
	replay *memstore.Replay
	clock  *webhookstest.Clock
	wakes  *atomic.Int32
}

// wakeCounter stands for a Processor (WithProcessor) that handles every
// type, counting its wake-ups.
type wakeCounter struct{ n *atomic.Int32 }

func (w wakeCounter) Wake()               { w.n.Add(1) }
func (w wakeCounter) Handles(string) bool { return true }

func newGatewayFixture(t *testing.T, inbox webhooks.Enqueuer, replay webhooks.ReplayStore, opts ...webhooks.ReceiverOption) *gatewayFixture {
	t.Helper()
	f := &gatewayFixture{inbox: memstore.NewInbox(), replay: memstore.NewReplay(), clock: webhookstest.NewClock(base), wakes: new(atomic.Int32)}
	if inbox == nil {
		inbox = f.inbox
	}
	if replay == nil {
		replay = f.replay
	}
	r := webhooks.NewRegistry()
	r.MustRegister("acme", headerVerifier)
	// headerVerifier is the host's own, tenant-aware by its word.
	opts = append([]webhooks.ReceiverOption{webhooks.WithReplayStore(replay), webhooks.WithClock(f.clock), webhooks.WithProcessor(wakeCounter{f.wakes}),
		webhooks.WithLogger(discard), webhooks.WithTenants("acme")}, opts...)
	gw, err := webhooks.NewReceiver(r, inbox, opts...)
	require.NoError(t, err)
	f.gw = gw
	return f
}

type response struct {
	Code       int
	Status     string `json:"status"`
	Reason     string `json:"reason"`
	EventID    string `json:"event_id"`
	RetryAfter string
	Allow      string
	Raw        string
}

func post(t *testing.T, h http.Handler, path string, body string, headers map[string]string) response {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return serve(t, h, req)
}

func serve(t *testing.T, h http.Handler, req *http.Request) response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var r response
	r.Raw = rec.Body.String()
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &r), "body %q is not JSON", r.Raw)
	r.Code = rec.Code
	r.RetryAfter = rec.Header().Get("Retry-After")
	r.Allow = rec.Header().Get("Allow")
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	return r
}

func okHeaders(id string) map[string]string {
	return map[string]string{"X-Sig": "ok", "X-Id": id, "X-Type": "order.created", "Authorization": "Bearer secret-token"}
}

func TestGatewayAcceptDuplicateConflict(t *testing.T) {
	t.Parallel()
	f := newGatewayFixture(t, nil, nil)

	r := post(t, f.gw, "/webhooks/acme/t1", `{"n":1}`, okHeaders("ev1"))
	assert.Equal(t, http.StatusAccepted, r.Code)
	assert.Equal(t, "accepted", r.Status)
	assert.Equal(t, "ev1", r.EventID)
	assert.EqualValues(t, 1, f.wakes.Load(), "a new item wakes the processor")

	key := webhooks.InboxKey{Provider: "acme", Tenant: "t1", EventID: "ev1"}
	it, err := f.inbox.Get(context.Background(), key)
	require.NoError(t, err)
	assert.Equal(t, webhooks.StatePending, it.State)
	assert.Equal(t, "order.created", it.EventType)
	assert.Equal(t, []byte(`{"n":1}`), it.Payload)
	assert.Equal(t, sha256.Sum256([]byte(`{"n":1}`)), it.PayloadSHA256)
	assert.Equal(t, "k1", it.KeyID)
	assert.True(t, it.ReceivedAt.Equal(base))
	assert.True(t, it.NextAttemptAt.Equal(base), "due as soon as received")
	assert.Empty(t, it.Headers.Get("Authorization"), "credentials are not stored")
	assert.Equal(t, "ev1", it.Headers.Get("X-Id"))

	f.clock.Advance(time.Minute)
	r = post(t, f.gw, "/webhooks/acme/t1", `{"n":1}`, okHeaders("ev1"))
	assert.Equal(t, http.StatusOK, r.Code)
	assert.Equal(t, "duplicate", r.Status)
	it, err = f.inbox.Get(context.Background(), key)
	require.NoError(t, err)
	assert.Equal(t, 1, it.DuplicateCount)
	assert.True(t, it.LastSeenAt.Equal(base.Add(time.Minute)))
	assert.EqualValues(t, 1, f.wakes.Load(), "a duplicate does not wake anyone")

	r = post(t, f.gw, "/webhooks/acme/t1", `{"n":2}`, okHeaders("ev1"))
	assert.Equal(t, http.StatusConflict, r.Code)
	assert.Equal(t, "conflict", r.Status)
	it, err = f.inbox.Get(context.Background(), key)
	require.NoError(t, err)
	assert.Equal(t, []byte(`{"n":1}`), it.Payload, "a conflict changes nothing")

	// The same event ID for another tenant is another item.
	r = post(t, f.gw, "/webhooks/acme", `{"n":2}`, okHeaders("ev1"))
	assert.Equal(t, http.StatusAccepted, r.Code)
	_, err = f.inbox.Get(context.Background(), webhooks.InboxKey{Provider: "acme", EventID: "ev1"})
	require.NoError(t, err)
}

func TestGatewayRefusals(t *testing.T) {
	t.Parallel()
	f := newGatewayFixture(t, nil, nil, webhooks.WithMaxBodyBytes(16))
	cases := []struct {
		name, method, path, body string
		headers                  map[string]string
		code                     int
		status, reason           string
	}{
		{"unknown provider", "POST", "/webhooks/stripe", `{}`, okHeaders("a"), 404, "unknown_provider", ""},
		{"path outside prefix", "POST", "/hooks/acme", `{}`, okHeaders("a"), 404, "not_found", ""},
		{"no provider", "POST", "/webhooks/", `{}`, okHeaders("a"), 404, "not_found", ""},
		{"too many segments", "POST", "/webhooks/acme/t1/x", `{}`, okHeaders("a"), 404, "not_found", ""},
		{"two trailing slashes", "POST", "/webhooks/acme//", `{}`, okHeaders("a"), 404, "not_found", ""},
		{"dot-dot tenant", "POST", "/webhooks/acme/..", `{}`, okHeaders("a"), 404, "not_found", ""},
		{"dot tenant", "POST", "/webhooks/acme/.", `{}`, okHeaders("a"), 404, "not_found", ""},
		{"encoded slash", "POST", "/webhooks/acme%2Ft1", `{}`, okHeaders("a"), 404, "not_found", ""},
		{"encoded slash in tenant", "POST", "/webhooks/acme/t%2F..", `{}`, okHeaders("a"), 404, "not_found", ""},
		{"GET", "GET", "/webhooks/acme", ``, okHeaders("a"), 405, "method_not_allowed", ""},
		{"PUT", "PUT", "/webhooks/acme", `{}`, okHeaders("a"), 405, "method_not_allowed", ""},
		{"body over limit", "POST", "/webhooks/acme", strings.Repeat("x", 17), okHeaders("a"), 413, "too_large", ""},
		{"missing signature", "POST", "/webhooks/acme", `{}`, map[string]string{"X-Id": "a"}, 401, "rejected", "missing_signature"},
		{"bad signature", "POST", "/webhooks/acme", `{}`, map[string]string{"X-Sig": "forged", "X-Id": "a"}, 401, "rejected", "bad_signature"},
		{"verifier gives no ID", "POST", "/webhooks/acme", `{}`, map[string]string{"X-Sig": "ok"}, 401, "rejected", "missing_event_id"},
		{"credential store down", "POST", "/webhooks/acme", `{}`, map[string]string{"X-Sig": "down", "X-Id": "a"}, 503, "unavailable", ""},
		{"verifier panics", "POST", "/webhooks/acme", `{}`, map[string]string{"X-Sig": "panic", "X-Id": "a"}, 500, "internal_error", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
			for k, v := range c.headers {
				req.Header.Set(k, v)
			}
			r := serve(t, f.gw, req)
			assert.Equal(t, c.code, r.Code, r.Raw)
			assert.Equal(t, c.status, r.Status)
			assert.Equal(t, c.reason, r.Reason)
			assert.NotContains(t, r.Raw, "panic", "no internals in answers")
			if c.code == 405 {
				assert.Equal(t, "POST", r.Allow)
			}
			if c.code == 503 {
				assert.Equal(t, "5", r.RetryAfter)
			}
		})
	}
	_, err := f.inbox.Get(context.Background(), webhooks.InboxKey{Provider: "acme", EventID: "a"})
	assert.ErrorIs(t, err, ops.ErrNotFound, "no refused request left anything in the inbox")
	assert.EqualValues(t, 0, f.wakes.Load())
}

// flakyInbox fails Enqueue while down is set, panics while crash is set.
type flakyInbox struct {
	webhooks.Enqueuer
	down, crash atomic.Bool
}

func (f *flakyInbox) Enqueue(ctx context.Context, env webhooks.Envelope) (webhooks.EnqueueResult, error) {
	if f.crash.Load() {
		panic("store bug")
	}
	if f.down.Load() {
		return webhooks.EnqueueResult{}, errors.New("connection refused")
	}
	return f.Enqueuer.Enqueue(ctx, env)
}

type flakyReplay struct {
	webhooks.ReplayStore
	down atomic.Bool
}

func (f *flakyReplay) Register(ctx context.Context, reg webhooks.ReplayRegistration) (webhooks.ReplayOutcome, error) {
	if f.down.Load() {
		return 0, errors.New("replay store timeout")
	}
	return f.ReplayStore.Register(ctx, reg)
}

func TestGatewayStoreDownThenRetried(t *testing.T) {
	t.Parallel()
	inbox := &flakyInbox{Enqueuer: memstore.NewInbox()}
	f := newGatewayFixture(t, inbox, nil, webhooks.WithUnavailableRetryAfter(7*time.Second))
	inbox.down.Store(true)
	withNonce := okHeaders("ev1")
	withNonce["X-Nonce"] = "n1" // a replay key of the verifier's own

	r := post(t, f.gw, "/webhooks/acme", `{}`, withNonce)
	assert.Equal(t, http.StatusServiceUnavailable, r.Code)
	assert.Equal(t, "unavailable", r.Status)
	assert.Equal(t, "7", r.RetryAfter)
	assert.NotContains(t, r.Raw, "connection refused", "store errors are logged, not answered")
	assert.EqualValues(t, 0, f.wakes.Load())
	require.Equal(t, 1, f.replay.Len(), "the replay key was registered before the inbox failed")

	// The provider's retry finds its replay key registered (seen, same
	// payload); it must still be stored, not refused as a replay.
	inbox.down.Store(false)
	r = post(t, f.gw, "/webhooks/acme", `{}`, withNonce)
	assert.Equal(t, http.StatusAccepted, r.Code, "the retry of a delivery whose replay key was registered before the store failed: %s", r.Raw)
	_, err := inbox.Enqueuer.(*memstore.Inbox).Get(context.Background(), webhooks.InboxKey{Provider: "acme", EventID: "ev1"})
	require.NoError(t, err)
	assert.EqualValues(t, 1, f.wakes.Load(), "the stored retry woke the processor")

	inbox.crash.Store(true)
	r = post(t, f.gw, "/webhooks/acme", `{}`, okHeaders("ev2"))
	assert.Equal(t, http.StatusInternalServerError, r.Code)
	assert.NotContains(t, r.Raw, "store bug")
}

func TestGatewayReplayStore(t *testing.T) {
	t.Parallel()
	replay := &flakyReplay{ReplayStore: memstore.NewReplay()}
	f := newGatewayFixture(t, nil, replay, webhooks.WithReplayTTL(time.Hour))
	withNonce := func(id, nonce string) map[string]string {
		h := okHeaders(id)
		h["X-Nonce"] = nonce
		return h
	}

	// Event IDs need no replay registration: the inbox deduplicates them,
	// so a webhook without a replay key of its own costs no second commit.
	replay.down.Store(true)
	assert.Equal(t, http.StatusAccepted, post(t, f.gw, "/webhooks/acme", `{}`, okHeaders("ev0")).Code)
	assert.Zero(t, replay.ReplayStore.(*memstore.Replay).Len())

	// A replay key of the verifier's own is registered: a store outage is
	// a 503 and stores nothing.
	r := post(t, f.gw, "/webhooks/acme", `{}`, withNonce("ev1", "n1"))
	assert.Equal(t, http.StatusServiceUnavailable, r.Code)
	_, err := f.inbox.Get(context.Background(), webhooks.InboxKey{Provider: "acme", EventID: "ev1"})
	assert.ErrorIs(t, err, ops.ErrNotFound)
	replay.down.Store(false)
	assert.Equal(t, http.StatusAccepted, post(t, f.gw, "/webhooks/acme", `{}`, withNonce("ev1", "n1")).Code,
		"the provider's retry after the 503 is stored")
	assert.Equal(t, http.StatusOK, post(t, f.gw, "/webhooks/acme", `{}`, withNonce("ev1", "n1")).Code, "and a repeat is a duplicate")

	// A replay key registered with another payload is a conflict, even
	// under another event ID.
	_, err = replay.Register(context.Background(), replayReg(webhooks.ReplayRegistration{Provider: "acme", Key: "n2"}, sha256.Sum256([]byte("other")), base, base.Add(time.Hour)))
	require.NoError(t, err)
	r = post(t, f.gw, "/webhooks/acme", `{}`, withNonce("ev2", "n2"))
	assert.Equal(t, http.StatusConflict, r.Code)
	_, err = f.inbox.Get(context.Background(), webhooks.InboxKey{Provider: "acme", EventID: "ev2"})
	assert.ErrorIs(t, err, ops.ErrNotFound)

	// After the TTL the key may be used again.
	f.clock.Advance(time.Hour)
	r = post(t, f.gw, "/webhooks/acme", `{}`, withNonce("ev2", "n2"))
	assert.Equal(t, http.StatusAccepted, r.Code)
}

func TestGatewayReceiveErrors(t *testing.T) {
	t.Parallel()
	f := newGatewayFixture(t, nil, nil)
	ctx := context.Background()

	res, err := f.gw.Receive(ctx, webhooks.Route{Provider: "nope"}, &webhooks.Request{})
	assert.Equal(t, webhooks.StatusUnknownProvider, res.Status)
	assert.ErrorIs(t, err, webhooks.ErrUnknownProvider)

	res, err = f.gw.Receive(ctx, webhooks.Route{Provider: "acme"}, nil)
	assert.Equal(t, webhooks.StatusRejected, res.Status, "a nil request is refused, not a panic")
	assert.Equal(t, webhooks.ReasonMissingSignature, res.Reason)
	assert.ErrorIs(t, err, webhooks.ReasonMissingSignature)

	req := &webhooks.Request{Header: http.Header{"X-Sig": {"bad"}}, Body: []byte("{}")}
	res, err = f.gw.Receive(ctx, webhooks.Route{Provider: "acme"}, req)
	assert.Equal(t, webhooks.StatusRejected, res.Status)
	assert.Equal(t, webhooks.ReasonBadSignature, res.Reason)
	var ve *webhooks.VerificationError
	require.ErrorAs(t, err, &ve)

	req = &webhooks.Request{Header: http.Header{"X-Sig": {"ok"}, "X-Id": {"e"}}, Body: []byte("{}")}
	res, err = f.gw.Receive(ctx, webhooks.Route{Provider: "acme"}, req)
	require.NoError(t, err)
	assert.Equal(t, webhooks.StatusAccepted, res.Status)
	req.Body = []byte("{ }")
	res, err = f.gw.Receive(ctx, webhooks.Route{Provider: "acme"}, req)
	assert.Equal(t, webhooks.StatusConflict, res.Status)
	assert.ErrorIs(t, err, webhooks.ErrPayloadConflict)
}

func TestGatewaySemanticDigestAndReplayKey(t *testing.T) {
	t.Parallel()
	inbox, replay := memstore.NewInbox(), memstore.NewReplay()
	r := webhooks.NewRegistry()
	// This provider re-signs every delivery with a new body field, so its
	// verifier supplies a digest of the stable part only.
	r.MustRegister("semantic", webhooks.VerifierFunc(func(_ context.Context, _ webhooks.Route, req *webhooks.Request) (webhooks.Verification, error) {
		stable, _, _ := bytes.Cut(req.Body, []byte("|"))
		return webhooks.Verification{EventID: "e1", PayloadSHA256: sha256.Sum256(stable), ReplayKey: "nonce-" + string(stable)}, nil
	}))
	gw, err := webhooks.NewReceiver(r, inbox, webhooks.WithReplayStore(replay), webhooks.WithClock(webhookstest.NewClock(base)), webhooks.WithLogger(discard))
	require.NoError(t, err)
	assert.Equal(t, http.StatusAccepted, post(t, gw, "/webhooks/semantic", "data|delivery-1", nil).Code)
	assert.Equal(t, http.StatusOK, post(t, gw, "/webhooks/semantic", "data|delivery-2", nil).Code, "same semantic digest: a duplicate")
	assert.Equal(t, http.StatusConflict, post(t, gw, "/webhooks/semantic", "other|delivery-3", nil).Code)

	outcome, err := replay.Register(context.Background(), replayReg(webhooks.ReplayRegistration{Provider: "semantic", Key: "nonce-data"}, sha256.Sum256([]byte("data")), base, base.Add(time.Hour)))
	require.NoError(t, err)
	assert.Equal(t, webhooks.ReplaySeen, outcome, "the verifier's replay key was registered with the semantic digest")
}

func TestGatewayOptions(t *testing.T) {
	t.Parallel()
	f := newGatewayFixture(t, nil, nil, webhooks.WithPathPrefix("/in/"))
	assert.Equal(t, http.StatusAccepted, post(t, f.gw, "/in/acme", `{}`, okHeaders("x")).Code)
	assert.Equal(t, http.StatusNotFound, post(t, f.gw, "/webhooks/acme", `{}`, okHeaders("y")).Code)

	r := webhooks.NewRegistry()
	in, rp := memstore.NewInbox(), memstore.NewReplay()
	for _, o := range []webhooks.ReceiverOption{
		webhooks.WithMaxBodyBytes(0),
		webhooks.WithPathPrefix("webhooks"),
		webhooks.WithPathPrefix(""),
		webhooks.WithReplayTTL(0),
		webhooks.WithUnavailableRetryAfter(time.Millisecond),
	} {
		_, err := webhooks.NewReceiver(r, in, webhooks.WithReplayStore(rp), o)
		assert.Error(t, err)
	}
	_, err := webhooks.NewReceiver(nil, in, webhooks.WithReplayStore(rp))
	assert.Error(t, err)
}

func TestGatewayHandshake(t *testing.T) {
	t.Parallel()
	inbox, replay := memstore.NewInbox(), memstore.NewReplay()
	r := webhooks.NewRegistry()
	r.MustRegister("chat", webhooks.VerifierFunc(func(_ context.Context, _ webhooks.Route, req *webhooks.Request) (webhooks.Verification, error) {
		if req.Header.Get("X-Sig") != "ok" {
			return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonBadSignature, "")
		}
		return webhooks.Verification{Handshake: &webhooks.Response{
			Header: http.Header{"Content-Type": {"text/plain"}},
			Body:   []byte("challenge-accepted"),
		}}, nil
	}))
	wakes := new(atomic.Int32)
	gw, err := webhooks.NewReceiver(r, inbox, webhooks.WithReplayStore(replay), webhooks.WithProcessor(wakeCounter{wakes}), webhooks.WithLogger(discard))
	require.NoError(t, err)

	req := httptest.NewRequest(http.MethodPost, "/webhooks/chat", strings.NewReader(`{"type":"url_verification"}`))
	req.Header.Set("X-Sig", "ok")
	rec := httptest.NewRecorder()
	gw.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "challenge-accepted", rec.Body.String())
	assert.Equal(t, "text/plain", rec.Header().Get("Content-Type"))
	assert.Zero(t, wakes.Load())
	assert.Zero(t, inbox.Len(), "a handshake stores nothing")
	assert.Zero(t, replay.Len(), "a handshake registers no replay key")

	// An unsigned challenge is refused like any unsigned request.
	req = httptest.NewRequest(http.MethodPost, "/webhooks/chat", strings.NewReader(`{"type":"url_verification"}`))
	assert.Equal(t, http.StatusUnauthorized, serve(t, gw, req).Code)

	res, err := gw.Receive(context.Background(), webhooks.Route{Provider: "chat"}, &webhooks.Request{Header: http.Header{"X-Sig": {"ok"}}})
	require.NoError(t, err)
	assert.Equal(t, webhooks.StatusHandshake, res.Status)
	assert.Equal(t, "challenge-accepted", string(res.Handshake.Body))
}

func TestGatewayRefusesUnstorableKeys(t *testing.T) {
	t.Parallel()
	f := newGatewayFixture(t, nil, nil)
	for name, c := range map[string]struct{ path, id string }{
		"NUL in tenant":         {"/webhooks/acme/t%00x", "e1"},
		"invalid UTF-8 tenant":  {"/webhooks/acme/%ff", "e1"},
		"invalid UTF-8 ID":      {"/webhooks/acme", "e\xff"},
		"NUL in ID":             {"/webhooks/acme", "e\x00"},
		"ID over 512 bytes":     {"/webhooks/acme", strings.Repeat("i", maxKeyBytes+1)},
		"tenant over the limit": {"/webhooks/acme/" + strings.Repeat("t", maxKeyBytes+1), "e1"},
	} {
		r := post(t, f.gw, c.path, `{}`, map[string]string{"X-Sig": "ok", "X-Id": c.id, "X-Type": "x"})
		assert.Equal(t, http.StatusBadRequest, r.Code, name)
		assert.Equal(t, "invalid", r.Status, name)
		assert.Equal(t, "invalid_key", r.Reason, name)
	}
	assert.Zero(t, f.inbox.Len(), "nothing was stored")
	assert.Zero(t, f.replay.Len(), "nothing was registered")
	r := post(t, f.gw, "/webhooks/acme/"+strings.Repeat("t", maxKeyBytes), `{}`, okHeaders(strings.Repeat("i", maxKeyBytes)))
	assert.Equal(t, http.StatusAccepted, r.Code, "keys of exactly 512 bytes are fine")
}

// tokenVerifier authenticates with a shared token header, which it declares
// secret.
type tokenVerifier struct{}

func (tokenVerifier) Verify(_ context.Context, _ webhooks.Route, r *webhooks.Request) (webhooks.Verification, error) {
	if r.Header.Get("X-Hook-Token") != "t0ken" {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonBadSignature, "")
	}
	return webhooks.Verification{EventID: r.Header.Get("X-Id")}, nil
}

func (tokenVerifier) SecretHeaders() []string { return []string{"x-hook-token"} }

func TestGatewayDropsCredentialHeaders(t *testing.T) {
	t.Parallel()
	inbox := memstore.NewInbox()
	r := webhooks.NewRegistry()
	r.MustRegister("tok", tokenVerifier{})
	r.MustRegister("acme", headerVerifier)
	gw, err := webhooks.NewReceiver(r, inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithDroppedHeaders("X-Extra-Secret"), webhooks.WithLogger(discard))
	require.NoError(t, err)

	hdr := map[string]string{"X-Hook-Token": "t0ken", "X-Id": "e1", "Authorization": "Bearer b", "Cookie": "c=1", "X-Extra-Secret": "s", "X-Keep": "k"}
	require.Equal(t, http.StatusAccepted, post(t, gw, "/webhooks/tok", `{}`, hdr).Code)
	it, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: "tok", EventID: "e1"})
	require.NoError(t, err)
	assert.Equal(t, http.Header{"X-Id": {"e1"}, "X-Keep": {"k"}}, it.Headers,
		"the verifier's secret header, the defaults and the added header are all dropped")

	hdr = okHeaders("e2")
	hdr["X-Hook-Token"] = "kept: acme's verifier does not declare it"
	hdr["X-Gitlab-Token"] = "kept too: the root names no provider's header"
	hdr["Proxy-Authorization"] = "Basic cA=="
	require.Equal(t, http.StatusAccepted, post(t, gw, "/webhooks/acme", `{}`, hdr).Code)
	it, err = inbox.Get(context.Background(), webhooks.InboxKey{Provider: "acme", EventID: "e2"})
	require.NoError(t, err)
	assert.Empty(t, it.Headers.Get("Authorization"), "WithDroppedHeaders adds to the defaults")
	assert.Empty(t, it.Headers.Get("Proxy-Authorization"), "HTTP's own credential headers are always dropped")
	assert.NotEmpty(t, it.Headers.Get("X-Hook-Token"))
	assert.NotEmpty(t, it.Headers.Get("X-Gitlab-Token"), "a provider's secret header is its verifier's to declare (SecretHeaderVerifier)")
}

// bodyTokenVerifier accepts a JSON body whose "token" is one of two
// rotated secrets, and stores it with the token redacted.
type bodyTokenVerifier struct{}

func (bodyTokenVerifier) Verify(_ context.Context, _ webhooks.Route, r *webhooks.Request) (webhooks.Verification, error) {
	var msg struct{ ID, Token, V string }
	if json.Unmarshal(r.Body, &msg) != nil || (msg.Token != "old-secret" && msg.Token != "new-secret") {
		return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonBadSignature, "")
	}
	payload, err := json.Marshal(map[string]string{"id": msg.ID, "token": "[redacted]", "v": msg.V})
	if err != nil {
		return webhooks.Verification{}, err
	}
	return webhooks.Verification{EventID: msg.ID, Payload: payload}, nil
}

func (bodyTokenVerifier) SecretHeaders() []string { return []string{"X-Signature"} }

// TestGatewayStoresTheVerifiersPayload: a verifier's Payload is what is
// stored, for the item and for a quarantined conflict, and the digest is
// of it, so a redelivery under the rotated secret is a duplicate.
func TestGatewayStoresTheVerifiersPayload(t *testing.T) {
	t.Parallel()
	inbox := memstore.NewInbox()
	r := webhooks.NewRegistry()
	r.MustRegister("tok", bodyTokenVerifier{})
	gw, err := webhooks.NewReceiver(r, inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithLogger(discard))
	require.NoError(t, err)
	sig := map[string]string{"X-Signature": "sig-value", "X-Keep": "k"}
	require.Equal(t, http.StatusAccepted, post(t, gw, "/webhooks/tok", `{"id":"e1","token":"old-secret","v":"1"}`, sig).Code)
	key := webhooks.InboxKey{Provider: "tok", EventID: "e1"}
	d, err := inbox.Get(context.Background(), key)
	require.NoError(t, err)
	want := `{"id":"e1","token":"[redacted]","v":"1"}`
	assert.Equal(t, want, string(d.Payload), "the verifier's payload is stored, not the raw body")
	assert.Equal(t, sha256.Sum256([]byte(want)), d.PayloadSHA256, "the digest is of what is stored")
	assert.Equal(t, http.Header{"X-Keep": {"k"}}, d.Headers)

	r2 := post(t, gw, "/webhooks/tok", `{"id":"e1","token":"new-secret","v":"1"}`, sig)
	assert.Equal(t, http.StatusOK, r2.Code, "the same event under the rotated secret is a duplicate: %s", r2.Raw)

	r3 := post(t, gw, "/webhooks/tok", `{"id":"e1","token":"new-secret","v":"2"}`, sig)
	assert.Equal(t, http.StatusConflict, r3.Code)
	d, err = inbox.Get(context.Background(), key)
	require.NoError(t, err)
	require.Len(t, d.Quarantine, 1)
	assert.Equal(t, `{"id":"e1","token":"[redacted]","v":"2"}`, string(d.Quarantine[0].Payload), "a conflict is kept redacted too")
	assert.Equal(t, http.Header{"X-Keep": {"k"}}, d.Quarantine[0].Headers, "and without the signature header")
}

func TestGatewayNilBodyAndZeroMux(t *testing.T) {
	t.Parallel()
	f := newGatewayFixture(t, nil, nil)
	req := httptest.NewRequest(http.MethodPost, "/webhooks/acme", nil)
	req.Body = nil
	req.Header.Set("X-Sig", "ok")
	req.Header.Set("X-Id", "nil-body")
	assert.Equal(t, http.StatusAccepted, serve(t, f.gw, req).Code)

	var m webhooks.Mux
	require.NoError(t, m.HandleFunc("x", func(context.Context, webhooks.Event) error { return nil }))
	assert.NoError(t, m.Dispatch(context.Background(), webhooks.Event{Type: "x"}))
	var empty webhooks.Mux
	assert.ErrorIs(t, empty.Dispatch(context.Background(), webhooks.Event{Type: "x"}), webhooks.ErrNoHandler)
}

func TestGatewayMounting(t *testing.T) {
	t.Parallel()
	newRcv := func(t *testing.T, logs *syncBuffer, opts ...webhooks.ReceiverOption) (*webhooks.Receiver, *memstore.Inbox, *webhookstest.Clock) {
		t.Helper()
		inbox, clock := memstore.NewInbox(), webhookstest.NewClock(base)
		r := webhooks.NewRegistry()
		r.MustRegister("acme", headerVerifier)
		logger := discard
		if logs != nil {
			logger = slog.New(slog.NewTextHandler(logs, nil))
		}
		opts = append([]webhooks.ReceiverOption{webhooks.WithClock(clock), webhooks.WithLogger(logger), webhooks.WithTenants("acme")}, opts...)
		rcv, err := webhooks.NewReceiver(r, inbox, append([]webhooks.ReceiverOption{webhooks.WithReplayStore(memstore.NewReplay())}, opts...)...)
		require.NoError(t, err)
		return rcv, inbox, clock
	}
	stored := func(t *testing.T, inbox *memstore.Inbox, tenant, id string) {
		t.Helper()
		_, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: "acme", Tenant: tenant, EventID: id})
		require.NoError(t, err, "the delivery was stored under tenant %q", tenant)
	}

	t.Run("under a router prefix", func(t *testing.T) {
		rcv, inbox, _ := newRcv(t, nil, webhooks.WithPathPrefix("/api/webhooks/"))
		mux := http.NewServeMux()
		mux.Handle("/api/webhooks/", rcv)
		assert.Equal(t, http.StatusAccepted, post(t, mux, "/api/webhooks/acme/t1", `{}`, okHeaders("e1")).Code)
		stored(t, inbox, "t1", "e1")
	})
	t.Run("behind http.StripPrefix", func(t *testing.T) {
		rcv, inbox, _ := newRcv(t, nil)
		mux := http.NewServeMux()
		mux.Handle("/api/", http.StripPrefix("/api", rcv)) // the receiver sees /webhooks/…
		assert.Equal(t, http.StatusAccepted, post(t, mux, "/api/webhooks/acme", `{}`, okHeaders("e1")).Code)
		stored(t, inbox, "", "e1")

		root, inbox, _ := newRcv(t, nil, webhooks.WithPathPrefix("/"))
		mux = http.NewServeMux()
		mux.Handle("/in/", http.StripPrefix("/in", root)) // the receiver sees /acme/t2
		assert.Equal(t, http.StatusAccepted, post(t, mux, "/in/acme/t2", `{}`, okHeaders("e2")).Code)
		stored(t, inbox, "t2", "e2")
	})
	t.Run("Go 1.22 pattern wildcards", func(t *testing.T) {
		rcv, inbox, _ := newRcv(t, nil)
		mux := http.NewServeMux()
		mux.Handle("POST /hooks/{provider}", rcv)
		mux.Handle("POST /hooks/{provider}/{tenant}", rcv)
		assert.Equal(t, http.StatusAccepted, post(t, mux, "/hooks/acme", `{}`, okHeaders("e1")).Code)
		assert.Equal(t, http.StatusAccepted, post(t, mux, "/hooks/acme/t3", `{}`, okHeaders("e3")).Code)
		assert.Equal(t, http.StatusNotFound, post(t, mux, "/hooks/nobody", `{}`, okHeaders("e4")).Code)
		stored(t, inbox, "", "e1")
		stored(t, inbox, "t3", "e3")
	})
	t.Run("trailing slash after the provider key", func(t *testing.T) {
		rcv, inbox, _ := newRcv(t, nil)
		assert.Equal(t, http.StatusAccepted, post(t, rcv, "/webhooks/acme/", `{}`, okHeaders("e1")).Code)
		assert.Equal(t, http.StatusAccepted, post(t, rcv, "/webhooks/acme/t1/", `{}`, okHeaders("e2")).Code)
		stored(t, inbox, "", "e1")
		stored(t, inbox, "t1", "e2")
	})
	t.Run("a mounting mistake is logged, not silent", func(t *testing.T) {
		logs := &syncBuffer{}
		rcv, inbox, clock := newRcv(t, logs)
		// A router that says nothing of where it mounted the receiver
		// (no ServeMux pattern, no cut path), the prefix still /webhooks/.
		mux := http.HandlerFunc(rcv.ServeHTTP)
		r := post(t, mux, "/api/webhooks/acme", `{}`, okHeaders("e1"))
		assert.Equal(t, http.StatusNotFound, r.Code)
		assert.Equal(t, "not_found", r.Status)
		out := logs.String()
		assert.Contains(t, out, "level=ERROR")
		assert.Contains(t, out, "path_prefix=/webhooks/")
		assert.Contains(t, out, "path=/api/webhooks/acme")
		assert.Contains(t, out, "WithPathPrefix")
		assert.Zero(t, inbox.Len())

		post(t, mux, "/api/webhooks/acme", `{}`, okHeaders("e2"))
		assert.Equal(t, 1, strings.Count(logs.String(), "outside the receiver's path prefix"), "at most one line a minute")
		clock.Advance(time.Minute)
		post(t, mux, "/api/webhooks/acme", `{}`, okHeaders("e3"))
		assert.Equal(t, 2, strings.Count(logs.String(), "outside the receiver's path prefix"))
	})
}

// challengeVerifier answers GET challenges carrying the right verify token,
// as Meta's does, and verifies POSTs like headerVerifier, answering
// deliveries with the fixed body its provider expects.
type challengeVerifier struct{}

func (challengeVerifier) AcceptsGET() bool { return true }

func (challengeVerifier) Verify(ctx context.Context, route webhooks.Route, r *webhooks.Request) (webhooks.Verification, error) {
	if r.Method == http.MethodGet {
		q := r.URL.Query()
		if q.Get("hub.verify_token") != "vt" {
			return webhooks.Verification{}, webhooks.Reject(webhooks.ReasonBadSignature, "wrong verify token")
		}
		return webhooks.Verification{Handshake: &webhooks.Response{
			Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte(q.Get("hub.challenge")),
		}}, nil
	}
	ver, err := headerVerifier.Verify(ctx, route, r)
	ver.Answer = &webhooks.Response{Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("EVENT_RECEIVED")}
	return ver, err
}

func TestGatewayGETChallengesAndAnswers(t *testing.T) {
	t.Parallel()
	inbox := memstore.NewInbox()
	r := webhooks.NewRegistry()
	r.MustRegister("meta", challengeVerifier{})
	r.MustRegister("acme", headerVerifier)
	rcv, err := webhooks.NewReceiver(r, inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithLogger(discard))
	require.NoError(t, err)

	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		rcv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec
	}
	rec := get("/webhooks/meta?hub.mode=subscribe&hub.verify_token=vt&hub.challenge=1158201444")
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "1158201444", rec.Body.String(), "the challenge is echoed as the provider documents")
	assert.Equal(t, "text/plain", rec.Header().Get("Content-Type"))

	rec = get("/webhooks/meta?hub.mode=subscribe&hub.verify_token=guess&hub.challenge=1")
	assert.Equal(t, http.StatusUnauthorized, rec.Code, "an unauthenticated challenge is refused")
	assert.NotContains(t, rec.Body.String(), `"1"`)

	rec = get("/webhooks/acme")
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code, "GET stays 405 for providers without GET challenges")
	assert.Equal(t, "POST", rec.Header().Get("Allow"))
	assert.Zero(t, inbox.Len(), "challenges store nothing")

	// A delivery gets the provider's own answer, new or duplicate.
	for _, want := range []int{http.StatusAccepted, http.StatusAccepted} {
		req := httptest.NewRequest(http.MethodPost, "/webhooks/meta", strings.NewReader(`{}`))
		for k, v := range okHeaders("m1") {
			req.Header.Set(k, v)
		}
		rec = httptest.NewRecorder()
		rcv.ServeHTTP(rec, req)
		assert.Equal(t, http.StatusOK, rec.Code, "the answer's own status (200 by default) replaces %d", want)
		assert.Equal(t, "EVENT_RECEIVED", rec.Body.String())
	}
	assert.Equal(t, 1, inbox.Len())
}

func TestReceiverStoresOnlyHandledTypes(t *testing.T) {
	t.Parallel()
	mux := webhooks.NewMux()
	for _, pattern := range []string{"order.*", "refund.created"} {
		mux.MustHandleFunc(pattern, func(context.Context, webhooks.Event) error { return nil })
	}
	proc, err := webhooks.NewProcessor(memstore.NewInbox(), mux)
	require.NoError(t, err)
	for name, opt := range map[string]webhooks.ReceiverOption{
		"WithProcessor":    webhooks.WithProcessor(proc),
		"WithHandledTypes": webhooks.WithHandledTypes(mux),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newGatewayFixture(t, nil, nil, opt)
			h := okHeaders("e1")
			h["X-Type"] = "ping"
			r := post(t, f.gw, "/webhooks/acme", `{}`, h)
			assert.Equal(t, http.StatusOK, r.Code)
			assert.Equal(t, "ignored", r.Status)
			assert.Zero(t, f.inbox.Len(), "an event type no handler takes is not stored")
			assert.Zero(t, f.replay.Len(), "nor registered")

			h["X-Sig"] = "forged"
			assert.Equal(t, http.StatusUnauthorized, post(t, f.gw, "/webhooks/acme", `{}`, h).Code, "verification comes first")

			assert.Equal(t, http.StatusAccepted, post(t, f.gw, "/webhooks/acme", `{}`, okHeaders("e2")).Code, "order.created matches order.*")
			h = okHeaders("e3")
			h["X-Type"] = "refund.created"
			assert.Equal(t, http.StatusAccepted, post(t, f.gw, "/webhooks/acme", `{}`, h).Code)
			assert.Equal(t, 2, f.inbox.Len())

			res, err := f.gw.Receive(context.Background(), webhooks.Route{Provider: "acme"}, &webhooks.Request{
				Header: http.Header{"X-Sig": {"ok"}, "X-Id": {"e4"}, "X-Type": {"refund.failed"}}, Body: []byte(`{}`)})
			require.NoError(t, err)
			assert.Equal(t, webhooks.StatusIgnored, res.Status)
		})
	}
}

func TestReceiverWakesItsProcessor(t *testing.T) {
	t.Parallel()
	inbox := memstore.NewInbox()
	handled := make(chan string, 1)
	mux := webhooks.NewMux()
	mux.MustHandleFunc("order.created", func(_ context.Context, ev webhooks.Event) error { handled <- ev.ID; return nil })
	// A poll interval of an hour: only the receiver's wake-up runs it soon.
	proc, err := webhooks.NewProcessor(inbox, mux, webhooks.WithPollInterval(time.Hour), webhooks.WithLogger(discard))
	require.NoError(t, err)
	f := newGatewayFixture(t, inbox, nil, webhooks.WithProcessor(proc))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- proc.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()
	// The processor's first look finds nothing; the receive wakes it.
	assert.Equal(t, http.StatusAccepted, post(t, f.gw, "/webhooks/acme", `{}`, okHeaders("e1")).Code)
	select {
	case id := <-handled:
		assert.Equal(t, "e1", id)
	case <-time.After(10 * time.Second):
		t.Fatal("the processor was not woken by the new item")
	}
}

func TestReceiverWithoutHandledTypesStoresEveryType(t *testing.T) {
	t.Parallel()
	mux := webhooks.NewMux()
	proc, err := webhooks.NewProcessor(memstore.NewInbox(), mux)
	require.NoError(t, err)
	f := newGatewayFixture(t, nil, nil, webhooks.WithProcessor(proc), webhooks.WithHandledTypes(nil))
	h := okHeaders("e1")
	h["X-Type"] = "ping"
	assert.Equal(t, http.StatusAccepted, post(t, f.gw, "/webhooks/acme", `{}`, h).Code, "kept, to replay once a handler exists")
	assert.Equal(t, 1, f.inbox.Len())
	// A dispatcher that cannot tell takes every type.
	any, err := webhooks.NewProcessor(memstore.NewInbox(), webhooks.DispatcherFunc(func(context.Context, webhooks.Event) error { return nil }))
	require.NoError(t, err)
	assert.True(t, any.Handles("ping"))
	assert.False(t, proc.Handles("ping"))
	assert.False(t, mux.Handles("ping"))
}

// TestNewReceiverRefusesNilProcessorOrMux: a nil *Processor or *Mux
// given to WithProcessor or WithHandledTypes would panic on every request
// (answered 500); NewReceiver refuses it. An untyped nil is no processor.
func TestNewReceiverRefusesNilProcessorOrMux(t *testing.T) {
	t.Parallel()
	var (
		proc *webhooks.Processor
		mux  *webhooks.Mux
	)
	for name, opt := range map[string]webhooks.ReceiverOption{
		"WithProcessor(nil *Processor)":    webhooks.WithProcessor(proc),
		"WithHandledTypes(nil *Mux)":       webhooks.WithHandledTypes(mux),
		"WithHandledTypes(nil *Processor)": webhooks.WithHandledTypes(proc),
	} {
		_, err := webhooks.NewReceiver(webhooks.NewRegistry(), memstore.NewInbox(), webhooks.WithReplayStore(memstore.NewReplay()), opt)
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), "nil *webhooks.", name)
		}
	}
	for name, opt := range map[string]webhooks.ReceiverOption{
		"WithProcessor(nil)":    webhooks.WithProcessor(nil),
		"WithHandledTypes(nil)": webhooks.WithHandledTypes(nil),
	} {
		_, err := webhooks.NewReceiver(webhooks.NewRegistry(), memstore.NewInbox(), webhooks.WithReplayStore(memstore.NewReplay()), opt)
		assert.NoError(t, err, name)
	}
}

// blockingInbox holds every Enqueue until release is closed or the call's
// context ends, reporting each call that started.
type blockingInbox struct {
	webhooks.Enqueuer
	started chan struct{}
	release chan struct{}
}

func (b *blockingInbox) Enqueue(ctx context.Context, env webhooks.Envelope) (webhooks.EnqueueResult, error) {
	b.started <- struct{}{}
	select {
	case <-b.release:
		return b.Enqueuer.Enqueue(ctx, env)
	case <-ctx.Done():
		return webhooks.EnqueueResult{}, ctx.Err()
	}
}

func TestGatewayStoreTimeout(t *testing.T) {
	t.Parallel()
	inbox := &blockingInbox{Enqueuer: memstore.NewInbox(), started: make(chan struct{}, 10), release: make(chan struct{})}
	logs := &syncBuffer{}
	r := webhooks.NewRegistry()
	r.MustRegister("acme", headerVerifier)
	rcv, err := webhooks.NewReceiver(r, inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithReceiverStoreTimeout(20*time.Millisecond),
		webhooks.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	require.NoError(t, err)

	// A store that stalls instead of refusing: the receive gives up at its
	// deadline with 503 and acknowledges nothing.
	resp := post(t, rcv, "/webhooks/acme", `{}`, okHeaders("e1"))
	assert.Equal(t, http.StatusServiceUnavailable, resp.Code)
	assert.Equal(t, "unavailable", resp.Status)
	assert.Equal(t, "5", resp.RetryAfter)
	assert.Contains(t, logs.String(), "WithReceiverStoreTimeout", "the log says why")
	_, err = inbox.Enqueuer.(*memstore.Inbox).Get(context.Background(), webhooks.InboxKey{Provider: "acme", EventID: "e1"})
	assert.ErrorIs(t, err, ops.ErrNotFound)

	res, err := rcv.Receive(context.Background(), webhooks.Route{Provider: "acme"}, &webhooks.Request{
		Header: http.Header{"X-Sig": {"ok"}, "X-Id": {"e2"}}, Body: []byte(`{}`)})
	assert.Equal(t, webhooks.StatusUnavailable, res.Status)
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	_, err = webhooks.NewReceiver(r, inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithReceiverStoreTimeout(0))
	assert.Error(t, err)
}

// deadlineInbox records the deadline of each Enqueue's context.
type deadlineInbox struct {
	webhooks.Enqueuer
	deadlines chan time.Time
}

func (d *deadlineInbox) Enqueue(ctx context.Context, env webhooks.Envelope) (webhooks.EnqueueResult, error) {
	dl, _ := ctx.Deadline()
	d.deadlines <- dl
	return d.Enqueuer.Enqueue(ctx, env)
}

// TestReceiverStoreTimeoutDefault: a receive's store calls are bounded by
// DefaultReceiverStoreTimeout, or by WithReceiverStoreTimeout's, counted
// from the receive.
func TestReceiverStoreTimeoutDefault(t *testing.T) {
	t.Parallel()
	r := webhooks.NewRegistry()
	r.MustRegister("acme", headerVerifier)
	for i, c := range []struct {
		opts []webhooks.ReceiverOption
		want time.Duration
	}{
		{nil, webhooks.DefaultReceiverStoreTimeout},
		{[]webhooks.ReceiverOption{webhooks.WithReceiverStoreTimeout(time.Hour)}, time.Hour},
	} {
		inbox := &deadlineInbox{Enqueuer: memstore.NewInbox(), deadlines: make(chan time.Time, 1)}
		rcv, err := webhooks.NewReceiver(r, inbox, append(c.opts, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithLogger(discard))...)
		require.NoError(t, err)
		before := time.Now()
		require.Equal(t, http.StatusAccepted, post(t, rcv, "/webhooks/acme", `{}`, okHeaders(fmt.Sprint("e", i))).Code)
		after := time.Now()
		dl := <-inbox.deadlines
		// The deadline was set during the receive, between before and after.
		assert.False(t, dl.Before(before.Add(c.want)), "deadline %v, want %v after %v", dl, c.want, before)
		assert.False(t, dl.After(after.Add(c.want)), "deadline %v, want %v after at most %v", dl, c.want, after)
	}
}

// countingBody records whether anyone read it.
type countingBody struct {
	io.Reader
	read atomic.Bool
}

func (c *countingBody) Read(p []byte) (int, error) { c.read.Store(true); return c.Reader.Read(p) }

func TestGatewayShedsLoad(t *testing.T) {
	t.Parallel()
	inbox := &blockingInbox{Enqueuer: memstore.NewInbox(), started: make(chan struct{}, 10), release: make(chan struct{})}
	r := webhooks.NewRegistry()
	r.MustRegister("acme", headerVerifier)
	rcv, err := webhooks.NewReceiver(r, inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithMaxInFlight(2),
		webhooks.WithClientInFlightShare(0), webhooks.WithProviderInFlightShare(0), // the bound alone
		webhooks.WithReceiverStoreTimeout(time.Minute), webhooks.WithLogger(discard))
	require.NoError(t, err)

	done := make(chan int, 2)
	for _, id := range []string{"a", "b"} {
		go func() { done <- post(t, rcv, "/webhooks/acme", `{}`, okHeaders(id)).Code }()
	}
	<-inbox.started
	<-inbox.started // two requests are in flight, both held by the store

	body := &countingBody{Reader: strings.NewReader(`{}`)}
	req := httptest.NewRequest(http.MethodPost, "/webhooks/acme", body)
	for k, v := range okHeaders("c") {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	rcv.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code, "the third request is shed at once")
	assert.Equal(t, "5", rec.Header().Get("Retry-After"))
	assert.Equal(t, "close", rec.Header().Get("Connection"))
	assert.False(t, body.read.Load(), "a shed request's body is never read")

	close(inbox.release)
	assert.Equal(t, http.StatusAccepted, <-done)
	assert.Equal(t, http.StatusAccepted, <-done)
	assert.Equal(t, http.StatusAccepted, post(t, rcv, "/webhooks/acme", `{}`, okHeaders("c")).Code, "room again once they finished")

	_, err = webhooks.NewReceiver(r, inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithMaxInFlight(0))
	assert.Error(t, err)
}

func TestGatewayBoundsStoredHeaders(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	inbox := memstore.NewInbox()
	r := webhooks.NewRegistry()
	r.MustRegister("acme", headerVerifier)
	rcv, err := webhooks.NewReceiver(r, inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	require.NoError(t, err)

	h := okHeaders("many")
	for i := range 10000 {
		h[fmt.Sprintf("X-Junk-%05d", i)] = "v"
	}
	require.Equal(t, http.StatusAccepted, post(t, rcv, "/webhooks/acme", `{}`, h).Code, "verification still sees every header")
	it, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: "acme", EventID: "many"})
	require.NoError(t, err)
	assert.Len(t, it.Headers, 64, "the documented default of 64 header fields")
	// Names are taken in sorted order, so the same request always keeps the
	// same headers: X-Id, then X-Junk-00000 onwards; X-Sig and X-Type sort
	// after the cut.
	assert.Equal(t, "many", it.Headers.Get("X-Id"))
	assert.Equal(t, "v", it.Headers.Get("X-Junk-00000"))
	assert.Empty(t, it.Headers.Get("X-Sig"))
	assert.Contains(t, logs.String(), "headers_not_stored=")

	// A byte bound too.
	rcv, err = webhooks.NewReceiver(r, inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithStoredHeaderLimits(100, 40), webhooks.WithLogger(discard))
	require.NoError(t, err)
	h = map[string]string{"X-Sig": "ok", "X-Id": "small", "X-Type": "t", "X-Big": strings.Repeat("b", 100)}
	require.Equal(t, http.StatusAccepted, post(t, rcv, "/webhooks/acme", `{}`, h).Code)
	it, err = inbox.Get(context.Background(), webhooks.InboxKey{Provider: "acme", EventID: "small"})
	require.NoError(t, err)
	size := 0
	for k, vs := range it.Headers {
		size += len(k)
		for _, v := range vs {
			size += len(v)
		}
	}
	assert.LessOrEqual(t, size, 40)
	assert.Empty(t, it.Headers.Get("X-Big"))
	assert.Equal(t, "small", it.Headers.Get("X-Id"))
}

// deadLetter leases the item and dead-letters it at once.
func deadLetter(t *testing.T, inbox *memstore.Inbox, key webhooks.InboxKey, now time.Time) {
	t.Helper()
	leases, err := inbox.Acquire(context.Background(), webhooks.AcquireRequest{Now: now, LeaseDuration: time.Minute, Max: 1})
	require.NoError(t, err)
	require.Len(t, leases, 1)
	require.Equal(t, key, leases[0].Key())
	require.NoError(t, inbox.Settle(context.Background(), webhooks.Settlement{
		Lease: leases[0], Outcome: webhooks.AttemptDeadLettered, Now: now,
		Failure: webhooks.Failure{Class: webhooks.FailurePermanent, Message: "bad"},
	}))
}

func TestGatewayQuarantinesConflicts(t *testing.T) {
	t.Parallel()
	f := newGatewayFixture(t, nil, nil)
	require.Equal(t, http.StatusAccepted, post(t, f.gw, "/webhooks/acme", `{"v":1}`, okHeaders("e1")).Code)
	f.clock.Advance(time.Minute)
	r := post(t, f.gw, "/webhooks/acme", `{"v":2}`, okHeaders("e1"))
	assert.Equal(t, http.StatusConflict, r.Code, "a reused event ID is still refused")
	d, err := f.inbox.Get(context.Background(), webhooks.InboxKey{Provider: "acme", EventID: "e1"})
	require.NoError(t, err)
	assert.Equal(t, []byte(`{"v":1}`), d.Payload, "the stored payload is untouched")
	require.Len(t, d.Quarantine, 1, "but the second payload is kept for review, not lost")
	assert.Equal(t, []byte(`{"v":2}`), d.Quarantine[0].Payload)
	assert.Equal(t, sha256.Sum256([]byte(`{"v":2}`)), d.Quarantine[0].PayloadSHA256)
	assert.True(t, d.Quarantine[0].ReceivedAt.Equal(base.Add(time.Minute)))
	assert.Empty(t, d.Quarantine[0].Headers.Get("Authorization"), "credentials are not kept in quarantine either")
	assert.Equal(t, 1, d.Conflicts)
}

func TestGatewayRedeliveryReplay(t *testing.T) {
	t.Parallel()
	key := webhooks.InboxKey{Provider: "acme", EventID: "e1"}
	for _, on := range []bool{false, true} {
		f := newGatewayFixture(t, nil, nil, webhooks.WithRedeliveryReplay(on))
		require.Equal(t, http.StatusAccepted, post(t, f.gw, "/webhooks/acme", `{}`, okHeaders("e1")).Code)
		deadLetter(t, f.inbox, key, base)
		wakes := f.wakes.Load()
		f.clock.Advance(time.Hour)
		r := post(t, f.gw, "/webhooks/acme", `{}`, okHeaders("e1"))
		d, err := f.inbox.Get(context.Background(), key)
		require.NoError(t, err)
		if !on {
			assert.Equal(t, http.StatusOK, r.Code, "off by default: a redelivery of a dead letter is a duplicate")
			assert.Equal(t, "duplicate", r.Status)
			assert.Equal(t, webhooks.StateDead, d.State)
			assert.Empty(t, d.Audit)
			continue
		}
		assert.Equal(t, http.StatusAccepted, r.Code, "with WithRedeliveryReplay the redelivery replays it")
		assert.Equal(t, webhooks.StatePending, d.State)
		assert.True(t, d.NextAttemptAt.Equal(base.Add(time.Hour)), "due at the redelivery")
		require.Len(t, d.Audit, 1)
		assert.Equal(t, ops.ActionRedelivery, d.Audit[0].Action)
		assert.Equal(t, f.wakes.Load(), wakes+1, "the processor is woken")

		// A conflicting payload never replays anything.
		deadLetter(t, f.inbox, key, base.Add(2*time.Hour))
		assert.Equal(t, http.StatusConflict, post(t, f.gw, "/webhooks/acme", `{"other":1}`, okHeaders("e1")).Code)
		d, err = f.inbox.Get(context.Background(), key)
		require.NoError(t, err)
		assert.Equal(t, webhooks.StateDead, d.State)
	}
}

func TestGatewayStoresAPIVersion(t *testing.T) {
	t.Parallel()
	inbox := memstore.NewInbox()
	r := webhooks.NewRegistry()
	r.MustRegister("v", webhooks.VerifierFunc(func(context.Context, webhooks.Route, *webhooks.Request) (webhooks.Verification, error) {
		return webhooks.Verification{EventID: "e1", APIVersion: "2026-01-28"}, nil
	}))
	rcv, err := webhooks.NewReceiver(r, inbox, webhooks.WithReplayStore(memstore.NewReplay()), webhooks.WithLogger(discard))
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, post(t, rcv, "/webhooks/v", `{}`, nil).Code)
	d, err := inbox.Get(context.Background(), webhooks.InboxKey{Provider: "v", EventID: "e1"})
	require.NoError(t, err)
	assert.Equal(t, "2026-01-28", d.APIVersion)
}

func TestGatewayAnswersHEAD(t *testing.T) {
	t.Parallel()
	f := newGatewayFixture(t, nil, nil)
	for path, want := range map[string]int{"/webhooks/acme": http.StatusOK, "/webhooks/acme/t1": http.StatusOK, "/webhooks/nobody": http.StatusNotFound} {
		rec := httptest.NewRecorder()
		f.gw.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, path, nil))
		assert.Equal(t, want, rec.Code, path)
		assert.Zero(t, rec.Body.Len(), path)
	}
	assert.Zero(t, f.inbox.Len())
}

// blockingReplay stalls every registration until its context ends.
type blockingReplay struct{ webhooks.ReplayStore }

func (blockingReplay) Register(ctx context.Context, _ webhooks.ReplayRegistration) (webhooks.ReplayOutcome, error) {
	<-ctx.Done()
	var zero webhooks.ReplayOutcome
	return zero, ctx.Err()
}

// TestGatewayStoreTimeoutCoversEveryCall: the receive deadline bounds the
// replay store and the verifier's own lookups (a credential source that
// stalls) as it bounds Enqueue: 503 at the deadline, nothing stored.
func TestGatewayStoreTimeoutCoversEveryCall(t *testing.T) {
	t.Parallel()
	withReplayKey := webhooks.VerifierFunc(func(_ context.Context, _ webhooks.Route, r *webhooks.Request) (webhooks.Verification, error) {
		return webhooks.Verification{EventID: r.Header.Get("X-Id"), ReplayKey: "nonce-" + r.Header.Get("X-Id")}, nil
	})
	stalledCredentials := webhooks.VerifierFunc(func(ctx context.Context, _ webhooks.Route, _ *webhooks.Request) (webhooks.Verification, error) {
		<-ctx.Done() // a secret store that does not answer
		return webhooks.Verification{}, fmt.Errorf("loading the secret: %w", ctx.Err())
	})
	for name, c := range map[string]struct {
		verifier webhooks.Verifier
		replay   webhooks.ReplayStore
	}{
		"a stalled replay store":      {withReplayKey, blockingReplay{memstore.NewReplay()}},
		"a stalled credential source": {stalledCredentials, memstore.NewReplay()},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			inbox := memstore.NewInbox()
			r := webhooks.NewRegistry()
			r.MustRegister("acme", c.verifier)
			rcv, err := webhooks.NewReceiver(r, inbox, webhooks.WithReplayStore(c.replay), webhooks.WithReceiverStoreTimeout(20*time.Millisecond), webhooks.WithLogger(discard))
			require.NoError(t, err)
			resp := post(t, rcv, "/webhooks/acme", `{}`, okHeaders("e1"))
			assert.Equal(t, http.StatusServiceUnavailable, resp.Code)
			assert.Equal(t, "5", resp.RetryAfter)
			_, err = inbox.Get(context.Background(), webhooks.InboxKey{Provider: "acme", EventID: "e1"})
			assert.ErrorIs(t, err, ops.ErrNotFound, "nothing is stored")
		})
	}
}
