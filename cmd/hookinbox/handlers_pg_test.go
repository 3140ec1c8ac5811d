package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/ops"
)

// TestReplayByHandlerOnPostgres runs replay and close with -handler and
// -to-handler through the built binary on PostgreSQL (the in-process
// tests of named handlers run on memstore): events c1 and c2 each have a
// dead letter of two handlers, ledger and audit; plain has the default
// handler's. Replaying c1's audit job replays it alone: c1's ledger job,
// dead too, is stored exactly as it was (state, attempts, history, audit
// trail). A bulk replay by -handler ledger replays ledger's dead letters
// only; close -handler audit closes c2's audit job only; -to-handler
// makes plain a job of another handler and leaves its default job dead.
func TestReplayByHandlerOnPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Parallel()
	bin := buildBinary(t)
	schema := pgtest.NewSchemaAt(t, dsn)
	db := []string{"DATABASE_URL=" + dsn}
	who := []string{"-actor", "alice", "-reason", "r", "-schema", schema}
	ok := func(args ...string) string {
		t.Helper()
		out, errOut, code := runBinary(t, bin, db, append(args, who...)...)
		require.Equal(t, 0, code, "%v: %s%s", args, out, errOut)
		return out
	}
	_, errOut, code := runBinary(t, bin, db, "migrate", "-schema", schema)
	require.Equal(t, 0, code, errOut)

	s := newSeeder(t, dsn, schema)
	ctx := t.Context()
	base := time.Now().Add(-3 * time.Hour).UTC().Truncate(time.Second)
	c1 := webhooks.InboxKey{Provider: "stripe", EventID: "c1"}
	c2 := webhooks.InboxKey{Provider: "stripe", EventID: "c2"}
	plain := webhooks.InboxKey{Provider: "stripe", EventID: "plain"}
	two := []webhooks.Job{{Handler: "audit"}, {Handler: "ledger"}}
	for i, k := range []webhooks.InboxKey{c1, c2, plain} {
		env := s.envelope(k, "customer.updated", `{"id":"`+k.EventID+`"}`, base.Add(time.Duration(i)*time.Minute))
		if k != plain {
			env.Jobs = two
		}
		res, err := s.store.Enqueue(ctx, env)
		require.NoError(t, err)
		require.Equal(t, webhooks.EnqueueNew, res.Outcome)
	}
	for _, h := range []string{"audit", "ledger", ""} {
		leases, err := s.store.Acquire(ctx, webhooks.AcquireRequest{Now: base.Add(time.Hour), LeaseDuration: time.Minute, Max: 10, Handler: h, Worker: "seed"})
		require.NoError(t, err)
		for _, l := range leases {
			require.NoError(t, s.store.Settle(ctx, webhooks.Settlement{Lease: l, Outcome: webhooks.AttemptDeadLettered, Now: base.Add(time.Hour),
				Failure: webhooks.Failure{Class: webhooks.FailurePermanent, Message: h + " refused " + l.Key().EventID}}))
		}
	}
	jobs := func(k webhooks.InboxKey) map[string]ops.Job {
		t.Helper()
		d, err := s.store.Get(ctx, k)
		require.NoError(t, err)
		m := map[string]ops.Job{}
		for _, j := range d.Jobs {
			m[j.Handler] = j
		}
		return m
	}
	before := jobs(c1)
	require.Equal(t, webhooks.StateDead, before["ledger"].State)
	require.Equal(t, webhooks.StateDead, before["audit"].State)

	out := ok("replay", "-provider", "stripe", "-event-id", "c1", "-handler", "audit")
	assert.Contains(t, out, "replayed provider stripe, tenant (none), event c1, handler audit, due ")
	after := jobs(c1)
	assert.Equal(t, webhooks.StatePending, after["audit"].State)
	assert.Zero(t, after["audit"].Attempts, "a replay starts a fresh budget")
	require.Len(t, after["audit"].Audit, 1)
	assert.Equal(t, "alice", after["audit"].Audit[0].Actor)
	assert.Equal(t, before["ledger"], after["ledger"], "c1's ledger job is left exactly as it was")
	assert.Equal(t, webhooks.StateDead, jobs(c2)["audit"].State)

	// A bulk replay of ledger's dead letters: c1's and c2's ledger jobs,
	// not c2's audit job nor plain's default job.
	out = ok("replay", "-handler", "ledger")
	assert.Regexp(t, `(?m)^\S+ \S+\s+ledger\s+stripe\s+\(none\)\s+c1$`, out)
	assert.Regexp(t, `(?m)^\S+ \S+\s+ledger\s+stripe\s+\(none\)\s+c2$`, out)
	assert.NotContains(t, out, "plain")
	c2Jobs := jobs(c2)
	assert.Equal(t, webhooks.StatePending, c2Jobs["ledger"].State)
	assert.Equal(t, webhooks.StateDead, c2Jobs["audit"].State, "audit's dead letter is another handler's")
	assert.Empty(t, c2Jobs["audit"].Audit)
	assert.Equal(t, webhooks.StatePending, jobs(c1)["ledger"].State)
	assert.Equal(t, webhooks.StateDead, jobs(plain)[""].State)

	out = ok("close", "-provider", "stripe", "-event-id", "c2", "-handler", "audit")
	assert.Contains(t, out, "closed provider stripe, tenant (none), event c2, handler audit at ")
	c2Jobs = jobs(c2)
	assert.Equal(t, webhooks.StateClosed, c2Jobs["audit"].State)
	assert.Equal(t, webhooks.StatePending, c2Jobs["ledger"].State)

	out = ok("replay", "-handler", "", "-to-handler", "archive")
	assert.Regexp(t, `(?m)^\S+ \S+\s+archive\s+stripe\s+\(none\)\s+plain$`, out)
	plainJobs := jobs(plain)
	require.Len(t, plainJobs, 2)
	assert.Equal(t, webhooks.StatePending, plainJobs["archive"].State)
	assert.Equal(t, webhooks.StateDead, plainJobs[""].State, "the default handler's job is left dead")
	assert.Len(t, jobs(c1), 2, "-to-handler took only the default handler's dead letters")
}
