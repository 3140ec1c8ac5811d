package webhooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
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

// Waker is told when a webhook was enqueued in-process. *Processor implements
// it; pass it to the Gateway with WithWaker.
type Waker interface {
	Wake()
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
	batch      BatchAcquirer
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
}

// ProcessorOption configures a Processor.
type ProcessorOption func(*processorConfig)

// WithWorkers sets how many handlers run at once. Defaults to DefaultWorkers.
func WithWorkers(n int) ProcessorOption { return func(c *processorConfig) { c.workers = n } }

// WithLeaseDuration sets how long a lease lasts before another worker may take
// the item. The processor renews it every third of that while a handler runs,
// so it only bounds how soon a crashed worker's items are retried. Defaults to
// DefaultLeaseDuration.
func WithLeaseDuration(d time.Duration) ProcessorOption {
	return func(c *processorConfig) { c.leaseDuration = d }
}

// WithPollInterval sets how often an idle processor looks for due work when
// nothing wakes it. Defaults to DefaultPollInterval.
func WithPollInterval(d time.Duration) ProcessorOption {
	return func(c *processorConfig) { c.pollInterval = d }
}

// WithBatchSize caps how many items one acquisition leases when the store is
// a BatchAcquirer. Defaults to DefaultBatchSize.
func WithBatchSize(n int) ProcessorOption { return func(c *processorConfig) { c.batchSize = n } }

// WithHandlerTimeout bounds each handler run; a handler that overruns fails
// with FailureTimeout (transient). Defaults to 0: no limit.
func WithHandlerTimeout(d time.Duration) ProcessorOption {
	return func(c *processorConfig) { c.handlerTO = d }
}

// WithShutdownGrace sets how long running handlers may go on after Run's
// context ends before their contexts are cancelled (and their leases
// abandoned). Defaults to 0: cancel at once.
func WithShutdownGrace(d time.Duration) ProcessorOption {
	return func(c *processorConfig) { c.grace = d }
}

// WithStoreTimeout bounds each store call: acquisitions, settlements (which
// run even while shutting down) and lease renewals (which are also bounded by
// a third of the lease duration). Defaults to DefaultStoreTimeout.
func WithStoreTimeout(d time.Duration) ProcessorOption {
	return func(c *processorConfig) { c.storeTimeout = d }
}

// WithRetryPolicy sets the retry policy. Defaults to ExponentialPolicy{}.
func WithRetryPolicy(p RetryPolicy) ProcessorOption { return func(c *processorConfig) { c.policy = p } }

// WithProcessorClock sets the clock for lease and retry times. Defaults to
// SystemClock.
func WithProcessorClock(clock Clock) ProcessorOption {
	return func(c *processorConfig) { c.clock = clock }
}

// WithProcessorLogger sets the logger. Defaults to discarding logs.
func WithProcessorLogger(l *slog.Logger) ProcessorOption {
	return func(c *processorConfig) { c.logger = l }
}

// WithWakeSource adds a source of wake-ups, such as pgstore's listener.
// Defaults to none: the processor polls, and wakes when told via Wake.
func WithWakeSource(ws WakeSource) ProcessorOption {
	return func(c *processorConfig) { c.wakeSource = ws }
}

// NewProcessor returns a Processor that leases items from store and hands
// them to dispatcher. If store also implements BatchAcquirer, items are leased
// in batches.
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
		o(&cfg)
	}
	cfg.clock = clockOrSystem(cfg.clock)
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.DiscardHandler)
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
	p := &Processor{store: store, dispatcher: dispatcher, cfg: cfg, wake: make(chan struct{}, 1)}
	p.batch, _ = store.(BatchAcquirer)
	return p, nil
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
	now := p.cfg.clock.Now()
	if p.batch != nil {
		return p.batch.AcquireBatch(ctx, now, p.cfg.leaseDuration, n)
	}
	var leases []*Lease
	for range n {
		l, err := p.store.AcquireNext(ctx, now, p.cfg.leaseDuration)
		if err != nil || l == nil {
			return leases, err
		}
		leases = append(leases, l)
	}
	return leases, nil
}

// process runs one leased item's handler and settles the lease.
func (p *Processor) process(runCtx, handlerBase, detached context.Context, lease *Lease) {
	ev := eventFromLease(lease)
	log := p.cfg.logger.With("provider", ev.Provider, "tenant", ev.Tenant, "event_id", ev.ID, "event_type", ev.Type, "attempt", ev.Attempt)

	if runCtx.Err() != nil || handlerBase.Err() != nil {
		// Leased just as the shutdown began: give it back unrun.
		p.abandon(detached, log, lease)
		return
	}
	if lim, ok := p.cfg.policy.(AttemptLimiter); ok && lease.Attempt > lim.AttemptLimit() {
		// Earlier attempts were started and never settled: the worker
		// died (or lost its lease) each time. Running it again would
		// loop forever on an event that crashes its worker.
		p.fail(detached, log, lease, Failure{
			Class:   FailureAttemptsExhausted,
			Message: fmt.Sprintf("attempt %d is over the limit of %d: earlier attempts ended without being settled (a worker crashed or lost its lease)", lease.Attempt, lim.AttemptLimit()),
		}, DeadLetterDecision())
		return
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
		if p.settle(detached, log, lease, "complete", func(ctx context.Context) error {
			return p.store.Complete(ctx, lease, p.cfg.clock.Now())
		}) {
			log.DebugContext(detached, "event handled")
		}
	case errors.Is(cause, errShutdown):
		p.abandon(detached, log, lease)
	default:
		// An overrun handler's plain error becomes a timeout; an error it
		// classified itself (Permanent, RetryAfter) keeps its class.
		if errors.Is(cause, errHandlerTimeout) && failure.Class == FailureError && failure.RetryAfter == 0 {
			failure = Failure{Class: FailureTimeout, Message: fmt.Sprintf("handler did not finish within %v: %v", p.cfg.handlerTO, err), Transient: true}
		}
		now := p.cfg.clock.Now()
		decision := p.cfg.policy.Decide(lease.Attempt, failure, now)
		if !decision.DeadLetter && decision.RetryAt.Before(now) {
			decision.RetryAt = now // a zero or past time from a custom policy
		}
		p.fail(detached, log, lease, failure, decision)
	}
}

// fail settles the lease as failed and logs the outcome.
func (p *Processor) fail(detached context.Context, log *slog.Logger, lease *Lease, failure Failure, decision RetryDecision) {
	now := p.cfg.clock.Now()
	if !p.settle(detached, log, lease, "fail", func(ctx context.Context) error {
		return p.store.Fail(ctx, lease, failure, decision, now)
	}) {
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
		failure = FailureFromError(err)
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
		err := p.store.ExtendLease(ctx, lease, p.cfg.clock.Now(), p.cfg.leaseDuration)
		done()
		switch {
		case errors.Is(err, ErrLeaseLost):
			cancel(ErrLeaseLost)
			return
		case err != nil:
			log.WarnContext(detached, "extending the lease failed; will try again", "err", err)
		}
	}
}

func (p *Processor) abandon(detached context.Context, log *slog.Logger, lease *Lease) {
	if p.settle(detached, log, lease, "abandon", func(ctx context.Context) error {
		return p.store.Abandon(ctx, lease, p.cfg.clock.Now())
	}) {
		log.InfoContext(detached, "lease abandoned at shutdown; the attempt is not counted")
	}
}

// settle runs a lease-settling store call with its own timeout. A failure is
// logged: the lease then expires and the item is retried, which is safe
// because handling is at least once.
func (p *Processor) settle(detached context.Context, log *slog.Logger, lease *Lease, op string, call func(context.Context) error) bool {
	ctx, cancel := context.WithTimeout(detached, p.cfg.storeTimeout)
	defer cancel()
	err := call(ctx)
	switch {
	case err == nil:
		return true
	case errors.Is(err, ErrLeaseLost):
		log.WarnContext(ctx, "lease lost before it could be settled", "op", op)
	default:
		log.ErrorContext(ctx, "settling the lease failed; the item will be retried when its lease expires", "op", op, "err", err, "lease_expires_at", lease.ExpiresAt)
	}
	return false
}
