//go:build unix

package faulttest

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/internal/testing/testlog"
	"github.com/hookinbox/webhooks/ops"
	"github.com/hookinbox/webhooks/pgstore"
)

// TestPausedWorkerCannotSettle stops a node with SIGSTOP while its
// handlers run, for longer than its leases last. Another processor takes
// the items over and completes them. When the node resumes, its handlers
// finish or are cancelled, and nothing it does changes the items: its
// renewals and settlements are refused, and the attempt history records
// its attempts as lease_lost.
func TestPausedWorkerCannotSettle(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Parallel()
	in := newInbox(t, dsn)
	var (
		rounds  = scale(1, 4)
		workers = scale(2, 6)
	)
	const lease = time.Second
	paused := startNode(t, nodeConfig{DSN: dsn, Schema: in.schema, Name: "paused", Workers: workers, Lease: lease,
		HandlerDelay: 2 * lease})
	p := newProvider(t)

	for round := range rounds {
		var ids []string
		for i := range workers {
			d := newDelivery(fmt.Sprintf("slow-%d-%d", round, i), "order.created")
			require.Equal(t, 202, p.send(paused.url, d).Code)
			ids = append(ids, d.ID)
		}
		paused.stdout.await(t, 30*time.Second, "the node's handlers to start", func([]string) bool {
			started := paused.handled("start ")
			for _, id := range ids {
				if started[id] == 0 {
					return false
				}
			}
			return true
		})
		paused.signal(t, syscall.SIGSTOP)

		// Another instance takes each item once its lease expired, and
		// completes it.
		runs := takeOver(t, in, func() bool {
			for _, id := range ids {
				if in.get(t, id).State != webhooks.StateSucceeded {
					return false
				}
			}
			return true
		})
		before := map[string]ops.Detail{}
		for _, id := range ids {
			before[id] = in.get(t, id)
			assert.Equal(t, 1, runs[id], "event %s ran once on the instance that took it over", id)
		}

		paused.signal(t, syscall.SIGCONT)
		deadline := time.Now().Add(30 * time.Second)
		for _, id := range ids {
			for {
				it := in.get(t, id)
				if len(it.History) == 2 && it.History[0].Outcome == ops.OutcomeLeaseLost {
					break
				}
				require.True(t, time.Now().Before(deadline), "event %s: the resumed worker's attempt was not recorded as lease_lost: %v", id, outcomes(it))
				time.Sleep(20 * time.Millisecond)
			}
		}
		for _, id := range ids {
			after := in.get(t, id)
			assert.Equal(t, before[id].Item, after.Item, "event %s: the resumed worker changed the item", id)
			require.Len(t, after.History, 2)
			late, took := after.History[0], after.History[1]
			assert.Equal(t, ops.OutcomeLeaseLost, late.Outcome, "event %s", id)
			assert.Equal(t, "paused", late.Worker, "event %s", id)
			assert.Equal(t, webhooks.AttemptSucceeded, took.Outcome, "event %s", id)
			assert.Equal(t, "takeover", took.Worker, "event %s", id)
		}
	}
	paused.stop(t)
	assert.NotEmpty(t, paused.stderr.matching("lease lost"), "the resumed node logged its lost leases")
	t.Logf("%d rounds of %d handlers paused past a %v lease: every item completed by the takeover, every late renewal or settlement refused and recorded as lease_lost",
		rounds, workers, lease)
}

// takeOver runs a processor of its own, on a pool of its own, until done
// reports true, and returns how many times its handler ran each event.
func takeOver(t *testing.T, in *inbox, done func() bool) map[string]int {
	t.Helper()
	store, err := pgstore.New(newPool(t, in.dsn, 4), pgstore.WithSchema(in.schema), pgstore.WithLogger(testlog.Logger(t)))
	require.NoError(t, err)
	var (
		mu   sync.Mutex
		runs = map[string]int{}
	)
	mux := webhooks.NewMux()
	mux.MustHandleFunc("*", func(_ context.Context, ev webhooks.Event) error {
		mu.Lock()
		runs[ev.ID]++
		mu.Unlock()
		return nil
	})
	proc, err := webhooks.NewProcessor(store, mux, webhooks.WithPollInterval(50*time.Millisecond),
		webhooks.WithWorkerIdentity("takeover", "faulttest"), webhooks.WithLogger(testlog.Logger(t)))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- proc.Run(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			cancel()
			<-stopped
			t.Fatal("the items were not taken over within 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	require.NoError(t, <-stopped)
	mu.Lock()
	defer mu.Unlock()
	return runs
}
