package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/cursor"
	"github.com/hookinbox/webhooks/ops"
)

// Get implements ops.Store: the item, its attempts, audit trail and
// quarantined deliveries, read by four statements in one read-only
// REPEATABLE READ transaction, so they agree with one another, all sent in
// one round trip.
func (s *Store) Get(ctx context.Context, key webhooks.InboxKey) (ops.Detail, error) {
	if checkKey(key) != nil { // PostgreSQL cannot hold such a key
		return ops.Detail{}, fmt.Errorf("pgstore: get %q: %w", key.String(), ops.ErrNotFound)
	}
	args := []any{key.Provider, key.Tenant, key.EventID}
	b := &pgx.Batch{}
	b.Queue("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
	b.Queue(s.sql.get, args...)
	b.Queue(s.sql.history, args...)
	b.Queue(s.sql.audit, args...)
	b.Queue(s.sql.quarantine, args...)
	b.Queue("COMMIT")
	br := s.pool.SendBatch(ctx, b)
	defer func() { _ = br.Close() }()

	if _, err := br.Exec(); err != nil {
		return ops.Detail{}, wrapErr("get "+key.String(), err)
	}
	var d ops.Detail
	rows, _ := br.Query()
	err := collectOne(rows, func(row pgx.CollectableRow) error {
		var (
			r         itemRow
			conflicts int64
		)
		if err := row.Scan(append(r.dest(), &conflicts)...); err != nil {
			return err
		}
		it, err := r.item()
		d.Item, d.Conflicts = it, int(conflicts)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return ops.Detail{}, fmt.Errorf("pgstore: get %s: %w", key, ops.ErrNotFound)
	}
	if err != nil {
		return ops.Detail{}, wrapErr("get "+key.String(), err)
	}
	rows, _ = br.Query()
	d.History, err = pgx.CollectRows(rows, scanAttempt)
	if err != nil {
		return ops.Detail{}, wrapErr("get the history of "+key.String(), err)
	}
	rows, _ = br.Query()
	d.Audit, err = pgx.CollectRows(rows, scanAudit)
	if err != nil {
		return ops.Detail{}, wrapErr("get the audit trail of "+key.String(), err)
	}
	rows, _ = br.Query()
	d.Quarantine, err = pgx.CollectRows(rows, scanDelivery)
	if err != nil {
		return ops.Detail{}, wrapErr("get the quarantine of "+key.String(), err)
	}
	if _, err := br.Exec(); err != nil {
		return ops.Detail{}, wrapErr("get "+key.String(), err)
	}
	return d, nil
}

// collectOne calls scan for the only row of rows, or returns pgx.ErrNoRows.
func collectOne(rows pgx.Rows, scan func(pgx.CollectableRow) error) error {
	_, err := pgx.CollectExactlyOneRow(rows, func(row pgx.CollectableRow) (struct{}, error) {
		return struct{}{}, scan(row)
	})
	return err
}

func scanAttempt(row pgx.CollectableRow) (ops.Attempt, error) {
	var (
		a                  ops.Attempt
		outcome            string
		started            *time.Time
		finished           time.Time
		errClass, errorMsg *string
	)
	if err := row.Scan(&a.Number, &outcome, &started, &finished, &errClass, &errorMsg, &a.Worker, &a.Version); err != nil {
		return ops.Attempt{}, err
	}
	a.Outcome = webhooks.AttemptOutcome(outcome)
	a.StartedAt, a.FinishedAt = timeOrZero(started), finished.UTC()
	a.ErrorClass, a.Error = webhooks.FailureClass(deref(errClass)), deref(errorMsg)
	return a, nil
}

func scanAudit(row pgx.CollectableRow) (ops.Audit, error) {
	var a ops.Audit
	if err := row.Scan(&a.Action, &a.At, &a.Actor, &a.Reason, &a.Ticket); err != nil {
		return ops.Audit{}, err
	}
	a.At = a.At.UTC()
	return a, nil
}

func scanDelivery(row pgx.CollectableRow) (ops.Delivery, error) {
	var (
		d               ops.Delivery
		headers, digest []byte
	)
	if err := row.Scan(&d.Payload, &headers, &digest, &d.KeyID, &d.ReceivedAt); err != nil {
		return ops.Delivery{}, err
	}
	d.ReceivedAt = d.ReceivedAt.UTC()
	if d.Payload == nil {
		d.Payload = []byte{}
	}
	if len(digest) != len(d.PayloadSHA256) {
		return ops.Delivery{}, fmt.Errorf("a quarantined delivery has a %d-byte payload digest; the table was changed outside pgstore", len(digest))
	}
	copy(d.PayloadSHA256[:], digest)
	h, err := decodeHeaders(headers)
	if err != nil {
		return ops.Delivery{}, fmt.Errorf("a quarantined delivery: %w", err)
	}
	d.Headers = h
	return d, nil
}

// List implements ops.Store. Pages are read through inbox_items_dead_idx
// (closed items: inbox_items_closed_idx) in its order; the filters the
// index does not hold are checked on the rows it leads to. The statement
// reads neither the payload nor the headers (see summaryColumns).
func (s *Store) List(ctx context.Context, q ops.Query) (ops.Page, error) {
	if q.Limit < 1 {
		return ops.Page{}, fmt.Errorf("pgstore: List: Limit is %d; it must be at least 1: %w", q.Limit, ops.ErrInvalidRequest)
	}
	state, err := listState("List", q)
	if err != nil {
		return ops.Page{}, err
	}
	start := s.sql.listDead
	if state == webhooks.StateClosed {
		start = s.sql.listClosed
	}
	var after *cursor.Position
	if q.After != "" {
		c, err := cursor.Parse(q.After, state)
		if err != nil {
			return ops.Page{}, fmt.Errorf("pgstore: List: %w", err)
		}
		if err := checkPosition(c); err != nil {
			return ops.Page{}, fmt.Errorf("pgstore: List: %w", err)
		}
		after = &c
	}
	sql, args, err := s.listQuery(start, state, q, after, q.Limit+1)
	if errors.Is(err, errUnstorableFilter) {
		return ops.Page{}, nil // no stored item can match
	}
	if err != nil {
		return ops.Page{}, err
	}
	rows, _ := s.pool.Query(ctx, sql, args...)
	items, err := pgx.CollectRows(rows, scanSummary)
	if err != nil {
		return ops.Page{}, wrapErr("list", err)
	}
	page := ops.Page{Items: items}
	if len(page.Items) > q.Limit {
		page.Items = page.Items[:q.Limit]
		last := &page.Items[q.Limit-1]
		at := last.DeadAt
		if state == webhooks.StateClosed {
			at = last.ClosedAt
		}
		page.Next = cursor.Position{State: state, At: at, Key: last.Key}.String()
	}
	return page, nil
}

// listState returns the state q lists: dead by default, or closed.
func listState(op string, q ops.Query) (webhooks.State, error) {
	switch q.State {
	case "", webhooks.StateDead:
		return webhooks.StateDead, nil
	case webhooks.StateClosed:
		return webhooks.StateClosed, nil
	}
	return "", fmt.Errorf("pgstore: %s: Query.State is %q; it must be empty, %q or %q: %w", op, q.State, webhooks.StateDead, webhooks.StateClosed, ops.ErrInvalidRequest)
}

// errUnstorableFilter reports a filter value no stored item can have.
var errUnstorableFilter = errors.New("pgstore: filter value is not storable")

// checkPosition refuses a cursor's position PostgreSQL could not hold.
func checkPosition(c cursor.Position) error {
	if checkKey(c.Key) != nil || !storableTime(c.At) {
		return ops.ErrInvalidCursor
	}
	return nil
}

// listQuery completes start (a listSQL for state) with q's filters, given
// only when set so the planner sees plain equalities, the position after
// as a row comparison in the index's order, the order, and limit.
func (s *Store) listQuery(start string, state webhooks.State, q ops.Query, after *cursor.Position, limit int) (string, []any, error) {
	at := "i." + orderedBy[state]
	sql := start
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	tenant, hasTenant := "", q.Tenant != nil
	if hasTenant {
		tenant = *q.Tenant
	}
	for _, f := range []struct {
		col, v, what string
		set          bool
	}{
		{"i.provider", q.Provider, "provider", q.Provider != ""},
		{"i.tenant", tenant, "tenant", hasTenant},
		{"i.event_type", q.EventType, "event type", q.EventType != ""},
		{"i.last_error_class", string(q.ErrorClass), "error class", q.ErrorClass != ""},
		{"i.api_version", q.APIVersion, "API version", q.APIVersion != ""},
	} {
		if !f.set {
			continue
		}
		if checkText(f.what, f.v) != nil {
			return "", nil, errUnstorableFilter
		}
		sql += " AND " + f.col + " = " + arg(f.v)
	}
	// Bounds outside what timestamptz holds either bound nothing or leave
	// nothing to match.
	if !q.From.IsZero() {
		switch {
		case !q.From.Before(endTimestamptz):
			return "", nil, errUnstorableFilter
		case !q.From.Before(minTimestamptz):
			sql += " AND " + at + " >= " + arg(q.From) + "::timestamptz"
		}
	}
	if !q.To.IsZero() {
		switch {
		case !q.To.After(minTimestamptz):
			return "", nil, errUnstorableFilter
		case q.To.Before(endTimestamptz):
			sql += " AND " + at + " < " + arg(q.To) + "::timestamptz"
		}
	}
	if after != nil {
		sql += " AND (" + at + ", i.provider, i.tenant, i.event_id) < (" +
			arg(after.At) + "::timestamptz, " + arg(after.Key.Provider) + ", " +
			arg(after.Key.Tenant) + ", " + arg(after.Key.EventID) + ")"
	}
	return sql + listOrder(strings.TrimPrefix(at, "i.")) + arg(limit), args, nil
}

// Replay implements ops.Store. One item is replayed, and audited, in one
// statement. A bulk replay's call reads the keys of up to ops.ReplayBatch
// items the query selects after its cursor (through the state's index,
// newest first), gives each its due time (Now plus its place in the
// spread, to the microsecond), and replays those still in the state in
// one statement and transaction (replayBatchSQL), skipping the others;
// the first call of a replay larger than a batch counts the items it
// selects first, up to Query.Limit. A dry run only reads. After replaying
// anything it asks for a wake-up on NotifyChannel.
//
// With the database clock, Now is the server's: each call's now().
func (s *Store) Replay(ctx context.Context, req ops.ReplayRequest) (ops.ReplayResult, error) {
	if err := req.Check(); err != nil {
		return ops.ReplayResult{}, fmt.Errorf("pgstore: Replay: %w", err)
	}
	if err := checkAudited(req.Actor, req.Reason, req.Ticket); err != nil {
		return ops.ReplayResult{}, fmt.Errorf("pgstore: Replay: %v; a replay is audited: %w", err, ops.ErrInvalidRequest)
	}
	action := ops.ActionReplay
	if req.Redelivery {
		action = ops.ActionRedelivery
	}
	audit := ops.Audit{Action: action, Actor: req.Actor, Reason: req.Reason, Ticket: req.Ticket}
	if req.Query == nil {
		return s.replayOne(ctx, req, audit)
	}
	return s.replayBulk(ctx, req, audit)
}

// operatorReplays are the states from which an operator replays one item.
var operatorReplays = []string{string(webhooks.StateDead), string(webhooks.StateClosed), string(webhooks.StateSucceeded)}

// replayOne replays (or, on a dry run, peeks at) the item req.Key.
func (s *Store) replayOne(ctx context.Context, req ops.ReplayRequest, audit ops.Audit) (ops.ReplayResult, error) {
	key := req.Key
	if checkKey(key) != nil { // PostgreSQL cannot hold such a key
		return ops.ReplayResult{}, fmt.Errorf("pgstore: replay %q: %w", key.String(), ops.ErrNotFound)
	}
	var (
		due   *time.Time
		state *string
		err   error
	)
	if req.DryRun {
		var now time.Time
		err = s.pool.QueryRow(ctx, s.sql.peek, key.Provider, key.Tenant, key.EventID, s.now(req.Now)).Scan(&state, &now)
		if err == nil && state != nil && slices.Contains(operatorReplays, *state) {
			due, state = &now, nil
		}
	} else {
		due, state, err = s.replayItem(ctx, s.pool, key, s.now(req.Now), nil, !req.KeepAttempts, audit, operatorReplays)
	}
	switch {
	case err != nil:
		return ops.ReplayResult{}, wrapErr("replay "+key.String(), err)
	case due != nil:
		if !req.DryRun {
			s.Notify()
		}
		return ops.ReplayResult{Items: []ops.Replayed{{Key: key, DueAt: due.UTC()}}, Done: 1, Total: 1}, nil
	case state == nil:
		return ops.ReplayResult{}, fmt.Errorf("pgstore: replay %s: %w", key, ops.ErrNotFound)
	default:
		return ops.ReplayResult{}, fmt.Errorf("pgstore: replay %s is %s: %w", key, *state, ops.ErrNotFinished)
	}
}

// replayBulk runs one call of the bulk replay req.
func (s *Store) replayBulk(ctx context.Context, req ops.ReplayRequest, audit ops.Audit) (ops.ReplayResult, error) {
	q := *req.Query
	state := q.State
	if state == "" {
		state = webhooks.StateDead
	}
	var (
		c     cursor.Replay
		after *cursor.Position
	)
	if q.After != "" {
		var err error
		if c, err = cursor.ParseReplay(q.After, state, req.DryRun); err != nil {
			return ops.ReplayResult{}, fmt.Errorf("pgstore: Replay: %w", err)
		}
		if err := checkPosition(c.Position); err != nil {
			return ops.ReplayResult{}, fmt.Errorf("pgstore: Replay: %w", err)
		}
		after = &c.Position
	}
	n := min(ops.ReplayBatch, c.Total-c.Done) // the items this call selects
	if after == nil {
		n = min(ops.ReplayBatch, q.Limit)
		if q.Limit > ops.ReplayBatch {
			total, err := s.countReplay(ctx, state, q)
			if err != nil || total == 0 {
				return ops.ReplayResult{}, err
			}
			c.Total = total
		}
	}
	sql, args, err := s.listQuery(s.sql.selectReplay[state], state, q, after, n)
	if errors.Is(err, errUnstorableFilter) {
		return ops.ReplayResult{}, nil // no stored item can match
	}
	if err != nil {
		return ops.ReplayResult{}, err
	}
	rows, _ := s.pool.Query(ctx, sql, args...)
	type selected struct {
		key webhooks.InboxKey
		at  time.Time
	}
	found, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (selected, error) {
		var sel selected
		err := row.Scan(&sel.key.Provider, &sel.key.Tenant, &sel.key.EventID, &sel.at)
		return sel, err
	})
	if err != nil {
		return ops.ReplayResult{}, wrapErr("replay: selecting the items", err)
	}
	if after == nil && q.Limit <= ops.ReplayBatch {
		c.Total = len(found)
	}
	keys := make([]webhooks.InboxKey, len(found))
	offsets := make([]time.Duration, len(found))
	for i, sel := range found {
		keys[i] = sel.key
		offsets[i] = spreadOffset(req.Spread, c.Done+i, c.Total).Truncate(time.Microsecond)
	}
	res := ops.ReplayResult{Done: c.Done + len(found), Total: c.Total}
	if len(found) == n && res.Done < c.Total {
		last := found[len(found)-1]
		res.Next = cursor.Replay{Position: cursor.Position{State: state, At: last.at.UTC(), Key: last.key}, Done: res.Done, Total: c.Total, DryRun: req.DryRun}.String()
	}
	if req.DryRun {
		now := req.Now.Truncate(time.Microsecond)
		if s.dbClock {
			if err := s.pool.QueryRow(ctx, "SELECT now()").Scan(&now); err != nil {
				return ops.ReplayResult{}, wrapErr("replay", err)
			}
		}
		res.Items = make([]ops.Replayed, len(keys))
		for i, k := range keys {
			res.Items[i] = ops.Replayed{Key: k, DueAt: now.Add(offsets[i]).UTC()}
		}
		return res, nil
	}
	if len(keys) == 0 {
		return res, nil
	}
	res.Items, err = s.replayBatch(ctx, req, audit, state, keys, offsets)
	if err != nil {
		return ops.ReplayResult{}, err
	}
	if len(res.Items) > 0 {
		s.Notify()
	}
	return res, nil
}

// countReplay counts the items in state q selects, up to q.Limit.
func (s *Store) countReplay(ctx context.Context, state webhooks.State, q ops.Query) (int, error) {
	sql, args, err := s.listQuery(s.sql.countReplay[state], state, q, nil, q.Limit)
	if errors.Is(err, errUnstorableFilter) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var n int
	if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM ("+sql+") AS c", args...).Scan(&n); err != nil {
		return 0, wrapErr("replay: counting the items", err)
	}
	return n, nil
}

// replayBatch replays the items keys that are still in state, with their
// offsets, and returns those it replayed in the order of keys.
func (s *Store) replayBatch(ctx context.Context, req ops.ReplayRequest, audit ops.Audit, state webhooks.State, keys []webhooks.InboxKey, offsets []time.Duration) ([]ops.Replayed, error) {
	providers, tenants, ids := make([]string, len(keys)), make([]string, len(keys)), make([]string, len(keys))
	micros := make([]int64, len(keys))
	for i, k := range keys {
		providers[i], tenants[i], ids[i] = k.Provider, k.Tenant, k.EventID
		micros[i] = offsets[i].Microseconds()
	}
	rows, _ := s.pool.Query(ctx, s.sql.replayBatch, providers, tenants, ids, micros,
		s.now(req.Now), !req.KeepAttempts, audit.Action, audit.Actor, audit.Reason, audit.Ticket, string(state))
	due := make(map[webhooks.InboxKey]time.Time, len(keys))
	var (
		k  webhooks.InboxKey
		at time.Time
	)
	_, err := pgx.ForEachRow(rows, []any{&k.Provider, &k.Tenant, &k.EventID, &at}, func() error {
		due[k] = at.UTC()
		return nil
	})
	if err != nil {
		return nil, wrapErr("replay", err)
	}
	// RETURNING has no order; give the items the order of keys.
	done := make([]ops.Replayed, 0, len(due))
	for _, k := range keys {
		if at, ok := due[k]; ok {
			done = append(done, ops.Replayed{Key: k, DueAt: at})
		}
	}
	return done, nil
}

// checkAudited checks an audit entry's actor, reason and ticket. Its
// errors are phrases for the caller's message.
func checkAudited(actor, reason, ticket string) error {
	if strings.TrimSpace(actor) == "" || strings.TrimSpace(reason) == "" {
		return errors.New("an actor and a reason are required")
	}
	for _, f := range []struct{ what, v string }{{"actor", actor}, {"reason", reason}, {"ticket", ticket}} {
		if checkText(f.what, f.v) != nil {
			return fmt.Errorf("the %s is not valid UTF-8 or contains a NUL byte, which PostgreSQL text cannot store", f.what)
		}
	}
	return nil
}

// spreadOffset is the offset from Now of item i of n in a replay spread
// over spread: spread*i/n, computed without overflowing.
func spreadOffset(spread time.Duration, i, n int) time.Duration {
	if spread <= 0 || n <= 0 {
		return 0
	}
	d, m := int64(spread)/int64(n), int64(spread)%int64(n)
	return time.Duration(d*int64(i) + m*int64(i)/int64(n))
}

// CloseDeadLetter implements ops.Store in one statement that closes the
// item and records the closing in its audit trail.
func (s *Store) CloseDeadLetter(ctx context.Context, req ops.CloseRequest) error {
	key := req.Key
	if err := checkAudited(req.Actor, req.Reason, req.Ticket); err != nil {
		return fmt.Errorf("pgstore: close %s: %v; a closing is audited: %w", key, err, ops.ErrInvalidRequest)
	}
	if checkKey(key) != nil { // PostgreSQL cannot hold such a key
		return fmt.Errorf("pgstore: close %q: %w", key.String(), ops.ErrNotFound)
	}
	var (
		closed bool
		state  *string
	)
	err := s.pool.QueryRow(ctx, s.sql.closeOne,
		key.Provider, key.Tenant, key.EventID, s.now(req.Now), req.Actor, req.Reason, req.Ticket,
	).Scan(&closed, &state)
	switch {
	case err != nil:
		return wrapErr("close "+key.String(), err)
	case closed:
		return nil
	case state == nil:
		return fmt.Errorf("pgstore: close %s: %w", key, ops.ErrNotFound)
	default:
		return fmt.Errorf("pgstore: close %s is %s: %w", key, *state, ops.ErrNotDead)
	}
}

// SucceededCountedExactly is how many succeeded items Stats counts one by
// one (through an index, without reading the table); beyond it, the
// succeeded count is estimated from the statistics of that index and
// Stats.SucceededEstimated is set.
const SucceededCountedExactly = 1000

// Stats implements ops.Store in one statement (statsSQL): every count but
// the succeeded one is exact and read through a partial index, so its
// cost grows with the items that are not succeeded (the backlog, the
// leases, the dead letters), not with the table, and its answer with
// req.DeadLetterGroups only (the groups beyond are summed in the same
// statement and not sent); succeeded items are
// counted exactly up to SucceededCountedExactly and estimated beyond, from
// the planner's statistics. It is cheap enough to poll every few seconds
// beside millions of succeeded rows.
func (s *Store) Stats(ctx context.Context, req ops.StatsRequest) (ops.Stats, error) {
	groups, err := req.GroupLimit()
	if err != nil {
		return ops.Stats{}, fmt.Errorf("pgstore: Stats: %w", err)
	}
	var (
		pending, leased, due, retrying, held, closed, succeeded int64
		estimate                                                *int64
		oldest                                                  *time.Time
		providers, eventTypes                                   []string
		counts                                                  []int64
		more                                                    ops.More
	)
	err = s.pool.QueryRow(ctx, s.sql.stats, s.now(req.Now), SucceededCountedExactly, quoteSchema(s.schema)+".inbox_items_succeeded_idx", groups).Scan(
		&pending, &leased, &due, &retrying, &held, &oldest, &closed, &succeeded, &estimate,
		&providers, &eventTypes, &counts, &more.Groups, &more.N)
	if err != nil {
		return ops.Stats{}, wrapErr("stats", err)
	}
	st := ops.Stats{
		States: map[webhooks.State]int64{
			webhooks.StatePending: pending, webhooks.StateLeased: leased, webhooks.StateSucceeded: succeeded,
			webhooks.StateClosed: closed,
		},
		Due:        due,
		Retrying:   retrying,
		LeasesHeld: held,
		OldestDue:  timeOrZero(oldest),
	}
	if succeeded >= SucceededCountedExactly {
		st.SucceededEstimated = true
		if estimate != nil {
			st.States[webhooks.StateSucceeded] = max(succeeded, *estimate)
		}
	}
	dead := more.N
	for i := range providers {
		st.DeadLetters = append(st.DeadLetters, ops.Count{Provider: providers[i], EventType: eventTypes[i], N: counts[i]})
		dead += counts[i]
	}
	st.MoreDeadLetters = more
	st.States[webhooks.StateDead] = dead
	return st, nil
}
