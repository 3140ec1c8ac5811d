package faulttest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/internal/testing/testlog"
	"github.com/hookinbox/webhooks/pgstore"
)

// TestInstancesShareOneDatabase runs several instances, each a Receiver
// and a Processor on a pool of its own, on one database. Providers deliver
// every event several times, to different instances at once. Each event
// has one item, at most one delivery is answered 202 (the others 200), and
// its handler runs once, successfully.
func TestInstancesShareOneDatabase(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Parallel()
	in := newInbox(t, dsn)
	var (
		events    = scale(60, 1000)
		instances = scale(3, 4)
	)
	const (
		copies  = 5 // deliveries of each event
		senders = 12
	)
	var (
		mu   sync.Mutex
		runs = map[string]int{}
	)
	mux := webhooks.NewMux()
	mux.MustHandleFunc("*", func(ctx context.Context, ev webhooks.Event) error {
		mu.Lock()
		runs[ev.ID]++
		mu.Unlock()
		select { // a little work, so instances overlap
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
		return nil
	})
	verifier, err := webhooks.NewHMACVerifier(nodeHMACOptions(), webhooks.StaticSecrets(nodeSecret))
	require.NoError(t, err)
	registry := webhooks.NewRegistry()
	registry.MustRegister(nodeProvider, verifier)

	ctx, cancel := context.WithCancel(context.Background())
	var running sync.WaitGroup
	urls := make([]string, instances)
	for i := range instances {
		store, err := pgstore.New(newPool(t, dsn, 4), pgstore.WithSchema(in.schema), pgstore.WithLogger(testlog.Logger(t)))
		require.NoError(t, err)
		proc, err := webhooks.NewProcessor(store, mux, webhooks.WithWorkers(2), webhooks.WithWakeSource(store.Listener()),
			webhooks.WithWorkerIdentity(fmt.Sprint("instance-", i), "faulttest"), webhooks.WithLogger(testlog.Logger(t)))
		require.NoError(t, err)
		rcv, err := webhooks.NewReceiver(registry, store, webhooks.WithReplayStore(store), webhooks.WithProcessor(proc), webhooks.WithLogger(testlog.Logger(t)))
		require.NoError(t, err)
		srv := httptest.NewServer(rcv)
		t.Cleanup(srv.Close)
		urls[i] = srv.URL + "/webhooks/" + nodeProvider
		running.Go(func() { assert.NoError(t, proc.Run(ctx)) })
	}
	t.Cleanup(func() {
		cancel()
		running.Wait()
	})

	// Every delivery of every event, shuffled: copies of one event go to
	// different instances, often at the same moment.
	type job struct {
		d   delivery
		url string
	}
	var jobs []job
	for e := range events {
		d := newDelivery(fmt.Sprintf("evt-%05d", e), "order.created")
		for c := range copies {
			jobs = append(jobs, job{d, urls[(e+c)%instances]})
		}
	}
	rand.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
	p := newProvider(t)
	codes := map[string][]int{}
	todo := make(chan job)
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			for j := range todo {
				a := p.deliverUntilStored(t, j.url, j.d, 20)
				mu.Lock()
				codes[j.d.ID] = append(codes[j.d.ID], a.Code)
				mu.Unlock()
			}
		})
	}
	for _, j := range jobs {
		todo <- j
	}
	close(todo)
	wg.Wait()

	in.awaitSettled(t, scale(60*time.Second, 5*time.Minute))
	cancel()
	running.Wait()

	assert.Equal(t, events, in.count(t), "one item per event")
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d instances, %d events delivered %d times each by %d senders: %d items, %d handler runs",
		instances, events, copies, senders, in.count(t), sum(runs))
	for e := range events {
		id := fmt.Sprintf("evt-%05d", e)
		accepted := 0
		for _, c := range codes[id] {
			if c == http.StatusAccepted {
				accepted++
			} else {
				assert.Equal(t, http.StatusOK, c, "event %s: a duplicate", id)
			}
		}
		assert.LessOrEqual(t, accepted, 1, "event %s: deliveries answered 202", id)
		assert.Equal(t, 1, runs[id], "event %s: handler runs", id)
		it := in.get(t, id)
		assert.Equal(t, webhooks.StateSucceeded, it.State, "event %s", id)
		assert.Equal(t, []webhooks.AttemptOutcome{webhooks.AttemptSucceeded}, outcomes(it), "event %s", id)
		assert.Equal(t, copies-1, it.DuplicateCount, "event %s", id)
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
