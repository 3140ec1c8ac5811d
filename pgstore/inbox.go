package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// Enqueue implements webhooks.Enqueuer with group commit: concurrent calls
// are stored together, in one statement (INSERT … ON CONFLICT … DO UPDATE
// … RETURNING over arrays, with a CTE that quarantines conflicting
// deliveries) and one commit, and each call returns its own outcome only
// after that commit, so a nil error means the item is durable. A call
// made while the store is idle runs at once, alone; calls made while
// earlier ones are being stored wait for them and go together in the next
// statement, up to WithEnqueueBatch envelopes and WithEnqueueBatchBytes
// bytes of payloads and headers; an envelope over 256 KiB is stored by a
// statement of its own. When a statement fails, every call in it returns
// the error, and only those calls; a statement refused for one row's data
// (SQLSTATE classes 22 and 23, which the checks before queueing should
// make impossible) is run again one call at a time, so that only the
// offending envelope fails.
//
// When ctx ends while the call waits, it returns ctx's error at once. If
// its envelope was already part of a running statement, that statement
// goes on, and the item may be stored without the call having reported
// it: the provider, told the delivery failed, delivers it again and gets a
// duplicate. The goroutines that run the statements end by themselves
// once calls stop, so the Store needs no closing.
//
// A duplicate of a dead letter with ReplayIfDead set is replayed by a
// second statement (replayOneSQL), which checks again that the item is
// dead: of concurrent redeliveries one replays it.
//
// After storing a new item, or replaying one, it asks for a wake-up on
// NotifyChannel (see Notify); the notification is sent after the commit, on
// its own statement, so enqueues never wait for one another on
// PostgreSQL's notification queue.
func (s *Store) Enqueue(ctx context.Context, env webhooks.Envelope) (webhooks.EnqueueResult, error) {
	res, err := s.enqueueGrouped(ctx, env)
	if err != nil {
		return res, s.explainMissing(ctx, err)
	}
	if res.Outcome == webhooks.EnqueueNew || res.Replayed {
		s.Notify()
	}
	return res, nil
}

func (s *Store) enqueueGrouped(ctx context.Context, env webhooks.Envelope) (webhooks.EnqueueResult, error) {
	if err := ctx.Err(); err != nil {
		return webhooks.EnqueueResult{}, wrapErr("enqueue "+env.Key.String(), err)
	}
	if s.committer == nil {
		return s.enqueue(ctx, s.pool, env, false)
	}
	r, err := s.newEnqueueRequest(ctx, env)
	if err != nil {
		return webhooks.EnqueueResult{}, err
	}
	if r.size() > groupedEnvelopeMax {
		return s.enqueue(ctx, s.pool, env, false)
	}
	res, alone, err := s.committer.enqueue(r)
	switch {
	case alone:
		return s.enqueue(ctx, s.pool, env, false)
	case err != nil:
		return webhooks.EnqueueResult{}, wrapErr("enqueue "+env.Key.String(), err)
	case res.Outcome == webhooks.EnqueueDuplicate && env.ReplayIfDead && res.State == webhooks.StateDead:
		return s.redeliver(ctx, s.pool, env, res, false)
	}
	return res, nil
}

// newEnqueueRequest checks env and encodes it for the committer. The
// payload is not copied: the batch copies it when it starts (see
// committer).
func (s *Store) newEnqueueRequest(ctx context.Context, env webhooks.Envelope) (*enqueueRequest, error) {
	if err := checkEnvelope(env); err != nil {
		return nil, err
	}
	headers, err := encodeHeaders(env.Headers)
	if err != nil {
		return nil, err
	}
	return &enqueueRequest{
		key:        env.Key,
		eventType:  env.EventType,
		keyID:      env.KeyID,
		apiVersion: env.APIVersion,
		traceLink:  env.TraceLink,
		payload:    env.Payload,
		headers:    headers,
		digest:     env.PayloadSHA256,
		occurredAt: occurredAt(env.OccurredAt),
		receivedAt: env.ReceivedAt,
		dueAt:      s.now(env.ReceivedAt),
		jobs:       webhooks.EnvelopeJobs(&env),
		ordering:   env.Ordering,
		ctx:        ctx,
	}, nil
}

// checkEnvelope refuses what PostgreSQL could not store, before it reaches
// a statement: in a batch, it would fail the other envelopes too.
func checkEnvelope(env webhooks.Envelope) error {
	if err := checkKey(env.Key); err != nil {
		return err
	}
	if err := env.CheckJobs(); err != nil {
		return fmt.Errorf("pgstore: %w", err)
	}
	for _, f := range []struct{ what, v string }{
		{"event type", env.EventType}, {"key ID", env.KeyID}, {"API version", env.APIVersion}, {"trace link", env.TraceLink},
	} {
		if err := checkText(f.what, f.v); err != nil {
			return err
		}
	}
	if !storableTime(env.ReceivedAt) {
		return fmt.Errorf("pgstore: the received time %s of %s is outside what PostgreSQL's timestamptz holds", env.ReceivedAt, env.Key)
	}
	return nil
}

// enqueueBatchArgs returns the parameters of enqueueBatchSQL for reqs.
func enqueueBatchArgs(reqs []*enqueueRequest) []any {
	n := len(reqs)
	var (
		providers, tenants, eventIDs, eventTypes = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		keyIDs, apiVersions, traceLinks          = make([]string, n), make([]string, n), make([]string, n)
		payloads, digests                        = make([][]byte, n), make([][]byte, n)
		headers                                  = make([]*string, n)
		occurred, received, due                  = make([]*time.Time, n), make([]time.Time, n), make([]*time.Time, n)
		keys, versions                           = make([]*string, n), make([]int64, n)
		jobEnvelopes                             []int32
		jobHandlers                              []string
		jobOrdered                               []bool
		jobPriorities                            []int32
	)
	for i, r := range reqs {
		providers[i], tenants[i], eventIDs[i] = r.key.Provider, r.key.Tenant, r.key.EventID
		eventTypes[i], keyIDs[i], apiVersions[i], traceLinks[i] = r.eventType, r.keyID, r.apiVersion, r.traceLink
		payloads[i], headers[i], digests[i] = r.payload, r.headers, r.digest[:]
		occurred[i], received[i], due[i] = r.occurredAt, r.receivedAt, r.dueAt
		keys[i], versions[i] = orderingKeyArg(r.ordering), r.ordering.Version
		for _, j := range r.jobs {
			jobEnvelopes = append(jobEnvelopes, int32(i+1))
			jobHandlers = append(jobHandlers, j.Handler)
			jobOrdered = append(jobOrdered, j.Ordered && r.ordering.Key != "")
			jobPriorities = append(jobPriorities, int32(j.Priority))
		}
	}
	return []any{providers, tenants, eventIDs, eventTypes, payloads, headers, digests, keyIDs,
		occurred, received, due, apiVersions, traceLinks, keys, versions, jobEnvelopes, jobHandlers, jobOrdered, jobPriorities}
}

// orderingKeyArg is an event's ordering key as a statement's parameter:
// NULL for none.
func orderingKeyArg(o webhooks.Ordering) *string {
	if o.Key == "" {
		return nil
	}
	return &o.Key
}

// jobArgs are the parameters of an envelope's jobs in enqueueSQL: the
// handlers, whether each is ordered (only with an ordering key) and the
// priorities.
func jobArgs(env *webhooks.Envelope) ([]string, []bool, []int32) {
	jobs := webhooks.EnvelopeJobs(env)
	handlers, ordered, priorities := make([]string, len(jobs)), make([]bool, len(jobs)), make([]int32, len(jobs))
	for i, j := range jobs {
		handlers[i], ordered[i], priorities[i] = j.Handler, j.Ordered && env.Ordering.Key != "", int32(j.Priority)
	}
	return handlers, ordered, priorities
}

// enqueueBatch stores reqs, whose keys are distinct, in one statement
// (enqueueBatchSQL) and returns their outcomes in order. A redelivery
// replay is left to each caller.
func (s *Store) enqueueBatch(ctx context.Context, reqs []*enqueueRequest) ([]webhooks.EnqueueResult, error) {
	n := len(reqs)
	rows, err := s.pool.Query(ctx, s.sql.enqueueBatch, enqueueBatchArgs(reqs)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	results := make([]webhooks.EnqueueResult, n)
	got := 0
	for rows.Next() {
		var (
			pos                  int64
			inserted, sameDigest bool
			state                string
		)
		if err := rows.Scan(&pos, &inserted, &sameDigest, &state); err != nil {
			return nil, err
		}
		if pos < 1 || pos > int64(n) || results[pos-1].Outcome != 0 {
			return nil, fmt.Errorf("the statement returned row %d of %d twice or out of range", pos, n)
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
		results[pos-1] = res
		got++
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if got != n {
		// Cannot happen: every input row is inserted or updated.
		return nil, fmt.Errorf("the statement answered for %d of %d envelopes", got, n)
	}
	return results, nil
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
	res, err := s.enqueue(ctx, tx, env, s.notifyInTx)
	if err != nil {
		err = s.explainMissing(ctx, err)
	}
	return res, err
}

// enqueue runs the enqueue statement on q; with notify, the statement itself
// notifies NotifyChannel for a new item (delivered when q's transaction
// commits), and so does a replay.
func (s *Store) enqueue(ctx context.Context, q querier, env webhooks.Envelope, notify bool) (webhooks.EnqueueResult, error) {
	if err := checkEnvelope(env); err != nil {
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
	var (
		inserted, sameDigest bool
		state                string
		notified             int64
	)
	k := env.Key
	handlers, ordered, priorities := jobArgs(&env)
	args := []any{
		k.Provider, k.Tenant, k.EventID, env.EventType,
		payload, headers, env.PayloadSHA256[:], env.KeyID,
		occurredAt(env.OccurredAt), env.ReceivedAt, s.now(env.ReceivedAt), env.APIVersion, env.TraceLink,
		handlers, ordered, orderingKeyArg(env.Ordering), env.Ordering.Version, priorities,
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
	due, state, err := s.replayItem(ctx, q, env.Key, nil, s.now(env.ReceivedAt), nil, false, ops.Audit{
		Action: ops.ActionRedelivery, Actor: redeliveryActor, Reason: redeliveryReason,
	}, []string{string(webhooks.StateDead)})
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

// replayItem runs replayOneSQL on q for the job of key and *handler (nil:
// every job of the event) when it is in one of states: due at dueAt, or
// at now when it is nil, recorded as a. It returns the job's new due time
// when it replayed it, else its state (nil: there is no job).
func (s *Store) replayItem(ctx context.Context, q querier, key webhooks.InboxKey, handler *string, now, dueAt *time.Time, resetAttempts bool, a ops.Audit, states []string) (*time.Time, *string, error) {
	var (
		due   *time.Time
		state *string
	)
	err := q.QueryRow(ctx, s.sql.replayOne,
		key.Provider, key.Tenant, key.EventID, now, resetAttempts, a.Action, a.Actor, a.Reason, a.Ticket, dueAt, states, handler,
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
