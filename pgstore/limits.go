package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	webhooks "github.com/hookinbox/webhooks"
)

var _ webhooks.FlowStore = (*Store)(nil)

// Flow implements webhooks.FlowStore: an acquisition under Limits takes
// its handler's advisory lock (lockLimitsSQL) and then, in the same
// transaction (one round trip, a batch), counts the handler's running
// leases, reads its token bucket (a row of inbox_limits), acquires no
// more than both allow and spends the tokens (acquireLimitedSQL). The
// acquisitions of one handler under Limits, from every instance, so run
// one after the other; those without Limits take no lock and run as
// before. A Fair acquisition takes the same lock and makes its turns
// among the tenants in the same statement (acquireFairSQL), which moves
// the handler's row of inbox_fair. Each job keeps its priority in a
// column (migration 0010), and an acquisition with Priorities reads the
// due jobs of each from inbox_jobs_priority_idx (prioritizedDue).
func (s *Store) Flow() webhooks.FlowSupport {
	return webhooks.FlowSupport{Limits: true, Fair: true, Priorities: true}
}

// limitsClass is the first key of the advisory locks of the store's
// limits (the second is the handler's hashtext), one per schema, so two
// stores in different schemas of a database do not wait for each other
// (unless their hashes meet, which only serializes them).
func limitsClass(schema string) int32 { return int32(fnv64("hookinbox limits " + schema)) }

// acquireLimited runs acquireLimitedSQL (acquireFairSQL for a Fair
// acquisition, acquireLimitedPrioritizedSQL for one with Priorities) with
// args after lockLimitsSQL, in
// one transaction sent as a batch: the rows of the second statement are
// read while the transaction is open, and it commits when they are.
func (s *Store) acquireLimited(ctx context.Context, req webhooks.AcquireRequest, args []any) (pgx.Rows, func() error, error) {
	b := &pgx.Batch{}
	b.Queue(s.sql.lockLimits, s.limitsClass, req.Handler)
	l := req.Limits
	args = append(args, l.MaxRunning, l.TokenInterval().Microseconds(), l.BucketSize())
	switch {
	case req.Fair:
		b.Queue(s.sql.acquireFair, append(args, req.FairVisits())...)
	case len(req.Priorities) > 0:
		b.Queue(s.sql.acquireLimitedPrioritized, append(args, req.Priorities)...)
	default:
		b.Queue(s.sql.acquireLimited, args...)
	}
	br := s.pool.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return nil, nil, err
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, nil, err
	}
	return rows, br.Close, nil
}
