//go:build unix

package faulttest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/testing/pgtest"
	"github.com/hookinbox/webhooks/ops"
)

// TestCrashUnderLoad kills a node with SIGKILL while providers deliver to
// it and its handlers run, with events of which some are delivered twice.
// Every webhook answered 2xx is in the inbox at the moment of the kill.
// After a restart, and the providers' retries of what got no answer, every
// event has one item and it succeeded; only the attempts the kill
// interrupted ran again (recorded as crashed), and no event that had
// succeeded ran again.
func TestCrashUnderLoad(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Parallel()
	in := newInbox(t, dsn)
	var (
		storedBeforeKill = scale(150, 2000) // 2xx answers before the kill
		settleWithin     = scale(60*time.Second, 5*time.Minute)
	)
	const (
		senders = 8
		blocked = 2 // events whose first attempt runs until the kill
	)
	cfg := nodeConfig{DSN: dsn, Schema: in.schema, Name: "first", Workers: 6, Lease: 2 * time.Second,
		HandlerDelay: 10 * time.Millisecond, BlockFirstAttempt: true}
	first := startNode(t, cfg)
	p := newProvider(t)

	var (
		mu      sync.Mutex
		unique  []delivery
		answers []answer
	)
	record := func(d delivery, a answer, isNew bool) {
		mu.Lock()
		defer mu.Unlock()
		if isNew {
			unique = append(unique, d)
		}
		answers = append(answers, a)
	}
	for i := range blocked {
		d := newDelivery(fmt.Sprintf("block-%d", i), "block")
		a := p.send(first.url, d)
		require.Equal(t, 202, a.Code, "%v", a.Err)
		record(d, a, true)
	}
	first.stdout.await(t, 30*time.Second, "the blocked events' handlers to start", func([]string) bool {
		return len(first.handled("start block-")) == blocked
	})

	var (
		next    atomic.Int64
		stored  atomic.Int64
		killed  atomic.Bool
		reached = make(chan struct{})
		wg      sync.WaitGroup
	)
	for range senders {
		wg.Go(func() {
			for i := 0; ; i++ {
				d, isNew := newDelivery(fmt.Sprintf("evt-%05d", next.Add(1)), "order.created"), true
				if i%5 == 4 { // a provider's second delivery of an event
					mu.Lock()
					d, isNew = unique[rand.IntN(len(unique))], false
					mu.Unlock()
				}
				a := p.send(first.url, d)
				record(d, a, isNew)
				if a.ok() && stored.Add(1) == int64(storedBeforeKill) {
					close(reached)
				}
				if a.Err != nil && killed.Load() {
					return // the node is gone
				}
				if i > 100*storedBeforeKill {
					t.Error("the sender never saw the node die")
					return
				}
			}
		})
	}
	select {
	case <-reached:
	case <-time.After(settleWithin):
		t.Fatalf("only %d webhooks were stored within %v", stored.Load(), settleWithin)
	}
	killed.Store(true)
	first.kill()
	wg.Wait()
	first.awaitSessionsGone(t, in)

	// At the kill: every webhook answered 2xx is in the inbox.
	leasedAtKill, succeededAtKill := map[string]bool{}, map[string]bool{}
	acked := acked(answers)
	for _, d := range unique {
		it, err := in.store.Get(context.Background(), key(d.ID))
		if errors.Is(err, ops.ErrNotFound) {
			assert.False(t, acked[d.ID], "event %s was answered 2xx but is not in the inbox", d.ID)
			continue
		}
		require.NoError(t, err)
		switch it.State {
		case webhooks.StateLeased:
			leasedAtKill[d.ID] = true
		case webhooks.StateSucceeded:
			succeededAtKill[d.ID] = true
		}
	}
	for i := range blocked {
		assert.True(t, leasedAtKill[fmt.Sprintf("block-%d", i)], "a blocked event was leased when the node died")
	}
	// Of the leases the node held, those that waited for a worker had not
	// started (webhooks.LeaseStarter): the crash must cost them nothing.
	heldAtKill := in.heldLeases(t)
	firstStarted := first.handled("start ")
	for id := range heldAtKill {
		assert.Zero(t, firstStarted[id], "event %s ran, yet its lease was held, unstarted, at the kill", id)
	}
	firstDone := first.handled("done ")

	// Restart; the providers retry what got no 2xx.
	cfg.Name = "second"
	second := startNode(t, cfg)
	retried := p.redeliver(t, second.url, unique, acked)
	in.awaitSettled(t, settleWithin)
	second.stop(t)

	assert.Equal(t, len(unique), in.count(t), "one item per event, and no other")
	secondStarted := second.handled("start ")
	crashed := 0
	for _, d := range unique {
		it := in.get(t, d.ID)
		require.Equal(t, webhooks.StateSucceeded, it.State, "event %s: %v", d.ID, outcomes(it))
		got := outcomes(it)
		if heldAtKill[d.ID] {
			assert.Equal(t, []webhooks.AttemptOutcome{webhooks.AttemptSucceeded}, got,
				"event %s waited for a worker when the node died: the crash cost it no attempt", d.ID)
			assert.Equal(t, 1, it.Attempts, "event %s", d.ID)
		} else if leasedAtKill[d.ID] {
			assert.Equal(t, []webhooks.AttemptOutcome{ops.OutcomeCrashed, webhooks.AttemptSucceeded}, got,
				"event %s was being handled when the node died: its attempt is recorded as crashed, and run again", d.ID)
			if len(got) == 2 {
				assert.Equal(t, "first", it.History[0].Worker)
				assert.Equal(t, "second", it.History[1].Worker)
			}
			crashed++
		} else {
			assert.Equal(t, []webhooks.AttemptOutcome{webhooks.AttemptSucceeded}, got, "event %s was not interrupted: it ran once", d.ID)
		}
		if succeededAtKill[d.ID] {
			assert.Zero(t, secondStarted[d.ID], "event %s had succeeded, yet ran again after the restart", d.ID)
			assert.Equal(t, 1, firstDone[d.ID], "event %s", d.ID)
		} else {
			assert.Equal(t, 1, secondStarted[d.ID], "event %s had not succeeded: it ran once after the restart", d.ID)
		}
	}
	t.Logf("%d answers, %d events, %d acknowledged before the kill (%d had succeeded, %d were leased, %d of them held for a worker), %d retried by the providers, %d crashed attempts re-run",
		len(answers), len(unique), len(acked), len(succeededAtKill), len(leasedAtKill), len(heldAtKill), retried, crashed)
}
