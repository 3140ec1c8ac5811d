package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	webhooks "github.com/hookinbox/webhooks"
)

// Acquire implements webhooks.LeaseStore: it leases up to req.Max due
// items in one statement and returns them the longest due first, ties in
// key order. Due rows are locked with FOR UPDATE SKIP LOCKED and each is
// given a fresh token (gen_random_uuid), expiry and attempt number, and
// req.Worker and req.Version for its history; asked for held leases
// (req.Hold), it starts only the first req.Start and holds the others and
// every reclaimed one (see webhooks.LeaseStarter). Lease.Reclaimed is
// computed by the same statement, from the row as it was locked, and kept
// on the row; the same statement records the attempt of each expired
// started lease it takes over as crashed. Rows that other transactions
// are leasing at that moment are skipped, so it may return fewer than
// req.Max items while more are due.
//
// With req.ID, the leases are granted under that ID, for
// RepeatAcquisition. With req.Limits, no more than they allow (see Flow);
// with req.Priorities, the jobs of those priorities first
// (acquirePrioritizedSQL).
//
// A leased row that cannot be read into a webhooks.Item (only a row changed
// outside pgstore, or written by a newer version of it, can be unreadable)
// is not returned: it is logged (see WithLogger) and given back at once,
// pending again, due when its lease would have expired and without the
// attempt being counted, so an instance that can read it may take it then.
// The rows that were read are returned; when none was, the result is an
// error. Either way no lease is left held under a token nobody has.
func (s *Store) Acquire(ctx context.Context, req webhooks.AcquireRequest) ([]*webhooks.Lease, error) {
	if err := req.Check(); err != nil {
		return nil, fmt.Errorf("pgstore: Acquire: %w", err)
	}
	start := req.Max
	if req.Hold {
		start = req.Start
	}
	if err := checkDuration("Acquire", "lease duration", req.LeaseDuration); err != nil {
		return nil, err
	}
	for _, f := range []struct{ what, v string }{{"worker", req.Worker}, {"version", req.Version}, {"acquisition ID", req.ID}} {
		if err := checkText(f.what, f.v); err != nil {
			return nil, err
		}
	}
	var id *string // NULL: no acquisition ID
	if req.ID != "" {
		id = &req.ID
	}
	if err := webhooks.CheckHandlerName(req.Handler); err != nil {
		return nil, fmt.Errorf("pgstore: Acquire: %w", err)
	}
	args := []any{s.now(req.Now), req.LeaseDuration.Microseconds(), req.Max, req.Worker, req.Version, id, req.Hold, start, req.Handler}
	query := func() (pgx.Rows, func() error, error) {
		rows, err := s.pool.Query(ctx, s.sql.acquire, args...)
		return rows, nil, err
	}
	if len(req.Priorities) > 0 {
		query = func() (pgx.Rows, func() error, error) {
			rows, err := s.pool.Query(ctx, s.sql.acquirePrioritized, append(args, req.Priorities)...)
			return rows, nil, err
		}
	}
	if !req.Limits.IsZero() || req.Fair {
		query = func() (pgx.Rows, func() error, error) { return s.acquireLimited(ctx, req, args) }
	}
	leases, err := s.leases(ctx, "Acquire", req.Now, query)
	if err != nil && len(leases) == 0 {
		err = s.explainMissing(ctx, err)
	}
	return leases, err
}

// RepeatAcquisition implements webhooks.AcquisitionRepeater in one
// statement (repeatSQL) that changes nothing. It reads the leased rows and
// the retries not yet due, through inbox_jobs_due_idx, or a scan of the
// table where many retries are scheduled: it costs more than an
// acquisition, and only follows an acquisition error.
func (s *Store) RepeatAcquisition(ctx context.Context, req webhooks.RepeatRequest) ([]*webhooks.Lease, error) {
	if req.ID == "" {
		return nil, nil
	}
	if err := checkText("acquisition ID", req.ID); err != nil {
		return nil, nil // no lease can be granted under an ID PostgreSQL cannot hold
	}
	if webhooks.CheckHandlerName(req.Handler) != nil {
		return nil, nil // no job has such a handler
	}
	return s.leases(ctx, "RepeatAcquisition", req.Now, func() (pgx.Rows, func() error, error) {
		rows, err := s.pool.Query(ctx, s.sql.repeat, s.now(req.Now), req.ID, req.Handler)
		return rows, nil, err
	})
}

// releaseTimeout bounds giving back an unreadable row.
const releaseTimeout = 5 * time.Second

// unreadable is an acquired row that could not be decoded.
type unreadable struct {
	key   webhooks.JobKey
	token string
	err   error
}

// leases runs query (of acquireSQL, acquireLimitedSQL or repeatSQL) and
// returns the leases of the rows it returns, in the order of their rank;
// rows that cannot be read are given back as of now. The query may
// return a finish function, called once its rows are read (the commit of
// a batch): when it fails, nothing was leased.
func (s *Store) leases(ctx context.Context, op string, now time.Time, query func() (pgx.Rows, func() error, error)) ([]*webhooks.Lease, error) {
	rows, finish, err := query()
	if err != nil {
		return nil, wrapErr(op, err)
	}
	defer rows.Close()
	type acquired struct {
		rank  int64
		lease *webhooks.Lease
	}
	var (
		got   []acquired
		bad   []unreadable
		plans = make([]pgtype.ScanPlan, 6+itemColumnCount) // decodeRow's, for every row
	)
	for rows.Next() {
		// Each column is decoded on its own (decodeRow), so an unreadable
		// row does not end the iteration and leave the rest of the batch
		// leased to nobody, as rows.Scan would.
		var (
			a                    acquired
			reclaimed, unstarted bool
			probe                bool
			token                string
			applied              *int64
			r                    itemRow
		)
		dest := r.dest(&a.rank, &reclaimed, &unstarted, &token, &probe, &applied)
		const keyColumns = 9 // rank, reclaimed, unstarted, token, probe, applied, provider, tenant, event_id
		failed, err := decodeRow(rows, dest, plans)
		if err != nil && failed < keyColumns {
			// Cannot happen for text and uuid columns; nothing to give back.
			s.logger.ErrorContext(ctx, "pgstore: an acquired item could not be read, not even its key; it stays leased until its lease expires",
				"op", op, "error", err)
			continue
		}
		key := webhooks.JobKey{InboxKey: webhooks.InboxKey{Provider: r.provider, Tenant: r.tenant, EventID: r.eventID}}
		if failed > len(dest)-6 { // the handler column (after the five before it) was read
			key.Handler = r.handler
		}
		if err != nil {
			bad = append(bad, unreadable{key, token, err})
			continue
		}
		it, err := r.item()
		if err != nil {
			bad = append(bad, unreadable{key, token, err})
			continue
		}
		attempt := it.Attempts
		if unstarted {
			attempt++ // the number it will have
		}
		a.lease = &webhooks.Lease{Token: token, ExpiresAt: it.LeaseExpiresAt, Attempt: attempt, Reclaimed: reclaimed, Held: unstarted, Probe: probe, Item: it}
		if applied != nil {
			a.lease.Applied = *applied
		}
		got = append(got, a)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		if finish != nil {
			_ = finish()
		}
		return nil, wrapErr(op, err)
	}
	if finish != nil {
		if err := finish(); err != nil {
			return nil, wrapErr(op, err)
		}
	}
	for _, u := range bad {
		s.release(ctx, op, u, now)
	}
	if len(got) == 0 && len(bad) > 0 {
		return nil, fmt.Errorf("pgstore: %s: %d due item(s) could not be read, such as %s (%v); they were given back and are due again after the lease duration",
			op, len(bad), bad[0].key, bad[0].err)
	}
	// RETURNING follows the plan; restore the order of the statement's
	// rank, which chose the leases that started (a repeat's is the
	// priority's, negated: the highest first).
	slices.SortStableFunc(got, func(a, b acquired) int { return cmp.Compare(a.rank, b.rank) })
	leases := make([]*webhooks.Lease, len(got))
	for i, a := range got {
		leases[i] = a.lease
	}
	return leases, nil
}

// release gives back an acquired row that could not be read (releaseSQL),
// logging why. If even that fails, the row waits out its lease.
func (s *Store) release(ctx context.Context, op string, u unreadable, now time.Time) {
	s.logger.ErrorContext(ctx, "pgstore: an acquired item could not be read; giving it back, due again after the lease duration",
		"op", op, "key", u.key.String(), "error", u.err)
	// Giving the row back must not be cut short with the caller's context:
	// the lease would then be held by nobody until it expires.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	args, err := leaseArgs(&webhooks.Lease{Token: u.token, Item: webhooks.Item{Key: u.key.InboxKey, Handler: u.key.Handler}}, s.now(now))
	if err == nil {
		var tag pgconn.CommandTag
		tag, err = s.pool.Exec(rctx, s.sql.release, args...)
		if err == nil && tag.RowsAffected() == 0 {
			err = webhooks.ErrLeaseLost
		}
	}
	if err != nil {
		s.logger.ErrorContext(ctx, "pgstore: giving back an unreadable item failed; it stays leased until its lease expires",
			"op", op, "key", u.key.String(), "error", err)
	}
}

// decodeRow decodes the current row's columns into dest one by one, so a
// column that cannot be decoded does not close rows (rows.Scan would). It
// returns the index of the column that failed. plans holds each column's
// scan plan, made at its first row: the rows of one query have the same
// column types, and dest the same types at every row, so a plan serves
// them all (as rows.Scan keeps its own).
func decodeRow(rows pgx.Rows, dest []any, plans []pgtype.ScanPlan) (int, error) {
	fds := rows.FieldDescriptions()
	raw := rows.RawValues()
	if len(fds) != len(dest) || len(raw) != len(dest) || len(plans) != len(dest) {
		return 0, fmt.Errorf("the row has %d columns; want %d", len(raw), len(dest))
	}
	m := rows.TypeMap()
	for i, d := range dest {
		if plans[i] == nil {
			plans[i] = m.PlanScan(fds[i].DataTypeOID, fds[i].Format, d)
		}
		if err := plans[i].Scan(raw[i], d); err != nil {
			return i, fmt.Errorf("column %s: %w", fds[i].Name, err)
		}
	}
	return len(dest), nil
}

// StartLeases implements webhooks.LeaseStarter in one statement
// (startSQL), each lease fenced by its own token. A lease given twice is
// started once; every copy gets the same answer.
func (s *Store) StartLeases(ctx context.Context, req webhooks.StartRequest) []error {
	errs := make([]error, len(req.Leases))
	fail := func(err error) []error {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
		return errs
	}
	if err := req.Check(); err != nil {
		return fail(fmt.Errorf("pgstore: StartLeases: %w", err))
	}
	if err := checkDuration("StartLeases", "lease duration", req.Duration); err != nil {
		return fail(err)
	}
	// The first position of each lease, in key order, as startSQL wants
	// them. (Two tokens of one key are two leases: at most one is current.)
	type leaseID struct {
		job   webhooks.JobKey
		token string
	}
	first := make(map[leaseID]int, len(req.Leases))
	var order []int
	for i, l := range req.Leases {
		if l == nil {
			errs[i] = errors.New("pgstore: StartLeases needs leases; got nil")
			continue
		}
		if _, err := leaseArgs(l); err != nil {
			errs[i] = fmt.Errorf("pgstore: start lease %s: %w", l.Job(), err)
			continue
		}
		if _, dup := first[leaseID{l.Job(), l.Token}]; !dup {
			first[leaseID{l.Job(), l.Token}] = i
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return req.Leases[a].Job().Compare(req.Leases[b].Job()) })
	n := len(order)
	if n == 0 {
		return errs
	}
	providers, tenants, eventIDs, tokens := make([]string, n), make([]string, n), make([]string, n), make([]pgtype.UUID, n)
	handlers := make([]string, n)
	for j, i := range order {
		k := req.Leases[i].Job()
		providers[j], tenants[j], eventIDs[j], handlers[j] = k.Provider, k.Tenant, k.EventID, k.Handler
		tok, _ := uuid.Parse(req.Leases[i].Token) // checked by leaseArgs
		tokens[j] = pgtype.UUID{Bytes: tok, Valid: true}
	}
	rows, err := s.pool.Query(ctx, s.sql.start, providers, tenants, eventIDs, tokens, s.now(req.Now), req.Duration.Microseconds(), handlers)
	if err != nil {
		return fail(wrapErr("start leases", err))
	}
	defer rows.Close()
	answered := 0
	for rows.Next() {
		var (
			pos              int64
			changed, settled bool
		)
		if err := rows.Scan(&pos, &changed, &settled); err != nil {
			return fail(wrapErr("start leases", err))
		}
		if pos < 1 || pos > int64(n) {
			return fail(fmt.Errorf("pgstore: start leases: the statement returned row %d of %d", pos, n))
		}
		l := req.Leases[order[pos-1]]
		var lerr error
		switch {
		case changed:
		case settled:
			lerr = fmt.Errorf("pgstore: start lease %s: %w", l.Job(), webhooks.ErrAlreadySettled)
		default:
			lerr = fmt.Errorf("pgstore: start lease %s: %w", l.Job(), webhooks.ErrLeaseLost)
		}
		for i, o := range req.Leases { // the copies of the lease too
			if o != nil && errs[i] == nil && o.Job() == l.Job() && o.Token == l.Token {
				errs[i] = lerr
			}
		}
		answered++
	}
	if err := rows.Err(); err != nil {
		return fail(wrapErr("start leases", err))
	}
	if answered != n {
		return fail(fmt.Errorf("pgstore: start leases: the statement answered for %d of %d leases", answered, n))
	}
	return errs
}

// Settle implements webhooks.LeaseStore with one UPDATE per outcome,
// fenced by the lease token, that records the attempt in the item's
// history in the same statement; when it changes nothing, the same
// statement tells ErrAlreadySettled from ErrLeaseLost. A lost lease whose
// attempt was recorded as crashed when another worker took the item over
// is then recorded as lease_lost, by a statement of its own (only on that
// path). With the database clock, a retried item is due
// s.RetryAt.Sub(s.Now) after the server's now().
func (s *Store) Settle(ctx context.Context, st webhooks.Settlement) error {
	if err := st.Check(); err != nil {
		return fmt.Errorf("pgstore: Settle: %w", err)
	}
	if endsOrderedHead(st) {
		// The statement that promotes the key's next job, after the key's
		// lock (see lockKeysSQL).
		return s.SettleBatch(ctx, []webhooks.Settlement{st})[0]
	}
	now := s.now(st.Now)
	// The Processor hands over storable messages; a caller's that are not
	// are made storable rather than failing the settlement.
	class, msg := sanitizeText(string(st.Failure.Class)), sanitizeText(st.Failure.Message)
	var (
		sql            string
		args           []any
		failed, reason *string // the failure, for a lease lost
	)
	switch st.Outcome {
	case webhooks.AttemptSucceeded:
		note, noteMsg := failureOf(st)
		sql, args = s.sql.succeed, []any{now, note, noteMsg}
	case webhooks.AttemptRetried:
		var retryAt *time.Time
		if !s.dbClock {
			retryAt = &st.RetryAt
		}
		sql, args = s.sql.retry, []any{now, retryAt, st.RetryAt.Sub(st.Now).Microseconds(), class, msg}
		failed, reason = &class, &msg
	case webhooks.AttemptDeadLettered:
		sql, args = s.sql.deadLetter, []any{now, class, msg}
		failed, reason = &class, &msg
	default: // webhooks.AttemptAbandoned
		sql, args = s.sql.abandon, []any{now}
	}
	err := s.fenced(ctx, s.pool, "settle ("+string(st.Outcome)+")", st.Lease, sql, args...)
	if errors.Is(err, webhooks.ErrLeaseLost) {
		s.leaseLost(ctx, st.Lease, now, failed, reason)
	}
	return err
}

// failureOf returns the failure a settlement carries, storable: its class
// and message for a retried or dead-lettered attempt, and for a succeeded
// one with a note (webhooks.Settlement.Failure); nil, nil otherwise.
func failureOf(st webhooks.Settlement) (class, msg *string) {
	switch st.Outcome {
	case webhooks.AttemptRetried, webhooks.AttemptDeadLettered:
	case webhooks.AttemptSucceeded:
		if st.Failure.Class == "" && st.Failure.Message == "" {
			return nil, nil
		}
	default:
		return nil, nil
	}
	c, m := sanitizeText(string(st.Failure.Class)), sanitizeText(st.Failure.Message)
	return &c, &m
}

// SettleBatch implements webhooks.BatchSettler: it settles the leases of
// settlements in one statement (settleBatchSQL), one round trip and one
// commit, each fenced by its own token and recorded in the item's history
// exactly as Settle would, with the same errors: a stale token fails its
// own settlement alone with webhooks.ErrLeaseLost (or ErrAlreadySettled),
// and a settlement without a lease or with an unknown outcome is refused
// alone. As with Settle, a refused settlement whose attempt was recorded
// as crashed is then recorded as lease_lost, by a statement of its own
// (only on that path). Settlements of an item that appears more than once are applied in
// order, as by consecutive calls of Settle: each repeat goes in a
// statement of its own after the first. When a statement fails, its
// settlements and the later ones hold the error; earlier statements have
// committed.
func (s *Store) SettleBatch(ctx context.Context, settlements []webhooks.Settlement) []error {
	errs := make([]error, len(settlements))
	// rounds[r] holds the positions of the r-th settlement of each key.
	var (
		rounds [][]int
		seen   = make(map[webhooks.JobKey]int, len(settlements))
	)
	for i, st := range settlements {
		if err := st.Check(); err != nil {
			errs[i] = fmt.Errorf("pgstore: Settle: %w", err)
			continue
		}
		if _, err := leaseArgs(st.Lease); err != nil {
			errs[i] = fmt.Errorf("pgstore: settle (%s) %s: %w", st.Outcome, st.Lease.Key(), err)
			continue
		}
		r := seen[st.Lease.Job()]
		seen[st.Lease.Job()] = r + 1
		if r == len(rounds) {
			rounds = append(rounds, nil)
		}
		rounds[r] = append(rounds[r], i)
	}
	for r, round := range rounds {
		if err := s.settleRound(ctx, settlements, round, errs); err != nil {
			for _, later := range rounds[r:] {
				for _, i := range later {
					errs[i] = wrapErr("settle "+string(settlements[i].Outcome)+" "+settlements[i].Lease.Key().String()+" in a batch", err)
				}
			}
			break
		}
	}
	return errs
}

// settleRound runs settleBatchSQL for the settlements at positions round,
// whose keys are distinct and whose leases are well-formed, and stores
// each one's error in errs. It returns the statement's own failure.
func (s *Store) settleRound(ctx context.Context, settlements []webhooks.Settlement, round []int, errs []error) error {
	// In key order, as settleBatchSQL's plan updates the rows.
	slices.SortFunc(round, func(a, b int) int { return settlements[a].Lease.Job().Compare(settlements[b].Lease.Job()) })
	n := len(round)
	var (
		providers, tenants, eventIDs, outcomes = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		handlers                               = make([]string, n)
		tokens                                 = make([]pgtype.UUID, n)
		nows, retryAts                         = make([]*time.Time, n), make([]*time.Time, n)
		retryDelays                            = make([]int64, n)
		classes, messages                      = make([]*string, n), make([]*string, n)
	)
	for j, i := range round {
		st := settlements[i]
		k := st.Lease.Job()
		providers[j], tenants[j], eventIDs[j], outcomes[j] = k.Provider, k.Tenant, k.EventID, string(st.Outcome)
		handlers[j] = k.Handler
		tok, _ := uuid.Parse(st.Lease.Token) // checked by leaseArgs
		tokens[j] = pgtype.UUID{Bytes: tok, Valid: true}
		nows[j] = s.now(st.Now)
		classes[j], messages[j] = failureOf(st)
		if st.Outcome == webhooks.AttemptRetried {
			if !s.dbClock {
				retryAts[j] = &settlements[i].RetryAt
			}
			retryDelays[j] = st.RetryAt.Sub(st.Now).Microseconds()
		}
	}
	answers, promoted, err := s.settleStatement(ctx, s.pool, keysToLock(settlements, round),
		providers, tenants, eventIDs, tokens, outcomes, nows, retryAts, retryDelays, classes, messages, handlers)
	if err != nil {
		return err
	}
	if promoted > 0 {
		s.Notify()
	}
	answered := 0
	var lost []int
	for _, a := range answers {
		pos, changed, settled := a.pos, a.changed, a.settled
		if pos < 1 || pos > int64(n) {
			return fmt.Errorf("the statement returned row %d of %d", pos, n)
		}
		st := settlements[round[pos-1]]
		op := "settle (" + string(st.Outcome) + ")"
		switch {
		case changed:
			errs[round[pos-1]] = nil
		case settled:
			errs[round[pos-1]] = fmt.Errorf("pgstore: %s %s: %w", op, st.Lease.Job(), webhooks.ErrAlreadySettled)
		default:
			errs[round[pos-1]] = fmt.Errorf("pgstore: %s %s: %w", op, st.Lease.Job(), webhooks.ErrLeaseLost)
			lost = append(lost, round[pos-1])
		}
		answered++
	}
	if answered != n {
		return fmt.Errorf("the statement answered for %d of %d settlements", answered, n)
	}
	for _, i := range lost {
		st := settlements[i]
		var class, msg *string
		if st.Outcome != webhooks.AttemptSucceeded { // a success's note is no failure of the lost attempt
			class, msg = failureOf(st)
		}
		s.leaseLost(ctx, st.Lease, s.now(st.Now), class, msg)
	}
	return nil
}

// settleAnswer is settleBatchSQL's answer for one settlement.
type settleAnswer struct {
	pos              int64
	changed, settled bool
}

// batchSender runs a pgx.Batch: the pool, or a host's transaction.
type batchSender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// settleStatement runs settleBatchSQL with args on q, after lockKeysSQL
// for the keys lock (handlers, providers, tenants, ordering keys) when
// there are any, in one round trip and one transaction (a pgx.Batch is
// one implicit transaction; in a host's transaction, part of it). It
// returns each settlement's answer and how many waiting jobs it promoted.
func (s *Store) settleStatement(ctx context.Context, q batchSender, lock [4][]string, args ...any) ([]settleAnswer, int64, error) {
	b := &pgx.Batch{}
	if len(lock[0]) > 0 {
		b.Queue(s.sql.lockKeys, lock[0], lock[1], lock[2], lock[3])
	}
	b.Queue(s.sql.settleBatch, args...)
	br := q.SendBatch(ctx, b)
	defer func() { _ = br.Close() }()
	if len(lock[0]) > 0 {
		if _, err := br.Exec(); err != nil {
			return nil, 0, err
		}
	}
	rows, err := br.Query()
	if err != nil {
		return nil, 0, err
	}
	var (
		answers  []settleAnswer
		a        settleAnswer
		promoted int64
	)
	_, err = pgx.ForEachRow(rows, []any{&a.pos, &a.changed, &a.settled, &promoted}, func() error {
		answers = append(answers, a)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return answers, promoted, br.Close()
}

// endsOrderedHead reports whether st ends the head of an ordering key: an
// ordered job that succeeds or is dead-lettered, which promotes the next.
func endsOrderedHead(st webhooks.Settlement) bool {
	it := st.Lease.Item
	return it.Ordered && it.Ordering.Key != "" &&
		(st.Outcome == webhooks.AttemptSucceeded || st.Outcome == webhooks.AttemptDeadLettered)
}

// keysToLock returns, as lockKeysSQL's arrays, the keys whose heads the
// settlements at positions round end; none when no settlement ends one,
// and lockKeysSQL is then not run.
func keysToLock(settlements []webhooks.Settlement, round []int) [4][]string {
	var k [4][]string
	for _, i := range round {
		st := settlements[i]
		if !endsOrderedHead(st) {
			continue
		}
		key := st.Lease.Key()
		k[0], k[1], k[2], k[3] = append(k[0], st.Lease.Item.Handler), append(k[1], key.Provider),
			append(k[2], key.Tenant), append(k[3], st.Lease.Item.Ordering.Key)
	}
	return k
}

// leaseLost records the attempt of lease, refused with ErrLeaseLost at
// now, as lease_lost if its history row says it crashed (leaseLostSQL),
// with the failure the refused settlement carried. The history only
// describes: a failure here is logged, and the refusal returned as it is.
func (s *Store) leaseLost(ctx context.Context, lease *webhooks.Lease, now *time.Time, class, msg *string) {
	args, err := leaseArgs(lease, now, class, msg)
	if err != nil {
		return // a token this store never issued has no attempt
	}
	if _, err := s.pool.Exec(ctx, s.sql.leaseLost, args...); err != nil {
		s.logger.WarnContext(ctx, "pgstore: recording a lost lease in the attempt history failed",
			"key", lease.Key().String(), "error", err)
	}
}

// ExtendLease implements webhooks.LeaseStore. A lease lost to another
// worker's takeover is recorded as lease_lost, as by Settle.
func (s *Store) ExtendLease(ctx context.Context, req webhooks.ExtendRequest) error {
	if err := req.Check(); err != nil {
		return fmt.Errorf("pgstore: ExtendLease: %w", err)
	}
	if err := checkDuration("ExtendLease", "lease duration", req.Duration); err != nil {
		return err
	}
	err := s.fenced(ctx, s.pool, "extend lease", req.Lease, s.sql.extend, s.now(req.Now), req.Duration.Microseconds())
	if errors.Is(err, webhooks.ErrLeaseLost) {
		s.leaseLost(ctx, req.Lease, s.now(req.Now), nil, nil)
	}
	return err
}

// CompleteTx marks the item of ev succeeded inside the host's transaction
// tx, so that the handler's own writes and the item's completion commit or
// roll back together. It is fenced by ev.LeaseToken like every settlement:
// when that is not the item's current lease token (the lease expired and
// another worker took the item, say), it changes nothing, makes tx fail
// (it can no longer commit: Commit returns an error and rolls back, and
// the business writes with it) and returns an error wrapping
// webhooks.ErrLeaseLost, or webhooks.ErrAlreadySettled when that token
// already settled the item. The handler should return that error: another
// worker holds the item and will run the handler again. (Inside a
// savepoint, a pgx nested transaction, only the savepoint fails.)
//
// After tx commits, the Processor's own settlement of the event finds the
// item settled (ErrAlreadySettled) and changes nothing; if tx rolls back,
// the lease is as it was, and the Processor settles it as the handler's
// result says. Call CompleteTx last, just before committing: the item's
// row stays locked until tx ends, so the Processor's lease renewals wait
// for it. The completion time is the host's clock (time.Now), or with
// WithDatabaseClock the transaction's now().
//
// In a REPEATABLE READ or SERIALIZABLE transaction, a lease renewal
// committed after tx's snapshot makes the statement fail with a
// serialization error (SQLSTATE 40001); retry the transaction then.
func (s *Store) CompleteTx(ctx context.Context, tx pgx.Tx, ev webhooks.Event) error {
	if tx == nil {
		return errors.New("pgstore: CompleteTx needs the host's pgx.Tx; got nil")
	}
	if ev.LeaseToken == "" {
		s.failTx(ctx, tx)
		return fmt.Errorf("pgstore: complete %s in the host's transaction: the event has no lease token (only a Processor's events carry one): %w",
			ev.Key(), webhooks.ErrLeaseLost)
	}
	lease := &webhooks.Lease{Token: ev.LeaseToken, Item: webhooks.Item{Key: ev.Key(), Handler: ev.Handler}}
	var err error
	if ev.Ordering.Key != "" {
		// Maybe the head of an ordering key (the Event does not say
		// whether its handler is ordered; locking a key row that does not
		// exist locks nothing): settled as SettleBatch does, promoting the
		// next job in the host's transaction.
		err = s.completeKeyedTx(ctx, tx, ev, lease)
	} else {
		err = s.fenced(ctx, tx, "complete in the host's transaction", lease, s.sql.succeed, s.now(s.hostNow()), nil, nil)
	}
	if errors.Is(err, webhooks.ErrAlreadySettled) {
		// Completed already by this very transaction (a handler that
		// completes twice): nothing to refuse.
		k := ev.Key()
		var here bool
		if qerr := tx.QueryRow(ctx, s.sql.settledHere, k.Provider, k.Tenant, k.EventID, ev.Handler).Scan(&here); qerr == nil && here {
			return nil
		}
	}
	if errors.Is(err, webhooks.ErrLeaseLost) || errors.Is(err, webhooks.ErrAlreadySettled) {
		s.failTx(ctx, tx)
	}
	return err
}

// completeKeyedTx is CompleteTx's statement for an event with an
// ordering key: lockKeysSQL, then settleBatchSQL for the one job, in tx.
// In a REPEATABLE READ transaction the second statement's snapshot is the
// transaction's, taken before the lock: a job enqueued behind the head
// meanwhile may then be left waiting; use READ COMMITTED around
// CompleteTx for ordered handlers.
func (s *Store) completeKeyedTx(ctx context.Context, tx pgx.Tx, ev webhooks.Event, lease *webhooks.Lease) error {
	const op = "complete in the host's transaction"
	k := lease.Job()
	if _, err := leaseArgs(lease); err != nil {
		return fmt.Errorf("pgstore: %s %s: %w", op, k, err)
	}
	tok, _ := uuid.Parse(lease.Token) // checked by leaseArgs
	now := s.now(s.hostNow())
	lock := [4][]string{{k.Handler}, {k.Provider}, {k.Tenant}, {ev.Ordering.Key}}
	answers, promoted, err := s.settleStatement(ctx, tx, lock,
		[]string{k.Provider}, []string{k.Tenant}, []string{k.EventID}, []pgtype.UUID{{Bytes: tok, Valid: true}},
		[]string{string(webhooks.AttemptSucceeded)}, []*time.Time{now}, []*time.Time{nil}, []int64{0},
		[]*string{nil}, []*string{nil}, []string{k.Handler})
	if err != nil {
		return wrapErr(op+" "+k.String(), err)
	}
	if promoted > 0 {
		s.Notify() // early by the commit's time; the promoted job is found by polling otherwise
	}
	switch {
	case len(answers) != 1:
		return fmt.Errorf("pgstore: %s %s: the statement answered %d rows", op, k, len(answers))
	case answers[0].changed:
		return nil
	case answers[0].settled:
		return fmt.Errorf("pgstore: %s %s: %w", op, k, webhooks.ErrAlreadySettled)
	default:
		return fmt.Errorf("pgstore: %s %s: %w", op, k, webhooks.ErrLeaseLost)
	}
}

// failTx makes tx fail, so that it can only roll back: its commit then
// returns an error (pgx.ErrTxCommitRollback). CompleteTx does it on a
// refusal, so that a handler that ignores the refusal cannot commit its
// business writes while another worker runs the same event.
func (s *Store) failTx(ctx context.Context, tx pgx.Tx) {
	// Not cut short by the caller's context: a transaction left committable
	// is what this prevents.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	_, err := tx.Exec(ctx, `DO $$BEGIN RAISE EXCEPTION 'hookinbox: the webhook''s lease was lost or its item already settled, so this transaction cannot commit: return CompleteTx''s error from the handler' USING ERRCODE = 'P0001'; END$$`)
	// The statement's error is the point; any other means the statement
	// never ran (a broken connection, which fails the transaction as
	// surely, or a transaction already ended).
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); !ok || pgErr.Code != "P0001" {
		s.logger.WarnContext(ctx, "pgstore: CompleteTx could not mark the host's transaction failed after refusing the completion; the handler must return CompleteTx's error so that it rolls back",
			"error", err)
	}
}

// fenced runs a statement made by fencedSQL on q with the lease's key and
// token, then extra. A statement that changed nothing is
// ErrAlreadySettled or ErrLeaseLost.
func (s *Store) fenced(ctx context.Context, q querier, op string, lease *webhooks.Lease, sql string, extra ...any) error {
	args, err := leaseArgs(lease, extra...)
	if err != nil {
		return fmt.Errorf("pgstore: %s %s: %w", op, lease.Key(), err)
	}
	var changed, settled bool
	if err := q.QueryRow(ctx, sql, args...).Scan(&changed, &settled); err != nil {
		return wrapErr(op+" "+lease.Key().String(), err)
	}
	switch {
	case changed:
		return nil
	case settled:
		return fmt.Errorf("pgstore: %s %s: %w", op, lease.Key(), webhooks.ErrAlreadySettled)
	default:
		return fmt.Errorf("pgstore: %s %s: %w", op, lease.Key(), webhooks.ErrLeaseLost)
	}
}

// leaseArgs returns the parameters of a fenced statement: the key, token
// and handler ($1..$5, see leaseWhere), then extra, in one slice. A token
// that is not a UUID was never issued by this store, so it is lost.
func leaseArgs(lease *webhooks.Lease, extra ...any) ([]any, error) {
	k := lease.Key()
	if checkKey(k) != nil || webhooks.CheckHandlerName(lease.Item.Handler) != nil { // PostgreSQL (or no store) holds no such job
		return nil, webhooks.ErrLeaseLost
	}
	tok, err := uuid.Parse(lease.Token)
	if err != nil {
		return nil, webhooks.ErrLeaseLost
	}
	args := make([]any, 0, 5+len(extra))
	args = append(args, k.Provider, k.Tenant, k.EventID, pgtype.UUID{Bytes: tok, Valid: true}, lease.Item.Handler)
	return append(args, extra...), nil
}

func checkDuration(op, what string, d time.Duration) error {
	if d < time.Microsecond {
		return fmt.Errorf("pgstore: %s %s is %v; it must be at least 1µs (PostgreSQL keeps microseconds)", op, what, d)
	}
	return nil
}

// sanitizeText makes s storable as PostgreSQL text: invalid UTF-8 becomes
// U+FFFD and NUL bytes are dropped.
func sanitizeText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "")
}
