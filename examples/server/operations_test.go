package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks/internal/adminjson"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
)

// TestPostgresOperatorWalkthrough is docs/operations.md's walk-through:
// the server on pgstore with -fail-types, -admin-token and -metrics. A
// dead letter is found through the admin API with its attempt and error,
// shown on the admin page, replayed with an audited reason (it runs again),
// another is closed, the command shows the item and replays it too, and
// /metrics counts what was received and dead-lettered.
func TestPostgresOperatorWalkthrough(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Parallel()
	const secret, token = "demo-secret", "tok-walkthrough"
	schema := pgtest.NewSchemaAt(t, dsn)
	s := start(t, map[string]string{"DEMO_WEBHOOK_SECRET": secret},
		"-dsn", dsn, "-schema", schema, "-fail-types", "order.refund", "-admin-token", token, "-metrics")
	auth := []string{"Authorization", "Bearer " + token}
	asJSON := append(auth, "Content-Type", "application/json")

	for _, d := range []struct{ id, typ string }{{"ok-1", "order.created"}, {"refund-1", "order.refund"}, {"refund-2", "order.refund"}} {
		code, _ := s.post(t, "/webhooks/demo", `{"id":"`+d.id+`"}`, demoHeaders(secret, d.id, d.typ, `{"id":"`+d.id+`"}`, time.Now()))
		require.Equal(t, http.StatusAccepted, code, d.id)
	}

	// item reads one item through the admin API.
	item := func(id string) adminjson.Detail {
		t.Helper()
		code, _, body := s.get(t, http.MethodGet, "/admin/api/item?provider=demo&event_id="+id, "", auth...)
		require.Equal(t, http.StatusOK, code, body)
		var d adminjson.Detail
		require.NoError(t, json.Unmarshal([]byte(body), &d))
		return d
	}
	// waitUntil polls the admin API, within a bound, until done holds.
	waitUntil := func(what string, done func() bool) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); !done(); time.Sleep(20 * time.Millisecond) {
			require.True(t, time.Now().Before(deadline), "within 15s: %s", what)
		}
	}

	waitUntil("ok-1 succeeded", func() bool { return item("ok-1").State == "succeeded" })

	// The dead letters, listed by the API with their attempt and error.
	var page adminjson.Page
	waitUntil("both refunds are listed as dead letters", func() bool {
		code, _, body := s.get(t, http.MethodGet, "/admin/api/dead-letters?provider=demo&event_type=order.refund", "", auth...)
		require.Equal(t, http.StatusOK, code, body)
		page = adminjson.Page{}
		require.NoError(t, json.Unmarshal([]byte(body), &page))
		return len(page.Items) == 2
	})
	for _, it := range page.Items {
		assert.Equal(t, "dead", it.State)
		assert.Equal(t, 1, it.Attempts)
		require.NotNil(t, it.LastError, it.EventID)
		assert.Equal(t, "permanent", it.LastError.Class)
		assert.Contains(t, it.LastError.Message, `demo handler rejects event type "order.refund" (-fail-types)`)
	}
	d := item("refund-1")
	require.Len(t, d.History, 1)
	assert.Equal(t, "dead_lettered", d.History[0].Outcome)
	assert.Equal(t, "permanent", d.History[0].ErrorClass)
	assert.Contains(t, d.History[0].Error, "(-fail-types)")

	// The admin page shows it with its attempt and error.
	code, hdr, body := s.get(t, http.MethodGet, "/admin/item?provider=demo&event_id=refund-1", "", auth...)
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, "text/html; charset=utf-8", hdr.Get("Content-Type"))
	assert.Contains(t, body, `<span class="state state-dead" id="state">dead</span>`)
	assert.Contains(t, body, `<span class="outcome outcome-dead_lettered">dead_lettered</span>`)
	assert.Contains(t, body, "demo handler rejects event type &#34;order.refund&#34; (-fail-types)")

	// Replayed through the API: audited as the token's actor, it runs again.
	code, _, body = s.get(t, http.MethodPost, "/admin/api/replay", `{"provider":"demo","event_id":"refund-1","handler":"audit","reason":"refunds fixed","ticket":"INC-9"}`, asJSON...)
	require.Equal(t, http.StatusOK, code, body)
	var rr adminjson.ReplayResult
	require.NoError(t, json.Unmarshal([]byte(body), &rr))
	assert.Equal(t, "admin-token", rr.Actor)
	assert.Equal(t, 1, rr.Count)
	waitUntil("the replayed refund-1 ran again", func() bool {
		d = item("refund-1")
		return len(d.History) == 2 && d.State == "dead"
	})
	require.Len(t, d.Audit, 1)
	assert.Equal(t, adminjson.Audit{Action: "replay", At: d.Audit[0].At, Actor: "admin-token", Reason: "refunds fixed", Ticket: "INC-9"}, d.Audit[0])

	// The other one closed through the API.
	code, _, body = s.get(t, http.MethodPost, "/admin/api/close", `{"provider":"demo","event_id":"refund-2","handler":"audit","reason":"test order"}`, asJSON...)
	require.Equal(t, http.StatusOK, code, body)
	var closed adminjson.CloseResult
	require.NoError(t, json.Unmarshal([]byte(body), &closed))
	assert.Equal(t, adminjson.CloseResult{Key: adminjson.Key{Provider: "demo", EventID: "refund-2"}, Handler: "audit", State: "closed", Actor: "admin-token"}, closed)
	d = item("refund-2")
	assert.Equal(t, "closed", d.State)
	require.Len(t, d.Audit, 1)
	assert.Equal(t, "close", d.Audit[0].Action)
	assert.Equal(t, "test order", d.Audit[0].Reason)

	// The command on the same schema: show, replay (it runs a third time),
	// and the closed one among the closed dead letters.
	cli := buildCLI(t)
	db := []string{"-dsn", dsn, "-schema", schema}
	out := runCLI(t, cli, append([]string{"show", "-provider", "demo", "-event-id", "refund-1"}, db...)...)
	assert.Regexp(t, `(?m)^state\s+dead$`, out)
	assert.Regexp(t, `(?m)^1\s+dead_lettered\s+.*permanent: demo handler rejects event type "order.refund" \(-fail-types\)$`, out)
	assert.Regexp(t, `(?m)^2\s+dead_lettered\s+.*permanent: demo handler rejects event type "order.refund" \(-fail-types\)$`, out)
	assert.Regexp(t, `(?m)^\S+ \S+\s+replay\s+admin-token\s+refunds fixed\s+INC-9$`, out)
	out = runCLI(t, cli, append([]string{"replay", "-provider", "demo", "-event-id", "refund-1", "-handler", "audit", "-actor", "alice", "-reason", "second try"}, db...)...)
	assert.Contains(t, out, "replayed provider demo, tenant (none), event refund-1")
	waitUntil("the refund-1 the command replayed ran again", func() bool {
		d = item("refund-1")
		return len(d.History) == 3 && d.State == "dead"
	})
	require.Len(t, d.Audit, 2)
	assert.Equal(t, "alice", d.Audit[1].Actor)
	assert.Contains(t, runCLI(t, cli, append([]string{"dead-letters", "-closed"}, db...)...), "refund-2")

	// /metrics: three received, four attempts of audit that dead-lettered
	// (refund-1 three times, refund-2 once), the order handled by both
	// handlers; ledger handled the refunds too.
	code, _, body = s.get(t, http.MethodGet, "/metrics", "")
	require.Equal(t, http.StatusOK, code)
	assert.Regexp(t, `(?m)^webhooks_received_total\{provider="demo",status="accepted"\} 3$`, body)
	assert.Regexp(t, `(?m)^webhooks_dead_lettered_total\{error_class="permanent",event_type="order.refund",handler="audit",provider="demo"\} 4$`, body)
	assert.Regexp(t, `(?m)^webhooks_handler_duration_seconds_count\{event_type="order.created",handler="audit",outcome="succeeded",provider="demo"\} 1$`, body)
	assert.Regexp(t, `(?m)^webhooks_handler_duration_seconds_count\{event_type="order.created",handler="ledger",outcome="succeeded",provider="demo"\} 1$`, body)
	assert.Regexp(t, `(?m)^webhooks_handler_duration_seconds_count\{event_type="order.refund",handler="ledger",outcome="succeeded",provider="demo"\} 2$`, body)
	assert.Regexp(t, `(?m)^webhooks_items\{state="closed"\} 1$`, body)
	assert.Regexp(t, `(?m)^webhooks_dead_letters\{event_type="order.refund",handler="audit",provider="demo"\} 1$`, body)
}

// buildCLI builds cmd/hookinbox into a temporary directory.
func buildCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hookinbox")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/hookinbox/webhooks/cmd/hookinbox").CombinedOutput()
	require.NoError(t, err, "go build ./cmd/hookinbox: %s", out)
	return bin
}

// runCLI runs the command and returns its standard output, failing the
// test unless it exits 0.
func runCLI(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL=") // only -dsn
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "hookinbox %s: %s%s", args[0], stdout.String(), stderr.String())
	return stdout.String()
}
