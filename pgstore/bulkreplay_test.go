package pgstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/ops"
)

// TestBulkReplayFirstCallKeepsToItsTotal: dead letters that arrive while a
// bulk replay's first call runs, after it has counted its selection, are
// not replayed by it: the call goes through the items it counted, Done is
// Total, and every due time stays inside the spread.
func TestBulkReplayFirstCallKeepsToItsTotal(t *testing.T) {
	t.Parallel()
	hook := &afterQuery{}
	pool := pgtest.NewPoolWith(t, storePoolConns, func(cfg *pgxpool.Config) { cfg.ConnConfig.Tracer = hook })
	s := newStoreOn(t, pool, pgtest.NewSchema(t, pool))
	other := pgtest.NewPool(t, 1)
	ctx := t.Context()
	const selected, arriving = 100, 20
	insertDead(t, other, s.Schema(), 1, selected)
	hook.then = func(context.Context) { insertDead(t, other, s.Schema(), selected+1, arriving) }

	now, spread := baseTime.Add(24*time.Hour), selected*time.Second
	req := ops.ReplayRequest{Query: &ops.Query{Limit: 1000}, Actor: "ops", Reason: "bulk", Spread: spread, Now: now}
	hook.armed.Store(true)
	res, err := s.Replay(ctx, req)
	require.NoError(t, err)
	require.False(t, hook.armed.Load(), "the hook ran")

	assert.Equal(t, selected, res.Total)
	assert.Equal(t, selected, res.Done, "Done is Total once the replay is complete")
	assert.Empty(t, res.Next)
	for i, r := range res.Items {
		assert.True(t, r.DueAt.Before(now.Add(spread)), "item %d due %v, not before the spread's end %v", i, r.DueAt, now.Add(spread))
	}
	require.Equal(t, selected, len(res.Items), "the items counted, and no others")
	for i, r := range res.Items {
		assert.Equal(t, fmt.Sprintf("evt_%05d", selected-i), r.Key.EventID, "newest first, of those counted")
	}
}

// afterQuery is a tracer that runs then once, when the first statement
// reading dead letters that starts after armed is set ends.
type afterQuery struct {
	armed atomic.Bool
	then  func(ctx context.Context)
}

type readsDeadKey struct{}

func (a *afterQuery) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, readsDeadKey{}, strings.Contains(data.SQL, "i.state = 'dead'"))
}

func (a *afterQuery) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	if reads, _ := ctx.Value(readsDeadKey{}).(bool); reads && a.armed.CompareAndSwap(true, false) {
		a.then(ctx)
	}
}

// insertDead inserts n dead letters of provider acme, evt_<from>… on, the
// item evt_<g> dead at baseTime + g seconds.
func insertDead(t *testing.T, pool *pgxpool.Pool, schema string, from, n int) {
	t.Helper()
	_, err := pool.Exec(context.Background(), pgtest.InsertItemsSQL((schema), `provider, tenant, event_id, event_type, payload,
			payload_sha256, key_id, state, attempts, duplicate_count, last_seen_at, received_at, updated_at, dead_at,
			last_error_class, last_error_message, last_error_at`, `SELECT 'acme', '', 'evt_' || lpad(g::text, 5, '0'), 'invoice.paid', '\x7b7d', decode(repeat('00', 32), 'hex'),
			'k1', 'dead', 1, 0, $1::timestamptz, $1::timestamptz, $1::timestamptz, $1::timestamptz + g * interval '1 second',
			'permanent', 'gone', $1::timestamptz
		FROM generate_series($2::int, $3::int) AS g`), baseTime, from, from+n-1)
	if err != nil {
		t.Errorf("inserting dead letters: %v", err)
	}
}
