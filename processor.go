package webhooks

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
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

// Processor defaults that hosts often need in their own configuration.
const (
	// DefaultWorkers is how many handlers run at once by default: enough
	// that a store's round trips, not the workers, bound how fast a
	// backlog of quick handlers drains, and that handlers waiting on the
	// network keep each other company. Each worker is a goroutine that
	// costs nothing while idle.
	DefaultWorkers       = 100
	DefaultLeaseDuration = 30 * time.Second
	// DefaultHandlerTimeout bounds each dispatch: long enough for any
	// handler that does its work inline (a provider gives up on a
	// delivery's answer within seconds, so handlers are not meant to take
	// longer than minutes), short enough that a hung handler, whose lease
	// the processor keeps renewing, does not hold its item and a worker
	// for good.
	DefaultHandlerTimeout = 5 * time.Minute
	// DefaultShutdownGrace is how long handlers running when Run's context
	// ends may go on: half of the 30 seconds Kubernetes waits between
	// SIGTERM and SIGKILL (systemd waits 90), which leaves the other half
	// for their settlements and the HTTP server's shutdown.
	DefaultShutdownGrace = 15 * time.Second
	// DefaultProcessorStoreTimeout bounds each of a Processor's store
	// calls (WithProcessorStoreTimeout): an acquisition, a batch of
	// settlements, a start of held leases, a lease renewal.
	DefaultProcessorStoreTimeout = 10 * time.Second
)

// The Processor's other defaults, which its options document.
const (
	defaultPollInterval = time.Second
	// maxAcquire bounds how many items one acquisition leases.
	maxAcquire = 128
)

// ahead is how many leased items may wait for a free worker: the next
// acquisition runs while the workers are busy, so they do not wait for
// its round trip. It is at most one acquisition's worth, and never more
// than the workers, so a slow handler keeps few items from other
// instances.
func ahead(workers int) int { return min(workers, maxAcquire) }

// Processor runs the lease loop: it acquires due items from the inbox, hands
// them to the dispatcher on a pool of workers, keeps their leases alive while
// handlers run, and settles each lease as succeeded, retried or dead according
// to the retry policy. Several processors, in one process or many, may share
// one store: leases keep them from handling an item twice at once.
//
// One acquisition at a time leases a batch of due items (up to 128), as
// many as there are free workers and room in a small queue before them, so
// the next batch is leased while the workers run the last; queued leases
// are renewed like running ones. Settlements go to a settler, batched with
// a BatchSettler, so a worker goes on at once. Each acquisition has an ID
// of its own (AcquireRequest.ID): after one fails, the processor asks a
// store that is an AcquisitionRepeater for its leases again, so that
// leases granted before a lost reply run here, on the attempt already
// counted.
//
// An attempt whose lease expired unsettled (its process crashed) counts,
// and the retry policy is asked about it when the item is taken over
// (Lease.Reclaimed), so a crash loop ends in a dead letter. With a store
// that is a LeaseStarter (memstore and pgstore are), a crash costs an
// attempt only to the handlers that were running: leases waiting in the
// queue are held, uncounted, until a worker starts them; and a lease taken
// over from a crashed attempt runs alone, once the running handlers have
// finished and been settled, no other lease starting until it is settled.
// The events that ran beside a poison event pay for that one crash; the
// poison crashes alone from then on. While such leases wait or run, the
// processor runs one handler at a time (see WithWorkers).
type Processor struct {
	store      LeaseStore
	dispatcher Dispatcher
	// handlers are those the processor runs: the Handlers it was given,
	// or the default handler running its one dispatcher. Acquisitions go
	// round them in turn.
	handlers Handlers
	retired  map[string]bool
	// capped are the handlers with Limits.MaxRunning: a settlement of
	// one of their leases makes room, and wakes the processor.
	capped map[string]bool
	// breakers are the handlers with a Breaker (see breaker.go).
	breakers map[string]*breaker
	cfg      processorConfig

	wake    chan struct{}
	running atomic.Bool
}

type processorConfig struct {
	workers       int
	leaseDuration time.Duration
	pollInterval  time.Duration
	handlerTO     time.Duration
	grace         time.Duration
	storeTimeout  time.Duration
	policy        RetryPolicy
	clock         Clock
	logger        *slog.Logger
	wakeSource    WakeSource
	worker        string
	version       string
	observer      Observer
}

// ProcessorOption configures a Processor. The SharedOptions (WithClock,
// WithLogger, WithObserver) are ProcessorOptions too.
type ProcessorOption interface {
	applyProcessor(*processorConfig)
}

type processorOption func(*processorConfig)

func (o processorOption) applyProcessor(c *processorConfig) { o(c) }

// WithWorkers sets how many dispatches run at once. While leases taken
// over from crashed attempts wait or run, each alone (see Processor), one
// runs at a time. Defaults to DefaultWorkers.
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
// nothing wakes it. Defaults to one second.
func WithPollInterval(d time.Duration) ProcessorOption {
	return processorOption(func(c *processorConfig) { c.pollInterval = d })
}

// WithHandlerTimeout bounds each dispatch: the handler's context is
// cancelled after d, and a handler that overran fails with FailureTimeout
// (transient; an error it classified itself keeps its class). Zero
// removes the bound, so that a hung handler holds its item, its lease
// renewed, until the process ends. Defaults to DefaultHandlerTimeout
// (5 minutes).
func WithHandlerTimeout(d time.Duration) ProcessorOption {
	return processorOption(func(c *processorConfig) { c.handlerTO = d })
}

// WithShutdownGrace sets how long running handlers may go on after Run's
// context ends (the host's SIGTERM) before their contexts are cancelled
// and the leases of those that stop for it are given back, their attempt
// not counted. Zero cancels them at once. Run returns as soon as the last
// handler is done, so the grace only costs time while handlers run. It is
// timed on the Processor's Clock where that has timers (see Clock).
// Defaults to DefaultShutdownGrace (15 seconds).
func WithShutdownGrace(d time.Duration) ProcessorOption {
	return processorOption(func(c *processorConfig) { c.grace = d })
}

// WithProcessorStoreTimeout bounds each store call of the Processor:
// acquisitions, settlements (which run even while shutting down), starts
// of held leases and lease renewals (which are also bounded by a third of
// the lease duration). Defaults to DefaultProcessorStoreTimeout
// (10 seconds).
func WithProcessorStoreTimeout(d time.Duration) ProcessorOption {
	return processorOption(func(c *processorConfig) { c.storeTimeout = d })
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

// WithWorkerIdentity names this processor and the version of the host's
// handlers (a release, a commit) in the attempt history of the items it
// processes, so an operator can tell which instance and which code made an
// attempt. The worker defaults to the host name and the process ID, as
// "host:pid", when empty; the version to none.
func WithWorkerIdentity(worker, version string) ProcessorOption {
	return processorOption(func(c *processorConfig) { c.worker, c.version = worker, version })
}

// NewProcessor returns a Processor that leases items from store and hands
// them to dispatcher: usually a *Mux, run as the default handler, or
// Handlers to run several named handlers, each on jobs of its own. It
// refuses Handlers that Handlers.Check refuses, and handlers the store
// cannot keep (several or named ones without FanOutSupport.Handlers,
// ordered ones without FanOutSupport.OrderingKeys; see FanOutStore).
func NewProcessor(store LeaseStore, dispatcher Dispatcher, opts ...ProcessorOption) (*Processor, error) {
	if store == nil || dispatcher == nil || nilPointer(store) || nilPointer(dispatcher) {
		return nil, errors.New("webhooks: NewProcessor needs a store and a dispatcher (a *Mux, or Handlers)")
	}
	handlers, named := dispatcher.(Handlers)
	if named {
		handlers = handlers.clone()
		dispatcher = handlers
	} else {
		handlers = Handlers{{Dispatcher: dispatcher}}
	}
	if err := handlers.Check(); err != nil {
		return nil, err
	}
	if err := checkFanOut("NewProcessor", store, handlers.needs(), handlers); err != nil {
		return nil, err
	}
	if err := checkFlow("NewProcessor", store, handlers); err != nil {
		return nil, err
	}
	retired, capped, breakers := make(map[string]bool), make(map[string]bool), make(map[string]*breaker)
	for _, h := range handlers {
		if h.Breaker.Failures > 0 && !h.Retired {
			breakers[h.Name] = &breaker{cfg: h.Breaker}
		}
		if h.Retired {
			retired[h.Name] = true
		}
		if h.Limits.MaxRunning > 0 {
			capped[h.Name] = true
		}
	}
	cfg := processorConfig{
		workers:       DefaultWorkers,
		leaseDuration: DefaultLeaseDuration,
		handlerTO:     DefaultHandlerTimeout,
		grace:         DefaultShutdownGrace,
		pollInterval:  defaultPollInterval,
		storeTimeout:  DefaultProcessorStoreTimeout,
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
	case cfg.handlerTO < 0 || cfg.grace < 0:
		return nil, errors.New("webhooks: handler timeout and shutdown grace must not be negative")
	case cfg.storeTimeout <= 0:
		return nil, fmt.Errorf("webhooks: WithProcessorStoreTimeout(%v): the timeout must be positive", cfg.storeTimeout)
	case cfg.policy == nil:
		return nil, errors.New("webhooks: WithRetryPolicy(nil): give a policy, such as ExponentialPolicy{}")
	}
	if v, ok := cfg.policy.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return nil, err
		}
	}
	return &Processor{store: store, dispatcher: dispatcher, handlers: handlers, retired: retired, capped: capped, breakers: breakers, cfg: cfg, wake: make(chan struct{}, 1)}, nil
}

// Handles reports whether one of the processor's handlers that is not
// retired takes eventType: what its dispatcher says when it is a
// [HandledTypes] (a *Mux is), or true for one that is not. A Receiver
// given the processor (WithProcessor) stores only the types it handles.
func (p *Processor) Handles(eventType string) bool { return p.handlers.Handles(eventType) }

// Jobs returns the jobs a Receiver given the processor (WithProcessor)
// stores an event of eventType with: one per handler that takes the type
// (see Handlers.Jobs). It makes the Processor a JobRouter.
func (p *Processor) Jobs(provider, eventType string) []Job {
	return p.handlers.Jobs(provider, eventType)
}

func (p *Processor) needs() FanOutSupport { return p.handlers.needs() }

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
//
// When an acquisition fails with an error wrapping ErrStoreNotReady (such
// as pgstore's for a schema that was never migrated), Run logs it once,
// shuts down in the same way and returns that error: retrying would not
// help until the host acts.
func (p *Processor) Run(ctx context.Context) error {
	if !p.running.CompareAndSwap(false, true) {
		return errors.New("webhooks: Processor.Run is already running")
	}
	defer p.running.Store(false)
	ctx, stop := context.WithCancel(ctx) // also stopped when the store is not ready
	defer stop()

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

	r := &run{ctx: ctx, handlerBase: handlerBase}
	r.renewer = newRenewer(p)
	r.settler = newSettler(p, r.renewer)
	var starting sync.WaitGroup
	if ls, ok := p.store.(LeaseStarter); ok {
		r.starter = newStarter(p, ls)
		r.iso = &isolation{}
		starting.Go(func() { r.starter.run(detached) })
	}
	stopRenewing := make(chan struct{})
	var renewing, settling sync.WaitGroup
	renewing.Go(func() { r.renewer.run(detached, stopRenewing) })
	settling.Go(func() { r.settler.run(detached) })

	// A slot is a lease held in this process, waiting in jobs or running:
	// the workers' and those queued ahead of them.
	capacity := p.cfg.workers + ahead(p.cfg.workers)
	jobs := make(chan *Lease, capacity)
	slots := make(chan struct{}, capacity)
	for range capacity {
		slots <- struct{}{}
	}
	var workers sync.WaitGroup
	for range p.cfg.workers {
		workers.Go(func() {
			for {
				r.idle.Add(1)
				lease, ok := <-jobs
				r.idle.Add(-1)
				if !ok {
					return
				}
				p.process(r, lease)
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
		if p.cfg.grace <= 0 {
			cancelHandlers(errShutdown)
			return
		}
		// Cancelled by the timer itself, so that a test clock's Advance
		// past the grace returns with the handlers cancelled.
		stop := afterFunc(p.cfg.clock, p.cfg.grace, func() { cancelHandlers(errShutdown) })
		<-workersDone
		stop()
	})

	err := p.acquireLoop(ctx, detached, r, jobs, slots)
	stop()
	close(jobs)
	workers.Wait()
	close(workersDone)
	// Every worker has handed its settlement over: settle them all, keeping
	// their leases alive meanwhile, then stop renewing.
	if r.starter != nil {
		close(r.starter.jobs)
		starting.Wait()
	}
	close(r.settler.jobs)
	settling.Wait()
	close(stopRenewing)
	renewing.Wait()
	wg.Wait()
	return err
}

// run is the state of one Processor.Run shared by its goroutines.
type run struct {
	ctx         context.Context // Run's context: the shutdown signal
	handlerBase context.Context // handlers' parent; cancelled after the grace
	renewer     *renewer
	settler     *settler
	starter     *starter // nil unless the store is a LeaseStarter
	// iso runs the leases taken over from crashed attempts alone; nil
	// unless the store is a LeaseStarter (only its suspects are held).
	iso *isolation
	// idle counts the workers waiting for a lease.
	idle atomic.Int32
}

// acquireLoop leases due items while there is room for them, until ctx
// is done. It waits for room for a whole batch (half the slots, at most
// maxAcquire) while leases still wait in jobs, and for any room once
// none does, so batches are large when the workers keep up and the
// workers never wait for a batch that could have started earlier.
//
// Each acquisition is named by a fresh random ID (AcquireRequest.ID).
// When the store answers with an error and no leases, the next call asks
// an AcquisitionRepeater for the same acquisition again: if the store had
// granted leases before its reply was lost, that call returns them, so
// they are run here instead of waiting out their lease with an attempt
// spent on nothing; when it returns none, the call acquires anew.
// Once a lease duration has passed since the first failure, whatever the
// lost call leased has expired, and the next acquisition is a new one. A
// repeat may return more leases than the free slots (a call that timed
// out here and committed late, then a second grant under the same ID):
// those beyond the slots are given back unrun, without counting their
// attempt. It returns nil when ctx is done, and an acquisition's error
// that wraps ErrStoreNotReady.
func (p *Processor) acquireLoop(ctx, detached context.Context, r *run, jobs chan<- *Lease, slots chan struct{}) error {
	poll := time.NewTimer(p.cfg.pollInterval)
	defer poll.Stop()
	batch := min(maxAcquire, max(1, cap(slots)/2))
	free := 0
	// One acquisition state per handler, retired ones included (their
	// jobs are dead-lettered unrun), by Priority, highest first: the
	// handlers of a priority are asked before those of a lower one, and
	// those of one priority take turns to start a round; a handler that
	// comes up short leaves the free slots to the next in the same
	// round, so one handler's backlog neither starves another of its
	// priority nor leaves workers idle.
	acqs := make([]acquisition, len(p.handlers))
	for i, h := range p.handlers {
		acqs[i].handler, acqs[i].limits, acqs[i].fair, acqs[i].priority = h.Name, h.Limits, h.Fair, h.Priority
		acqs[i].levels = acquirePriorities(h.TypePriorities)
	}
	slices.SortStableFunc(acqs, func(a, b acquisition) int { return cmp.Compare(b.priority, a.priority) })
	var tiers [][]acquisition // of one priority each, sharing acqs
	for i := 0; i < len(acqs); {
		j := i + 1
		for j < len(acqs) && acqs[j].priority == acqs[i].priority {
			j++
		}
		tiers = append(tiers, acqs[i:j])
		i = j
	}
	turn := 0
	// onlyLimited is set when the loop slept until a rate-limited
	// handler's next look, not the poll or a wake-up: that round asks
	// only the handlers waiting for a token; the others found nothing
	// due last time, and wait for the poll (a poll interval after the
	// last round that asked them, lastFull) or a wake-up as ever.
	onlyLimited := false
	lastFull := time.Now()
	for {
		for free == 0 || (free < batch && len(jobs) > 0) {
			select {
			case <-ctx.Done():
				return nil
			case <-slots:
				free++
			}
		collect:
			for free < maxAcquire {
				select {
				case <-slots:
					free++
				default:
					break collect
				}
			}
		}
		if ctx.Err() != nil { // select picks at random when both are ready
			return nil
		}
		more := false // some handler may have more due work
		if !onlyLimited {
			lastFull = time.Now()
		}
		for _, tier := range tiers {
			for i := 0; i < len(tier) && free > 0; i++ {
				a := &tier[(turn+i)%len(tier)]
				if onlyLimited && a.again == 0 {
					continue
				}
				got, full, err := p.acquireFor(ctx, detached, r, jobs, a, free)
				free -= got
				if err != nil {
					return err
				}
				more = more || full
			}
		}
		turn++
		onlyLimited = false
		if more {
			continue
		}
		// Nothing more is due: sleep until woken, the next poll, or the
		// next look at a rate-limited handler. (Since Go 1.23, Reset
		// discards a stale expiry.)
		untilPoll := max(0, p.cfg.pollInterval-time.Since(lastFull))
		sleep := untilPoll
		for i := range acqs {
			if d := acqs[i].again; d > 0 {
				sleep = min(sleep, d)
			}
		}
		poll.Reset(sleep)
		select {
		case <-ctx.Done():
			return nil
		case <-p.wake:
			for i := range acqs {
				acqs[i].again = min(acqs[i].again, acqs[i].limits.TokenInterval())
			}
		case <-poll.C:
			onlyLimited = sleep < untilPoll
		}
	}
}

// minLimitedLook is the shortest wait before a rate-limited handler's
// next acquisition: at high rates, tokens are taken a few at a time, not
// one statement per token.
const minLimitedLook = 10 * time.Millisecond

// limited notes the outcome of an acquisition of a's handler that got
// got leases of want: with a Rate, a short one may have run out of
// tokens, so the handler is looked at again once the next is due (at
// least minLimitedLook, at most the poll interval), and an empty one
// may mean nothing is due, so the wait doubles each time (up to the
// poll interval) until one grants a lease or a wake-up comes; other
// handlers wait for the poll or a wake-up as usual.
func (p *Processor) limited(a *acquisition, got, want int) {
	every := a.limits.TokenInterval()
	switch {
	case every == 0 || got == want:
		a.again = 0
	case got > 0 || a.again == 0:
		a.again = min(p.cfg.pollInterval, max(every, minLimitedLook))
	default:
		a.again = min(p.cfg.pollInterval, 2*a.again)
	}
}

// acquisition is the state of one handler's acquisitions: the ID of one
// to ask for again, and when it first failed.
type acquisition struct {
	handler  string
	limits   Limits
	fair     bool
	priority int
	levels   []int     // AcquireRequest.Priorities
	id       string    // the acquisition to make, or to ask for again
	failed   time.Time // when the acquisition id first failed
	// again is when to look at a rate-limited handler again after an
	// acquisition that got fewer leases than it asked for (see limited),
	// 0 when the poll interval will do.
	again time.Duration
}

// acquireFor makes one acquisition of a's handler for up to free leases,
// puts the leases in jobs and returns how many, whether it got all it
// asked for (more may be due), and an error only when the store cannot
// serve (ErrStoreNotReady), which stops the processor.
func (p *Processor) acquireFor(ctx, detached context.Context, r *run, jobs chan<- *Lease, a *acquisition, free int) (got int, full bool, err error) {
	// The acquisition itself is not cut short by the shutdown: a
	// statement cancelled mid-way may still have leased rows that the
	// caller then never sees (they would wait out their lease). Leases
	// acquired as the shutdown begins are abandoned unrun by process.
	want := min(free, maxAcquire)
	if a.id != "" && p.cfg.clock.Now().Sub(a.failed) >= p.cfg.leaseDuration {
		a.id = "" // its leases, if any, have expired: start afresh
	}
	repeat := a.id != ""
	if !repeat {
		a.id = rand.Text()
	}
	actx, cancel := context.WithTimeout(detached, p.cfg.storeTimeout)
	// With a LeaseStarter, only the leases an idle worker takes at
	// once start with the acquisition; the rest are held until a
	// worker starts them, so a crash costs them no attempt.
	// While a lease taken over from a crashed attempt waits to run
	// alone, or runs, none starts: none could run before it is done.
	start := min(want, max(0, int(r.idle.Load())-len(jobs)))
	if r.iso != nil && r.iso.waiting() {
		start = 0
	}
	leases, err := p.acquire(actx, a, want, start, repeat)
	cancel()
	if err == nil {
		p.limited(a, len(leases), want)
	}
	if len(leases) > want {
		p.cfg.logger.WarnContext(ctx, "a repeated acquisition returned more leases than there are free workers; giving the rest back unrun, without counting their attempt",
			"acquisition_id", a.id, "leases", len(leases), "free", want)
		for _, l := range leases[want:] {
			r.settler.submit(settleJob{s: Settlement{Lease: l, Outcome: AttemptAbandoned}, log: p.jobLog(l)})
		}
		leases = leases[:want]
	}
	// The started leases first, for the idle workers counted in
	// start: a started lease waiting behind a held one would pay for
	// a crash it did not run in.
	slices.SortStableFunc(leases, func(a, b *Lease) int { return cmp.Compare(b2i(a.Held), b2i(b.Held)) })
	for _, l := range leases {
		r.renewer.add(l)
		if r.iso != nil && l.Reclaimed && l.Held {
			r.iso.queue() // before the next acquisition asks r.iso.waiting
		}
		jobs <- l
	}
	if len(leases) == 0 && errors.Is(err, ErrStoreNotReady) {
		p.cfg.logger.ErrorContext(ctx, "the inbox store cannot serve; the processor stops", "err", err)
		return 0, false, err
	}
	switch {
	case err == nil || len(leases) > 0:
		a.id = "" // the store answered: the next acquisition is a new one
	case !repeat:
		a.failed = p.cfg.clock.Now()
	}
	if err != nil && ctx.Err() == nil {
		if a.id != "" {
			p.cfg.logger.WarnContext(ctx, "acquiring inbox items failed; retrying after the poll interval with the same acquisition ID, "+
				"so that any leases the store granted before its reply was lost come back to this processor "+
				"and are run without spending another attempt. If they expire before a retry succeeds, "+
				"they are taken over as usual and their attempt is recorded as crashed",
				"err", err, "acquisition_id", a.id, "lease_duration", p.cfg.leaseDuration, "handler", a.handler)
		} else {
			p.cfg.logger.WarnContext(ctx, "acquiring inbox items failed after leasing some; running those, and retrying after the poll interval",
				"err", err, "leased", len(leases), "handler", a.handler)
		}
	}
	return len(leases), err == nil && len(leases) == want, nil
}

// acquire leases up to n due jobs of a's handler, within its Limits, in
// the acquisition a.id, start of them started and the others held when
// the store is a LeaseStarter; asked to repeat a.id, it returns the
// leases an AcquisitionRepeater still grants under it instead, when
// there are any.
func (p *Processor) acquire(ctx context.Context, a *acquisition, n, start int, repeat bool) ([]*Lease, error) {
	if r, ok := p.store.(AcquisitionRepeater); ok && repeat {
		leases, err := r.RepeatAcquisition(ctx, RepeatRequest{ID: a.id, Now: p.cfg.clock.Now(), Handler: a.handler})
		if err != nil || len(leases) > 0 {
			return leases, err
		}
	}
	_, hold := p.store.(LeaseStarter)
	return p.store.Acquire(ctx, AcquireRequest{
		Hold:          hold,
		Start:         start,
		Now:           p.cfg.clock.Now(),
		LeaseDuration: p.cfg.leaseDuration,
		Max:           n,
		Worker:        p.cfg.worker,
		Version:       p.cfg.version,
		ID:            a.id,
		Handler:       a.handler,
		Limits:        a.limits,
		Fair:          a.fair,
		Priorities:    a.levels,
	})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// defaultWorkerID is "host:pid".
func defaultWorkerID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	return host + ":" + strconv.Itoa(os.Getpid())
}
