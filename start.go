package webhooks

import (
	"context"
	"errors"
)

// maxStartBatch bounds how many held leases go to a store at once.
const maxStartBatch = 128

// starter starts held leases (LeaseStarter) for the workers, the starts
// of workers that take leases at the same moment in one round trip. A
// worker waits for its lease's start before its handler runs: the start
// must be durable first, or a handler that crashes the process would
// cost its item no attempt, and a crash loop would never end.
type starter struct {
	p     *Processor
	store LeaseStarter
	jobs  chan startJob
}

type startJob struct {
	lease *Lease
	done  chan error
}

func newStarter(p *Processor, store LeaseStarter) *starter {
	return &starter{p: p, store: store, jobs: make(chan startJob, p.cfg.workers)}
}

// start starts l and returns the store's answer for it. The store
// changes no lease it is given (see LeaseStarter), so the renewer may go
// on reading l meanwhile.
func (s *starter) start(l *Lease) error {
	done := make(chan error, 1)
	s.jobs <- startJob{lease: l, done: done}
	return <-done
}

// run starts the leases submitted, those waiting together, until jobs is
// closed and drained.
func (s *starter) run(detached context.Context) {
	batch := make([]startJob, 0, maxStartBatch)
	leases := make([]*Lease, 0, maxStartBatch)
	for j := range s.jobs {
		batch = append(batch[:0], j)
	fill:
		for len(batch) < maxStartBatch {
			select {
			case j, ok := <-s.jobs:
				if !ok {
					break fill
				}
				batch = append(batch, j)
			default:
				break fill
			}
		}
		leases = leases[:0]
		for _, j := range batch {
			leases = append(leases, j.lease)
		}
		ctx, cancel := context.WithTimeout(detached, s.p.cfg.storeTimeout)
		errs := s.store.StartLeases(ctx, StartRequest{Leases: leases, Now: s.p.cfg.clock.Now(), Duration: s.p.cfg.leaseDuration})
		cancel()
		for i, j := range batch {
			err := errors.New("webhooks: StartLeases returned the wrong number of results")
			if len(errs) == len(batch) {
				err = errs[i]
			}
			j.done <- err
		}
	}
}
