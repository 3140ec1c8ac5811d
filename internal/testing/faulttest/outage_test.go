//go:build unix

package faulttest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/faultproxy"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
)

// TestDatabaseOutage cuts a node off from PostgreSQL while providers
// deliver to it: a proxy between its pool and the server first stalls
// every connection (bytes stop, nothing closes, as with a frozen server or
// a partition), then drops them all and refuses new ones. While the
// database is unreachable no webhook is answered 2xx: each is answered 503
// with Retry-After within the receive's store deadline, and the processor
// waits between attempts instead of spinning. Once the proxy heals, the
// node recovers by itself; after the providers' retries every event has
// one item, and every item succeeded: nothing was lost and nothing stays
// leased.
func TestDatabaseOutage(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Parallel()
	in := newInbox(t, dsn)
	proxy, err := faultproxy.New(pgtest.Address(t, dsn))
	require.NoError(t, err)
	t.Cleanup(func() { proxy.Close() })
	var (
		// The stall outlasts the bound on an answer by 1.5 s, so a
		// receive without a deadline, held until the drop, fails it.
		stallFor = scale(5*time.Second, 15*time.Second)
		dropFor  = scale(3*time.Second, 10*time.Second)
	)
	const (
		storeTimeout = 2 * time.Second // the Receiver's default
		// maxCPU bounds the node's processor time during the outage, as a
		// share of one core. Answering the providers' 20 requests a second
		// 503 takes under a tenth under the race detector; a loop that
		// retries without pause takes what the machine gives it (most of a
		// core when idle, two fifths with a load of 12 on 2 cores).
		maxCPU = 0.3
		poll   = 250 * time.Millisecond
	)
	n := startNode(t, nodeConfig{DSN: pgtest.WithAddress(t, dsn, proxy.Addr()), Schema: in.schema, Name: "cut-off",
		Workers: 4, Lease: 3 * time.Second, Poll: poll, HandlerDelay: 5 * time.Millisecond})
	p := newProvider(t)

	stop := make(chan struct{})
	l := startLoad(p, n.url, "evt", 4, 200*time.Millisecond, stop)
	l.awaitStored(t, 40, 30*time.Second)

	// Each phase's processor time is measured on its own: a retry loop
	// without pause spins only where calls fail fast, while dropped.
	proxy.Stall()
	brokenAt, cpuAt := time.Now(), n.cpu(t)
	time.Sleep(stallFor)
	stalledCPU, stalledFor := n.cpu(t)-cpuAt, time.Since(brokenAt)
	proxy.Drop()
	failedAcquisitions := func() int { return len(n.stderr.matching("acquiring inbox items failed")) }
	droppedAt, cpuAt, failedBefore := time.Now(), n.cpu(t), failedAcquisitions()
	time.Sleep(dropFor)
	droppedCPU, droppedFor, failed := n.cpu(t)-cpuAt, time.Since(droppedAt), failedAcquisitions()-failedBefore
	healedAt := time.Now()
	proxy.Heal()

	// Recovery, without a restart.
	stored := l.stored.Load()
	l.awaitStored(t, int(stored)+20, 30*time.Second)
	close(stop)
	l.wg.Wait()

	var during, recoveredAt = 0, time.Time{}
	for _, a := range l.all() {
		end := a.Start.Add(a.Took)
		if a.Start.After(brokenAt) && end.Before(healedAt) {
			during++
			assert.False(t, a.ok(), "event %s was answered %d while the database was unreachable", a.ID, a.Code)
			assert.Equal(t, 503, a.Code, "event %s: %v", a.ID, a.Err)
			assert.Equal(t, "5", a.RetryAfter, "event %s: Retry-After", a.ID)
			assert.Less(t, a.Took, storeTimeout+1500*time.Millisecond, "event %s was answered after %v", a.ID, a.Took)
		}
		if a.Start.After(healedAt) && a.ok() && (recoveredAt.IsZero() || end.Before(recoveredAt)) {
			recoveredAt = end
		}
	}
	assert.Greater(t, during, 10, "webhooks delivered during the outage")
	// The processor tries again once per poll interval, whatever the
	// machine's load: a count, where processor time depends on the load.
	assert.NotZero(t, failed, "the processor tried to acquire while the database was down")
	assert.LessOrEqual(t, failed, 2*int(dropFor/poll)+3, "failed acquisitions in %v, polling every %v", droppedFor, poll)
	assert.NotEmpty(t, n.stderr.matching("store timeout"), "a receive ran out of its store deadline")
	for _, phase := range []struct {
		name      string
		cpu, wall time.Duration
	}{{"stalled", stalledCPU, stalledFor}, {"dropped", droppedCPU, droppedFor}} {
		assert.Less(t, phase.cpu.Seconds()/phase.wall.Seconds(), maxCPU,
			"the node used %v of processor time in %v while the database was %s", phase.cpu, phase.wall, phase.name)
	}

	// The providers retry what got no 2xx; then everything is handled.
	retried := p.redeliver(t, n.url, l.unique(), acked(l.all()))
	in.awaitSettled(t, scale(60*time.Second, 3*time.Minute))
	n.stop(t)
	states := in.stats(t)
	assert.Equal(t, map[webhooks.State]int64{webhooks.StateSucceeded: int64(len(l.unique()))}, nonZero(states), "every event succeeded, once")
	assert.Equal(t, len(l.unique()), in.count(t), "one item per event")
	for _, d := range l.unique() {
		it := in.get(t, d.ID)
		assert.Equal(t, webhooks.StateSucceeded, it.State, "event %s: %v", d.ID, outcomes(it))
	}
	t.Logf("outage of %v: %d webhooks answered 503; node CPU %v in %v stalled, %v in %v dropped, %d failed acquisitions; recovered %v after healing; %d events, %d retried by the providers",
		healedAt.Sub(brokenAt).Round(time.Millisecond), during, stalledCPU, stalledFor.Round(time.Millisecond), droppedCPU, droppedFor.Round(time.Millisecond), failed,
		recoveredAt.Sub(healedAt).Round(time.Millisecond), len(l.unique()), retried)
}

// nonZero drops the zero counts of a Stats.States.
func nonZero(m map[webhooks.State]int64) map[webhooks.State]int64 {
	out := map[webhooks.State]int64{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

// load is providers delivering new events to one endpoint until stopped.
type load struct {
	mu      sync.Mutex
	events  []delivery
	answers []answer
	stored  atomic.Int64 // answers 2xx
	more    chan struct{}
	wg      sync.WaitGroup
}

// startLoad starts senders, each delivering a new event (its ID prefix-N)
// at most every gap, until stop is closed.
func startLoad(p *provider, url, prefix string, senders int, gap time.Duration, stop <-chan struct{}) *load {
	l := &load{more: make(chan struct{}, 1)}
	var next atomic.Int64
	for range senders {
		l.wg.Go(func() {
			t := time.NewTicker(gap)
			defer t.Stop()
			for {
				d := newDelivery(fmt.Sprintf("%s-%05d", prefix, next.Add(1)), "order.created")
				a := p.send(url, d)
				l.mu.Lock()
				l.events = append(l.events, d)
				l.answers = append(l.answers, a)
				l.mu.Unlock()
				if a.ok() {
					l.stored.Add(1)
					select {
					case l.more <- struct{}{}:
					default:
					}
				}
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		})
	}
	return l
}

// awaitStored waits until n deliveries were answered 2xx.
func (l *load) awaitStored(t *testing.T, n int, within time.Duration) {
	t.Helper()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for l.stored.Load() < int64(n) {
		select {
		case <-l.more:
		case <-deadline.C:
			t.Fatalf("%d of %d webhooks stored within %v", l.stored.Load(), n, within)
		}
	}
}

func (l *load) all() []answer {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]answer(nil), l.answers...)
}

func (l *load) unique() []delivery {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]delivery(nil), l.events...)
}
