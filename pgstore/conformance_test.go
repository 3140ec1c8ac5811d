package pgstore_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/internal/testing/testlog"
	"github.com/hookinbox/webhooks/pgstore"
	"github.com/hookinbox/webhooks/storetest"
)

// txStore is a store with the pool that completeInTx begins its
// transactions on.
type txStore struct {
	*pgstore.Store
	pool *pgxpool.Pool
}

func TestInboxConformance(t *testing.T) {
	t.Parallel()
	runInboxConformance(t, newRecycledSchemas(t, nil))
}

// TestInboxConformanceOneStatementEnqueue runs the inbox suite's groups
// of jobs, ordering keys and pauses (whose scoped cases park what the
// enqueue stores), on stores that store each Enqueue in a statement of its
// own (WithEnqueueBatch(1): enqueueSQL, whose jobsCTE keeps the ordering
// keys' bookkeeping apart from the group commit's enqueueBatchSQL, as
// EnqueueTx does).
//
// It runs with WEBHOOKS_TEST_LONG=1 (.ci/run runs it so), to keep make
// test within its time; TestOvertookSeesADeathAfterItsSnapshot and the
// other EnqueueTx tests exercise the statement in every run.
func TestInboxConformanceOneStatementEnqueue(t *testing.T) {
	if os.Getenv("WEBHOOKS_TEST_LONG") != "1" {
		t.Skip("runs with WEBHOOKS_TEST_LONG=1 (.ci/run's long steps): the jobs' and ordering keys' cases with one statement per Enqueue")
	}
	t.Parallel()
	schemas := newRecycledSchemas(t, nil)
	schemas.options = []pgstore.Option{pgstore.WithEnqueueBatch(1)}
	storetest.RunInbox(t, func(t *testing.T) webhooks.InboxStore {
		s, pool := schemas.store(t)
		return txStore{s, pool}
	}, storetest.Features{OrderRace: struct{ Events, Keys int }{400, 20}, Groups: []string{"Handlers", "OrderingKeys", "Pauses", "Priorities"}})
}

// runInboxConformance runs storetest's inbox suite on stores in schemas.
func runInboxConformance(t *testing.T, schemas *recycledSchemas) {
	runInboxConformanceWith(t, schemas, inboxFeatures())
}

// runInboxConformanceWith runs storetest's inbox suite on stores in
// schemas, with f.
func runInboxConformanceWith(t *testing.T, schemas *recycledSchemas, f storetest.Features) {
	storetest.RunInbox(t, func(t *testing.T) webhooks.InboxStore {
		s, pool := schemas.store(t)
		return txStore{s, pool}
	}, f)
}

// inboxFeatures are the suite's features for pgstore, sized for the run
// (WEBHOOKS_TEST_LONG=1 or not).
func inboxFeatures() storetest.Features {
	return storetest.Features{CompleteInTx: completeInTx, OrderRace: orderRace(), Outage: outage(), FairBacklog: fairBacklog()}
}

// otherRunFeatures are the suite's features for its runs in another
// configuration (pgx's other exec modes, through a pooler): those of the
// default run, but the fairness case's backlog at its quick size even
// under WEBHOOKS_TEST_LONG=1. The 100,000 of its long size run once, in
// the default mode (.ci/run's step for the full-size races); in every
// mode at once, they took the exec modes' run past go test's ten
// minutes.
func otherRunFeatures() storetest.Features {
	f := inboxFeatures()
	f.FairBacklog = 2_000
	return f
}

// orderRace is the size of storetest's two-instance ordering race: the
// full 10,000 events over 100 keys with WEBHOOKS_TEST_LONG=1 (.ci/run's
// long step runs it), 2,000 over 40 otherwise, which keeps make test
// within its budget (the full size takes about 50 s under -race here).
func orderRace() (size struct{ Events, Keys int }) {
	if os.Getenv("WEBHOOKS_TEST_LONG") == "1" {
		return size
	}
	size.Events, size.Keys = 2_000, 40
	return size
}

// outage is how long storetest's breaker case keeps its dependency down:
// the minute with WEBHOOKS_TEST_LONG=1 (.ci/run's long step), the
// suite's 1 s otherwise.
func outage() time.Duration {
	if os.Getenv("WEBHOOKS_TEST_LONG") == "1" {
		return time.Minute
	}
	return 0
}

// fairBacklog is the backlog of storetest's fairness case with two
// Processors: the 100,000 with WEBHOOKS_TEST_LONG=1 (.ci/run's
// long step), 2,000 otherwise (enqueueing 100,000 takes most of a
// minute here).
func fairBacklog() int {
	if os.Getenv("WEBHOOKS_TEST_LONG") == "1" {
		return 100_000
	}
	return 2_000
}

// completeInTx is storetest's hook for CompleteTx: it completes ev in a
// transaction of its own, then commits or rolls back whatever the
// completion returned.
func completeInTx(t *testing.T, s webhooks.InboxStore, ev webhooks.Event, commit bool) (completeErr, commitErr error) {
	t.Helper()
	ts := s.(txStore)
	ctx := t.Context()
	tx, err := ts.pool.Begin(ctx)
	if err != nil {
		t.Fatalf("beginning a transaction: %v", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // a no-op after Commit
	completeErr = ts.CompleteTx(ctx, tx, ev)
	if !commit {
		return completeErr, tx.Rollback(ctx)
	}
	return completeErr, tx.Commit(ctx)
}

func TestReplayConformance(t *testing.T) {
	t.Parallel()
	runReplayConformance(t, newRecycledSchemas(t, nil))
}

// runReplayConformance runs storetest's replay suite on stores in schemas.
func runReplayConformance(t *testing.T, schemas *recycledSchemas) {
	storetest.RunReplay(t, func(t *testing.T) webhooks.ReplayStore {
		s, _ := schemas.store(t)
		return s
	})
}

// recycledSchemas hands the conformance cases migrated schemas: a case's
// schema is emptied when the case ends and given to the next one, so the
// suite's hundred cases migrate (and drop) a few schemas, as many as run
// at once, instead of one each: creating and dropping the tables was most
// of the cost of a case. Every case still gets a store that is empty and
// that no other running case uses, as storetest requires.
type recycledSchemas struct {
	admin     *pgxpool.Pool         // migrates, empties, and drops when the run ends
	owner     *testing.T            // the whole run: the schemas live as long as it
	dsn       string                // what each store's pool connects to
	configure func(*pgxpool.Config) // applied to each store's pool, when not nil
	options   []pgstore.Option      // given to each store, after its schema and logger
	mu        sync.Mutex
	free      []string
}

// newRecycledSchemas returns the schemas of a run that t owns; configure,
// when not nil, is applied to the pool of each store (see
// pgtest.NewPoolWith).
func newRecycledSchemas(t *testing.T, configure func(*pgxpool.Config)) *recycledSchemas {
	return newRecycledSchemasAt(t, pgtest.DSN(t), configure)
}

// newRecycledSchemasAt is newRecycledSchemas with every pool, the stores'
// and the one that migrates, on dsn (a pooler's, say).
func newRecycledSchemasAt(t *testing.T, dsn string, configure func(*pgxpool.Config)) *recycledSchemas {
	return &recycledSchemas{admin: pgtest.NewPoolAt(t, dsn, 2, nil), owner: t, dsn: dsn, configure: configure}
}

// store returns a store in a schema of its own until t ends, and its pool.
func (r *recycledSchemas) store(t *testing.T) (*pgstore.Store, *pgxpool.Pool) {
	t.Helper()
	r.mu.Lock()
	var schema string
	if n := len(r.free); n > 0 {
		schema, r.free = r.free[n-1], r.free[:n-1]
	}
	r.mu.Unlock()
	if schema == "" {
		schema = pgtest.NewSchema(r.owner, r.admin)
		newStoreOn(t, r.admin, schema) // migrates it
	}
	t.Cleanup(func() {
		// Registered before the store's pool is made, so this runs after it
		// is closed: nothing of the case's is left in the schema's tables.
		if err := r.empty(schema); err != nil {
			t.Errorf("emptying the test schema %s for the next case: %v", schema, err)
			return
		}
		r.mu.Lock()
		r.free = append(r.free, schema)
		r.mu.Unlock()
	})
	pool := pgtest.NewPoolAt(t, r.dsn, storePoolConns, r.configure)
	s, err := pgstore.New(pool, append([]pgstore.Option{pgstore.WithSchema(schema), pgstore.WithLogger(testlog.Logger(t))}, r.options...)...)
	require.NoError(t, err)
	return s, pool
}

// empty deletes every row of the schema's tables; the item's history goes
// with it (its foreign keys cascade).
func (r *recycledSchemas) empty(schema string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q := pgx.Identifier{schema}.Sanitize()
	_, err := r.admin.Exec(ctx, "DELETE FROM "+q+".inbox_events; DELETE FROM "+q+".inbox_keys; DELETE FROM "+q+".inbox_limits; DELETE FROM "+q+".inbox_fair; DELETE FROM "+q+".inbox_pauses; DELETE FROM "+q+".replay_keys")
	return err
}
