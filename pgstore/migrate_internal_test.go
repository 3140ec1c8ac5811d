package pgstore

import (
	"crypto/sha256"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/internal/testing/testlog"
	"github.com/hookinbox/webhooks/ops"
)

// TestMigrateUpgrades: a schema that an earlier release migrated (version
// 1, the first release, 2, 3, or 4, the one before this), holding items in
// every state its statements leave, upgrades to the current version with
// every item intact, and every operation then works on those items: a
// lease of the old release settles (and is recorded), an expired one is
// taken over (and recorded as crashed), due items are acquired in order,
// a dead letter is replayed and another closed, both audited, conflicts
// are quarantined, stats count, retention deletes. An acquisition with an
// ID (version 4) does not return the old release's leases, which have
// none, and is returned again when asked for by its ID.
func TestMigrateUpgrades(t *testing.T) {
	t.Parallel()
	for _, from := range []int{1, 2, 3, 4, 5} {
		t.Run(fmt.Sprintf("FromVersion%d", from), func(t *testing.T) {
			t.Parallel()
			testMigrateUpgrade(t, from)
		})
	}
}

func testMigrateUpgrade(t *testing.T, from int) {
	pool := pgtest.NewPool(t, 2)
	s, err := New(pool, WithSchema(pgtest.NewSchema(t, pool)), WithLogger(testlog.Logger(t)))
	require.NoError(t, err)
	ctx := t.Context()
	ms, err := Migrations(s.schema)
	require.NoError(t, err)
	for _, m := range ms[:from] {
		require.NoError(t, s.migrate(ctx, m), "the release applied %04d_%s", m.Version, m.Name)
	}
	applied, err := s.AppliedMigrations(ctx)
	require.NoError(t, err)
	require.Len(t, applied, from)

	base := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	key := func(id string) webhooks.InboxKey {
		return webhooks.InboxKey{Provider: "acme", Tenant: "t1", EventID: id}
	}
	// The rows as the release's statements left them, written with the
	// columns it knew; the CHECK constraints of 0001 hold them to its state
	// machine. Version 2 keeps the token that settled an item.
	table := quoteSchema(s.schema) + ".inbox_items"
	tokens := map[string]string{"leased": uuid.NewString(), "expired": uuid.NewString(), "succeeded": uuid.NewString(), "dead": uuid.NewString()}
	// settled sets the token that settled the item, which version 2 keeps.
	settled := func(id string) string {
		if from < 2 {
			return ""
		}
		return `, settled_token = '` + tokens[id] + `'`
	}
	ids := []string{"pending", "retrying", "leased", "expired", "succeeded", "dead", "dead2"}
	for _, id := range ids {
		_, err := pool.Exec(ctx, `INSERT INTO `+table+` (provider, tenant, event_id, event_type, payload, headers,
				payload_sha256, key_id, state, attempts, next_attempt_at, duplicate_count, last_seen_at, received_at, updated_at)
			VALUES ('acme', 't1', $1, 'invoice.paid', $2, '{"Content-Type": ["application/json"]}', $3, 'k1',
				'pending', 0, $4, 0, $4, $4, $4)`,
			id, []byte(id), sha256Of(id), base)
		require.NoError(t, err, id)
	}
	for _, u := range []struct {
		id, set string
		args    []any
	}{
		{"retrying", `attempts = 1, next_attempt_at = $2, last_error_class = 'error', last_error_message = '503',
			last_error_at = $3, updated_at = $3`, []any{base.Add(30 * time.Second), base.Add(time.Second)}},
		{"leased", `state = 'leased', attempts = 1, lease_token = $2::uuid, lease_expires_at = $3,
			next_attempt_at = $3, updated_at = $4`, []any{tokens["leased"], base.Add(time.Hour), base}},
		{"expired", `state = 'leased', attempts = 1, lease_token = $2::uuid, lease_expires_at = $3,
			next_attempt_at = $3, updated_at = $4`, []any{tokens["expired"], base.Add(time.Minute), base}},
		{"succeeded", `state = 'succeeded', attempts = 1, next_attempt_at = NULL, completed_at = $2,
			updated_at = $2` + settled("succeeded"), []any{base.Add(time.Second)}},
		{"dead", `state = 'dead', attempts = 2, next_attempt_at = NULL, dead_at = $2, last_error_class = 'permanent',
			last_error_message = 'gone', last_error_at = $2, updated_at = $2` + settled("dead"), []any{base.Add(2 * time.Second)}},
		{"dead2", `state = 'dead', attempts = 1, next_attempt_at = NULL, dead_at = $2, last_error_class = 'permanent',
			last_error_message = 'gone', last_error_at = $2, updated_at = $2`, []any{base.Add(3 * time.Second)}},
	} {
		tag, err := pool.Exec(ctx, `UPDATE `+table+` SET `+u.set+` WHERE event_id = $1`, append([]any{u.id}, u.args...)...)
		require.NoError(t, err, u.id)
		require.EqualValues(t, 1, tag.RowsAffected(), u.id)
	}
	if from >= 3 {
		// Version 3 numbers attempts (attempt_seq), one per acquisition:
		// as many as counted here, where none was abandoned.
		_, err := pool.Exec(ctx, `UPDATE `+table+` SET attempt_seq = attempts`)
		require.NoError(t, err)
	}
	// What the release stored, in its own columns, before and after.
	// After 0006, the same columns are those of the event and its job of
	// the default handler.
	upgraded := `(SELECT e.*, j.state, j.attempts, j.next_attempt_at, j.lease_token, j.lease_expires_at,
			j.last_error_class, j.last_error_message, j.last_error_at, j.updated_at, j.completed_at, j.dead_at
		FROM ` + quoteSchema(s.schema) + `.inbox_jobs AS j
		JOIN ` + quoteSchema(s.schema) + `.inbox_events AS e ON e.provider = j.provider AND e.tenant = j.tenant AND e.event_id = j.event_id
		WHERE j.handler = '') AS items`
	oldColumns := func() map[string]string {
		rows, err := pool.Query(ctx, `SELECT event_id, (provider, tenant, event_id, event_type, payload, headers, payload_sha256,
			key_id, state, attempts, next_attempt_at, lease_token, lease_expires_at, last_error_class, last_error_message,
			last_error_at, duplicate_count, last_seen_at, occurred_at, received_at, updated_at, completed_at, dead_at)::text
			FROM `+table)
		require.NoError(t, err)
		m := map[string]string{}
		var id, row string
		_, err = pgx.ForEachRow(rows, []any{&id, &row}, func() error { m[id] = row; return nil })
		require.NoError(t, err)
		return m
	}
	before := oldColumns()
	require.Len(t, before, len(ids))

	require.NoError(t, s.Migrate(ctx))
	applied, err = s.AppliedMigrations(ctx)
	require.NoError(t, err)
	require.Len(t, applied, len(ms))
	table = upgraded
	assert.Equal(t, before, oldColumns(), "the upgrade changed stored items")
	items := map[string]ops.Detail{}
	for _, id := range ids {
		d, err := s.Get(ctx, key(id))
		require.NoError(t, err, id)
		assert.Equal(t, id, string(d.Payload))
		assert.Empty(t, d.APIVersion, id)
		assert.Zero(t, d.ClosedAt, id)
		assert.Empty(t, d.History, "%s: no attempts recorded before the upgrade", id)
		assert.Zero(t, d.Conflicts, id)
		items[id] = d
	}
	assert.Equal(t, webhooks.StateLeased, items["leased"].State)
	assert.Equal(t, webhooks.StateDead, items["dead"].State)

	// A lease of the old release settles, recorded with the number it had.
	leased := &webhooks.Lease{Token: tokens["leased"], Item: items["leased"].Item}
	now := base.Add(90 * time.Second)
	require.NoError(t, s.Settle(ctx, webhooks.Settlement{Lease: leased, Outcome: webhooks.AttemptSucceeded, Now: now}))
	assert.ErrorIs(t, s.Settle(ctx, webhooks.Settlement{Lease: leased, Outcome: webhooks.AttemptSucceeded, Now: now}), webhooks.ErrAlreadySettled)
	d, err := s.Get(ctx, key("leased"))
	require.NoError(t, err)
	assert.Equal(t, []ops.Attempt{{Number: 1, Outcome: webhooks.AttemptSucceeded, FinishedAt: now}}, d.History,
		"the old lease's attempt, its start unknown")
	// An item settled before the upgrade: by version 1, its token was not
	// kept (lost); by version 2 it was (already settled).
	old := &webhooks.Lease{Token: tokens["succeeded"], Item: items["succeeded"].Item}
	wantErr := webhooks.ErrLeaseLost
	if from >= 2 {
		wantErr = webhooks.ErrAlreadySettled
	}
	assert.ErrorIs(t, s.Settle(ctx, webhooks.Settlement{Lease: old, Outcome: webhooks.AttemptSucceeded, Now: now}), wantErr)

	// Due items are acquired in due order, under an ID; the expired lease
	// is reclaimed and its attempt recorded as crashed, numbered after the
	// attempts made before the upgrade. Asked for again by its ID, the
	// acquisition returns the same leases and nothing else.
	acq := webhooks.AcquireRequest{Now: now, LeaseDuration: time.Minute, Max: 10, Worker: "w", Version: "v3", ID: "upgrade-1"}
	leases, err := s.Acquire(ctx, acq)
	require.NoError(t, err)
	again, err := s.RepeatAcquisition(ctx, webhooks.RepeatRequest{ID: acq.ID, Now: acq.Now})
	require.NoError(t, err)
	require.Len(t, again, len(leases))
	for _, l := range leases {
		i := slices.IndexFunc(again, func(a *webhooks.Lease) bool { return a.Token == l.Token })
		require.GreaterOrEqual(t, i, 0, "the lease on %s was not returned again", l.Key())
		assert.Equal(t, l.Key(), again[i].Key())
		assert.Equal(t, l.Attempt, again[i].Attempt, l.Key())
		assert.Equal(t, l.Reclaimed, again[i].Reclaimed, l.Key())
	}
	got := map[string]bool{}
	var order []string
	for _, l := range leases {
		order = append(order, l.Key().EventID)
		got[l.Key().EventID] = l.Reclaimed
		require.NoError(t, s.Settle(ctx, webhooks.Settlement{Lease: l, Outcome: webhooks.AttemptSucceeded, Now: now}))
	}
	assert.Equal(t, []string{"pending", "retrying", "expired"}, order)
	assert.Equal(t, map[string]bool{"pending": false, "retrying": false, "expired": true}, got, "Reclaimed by item")
	stale := &webhooks.Lease{Token: tokens["expired"], Item: items["expired"].Item}
	assert.ErrorIs(t, s.Settle(ctx, webhooks.Settlement{Lease: stale, Outcome: webhooks.AttemptSucceeded, Now: now.Add(time.Second)}),
		webhooks.ErrLeaseLost, "the old release's expired lease was taken over")
	d, err = s.Get(ctx, key("expired"))
	require.NoError(t, err)
	assert.Equal(t, []ops.Attempt{
		{Number: 1, Outcome: ops.OutcomeLeaseLost, FinishedAt: now.Add(time.Second)},
		{Number: 2, Outcome: webhooks.AttemptSucceeded, StartedAt: now, FinishedAt: now, Worker: "w", Version: "v3"},
	}, d.History)
	d, err = s.Get(ctx, key("retrying"))
	require.NoError(t, err)
	assert.Equal(t, []ops.Attempt{{Number: 2, Outcome: webhooks.AttemptSucceeded, StartedAt: now, FinishedAt: now, Worker: "w", Version: "v3"}}, d.History,
		"numbered after the attempt made before the upgrade")

	// Dead letters of the old release are listed, replayed and closed.
	page, err := s.List(ctx, ops.Query{Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Items, 2)
	res, err := s.Replay(ctx, ops.ReplayRequest{Key: key("dead"), Actor: "ops", Reason: "upgrade test", KeepAttempts: true, Now: now})
	require.NoError(t, err)
	assert.Len(t, res.Items, 1)
	require.NoError(t, s.CloseDeadLetter(ctx, ops.CloseRequest{Key: key("dead2"), Actor: "ops", Reason: "upgrade test", Now: now}))
	d, err = s.Get(ctx, key("dead"))
	require.NoError(t, err)
	assert.Equal(t, webhooks.StatePending, d.State)
	assert.Equal(t, 2, d.Attempts)
	assert.Len(t, d.Audit, 1)
	l, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: now, LeaseDuration: time.Minute, Max: 1})
	require.NoError(t, err)
	require.Len(t, l, 1)
	assert.Equal(t, 3, l[0].Attempt)

	// A conflicting delivery of an old item is quarantined.
	res2, err := s.Enqueue(ctx, webhooks.Envelope{Key: key("succeeded"), Payload: []byte("other"), PayloadSHA256: sha256.Sum256([]byte("other")), ReceivedAt: now})
	require.NoError(t, err)
	assert.Equal(t, webhooks.EnqueueConflict, res2.Outcome)
	d, err = s.Get(ctx, key("succeeded"))
	require.NoError(t, err)
	assert.Equal(t, 1, d.Conflicts)
	assert.Len(t, d.Quarantine, 1)

	st, err := s.Stats(ctx, ops.StatsRequest{Now: now})
	require.NoError(t, err)
	assert.Equal(t, map[webhooks.State]int64{webhooks.StatePending: 0, webhooks.StateLeased: 1, webhooks.StateSucceeded: 5,
		webhooks.StateDead: 0, webhooks.StateClosed: 1}, st.States)

	n, err := s.DeleteSucceeded(ctx, now.Add(time.Hour), 10)
	require.NoError(t, err)
	assert.EqualValues(t, 5, n, "retention deletes the old and the new succeeded items, with their history")
	var left int
	require.NoError(t, pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM `+quoteSchema(s.schema)+`.inbox_attempts) +
		(SELECT count(*) FROM `+quoteSchema(s.schema)+`.inbox_quarantine)`).Scan(&left))
	assert.Equal(t, 0, left, "the deleted items' history went with them (the dead items' history: none before the upgrade)")
}

// TestMigrateKeepsReclaimedOfHeldLeases: version 4 derived Reclaimed from
// the attempt history and did not keep it on the row. A lease taken over
// from a crashed attempt and held (its attempt not started) when the
// schema is upgraded, or granted by an instance of version 4 during the
// rolling upgrade, is taken over by this version with the Reclaimed it
// would have had, so the retry policy still judges the crash; a held
// lease that took over nothing crashed is not Reclaimed.
func TestMigrateKeepsReclaimedOfHeldLeases(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 2)
	s, err := New(pool, WithSchema(pgtest.NewSchema(t, pool)), WithLogger(testlog.Logger(t)))
	require.NoError(t, err)
	ctx := t.Context()
	ms, err := Migrations(s.schema)
	require.NoError(t, err)
	for _, m := range ms[:4] {
		require.NoError(t, s.migrate(ctx, m))
	}
	base := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	q := quoteSchema(s.schema)
	for _, id := range []string{"crashed", "fresh"} {
		_, err := pool.Exec(ctx, `INSERT INTO `+q+`.inbox_items (provider, tenant, event_id, event_type, payload, headers,
				payload_sha256, key_id, state, attempts, attempt_seq, next_attempt_at, duplicate_count, last_seen_at, received_at, updated_at,
				lease_token, lease_expires_at, lease_worker, lease_version)
			VALUES ('acme', 't1', $1, 'invoice.paid', '{}', '{}', $2, 'k1',
				'leased', $3, $3, $5, 0, $4, $4, $4, gen_random_uuid(), $5, 'old', 'v4')`,
			id, sha256Of(id), map[string]int{"crashed": 1, "fresh": 0}[id], base, base.Add(time.Minute))
		require.NoError(t, err, id)
	}
	// Version 4 took "crashed" over from its crashed attempt 1, held.
	_, err = pool.Exec(ctx, `INSERT INTO `+q+`.inbox_attempts (provider, tenant, event_id, number, outcome, started_at, finished_at, worker, version)
		VALUES ('acme', 't1', 'crashed', 1, 'crashed', $1, $2, 'old', 'v4')`, base, base.Add(30*time.Second))
	require.NoError(t, err)

	require.NoError(t, s.Migrate(ctx))
	leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: base.Add(2 * time.Minute), LeaseDuration: time.Minute, Max: 10, Hold: true, Start: 10})
	require.NoError(t, err)
	got := map[string]string{}
	for _, l := range leases {
		got[l.Key().EventID] = fmt.Sprintf("reclaimed %t, held %t, attempt %d", l.Reclaimed, l.Held, l.Attempt)
	}
	assert.Equal(t, map[string]string{
		"crashed": "reclaimed true, held true, attempt 2",
		"fresh":   "reclaimed false, held false, attempt 1",
	}, got, "held leases of version 4 that expired, taken over after the upgrade")
	// Kept on the row now: a repeat and a second takeover say the same.
	for _, l := range leases {
		if l.Key().EventID == "crashed" {
			require.NoError(t, s.Settle(ctx, webhooks.Settlement{Lease: l, Outcome: webhooks.AttemptAbandoned, Now: base.Add(2 * time.Minute)}))
		}
	}
	again, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: base.Add(2 * time.Minute), LeaseDuration: time.Minute, Max: 10, Hold: true, Start: 10})
	require.NoError(t, err)
	require.Len(t, again, 1)
	assert.True(t, again[0].Reclaimed && again[0].Held, "given back unstarted, the lease taken over from a crash stays Reclaimed")
}

func sha256Of(s string) []byte {
	d := sha256.Sum256([]byte(s))
	return d[:]
}

// TestOlderSchemaRefusesToServe: a schema Migrate left at an older
// migration than this package needs is refused by CheckSchema, and by the
// Acquire that finds a column of a later migration missing, saying so.
func TestOlderSchemaRefusesToServe(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 2)
	schema := pgtest.NewSchema(t, pool)
	s, err := New(pool, WithSchema(schema))
	require.NoError(t, err)
	ctx := t.Context()
	ms, err := Migrations(schema)
	require.NoError(t, err)
	for _, m := range ms[:len(ms)-1] {
		require.NoError(t, s.migrate(ctx, m))
	}
	want := fmt.Sprintf(`pgstore: schema %q is at migration %d and this pgstore needs %d: run (*Store).Migrate (or hookinbox migrate -schema %s)`,
		schema, len(ms)-1, len(ms), schema)
	err = s.CheckSchema(ctx)
	require.ErrorIs(t, err, webhooks.ErrStoreNotReady)
	assert.Equal(t, want, err.Error())
	// A Fair acquisition reads inbox_fair, of the last migration (0008).
	_, err = s.Acquire(ctx, webhooks.AcquireRequest{Now: time.Now(), LeaseDuration: time.Minute, Max: 1, ID: "acq-1", Fair: true})
	require.ErrorIs(t, err, webhooks.ErrStoreNotReady)
	assert.Contains(t, err.Error(), want)

	require.NoError(t, s.Migrate(ctx))
	require.NoError(t, s.CheckSchema(ctx))
}

// TestMigrateJobsKeepsHistoryAuditAndQuarantine: a schema at 0005 holding
// an item in every state, each with the attempt history, audit trail and
// quarantined deliveries version 5 writes, is split by 0006 into events
// and jobs of the default handler "": every item is one job, unordered,
// with its state, attempts, history and audit as they were, and its event
// keeps its payload, headers, duplicates and quarantine. The old table is
// gone, so a statement of version 5 fails instead of running beside this
// one, and the migrated jobs work: a lease of version 5 settles under its
// token, history and audit follow the job, retention deletes by job.
func TestMigrateJobsKeepsHistoryAuditAndQuarantine(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewPool(t, 2)
	s, err := New(pool, WithSchema(pgtest.NewSchema(t, pool)), WithLogger(testlog.Logger(t)))
	require.NoError(t, err)
	ctx := t.Context()
	ms, err := Migrations(s.schema)
	require.NoError(t, err)
	require.Equal(t, "jobs", ms[5].Name)
	for _, m := range ms[:5] {
		require.NoError(t, s.migrate(ctx, m))
	}
	q := quoteSchema(s.schema)
	base := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	leaseToken := uuid.NewString()
	// One item per state, as version 5's statements leave them.
	for _, r := range []struct {
		id, state          string
		attempts           int
		due, expires, dead *time.Time
		token              *string
		errClass           *string
		completed, closed  *time.Time
	}{
		{id: "pending", state: "pending", due: &base},
		{id: "retrying", state: "pending", attempts: 1, due: new(base.Add(time.Minute)), errClass: new("error")},
		{id: "leased", state: "leased", attempts: 2, due: new(base.Add(time.Hour)), expires: new(base.Add(time.Hour)), token: &leaseToken, errClass: new("error")},
		{id: "succeeded", state: "succeeded", attempts: 1, completed: new(base.Add(time.Second))},
		{id: "dead", state: "dead", attempts: 3, dead: new(base.Add(2 * time.Second)), errClass: new("permanent")},
		{id: "closed", state: "closed", attempts: 1, dead: new(base.Add(3 * time.Second)), closed: new(base.Add(4 * time.Second)), errClass: new("permanent")},
	} {
		_, err := pool.Exec(ctx, `INSERT INTO `+q+`.inbox_items (provider, tenant, event_id, event_type, payload, headers,
				payload_sha256, key_id, state, attempts, attempt_seq, next_attempt_at, lease_token, lease_expires_at,
				last_error_class, last_error_message, last_error_at, duplicate_count, last_seen_at, received_at, updated_at,
				completed_at, dead_at, closed_at, api_version, trace_link, conflicts, lease_started_at, lease_worker, lease_version,
				lease_reclaimed, acquisition_id)
			VALUES ('acme', 't1', $1, 'invoice.paid', $2, '{"Content-Type": ["application/json"]}', $3, 'k1',
				$4, $5, $5, $6, $7, $8, $9, CASE WHEN $9::text IS NOT NULL THEN 'boom' END, CASE WHEN $9::text IS NOT NULL THEN $10::timestamptz END,
				2, $10, $10, $10, $11, $12, $13, '2024-01-01', 'trace-'||$1, 1,
				CASE WHEN $4 = 'leased' THEN $10::timestamptz END, CASE WHEN $4 = 'leased' THEN 'w5' END, 'v5',
				CASE WHEN $4 = 'leased' THEN false END, NULL)`,
			r.id, []byte(r.id), sha256Of(r.id), r.state, r.attempts, r.due, r.token, r.expires, r.errClass, base, r.completed, r.dead, r.closed)
		require.NoError(t, err, r.id)
		for n := 1; n <= r.attempts; n++ {
			if r.state == "leased" && n == r.attempts {
				break // the current lease's attempt is recorded when it settles
			}
			outcome := "retried"
			switch {
			case n == r.attempts && r.state == "succeeded":
				outcome = "succeeded"
			case n == r.attempts && (r.state == "dead" || r.state == "closed"):
				outcome = "dead_lettered"
			}
			_, err := pool.Exec(ctx, `INSERT INTO `+q+`.inbox_attempts (provider, tenant, event_id, number, outcome, started_at, finished_at,
					error_class, error_message, worker, version)
				VALUES ('acme', 't1', $1, $2, $3, $4, $4, CASE WHEN $3 <> 'succeeded' THEN 'error' END, CASE WHEN $3 <> 'succeeded' THEN 'boom' END, 'w5', 'v5')`,
				r.id, n, outcome, base.Add(time.Duration(n)*time.Millisecond))
			require.NoError(t, err, r.id)
		}
		_, err = pool.Exec(ctx, `INSERT INTO `+q+`.inbox_quarantine (provider, tenant, event_id, seq, payload, headers, payload_sha256, key_id, received_at)
			VALUES ('acme', 't1', $1, 1, 'other', NULL, $2, 'k1', $3)`, r.id, sha256Of("other"), base)
		require.NoError(t, err, r.id)
	}
	for _, a := range []struct{ id, action string }{{"dead", "redelivery"}, {"closed", "close"}, {"succeeded", "replay"}} {
		_, err := pool.Exec(ctx, `INSERT INTO `+q+`.inbox_audit (provider, tenant, event_id, action, at, actor, reason, ticket)
			VALUES ('acme', 't1', $1, $2, $3, 'ops', 'why', 'T-1')`, a.id, a.action, base)
		require.NoError(t, err)
	}
	key := func(id string) webhooks.InboxKey {
		return webhooks.InboxKey{Provider: "acme", Tenant: "t1", EventID: id}
	}

	start := time.Now()
	require.NoError(t, s.Migrate(ctx))
	t.Logf("0006 on 6 items took %v", time.Since(start))

	_, err = pool.Exec(ctx, `UPDATE `+q+`.inbox_items SET state = 'leased' WHERE event_id = 'pending'`)
	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr, "a statement of version 5 fails after 0006")
	assert.Equal(t, "42P01", pgErr.Code, "undefined table: %v", err)

	want := map[string]struct {
		state    webhooks.State
		attempts int
		history  int
		audit    []string
	}{
		"pending":   {webhooks.StatePending, 0, 0, nil},
		"retrying":  {webhooks.StatePending, 1, 1, nil},
		"leased":    {webhooks.StateLeased, 2, 1, nil},
		"succeeded": {webhooks.StateSucceeded, 1, 1, []string{"replay"}},
		"dead":      {webhooks.StateDead, 3, 3, []string{"redelivery"}},
		"closed":    {webhooks.StateClosed, 1, 1, []string{"close"}},
	}
	for id, w := range want {
		d, err := s.Get(ctx, key(id))
		require.NoError(t, err, id)
		require.Len(t, d.Jobs, 1, "%s: one job", id)
		assert.Equal(t, "", d.Handler, id)
		assert.False(t, d.Ordered, id)
		assert.Equal(t, w.state, d.State, id)
		assert.Equal(t, w.attempts, d.Attempts, id)
		assert.Equal(t, id, string(d.Payload), id)
		assert.Equal(t, "application/json", d.Headers.Get("Content-Type"), id)
		assert.Equal(t, 2, d.DuplicateCount, id)
		assert.Equal(t, "2024-01-01", d.APIVersion, id)
		assert.Equal(t, "trace-"+id, d.TraceLink, id)
		assert.Equal(t, 1, d.Conflicts, id)
		require.Len(t, d.Quarantine, 1, id)
		assert.Equal(t, "other", string(d.Quarantine[0].Payload), id)
		require.Len(t, d.History, w.history, id)
		for i, a := range d.History {
			assert.Equal(t, i+1, a.Number, id)
			assert.Equal(t, "w5", a.Worker, id)
		}
		assert.Equal(t, d.History, d.Jobs[0].History, id)
		var actions []string
		for _, a := range d.Audit {
			actions = append(actions, string(a.Action))
		}
		assert.Equal(t, w.audit, actions, id)
		if w.state == webhooks.StateClosed {
			assert.Equal(t, base.Add(4*time.Second), d.ClosedAt, id)
			assert.Equal(t, base.Add(3*time.Second), d.DeadAt, id)
		}
	}

	// Version 5's lease settles under its token, recorded as attempt 2.
	d, err := s.Get(ctx, key("leased"))
	require.NoError(t, err)
	now := base.Add(time.Minute)
	require.NoError(t, s.Settle(ctx, webhooks.Settlement{Lease: &webhooks.Lease{Token: leaseToken, Item: d.Item}, Outcome: webhooks.AttemptSucceeded, Now: now}))
	d, err = s.Get(ctx, key("leased"))
	require.NoError(t, err)
	assert.Equal(t, webhooks.StateSucceeded, d.State)
	require.Len(t, d.History, 2)
	assert.Equal(t, ops.Attempt{Number: 2, Outcome: webhooks.AttemptSucceeded, StartedAt: base, FinishedAt: now, Worker: "w5", Version: "v5"}, d.History[1])
	// The dead letter is replayed on its job, audited after its old entry.
	_, err = s.Replay(ctx, ops.ReplayRequest{Key: key("dead"), Actor: "ops", Reason: "after 0006", Now: now})
	require.NoError(t, err)
	d, err = s.Get(ctx, key("dead"))
	require.NoError(t, err)
	assert.Equal(t, webhooks.StatePending, d.State)
	require.Len(t, d.Audit, 2)
	assert.Equal(t, ops.ActionReplay, d.Audit[1].Action)
	// Retention deletes the succeeded jobs and, with them, their events,
	// history, audit and quarantine.
	n, err := s.DeleteSucceeded(ctx, now.Add(time.Hour), 10)
	require.NoError(t, err)
	assert.Equal(t, int64(2), n)
	for _, id := range []string{"succeeded", "leased"} {
		_, err := s.Get(ctx, key(id))
		assert.ErrorIs(t, err, ops.ErrNotFound, id)
	}
	var left int
	require.NoError(t, pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM `+q+`.inbox_events) + (SELECT count(*) FROM `+q+`.inbox_attempts
		WHERE event_id IN ('succeeded', 'leased')) + (SELECT count(*) FROM `+q+`.inbox_quarantine WHERE event_id IN ('succeeded', 'leased'))`).Scan(&left))
	assert.Equal(t, 4, left, "the four other events; nothing of the deleted ones")
}

// TestMigrateJobsDuration times 0006 on a schema of 1,000,000 items with a
// 300-byte payload (990,000 succeeded, each with an attempt, and 10,000
// pending), for docs/operations.md; only with WEBHOOKS_TEST_LONG=1.
func TestMigrateJobsDuration(t *testing.T) {
	if os.Getenv("WEBHOOKS_TEST_LONG") != "1" {
		t.Skip("WEBHOOKS_TEST_LONG=1 times migration 0006 on 1,000,000 items")
	}
	pool := pgtest.NewPool(t, 2)
	s, err := New(pool, WithSchema(pgtest.NewSchema(t, pool)))
	require.NoError(t, err)
	ctx := t.Context()
	ms, err := Migrations(s.schema)
	require.NoError(t, err)
	for _, m := range ms[:5] {
		require.NoError(t, s.migrate(ctx, m))
	}
	q := quoteSchema(s.schema)
	const items = 1_000_000
	_, err = pool.Exec(ctx, `INSERT INTO `+q+`.inbox_items (provider, tenant, event_id, event_type, payload, headers, payload_sha256,
			key_id, state, attempts, attempt_seq, next_attempt_at, duplicate_count, last_seen_at, received_at, updated_at, completed_at,
			lease_started_at, lease_worker, lease_version)
		SELECT 'acme', '', 'evt_' || g, 'invoice.paid', convert_to(repeat('x', 300), 'UTF8'), '{"Content-Type": ["application/json"]}',
			sha256(g::text::bytea), 'k1',
			CASE WHEN g % 100 = 0 THEN 'pending' ELSE 'succeeded' END, 1, 1,
			CASE WHEN g % 100 = 0 THEN $1::timestamptz END, 0, $1, $1, $1, CASE WHEN g % 100 = 0 THEN NULL ELSE $1::timestamptz END,
			$1, 'w', 'v'
		FROM generate_series(1, $2::int) AS g`, time.Now(), items)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO `+q+`.inbox_attempts (provider, tenant, event_id, number, outcome, started_at, finished_at, worker, version)
		SELECT provider, tenant, event_id, 1, 'succeeded', updated_at, updated_at, 'w', 'v' FROM `+q+`.inbox_items WHERE state = 'succeeded'`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, "VACUUM ANALYZE "+q+".inbox_items, "+q+".inbox_attempts")
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, s.Migrate(ctx))
	t.Logf("0006 on %d items (and %d attempts) took %v", items, items-items/100, time.Since(start))
}
