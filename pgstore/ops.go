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
	jobs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ops.Job, error) {
		var (
			r         itemRow
			conflicts int64
		)
		if err := row.Scan(append(r.dest(), &conflicts)...); err != nil {
			return ops.Job{}, err
		}
		it, err := r.item()
		d.Conflicts = int(conflicts)
		return ops.Job{Item: it}, err
	})
	if err != nil {
		return ops.Detail{}, wrapErr("get "+key.String(), err)
	}
	if len(jobs) == 0 {
		return ops.Detail{}, fmt.Errorf("pgstore: get %s: %w", key, ops.ErrNotFound)
	}
	index := make(map[string]int, len(jobs))
	for i, j := range jobs {
		index[j.Handler] = i
	}
	rows, _ = br.Query()
	attempts, err := pgx.CollectRows(rows, scanJobAttempt)
	if err != nil {
		return ops.Detail{}, wrapErr("get the history of "+key.String(), err)
	}
	for _, a := range attempts {
		if i, ok := index[a.handler]; ok {
			jobs[i].History = append(jobs[i].History, a.Attempt)
		}
	}
	rows, _ = br.Query()
	audit, err := pgx.CollectRows(rows, scanJobAudit)
	if err != nil {
		return ops.Detail{}, wrapErr("get the audit trail of "+key.String(), err)
	}
	for _, a := range audit {
		if i, ok := index[a.handler]; ok {
			jobs[i].Audit = append(jobs[i].Audit, a.Audit)
		}
	}
	// The first job (the default handler's, '' sorting first) is the one
	// Item, History and Audit show; the event's payload and headers are
	// Detail's alone.
	d.Item, d.History, d.Audit = jobs[0].Item, jobs[0].History, jobs[0].Audit
	for i := range jobs {
		jobs[i].Payload, jobs[i].Headers = nil, nil
	}
	d.Jobs = jobs
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

// jobAttempt is an attempt of one of an event's jobs.
type jobAttempt struct {
	handler string
	ops.Attempt
}

func scanJobAttempt(row pgx.CollectableRow) (jobAttempt, error) {
	var (
		a                  jobAttempt
		outcome            string
		started            *time.Time
		finished           time.Time
		errClass, errorMsg *string
	)
	if err := row.Scan(&a.handler, &a.Number, &outcome, &started, &finished, &errClass, &errorMsg, &a.Worker, &a.Version); err != nil {
		return jobAttempt{}, err
	}
	a.Outcome = webhooks.AttemptOutcome(outcome)
	a.StartedAt, a.FinishedAt = timeOrZero(started), finished.UTC()
	a.ErrorClass, a.Error = webhooks.FailureClass(deref(errClass)), deref(errorMsg)
	return a, nil
}

// jobAudit is an entry of the audit trail of one of an event's jobs.
type jobAudit struct {
	handler string
	ops.Audit
}

func scanJobAudit(row pgx.CollectableRow) (jobAudit, error) {
	var a jobAudit
	if err := row.Scan(&a.handler, &a.Action, &a.At, &a.Actor, &a.Reason, &a.Ticket); err != nil {
		return jobAudit{}, err
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

// List implements ops.Store. Pages of jobs are read through inbox_jobs_dead_idx
// (closed jobs: inbox_jobs_closed_idx) in its order; the filters the
// index does not hold are checked on the rows it leads to. The statement
// reads neither the payload nor the headers (see summaryColumns).
func (s *Store) List(ctx context.Context, q ops.Query) (ops.Page, error) {
	state, err := q.ListState()
	if err != nil {
		return ops.Page{}, fmt.Errorf("pgstore: List: %w", err)
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
	sql, args, err := s.listQuery(start, state, q, after, nil, q.Limit+1)
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
		page.Next = cursor.Position{State: state, At: at, Key: last.Key, Handler: last.Handler}.String()
	}
	return page, nil
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
// only when set so the planner sees plain equalities, the positions after
// (excluded) and end (a bulk replay's end, included) as row comparisons in
// the index's order, the order, and limit.
func (s *Store) listQuery(start string, state webhooks.State, q ops.Query, after, end *cursor.Position, limit int) (string, []any, error) {
	sql, args, err := s.listOrdered(start, state, q, after, end)
	if err != nil {
		return "", nil, err
	}
	args = append(args, limit)
	return sql + "$" + strconv.Itoa(len(args)), args, nil
}

// listOrdered is listQuery but for the limit: its text ends with LIMIT,
// for the caller to complete.
func (s *Store) listOrdered(start string, state webhooks.State, q ops.Query, after, end *cursor.Position) (string, []any, error) {
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
	handler, hasHandler := "", q.Handler != nil
	if hasHandler {
		handler = *q.Handler
	}
	for _, f := range []struct {
		col, v, what string
		set          bool
	}{
		{"i.provider", q.Provider, "provider", q.Provider != ""},
		{"i.tenant", tenant, "tenant", hasTenant},
		{"i.handler", handler, "handler", hasHandler},
		{"i.event_type", q.EventType, "event type", q.EventType != ""},
		{"i.last_error_class", string(q.ErrorClass), "error class", q.ErrorClass != ""},
		{"e.api_version", q.APIVersion, "API version", q.APIVersion != ""},
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
	bound := func(op string, p *cursor.Position) {
		sql += " AND (" + at + ", i.provider, i.tenant, i.event_id, i.handler) " + op + " (" +
			arg(p.At) + "::timestamptz, " + arg(p.Key.Provider) + ", " +
			arg(p.Key.Tenant) + ", " + arg(p.Key.EventID) + ", " + arg(p.Handler) + "::text)"
	}
	if after != nil {
		bound("<", after)
	}
	if end != nil {
		bound(">=", end)
	}
	return sql + listOrder(strings.TrimPrefix(at, "i.")), args, nil
}

// Replay implements ops.Store. One item is replayed, and audited, in one
// statement. A bulk replay's first call selects up to Query.Limit keys
// through the state's index, newest first, and returns the first
// ops.ReplayBatch of them, their count (Total) and the last (the end of
// the selection, kept in the cursor) in one statement (replayFirstSQL), so
// that what it replays and the Total it reports come from one snapshot;
// each later call reads the keys of up to ops.ReplayBatch items after its
// cursor and down to that end. A call gives each item its due time (Now
// plus its place in the spread, to the microsecond), and replays those
// still in the state in one statement and transaction (replayBatchSQL),
// skipping the others. A dry run only reads. After replaying anything it
// asks for a wake-up on NotifyChannel.
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
	handler := req.Handler
	if req.ToHandler != "" {
		handler = req.ToHandler
	}
	if req.ToHandler != "" && !req.DryRun {
		due, state, err = s.replayTo(ctx, key, req, audit, nil)
	} else if req.DryRun {
		var now time.Time
		err = s.pool.QueryRow(ctx, s.sql.peek, key.Provider, key.Tenant, key.EventID, s.now(req.Now), handler).Scan(&state, &now)
		if err == nil && (state != nil && slices.Contains(operatorReplays, *state) || state == nil && req.ToHandler != "") {
			due, state = &now, nil // (a dry run to another handler does not look for the event)
		}
	} else {
		due, state, err = s.replayItem(ctx, s.pool, key, &req.Handler, s.now(req.Now), nil, !req.KeepAttempts, audit, operatorReplays)
	}
	job := webhooks.JobKey{InboxKey: key, Handler: handler}
	switch {
	case err != nil:
		return ops.ReplayResult{}, wrapErr("replay "+job.String(), err)
	case due != nil:
		if !req.DryRun {
			s.Notify()
		}
		return ops.ReplayResult{Items: []ops.Replayed{{Key: key, Handler: handler, DueAt: due.UTC()}}, Done: 1, Total: 1}, nil
	case state == nil:
		return ops.ReplayResult{}, fmt.Errorf("pgstore: replay %s: %w", job, ops.ErrNotFound)
	default:
		return ops.ReplayResult{}, fmt.Errorf("pgstore: replay %s is %s: %w", job, *state, ops.ErrNotFinished)
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
		c     cursor.Replay // Done and Total before this call
		found []replaySelected
		more  bool // whether items of the selection follow those found
		err   error
	)
	if q.After == "" {
		found, c, err = s.selectReplayFirst(ctx, state, q)
		more = c.Total > len(found)
	} else {
		if c, err = cursor.ParseReplay(q.After, q, req.DryRun); err != nil {
			return ops.ReplayResult{}, fmt.Errorf("pgstore: Replay: %w", err)
		}
		if checkPosition(c.Position) != nil || checkPosition(c.End) != nil {
			return ops.ReplayResult{}, fmt.Errorf("pgstore: Replay: %w", ops.ErrInvalidCursor)
		}
		n := min(ops.ReplayBatch, c.Total-c.Done)
		found, err = s.selectReplayNext(ctx, state, q, c, n+1)
		more = len(found) > n
		found = found[:min(len(found), n)]
	}
	if err != nil {
		return ops.ReplayResult{}, err
	}
	if len(found) == 0 {
		return ops.ReplayResult{Done: c.Total, Total: c.Total}, nil
	}
	keys := make([]webhooks.JobKey, len(found))
	offsets := make([]time.Duration, len(found))
	for i, sel := range found {
		keys[i] = sel.job
		offsets[i] = req.SpreadOffset(c.Done+i, c.Total).Truncate(time.Microsecond)
	}
	res := ops.ReplayResult{Done: c.Done + len(found), Total: c.Total}
	if more && res.Done < c.Total {
		last := found[len(found)-1]
		next := c
		next.Position = cursor.Position{State: state, At: last.at.UTC(), Key: last.job.InboxKey, Handler: last.job.Handler}
		next.Done, next.DryRun = res.Done, req.DryRun
		res.Next = next.String()
	} else {
		res.Done = c.Total // what is left of the selection left the state
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
			h := k.Handler
			if req.ToHandler != "" {
				h = req.ToHandler
			}
			res.Items[i] = ops.Replayed{Key: k.InboxKey, Handler: h, DueAt: now.Add(offsets[i]).UTC()}
		}
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

// replaySelected is an item a bulk replay selected, and the time it is
// ordered by.
type replaySelected struct {
	job webhooks.JobKey
	at  time.Time
}

// selectReplayFirst selects the items of a bulk replay's first call, in
// one statement: up to ops.ReplayBatch of the items in state q selects,
// newest first, and returns them with the replay's cursor as it begins:
// Total, how many items q selects up to q.Limit, and End, the last of
// them.
func (s *Store) selectReplayFirst(ctx context.Context, state webhooks.State, q ops.Query) ([]replaySelected, cursor.Replay, error) {
	sql, args, err := s.listOrdered(s.sql.selectReplay[state], state, q, nil, nil)
	if errors.Is(err, errUnstorableFilter) {
		return nil, cursor.Replay{}, nil // no stored item can match
	}
	if err != nil {
		return nil, cursor.Replay{}, err
	}
	args = append(args, q.Limit, ops.ReplayBatch)
	sql = replayFirstSQL(sql, "$"+strconv.Itoa(len(args)-1), "$"+strconv.Itoa(len(args)))
	rows, _ := s.pool.Query(ctx, sql, args...)
	var (
		found   []replaySelected
		sel     replaySelected
		part, n int
		c       cursor.Replay
		scanned = []any{&part, &sel.job.Provider, &sel.job.Tenant, &sel.job.EventID, &sel.job.Handler, &sel.at, &n}
	)
	_, err = pgx.ForEachRow(rows, scanned, func() error {
		if part == 1 {
			found = append(found, sel)
		} else {
			c.Total, c.End = n, cursor.Position{State: state, At: sel.at.UTC(), Key: sel.job.InboxKey, Handler: sel.job.Handler}
		}
		return nil
	})
	if err != nil {
		return nil, cursor.Replay{}, wrapErr("replay: selecting the items", err)
	}
	return found, c, nil
}

// selectReplayNext selects up to limit items of a later call of the bulk
// replay c of the items in state q selects: after c's position, down to
// its end.
func (s *Store) selectReplayNext(ctx context.Context, state webhooks.State, q ops.Query, c cursor.Replay, limit int) ([]replaySelected, error) {
	sql, args, err := s.listQuery(s.sql.selectReplay[state], state, q, &c.Position, &c.End, limit)
	if errors.Is(err, errUnstorableFilter) {
		return nil, nil // no stored item can match
	}
	if err != nil {
		return nil, err
	}
	rows, _ := s.pool.Query(ctx, sql, args...)
	found, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (replaySelected, error) {
		var sel replaySelected
		err := row.Scan(&sel.job.Provider, &sel.job.Tenant, &sel.job.EventID, &sel.job.Handler, &sel.at)
		return sel, err
	})
	if err != nil {
		return nil, wrapErr("replay: selecting the items", err)
	}
	return found, nil
}

// replayBatch replays the items keys that are still in state, with their
// offsets, and returns those it replayed in the order of keys.
func (s *Store) replayBatch(ctx context.Context, req ops.ReplayRequest, audit ops.Audit, state webhooks.State, keys []webhooks.JobKey, offsets []time.Duration) ([]ops.Replayed, error) {
	if req.ToHandler != "" {
		var done []ops.Replayed
		for i, k := range keys {
			dueAt := s.now(req.Now)
			if dueAt != nil {
				t := dueAt.Add(offsets[i])
				dueAt = &t
			}
			at, _, err := s.replayTo(ctx, k.InboxKey, req, audit, dueAt)
			if err != nil {
				return nil, wrapErr("replay "+k.InboxKey.String()+" to "+req.ToHandler, err)
			}
			if at != nil {
				done = append(done, ops.Replayed{Key: k.InboxKey, Handler: req.ToHandler, DueAt: at.UTC()})
			}
		}
		return done, nil
	}
	providers, tenants, ids := make([]string, len(keys)), make([]string, len(keys)), make([]string, len(keys))
	handlers := make([]string, len(keys))
	micros := make([]int64, len(keys))
	for i, k := range keys {
		providers[i], tenants[i], ids[i], handlers[i] = k.Provider, k.Tenant, k.EventID, k.Handler
		micros[i] = offsets[i].Microseconds()
	}
	rows, _ := s.pool.Query(ctx, s.sql.replayBatch, providers, tenants, ids, micros,
		s.now(req.Now), !req.KeepAttempts, audit.Action, audit.Actor, audit.Reason, audit.Ticket, string(state), handlers)
	due := make(map[webhooks.JobKey]time.Time, len(keys))
	var (
		k  webhooks.JobKey
		at time.Time
	)
	_, err := pgx.ForEachRow(rows, []any{&k.Provider, &k.Tenant, &k.EventID, &k.Handler, &at}, func() error {
		due[k] = at.UTC()
		return nil
	})
	if err != nil {
		return nil, wrapErr("replay", err)
	}
	// The jobs of ordered keys, which the statement leaves out (and those
	// that left the state meanwhile), one statement each.
	for i, k := range keys {
		if _, ok := due[k]; ok {
			continue
		}
		dueAt := s.now(req.Now)
		if dueAt != nil {
			t := dueAt.Add(offsets[i])
			dueAt = &t
		}
		h := k.Handler
		at, _, err := s.replayItem(ctx, s.pool, k.InboxKey, &h, s.now(req.Now), dueAt, !req.KeepAttempts, audit, []string{string(state)})
		if err != nil {
			return nil, wrapErr("replay "+k.String(), err)
		}
		if at != nil {
			due[k] = at.UTC()
		}
	}
	// RETURNING has no order; give the items the order of keys.
	done := make([]ops.Replayed, 0, len(due))
	for _, k := range keys {
		if at, ok := due[k]; ok {
			done = append(done, ops.Replayed{Key: k.InboxKey, Handler: k.Handler, DueAt: at})
		}
	}
	return done, nil
}

// replayTo replays the event key to req.ToHandler (ops.ReplayRequest):
// in one transaction, it locks the event (lockEventSQL), then creates the
// job of that handler (replayToSQL) or, when the event has a finished one,
// replays it as replayOneSQL does, with a fresh budget; one under way is
// left as it is. It returns the job's due time when it created or
// replayed it, else its state (nil: no such event).
func (s *Store) replayTo(ctx context.Context, key webhooks.InboxKey, req ops.ReplayRequest, a ops.Audit, dueAt *time.Time) (*time.Time, *string, error) {
	if checkKey(key) != nil {
		return nil, nil, nil
	}
	var (
		due, replayed *time.Time
		state         *string
		found         bool
	)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var id string
		switch err := tx.QueryRow(ctx, s.sql.lockEvent, key.Provider, key.Tenant, key.EventID).Scan(&id); {
		case errors.Is(err, pgx.ErrNoRows):
			return nil
		case err != nil:
			return err
		}
		found = true
		if err := tx.QueryRow(ctx, s.sql.replayTo, key.Provider, key.Tenant, key.EventID, s.now(req.Now), req.ToOrdered,
			a.Action, a.Actor, a.Reason, a.Ticket, dueAt, req.ToHandler, req.ToPriority).Scan(&due, &state); err != nil {
			return err
		}
		if due != nil || state == nil || !slices.Contains(operatorReplays, *state) {
			return nil
		}
		h := req.ToHandler
		var err error
		replayed, state, err = s.replayItem(ctx, tx, key, &h, s.now(req.Now), dueAt, true, a, operatorReplays)
		return err
	})
	switch {
	case err != nil:
		return nil, nil, err
	case !found:
		return nil, nil, nil
	case due != nil:
		return due, nil, nil
	case replayed != nil:
		return replayed, nil, nil
	case state == nil:
		// Cannot happen: an event that exists gets a job or has one.
		return nil, nil, fmt.Errorf("pgstore: replay %s to %s: no job made", key, req.ToHandler)
	}
	return nil, state, nil
}

// checkAudited checks that an audit entry's actor, reason and ticket are
// storable as PostgreSQL text (the request's Check made sure the first
// two are given). Its errors are phrases for the caller's message.
func checkAudited(actor, reason, ticket string) error {
	for _, f := range []struct{ what, v string }{{"actor", actor}, {"reason", reason}, {"ticket", ticket}} {
		if checkText(f.what, f.v) != nil {
			return fmt.Errorf("the %s is not valid UTF-8 or contains a NUL byte, which PostgreSQL text cannot store", f.what)
		}
	}
	return nil
}

// CloseDeadLetter implements ops.Store in one statement that closes the
// item and records the closing in its audit trail.
func (s *Store) CloseDeadLetter(ctx context.Context, req ops.CloseRequest) error {
	key := req.Key
	if err := req.Check(); err != nil {
		return fmt.Errorf("pgstore: close %s: %w", key, err)
	}
	if err := checkAudited(req.Actor, req.Reason, req.Ticket); err != nil {
		return fmt.Errorf("pgstore: close %s: %v; a closing is audited: %w", key, err, ops.ErrInvalidRequest)
	}
	if checkKey(key) != nil { // PostgreSQL cannot hold such a key
		return fmt.Errorf("pgstore: close %q: %w", key.String(), ops.ErrNotFound)
	}
	job := webhooks.JobKey{InboxKey: key, Handler: req.Handler}
	var (
		closed bool
		state  *string
	)
	err := s.pool.QueryRow(ctx, s.sql.closeOne,
		key.Provider, key.Tenant, key.EventID, s.now(req.Now), req.Actor, req.Reason, req.Ticket, req.Handler,
	).Scan(&closed, &state)
	switch {
	case err != nil:
		return wrapErr("close "+job.String(), err)
	case closed:
		return nil
	case state == nil:
		return fmt.Errorf("pgstore: close %s: %w", job, ops.ErrNotFound)
	default:
		return fmt.Errorf("pgstore: close %s is %s: %w", job, *state, ops.ErrNotDead)
	}
}

// SucceededCountedExactly is how many succeeded items Stats counts one by
// one (through an index, without reading the table); beyond it, the
// succeeded count is estimated from the statistics of that index and
// Stats.SucceededEstimated is set.
const SucceededCountedExactly = 1000

// Stats implements ops.Store in one statement (statsSQL), and a second
// for the pauses in force (pausesSQL, a few rows): every count but
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
	heldLimit, err := req.HeldKeyLimit()
	if err != nil {
		return ops.Stats{}, fmt.Errorf("pgstore: Stats: %w", err)
	}
	var (
		phHandlers                                     []string
		phPending, phLeased, phDue, phRetrying, phHeld []int64
		phOldest                                       []*time.Time
		phWaiting, phDead, phClosed                    []int64
		hkHandlers, hkProviders, hkTenants, hkKeys     []string
		hkDepths                                       []int64
		hkHeads                                        []string
		hkAttempts                                     []int32
		hkClasses, hkMessages                          []*string
		hkErrorAts                                     []*time.Time
		hkNexts                                        []string
		hkNextReceived                                 []time.Time
		moreHeld, parked                               int64
		phParked                                       []int64
	)
	var (
		pending, leased, due, retrying, held, closed, succeeded int64
		waiting                                                 int64
		estimate                                                *int64
		oldest                                                  *time.Time
		handlers, providers, eventTypes                         []string
		counts                                                  []int64
		more                                                    ops.More
	)
	err = s.pool.QueryRow(ctx, s.sql.stats, s.now(req.Now), SucceededCountedExactly, quoteSchema(s.schema)+".inbox_jobs_succeeded_idx", groups, heldLimit).Scan(
		&pending, &leased, &due, &retrying, &held, &oldest, &waiting, &closed, &succeeded, &estimate,
		&handlers, &providers, &eventTypes, &counts, &more.Groups, &more.N,
		&phHandlers, &phPending, &phLeased, &phDue, &phRetrying, &phHeld, &phOldest, &phWaiting, &phDead, &phClosed,
		&hkHandlers, &hkProviders, &hkTenants, &hkKeys, &hkDepths, &hkHeads, &hkAttempts, &hkClasses, &hkMessages, &hkErrorAts,
		&hkNexts, &hkNextReceived, &moreHeld, &parked, &phParked)
	if err != nil {
		return ops.Stats{}, wrapErr("stats", err)
	}
	st := ops.Stats{
		States: map[webhooks.State]int64{
			webhooks.StatePending: pending, webhooks.StateLeased: leased, webhooks.StateSucceeded: succeeded,
			webhooks.StateClosed: closed,
		},
		Due:        due,
		Parked:     parked,
		Retrying:   retrying,
		LeasesHeld: held,
		OldestDue:  timeOrZero(oldest),
	}
	if waiting > 0 {
		st.States[webhooks.StateWaiting] = waiting
	}
	if succeeded >= SucceededCountedExactly {
		st.SucceededEstimated = true
		if estimate != nil {
			st.States[webhooks.StateSucceeded] = max(succeeded, *estimate)
		}
	}
	dead := more.N
	for i := range providers {
		st.DeadLetters = append(st.DeadLetters, ops.Count{Handler: handlers[i], Provider: providers[i], EventType: eventTypes[i], N: counts[i]})
		dead += counts[i]
	}
	st.MoreDeadLetters = more
	st.States[webhooks.StateDead] = dead
	for i, h := range phHandlers {
		hs := ops.HandlerStats{
			Handler: h,
			States: map[webhooks.State]int64{webhooks.StatePending: phPending[i], webhooks.StateLeased: phLeased[i],
				webhooks.StateDead: phDead[i], webhooks.StateClosed: phClosed[i]},
			Due: phDue[i], Parked: phParked[i], Retrying: phRetrying[i], LeasesHeld: phHeld[i], OldestDue: timeOrZero(phOldest[i]),
		}
		if phWaiting[i] > 0 {
			hs.States[webhooks.StateWaiting] = phWaiting[i]
		}
		st.Handlers = append(st.Handlers, hs)
	}
	for i := range hkHandlers {
		hk := ops.HeldKey{
			Handler: hkHandlers[i], Provider: hkProviders[i], Tenant: hkTenants[i], Key: hkKeys[i], Depth: hkDepths[i],
			Head:           webhooks.InboxKey{Provider: hkProviders[i], Tenant: hkTenants[i], EventID: hkHeads[i]},
			HeadAttempts:   int(hkAttempts[i]),
			Next:           webhooks.InboxKey{Provider: hkProviders[i], Tenant: hkTenants[i], EventID: hkNexts[i]},
			NextReceivedAt: hkNextReceived[i].UTC(),
		}
		if hkClasses[i] != nil {
			hk.HeadError = &webhooks.ErrorRecord{Class: webhooks.FailureClass(*hkClasses[i]), Message: deref(hkMessages[i]), At: timeOrZero(hkErrorAts[i])}
		}
		st.HeldKeys = append(st.HeldKeys, hk)
	}
	st.MoreHeldKeys = moreHeld
	if st.Paused, err = s.Pauses(ctx, 0); err != nil {
		return ops.Stats{}, err
	}
	return st, nil
}
