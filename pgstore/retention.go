package pgstore

import (
	"context"
	"fmt"
	"time"
)

// DeleteSucceeded deletes succeeded items that completed before olderThan,
// at most batchSize rows per statement, each statement its own short
// transaction, until no more match or ctx is done. Rows other transactions
// hold are skipped (a later call gets them). It returns how many rows it
// deleted, also when it stops with an error.
//
// Once an item is deleted its event ID is forgotten: a later delivery of it
// is stored as new. Keep succeeded items longer than the longest time your
// providers redeliver. Run it periodically, for example hourly with
// olderThan a week ago and batchSize 1000.
func (s *Store) DeleteSucceeded(ctx context.Context, olderThan time.Time, batchSize int) (int64, error) {
	return s.deleteBatches(ctx, "delete succeeded items", s.sql.deleteSucceeded, olderThan, batchSize)
}

// DeleteExpiredReplayKeys deletes replay keys that expired at or before now
// (the server's now() with the database clock), in batches of at most
// batchSize rows, like DeleteSucceeded. Expired keys no longer affect
// Register, so this only reclaims space.
func (s *Store) DeleteExpiredReplayKeys(ctx context.Context, now time.Time, batchSize int) (int64, error) {
	return s.deleteBatches(ctx, "delete expired replay keys", s.sql.deleteExpiredReplayKeys, s.now(now), batchSize)
}

func (s *Store) deleteBatches(ctx context.Context, op, sql string, cutoff any, batchSize int) (int64, error) {
	if batchSize <= 0 {
		return 0, fmt.Errorf("pgstore: %s: batch size is %d; it must be at least 1", op, batchSize)
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
		if n < int64(batchSize) {
			return total, nil
		}
	}
}
