//go:build unix

package faulttest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/ops"
)

// TestCrashLoopCostsOnlyThePoison: a poison event whose handler kills its
// process (SIGKILL), beside 15 ordinary events (handlers that take a while
// and never fail), all due at once and leased by the same acquisitions.
// The node is restarted after every crash, as a service manager does.
// Only the poison ends dead, after as many attempts as the retry budget
// (each crashed); every ordinary event succeeded.
//
// With one worker, each ordinary event waits beside the poison instead of
// running with it, and no crash costs it an attempt. With the default
// workers (100, as the example server runs), every ordinary event runs at
// the first crash (the poison's first attempt waits until they all do)
// and pays for it; from then on each lease taken over from a crashed
// attempt runs alone, so the poison crashes alone and the ordinary events
// pay for no other crash.
func TestCrashLoopCostsOnlyThePoison(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Parallel()
	for _, c := range []struct {
		name    string
		workers int
		delay   time.Duration
		// ranBeside is whether the ordinary events run at the first
		// crash: then it costs each an attempt.
		ranBeside bool
	}{
		{"WaitingBeside", 1, scale(200*time.Millisecond, time.Second), false},
		{"RunningBesideAtDefaultWorkers", webhooks.DefaultWorkers, time.Second, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			testCrashLoop(t, dsn, c.workers, c.delay, c.ranBeside)
		})
	}
}

func testCrashLoop(t *testing.T, dsn string, workers int, delay time.Duration, ranBeside bool) {
	in := newInbox(t, dsn)
	const (
		ordinary = 15
		budget   = 5 // ExponentialPolicy's default MaxAttempts, the node's policy
	)

	// The events are due at once, the poison first: the first acquisition
	// leases it and the next ordinary events together.
	now := time.Now()
	enqueue := func(id, typ string, at time.Time) {
		d := newDelivery(id, typ)
		_, err := in.store.Enqueue(context.Background(), webhooks.Envelope{
			Key: key(id), EventType: typ, Payload: d.Body, PayloadSHA256: sha256.Sum256(d.Body), ReceivedAt: at})
		require.NoError(t, err)
	}
	enqueue("poison", "poison", now.Add(-time.Second))
	for i := range ordinary {
		enqueue(fmt.Sprintf("ordinary-%02d", i), "order.created", now.Add(-time.Second+time.Duration(i+1)*time.Millisecond))
	}

	cfg := nodeConfig{DSN: dsn, Schema: in.schema, Workers: workers, Lease: time.Second, Poll: 100 * time.Millisecond,
		HandlerDelay: delay, PoisonType: "poison"}
	if ranBeside {
		cfg.PoisonBeside = ordinary
	}
	crashes := 0
	var nodes []*node
	for settled := false; !settled; {
		require.LessOrEqual(t, crashes, 2*budget, "the crash loop did not end")
		cfg.Name = fmt.Sprintf("run-%d", len(nodes))
		n := startNode(t, cfg)
		nodes = append(nodes, n)
		// Wait until the node dies or the inbox is settled. The inbox
		// gives no signal: it is polled, with a deadline.
		deadline := time.Now().Add(scale(60*time.Second, 5*time.Minute))
		for {
			select {
			case <-n.exited:
				crashes++
				n.awaitSessionsGone(t, in) // what it left may still commit
			case <-time.After(50 * time.Millisecond):
				s := in.stats(t)
				if s[webhooks.StatePending] == 0 && s[webhooks.StateLeased] == 0 {
					settled = true
					n.stop(t)
				} else {
					require.True(t, time.Now().Before(deadline), "the inbox did not settle: %v", s)
					continue
				}
			}
			break
		}
	}

	poison := in.get(t, "poison")
	assert.Equal(t, webhooks.StateDead, poison.State, "the poison is dead: %v", outcomes(poison))
	assert.Equal(t, budget, poison.Attempts, "its attempts are the retry budget")
	want := make([]webhooks.AttemptOutcome, budget)
	for i := range want {
		want[i] = ops.OutcomeCrashed
	}
	assert.Equal(t, want, outcomes(poison), "each of its attempts crashed its process; the dead-lettering ran nothing")
	if assert.NotNil(t, poison.LastError) {
		assert.Equal(t, webhooks.FailureLeaseExpired, poison.LastError.Class)
	}
	assert.Equal(t, budget, crashes, "one crash per attempt")

	started := map[string]int{}
	for i, n := range nodes {
		for id, k := range n.handled("start ") {
			started[id] += k
		}
		if i > 0 {
			// After the first crash every event is taken over from a
			// crashed attempt: none runs beside another.
			assert.Empty(t, overlaps(n.stdout.all()), "run %d: handlers ran beside each other", i)
		}
	}
	assert.Equal(t, budget, started["poison"], "the poison ran once per attempt")
	wantOrdinary := []webhooks.AttemptOutcome{webhooks.AttemptSucceeded}
	if ranBeside {
		wantOrdinary = []webhooks.AttemptOutcome{ops.OutcomeCrashed, webhooks.AttemptSucceeded}
	}
	for i := range ordinary {
		id := fmt.Sprintf("ordinary-%02d", i)
		it := in.get(t, id)
		assert.Equal(t, webhooks.StateSucceeded, it.State, "%s: %v", id, outcomes(it))
		assert.Equal(t, len(wantOrdinary), it.Attempts, "%s paid only for the crash it ran beside, if any: %v", id, outcomes(it))
		assert.Equal(t, wantOrdinary, outcomes(it), "%s", id)
		assert.LessOrEqual(t, started[id], len(wantOrdinary), "%s ran at most once per attempt", id)
	}
	t.Logf("%d workers: %d crashes, %d node runs; ordinary handlers of %v", workers, crashes, len(nodes), delay)
}

// overlaps returns the handlers that a node's output (see node_test.go)
// shows starting while another one ran.
func overlaps(lines []string) []string {
	running := map[string]bool{}
	var out []string
	for _, l := range lines {
		fields := strings.Fields(l)
		if len(fields) != 3 {
			continue
		}
		switch fields[0] {
		case "start":
			for other := range running {
				out = append(out, fields[1]+" started while "+other+" ran")
			}
			running[fields[1]] = true
		case "done":
			delete(running, fields[1])
		}
	}
	return out
}
