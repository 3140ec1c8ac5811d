package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/cursor"
)

// Enqueue implements webhooks.Enqueuer in one statement (INSERT … ON
// CONFLICT … DO UPDATE … RETURNING) that commits before it returns, so a
// nil error means the item is durable. After storing a new item it asks for
// a wake-up on NotifyChannel (see Notify); the notification is sent after
// the commit, on its own statement, so enqueues never wait for one another
// on PostgreSQL's notification queue.
func (s *Store) Enqueue(ctx context.Context, env webhooks.Envelope) (webhooks.EnqueueResult, error) {
	res, err := s.enqueue(ctx, s.pool, env, false)
	if err == nil && res.Outcome == webhooks.EnqueueNew {
		s.Notify()
	}
	return res, err
}

// EnqueueTx is Enqueue inside the host's transaction tx: the item is stored,
// and listeners are woken, only if tx commits, together with whatever else
// the host wrote in it. The outcome reports what the statement found inside
// tx; if tx rolls back, nothing was stored.
//
// A new item's NOTIFY is sent inside tx, so it is delivered on commit and
// never on rollback. That makes the commit of tx take PostgreSQL's
// cluster-wide notification-queue lock until its commit record is flushed:
// notifying commits run one at a time, and a full notification queue fails
// the commit. Where that matters, create the store WithoutNotifyInTx and
// call Notify after tx commits.
//
// A concurrent Enqueue of the same key waits for tx to end. In a REPEATABLE
// READ or SERIALIZABLE transaction, a row committed by another transaction
// after tx's snapshot makes the statement fail with a serialization error
// (SQLSTATE 40001); retry the transaction then.
func (s *Store) EnqueueTx(ctx context.Context, tx pgx.Tx, env webhooks.Envelope) (webhooks.EnqueueResult, error) {
	if tx == nil {
		return webhooks.EnqueueResult{}, errors.New("pgstore: EnqueueTx needs the host's pgx.Tx; got nil (use Enqueue outside a transaction)")
	}
	return s.enqueue(ctx, tx, env, s.notifyInTx)
}

// enqueue runs the enqueue statement on q; with notify, the statement itself
// notifies NotifyChannel for a new item (delivered when q's transaction
// commits).
func (s *Store) enqueue(ctx context.Context, q querier, env webhooks.Envelope, notify bool) (webhooks.EnqueueResult, error) {
	if err := checkKey(env.Key); err != nil {
		return webhooks.EnqueueResult{}, err
	}
	if err := checkText("event type", env.EventType); err != nil {
		return webhooks.EnqueueResult{}, err
	}
	if err := checkText("key ID", env.KeyID); err != nil {
		return webhooks.EnqueueResult{}, err
	}
	headers, err := encodeHeaders(env.Headers)
	if err != nil {
		return webhooks.EnqueueResult{}, err
	}
	payload := env.Payload
	if payload == nil {
		payload = []byte{}
	}
	args := []any{
		env.Key.Provider, env.Key.Tenant, env.Key.EventID, env.EventType,
		payload, headers, env.PayloadSHA256[:], env.KeyID,
		occurredAt(env.OccurredAt), env.ReceivedAt, s.now(env.ReceivedAt),
	}
	var (
		inserted, sameDigest bool
		state                string
		notified             int64
	)
	if notify {
		err = q.QueryRow(ctx, s.sql.enqueueNotify, append(args, s.channel)...).Scan(&inserted, &sameDigest, &state, &notified)
	} else {
		err = q.QueryRow(ctx, s.sql.enqueue, args...).Scan(&inserted, &sameDigest, &state)
	}
	if err != nil {
		return webhooks.EnqueueResult{}, wrapErr("enqueue "+env.Key.String(), err)
	}
	res := webhooks.EnqueueResult{State: webhooks.State(state)}
	switch {
	case inserted:
		res.Outcome = webhooks.EnqueueNew
	case sameDigest:
		res.Outcome = webhooks.EnqueueDuplicate
	default:
		res.Outcome = webhooks.EnqueueConflict
	}
	return res, nil
}

// Get implements webhooks.InboxStore.
func (s *Store) Get(ctx context.Context, key webhooks.InboxKey) (webhooks.Item, error) {
	if checkKey(key) != nil { // PostgreSQL cannot hold such a key
		return webhooks.Item{}, fmt.Errorf("pgstore: get %q: %w", key.String(), webhooks.ErrNotFound)
	}
	rows, _ := s.pool.Query(ctx, s.sql.get, key.Provider, key.Tenant, key.EventID)
	it, err := pgx.CollectExactlyOneRow(rows, scanItem)
	if errors.Is(err, pgx.ErrNoRows) {
		return webhooks.Item{}, fmt.Errorf("pgstore: get %s: %w", key, webhooks.ErrNotFound)
	}
	if err != nil {
		return webhooks.Item{}, wrapErr("get "+key.String(), err)
	}
	return it, nil
}

// DeadLetters implements webhooks.OperatorStore. Pages are read through the
// inbox_items_dead_idx index in its order.
func (s *Store) DeadLetters(ctx context.Context, q webhooks.DeadLetterQuery) (webhooks.DeadLetterPage, error) {
	sql, args, err := s.deadLettersQuery(q)
	if errors.Is(err, errUnstorableFilter) {
		return webhooks.DeadLetterPage{}, nil // no stored item can match
	}
	if err != nil {
		return webhooks.DeadLetterPage{}, err
	}
	rows, _ := s.pool.Query(ctx, sql, args...)
	items, err := pgx.CollectRows(rows, scanItem)
	if err != nil {
		return webhooks.DeadLetterPage{}, wrapErr("dead letters", err)
	}
	page := webhooks.DeadLetterPage{Items: items}
	if len(page.Items) > q.Limit {
		page.Items = page.Items[:q.Limit]
		last := page.Items[q.Limit-1]
		page.Next = cursor.DeadLetter{DeadAt: last.DeadAt, Key: last.Key}.String()
	}
	return page, nil
}

// ReplayDeadLetter implements webhooks.OperatorStore in one statement. After
// replaying an item it asks for a wake-up on NotifyChannel, like Enqueue.
func (s *Store) ReplayDeadLetter(ctx context.Context, req webhooks.ReplayRequest) error {
	key := req.Key
	if checkKey(key) != nil { // PostgreSQL cannot hold such a key
		return fmt.Errorf("pgstore: replay dead letter %q: %w", key.String(), webhooks.ErrNotFound)
	}
	var replayed, exists bool
	err := s.pool.QueryRow(ctx, s.sql.replayDeadLetter,
		key.Provider, key.Tenant, key.EventID, s.now(req.Now), req.ResetAttempts,
	).Scan(&replayed, &exists)
	switch {
	case err != nil:
		return wrapErr("replay dead letter "+key.String(), err)
	case !exists:
		return fmt.Errorf("pgstore: replay dead letter %s: %w", key, webhooks.ErrNotFound)
	case !replayed:
		return fmt.Errorf("pgstore: replay dead letter %s: %w", key, webhooks.ErrNotDead)
	}
	s.Notify()
	return nil
}

// now returns the caller's time as a statement's "now" parameter, or nil
// (SQL NULL, meaning the server's now()) with the database clock.
func (s *Store) now(t time.Time) *time.Time {
	if s.dbClock {
		return nil
	}
	return &t
}

// errUnstorableFilter reports a DeadLetters filter value no stored item can
// have.
var errUnstorableFilter = errors.New("pgstore: filter value is not storable text")

// deadLettersQuery builds the statement for DeadLetters: only the filters
// given, so the planner sees plain equalities, and the cursor as a row
// comparison in the index's order.
func (s *Store) deadLettersQuery(q webhooks.DeadLetterQuery) (string, []any, error) {
	if q.Limit < 1 {
		return "", nil, fmt.Errorf("pgstore: DeadLetters: Limit is %d; it must be at least 1", q.Limit)
	}
	sql := s.sql.deadLetters
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	for _, f := range []struct{ col, v, what string }{
		{"i.provider", q.Provider, "provider"},
		{"i.tenant", q.Tenant, "tenant"},
		{"i.event_type", q.EventType, "event type"},
	} {
		if f.v == "" {
			continue
		}
		if checkText(f.what, f.v) != nil {
			return "", nil, errUnstorableFilter
		}
		sql += " AND " + f.col + " = " + arg(f.v)
	}
	if q.After != "" {
		c, err := cursor.Parse(q.After)
		if err != nil {
			return "", nil, fmt.Errorf("pgstore: dead letters: %w", err)
		}
		if checkKey(c.Key) != nil {
			return "", nil, fmt.Errorf("pgstore: dead letters: %w", webhooks.ErrInvalidCursor)
		}
		sql += " AND (i.dead_at, i.provider, i.tenant, i.event_id) < (" +
			arg(c.DeadAt) + "::timestamptz, " + arg(c.Key.Provider) + ", " +
			arg(c.Key.Tenant) + ", " + arg(c.Key.EventID) + ")"
	}
	return sql + s.sql.deadLettersOrder + arg(q.Limit+1), args, nil
}
