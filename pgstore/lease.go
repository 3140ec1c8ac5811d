package pgstore

import (
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

// AcquireNext implements webhooks.LeaseStore with one statement: the due
// row is locked with FOR UPDATE SKIP LOCKED and given a fresh token
// (gen_random_uuid) and expiry. A row that cannot be read is given back as
// AcquireBatch describes, and AcquireNext returns an error.
func (s *Store) AcquireNext(ctx context.Context, now time.Time, leaseDuration time.Duration) (*webhooks.Lease, error) {
	leases, err := s.acquire(ctx, "AcquireNext", now, leaseDuration, 1)
	if err != nil || len(leases) == 0 {
		return nil, err
	}
	return leases[0], nil
}

// AcquireBatch implements webhooks.BatchAcquirer: it leases up to max due
// items in one statement and returns them the longest due first. Rows that
// other transactions are leasing at that moment are skipped, so it may
// return fewer than max items while more are due.
//
// A leased row that cannot be read into a webhooks.Item (only a row changed
// outside pgstore, or written by a newer version of it, can be unreadable)
// is not returned: it is logged (see WithLogger) and given back at once,
// pending again, due when its lease would have expired and without the
// attempt being counted, so an instance that can read it may take it then.
// The rows that were read are returned; when none was, the result is an
// error. Either way no lease is left held under a token nobody has.
func (s *Store) AcquireBatch(ctx context.Context, now time.Time, leaseDuration time.Duration, max int) ([]*webhooks.Lease, error) {
	if max <= 0 {
		return nil, fmt.Errorf("pgstore: AcquireBatch max is %d; it must be at least 1", max)
	}
	return s.acquire(ctx, "AcquireBatch", now, leaseDuration, max)
}

// releaseTimeout bounds giving back an unreadable row.
const releaseTimeout = 5 * time.Second

// unreadable is an acquired row that could not be decoded.
type unreadable struct {
	key   webhooks.InboxKey
	token string
	err   error
}

func (s *Store) acquire(ctx context.Context, op string, now time.Time, d time.Duration, max int) ([]*webhooks.Lease, error) {
	if err := checkDuration(op, "lease duration", d); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.sql.acquire, s.now(now), d.Microseconds(), max)
	if err != nil {
		return nil, wrapErr(op, err)
	}
	defer rows.Close()
	type acquired struct {
		dueAt time.Time
		lease *webhooks.Lease
	}
	var (
		got []acquired
		bad []unreadable
	)
	for rows.Next() {
		// Each column is decoded on its own (decodeRow), so an unreadable
		// row does not end the iteration and leave the rest of the batch
		// leased to nobody, as rows.Scan would.
		var (
			a     acquired
			token string
			r     itemRow
		)
		dest := r.dest(&a.dueAt, &token)
		const keyColumns = 5 // due_at, token, provider, tenant, event_id
		failed, err := decodeRow(rows, dest)
		if err != nil && failed < keyColumns {
			// Cannot happen for text and uuid columns; nothing to give back.
			s.logger.ErrorContext(ctx, "pgstore: an acquired item could not be read, not even its key; it stays leased until its lease expires",
				"op", op, "error", err)
			continue
		}
		key := webhooks.InboxKey{Provider: r.provider, Tenant: r.tenant, EventID: r.eventID}
		if err != nil {
			bad = append(bad, unreadable{key, token, err})
			continue
		}
		it, err := r.item()
		if err != nil {
			bad = append(bad, unreadable{key, token, err})
			continue
		}
		a.lease = &webhooks.Lease{Token: token, ExpiresAt: it.LeaseExpiresAt, Attempt: it.Attempts, Item: it}
		got = append(got, a)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, wrapErr(op, err)
	}
	for _, u := range bad {
		s.release(ctx, op, u, now)
	}
	if len(got) == 0 && len(bad) > 0 {
		return nil, fmt.Errorf("pgstore: %s: %d due item(s) could not be read, such as %s (%v); they were given back and are due again after the lease duration",
			op, len(bad), bad[0].key, bad[0].err)
	}
	// RETURNING has no order; restore the due order of the CTE.
	slices.SortStableFunc(got, func(a, b acquired) int { return a.dueAt.Compare(b.dueAt) })
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
	args, err := leaseArgs(&webhooks.Lease{Token: u.token, Item: webhooks.Item{Key: u.key}}, s.now(now))
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
// returns the index of the column that failed.
func decodeRow(rows pgx.Rows, dest []any) (int, error) {
	fds := rows.FieldDescriptions()
	raw := rows.RawValues()
	if len(fds) != len(dest) || len(raw) != len(dest) {
		return 0, fmt.Errorf("the row has %d columns; want %d", len(raw), len(dest))
	}
	m := rows.TypeMap()
	for i, d := range dest {
		if err := m.Scan(fds[i].DataTypeOID, fds[i].Format, raw[i], d); err != nil {
			return i, fmt.Errorf("column %s: %w", fds[i].Name, err)
		}
	}
	return len(dest), nil
}

// Complete implements webhooks.LeaseStore.
func (s *Store) Complete(ctx context.Context, lease *webhooks.Lease, now time.Time) error {
	return s.settle(ctx, "complete", lease, s.sql.complete, s.now(now))
}

// Fail implements webhooks.LeaseStore. The message is truncated with
// webhooks.TruncateErrorMessage. With the database clock, the item is due
// decision.RetryAt.Sub(now) after the server's now().
func (s *Store) Fail(ctx context.Context, lease *webhooks.Lease, failure webhooks.Failure, decision webhooks.RetryDecision, now time.Time) error {
	// A handler's error text is not ours to reject: keep what text can hold.
	msg := webhooks.TruncateErrorMessage(sanitizeText(failure.Message))
	class := sanitizeText(string(failure.Class))
	var retryAt *time.Time
	if !decision.DeadLetter && !s.dbClock {
		retryAt = &decision.RetryAt
	}
	return s.settle(ctx, "fail", lease, s.sql.fail, s.now(now),
		decision.DeadLetter, retryAt, decision.RetryAt.Sub(now).Microseconds(), class, msg)
}

// Abandon implements webhooks.LeaseStore.
func (s *Store) Abandon(ctx context.Context, lease *webhooks.Lease, now time.Time) error {
	return s.settle(ctx, "abandon", lease, s.sql.abandon, s.now(now))
}

// ExtendLease implements webhooks.LeaseStore.
func (s *Store) ExtendLease(ctx context.Context, lease *webhooks.Lease, now time.Time, d time.Duration) error {
	if err := checkDuration("ExtendLease", "lease duration", d); err != nil {
		return err
	}
	if lease == nil {
		return errors.New("pgstore: ExtendLease needs a lease; got nil")
	}
	args, err := leaseArgs(lease, s.now(now), d.Microseconds())
	if err != nil {
		return fmt.Errorf("pgstore: extend lease on %s: %w", lease.Key(), err)
	}
	var expires time.Time
	err = s.pool.QueryRow(ctx, s.sql.extend, args...).Scan(&expires)
	if err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("pgstore: extend lease on %s: %w", lease.Key(), webhooks.ErrLeaseLost)
		}
		return wrapErr("extend lease on "+lease.Key().String(), err)
	}
	lease.ExpiresAt = expires.UTC()
	return nil
}

// settle runs a token-fenced UPDATE: no row changed means the token is not
// current, which is ErrLeaseLost.
func (s *Store) settle(ctx context.Context, op string, lease *webhooks.Lease, sql string, extra ...any) error {
	if lease == nil {
		return fmt.Errorf("pgstore: %s needs a lease; got nil", op)
	}
	args, err := leaseArgs(lease, extra...)
	if err != nil {
		return fmt.Errorf("pgstore: %s %s: %w", op, lease.Key(), err)
	}
	tag, err := s.pool.Exec(ctx, sql, args...)
	if err != nil {
		return wrapErr(op+" "+lease.Key().String(), err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("pgstore: %s %s: %w", op, lease.Key(), webhooks.ErrLeaseLost)
	}
	return nil
}

// leaseArgs returns the parameters of a fenced statement: the key and token
// ($1..$4, see leaseWhere), then extra, in one slice. A token that is not a
// UUID was never issued by this store, so it is lost.
func leaseArgs(lease *webhooks.Lease, extra ...any) ([]any, error) {
	k := lease.Key()
	if checkKey(k) != nil { // PostgreSQL cannot hold such a key
		return nil, webhooks.ErrLeaseLost
	}
	tok, err := uuid.Parse(lease.Token)
	if err != nil {
		return nil, webhooks.ErrLeaseLost
	}
	args := make([]any, 0, 4+len(extra))
	args = append(args, k.Provider, k.Tenant, k.EventID, pgtype.UUID{Bytes: tok, Valid: true})
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
