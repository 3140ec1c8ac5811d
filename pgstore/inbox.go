package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// Enqueue implements webhooks.Enqueuer in one statement (INSERT … ON
// CONFLICT … DO UPDATE … RETURNING, with a CTE that quarantines a
// conflicting delivery) that commits before it returns, so a nil error
// means the item is durable. A duplicate of a dead letter with ReplayIfDead set is replayed by a second
// statement (replayOneSQL), which checks again that the item is dead: of
// concurrent redeliveries one replays it.
//
// After storing a new item, or replaying one, it asks for a wake-up on
// NotifyChannel (see Notify); the notification is sent after the commit, on
// its own statement, so enqueues never wait for one another on
// PostgreSQL's notification queue.
func (s *Store) Enqueue(ctx context.Context, env webhooks.Envelope) (webhooks.EnqueueResult, error) {
	res, err := s.enqueue(ctx, s.pool, env, false)
	if err == nil && (res.Outcome == webhooks.EnqueueNew || res.Replayed) {
		s.Notify()
	}
	return res, err
}

// EnqueueTx is Enqueue inside the host's transaction tx: the item is stored,
// and listeners are woken, only if tx commits, together with whatever else
// the host wrote in it. The outcome reports what the statement found inside
// tx; if tx rolls back, nothing was stored.
//
// A new (or replayed) item's NOTIFY is sent inside tx, so it is delivered on
// commit and never on rollback. That makes the commit of tx take PostgreSQL's
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
// commits), and so does a replay.
func (s *Store) enqueue(ctx context.Context, q querier, env webhooks.Envelope, notify bool) (webhooks.EnqueueResult, error) {
	if err := checkKey(env.Key); err != nil {
		return webhooks.EnqueueResult{}, err
	}
	for _, f := range []struct{ what, v string }{
		{"event type", env.EventType}, {"key ID", env.KeyID}, {"API version", env.APIVersion}, {"trace link", env.TraceLink},
	} {
		if err := checkText(f.what, f.v); err != nil {
			return webhooks.EnqueueResult{}, err
		}
	}
	headers, err := encodeHeaders(env.Headers)
	if err != nil {
		return webhooks.EnqueueResult{}, err
	}
	payload := env.Payload
	if payload == nil {
		payload = []byte{}
	}
	var (
		inserted, sameDigest bool
		state                string
		notified             int64
	)
	k := env.Key
	args := []any{
		k.Provider, k.Tenant, k.EventID, env.EventType,
		payload, headers, env.PayloadSHA256[:], env.KeyID,
		occurredAt(env.OccurredAt), env.ReceivedAt, s.now(env.ReceivedAt), env.APIVersion, env.TraceLink,
	}
	if notify {
		err = q.QueryRow(ctx, s.sql.enqueueNotify, append(args, s.channel)...).Scan(&inserted, &sameDigest, &state, &notified)
	} else {
		err = q.QueryRow(ctx, s.sql.enqueue, args...).Scan(&inserted, &sameDigest, &state)
	}
	if err != nil {
		return webhooks.EnqueueResult{}, wrapErr("enqueue "+k.String(), err)
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
	if res.Outcome == webhooks.EnqueueDuplicate && env.ReplayIfDead && res.State == webhooks.StateDead {
		return s.redeliver(ctx, q, env, res, notify)
	}
	return res, nil
}

// The audit entry of a provider's redelivery that replayed a dead letter.
const (
	redeliveryActor  = "provider"
	redeliveryReason = "the provider delivered the dead-lettered event again (Envelope.ReplayIfDead)"
)

// redeliver replays the dead item of env, a duplicate res reported, due at
// env.ReceivedAt (the server's now with the database clock), as the
// provider's redelivery. Another call may have replayed (or closed) it
// since: then res reports its state.
func (s *Store) redeliver(ctx context.Context, q querier, env webhooks.Envelope, res webhooks.EnqueueResult, notify bool) (webhooks.EnqueueResult, error) {
	due, state, err := s.replayItem(ctx, q, env.Key, s.now(env.ReceivedAt), nil, false, ops.Audit{
		Action: ops.ActionRedelivery, Actor: redeliveryActor, Reason: redeliveryReason,
	})
	if err != nil {
		return res, wrapErr("replay the redelivered dead letter "+env.Key.String(), err)
	}
	switch {
	case due != nil:
		res.State, res.Replayed = webhooks.StatePending, true
		if notify {
			var discard int64
			if err := q.QueryRow(ctx, "SELECT count(*) FROM (SELECT pg_notify($1, '')) AS n", s.channel).Scan(&discard); err != nil {
				return res, wrapErr("notify after replaying "+env.Key.String(), err)
			}
		}
	case state != nil:
		res.State = webhooks.State(*state)
	}
	return res, nil
}

// replayItem runs replayOneSQL on q for key: due at dueAt, or at now when
// it is nil, recorded as a. It returns the item's new due time when it
// replayed it, else its state (nil: there is no item).
func (s *Store) replayItem(ctx context.Context, q querier, key webhooks.InboxKey, now, dueAt *time.Time, resetAttempts bool, a ops.Audit) (*time.Time, *string, error) {
	var (
		due   *time.Time
		state *string
	)
	err := q.QueryRow(ctx, s.sql.replayOne,
		key.Provider, key.Tenant, key.EventID, now, resetAttempts, a.Action, a.Actor, a.Reason, a.Ticket, dueAt,
	).Scan(&due, &state)
	return due, state, err
}

// now returns the caller's time as a statement's "now" parameter, or nil
// (SQL NULL, meaning the server's now()) with the database clock.
func (s *Store) now(t time.Time) *time.Time {
	if s.dbClock {
		return nil
	}
	return &t
}
