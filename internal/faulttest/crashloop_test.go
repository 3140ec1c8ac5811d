//go:build unix

package faulttest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// TestCrashLoopCostsOnlyThePoison: a poison event whose handler kills its
// process (SIGKILL), beside 15 ordinary events (handlers that take a while
// and never fail), all due at once and leased by the same acquisitions.
// The node is restarted after every crash, as a service manager does.
// Only the poison ends dead, after as many attempts as the retry budget
// (each crashed); every ordinary event succeeded on its one attempt, none
// charged for the crashes it waited beside. One worker, so that each
// ordinary event waits for it beside the poison instead of running with
// it: a crash costs an attempt to whatever was running.
func TestCrashLoopCostsOnlyThePoison(t *testing.T) {
	dsn := requireDB(t)
	t.Parallel()
	in := newInbox(t, dsn)
	const (
		ordinary = 15
		budget   = 5 // ExponentialPolicy's default MaxAttempts, the node's policy
	)
	delay := scale(200*time.Millisecond, time.Second)

	// The events are due at once, the poison first: the first acquisition
	// leases it and the next ordinary event together.
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

	cfg := nodeConfig{DSN: dsn, Schema: in.schema, Workers: 1, Lease: time.Second, Poll: 100 * time.Millisecond,
		HandlerDelay: delay, PoisonType: "poison"}
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
	for _, n := range nodes {
		for id, k := range n.handled("start ") {
			started[id] += k
		}
	}
	assert.Equal(t, budget, started["poison"], "the poison ran once per attempt")
	for i := range ordinary {
		id := fmt.Sprintf("ordinary-%02d", i)
		it := in.get(t, id)
		assert.Equal(t, webhooks.StateSucceeded, it.State, "%s: %v", id, outcomes(it))
		assert.Equal(t, 1, it.Attempts, "%s waited beside the crashes without paying for them: %v", id, outcomes(it))
		assert.Equal(t, []webhooks.AttemptOutcome{webhooks.AttemptSucceeded}, outcomes(it), "%s", id)
		assert.Equal(t, 1, started[id], "%s ran once", id)
	}
	t.Logf("%d crashes, %d node runs; ordinary handlers of %v", crashes, len(nodes), delay)
}
