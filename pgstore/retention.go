package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// DeleteSucceeded deletes succeeded jobs that completed before olderThan,
// with their history (the foreign keys cascade), at most batchSize jobs
// per transaction, each its own short transaction, until one finds nothing
// more to delete or ctx is done. An event is deleted with its last job
// (an event with several handlers stays until each of its jobs is
// deleted), with its quarantined deliveries. It then deletes the rows of
// ordering keys (inbox_keys) with no unfinished job unchanged since
// olderThan: a key's stale guard (webhooks.Lease.Applied) is kept for the
// retention period of its succeeded jobs, and forgotten after.
// Rows other transactions hold at that moment are skipped (a later call gets
// them). It returns how many rows it deleted, also when it stops with an
// error.
//
// With WithDatabaseClock, completion times are the server's, so olderThan,
// an instant of the caller's clock, is converted like other instants: it
// keeps its distance from the caller's clock now (time.Now), and the run
// deletes items that completed longer ago than that by the server's clock
// when the run began.
//
// Once an item is deleted its event ID is forgotten: a later delivery of it
// is stored as new. Keep succeeded items longer than the longest time your
// providers redeliver. Run it periodically, for example hourly with
// olderThan a week ago and batchSize 1000.
func (s *Store) DeleteSucceeded(ctx context.Context, olderThan time.Time, batchSize int) (int64, error) {
	n, err := s.deleteJobBatches(ctx, "delete succeeded items", s.sql.deleteSucceeded, olderThan, s.hostNow().Sub(olderThan), batchSize)
	if err != nil {
		return n, err
	}
	return n, s.sweepKeys(ctx, olderThan, s.hostNow().Sub(olderThan), batchSize)
}

// sweepKeys deletes the rows of inbox_keys with no unfinished job that
// were last changed before the cutoff, batchSize rows read per statement
// in key order (sweepKeysSQL), to the end of the table.
func (s *Store) sweepKeys(ctx context.Context, cutoff time.Time, age time.Duration, batchSize int) error {
	const op = "delete idle ordering keys"
	if s.dbClock {
		if err := s.pool.QueryRow(ctx, "SELECT now() - $1::bigint * interval '1 microsecond'", age.Microseconds()).Scan(&cutoff); err != nil {
			return wrapErr(op, err)
		}
	}
	var after [4]string // before every key: ('', '', '', '')
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("pgstore: %s: %w", op, err)
		}
		var (
			n    int64
			last [4]*string
		)
		err := s.pool.QueryRow(ctx, s.sql.sweepKeys, cutoff, batchSize, after[0], after[1], after[2], after[3]).
			Scan(&n, &last[0], &last[1], &last[2], &last[3])
		if err != nil {
			return wrapErr(op, err)
		}
		if last[0] == nil {
			return nil
		}
		for i := range after {
			after[i] = *last[i]
		}
	}
}

// DeleteClosed deletes items an operator closed (ops.Store.CloseDeadLetter) before
// olderThan, with their history and audit trail, in batches of at most
// batchSize items, like DeleteSucceeded: closed items are kept for a
// retention period of their own, since the closing is the record that a
// dead letter was ended on purpose. Run it periodically with a cutoff as
// long as your audits need, for example olderThan 90 days ago.
func (s *Store) DeleteClosed(ctx context.Context, olderThan time.Time, batchSize int) (int64, error) {
	return s.deleteJobBatches(ctx, "delete closed items", s.sql.deleteClosed, olderThan, s.hostNow().Sub(olderThan), batchSize)
}

// DeleteExpiredReplayKeys deletes replay keys that expired at or before now
// (the server's now() with the database clock), in batches of at most
// batchSize rows, like DeleteSucceeded. Expired keys no longer affect
// Register, so this only reclaims space.
func (s *Store) DeleteExpiredReplayKeys(ctx context.Context, now time.Time, batchSize int) (int64, error) {
	return s.deleteBatches(ctx, "delete expired replay keys", s.sql.deleteExpiredReplayKeys, now, 0, batchSize)
}

// deleteBatches runs sql ($1 cutoff, $2 batch size) until a statement
// deletes nothing. The cutoff is fixed for the whole run: cutoff itself, or
// with the database clock the server's now() minus age, read once (a cutoff
// moving with now() would keep finding items that have just aged past it).
//
// A short batch does not end the run: rows skipped because another
// transaction held them may be free by the next statement. Every statement
// that lets the run go on has deleted at least one row, and with a fixed
// cutoff the rows it can delete are (clock skew aside) a fixed set, so the
// run ends.
func (s *Store) deleteBatches(ctx context.Context, op, sql string, cutoff time.Time, age time.Duration, batchSize int) (int64, error) {
	if batchSize <= 0 {
		return 0, fmt.Errorf("pgstore: %s: batch size is %d; it must be at least 1", op, batchSize)
	}
	if s.dbClock {
		err := s.pool.QueryRow(ctx, "SELECT now() - $1::bigint * interval '1 microsecond'", age.Microseconds()).Scan(&cutoff)
		if err != nil {
			return 0, wrapErr(op, err)
		}
	}
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return total, fmt.Errorf("pgstore: %s: stopped after %d rows: %w", op, total, err)
		}
		tag, err := s.pool.Exec(ctx, sql, cutoff, batchSize)
		if err != nil {
			return total, wrapErr(fmt.Sprintf("%s (after %d rows)", op, total), err)
		}
		n := tag.RowsAffected()
		total += n
		if n == 0 {
			return total, nil
		}
	}
}

// deleteJobBatches is deleteBatches for a statement that deletes jobs
// (deleteSucceededSQL, deleteClosedSQL): each batch is a transaction of
// that statement, which locks the events of the jobs it deleted, and
// deleteEventsSQL, which deletes those left without a job.
func (s *Store) deleteJobBatches(ctx context.Context, op, sql string, cutoff time.Time, age time.Duration, batchSize int) (int64, error) {
	if batchSize <= 0 {
		return 0, fmt.Errorf("pgstore: %s: batch size is %d; it must be at least 1", op, batchSize)
	}
	if s.dbClock {
		err := s.pool.QueryRow(ctx, "SELECT now() - $1::bigint * interval '1 microsecond'", age.Microseconds()).Scan(&cutoff)
		if err != nil {
			return 0, wrapErr(op, err)
		}
	}
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return total, fmt.Errorf("pgstore: %s: stopped after %d rows: %w", op, total, err)
		}
		var n int64
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			rows, _ := tx.Query(ctx, sql, cutoff, batchSize)
			var (
				providers, tenants, ids []string
				p, t, id                string
			)
			if _, err := pgx.ForEachRow(rows, []any{&n, &p, &t, &id}, func() error {
				providers, tenants, ids = append(providers, p), append(tenants, t), append(ids, id)
				return nil
			}); err != nil {
				return err
			}
			if len(ids) == 0 {
				return nil
			}
			_, err := tx.Exec(ctx, s.sql.deleteEvents, providers, tenants, ids)
			return err
		})
		if err != nil {
			return total, wrapErr(fmt.Sprintf("%s (after %d rows)", op, total), err)
		}
		total += n
		if n == 0 {
			return total, nil
		}
	}
}
