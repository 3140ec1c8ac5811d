package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	webhooks "github.com/hookinbox/webhooks"
)

// Register implements webhooks.ReplayStore in one statement (INSERT … ON
// CONFLICT … DO UPDATE … RETURNING): an expired registration is replaced in
// the same statement, and of concurrent calls with one key exactly one
// reports ReplayNew. Expired keys stay in the table until
// DeleteExpiredReplayKeys removes them. With the database clock the key
// expires reg.ExpiresAt.Sub(reg.Now) after the server's now().
func (s *Store) Register(ctx context.Context, reg webhooks.ReplayRegistration) (webhooks.ReplayOutcome, error) {
	payloadSHA256, now, expiresAt := reg.PayloadSHA256, reg.Now, reg.ExpiresAt
	for _, f := range []struct{ what, v string }{
		{"provider", reg.Provider}, {"replay key", reg.Key},
	} {
		if err := checkText(f.what, f.v); err != nil {
			return 0, err
		}
	}
	id, err := uuid.NewRandom()
	if err != nil {
		return 0, fmt.Errorf("pgstore: register replay key: generating a registration ID failed (the system's random source is broken): %w", err)
	}
	var expires *time.Time
	if !s.dbClock {
		expires = &expiresAt
	}
	var registered, sameDigest bool
	err = s.pool.QueryRow(ctx, s.sql.register,
		reg.Provider, reg.Key, payloadSHA256[:], pgtype.UUID{Bytes: id, Valid: true},
		s.now(now), expires, expiresAt.Sub(now).Microseconds(),
	).Scan(&registered, &sameDigest)
	if err != nil {
		return 0, wrapErr("register replay key", err)
	}
	switch {
	case registered:
		return webhooks.ReplayNew, nil
	case sameDigest:
		return webhooks.ReplaySeen, nil
	default:
		return webhooks.ReplayConflict, nil
	}
}
