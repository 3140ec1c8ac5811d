package admin_test

import (
	"crypto/sha256"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/admin"
	"github.com/hookinbox/webhooks/internal/adminjson"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/webhookstest"
)

var (
	base    = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	discard = slog.New(slog.DiscardHandler)
)

// dead describes a dead letter a test creates.
type dead struct {
	provider, tenant, id, eventType string
	class                           webhooks.FailureClass
	apiVersion                      string
	at                              time.Time
	// payload, when set, replaces payloadOf(key).
	payload string
}

func (d dead) key() webhooks.InboxKey {
	return webhooks.InboxKey{Provider: d.provider, Tenant: d.tenant, EventID: d.id}
}

// payloadOf is the payload a test stores for a key: it carries a marker
// the tests look for in answers.
func payloadOf(k webhooks.InboxKey) []byte {
	return []byte(`{"marker":"PAYLOAD-` + k.EventID + `"}`)
}

// envelope is a webhook for k received at at.
func envelope(k webhooks.InboxKey, eventType string, at time.Time) webhooks.Envelope {
	p := payloadOf(k)
	return webhooks.Envelope{
		Key:           k,
		EventType:     eventType,
		Payload:       p,
		Headers:       http.Header{"X-Marker": {"HEADER-" + k.EventID}},
		PayloadSHA256: sha256.Sum256(p),
		KeyID:         "primary",
		ReceivedAt:    at,
	}
}

// makeDead stores d and dead-letters it after one failed attempt. No other
// item may be due at d.at.
func makeDead(t testing.TB, s *memstore.Inbox, d dead) {
	t.Helper()
	ctx := t.Context()
	env := envelope(d.key(), d.eventType, d.at.Add(-time.Minute))
	env.APIVersion = d.apiVersion
	if d.payload != "" {
		env.Payload = []byte(d.payload)
		env.PayloadSHA256 = sha256.Sum256(env.Payload)
	}
	_, err := s.Enqueue(ctx, env)
	require.NoError(t, err)
	leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: d.at.Add(-time.Second), LeaseDuration: time.Minute, Max: 1, Worker: "test-worker", Version: "v1"})
	require.NoError(t, err)
	require.Len(t, leases, 1)
	require.Equal(t, d.key(), leases[0].Key())
	class := d.class
	if class == "" {
		class = webhooks.FailurePermanent
	}
	require.NoError(t, s.Settle(ctx, webhooks.Settlement{
		Lease:   leases[0],
		Outcome: webhooks.AttemptDeadLettered,
		Failure: webhooks.Failure{Class: class, Message: "handler said no to " + d.id},
		Now:     d.at,
	}))
}

// fixture is a store with dead letters across providers and tenants, a
// succeeded item and a pending one.
func fixture(t testing.TB) (*memstore.Inbox, []dead) {
	t.Helper()
	s := memstore.NewInbox()
	deads := []dead{
		{provider: "stripe", id: "evt_1", eventType: "invoice.paid", at: base.Add(1 * time.Minute), apiVersion: "2024-06-20"},
		{provider: "stripe", tenant: "acme", id: "evt_2", eventType: "invoice.paid", at: base.Add(2 * time.Minute)},
		{provider: "github", tenant: "acme", id: "gh_1", eventType: "push", class: webhooks.FailureNoHandler, at: base.Add(3 * time.Minute)},
		{provider: "github", id: "gh_2", eventType: "push", at: base.Add(4 * time.Minute)},
		{provider: "stripe", tenant: "globex", id: "evt_3", eventType: "charge.refunded", at: base.Add(5 * time.Minute)},
	}
	for _, d := range deads {
		makeDead(t, s, d)
	}
	ctx := t.Context()
	// A succeeded item and a pending one.
	ok := webhooks.InboxKey{Provider: "stripe", EventID: "evt_ok"}
	_, err := s.Enqueue(ctx, envelope(ok, "invoice.paid", base.Add(6*time.Minute)))
	require.NoError(t, err)
	leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: base.Add(6 * time.Minute), LeaseDuration: time.Minute, Max: 1})
	require.NoError(t, err)
	require.NoError(t, s.Settle(ctx, webhooks.Settlement{Lease: leases[0], Outcome: webhooks.AttemptSucceeded, Now: base.Add(6 * time.Minute)}))
	_, err = s.Enqueue(ctx, envelope(webhooks.InboxKey{Provider: "stripe", EventID: "evt_pending"}, "invoice.paid", base.Add(7*time.Minute)))
	require.NoError(t, err)
	return s, deads
}

// newHandler is a handler over s whose actor is the X-Test-User header.
func newHandler(t testing.TB, s *memstore.Inbox, opts ...admin.Option) *admin.Handler {
	t.Helper()
	h, err := admin.NewHandler(s, append([]admin.Option{
		admin.WithClock(webhookstest.NewClock(base.Add(time.Hour))),
		admin.WithLogger(discard),
		admin.WithActor(func(r *http.Request) string { return r.Header.Get("X-Test-User") }),
	}, opts...)...)
	require.NoError(t, err)
	return h
}

// do serves one request and returns the recorder.
func do(h http.Handler, method, target, body string, header ...string) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// post sends a JSON body as user alice.
func post(h http.Handler, target, body string) *httptest.ResponseRecorder {
	return do(h, http.MethodPost, target, body, "Content-Type", "application/json", "X-Test-User", "alice")
}

// decode decodes a JSON answer into a T, requiring the status and a JSON
// content type.
func decode[T any](t *testing.T, rec *httptest.ResponseRecorder, status int) T {
	t.Helper()
	require.Equal(t, status, rec.Code, "answer: %s", rec.Body)
	require.Equal(t, "application/json; charset=utf-8", rec.Header().Get("Content-Type"))
	var v T
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &v), "answer: %s", rec.Body)
	return v
}

// eventIDs lists the event IDs of a page's items.
func eventIDs(p adminjson.Page) []string {
	ids := make([]string, len(p.Items))
	for i, it := range p.Items {
		ids[i] = it.EventID
	}
	return ids
}
