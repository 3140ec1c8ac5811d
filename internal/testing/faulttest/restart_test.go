//go:build unix

package faulttest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/ops"
)

// TestPostgresRestartUnderLoad stops the database itself, as a crash or a
// failover does, while providers deliver to two nodes (each a Receiver
// and a Processor): a private PostgreSQL cluster, stopped with pg_ctl stop
// -m immediate (no checkpoint, every session cut) and started again, so
// that it recovers from its WAL. While it is down every webhook is
// answered 503 with Retry-After; once it is up the nodes recover by
// themselves, without a restart. After the providers' retries no webhook
// acknowledged is lost, none is stored twice, and every item succeeded.
func TestPostgresRestartUnderLoad(t *testing.T) {
	pgtest.DSN(t) // the fault tests' switch; this one runs a cluster of its own
	t.Parallel()
	pg := startPrivatePostgres(t)
	in := newInbox(t, pg.dsn)
	var (
		down    = scale(2*time.Second, 10*time.Second)
		before  = scale(40, 400) // 2xx answers per node before the stop
		after   = scale(20, 200) // and after the start
		settle  = scale(60*time.Second, 3*time.Minute)
		senders = scale(4, 8) // per node
	)
	var nodes []*node
	for _, name := range []string{"a", "b"} {
		nodes = append(nodes, startNode(t, nodeConfig{DSN: pg.dsn, Schema: in.schema, Name: name,
			Workers: 4, Lease: 2 * time.Second, Poll: 250 * time.Millisecond, HandlerDelay: 5 * time.Millisecond}))
	}
	p := newProvider(t)
	stop := make(chan struct{})
	var loads []*load
	for _, n := range nodes {
		loads = append(loads, startLoad(p, n.url, n.cfg.Name, senders, 50*time.Millisecond, stop))
	}
	for _, l := range loads {
		l.awaitStored(t, before, 30*time.Second)
	}

	pg.stop(t)
	downAt := time.Now()
	time.Sleep(down) // the outage itself
	upAt := time.Now()
	pg.start(t)
	for _, l := range loads { // each node's receiver recovered by itself
		l.awaitStored(t, int(l.stored.Load())+after, 30*time.Second)
	}
	close(stop)
	var (
		answers []answer
		events  []delivery
	)
	for _, l := range loads {
		l.wg.Wait()
		answers = append(answers, l.all()...)
		events = append(events, l.unique()...)
	}

	// While the database was down: 503 with Retry-After, nothing 2xx.
	unavailable, recoveredAt := 0, time.Time{}
	for _, a := range answers {
		end := a.Start.Add(a.Took)
		if a.Start.After(downAt) && end.Before(upAt) {
			assert.False(t, a.ok(), "event %s was answered %d while the database was down", a.ID, a.Code)
			if a.Code == 503 {
				unavailable++
				assert.Equal(t, "5", a.RetryAfter, "event %s: Retry-After", a.ID)
			} else {
				assert.NoError(t, a.Err, "event %s: every answer while the database is down is a 503", a.ID)
				assert.Equal(t, 503, a.Code, "event %s", a.ID)
			}
		}
		if a.Start.After(upAt) && a.ok() && (recoveredAt.IsZero() || end.Before(recoveredAt)) {
			recoveredAt = end
		}
	}
	assert.Greater(t, unavailable, 5, "webhooks answered 503 while the database was down")

	// Every webhook acknowledged is in the inbox: the WAL kept each commit
	// the stop cut short of a checkpoint. (The test's pool lost its
	// connections with the stop: a fresh one.)
	in.pool.Reset()
	ackd := acked(answers)
	for id := range ackd {
		_, err := in.store.Get(context.Background(), key(id))
		assert.False(t, errors.Is(err, ops.ErrNotFound), "event %s was answered 2xx but is not in the inbox", id)
		assert.NoError(t, err, "event %s", id)
	}

	// The providers retry what got no 2xx; the nodes, never restarted,
	// handle everything.
	retried := p.redeliver(t, nodes[0].url, events, ackd)
	in.awaitSettled(t, settle)
	for _, n := range nodes {
		select {
		case <-n.exited:
			t.Fatalf("node %s exited: %v", n.cfg.Name, n.err)
		default:
		}
	}
	for _, n := range nodes {
		n.stop(t)
	}
	assert.Equal(t, len(events), in.count(t), "one item per event: none stored twice")
	// (Stats estimates the succeeded count of a large inbox: counted here.)
	var notSucceeded int
	require.NoError(t, in.pool.QueryRow(context.Background(), "SELECT count(*) FROM "+pgx.Identifier{in.schema, "inbox_jobs"}.Sanitize()+
		" WHERE state <> 'succeeded'").Scan(&notSucceeded))
	assert.Zero(t, notSucceeded, "every event succeeded")
	reruns := 0
	for _, n := range nodes {
		for _, k := range n.handled("done ") {
			reruns += k - 1
		}
	}
	t.Logf("%v down: %d webhooks answered 503; first 2xx %v after the start began; %d events, %d acknowledged before the providers' retries, %d retried; %d handler runs beyond one (settlements cut by the stop)",
		upAt.Sub(downAt).Round(time.Millisecond), unavailable, recoveredAt.Sub(upAt).Round(time.Millisecond), len(events), len(ackd), retried, reruns)
}
