package admin_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/admin"
	"github.com/hookinbox/webhooks/internal/adminjson"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/ops"
)

func TestNewHandlerRefusesBadConfig(t *testing.T) {
	t.Parallel()
	_, err := admin.NewHandler(nil)
	assert.ErrorContains(t, err, "needs an ops.Store")
	for _, p := range []string{"admin/", "/admin", ""} {
		_, err = admin.NewHandler(memstore.NewInbox(), admin.WithPathPrefix(p))
		assert.ErrorContains(t, err, "must start and end with '/'", p)
	}
}

func TestStats(t *testing.T) {
	t.Parallel()
	s, _ := fixture(t)
	st := decode[adminjson.Stats](t, do(newHandler(t, s), http.MethodGet, "/api/stats", ""), http.StatusOK)
	assert.Equal(t, map[string]int64{"dead": 5, "succeeded": 1, "pending": 1}, nonZero(st.States))
	assert.Equal(t, int64(1), st.Due, "the pending item is due")
	assert.Equal(t, base.Add(7*time.Minute), st.OldestDue)
	assert.InDelta(t, (53 * time.Minute).Seconds(), st.OldestDueAgeSeconds, 0.001, "the handler's clock is an hour after base")
	assert.Equal(t, base.Add(time.Hour), st.AsOf)
	assert.ElementsMatch(t, []adminjson.Count{
		{Provider: "github", EventType: "push", Count: 2},
		{Provider: "stripe", EventType: "invoice.paid", Count: 2},
		{Provider: "stripe", EventType: "charge.refunded", Count: 1},
	}, st.DeadLetters)
	assert.Equal(t, int64(1), st.DeadLetters[2].Count, "the largest groups first")

	rec := do(newHandler(t, s), http.MethodGet, "/api/stats?verbose=1", "")
	e := decode[adminjson.ErrorResponse](t, rec, http.StatusBadRequest)
	assert.Equal(t, "bad_request", e.Error)
	assert.Contains(t, e.Message, "unknown parameter verbose")
}

func nonZero(m map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

func TestDeadLettersFilters(t *testing.T) {
	t.Parallel()
	s, _ := fixture(t)
	h := newHandler(t, s)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{"evt_3", "gh_2", "gh_1", "evt_2", "evt_1"}},
		{"provider=stripe", []string{"evt_3", "evt_2", "evt_1"}},
		{"tenant=acme", []string{"gh_1", "evt_2"}},
		{"no_tenant=true", []string{"gh_2", "evt_1"}},
		{"provider=stripe&no_tenant=1", []string{"evt_1"}},
		{"event_type=push", []string{"gh_2", "gh_1"}},
		{"error_class=no_handler", []string{"gh_1"}},
		{"api_version=2024-06-20", []string{"evt_1"}},
		{"from=" + url.QueryEscape(base.Add(2*time.Minute).Format(time.RFC3339)) + "&to=" + url.QueryEscape(base.Add(4*time.Minute).Format(time.RFC3339)), []string{"gh_1", "evt_2"}},
		{"from=2026-03-05", nil},
		{"to=2026-03-05T00:00", []string{"evt_3", "gh_2", "gh_1", "evt_2", "evt_1"}},
		{"provider=nobody", nil},
		{"state=closed", nil},
	} {
		p := decode[adminjson.Page](t, do(h, http.MethodGet, "/api/dead-letters?"+tc.query, ""), http.StatusOK)
		assert.Equal(t, tc.want, nilIfEmpty(eventIDs(p)), tc.query)
		assert.Empty(t, p.Next, tc.query)
	}

	p := decode[adminjson.Page](t, do(h, http.MethodGet, "/api/dead-letters?event_type=charge.refunded", ""), http.StatusOK)
	require.Len(t, p.Items, 1)
	it := p.Items[0]
	assert.Equal(t, adminjson.Key{Provider: "stripe", Tenant: "globex", EventID: "evt_3"}, it.Key)
	assert.Equal(t, "dead", it.State)
	assert.Equal(t, 1, it.Attempts)
	assert.Equal(t, base.Add(5*time.Minute), it.DeadAt)
	require.NotNil(t, it.LastError)
	assert.Equal(t, "permanent", it.LastError.Class)
	assert.Equal(t, "handler said no to evt_3", it.LastError.Message)
	assert.Equal(t, len(payloadOf(webhooks.InboxKey{EventID: "evt_3"})), it.PayloadBytes)
	assert.NotContains(t, do(h, http.MethodGet, "/api/dead-letters", "").Body.String(), "PAYLOAD-", "a listing never holds a payload")
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestDeadLettersPaging(t *testing.T) {
	t.Parallel()
	s, _ := fixture(t)
	h := newHandler(t, s)
	var got []string
	target := "/api/dead-letters?limit=2"
	pages := 0
	for {
		p := decode[adminjson.Page](t, do(h, http.MethodGet, target, ""), http.StatusOK)
		pages++
		assert.LessOrEqual(t, len(p.Items), 2)
		got = append(got, eventIDs(p)...)
		if p.Next == "" {
			break
		}
		target = "/api/dead-letters?limit=2&after=" + url.QueryEscape(p.Next)
	}
	assert.Equal(t, 3, pages)
	assert.Equal(t, []string{"evt_3", "gh_2", "gh_1", "evt_2", "evt_1"}, got)

	// A cursor of the dead listing is refused by the closed one.
	p := decode[adminjson.Page](t, do(h, http.MethodGet, "/api/dead-letters?limit=1", ""), http.StatusOK)
	e := decode[adminjson.ErrorResponse](t, do(h, http.MethodGet, "/api/dead-letters?state=closed&after="+url.QueryEscape(p.Next), ""), http.StatusBadRequest)
	assert.Contains(t, e.Message, "invalid cursor")
}

func TestDeadLettersBadInput(t *testing.T) {
	t.Parallel()
	s, _ := fixture(t)
	h := newHandler(t, s)
	for _, tc := range []struct{ query, want string }{
		{"limit=0", "limit \"0\": give a number from 1 to 500"},
		{"limit=501", "from 1 to 500"},
		{"limit=ten", "from 1 to 500"},
		{"state=pending", `state "pending": give dead or closed`},
		{"from=yesterday", `from "yesterday": give a date as YYYY-MM-DD`},
		{"to=2026-13-01", `to "2026-13-01"`},
		{"from=2026-03-05&to=2026-03-04", "is not before to"},
		{"error_class=oops", `error_class "oops": give one of error, permanent`},
		{"tenant=acme&no_tenant=true", "give one or the other"},
		{"no_tenant=maybe", `no_tenant "maybe"`},
		{"provder=stripe", "unknown parameter provder"},
		{"provider=a&provider=b", "parameter provider is given 2 times"},
		{"after=not-a-cursor", "invalid cursor"},
		{"after=" + url.QueryEscape("eyJ0IjoxfQ"), "invalid cursor"},
	} {
		rec := do(h, http.MethodGet, "/api/dead-letters?"+tc.query, "")
		e := decode[adminjson.ErrorResponse](t, rec, http.StatusBadRequest)
		assert.Equal(t, "bad_request", e.Error, tc.query)
		assert.Contains(t, e.Message, tc.want, tc.query)
	}
}

func TestItem(t *testing.T) {
	t.Parallel()
	s, _ := fixture(t)
	ctx := t.Context()
	key := webhooks.InboxKey{Provider: "stripe", Tenant: "acme", EventID: "evt_2"}
	// A conflicting delivery is quarantined; a replay and a second death
	// give it an audit entry and a second attempt.
	conflict := envelope(key, "invoice.paid", base.Add(10*time.Minute))
	conflict.Payload = []byte(`{"marker":"QUARANTINED"}`)
	conflict.PayloadSHA256[0] ^= 1
	res, err := s.Enqueue(ctx, conflict)
	require.NoError(t, err)
	require.Equal(t, webhooks.EnqueueConflict, res.Outcome)
	_, err = s.Replay(ctx, ops.ReplayRequest{Key: key, Actor: "bob", Reason: "fixed", Ticket: "INC-1", Now: base.Add(11 * time.Minute)})
	require.NoError(t, err)
	makeDeadAgain(t, s, key, base.Add(12*time.Minute))

	h := newHandler(t, s)
	target := "/api/item?provider=stripe&tenant=acme&event_id=evt_2"
	d := decode[adminjson.Detail](t, do(h, http.MethodGet, target, ""), http.StatusOK)
	assert.Equal(t, adminjson.Key{Provider: "stripe", Tenant: "acme", EventID: "evt_2"}, d.Key)
	assert.Equal(t, "dead", d.State)
	require.Len(t, d.History, 2)
	assert.Equal(t, adminjson.Attempt{Number: 1, Outcome: "dead_lettered", StartedAt: base.Add(2*time.Minute - time.Second), FinishedAt: base.Add(2 * time.Minute),
		ErrorClass: "permanent", Error: "handler said no to evt_2", Worker: "test-worker", Version: "v1"}, d.History[0])
	assert.Equal(t, 2, d.History[1].Number)
	assert.Equal(t, []adminjson.Audit{{Action: "replay", At: base.Add(11 * time.Minute), Actor: "bob", Reason: "fixed", Ticket: "INC-1"}}, d.Audit)
	assert.Equal(t, 1, d.Conflicts)
	require.Len(t, d.Quarantine, 1)
	assert.Equal(t, len(conflict.Payload), d.Quarantine[0].PayloadBytes)
	assert.False(t, d.PayloadsShown)
	assert.Nil(t, d.Payload)
	assert.Nil(t, d.Headers)
	body := do(h, http.MethodGet, target, "").Body.String()
	for _, secret := range []string{"PAYLOAD-", "QUARANTINED", "HEADER-"} {
		assert.NotContains(t, body, secret, "payloads and headers are hidden by default")
	}

	// With WithPayloads they are shown.
	d = decode[adminjson.Detail](t, do(newHandler(t, s, admin.WithPayloads(true)), http.MethodGet, target, ""), http.StatusOK)
	assert.True(t, d.PayloadsShown)
	require.NotNil(t, d.Payload)
	require.NotNil(t, d.Payload.Text)
	assert.Equal(t, string(payloadOf(key)), *d.Payload.Text)
	assert.Equal(t, []string{"HEADER-evt_2"}, d.Headers["X-Marker"])
	require.NotNil(t, d.Quarantine[0].Payload)
	assert.Equal(t, `{"marker":"QUARANTINED"}`, *d.Quarantine[0].Payload.Text)

	// The empty tenant: tenant left out or empty.
	for _, q := range []string{"provider=stripe&event_id=evt_1", "provider=stripe&tenant=&event_id=evt_1"} {
		d = decode[adminjson.Detail](t, do(h, http.MethodGet, "/api/item?"+q, ""), http.StatusOK)
		assert.Equal(t, "evt_1", d.EventID, q)
		assert.Equal(t, "2024-06-20", d.APIVersion, q)
	}

	for _, tc := range []struct {
		query  string
		status int
		want   string
	}{
		{"provider=stripe&event_id=nope", http.StatusNotFound, "not found"},
		{"provider=stripe&tenant=other&event_id=evt_2", http.StatusNotFound, "not found"},
		{"provider=stripe", http.StatusBadRequest, "provider and event_id are required"},
		{"event_id=evt_1", http.StatusBadRequest, "provider and event_id are required"},
		{"provider=stripe&event_id=evt_1&id=3", http.StatusBadRequest, "unknown parameter id"},
	} {
		e := decode[adminjson.ErrorResponse](t, do(h, http.MethodGet, "/api/item?"+tc.query, ""), tc.status)
		assert.Contains(t, e.Message, tc.want, tc.query)
	}
}

// makeDeadAgain dead-letters a replayed (pending) item at at.
func makeDeadAgain(t *testing.T, s *memstore.Inbox, key webhooks.InboxKey, at time.Time) {
	t.Helper()
	leases, err := s.Acquire(t.Context(), webhooks.AcquireRequest{Now: at.Add(-time.Second), LeaseDuration: time.Minute, Max: 10})
	require.NoError(t, err)
	for _, l := range leases {
		out := webhooks.AttemptAbandoned
		if l.Key() == key {
			out = webhooks.AttemptDeadLettered
		}
		require.NoError(t, s.Settle(t.Context(), webhooks.Settlement{Lease: l, Outcome: out, Failure: webhooks.Failure{Class: webhooks.FailurePermanent, Message: "again"}, Now: at}))
	}
}

func TestReplay(t *testing.T) {
	t.Parallel()
	s, _ := fixture(t)
	h := newHandler(t, s)
	res := decode[adminjson.ReplayResult](t, post(h, "/api/replay", `{"provider":"stripe","tenant":"acme","event_id":"evt_2","reason":"bug 12 fixed","ticket":"INC-7"}`), http.StatusOK)
	assert.False(t, res.DryRun)
	assert.Equal(t, "alice", res.Actor, "the actor comes from the host's function")
	assert.Equal(t, 1, res.Count)
	assert.Equal(t, []adminjson.Replayed{{Key: adminjson.Key{Provider: "stripe", Tenant: "acme", EventID: "evt_2"}, DueAt: base.Add(time.Hour)}}, res.Items)

	d, err := s.Get(t.Context(), webhooks.InboxKey{Provider: "stripe", Tenant: "acme", EventID: "evt_2"})
	require.NoError(t, err)
	assert.Equal(t, webhooks.StatePending, d.State)
	assert.Equal(t, 0, d.Attempts, "a fresh budget by default")
	assert.Equal(t, []ops.Audit{{Action: ops.ActionReplay, At: base.Add(time.Hour), Actor: "alice", Reason: "bug 12 fixed", Ticket: "INC-7"}}, d.Audit)
	decode[adminjson.ReplayResult](t, post(h, "/api/replay", `{"provider":"stripe","event_id":"evt_1","reason":"r","keep_attempts":true}`), http.StatusOK)
	d, err = s.Get(t.Context(), webhooks.InboxKey{Provider: "stripe", EventID: "evt_1"})
	require.NoError(t, err)
	assert.Equal(t, 1, d.Attempts, "keep_attempts")

	// The item is pending now: replaying it again is refused.
	e := decode[adminjson.ErrorResponse](t, post(h, "/api/replay", `{"provider":"stripe","tenant":"acme","event_id":"evt_2","reason":"again"}`), http.StatusConflict)
	assert.Equal(t, "not_finished", e.Error)
	e = decode[adminjson.ErrorResponse](t, post(h, "/api/replay", `{"provider":"stripe","event_id":"evt_pending","reason":"x"}`), http.StatusConflict)
	assert.Equal(t, "not_finished", e.Error)
	// A succeeded item runs again, audited.
	res = decode[adminjson.ReplayResult](t, post(h, "/api/replay", `{"provider":"stripe","event_id":"evt_ok","reason":"the handler skipped it"}`), http.StatusOK)
	assert.Equal(t, 1, res.Count)
	d, err = s.Get(t.Context(), webhooks.InboxKey{Provider: "stripe", EventID: "evt_ok"})
	require.NoError(t, err)
	assert.Equal(t, webhooks.StatePending, d.State)
	assert.Equal(t, "the handler skipped it", d.Audit[0].Reason)
	e = decode[adminjson.ErrorResponse](t, post(h, "/api/replay", `{"provider":"stripe","event_id":"nope","reason":"x"}`), http.StatusNotFound)
	assert.Equal(t, "not_found", e.Error)
}

// TestMutationsBadInput sends each mutating endpoint each bad request.
func TestMutationsBadInput(t *testing.T) {
	t.Parallel()
	s, _ := fixture(t)
	h := newHandler(t, s)
	one := `{"provider":"stripe","event_id":"evt_1","reason":"r"}`
	for _, path := range []string{"/api/replay", "/api/close", "/api/bulk-replay"} {
		body := one
		if path == "/api/bulk-replay" {
			body = `{"filter":{"provider":"stripe"},"limit":10,"reason":"r"}`
		}
		for _, tc := range []struct {
			name   string
			body   string
			header []string
			status int
			want   string
		}{
			{"actor in the body", strings.Replace(body, `"reason"`, `"actor":"mallory","reason"`, 1), nil, 400, "cannot name the actor"},
			{"unknown field", strings.Replace(body, `"reason"`, `"reson":"x","reason"`, 1), nil, 400, `unknown field "reson"`},
			{"no reason", strings.Replace(body, `"reason":"r"`, `"reason":" "`, 1), nil, 400, "reason is required"},
			{"bad JSON", `{"provider":`, nil, 400, "bad JSON body"},
			{"empty body", "", nil, 400, "the body is empty"},
			{"trailing data", body + `{}`, nil, 400, "data after the JSON object"},
			{"too large", `{"reason":"` + strings.Repeat("x", 70<<10) + `"}`, nil, 400, "over 65536 bytes"},
			{"not JSON", body, []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, "Content-Type: application/json"},
			{"no content type", body, []string{"Content-Type", ""}, 415, "as JSON"},
			{"no actor", body, []string{"X-Test-User", ""}, 403, "names no actor"},
			{"cross-origin", body, []string{"Sec-Fetch-Site", "cross-site"}, 403, "cross-origin"},
			{"cross-origin by Origin", body, []string{"Origin", "https://evil.example"}, 403, "cross-origin"},
		} {
			hdr := append([]string{"Content-Type", "application/json", "X-Test-User", "alice"}, tc.header...)
			rec := do(h, http.MethodPost, path, tc.body, hdr...)
			e := decode[adminjson.ErrorResponse](t, rec, tc.status)
			assert.Contains(t, e.Message, tc.want, "%s: %s", path, tc.name)
		}
	}
	// Item addressing of replay and close.
	for _, path := range []string{"/api/replay", "/api/close"} {
		e := decode[adminjson.ErrorResponse](t, post(h, path, `{"provider":"stripe","reason":"r"}`), http.StatusBadRequest)
		assert.Contains(t, e.Message, "provider and event_id are required", path)
	}
	// Bulk replay's own fields.
	for _, tc := range []struct{ body, want string }{
		{`{"filter":{},"limit":-1,"reason":"r"}`, "limit -1: give the most items this replay takes, from 1 to 100000 (default 1000)"},
		{`{"filter":{},"limit":100001,"reason":"r"}`, "limit 100001: give the most items this replay takes, from 1 to 100000"},
		{`{"filter":{},"limit":5,"reason":"r","spread":"ten minutes"}`, `spread "ten minutes"`},
		{`{"filter":{},"limit":5,"reason":"r","spread":"-1m"}`, `spread "-1m"`},
		{`{"filter":{},"limit":5,"reason":"r","spread":"1314000h"}`, `spread "1314000h": it may be at most 24h0m0s`},
		{`{"filter":{},"limit":5,"reason":"r","state":"pending"}`, `state "pending": give dead (the default), closed or succeeded`},
		{`{"filter":{},"limit":5,"reason":"r","after":"garbage"}`, "invalid cursor"},
		{`{"filter":{"error_class":"nope"},"limit":5,"reason":"r"}`, `error_class "nope"`},
		{`{"filter":{"tenant":"a","no_tenant":true},"limit":5,"reason":"r"}`, "one or the other"},
		{`{"filter":{"from":"yesterday"},"limit":5,"reason":"r"}`, "bad JSON body"},
		{`{"filter":{"from":"2026-03-05T00:00:00Z","to":"2026-03-04T00:00:00Z"},"limit":5,"reason":"r"}`, "is not before to"},
	} {
		e := decode[adminjson.ErrorResponse](t, post(h, "/api/bulk-replay", tc.body), http.StatusBadRequest)
		assert.Contains(t, e.Message, tc.want, tc.body)
	}

	// Nothing changed.
	st, err := s.Stats(t.Context(), ops.StatsRequest{Now: base.Add(time.Hour)})
	require.NoError(t, err)
	assert.Equal(t, int64(5), st.States[webhooks.StateDead])
}

func TestReadOnlyWithoutActor(t *testing.T) {
	t.Parallel()
	s, _ := fixture(t)
	h, err := admin.NewHandler(s, admin.WithLogger(discard))
	require.NoError(t, err)
	for _, path := range []string{"/api/replay", "/api/close", "/api/bulk-replay"} {
		e := decode[adminjson.ErrorResponse](t, post(h, path, `{"provider":"stripe","event_id":"evt_1","reason":"r"}`), http.StatusForbidden)
		assert.Equal(t, "forbidden", e.Error)
		assert.Contains(t, e.Message, "read-only", path)
	}
	decode[adminjson.Page](t, do(h, http.MethodGet, "/api/dead-letters", ""), http.StatusOK)
}

func TestBulkReplay(t *testing.T) {
	t.Parallel()
	s, _ := fixture(t)
	h := newHandler(t, s)
	now := base.Add(time.Hour)
	body := `{"filter":{"provider":"stripe"},"limit":10,"reason":"deploy 42","ticket":"INC-9","spread":"30m","dry_run":true}`
	dry := decode[adminjson.ReplayResult](t, post(h, "/api/bulk-replay", body), http.StatusOK)
	assert.True(t, dry.DryRun)
	assert.Equal(t, 3, dry.Count)
	var keys []string
	for i, it := range dry.Items {
		keys = append(keys, it.EventID)
		assert.Equal(t, now.Add(30*time.Minute*time.Duration(i)/3), it.DueAt, "item %d of 3 is due at now+spread*i/n", i)
	}
	assert.Equal(t, []string{"evt_3", "evt_2", "evt_1"}, keys)
	p := decode[adminjson.Page](t, do(h, http.MethodGet, "/api/dead-letters?provider=stripe", ""), http.StatusOK)
	assert.Len(t, p.Items, 3, "a dry run changes nothing")

	real := decode[adminjson.ReplayResult](t, post(h, "/api/bulk-replay", strings.Replace(body, `"dry_run":true`, `"dry_run":false`, 1)), http.StatusOK)
	assert.False(t, real.DryRun)
	assert.Equal(t, dry.Items, real.Items, "the replay replays what the dry run reported")
	p = decode[adminjson.Page](t, do(h, http.MethodGet, "/api/dead-letters", ""), http.StatusOK)
	assert.Equal(t, []string{"gh_2", "gh_1"}, eventIDs(p))
	d, err := s.Get(t.Context(), webhooks.InboxKey{Provider: "stripe", EventID: "evt_1"})
	require.NoError(t, err)
	assert.Equal(t, "alice", d.Audit[0].Actor)
	assert.Equal(t, "INC-9", d.Audit[0].Ticket)

	assert.Equal(t, 3, real.Done)
	assert.Equal(t, 3, real.Total)
	assert.Empty(t, real.Next)

	// The empty tenant, and a limit.
	res := decode[adminjson.ReplayResult](t, post(h, "/api/bulk-replay", `{"filter":{"no_tenant":true},"limit":1,"reason":"r"}`), http.StatusOK)
	require.Equal(t, 1, res.Count)
	assert.Equal(t, adminjson.Key{Provider: "github", EventID: "gh_2"}, res.Items[0].Key)
	assert.Equal(t, now, res.Items[0].DueAt, "without a spread every item is due now")

	// Succeeded items only when asked by state.
	res = decode[adminjson.ReplayResult](t, post(h, "/api/bulk-replay", `{"filter":{},"state":"succeeded","reason":"run them again"}`), http.StatusOK)
	require.Equal(t, 1, res.Count, "the default limit")
	assert.Equal(t, "evt_ok", res.Items[0].EventID)
}

// TestBulkReplayInBatches: a replay larger than a batch answers a batch a
// request, with its progress and the cursor that continues it.
func TestBulkReplayInBatches(t *testing.T) {
	t.Parallel()
	s := memstore.NewInbox()
	const n = ops.ReplayBatch + 20
	for i := range n {
		makeDead(t, s, dead{provider: "stripe", id: fmt.Sprintf("evt_%04d", i), eventType: "invoice.paid", at: base.Add(time.Duration(i) * time.Second)})
	}
	h := newHandler(t, s)
	body := `{"filter":{"provider":"stripe"},"reason":"deploy 42","spread":"1h"}`
	first := decode[adminjson.ReplayResult](t, post(h, "/api/bulk-replay", body), http.StatusOK)
	assert.Equal(t, ops.ReplayBatch, first.Count)
	assert.Equal(t, ops.ReplayBatch, first.Done)
	assert.Equal(t, n, first.Total)
	require.NotEmpty(t, first.Next)
	second := decode[adminjson.ReplayResult](t, post(h, "/api/bulk-replay", strings.Replace(body, `"reason"`, `"after":"`+first.Next+`","reason"`, 1)), http.StatusOK)
	assert.Equal(t, 20, second.Count)
	assert.Equal(t, n, second.Done)
	assert.Empty(t, second.Next, "the replay is complete")
	assert.Equal(t, base.Add(time.Hour).Add(time.Hour*time.Duration(n-1)/n), second.Items[19].DueAt, "the last is due at its place in the spread over the whole replay")
	st, err := s.Stats(t.Context(), ops.StatsRequest{Now: base.Add(time.Hour)})
	require.NoError(t, err)
	assert.Zero(t, st.States[webhooks.StateDead])
}

func TestClose(t *testing.T) {
	t.Parallel()
	s, _ := fixture(t)
	h := newHandler(t, s)
	res := decode[adminjson.CloseResult](t, post(h, "/api/close", `{"provider":"github","tenant":"acme","event_id":"gh_1","reason":"test event","ticket":"OPS-3"}`), http.StatusOK)
	assert.Equal(t, adminjson.CloseResult{Key: adminjson.Key{Provider: "github", Tenant: "acme", EventID: "gh_1"}, State: "closed", Actor: "alice"}, res)

	p := decode[adminjson.Page](t, do(h, http.MethodGet, "/api/dead-letters?state=closed", ""), http.StatusOK)
	require.Len(t, p.Items, 1)
	assert.Equal(t, "gh_1", p.Items[0].EventID)
	assert.Equal(t, base.Add(time.Hour), p.Items[0].ClosedAt)
	d := decode[adminjson.Detail](t, do(h, http.MethodGet, "/api/item?provider=github&tenant=acme&event_id=gh_1", ""), http.StatusOK)
	assert.Equal(t, []adminjson.Audit{{Action: "close", At: base.Add(time.Hour), Actor: "alice", Reason: "test event", Ticket: "OPS-3"}}, d.Audit)

	e := decode[adminjson.ErrorResponse](t, post(h, "/api/close", `{"provider":"github","tenant":"acme","event_id":"gh_1","reason":"again"}`), http.StatusConflict)
	assert.Equal(t, "not_dead", e.Error)
	e = decode[adminjson.ErrorResponse](t, post(h, "/api/close", `{"provider":"github","event_id":"nope","reason":"r"}`), http.StatusNotFound)
	assert.Equal(t, "not_found", e.Error)
	// A closed item is never replayed by a bulk replay of dead letters,
	// only by one that asks for closed items, or by its key.
	res2 := decode[adminjson.ReplayResult](t, post(h, "/api/bulk-replay", `{"filter":{"provider":"github","tenant":"acme"},"limit":10,"reason":"r"}`), http.StatusOK)
	assert.Zero(t, res2.Count)
	res2 = decode[adminjson.ReplayResult](t, post(h, "/api/bulk-replay", `{"filter":{"provider":"github"},"state":"closed","dry_run":true,"reason":"r"}`), http.StatusOK)
	require.Equal(t, 1, res2.Count)
	assert.Equal(t, "gh_1", res2.Items[0].EventID)
	res2 = decode[adminjson.ReplayResult](t, post(h, "/api/replay", `{"provider":"github","tenant":"acme","event_id":"gh_1","reason":"closed by mistake"}`), http.StatusOK)
	require.Equal(t, 1, res2.Count)
	d = decode[adminjson.Detail](t, do(h, http.MethodGet, "/api/item?provider=github&tenant=acme&event_id=gh_1", ""), http.StatusOK)
	assert.Equal(t, "pending", d.State)
	require.Len(t, d.Audit, 2)
	assert.Equal(t, adminjson.Audit{Action: "replay", At: base.Add(time.Hour), Actor: "alice", Reason: "closed by mistake"}, d.Audit[1])
}

func TestMethodsAndPaths(t *testing.T) {
	t.Parallel()
	h := newHandler(t, memstore.NewInbox())
	for path, allow := range map[string]string{
		"/":                 "GET, HEAD",
		"/item":             "GET, HEAD",
		"/admin.css":        "GET, HEAD",
		"/api/stats":        "GET, HEAD",
		"/api/dead-letters": "GET, HEAD",
		"/api/item":         "GET, HEAD",
		"/api/replay":       "POST",
		"/api/bulk-replay":  "POST",
		"/api/close":        "POST",
	} {
		method := http.MethodPost
		if allow == "POST" {
			method = http.MethodGet
		}
		for _, m := range []string{method, http.MethodPut, http.MethodDelete} {
			rec := do(h, m, path, "")
			e := decode[adminjson.ErrorResponse](t, rec, http.StatusMethodNotAllowed)
			assert.Equal(t, "method_not_allowed", e.Error, "%s %s", m, path)
			assert.Equal(t, allow, rec.Header().Get("Allow"), "%s %s", m, path)
		}
	}
	e := decode[adminjson.ErrorResponse](t, do(h, http.MethodGet, "/api/nope", ""), http.StatusNotFound)
	assert.Contains(t, e.Message, "no endpoint api/nope")
	rec := do(h, http.MethodGet, "/nope", "")
	assert.Equal(t, http.StatusNotFound, rec.Code)
	assert.Contains(t, rec.Header().Get("Content-Type"), "text/html")
	assert.Contains(t, rec.Body.String(), "There is no page nope here.")
}

// failing is a store whose every call fails.
type failing struct{}

var errDown = errors.New(`pgstore: list: failed to connect to host=10.0.0.7 user=svc_webhooks database=inbox: dial error`)

func (failing) Get(context.Context, webhooks.InboxKey) (ops.Detail, error) {
	return ops.Detail{}, errDown
}
func (failing) List(context.Context, ops.Query) (ops.Page, error) { return ops.Page{}, errDown }
func (failing) Replay(context.Context, ops.ReplayRequest) (ops.ReplayResult, error) {
	return ops.ReplayResult{}, errDown
}
func (failing) CloseDeadLetter(context.Context, ops.CloseRequest) error { return errDown }
func (failing) Stats(context.Context, ops.StatsRequest) (ops.Stats, error) {
	return ops.Stats{}, errDown
}

// TestStoreFailure: a store's failure is answered 500 with a generic
// message and a reference, never the store's own text (it may name hosts,
// users, schemas or SQL); the log line has the error and the same
// reference.
func TestStoreFailure(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	h, err := admin.NewHandler(failing{}, admin.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))), admin.WithActor(func(*http.Request) string { return "alice" }))
	require.NoError(t, err)
	refs := map[string]bool{}
	for _, rec := range []*httptest.ResponseRecorder{
		do(h, http.MethodGet, "/api/stats", ""),
		do(h, http.MethodGet, "/api/dead-letters", ""),
		do(h, http.MethodGet, "/api/item?provider=a&event_id=b", ""),
		post(h, "/api/replay", `{"provider":"a","event_id":"b","reason":"r"}`),
		post(h, "/api/bulk-replay", `{"filter":{},"limit":1,"reason":"r"}`),
		post(h, "/api/close", `{"provider":"a","event_id":"b","reason":"r"}`),
	} {
		e := decode[adminjson.ErrorResponse](t, rec, http.StatusInternalServerError)
		assert.Equal(t, "internal", e.Error)
		assert.NotContains(t, rec.Body.String(), "10.0.0.7", "the store's error text is not answered")
		assert.NotContains(t, rec.Body.String(), "svc_webhooks")
		m := refPattern.FindStringSubmatch(e.Message)
		require.NotNil(t, m, "the message gives a reference to the log line: %q", e.Message)
		refs[m[1]] = true
		assert.Contains(t, logs.String(), `"ref":"`+m[1]+`"`, "the log line has the reference")
	}
	assert.Len(t, refs, 6, "each failure has a reference of its own")
	assert.Contains(t, logs.String(), "admin: the store failed")
	assert.Contains(t, logs.String(), "svc_webhooks", "the log line has the error")
	for _, path := range []string{"/", "/item?provider=a&event_id=b"} {
		page := do(h, http.MethodGet, path, "")
		assert.Equal(t, http.StatusInternalServerError, page.Code)
		assert.NotContains(t, page.Body.String(), "10.0.0.7", path)
		m := refPattern.FindStringSubmatch(page.Body.String())
		require.NotNil(t, m, "%s: the page gives a reference: %s", path, page.Body)
		assert.Contains(t, logs.String(), `"ref":"`+m[1]+`"`)
	}
}

// refPattern finds the reference of a 500 answer.
var refPattern = regexp.MustCompile(`reference ([0-9a-f]{16})`)

// TestHTMLAnswersDenyFraming: every HTML answer, error pages included,
// forbids framing (clickjacking) with X-Frame-Options and the CSP's
// frame-ancestors.
func TestHTMLAnswersDenyFraming(t *testing.T) {
	t.Parallel()
	s, _ := fixture(t)
	h := newHandler(t, s)
	down, err := admin.NewHandler(failing{}, admin.WithLogger(discard))
	require.NoError(t, err)
	for _, tc := range []struct {
		h      http.Handler
		target string
		status int
	}{
		{h, "/", http.StatusOK},
		{h, "/item?provider=stripe&event_id=evt_1", http.StatusOK},
		{h, "/nope", http.StatusNotFound},
		{h, "/item?provider=stripe&event_id=missing", http.StatusNotFound},
		{h, "/?limit=0", http.StatusBadRequest},
		{down, "/", http.StatusInternalServerError},
	} {
		rec := do(tc.h, http.MethodGet, tc.target, "")
		assert.Equal(t, tc.status, rec.Code, tc.target)
		assert.Contains(t, rec.Header().Get("Content-Type"), "text/html", tc.target)
		assert.Equal(t, "DENY", rec.Header().Get("X-Frame-Options"), tc.target)
		assert.Contains(t, rec.Header().Get("Content-Security-Policy"), "frame-ancestors 'none'", tc.target)
	}
}
