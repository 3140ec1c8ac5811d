package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/adminjson"
	"github.com/hookinbox/webhooks/memstore"
	"github.com/hookinbox/webhooks/ops"
)

// runOn runs an operators' subcommand's body on store, in process, as run
// does after connecting to PostgreSQL: the subcommands work on any
// ops.Store, so memstore, which keeps fan-out and ordering keys, stands in
// for pgstore here.
func runOn(t *testing.T, store ops.Store, now time.Time, args ...string) (string, string, int) {
	t.Helper()
	var spec opsSpec
	for _, s := range []opsSpec{statsCmd, deadLettersCmd, showCmd, replayCmd, closeCmd, pauseCmd, resumeCmd, pausesCmd} {
		if s.name == args[0] {
			spec = s
		}
	}
	require.NotEmpty(t, spec.name, args[0])
	var stdout, stderr bytes.Buffer
	fs, _, body := spec.flags(&stderr)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return stdout.String(), stderr.String(), exitOK
		}
		return stdout.String(), stderr.String(), exitUsage
	}
	err := body(&opsContext{ctx: t.Context(), store: store, schema: "memstore", fs: fs, stdout: &stdout, stderr: &stderr, now: now})
	if err != nil {
		stderr.WriteString(cleanText(err.Error()))
		return stdout.String(), stderr.String(), exitCode(err)
	}
	return stdout.String(), stderr.String(), exitOK
}

// fanOutInbox holds events of two handlers, ledger (ordered by customer)
// and audit: ledger's c1 failed and holds key cus_1 (c2 waits behind it),
// audit's c1 died; ledger's d1 died and d2 ran past it; plain is the
// default handler's dead letter.
func fanOutInbox(t *testing.T, at time.Time) *memstore.Inbox {
	t.Helper()
	ctx := t.Context()
	s := memstore.NewInbox()
	jobs := []webhooks.Job{{Handler: "ledger", Ordered: true}, {Handler: "audit"}}
	enqueue := func(id, key string, at time.Time, jobs []webhooks.Job) {
		t.Helper()
		p := []byte(`{"id":"` + id + `"}`)
		_, err := s.Enqueue(ctx, webhooks.Envelope{Key: webhooks.InboxKey{Provider: "stripe", EventID: id}, EventType: "customer.updated",
			Payload: p, PayloadSHA256: sha256.Sum256(p), ReceivedAt: at, Jobs: jobs, Ordering: webhooks.Ordering{Key: key}})
		require.NoError(t, err)
	}
	settle := func(handler, id string, at time.Time, outcome webhooks.AttemptOutcome) {
		t.Helper()
		leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: at, LeaseDuration: time.Minute, Max: 1, Handler: handler, Worker: "w"})
		require.NoError(t, err)
		require.Len(t, leases, 1)
		require.Equal(t, id, leases[0].Key().EventID)
		st := webhooks.Settlement{Lease: leases[0], Outcome: outcome, Now: at,
			Failure: webhooks.Failure{Class: webhooks.FailurePermanent, Message: handler + " refused " + id}}
		if outcome == webhooks.AttemptRetried {
			st.Failure.Class, st.RetryAt = webhooks.FailureError, at.Add(10*time.Hour)
		}
		require.NoError(t, s.Settle(ctx, st))
	}
	enqueue("c1", "cus_1", at, jobs)
	enqueue("c2", "cus_1", at.Add(time.Minute), jobs)
	settle("ledger", "c1", at.Add(2*time.Minute), webhooks.AttemptRetried)
	settle("audit", "c1", at.Add(2*time.Minute), webhooks.AttemptDeadLettered)
	enqueue("d1", "cus_2", at.Add(3*time.Minute), jobs)
	enqueue("d2", "cus_2", at.Add(4*time.Minute), jobs)
	settle("ledger", "d1", at.Add(5*time.Minute), webhooks.AttemptDeadLettered)
	enqueue("plain", "", at.Add(6*time.Minute), nil)
	settle("", "plain", at.Add(7*time.Minute), webhooks.AttemptDeadLettered)
	return s
}

func TestHandlersInStatsAndLists(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
	s := fanOutInbox(t, at)
	now := at.Add(time.Hour)
	ok := func(args ...string) string {
		t.Helper()
		out, errOut, code := runOn(t, s, now, args...)
		require.Equal(t, 0, code, "%v: %s%s", args, out, errOut)
		return out
	}
	out := ok("stats")
	assert.Regexp(t, `(?m)^waiting\s+1$`, out)
	assert.Regexp(t, `(?m)^HANDLER\s+PENDING\s+WAITING\s+LEASED\s+DEAD\s+CLOSED\s+DUE\s+OLDEST DUE\s+RETRYING$`, out)
	assert.Regexp(t, `(?m)^ledger\s+2\s+1\s+0\s+1\s+0\s+1\s+55m0s ago\s+1$`, out, "c1 retrying, d2 due; c2 waiting; d1 dead")
	assert.Regexp(t, `(?m)^\(default\)\s+0\s+0\s+0\s+1\s+`, out)
	assert.Regexp(t, `(?m)^1\s+audit\s+stripe\s+customer.updated$`, out, "dead letters by handler")
	assert.Regexp(t, `(?m)^cus_1\s+ledger\s+stripe\s+\(none\)\s+2\s+c1\s+1\s+c2\s+59m0s\s+error: ledger refused c1$`, out, "the held key")
	var st adminjson.Stats
	require.NoError(t, json.Unmarshal([]byte(ok("stats", "-json")), &st))
	require.Len(t, st.HeldKeys, 1)
	assert.Equal(t, "cus_1", st.HeldKeys[0].Key)

	out = ok("dead-letters")
	assert.Regexp(t, `(?m)^DIED\s+HANDLER\s+PROVIDER\s+TENANT\s+EVENT ID`, out)
	assert.Regexp(t, `(?m)^\S+ \S+\s+audit\s+stripe\s+\(none\)\s+c1\s`, out)
	assert.Regexp(t, `(?m)^\S+ \S+\s+\(default\)\s+stripe\s+\(none\)\s+plain\s`, out)
	out = ok("dead-letters", "-handler", "ledger")
	assert.Contains(t, out, " d1 ")
	assert.NotContains(t, out, " c1 ")
	assert.NotContains(t, out, "plain")
	out = ok("dead-letters", "-handler", "")
	assert.Contains(t, out, "plain")
	assert.NotContains(t, out, " d1 ", "-handler '' is the default handler")
	_, errOut, code := runOn(t, s, now, "dead-letters", "-handler", "Ledger")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `-handler: webhooks: handler name "Ledger"`)

	out = ok("show", "-provider", "stripe", "-event-id", "d2")
	assert.Contains(t, out, "\nJOBS\n")
	assert.Contains(t, out, "\nJOB ledger\n")
	assert.Contains(t, out, "\nJOB audit\n")
	assert.Regexp(t, `(?m)^overtook\s+ran past the dead letter d1 of its key$`, out)
	assert.Regexp(t, `(?m)^ordering key\s+cus_2$`, out)
	out = ok("show", "-provider", "stripe", "-event-id", "plain")
	assert.NotContains(t, out, "JOBS", "the default handler's one job is the item itself")
}

func TestReplayAndCloseByHandler(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC)
	s := fanOutInbox(t, at)
	now := at.Add(time.Hour)
	run := func(args ...string) (string, string, int) { t.Helper(); return runOn(t, s, now, args...) }
	state := func(id, handler string) webhooks.State {
		t.Helper()
		d, err := s.Get(t.Context(), webhooks.InboxKey{Provider: "stripe", EventID: id})
		require.NoError(t, err)
		for _, j := range d.Jobs {
			if j.Handler == handler {
				return j.State
			}
		}
		return "none"
	}
	who := []string{"-actor", "alice", "-reason", "r"}
	out, errOut, code := run(append([]string{"replay", "-provider", "stripe", "-event-id", "c1"}, who...)...)
	assert.Equal(t, exitNotFound, code, out)
	assert.Contains(t, errOut, "no item with provider stripe, tenant (none), event c1", "c1 has no default handler's job")
	out, errOut, code = run(append([]string{"replay", "-provider", "stripe", "-event-id", "c1", "-handler", "audit"}, who...)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "replayed provider stripe, tenant (none), event c1, handler audit, due ")
	assert.Equal(t, webhooks.StatePending, state("c1", "audit"))
	assert.Equal(t, webhooks.StatePending, state("c1", "ledger"), "left as it was")

	_, errOut, code = run(append([]string{"close", "-provider", "stripe", "-event-id", "d1", "-handler", "audit"}, who...)...)
	assert.Equal(t, exitRefused, code)
	assert.Contains(t, errOut, "event d1, handler audit: only dead letters can be closed")
	out, errOut, code = run(append([]string{"close", "-provider", "stripe", "-event-id", "d1", "-handler", "ledger"}, who...)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "closed provider stripe, tenant (none), event d1, handler ledger at ")
	assert.Equal(t, webhooks.StateClosed, state("d1", "ledger"))

	// A query by handler, and to another handler.
	out, errOut, code = run(append([]string{"replay", "-handler", "", "-dry-run"}, who...)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "would replay 1 dead letter as alice")
	assert.Contains(t, out, "plain")
	out, errOut, code = run(append([]string{"replay", "-handler", "", "-to-handler", "archive", "-to-ordered", "-to-priority", "7"}, who...)...)
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `(?m)^DUE\s+HANDLER\s+PROVIDER\s+TENANT\s+EVENT ID$`, out)
	assert.Regexp(t, `(?m)^\S+ \S+\s+archive\s+stripe\s+\(none\)\s+plain$`, out)
	d, err := s.Get(t.Context(), webhooks.InboxKey{Provider: "stripe", EventID: "plain"})
	require.NoError(t, err)
	require.Len(t, d.Jobs, 2)
	assert.Equal(t, "archive", d.Jobs[1].Handler)
	assert.True(t, d.Jobs[1].Ordered, "-to-ordered")
	assert.Equal(t, 7, d.Jobs[1].Priority, "-to-priority")
	out, errOut, code = run("show", "-provider", "stripe", "-event-id", "plain")
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `(?m)^priority\s+7$`, out, "show prints the job's priority")
	assert.Equal(t, webhooks.StateDead, d.Jobs[0].State, "the default handler's job is left dead")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", "-to-handler", "archive"}, "-to-handler archive needs -handler"},
		{[]string{"replay", "-to-ordered"}, "-to-ordered needs -to-handler"},
		{[]string{"replay", "-to-priority", "2"}, "-to-priority needs -to-handler"},
		{[]string{"replay", "-handler", "audit", "-to-handler", "x", "-to-priority", "-1"}, "-to-priority -1: give a priority from 0 to 1000"},
		{[]string{"replay", "-handler", "audit", "-to-handler", "x", "-keep-attempts"}, "-to-handler and -keep-attempts"},
		{[]string{"replay", "-to-handler", "X"}, `-to-handler: webhooks: handler name "X"`},
		{[]string{"replay", "-provider", "stripe", "-event-id", "c1", "-handler", "audit", "-to-handler", "x"}, "-handler and -to-handler"},
		{[]string{"close", "-provider", "stripe", "-event-id", "c1", "-handler", "_x"}, `-handler: webhooks: handler name "_x"`},
	} {
		out, errOut, code := run(append(tc.args, who...)...)
		assert.Equal(t, exitUsage, code, "%v: %s%s", tc.args, out, errOut)
		assert.Contains(t, errOut, tc.want, "%v", tc.args)
	}
}
