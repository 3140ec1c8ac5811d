package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/memstore"
)

// TestPauseResume: pause stops the acquisition of the handler's jobs,
// pauses lists it with who and why, resume lets them run, a second resume
// exits 4 (refused), and the pause and its end stay in the trail.
func TestPauseResume(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := memstore.NewInbox()
	_, err := s.Enqueue(t.Context(), webhooks.Envelope{Key: webhooks.InboxKey{Provider: "stripe", EventID: "e1"}, EventType: "invoice.paid",
		Payload: []byte(`{}`), ReceivedAt: now, Jobs: []webhooks.Job{{Handler: "ledger"}}})
	require.NoError(t, err)
	acquire := func(at time.Time) int {
		leases, err := s.Acquire(t.Context(), webhooks.AcquireRequest{Now: at, LeaseDuration: time.Minute, Max: 10, Handler: "ledger"})
		require.NoError(t, err)
		return len(leases)
	}
	out, errOut, code := runOn(t, s, now, "pause", "-handler", "ledger")
	require.Equal(t, exitUsage, code, "pause without -actor and -reason: %s%s", out, errOut)

	out, errOut, code = runOn(t, s, now, "pause", "-handler", "ledger", "-actor", "alice", "-reason", "the ledger API is in maintenance", "-ticket", "OPS-7")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "paused handler ledger at 2026-03-01 12:00:00Z\n", out)
	assert.Zero(t, acquire(now.Add(time.Minute)), "ledger is paused")
	out, errOut, code = runOn(t, s, now, "stats")
	require.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, `PAUSED\s+SCOPE\s+CAUSE\s+SINCE\s+BY\s+UNTIL\s+REASON\nledger\s+every job\s+operator\s+2026-03-01 12:00:00Z\s+alice\s+-\s+the ledger API`, out)

	out, errOut, code = runOn(t, s, now, "pauses")
	require.Equal(t, exitOK, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2, out)
	assert.Regexp(t, `^ledger\s+every job\s+operator\s+2026-03-01 12:00:00Z\s+-\s+alice\s+the ledger API is in maintenance \(ticket OPS-7\)\s+-`, lines[1])

	out, errOut, code = runOn(t, s, now.Add(time.Hour), "resume", "-handler", "ledger", "-actor", "bob", "-reason", "maintenance over")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "resumed handler ledger at 2026-03-01 13:00:00Z\n", out)
	assert.Equal(t, 1, acquire(now.Add(time.Hour)), "ledger runs again")

	_, errOut, code = runOn(t, s, now.Add(time.Hour), "resume", "-handler", "ledger", "-actor", "bob", "-reason", "again")
	assert.Equal(t, exitRefused, code, "resuming a handler that is not paused")
	assert.Contains(t, errOut, "handler ledger is not paused")

	out, errOut, code = runOn(t, s, now, "pauses", "-json")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `"EndedBy": "bob"`)
	assert.Contains(t, out, `"EndReason": "maintenance over"`)
}

// TestScopedPauseResume: pause with -provider, -tenant and -types holds
// only those jobs, of one handler or of every handler ('*'); stats counts
// the held jobs and shows the scope; resume of another scope exits 4,
// resume of the same scope gives them back; a scope the store refuses is
// a usage error.
func TestScopedPauseResume(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := memstore.NewInbox()
	for i, k := range []webhooks.InboxKey{{Provider: "stripe", Tenant: "acct_1", EventID: "e1"}, {Provider: "stripe", Tenant: "acct_2", EventID: "e2"}} {
		_, err := s.Enqueue(t.Context(), webhooks.Envelope{Key: k, EventType: "invoice.paid", Payload: []byte(`{}`),
			ReceivedAt: now.Add(time.Duration(i) * time.Second), Jobs: []webhooks.Job{{Handler: "ledger"}}})
		require.NoError(t, err)
	}
	leased := func(at time.Time) []string {
		t.Helper()
		leases, err := s.Acquire(t.Context(), webhooks.AcquireRequest{Now: at, LeaseDuration: time.Minute, Max: 10, Handler: "ledger"})
		require.NoError(t, err)
		var ids []string
		for _, l := range leases {
			ids = append(ids, l.Key().EventID)
		}
		return ids
	}
	for _, args := range [][]string{{"-tenant", "acct_1"}, {"-types", "*"}, {"-types", "in*voice"}, {"-handler", "Ledger*"}} {
		_, errOut, code := runOn(t, s, now, append([]string{"pause", "-actor", "alice", "-reason", "r"}, args...)...)
		assert.Equal(t, exitUsage, code, "pause %v: %s", args, errOut)
	}
	out, errOut, code := runOn(t, s, now, "pause", "-handler", "*", "-provider", "stripe", "-tenant", "acct_1", "-types", "invoice.*",
		"-actor", "alice", "-reason", "acct_1 is migrating")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "paused handler (every handler) (stripe/acct_1 invoice.*) at 2026-03-01 12:00:00Z\n", out)
	out, errOut, code = runOn(t, s, now, "stats")
	require.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, `held by a pause\s+1\n`, out)
	assert.Regexp(t, `\(every handler\)\s+stripe/acct_1 invoice\.\*\s+operator`, out)
	assert.Equal(t, []string{"e2"}, leased(now.Add(time.Minute)), "acct_1's job is held")

	_, errOut, code = runOn(t, s, now, "resume", "-handler", "*", "-provider", "stripe", "-actor", "bob", "-reason", "done")
	assert.Equal(t, exitRefused, code, "resume of another scope: %s", errOut)
	assert.Contains(t, errOut, "handler (every handler) (stripe) is not paused")
	out, errOut, code = runOn(t, s, now, "resume", "-handler", "*", "-provider", "stripe", "-tenant", "acct_1", "-types", "invoice.*",
		"-actor", "bob", "-reason", "done")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "resumed handler (every handler) (stripe/acct_1 invoice.*) at 2026-03-01 12:00:00Z\n", out)
	assert.Equal(t, []string{"e1"}, leased(now.Add(time.Minute)), "acct_1's job runs again")
}

// TestPauseOnPostgres runs pause, pauses and resume through the binary on
// a pgstore schema.
func TestPauseOnPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Parallel()
	bin := buildBinary(t)
	schema := pgtest.NewSchemaAt(t, dsn)
	db := []string{"DATABASE_URL=" + dsn}
	_, errOut, code := runBinary(t, bin, db, "migrate", "-schema", schema)
	require.Equal(t, 0, code, errOut)
	out, errOut, code := runBinary(t, bin, db, "pause", "-schema", schema, "-handler", "audit", "-actor", "alice", "-reason", "noisy")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "paused handler audit")
	out, errOut, code = runBinary(t, bin, db, "pauses", "-schema", schema)
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `audit\s+every job\s+operator\s+\S+ \S+\s+-\s+alice\s+noisy\s+-`, out)
	_, errOut, code = runBinary(t, bin, db, "resume", "-schema", schema, "-handler", "audit", "-actor", "bob", "-reason", "quiet")
	require.Equal(t, 0, code, errOut)
	_, _, code = runBinary(t, bin, db, "resume", "-schema", schema, "-handler", "audit", "-actor", "bob", "-reason", "quiet")
	assert.Equal(t, exitRefused, code)
	out, errOut, code = runBinary(t, bin, db, "pauses", "-schema", schema)
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `audit\s+every job\s+operator.*bob\s+quiet`, out)

	out, errOut, code = runBinary(t, bin, db, "pause", "-schema", schema, "-handler", "*", "-provider", "stripe", "-types", "invoice.*",
		"-actor", "alice", "-reason", "stripe replays")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "paused handler (every handler) (stripe invoice.*)")
	out, errOut, code = runBinary(t, bin, db, "pauses", "-schema", schema, "-ended", "0")
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `\(every handler\)\s+stripe invoice\.\*\s+operator\s+.*alice\s+stripe replays`, out)
	_, errOut, code = runBinary(t, bin, db, "resume", "-schema", schema, "-handler", "*", "-provider", "stripe", "-types", "invoice.*",
		"-actor", "bob", "-reason", "done")
	require.Equal(t, 0, code, errOut)
}
