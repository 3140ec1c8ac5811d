package webhooks

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// passed runs enter in a goroutine and returns a channel that reports
// whether it let its lease pass.
func passed(enter func(context.Context) bool, ctx context.Context) <-chan bool {
	ch := make(chan bool, 1)
	go func() { ch <- enter(ctx) }()
	return ch
}

// blocked requires ch to have no answer yet. It cannot prove that none
// will come; the step after it, which unblocks ch, shows that it waited.
func blocked(t *testing.T, ch <-chan bool, what string) {
	t.Helper()
	select {
	case ok := <-ch:
		t.Fatalf("%s passed the gate (%t); want it waiting", what, ok)
	default:
	}
}

// atGate waits until n suspects are at the gate. Nothing signals it: it
// polls, with a deadline.
func atGate(t *testing.T, g *isolation, n int32) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for g.suspects.Load() != n {
		require.True(t, time.Now().Before(deadline), "%d suspects at the gate after 10s; want %d", g.suspects.Load(), n)
		time.Sleep(time.Millisecond)
	}
}

func answer(t *testing.T, ch <-chan bool, what string) bool {
	t.Helper()
	select {
	case ok := <-ch:
		return ok
	case <-time.After(10 * time.Second):
		t.Fatalf("%s still waits at the gate after 10s", what)
		return false
	}
}

func TestIsolationRunsSuspectsAlone(t *testing.T) {
	t.Parallel()
	g := &isolation{}
	ctx := context.Background()
	require.True(t, g.enter(ctx), "without suspects a lease passes at once")
	require.True(t, g.enter(ctx))
	assert.False(t, g.waiting())

	g.queue()
	assert.True(t, g.waiting(), "a queued suspect holds back the acquisition's starts")
	suspect := passed(g.enterAlone, ctx)
	atGate(t, g, 1)
	// The suspect waits for both leases past the gate; a lease that comes
	// now waits for the suspect.
	other := passed(g.enter, ctx)
	g.leave()
	blocked(t, suspect, "the suspect, one lease still past the gate")
	g.leave()
	require.True(t, answer(t, suspect, "the suspect"), "the suspect passes once it is alone")
	blocked(t, other, "a lease, while the suspect runs")

	g.queue()
	second := passed(g.enterAlone, ctx)
	atGate(t, g, 2)
	blocked(t, second, "a second suspect, while the first runs")
	g.leaveAlone()
	require.True(t, answer(t, second, "the second suspect"))
	blocked(t, other, "a lease, while the second suspect runs")
	g.leaveAlone()
	require.True(t, answer(t, other, "the lease"), "leases pass once no suspect waits or runs")
	assert.False(t, g.waiting())
	g.leave()
	assert.Zero(t, g.active.Load())
}

func TestIsolationWaitsEndWithTheContext(t *testing.T) {
	t.Parallel()
	g := &isolation{}
	require.True(t, g.enter(context.Background()))
	ctx, cancel := context.WithCancel(context.Background())
	g.queue()
	suspect := passed(g.enterAlone, ctx)
	atGate(t, g, 1)
	ended, end := context.WithCancel(context.Background())
	end()
	assert.False(t, g.enter(ended), "a lease whose context ended while a suspect waits does not pass")
	other := passed(g.enter, context.Background())
	cancel()
	assert.False(t, answer(t, suspect, "the suspect"), "a suspect whose context ended while it waits does not pass")
	assert.True(t, answer(t, other, "the lease"), "once the suspect gave up, the gate is open")
	assert.False(t, g.waiting(), "the suspect that gave up is forgotten")
	g.leave()
	g.leave()
	assert.Zero(t, g.active.Load())
	g.queue()
	g.unqueue()
	assert.False(t, g.waiting(), "a queued suspect dead-lettered before the gate is forgotten")
}
