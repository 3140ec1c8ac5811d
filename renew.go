package webhooks

import (
	"context"
	"errors"
	"sync"
	"time"
)

// maxConcurrentRenewals bounds the lease extensions in flight at once, so
// a slow store delays renewals rather than piling up calls.
const maxConcurrentRenewals = 8

// renewer keeps alive the leases the processor holds, from their
// acquisition until they are settled: waiting for a worker, running, or
// waiting for their settlement. It is one loop for the processor, not a
// goroutine and a ticker per item. A lease is extended once a third of its
// duration passed since it was taken or last extended, so it never lapses
// while its holder is alive; when the store says it was lost, its handler,
// if it runs, is cancelled, and a lease lost before its handler started is
// not run.
type renewer struct {
	p  *Processor
	mu sync.Mutex
	// leases maps each held lease to its renewal state.
	leases map[*Lease]*renewal
}

type renewal struct {
	// due is when the lease needs extending next (wall time: the loop
	// ticks on wall time whatever the Processor's clock says).
	due time.Time
	// cancel cancels the handler; nil before it starts and once it
	// returned.
	cancel context.CancelCauseFunc
	// busy is set while an extension is in flight.
	busy bool
	// started is set once a worker took the lease's item.
	started bool
}

func newRenewer(p *Processor) *renewer {
	return &renewer{p: p, leases: make(map[*Lease]*renewal)}
}

// every is how often the loop looks for leases to extend.
func (r *renewer) every() time.Duration { return max(r.p.cfg.leaseDuration/6, time.Millisecond) }

// add starts renewing l, just acquired.
func (r *renewer) add(l *Lease) {
	r.mu.Lock()
	r.leases[l] = &renewal{due: time.Now().Add(r.p.cfg.leaseDuration / 3)}
	r.mu.Unlock()
}

// start tells that l's handler, cancelled by cancel, starts. It reports
// false when l was lost while it waited: the handler must not run.
func (r *renewer) start(l *Lease, cancel context.CancelCauseFunc) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	rn := r.leases[l]
	if rn == nil {
		return false
	}
	rn.cancel, rn.started = cancel, true
	return true
}

// holds reports whether l is still renewed: not lost.
func (r *renewer) holds(l *Lease) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.leases[l] != nil
}

// handlerReturned keeps renewing l until it is settled, but no longer
// cancels a handler.
func (r *renewer) handlerReturned(l *Lease) {
	r.mu.Lock()
	if rn := r.leases[l]; rn != nil {
		rn.cancel = nil
	}
	r.mu.Unlock()
}

// remove stops renewing l: it was settled or lost.
func (r *renewer) remove(l *Lease) {
	r.mu.Lock()
	delete(r.leases, l)
	r.mu.Unlock()
}

// run extends due leases until stop is closed.
func (r *renewer) run(detached context.Context, stop <-chan struct{}) {
	t := time.NewTicker(r.every())
	defer t.Stop()
	var inFlight sync.WaitGroup
	defer inFlight.Wait()
	sem := make(chan struct{}, maxConcurrentRenewals)
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		for _, l := range r.due(time.Now()) {
			sem <- struct{}{}
			inFlight.Go(func() {
				defer func() { <-sem }()
				r.extend(detached, l)
			})
		}
	}
}

// due returns the leases to extend now and marks them busy.
func (r *renewer) due(now time.Time) []*Lease {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*Lease
	for l, rn := range r.leases {
		if !rn.busy && !now.Before(rn.due) {
			rn.busy = true
			out = append(out, l)
		}
	}
	return out
}

// extend extends one lease and acts on the answer.
func (r *renewer) extend(detached context.Context, l *Lease) {
	p := r.p
	// A renewal slower than a third of the lease is no use: the next tick
	// tries again while the lease is still valid.
	ctx, cancel := context.WithTimeout(detached, min(p.cfg.storeTimeout, p.cfg.leaseDuration/3))
	err := p.store.ExtendLease(ctx, ExtendRequest{Lease: l, Now: p.cfg.clock.Now(), Duration: p.cfg.leaseDuration})
	cancel()

	r.mu.Lock()
	defer r.mu.Unlock()
	rn := r.leases[l]
	if rn == nil {
		return // settled meanwhile
	}
	rn.busy = false
	switch {
	case err == nil:
		rn.due = time.Now().Add(p.cfg.leaseDuration / 3)
	case errors.Is(err, ErrAlreadySettled):
		// The handler settled its item in its own transaction
		// (pgstore's CompleteTx): nothing left to keep alive.
		delete(r.leases, l)
	case errors.Is(err, ErrLeaseLost):
		delete(r.leases, l)
		if rn.cancel != nil {
			rn.cancel(ErrLeaseLost)
		}
		if !rn.started {
			p.cfg.logger.InfoContext(detached, "lease lost while its item waited for a worker; it will not be run here",
				"provider", l.Item.Key.Provider, "tenant", l.Item.Key.Tenant, "event_id", l.Item.Key.EventID)
		}
	default:
		p.cfg.logger.WarnContext(detached, "extending a lease failed; will try again at the next tick",
			"provider", l.Item.Key.Provider, "tenant", l.Item.Key.Tenant, "event_id", l.Item.Key.EventID, "err", err)
	}
}
