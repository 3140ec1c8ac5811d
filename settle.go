package webhooks

import (
	"context"
	"errors"
	"sync"
)

// BatchSettler is an optional LeaseStore capability: settle many leases in
// one round trip, each still fenced by its own token. The Processor uses it
// when the store has it.
//
// SettleBatch returns one error per settlement, in order: nil, or what
// Settle would have returned for that settlement alone (an error wrapping
// ErrLeaseLost or ErrAlreadySettled, a refused outcome); a lease lost in
// the batch fails that item alone. Settlements of one item apply in
// order, as consecutive Settle calls would. When the round trip itself
// fails, the entries it would have answered hold that error.
//
// A type that embeds a store and overrides Settle (to count or observe
// settlements) must override SettleBatch too: the Processor calls only
// SettleBatch when it is there.
type BatchSettler interface {
	SettleBatch(ctx context.Context, settlements []Settlement) []error
}

// maxSettleBatch bounds how many settlements go to a store at once.
const maxSettleBatch = 128

// settleBatchesInFlight is how many batches are settled at once: while one
// is in the store, the next fills, and a database with two cores works on
// both.
const settleBatchesInFlight = 2

type settleJob struct {
	s   Settlement
	log *jobLog
	// done, when set, is called once the settlement is over, applied or
	// not (the lease leaves the isolation gate).
	done func()
}

// settler settles leases for the workers, so a worker goes on to its next
// item while its last one is being settled: settlements that pile up while
// batches are in flight go together in the next SettleBatch when the store
// has it, and are settled concurrently otherwise.
type settler struct {
	p     *Processor
	r     *renewer
	jobs  chan settleJob
	batch BatchSettler
}

func newSettler(p *Processor, r *renewer) *settler {
	s := &settler{p: p, r: r, jobs: make(chan settleJob, p.cfg.workers)}
	s.batch, _ = p.store.(BatchSettler)
	return s
}

// submit hands a settlement over; it blocks while the settler is behind,
// which holds workers back from taking more work than can be settled.
func (s *settler) submit(j settleJob) { s.jobs <- j }

// run settles submitted leases until jobs is closed and drained.
func (s *settler) run(detached context.Context) {
	if s.batch == nil {
		var wg sync.WaitGroup
		sem := make(chan struct{}, s.p.cfg.workers)
		for j := range s.jobs {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				s.settleOne(detached, j)
			})
		}
		wg.Wait()
		return
	}
	var wg sync.WaitGroup
	for range settleBatchesInFlight {
		wg.Go(func() { s.runBatches(detached) })
	}
	wg.Wait()
}

// runBatches takes a settlement, adds those waiting behind it, settles
// them in one batch, and again, until jobs is closed and drained.
func (s *settler) runBatches(detached context.Context) {
	batch := make([]settleJob, 0, maxSettleBatch)
	for j := range s.jobs {
		batch = append(batch[:0], j)
	fill:
		for len(batch) < maxSettleBatch {
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
		s.settleBatch(detached, batch)
	}
}

func (s *settler) settleBatch(detached context.Context, batch []settleJob) {
	now := s.p.cfg.clock.Now()
	settlements := make([]Settlement, len(batch))
	for i := range batch {
		batch[i].s.Now = now
		settlements[i] = batch[i].s
	}
	ctx, cancel := context.WithTimeout(detached, s.p.cfg.storeTimeout)
	errs := s.batch.SettleBatch(ctx, settlements)
	cancel()
	if len(errs) != len(batch) {
		// A store bug: treat every outcome as unknown and try one by one.
		errs = make([]error, len(batch))
		for i := range errs {
			errs[i] = errors.New("webhooks: SettleBatch returned the wrong number of results")
		}
	}
	for i, j := range batch {
		s.finish(detached, j, errs[i])
	}
}

func (s *settler) settleOne(detached context.Context, j settleJob) {
	j.s.Now = s.p.cfg.clock.Now()
	s.finish(detached, j, s.call(detached, j.s))
}

func (s *settler) call(detached context.Context, st Settlement) error {
	ctx, cancel := context.WithTimeout(detached, s.p.cfg.storeTimeout)
	defer cancel()
	return s.p.store.Settle(ctx, st)
}

// finish logs a settlement's outcome. A settlement that failed for another
// reason than a lost lease may have committed with its reply lost: it is
// tried once more, which either applies it or finds it already applied.
func (s *settler) finish(detached context.Context, j settleJob, err error) {
	if j.done != nil {
		defer j.done()
	}
	log, st := j.log, j.s
	retried := false
	if err != nil && !errors.Is(err, ErrLeaseLost) && !errors.Is(err, ErrAlreadySettled) {
		first := err
		err = s.call(detached, st)
		retried = true
		if err != nil && !errors.Is(err, ErrLeaseLost) && !errors.Is(err, ErrAlreadySettled) {
			log.ErrorContext(detached, "settling the lease failed twice; its outcome is unknown: if it did not commit, the item is retried once its lease expires",
				"outcome", string(st.Outcome), "err", err, "first_err", first)
			s.r.remove(st.Lease)
			return
		}
	}
	s.r.remove(st.Lease)
	switch {
	case (err == nil || errors.Is(err, ErrAlreadySettled)) && st.Lease.Item.Ordered && (st.Outcome == AttemptSucceeded || st.Outcome == AttemptDeadLettered):
		// The head of an ordering key ended: the store made the next job
		// of its key due now. A store with a wake source (pgstore) tells
		// every processor; this one looks at once in any case.
		s.p.Wake()
	case s.p.capped[st.Lease.Item.Handler]:
		// A lease of a handler at its cap (Limits.MaxRunning) ended, or
		// will expire: there may be room for another.
		s.p.Wake()
	}
	switch {
	case errors.Is(err, ErrAlreadySettled) && retried:
		log.InfoContext(detached, "the settlement had committed although its reply was lost", "outcome", string(st.Outcome))
		s.logOutcome(detached, log, st)
	case errors.Is(err, ErrAlreadySettled):
		// The handler settled the item itself, in its own transaction
		// (pgstore's CompleteTx).
		log.DebugContext(detached, "event settled by its handler's transaction", "outcome", string(st.Outcome))
	case errors.Is(err, ErrLeaseLost):
		log.WarnContext(detached, "lease lost before it could be settled; the item's new holder will settle it", "outcome", string(st.Outcome))
	default:
		s.logOutcome(detached, log, st)
	}
}

func (s *settler) logOutcome(ctx context.Context, log *jobLog, st Settlement) {
	switch st.Outcome {
	case AttemptSucceeded:
		if st.Failure.Class == FailureNoHandler {
			log.InfoContext(ctx, "event acknowledged without a handler: no handler takes its type (see Mux), so it is neither retried nor dead-lettered")
			return
		}
		log.DebugContext(ctx, "event handled")
	case AttemptRetried:
		log.WarnContext(ctx, "event failed; will retry", "failure_class", string(st.Failure.Class), "err", st.Failure.Message, "retry_at", st.RetryAt)
	case AttemptDeadLettered:
		log.ErrorContext(ctx, "event dead-lettered", "failure_class", string(st.Failure.Class), "err", st.Failure.Message)
	case AttemptAbandoned:
		log.InfoContext(ctx, "lease given back unrun (shutdown, or more leases than free workers); the attempt is not counted")
	}
}
