package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	webhooks "github.com/hookinbox/webhooks"
)

// CheckSchema reports whether the store's schema holds the inbox at the
// migration this package needs: nil when it does, an error wrapping
// webhooks.ErrStoreNotReady that says what to run when the tables are
// missing or Migrate recorded an older migration, or the error that kept
// it from looking (the database is down, say). A schema migrated by the
// host's own tool (Migrations), which records no migration, is taken as it
// is.
//
// New does not touch the database, so a host that wants to refuse to start
// without its tables calls CheckSchema (or Migrate, which makes them). The
// store also checks by itself when a statement of Enqueue, EnqueueTx or
// Acquire finds a table, column or function missing, and returns the
// check's error then: the Receiver answers 503 and logs it, and
// Processor.Run stops with it.
func (s *Store) CheckSchema(ctx context.Context) error {
	q := quoteSchema(s.schema)
	var hasEvents, hasItems, hasMigrations bool
	err := s.pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL, to_regclass($2) IS NOT NULL, to_regclass($3) IS NOT NULL",
		q+".inbox_events", q+".inbox_items", q+"."+MigrationsTable).Scan(&hasEvents, &hasItems, &hasMigrations)
	if err != nil {
		return fmt.Errorf("pgstore: checking schema %q: %w", s.schema, err)
	}
	switch {
	case !hasEvents && hasItems && !hasMigrations:
		// Migrated by the host's own tool, up to 0005 at most.
		return &notReadyError{schema: s.schema, problem: "is older than migration 0006_jobs (it has inbox_items, not inbox_events)"}
	case !hasEvents && !hasItems:
		return &notReadyError{schema: s.schema, problem: "has no inbox"}
	}
	if !hasMigrations {
		return nil // migrated by the host's own tool: nothing to compare
	}
	var applied int
	if err := s.pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+q+"."+MigrationsTable).Scan(&applied); err != nil {
		return fmt.Errorf("pgstore: checking schema %q: %w", s.schema, err)
	}
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	if latest := ms[len(ms)-1].Version; applied < latest {
		return &notReadyError{schema: s.schema, problem: fmt.Sprintf("is at migration %d and this pgstore needs %d", applied, latest)}
	}
	return nil
}

// notReadyError is CheckSchema's answer for a schema the store cannot use.
type notReadyError struct {
	schema, problem string
	cause           error // the statement's failure that led to the check, if any
}

func (e *notReadyError) Error() string {
	msg := fmt.Sprintf("pgstore: schema %q %s: run (*Store).Migrate (or hookinbox migrate -schema %s)", e.schema, e.problem, e.schema)
	if e.cause != nil {
		msg += "; " + e.cause.Error()
	}
	return msg
}

func (e *notReadyError) Unwrap() []error {
	if e.cause == nil {
		return []error{webhooks.ErrStoreNotReady}
	}
	return []error{webhooks.ErrStoreNotReady, e.cause}
}

// explainMissing returns err, a statement's failure, or CheckSchema's
// error in its place when the statement found part of the schema missing
// and the check confirms it.
func (s *Store) explainMissing(ctx context.Context, err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return err
	}
	switch pgErr.Code {
	case "3F000", "42P01", "42703", "42883", "42704": // invalid_schema_name, undefined_table, _column, _function, _object
	default:
		return err
	}
	var nr *notReadyError
	if !errors.As(s.CheckSchema(ctx), &nr) {
		return err
	}
	nr.cause = err
	return nr
}
