package webhooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// WakeSource tells a Processor that new work may be due, so idle workers do
// not wait for the next poll. pgstore's LISTEN/NOTIFY listener is one.
//
// Listen blocks until ctx is done, calling wake whenever work may be due; it
// should reconnect by itself after connection failures. Wake-ups are hints: a
// missed one only delays work until the next poll, so correctness never
// depends on them. If Listen returns before ctx is done the Processor logs the
// error and keeps polling.
type WakeSource interface {
	Listen(ctx context.Context, wake func()) error
}

// Processor defaults.
const (
	DefaultWorkers       = 4
	DefaultLeaseDuration = 30 * time.Second
	DefaultPollInterval  = time.Second
	DefaultBatchSize     = 16
	DefaultStoreTimeout  = 10 * time.Second
)

// Processor runs the lease loop: it acquires due items from the inbox, hands
// them to the dispatcher on a pool of workers, keeps their leases alive while
// handlers run, and settles each lease as succeeded, retried or dead according
// to the retry policy. Several processors, in one process or many, may share
// one store: leases keep them from handling an item twice at once.
type Processor struct {
	store      LeaseStore
	dispatcher Dispatcher
	cfg        processorConfig

	wake    chan struct{}
	running atomic.Bool
}

type processorConfig struct {
	workers       int
	leaseDuration time.Duration
	pollInterval  time.Duration
	batchSize     int
	handlerTO     time.Duration
	grace         time.Duration
	storeTimeout  time.Duration
	policy        RetryPolicy
	clock         Clock
	logger        *slog.Logger
	wakeSource    WakeSource
	worker        string
	version       string
}

// ProcessorOption configures a Processor. WithClock and WithLogger are
// ProcessorOptions too.
type ProcessorOption interface {
	applyProcessor(*processorConfig)
}

type processorOption func(*processorConfig)

func (o processorOption) applyProcessor(c *processorConfig) { o(c) }

// WithWorkers sets how many dispatches run at once. Defaults to
// DefaultWorkers.
func WithWorkers(n int) ProcessorOption {
	return processorOption(func(c *processorConfig) { c.workers = n })
}

// WithLeaseDuration sets how long a lease lasts before another worker may take
// the item. The processor renews it every third of that while a handler runs,
// so it only bounds how soon a crashed worker's items are retried. Defaults to
// DefaultLeaseDuration.
func WithLeaseDuration(d time.Duration) ProcessorOption {
	return processorOption(func(c *processorConfig) { c.leaseDuration = d })
}

// WithPollInterval sets how often an idle processor looks for due work when
// nothing wakes it. Defaults to DefaultPollInterval.
func WithPollInterval(d time.Duration) ProcessorOption {
	return processorOption(func(c *processorConfig) { c.pollInterval = d })
}

// WithBatchSize caps how many items one acquisition leases. Defaults to
// DefaultBatchSize.
func WithBatchSize(n int) ProcessorOption {
	return processorOption(func(c *processorConfig) { c.batchSize = n })
}

// WithHandlerTimeout bounds each dispatch; one that overruns fails with
// FailureTimeout (transient). Defaults to 0: no limit.
func WithHandlerTimeout(d time.Duration) ProcessorOption {
	return processorOption(func(c *processorConfig) { c.handlerTO = d })
}

// WithShutdownGrace sets how long running handlers may go on after Run's
// context ends before their contexts are cancelled (and their leases
// abandoned). Defaults to 0: cancel at once.
func WithShutdownGrace(d time.Duration) ProcessorOption {
	return processorOption(func(c *processorConfig) { c.grace = d })
}

// WithRetryPolicy sets the retry policy. Defaults to ExponentialPolicy{}.
func WithRetryPolicy(p RetryPolicy) ProcessorOption {
	return processorOption(func(c *processorConfig) { c.policy = p })
}

// WithWakeSource adds a source of wake-ups, such as pgstore's listener.
// Defaults to none: the processor polls, and wakes when told via Wake.
func WithWakeSource(ws WakeSource) ProcessorOption {
	return processorOption(func(c *processorConfig) { c.wakeSource = ws })
}

// WithWorkerID names this processor in the attempt history of the items it
// processes, so an operator can tell which instance made an attempt.
// Defaults to the host name and the process ID, as "host:pid".
func WithWorkerID(id string) ProcessorOption {
	return processorOption(func(c *processorConfig) { c.worker = id })
}

// WithProcessingVersion records the version of the host's handlers (a
// release, a commit) with each attempt, so an operator can tell which
// code failed and which fixed it. Defaults to none.
func WithProcessingVersion(v string) ProcessorOption {
	return processorOption(func(c *processorConfig) { c.version = v })
}

// NewProcessor returns a Processor that leases items from store and hands
// them to dispatcher (usually a *Mux).
func NewProcessor(store LeaseStore, dispatcher Dispatcher, opts ...ProcessorOption) (*Processor, error) {
	if store == nil || dispatcher == nil {
		return nil, errors.New("webhooks: NewProcessor needs a store and a dispatcher (a *Mux)")
	}
	cfg := processorConfig{
		workers:       DefaultWorkers,
		leaseDuration: DefaultLeaseDuration,
		pollInterval:  DefaultPollInterval,
		batchSize:     DefaultBatchSize,
		storeTimeout:  DefaultStoreTimeout,
		policy:        ExponentialPolicy{},
	}
	for _, o := range opts {
		o.applyProcessor(&cfg)
	}
	cfg.clock = clockOrSystem(cfg.clock)
	cfg.logger = loggerOrDefault(cfg.logger)
	if cfg.worker == "" {
		cfg.worker = defaultWorkerID()
	}
	switch {
	case cfg.workers < 1:
		return nil, fmt.Errorf("webhooks: WithWorkers(%d): need at least one worker", cfg.workers)
	case cfg.leaseDuration < 3*time.Millisecond:
		return nil, fmt.Errorf("webhooks: WithLeaseDuration(%v): the lease is too short to renew", cfg.leaseDuration)
	case cfg.pollInterval <= 0:
		return nil, fmt.Errorf("webhooks: WithPollInterval(%v): the interval must be positive", cfg.pollInterval)
	case cfg.batchSize < 1:
		return nil, fmt.Errorf("webhooks: WithBatchSize(%d): the batch size must be at least 1", cfg.batchSize)
	case cfg.handlerTO < 0 || cfg.grace < 0:
		return nil, errors.New("webhooks: handler timeout and shutdown grace must not be negative")
	case cfg.storeTimeout <= 0:
		return nil, fmt.Errorf("webhooks: WithStoreTimeout(%v): the timeout must be positive", cfg.storeTimeout)
	case cfg.policy == nil:
		return nil, errors.New("webhooks: WithRetryPolicy(nil): give a policy, such as ExponentialPolicy{}")
	}
	if v, ok := cfg.policy.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return nil, err
		}
	}
	return &Processor{store: store, dispatcher: dispatcher, cfg: cfg, wake: make(chan struct{}, 1)}, nil
}

// Wake tells the processor that work may be due now. It never blocks and may
// be called from any goroutine, before or during Run.
func (p *Processor) Wake() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

var (
	errShutdown       = errors.New("webhooks: processor shutting down")
	errHandlerTimeout = errors.New("webhooks: handler timed out")
)

// Run processes due items until ctx is done, then stops acquiring, lets
// running handlers finish (see WithShutdownGrace), abandons the leases of
// handlers that stopped because of the shutdown, and returns nil once every
// goroutine it started has ended. Run therefore waits for handlers and for the
// wake source's Listen to return: both must honour their contexts. A Processor
// runs once at a time; a second concurrent Run returns an error.
func (p *Processor) Run(ctx context.Context) error {
	if !p.running.CompareAndSwap(false, true) {
		return errors.New("webhooks: Processor.Run is already running")
	}
	defer p.running.Store(false)

	// Handlers and settlement run on contexts that keep ctx's values but not
	// its cancellation: handlers are cancelled by the shutdown below, and a
	// lease can still be settled after ctx ended.
	detached := context.WithoutCancel(ctx)
	handlerBase, cancelHandlers := context.WithCancelCause(detached)
	defer cancelHandlers(errShutdown)

	var wg sync.WaitGroup
	if p.cfg.wakeSource != nil {
		wg.Go(func() {
			if err := p.cfg.wakeSource.Listen(ctx, p.Wake); err != nil && ctx.Err() == nil {
				p.cfg.logger.ErrorContext(ctx, "wake source stopped; falling back to polling", "err", err)
			}
		})
	}

	jobs := make(chan *Lease)
	slots := make(chan struct{}, p.cfg.workers)
	var workers sync.WaitGroup
	for range p.cfg.workers {
		slots <- struct{}{}
		workers.Go(func() {
			for lease := range jobs {
				p.process(ctx, handlerBase, detached, lease)
				slots <- struct{}{}
			}
		})
	}

	workersDone := make(chan struct{})
	wg.Go(func() {
		select {
		case <-ctx.Done():
		case <-workersDone:
			return
		}
		if p.cfg.grace > 0 {
			t := time.NewTimer(p.cfg.grace)
			defer t.Stop()
			select {
			case <-t.C:
			case <-workersDone:
			}
		}
		cancelHandlers(errShutdown)
	})

	p.acquireLoop(ctx, detached, jobs, slots)
	close(jobs)
	workers.Wait()
	close(workersDone)
	wg.Wait()
	return nil
}

// acquireLoop leases due items while workers are free, until ctx is done.
func (p *Processor) acquireLoop(ctx, detached context.Context, jobs chan<- *Lease, slots chan struct{}) {
	poll := time.NewTimer(p.cfg.pollInterval)
	defer poll.Stop()
	for {
		// Wait for a free worker, then take every other free one.
		select {
		case <-ctx.Done():
			return
		case <-slots:
		}
		if ctx.Err() != nil { // select picks at random when both are ready
			return
		}
		free := 1
	collect:
		for free < p.cfg.batchSize {
			select {
			case <-slots:
				free++
			default:
				break collect
			}
		}
		// The acquisition itself is not cut short by the shutdown: a
		// statement cancelled mid-way may still have leased rows that the
		// caller then never sees (they would wait out their lease). Leases
		// acquired as the shutdown begins are abandoned unrun by process.
		actx, cancel := context.WithTimeout(detached, p.cfg.storeTimeout)
		leases, err := p.acquire(actx, free)
		cancel()
		for range free - len(leases) {
			slots <- struct{}{}
		}
		for _, l := range leases {
			jobs <- l
		}
		if err != nil && ctx.Err() == nil {
			p.cfg.logger.ErrorContext(ctx, "acquiring inbox items failed; retrying after the poll interval", "err", err)
		}
		if err == nil && len(leases) == free {
			continue // there may be more due work
		}
		// Nothing more is due: sleep until woken or the next poll. (Since
		// Go 1.23, Reset discards a stale expiry.)
		poll.Reset(p.cfg.pollInterval)
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-poll.C:
		}
	}
}

// acquire leases up to n due items.
func (p *Processor) acquire(ctx context.Context, n int) ([]*Lease, error) {
	return p.store.Acquire(ctx, AcquireRequest{
		Now:           p.cfg.clock.Now(),
		LeaseDuration: p.cfg.leaseDuration,
		Max:           n,
		Worker:        p.cfg.worker,
		Version:       p.cfg.version,
	})
}

// defaultWorkerID is "host:pid".
func defaultWorkerID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	return host + ":" + strconv.Itoa(os.Getpid())
}

// process runs one leased item's dispatch and settles the lease.
func (p *Processor) process(runCtx, handlerBase, detached context.Context, lease *Lease) {
	ev := eventFromLease(lease)
	log := p.cfg.logger.With("provider", ev.Provider, "tenant", ev.Tenant, "event_id", ev.ID, "event_type", ev.Type, "attempt", ev.Attempt)

	if runCtx.Err() != nil || handlerBase.Err() != nil {
		// Leased just as the shutdown began: give it back unrun.
		p.abandon(detached, log, lease)
		return
	}
	if lease.Reclaimed && lease.Attempt > 1 {
		// The previous attempt ended unsettled: its worker crashed,
		// stalled or lost its lease. Ask the policy about it as about
		// any failure, so an event that crashes its worker every time
		// ends in a dead letter instead of looping forever.
		failure := Failure{
			Class:     FailureLeaseExpired,
			Message:   fmt.Sprintf("attempt %d ended without being settled: its worker crashed, stalled or lost its lease", lease.Attempt-1),
			Transient: true,
		}
		if d := p.decide(lease, lease.Attempt-1, failure); d.DeadLetter {
			failure.Message += "; the retry policy allows no more attempts"
			p.fail(detached, log, lease, failure, d)
			return
		}
	}

	hctx, cancel := context.WithCancelCause(handlerBase)
	defer cancel(nil)
	if p.cfg.handlerTO > 0 {
		var cancelTO context.CancelFunc
		hctx, cancelTO = context.WithTimeoutCause(hctx, p.cfg.handlerTO, errHandlerTimeout)
		defer cancelTO()
	}

	renewDone := make(chan struct{})
	stopRenew := make(chan struct{})
	go func() {
		defer close(renewDone)
		p.renew(detached, log, lease, stopRenew, cancel)
	}()
	failure, err := p.dispatch(hctx, ev, log)
	close(stopRenew)
	<-renewDone

	cause := context.Cause(hctx)
	switch {
	case errors.Is(cause, ErrLeaseLost):
		log.WarnContext(hctx, "lease lost while the handler ran; the item's new holder will settle it")
	case err == nil:
		p.settle(detached, log, Settlement{Lease: lease, Outcome: AttemptSucceeded})
	case errors.Is(cause, errShutdown):
		p.abandon(detached, log, lease)
	default:
		// An overrun handler's plain error becomes a timeout; an error it
		// classified itself (Permanent, RetryAfter) keeps its class.
		if errors.Is(cause, errHandlerTimeout) && failure.Class == FailureError && failure.RetryAfter == 0 {
			failure = Failure{Class: FailureTimeout, Message: fmt.Sprintf("handler did not finish within %v: %v", p.cfg.handlerTO, err), Transient: true}
		}
		p.fail(detached, log, lease, failure, p.decide(lease, lease.Attempt, failure))
	}
}

// decide asks the retry policy about a failed attempt, never letting a
// retry be due before now.
func (p *Processor) decide(lease *Lease, attempt int, failure Failure) RetryDecision {
	now := p.cfg.clock.Now()
	it := &lease.Item
	d := p.cfg.policy.Decide(FailedAttempt{
		Key:        it.Key,
		EventType:  it.EventType,
		Attempt:    attempt,
		ReceivedAt: it.ReceivedAt,
		Failure:    failure,
		Now:        now,
	})
	if !d.DeadLetter && d.RetryAt.Before(now) {
		d.RetryAt = now // a zero or past time from a custom policy
	}
	return d
}

// fail settles the lease as failed and logs the outcome.
func (p *Processor) fail(detached context.Context, log *slog.Logger, lease *Lease, failure Failure, decision RetryDecision) {
	failure.Message = storableMessage(failure.Message)
	s := Settlement{Lease: lease, Outcome: AttemptRetried, Failure: failure, RetryAt: decision.RetryAt}
	if decision.DeadLetter {
		s.Outcome, s.RetryAt = AttemptDeadLettered, time.Time{}
	}
	if !p.settle(detached, log, s) {
		return
	}
	if decision.DeadLetter {
		log.ErrorContext(detached, "event dead-lettered", "failure_class", string(failure.Class), "err", failure.Message)
	} else {
		log.WarnContext(detached, "event failed; will retry", "failure_class", string(failure.Class), "err", failure.Message, "retry_at", decision.RetryAt)
	}
}

// dispatch calls the dispatcher, turning a panic into a failure.
func (p *Processor) dispatch(ctx context.Context, ev Event, log *slog.Logger) (failure Failure, err error) {
	defer func() {
		if r := recover(); r != nil {
			log.ErrorContext(ctx, "handler panicked", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = fmt.Errorf("webhooks: handler panicked: %v", r)
			failure = Failure{Class: FailurePanic, Message: err.Error(), Transient: true}
		}
	}()
	err = p.dispatcher.Dispatch(ctx, ev)
	if err != nil {
		failure = failureFromError(err)
	}
	return failure, err
}

// renew extends the lease every third of its duration until stop is closed,
// and cancels the handler when the lease is lost.
func (p *Processor) renew(detached context.Context, log *slog.Logger, lease *Lease, stop <-chan struct{}, cancel context.CancelCauseFunc) {
	t := time.NewTicker(p.cfg.leaseDuration / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		// A renewal slower than a third of the lease is no use: the next
		// tick tries again while the lease is still valid.
		ctx, done := context.WithTimeout(detached, min(p.cfg.storeTimeout, p.cfg.leaseDuration/3))
		err := p.store.ExtendLease(ctx, ExtendRequest{Lease: lease, Now: p.cfg.clock.Now(), Duration: p.cfg.leaseDuration})
		done()
		switch {
		case errors.Is(err, ErrAlreadySettled):
			// The handler settled its item in its own transaction
			// (pgstore's CompleteTx): nothing left to keep alive.
			return
		case errors.Is(err, ErrLeaseLost):
			cancel(ErrLeaseLost)
			return
		case err != nil:
			log.WarnContext(detached, "extending the lease failed; will try again", "err", err)
		}
	}
}

func (p *Processor) abandon(detached context.Context, log *slog.Logger, lease *Lease) {
	if p.settle(detached, log, Settlement{Lease: lease, Outcome: AttemptAbandoned}) {
		log.InfoContext(detached, "lease abandoned at shutdown; the attempt is not counted")
	}
}

// settle settles a lease with its own timeout and reports whether this call
// did it. A failure is logged: the lease then expires and the item is
// retried, which is safe because handling is at least once.
func (p *Processor) settle(detached context.Context, log *slog.Logger, s Settlement) bool {
	ctx, cancel := context.WithTimeout(detached, p.cfg.storeTimeout)
	defer cancel()
	s.Now = p.cfg.clock.Now()
	err := p.store.Settle(ctx, s)
	switch {
	case err == nil:
		if s.Outcome == AttemptSucceeded {
			log.DebugContext(ctx, "event handled")
		}
		return true
	case errors.Is(err, ErrAlreadySettled):
		// The handler settled the item itself, in its own transaction
		// (pgstore's CompleteTx).
		log.DebugContext(ctx, "event settled by its handler's transaction", "outcome", string(s.Outcome))
	case errors.Is(err, ErrLeaseLost):
		log.WarnContext(ctx, "lease lost before it could be settled; the item's new holder will settle it", "outcome", string(s.Outcome))
	default:
		log.ErrorContext(ctx, "settling the lease failed; the item will be retried when its lease expires", "outcome", string(s.Outcome), "err", err, "lease_expires_at", s.Lease.ExpiresAt)
	}
	return false
}
