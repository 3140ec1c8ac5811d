package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	webhooks "github.com/hookinbox/webhooks"
)

var _ webhooks.PauseStore = (*Store)(nil)

// Pause implements webhooks.PauseStore in a transaction: it locks the
// handler's pause in force of req.Scope, if any (pauseInForceSQL), then
// keeps an operator's, ends a breaker's (endPauseSQL) and inserts the new
// one (insertPauseSQL); a scoped pause parks the jobs it holds (parkSQL).
// Two pauses of a handler and scope with none in force meet at
// inbox_pauses_in_force_idx: the one that loses starts again, and finds
// the other's.
func (s *Store) Pause(ctx context.Context, req webhooks.PauseRequest) error {
	if err := req.Check(); err != nil {
		return fmt.Errorf("pgstore: Pause: %w", err)
	}
	for _, f := range []struct{ what, v string }{{"actor", req.Actor}, {"reason", req.Reason}} {
		if err := checkText(f.what, f.v); err != nil {
			return err
		}
	}
	sc := req.Scope
	for try := 0; ; try++ {
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var cause *string
			var id int64
			err := tx.QueryRow(ctx, s.sql.pauseInForce, req.Handler, sc.Provider, sc.Tenant, sc.Types).Scan(&id, &cause)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
			case err != nil:
				return err
			case webhooks.PauseCause(*cause) == webhooks.PauseOperator && req.Cause == webhooks.PauseBreaker:
				return fmt.Errorf("pgstore: Pause(%q) by its breaker: %w", req.Handler, webhooks.ErrPaused)
			case webhooks.PauseCause(*cause) == webhooks.PauseOperator:
				return nil // paused already, by an operator: kept
			default:
				why := "its probe failed: paused again for a cool-down"
				if req.Cause == webhooks.PauseOperator {
					why = "an operator paused the handler"
				}
				if _, err := tx.Exec(ctx, s.sql.endPause, id, s.now(req.Now), req.Actor, why); err != nil {
					return err
				}
			}
			var until *time.Time
			if !req.Until.IsZero() {
				until = &req.Until
			}
			_, err = tx.Exec(ctx, s.sql.insertPause, req.Handler, string(req.Cause), req.Actor, req.Reason, s.now(req.Now), until,
				sc.Provider, sc.Tenant, sc.Types)
			if err != nil || sc.IsZero() {
				return err
			}
			_, err = tx.Exec(ctx, s.sql.park, req.Handler, sc.Provider, sc.Tenant, sc.Types)
			return err
		})
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" && try == 0 {
			continue // a concurrent pause won the handler: look again
		}
		if err != nil && !errors.Is(err, webhooks.ErrPaused) {
			return wrapErr("Pause", err)
		}
		return err
	}
}

// Resume implements webhooks.PauseStore: in one statement (resumeSQL) for
// a whole handler's pause; with the unparking of its jobs (unparkSQL), in
// a transaction, for a scoped one.
func (s *Store) Resume(ctx context.Context, req webhooks.ResumeRequest) error {
	if err := req.Check(); err != nil {
		return fmt.Errorf("pgstore: Resume: %w", err)
	}
	for _, f := range []struct{ what, v string }{{"actor", req.Actor}, {"reason", req.Reason}} {
		if err := checkText(f.what, f.v); err != nil {
			return err
		}
	}
	sc := req.Scope
	resume := func(q interface {
		Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
	}) error {
		tag, err := q.Exec(ctx, s.sql.resume, req.Handler, string(req.Cause), s.now(req.Now), req.Actor, req.Reason,
			sc.Provider, sc.Tenant, sc.Types)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("pgstore: Resume(%q, %s, %s): %w", req.Handler, sc, req.Cause, webhooks.ErrNotPaused)
		}
		return nil
	}
	var err error
	if sc.IsZero() {
		err = resume(s.pool)
	} else {
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if err := resume(tx); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, s.sql.unpark, req.Handler, sc.Provider, sc.Tenant, sc.Types)
			return err
		})
	}
	if err != nil && !errors.Is(err, webhooks.ErrNotPaused) {
		return wrapErr("Resume", err)
	}
	return err
}

// Pauses implements webhooks.PauseStore in one statement (pausesSQL).
func (s *Store) Pauses(ctx context.Context, ended int) ([]webhooks.Pause, error) {
	rows, err := s.pool.Query(ctx, s.sql.pauses, max(0, ended))
	if err != nil {
		return nil, wrapErr("Pauses", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (webhooks.Pause, error) {
		var (
			p                     webhooks.Pause
			cause                 string
			until, probe, endedAt *time.Time
			endedBy, endReason    *string
		)
		err := row.Scan(&p.Handler, &p.Scope.Provider, &p.Scope.Tenant, &p.Scope.Types, &cause, &p.Actor, &p.Reason, &p.Since, &until, &probe, &endedAt, &endedBy, &endReason)
		p.Cause = webhooks.PauseCause(cause)
		for _, t := range []struct {
			dst *time.Time
			src *time.Time
		}{{&p.Until, until}, {&p.ProbeUntil, probe}, {&p.EndedAt, endedAt}} {
			if t.src != nil {
				*t.dst = t.src.UTC()
			}
		}
		p.Since = p.Since.UTC()
		if endedBy != nil {
			p.EndedBy = *endedBy
		}
		if endReason != nil {
			p.EndReason = *endReason
		}
		return p, err
	})
	if err != nil {
		return nil, wrapErr("Pauses", err)
	}
	return out, nil
}
