package main

import (
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/adminjson"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/pgstore"
)

// seeder makes items in the schema through pgstore, as a server would.
type seeder struct {
	t     *testing.T
	store *pgstore.Store
}

func newSeeder(t *testing.T, dsn, schema string) *seeder {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), dsn)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	store, err := pgstore.New(pool, pgstore.WithSchema(schema))
	require.NoError(t, err)
	return &seeder{t: t, store: store}
}

func (s *seeder) envelope(k webhooks.InboxKey, eventType, payload string, at time.Time) webhooks.Envelope {
	return webhooks.Envelope{
		Key: k, EventType: eventType, Payload: []byte(payload), PayloadSHA256: sha256.Sum256([]byte(payload)),
		Headers: http.Header{"X-Marker": {"HEADER-" + k.EventID}}, KeyID: "primary", ReceivedAt: at,
	}
}

// settle enqueues an item received at at and settles its one attempt at
// at+1s with outcome. No other item may be due then.
func (s *seeder) settle(k webhooks.InboxKey, eventType string, at time.Time, outcome webhooks.AttemptOutcome) {
	t, ctx := s.t, s.t.Context()
	t.Helper()
	_, err := s.store.Enqueue(ctx, s.envelope(k, eventType, `{"marker":"PAYLOAD-`+k.EventID+`"}`, at))
	require.NoError(t, err)
	leases, err := s.store.Acquire(ctx, webhooks.AcquireRequest{Now: at, LeaseDuration: time.Minute, Max: 1, Worker: "seed-worker", Version: "v7"})
	require.NoError(t, err)
	require.Len(t, leases, 1)
	st := webhooks.Settlement{Lease: leases[0], Outcome: outcome, Now: at.Add(time.Second)}
	if outcome == webhooks.AttemptDeadLettered {
		st.Failure = webhooks.Failure{Class: webhooks.FailurePermanent, Message: "handler refused " + k.EventID}
	}
	require.NoError(t, s.store.Settle(ctx, st))
}

func (s *seeder) get(k webhooks.InboxKey) webhooks.Item {
	s.t.Helper()
	d, err := s.store.Get(s.t.Context(), k)
	require.NoError(s.t, err)
	return d.Item
}

var nextCursor = regexp.MustCompile(`-after (\S+)`)

// TestOperatorCommands runs every inbox subcommand of the built binary
// against PostgreSQL: migrate, stats, dead-letters, show, replay (one,
// bulk, dry run), close and purge, and their errors.
func TestOperatorCommands(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Parallel()
	bin := buildBinary(t)
	schema := pgtest.NewSchemaAt(t, dsn)
	db := []string{"DATABASE_URL=" + dsn}
	run := func(args ...string) (string, string, int) {
		t.Helper()
		return runBinary(t, bin, db, append(args, "-schema", schema)...)
	}
	ok := func(args ...string) string {
		t.Helper()
		out, errOut, code := run(args...)
		require.Equal(t, 0, code, "%v: %s%s", args, out, errOut)
		return out
	}
	fails := func(code int, want string, args ...string) {
		t.Helper()
		out, errOut, got := run(args...)
		assert.Equal(t, code, got, "%v: %s%s", args, out, errOut)
		assert.Contains(t, errOut, want, "%v", args)
		assert.True(t, strings.HasPrefix(errOut, "hookinbox "+args[0]+": ") || strings.Contains(errOut, "for flag -"), "%v: %s", args, errOut)
	}

	fails(1, "holds no inbox: run hookinbox migrate", "stats")
	assert.Contains(t, ok("migrate"), "applied migration 1, 2, 3")
	assert.Regexp(t, `is up to date \(migration \d+\)`, ok("migrate"))

	s := newSeeder(t, dsn, schema)
	base := time.Now().Add(-3 * time.Hour).UTC().Truncate(time.Second)
	evt1 := webhooks.InboxKey{Provider: "stripe", EventID: "evt_1"}
	evt2 := webhooks.InboxKey{Provider: "stripe", Tenant: "acme", EventID: "evt_2"}
	gh1 := webhooks.InboxKey{Provider: "github", Tenant: "acme", EventID: "gh_1"}
	done := webhooks.InboxKey{Provider: "github", EventID: "done"}
	s.settle(evt1, "invoice.paid", base, webhooks.AttemptDeadLettered)
	s.settle(evt2, "invoice.paid", base.Add(time.Minute), webhooks.AttemptDeadLettered)
	s.settle(gh1, "push", base.Add(2*time.Minute), webhooks.AttemptDeadLettered)
	s.settle(done, "push", base.Add(3*time.Minute), webhooks.AttemptSucceeded)
	res, err := s.store.Enqueue(t.Context(), s.envelope(evt1, "invoice.paid", `{"marker":"QUARANTINED"}`, base.Add(4*time.Minute)))
	require.NoError(t, err)
	require.Equal(t, webhooks.EnqueueConflict, res.Outcome)

	// stats
	out := ok("stats")
	assert.Regexp(t, `(?m)^dead\s+3$`, out)
	assert.Regexp(t, `(?m)^succeeded\s+1$`, out)
	assert.Regexp(t, `(?m)^2\s+stripe\s+invoice.paid$`, out)
	var st adminjson.Stats
	require.NoError(t, json.Unmarshal([]byte(ok("stats", "-json")), &st))
	assert.Equal(t, int64(3), st.States["dead"])

	// dead-letters: all, filters, the empty tenant, paging, JSON.
	out = ok("dead-letters")
	assert.Regexp(t, `(?m)^DIED\s+PROVIDER\s+TENANT\s+EVENT ID\s+TYPE\s+ATTEMPTS\s+LAST ERROR$`, out)
	for _, id := range []string{"evt_1", "evt_2", "gh_1"} {
		assert.Contains(t, out, id)
	}
	assert.Contains(t, out, "permanent: handler refused gh_1")
	assert.NotContains(t, out, "done")
	out = ok("dead-letters", "-provider", "stripe", "-tenant", "")
	assert.Contains(t, out, "evt_1")
	assert.NotContains(t, out, "evt_2", "-tenant '' is the empty tenant")
	out = ok("dead-letters", "-tenant", "acme", "-type", "push")
	assert.Contains(t, out, "gh_1")
	assert.NotContains(t, out, "evt_2")
	assert.Contains(t, ok("dead-letters", "-provider", "nobody"), "no dead letters match")
	var seen []string
	args := []string{"dead-letters", "-limit", "1", "-json"}
	for range 4 {
		var p adminjson.Page
		require.NoError(t, json.Unmarshal([]byte(ok(args...)), &p))
		for _, it := range p.Items {
			seen = append(seen, it.EventID)
		}
		if p.Next == "" {
			break
		}
		args = []string{"dead-letters", "-limit", "1", "-json", "-after", p.Next}
	}
	assert.Equal(t, []string{"gh_1", "evt_2", "evt_1"}, seen, "newest first, a page at a time")
	out = ok("dead-letters", "-limit", "2")
	m := nextCursor.FindStringSubmatch(out)
	require.NotNil(t, m, out)
	assert.Contains(t, ok("dead-letters", "-limit", "2", "-after", m[1]), "evt_1")
	fails(2, `-error-class "nope"`, "dead-letters", "-error-class", "nope")
	fails(2, `-from "yesterday"`, "dead-letters", "-from", "yesterday")
	fails(2, "-limit 0", "dead-letters", "-limit", "0")
	fails(2, "invalid cursor", "dead-letters", "-after", "garbage")

	// show
	out = ok("show", "-provider", "stripe", "-event-id", "evt_1", "-payloads")
	assert.Regexp(t, `(?m)^state\s+dead$`, out)
	assert.Regexp(t, `(?m)^1\s+dead_lettered\s+.*seed-worker\s+v7\s+permanent: handler refused evt_1$`, out)
	assert.Contains(t, out, "QUARANTINED DELIVERIES\n1 deliveries reused the event ID with another payload; 1 kept:")
	assert.Contains(t, out, `{"marker":"QUARANTINED"}`)
	assert.Contains(t, out, `{"marker":"PAYLOAD-evt_1"}`)
	assert.Contains(t, out, "X-Marker: HEADER-evt_1")
	out = ok("show", "-provider", "stripe", "-event-id", "evt_1")
	assert.NotContains(t, out, "PAYLOAD-evt_1")
	assert.NotContains(t, out, "QUARANTINED\"")
	var d adminjson.Detail
	require.NoError(t, json.Unmarshal([]byte(ok("show", "-provider", "stripe", "-tenant", "acme", "-event-id", "evt_2", "-json")), &d))
	assert.Equal(t, "evt_2", d.EventID)
	require.Len(t, d.History, 1)
	fails(3, `no item with provider stripe, tenant (none), event evt_2 in schema "`+schema+`"`, "show", "-provider", "stripe", "-event-id", "evt_2")
	fails(2, "-provider and -event-id are required", "show", "-provider", "stripe")

	// replay one
	fails(2, "-actor and -reason are required", "replay", "-provider", "stripe", "-event-id", "evt_1")
	fails(2, "-event-id replays one item: -type, -limit select the items of a query", "replay", "-provider", "stripe", "-event-id", "evt_1", "-type", "x", "-limit", "3", "-actor", "a", "-reason", "r")
	out = ok("replay", "-provider", "stripe", "-event-id", "evt_1", "-dry-run", "-actor", "alice", "-reason", "check")
	assert.Contains(t, out, "dry run, nothing changed: would replay provider stripe, tenant (none), event evt_1, due ")
	assert.Equal(t, webhooks.StateDead, s.get(evt1).State)
	out = ok("replay", "-provider", "stripe", "-event-id", "evt_1", "-actor", "alice", "-reason", "bug 12 fixed", "-ticket", "INC-7")
	assert.Contains(t, out, "replayed provider stripe, tenant (none), event evt_1, due ")
	it := s.get(evt1)
	assert.Equal(t, webhooks.StatePending, it.State)
	assert.Equal(t, 0, it.Attempts, "a fresh budget by default")
	out = ok("show", "-provider", "stripe", "-event-id", "evt_1")
	assert.Regexp(t, `(?m)^\S+ \S+\s+replay\s+alice\s+bug 12 fixed\s+INC-7$`, out)
	fails(4, "it is pending or running, so it runs anyway", "replay", "-provider", "stripe", "-event-id", "evt_1", "-actor", "alice", "-reason", "again")
	fails(3, "no item with", "replay", "-provider", "stripe", "-event-id", "nope", "-actor", "alice", "-reason", "r")

	// replay a query: dry run, then for real, spread.
	fails(2, "-limit 100001: give 1 to 100000", "replay", "-limit", "100001", "-actor", "alice", "-reason", "r")
	fails(2, "-spread 25h0m0s: give a duration from 0 to 24h0m0s", "replay", "-spread", "25h", "-actor", "alice", "-reason", "r")
	fails(2, "-closed and -succeeded", "replay", "-closed", "-succeeded", "-actor", "alice", "-reason", "r")
	out = ok("replay", "-tenant", "acme", "-limit", "10", "-spread", "10m", "-dry-run", "-actor", "bob", "-reason", "deploy 42")
	assert.Contains(t, out, "dry run, nothing changed: would replay 2 dead letters as bob:")
	assert.Equal(t, webhooks.StateDead, s.get(evt2).State, "a dry run changes nothing")
	var rr adminjson.ReplayResult
	require.NoError(t, json.Unmarshal([]byte(ok("replay", "-tenant", "acme", "-limit", "10", "-spread", "10m", "-actor", "bob", "-reason", "deploy 42", "-json")), &rr))
	require.Equal(t, 2, rr.Count)
	assert.Equal(t, "gh_1", rr.Items[0].EventID)
	assert.Equal(t, 5*time.Minute, rr.Items[1].DueAt.Sub(rr.Items[0].DueAt).Round(time.Second), "item 1 of 2 is due half the spread later")
	assert.Equal(t, webhooks.StatePending, s.get(evt2).State)
	assert.Contains(t, ok("replay", "-limit", "5", "-actor", "bob", "-reason", "r"), "no dead letters match: nothing replayed")

	// close
	gh2 := webhooks.InboxKey{Provider: "github", EventID: "gh_2"}
	// The replayed items are due: take them out of the way first.
	leases, err := s.store.Acquire(t.Context(), webhooks.AcquireRequest{Now: time.Now().Add(time.Hour), LeaseDuration: time.Minute, Max: 10})
	require.NoError(t, err)
	for _, l := range leases {
		require.NoError(t, s.store.Settle(t.Context(), webhooks.Settlement{Lease: l, Outcome: webhooks.AttemptSucceeded, Now: time.Now().Add(time.Hour)}))
	}
	s.settle(gh2, "push", time.Now().Add(2*time.Hour), webhooks.AttemptDeadLettered)
	fails(2, "-actor and -reason are required", "close", "-provider", "github", "-event-id", "gh_2")
	assert.Contains(t, ok("close", "-provider", "github", "-event-id", "gh_2", "-actor", "carol", "-reason", "test event"), "closed provider github, tenant (none), event gh_2")
	assert.Contains(t, ok("dead-letters", "-closed"), "gh_2")
	assert.Contains(t, ok("dead-letters"), "no dead letters match")
	fails(4, "only dead letters can be closed", "close", "-provider", "github", "-event-id", "gh_2", "-actor", "carol", "-reason", "again")
	// A closing undone: the closed dead letter replayed by a query that
	// asks for closed items, with -keep-attempts.
	out = ok("replay", "-closed", "-provider", "github", "-dry-run", "-actor", "carol", "-reason", "closed by mistake")
	assert.Contains(t, out, "dry run, nothing changed: would replay 1 closed item as carol:")
	assert.Contains(t, ok("replay", "-provider", "github", "-actor", "carol", "-reason", "r"), "no dead letters match: nothing replayed", "a closed item is not a dead letter")
	out = ok("replay", "-closed", "-provider", "github", "-keep-attempts", "-actor", "carol", "-reason", "closed by mistake")
	assert.Contains(t, out, "replayed 1 closed item as carol:")
	it = s.get(gh2)
	assert.Equal(t, webhooks.StatePending, it.State)
	assert.Equal(t, 1, it.Attempts, "-keep-attempts")

	// purge
	fails(2, "nothing to purge", "purge")
	fails(2, "invalid value", "purge", "-succeeded-older-than", "a week")
	leases, err = s.store.Acquire(t.Context(), webhooks.AcquireRequest{Now: time.Now().Add(3 * time.Hour), LeaseDuration: time.Minute, Max: 10})
	require.NoError(t, err)
	require.Len(t, leases, 1)
	require.NoError(t, s.store.Settle(t.Context(), webhooks.Settlement{Lease: leases[0], Outcome: webhooks.AttemptDeadLettered,
		Failure: webhooks.Failure{Class: webhooks.FailurePermanent, Message: "still"}, Now: time.Now().Add(3 * time.Hour)}))
	ok("close", "-provider", "github", "-event-id", "gh_2", "-actor", "carol", "-reason", "test event")
	out = ok("purge", "-succeeded-older-than", "0s", "-closed-older-than", "0d", "-replay-keys")
	assert.Contains(t, out, "deleted 1 succeeded items completed before", "the one that succeeded over an hour ago")
	assert.Contains(t, out, "deleted 1 closed dead letters")
	assert.Contains(t, out, "deleted 0 expired replay keys")
}

// TestOperatorCommandErrors covers what fails before the inbox is read:
// no database, a bad or unreachable one, stray arguments.
func TestOperatorCommandErrors(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	for _, tc := range []struct {
		args []string
		env  []string
		code int
		want string
	}{
		{[]string{"stats"}, []string{"DATABASE_URL="}, 2, "hookinbox stats: no database: give -dsn"},
		{[]string{"stats", "-dsn", "postgres://u:s3cret@host:notaport/db"}, nil, 2, "-dsn is not a PostgreSQL connection string"},
		{[]string{"dead-letters", "-dsn", "postgres://nobody@127.0.0.1:1/db?connect_timeout=5"}, nil, 5, "hookinbox dead-letters: connecting to PostgreSQL"},
		{[]string{"show", "extra"}, nil, 2, `unexpected arguments ["extra"]`},
		{[]string{"replay", "-bogus"}, nil, 2, "flag provided but not defined: -bogus"},
		{[]string{"help", "purge"}, nil, 0, "-succeeded-older-than"},
		{[]string{"help", "dead-letters"}, nil, 0, "(default $DATABASE_URL)"},
	} {
		stdout, stderr, code := runBinary(t, bin, tc.env, tc.args...)
		assert.Equal(t, tc.code, code, "%v: %s%s", tc.args, stdout, stderr)
		assert.Contains(t, stdout+stderr, tc.want, "%v", tc.args)
		assert.NotContains(t, stdout+stderr, "s3cret", "a DSN's password is never printed")
	}
	stdout, _, code := runBinary(t, bin, nil, "help")
	require.Equal(t, 0, code)
	for _, name := range []string{"send", "migrate", "stats", "dead-letters", "show", "replay", "close", "purge", "help"} {
		assert.Regexp(t, `(?m)^  `+name+` `, stdout)
	}
}

// TestTextOutputEscapesControls: what the inbox holds comes from outside
// (event IDs, types, error messages, headers, payloads, audit reasons);
// printed as text, its control and bidi characters are escaped so they
// cannot drive the operator's terminal. -json keeps them, JSON-escaped.
func TestTextOutputEscapesControls(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Parallel()
	bin := buildBinary(t)
	schema := pgtest.NewSchemaAt(t, dsn)
	db := []string{"DATABASE_URL=" + dsn}
	run := func(args ...string) (string, string, int) {
		t.Helper()
		return runBinary(t, bin, db, append(args, "-schema", schema)...)
	}
	_, errOut, code := run("migrate")
	require.Equal(t, 0, code, errOut)
	s := newSeeder(t, dsn, schema)
	const (
		hostileID   = "evt\u202egpj.exe"            // right-to-left override
		hostileType = "invoice\x1b[31m.paid"        // SGR: red
		hostileMsg  = "boom\x1b]0;pwned\x07 \u009b" // OSC: set the title; C1 CSI
	)
	k := webhooks.InboxKey{Provider: "stripe", Tenant: "t\u2066x", EventID: hostileID}
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	env := s.envelope(k, hostileType, "{\"a\":\"\x1b[2J\u202e\"}", at)
	env.Headers = http.Header{"X-Marker": {"v\x1b[1m\u200f"}}
	_, err := s.store.Enqueue(t.Context(), env)
	require.NoError(t, err)
	leases, err := s.store.Acquire(t.Context(), webhooks.AcquireRequest{Now: at, LeaseDuration: time.Minute, Max: 1, Worker: "w\x7f\u061c", Version: "v\u0085"})
	require.NoError(t, err)
	require.Len(t, leases, 1)
	require.NoError(t, s.store.Settle(t.Context(), webhooks.Settlement{Lease: leases[0], Outcome: webhooks.AttemptDeadLettered,
		Failure: webhooks.Failure{Class: webhooks.FailurePermanent, Message: hostileMsg}, Now: at.Add(time.Second)}))

	key := []string{"-provider", "stripe", "-tenant", k.Tenant, "-event-id", hostileID}
	outputs := map[string]string{}
	for name, args := range map[string][]string{
		"stats":        {"stats"},
		"dead-letters": {"dead-letters"},
		"show":         append([]string{"show", "-payloads"}, key...),
		"dry run":      {"replay", "-limit", "10", "-dry-run", "-actor", "a", "-reason", "r\x1b[0m"},
	} {
		out, errOut, code := run(args...)
		require.Equal(t, 0, code, "%s: %s", name, errOut)
		outputs[name] = out + errOut
	}
	out, errOut, code := run(append([]string{"replay", "-actor", "a", "-reason", "why\u202e\x1b[0m"}, key...)...)
	require.Equal(t, 0, code, errOut)
	outputs["replay"] = out + errOut
	out, errOut, _ = run(append([]string{"show"}, key...)...)
	outputs["show after replay"] = out + errOut
	for name, out := range outputs {
		for _, r := range out {
			if r == '\n' || r == '\t' {
				continue
			}
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c {
				t.Errorf("%s printed the control %U raw:\n%s", name, r, out)
				break
			}
		}
	}
	assert.Contains(t, outputs["show"], `evt\u202egpj.exe`, "escaped as Go writes them")
	assert.Contains(t, outputs["show"], `invoice\x1b[31m.paid`)
	assert.Contains(t, outputs["dead-letters"], `boom\x1b]0;pwned\x07 \u009b`)
	assert.Contains(t, outputs["show after replay"], `why\u202e\x1b[0m`)

	var d adminjson.Detail
	out, _, code = run(append([]string{"show", "-json", "-payloads"}, key...)...)
	require.Equal(t, 0, code)
	require.NoError(t, json.Unmarshal([]byte(out), &d))
	assert.Equal(t, hostileID, d.EventID, "-json keeps the data as it is")
	assert.Equal(t, hostileType, d.EventType)
	assert.NotContains(t, out, "\x1b", "JSON escapes the controls")
}

// TestShowHidesPayloadsByDefault: like the admin page, show prints a
// payload's size and digest only, unless -payloads asks for it.
func TestShowHidesPayloadsByDefault(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Parallel()
	bin := buildBinary(t)
	schema := pgtest.NewSchemaAt(t, dsn)
	db := []string{"DATABASE_URL=" + dsn}
	run := func(args ...string) string {
		t.Helper()
		out, errOut, code := runBinary(t, bin, db, append(args, "-schema", schema)...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		return out
	}
	run("migrate")
	s := newSeeder(t, dsn, schema)
	k := webhooks.InboxKey{Provider: "stripe", EventID: "evt_1"}
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	s.settle(k, "invoice.paid", at, webhooks.AttemptDeadLettered)
	res, err := s.store.Enqueue(t.Context(), s.envelope(k, "invoice.paid", `{"marker":"QUARANTINED"}`, at.Add(time.Minute)))
	require.NoError(t, err)
	require.Equal(t, webhooks.EnqueueConflict, res.Outcome)

	for _, args := range [][]string{{"show"}, {"show", "-json"}} {
		out := run(append(args, "-provider", "stripe", "-event-id", "evt_1")...)
		assert.NotContains(t, out, "PAYLOAD-evt_1", "%v", args)
		assert.NotContains(t, out, "HEADER-evt_1", "%v", args)
		assert.NotContains(t, out, `marker":"QUARANTINED`, "%v", args)
	}
	out := run("show", "-provider", "stripe", "-event-id", "evt_1")
	assert.Regexp(t, `(?m)^payload\s+\d+ bytes, sha256 [0-9a-f]{64}$`, out)
	out = run("show", "-payloads", "-provider", "stripe", "-event-id", "evt_1")
	assert.Contains(t, out, `{"marker":"PAYLOAD-evt_1"}`)
	assert.Contains(t, out, "X-Marker: HEADER-evt_1")
	assert.Contains(t, out, `{"marker":"QUARANTINED"}`)
}

// TestExitCodes: each kind of failure has an exit code of its own, so a
// script can tell a typo from a missing item, a refusal and a database it
// cannot reach.
func TestExitCodes(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Parallel()
	bin := buildBinary(t)
	schema := pgtest.NewSchemaAt(t, dsn)
	db := []string{"DATABASE_URL=" + dsn}
	run := func(args ...string) (string, int) {
		t.Helper()
		out, errOut, code := runBinary(t, bin, db, append(args, "-schema", schema)...)
		return out + errOut, code
	}
	out, code := run("stats")
	assert.Equal(t, 1, code, "an unmigrated schema is a failure: %s", out)
	_, code = run("migrate")
	require.Equal(t, 0, code)
	s := newSeeder(t, dsn, schema)
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	done := webhooks.InboxKey{Provider: "github", EventID: "done"}
	s.settle(done, "push", at, webhooks.AttemptSucceeded)
	pending := webhooks.InboxKey{Provider: "github", EventID: "pending"}
	_, err := s.store.Enqueue(t.Context(), s.envelope(pending, "push", "{}", at.Add(time.Minute)))
	require.NoError(t, err)

	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"stats"}, 0},
		{[]string{"stats", "-bogus"}, 2},
		{[]string{"dead-letters", "-after", "garbage"}, 2},
		{[]string{"show", "-provider", "github", "-event-id", "nope"}, 3},
		{[]string{"replay", "-provider", "github", "-event-id", "nope", "-actor", "a", "-reason", "r"}, 3},
		{[]string{"close", "-provider", "github", "-event-id", "nope", "-actor", "a", "-reason", "r"}, 3},
		{[]string{"close", "-provider", "github", "-event-id", "done", "-actor", "a", "-reason", "r"}, 4},
		{[]string{"replay", "-provider", "github", "-event-id", "pending", "-actor", "a", "-reason", "r"}, 4},
	} {
		out, code := run(tc.args...)
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, out)
	}
	out, _, code = runBinary(t, bin, nil, "stats", "-dsn", "postgres://nobody@127.0.0.1:1/db?connect_timeout=5")
	assert.Equal(t, 5, code, "a database that cannot be reached: %s", out)
}
