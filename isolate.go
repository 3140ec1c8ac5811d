package webhooks

import (
	"context"
	"sync"
	"sync/atomic"
)

// isolation runs suspects alone. A suspect is a lease taken over from a
// crashed attempt (Reclaimed), held by a LeaseStarter: its item may be
// what crashed the process. It starts only once no other handler runs
// and every earlier handler's settlement is done, and while it runs,
// until its own settlement is done, no other lease passes the gate:
// those wait, held and uncounted, so that if the suspect crashes the
// process again the crash costs an attempt to the suspect alone. Every
// lease of the Processor passes the gate before its handler runs (enter
// or enterAlone) and leaves it once its settlement is done (leave or
// leaveAlone).
//
// Without suspects the gate costs a lease two atomic additions to a
// counter and no lock: the mutex is taken only while a suspect waits or
// runs.
type isolation struct {
	// active counts the leases past the gate, not suspects, whose
	// settlement is not done.
	active atomic.Int64
	// suspects counts the suspects waiting at the gate or running;
	// changed under mu, read without it.
	suspects atomic.Int32
	// queued counts the suspects acquired and not yet at the gate.
	queued atomic.Int32

	mu sync.Mutex
	// alone is set while a suspect runs.
	alone bool
	// changed is closed and replaced (by broadcastLocked) when active
	// drops to zero while suspects wait, and when a suspect leaves.
	changed chan struct{}
}

// enter lets a lease that is no suspect pass, once no suspect waits or
// runs. It reports false, without letting it pass, if ctx ends while it
// waits.
func (g *isolation) enter(ctx context.Context) bool {
	for {
		if g.suspects.Load() == 0 {
			g.active.Add(1)
			// A suspect that came meanwhile has counted itself before it
			// looked at active, so one of the two sees the other.
			if g.suspects.Load() == 0 {
				return true
			}
			g.leave()
		}
		g.mu.Lock()
		if g.suspects.Load() == 0 {
			g.mu.Unlock()
			continue
		}
		changed := g.changedLocked()
		g.mu.Unlock()
		select {
		case <-changed:
			if ctx.Err() != nil {
				return false
			}
		case <-ctx.Done():
			return false
		}
	}
}

// leave ends what enter began.
func (g *isolation) leave() {
	if g.active.Add(-1) == 0 && g.suspects.Load() > 0 {
		g.mu.Lock()
		g.broadcastLocked()
		g.mu.Unlock()
	}
}

// queue counts a suspect on its way to the gate (the acquirer queues it
// for a worker): from then on, waiting reports true.
func (g *isolation) queue() { g.queued.Add(1) }

// unqueue forgets a queued suspect that will not come to the gate.
func (g *isolation) unqueue() { g.queued.Add(-1) }

// enterAlone lets a queued suspect pass once no other lease is past the
// gate, and keeps every other lease out until leaveAlone. It reports
// false, without letting it pass, if ctx ends while it waits.
func (g *isolation) enterAlone(ctx context.Context) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.suspects.Add(1)
	g.unqueue()
	for g.alone || g.active.Load() != 0 {
		changed := g.changedLocked()
		g.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
		}
		g.mu.Lock()
		if ctx.Err() != nil {
			g.suspects.Add(-1)
			g.broadcastLocked()
			return false
		}
	}
	g.alone = true
	return true
}

// leaveAlone ends what enterAlone began.
func (g *isolation) leaveAlone() {
	g.mu.Lock()
	g.alone = false
	g.suspects.Add(-1)
	g.broadcastLocked()
	g.mu.Unlock()
}

// waiting reports whether a suspect is queued, waits or runs: leases
// acquired then are best held, not started, since they may not pass the
// gate for a while, and a crash would cost a started one an attempt.
func (g *isolation) waiting() bool { return g.suspects.Load() > 0 || g.queued.Load() > 0 }

func (g *isolation) changedLocked() chan struct{} {
	if g.changed == nil {
		g.changed = make(chan struct{})
	}
	return g.changed
}

func (g *isolation) broadcastLocked() {
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
	}
}
