package webhooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
)

// process runs one leased item's dispatch and hands its settlement to the
// settler. The lease is in the renewer from its acquisition until it is
// settled.
func (p *Processor) process(r *run, lease *Lease) {
	ev := eventFromLease(lease)
	log := p.jobLog(lease)

	// A suspect, taken over from a crashed attempt, may be what crashed:
	// it runs alone (see isolation), queued there since its acquisition.
	suspect := r.iso != nil && lease.Reclaimed && lease.Held
	if r.ctx.Err() != nil || r.handlerBase.Err() != nil {
		// Leased just as the shutdown began: give it back unrun.
		if suspect {
			r.iso.unqueue()
		}
		r.settler.submit(settleJob{s: Settlement{Lease: lease, Outcome: AttemptAbandoned}, log: log})
		return
	}
	if p.breakerHolds(lease) {
		// Its handler's breaker opened since it was acquired: it waits
		// with the others, unrun, its attempt not counted.
		if suspect {
			r.iso.unqueue()
		}
		r.settler.submit(settleJob{s: Settlement{Lease: lease, Outcome: AttemptAbandoned}, log: log})
		return
	}
	if p.retired[ev.Handler] {
		// The handler was retired on purpose (Handler.Retired): its
		// jobs end as dead letters, unrun, replayable if it returns.
		p.deadLetterUnrun(r, lease, ev, suspect, log,
			Failure{Class: FailureHandlerGone, Message: fmt.Sprintf("handler %q is retired: the job was dead-lettered without running", ev.Handler)},
			RetryDecision{DeadLetter: true})
		return
	}
	if lease.Reclaimed && lease.Attempt > 1 {
		// The previous attempt ended unsettled: its worker crashed,
		// stalled, lost its lease or never received it (a lost
		// acquisition reply). Ask the policy about it as about
		// any failure, so an event that crashes its worker every time
		// ends in a dead letter instead of looping forever.
		failure := Failure{
			Class: FailureLeaseExpired,
			Message: fmt.Sprintf("attempt %d ended without being settled: its lease expired because its worker crashed, stalled, lost its lease "+
				"or never received it (a lost acquisition reply)", lease.Attempt-1),
			Transient: true,
		}
		if d := p.decide(lease, lease.Attempt-1, failure); d.DeadLetter {
			failure.Message += "; the retry policy allows no more attempts"
			p.deadLetterUnrun(r, lease, ev, suspect, log, failure, d)
			return
		}
	}

	// Past the gate, the lease must leave it once it is settled (done), or
	// at once when it will not be.
	var done func()
	if g := r.iso; g != nil {
		if suspect {
			log.InfoContext(r.ctx, "the lease was taken over from a crashed attempt: it runs alone, once the handlers running now have finished "+
				"and been settled, and no other lease starts until it is settled, so that if it crashes the process again, no other item pays for it")
			if !g.enterAlone(r.ctx) {
				r.settler.submit(settleJob{s: Settlement{Lease: lease, Outcome: AttemptAbandoned}, log: log})
				return
			}
			done = g.leaveAlone
		} else {
			if !g.enter(r.ctx) {
				r.settler.submit(settleJob{s: Settlement{Lease: lease, Outcome: AttemptAbandoned}, log: log})
				return
			}
			done = g.leave
		}
	}
	settle := func(job settleJob) {
		job.done = done
		r.settler.submit(job)
	}
	unsettled := func() {
		if done != nil {
			done()
		}
	}

	// The renewer drops a lease the store says is lost.
	lostBeforeStart := "lease lost before its handler started; the item's new holder will run it"
	if lease.Held && r.starter != nil { // only a LeaseStarter holds leases
		// Held since its acquisition (no worker was free, or it was
		// taken over from a crashed attempt): its attempt starts now, for
		// good, before its handler runs.
		if !r.renewer.holds(lease) {
			log.WarnContext(r.ctx, lostBeforeStart)
			unsettled()
			return
		}
		if err := r.starter.start(lease); err != nil {
			if errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrAlreadySettled) {
				r.renewer.remove(lease)
				log.WarnContext(r.ctx, "the store refused to start the held lease: it was lost; the item's new holder will run it", "err", err)
				unsettled()
				return
			}
			// Unstarted, it costs nothing to give back: it is due again
			// at once, here or elsewhere.
			log.WarnContext(r.ctx, "starting a held lease failed; giving it back unrun, without counting its attempt", "err", err)
			settle(settleJob{s: Settlement{Lease: lease, Outcome: AttemptAbandoned}, log: log})
			return
		}
		lostBeforeStart = "lease lost just after its attempt started; the item's new holder will run it and record this attempt as crashed"
	}

	hctx, cancel := context.WithCancelCause(r.handlerBase)
	defer cancel(nil)
	if p.cfg.handlerTO > 0 {
		var cancelTO context.CancelFunc
		hctx, cancelTO = context.WithTimeoutCause(hctx, p.cfg.handlerTO, errHandlerTimeout)
		defer cancelTO()
	}
	obs := p.cfg.observer
	if obs != nil {
		hctx = obs.StartAttempt(hctx, AttemptStartData{Event: ev})
	}
	if !r.renewer.start(lease, cancel) {
		log.WarnContext(hctx, lostBeforeStart)
		if obs != nil {
			obs.EndAttempt(hctx, AttemptEndData{Event: ev, LeaseLost: true})
		}
		unsettled()
		return
	}
	failure, err := p.dispatch(hctx, ev, log)
	r.renewer.handlerReturned(lease)

	var job settleJob
	cause := context.Cause(hctx)
	switch {
	case errors.Is(cause, ErrLeaseLost):
		r.renewer.remove(lease)
		log.WarnContext(hctx, "lease lost while the handler ran; the item's new holder will settle it")
		if obs != nil {
			obs.EndAttempt(hctx, AttemptEndData{Event: ev, LeaseLost: true})
		}
		unsettled()
		return
	case err == nil:
		job = settleJob{s: Settlement{Lease: lease, Outcome: AttemptSucceeded}, log: log}
	case skipped(err):
		// The handler found the event stale (Skip): it succeeded, the
		// history says it was skipped, and the key's applied version
		// stays as it was.
		job = settleJob{s: Settlement{Lease: lease, Outcome: AttemptSucceeded, Failure: Failure{
			Class: FailureSkipped, Message: storableMessage(err.Error()),
		}}, log: log}
	case unhandled(err):
		// Nothing handles the type (a receiver that does not filter
		// stored it): acknowledged, so a provider's ping does not become a
		// dead letter; the history says no handler ran.
		job = settleJob{s: Settlement{Lease: lease, Outcome: AttemptSucceeded, Failure: Failure{
			Class:   FailureNoHandler,
			Message: storableMessage(fmt.Sprintf("no handler for event type %q: acknowledged without being handled", ev.Type)),
		}}, log: log}
	case errors.Is(cause, errShutdown):
		job = settleJob{s: Settlement{Lease: lease, Outcome: AttemptAbandoned}, log: log}
	default:
		// An overrun handler's plain error becomes a timeout; an error it
		// classified itself (Permanent, RetryAfter) keeps its class.
		if errors.Is(cause, errHandlerTimeout) && failure.Class == FailureError && failure.RetryAfter == 0 {
			failure = Failure{Class: FailureTimeout, Message: fmt.Sprintf("handler did not finish within %v: %v", p.cfg.handlerTO, err), Transient: true}
		}
		job = p.failed(lease, failure, p.decide(lease, lease.Attempt, failure), log)
	}
	if obs != nil {
		s := job.s
		s.Now = p.cfg.clock.Now()
		obs.EndAttempt(hctx, AttemptEndData{Event: ev, Settlement: s})
	}
	if p.noteBreaker(r.ctx, lease, job.s, log) {
		job.s = Settlement{Lease: lease, Outcome: AttemptAbandoned}
	}
	settle(job)
}

// deadLetterUnrun settles a lease as dead-lettered without running its
// handler (a crash loop's end, a retired handler's job), telling the
// observer, and takes a suspect out of the isolation queue.
func (p *Processor) deadLetterUnrun(r *run, lease *Lease, ev Event, suspect bool, log *jobLog, failure Failure, d RetryDecision) {
	if suspect {
		r.iso.unqueue()
	}
	job := p.failed(lease, failure, d, log)
	if obs := p.cfg.observer; obs != nil {
		s := job.s
		s.Now = p.cfg.clock.Now()
		obs.EndAttempt(r.ctx, AttemptEndData{Event: ev, Settlement: s})
	}
	r.settler.submit(job)
}

// unhandled reports whether err says that no handler takes the event's
// type: it wraps ErrNoHandler, and the handler did not classify it
// itself (Permanent, RetryAfter), which keeps its say.
func unhandled(err error) bool { return unclassified(err, ErrNoHandler) }

// skipped reports whether err is a handler's Skip, unclassified.
func skipped(err error) bool { return unclassified(err, ErrSkipped) }

// unclassified reports whether err wraps target and is neither Permanent
// nor RetryAfter, whose classification wins.
func unclassified(err, target error) bool {
	if !errors.Is(err, target) {
		return false
	}
	_, permanent := errors.AsType[*PermanentError](err)
	_, retry := errors.AsType[*RetryAfterError](err)
	return !permanent && !retry
}

// decide asks the retry policy about a failed attempt, never letting a
// retry be due before now.
func (p *Processor) decide(lease *Lease, attempt int, failure Failure) RetryDecision {
	now := p.cfg.clock.Now()
	it := &lease.Item
	d := p.cfg.policy.Decide(FailedAttempt{
		Key:        it.Key,
		Handler:    it.Handler,
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

// failed is the settlement of a failed attempt.
func (p *Processor) failed(lease *Lease, failure Failure, decision RetryDecision, log *jobLog) settleJob {
	failure.Message = storableMessage(failure.Message)
	s := Settlement{Lease: lease, Outcome: AttemptRetried, Failure: failure, RetryAt: decision.RetryAt}
	if decision.DeadLetter {
		s.Outcome, s.RetryAt = AttemptDeadLettered, time.Time{}
	}
	return settleJob{s: s, log: log}
}

// dispatch calls the dispatcher, turning a panic into a failure whose
// message carries the panic's value and where it happened (panicStack),
// both bounded; the log gets the whole stack.
func (p *Processor) dispatch(ctx context.Context, ev Event, log *jobLog) (failure Failure, err error) {
	defer func() {
		if r := recover(); r != nil {
			log.ErrorContext(ctx, "handler panicked", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = fmt.Errorf("webhooks: handler panicked: %v", r)
			msg := "webhooks: handler panicked: " + cutUTF8(fmt.Sprint(r), maxPanicValueBytes)
			if stack := panicStack(); stack != "" {
				msg += "\n" + stack
			}
			failure = Failure{Class: FailurePanic, Message: msg, Transient: true}
		}
	}()
	err = p.dispatcher.Dispatch(ctx, ev)
	if err != nil {
		failure = failureFromError(err)
	}
	return failure, err
}

// A panic's attempt error holds at most maxPanicValueBytes of the panic's
// value and maxPanicStackBytes of its stack, so that both fit in a stored
// failure message (maxFailureMessageBytes).
const (
	maxPanicValueBytes = 512
	maxPanicStackBytes = 1024
)

// panicStack describes, for the attempt's error, where the panic being
// recovered happened: one line per frame, "function (file.go:line)", from
// the frame that panicked out to the dispatcher, without the runtime's
// frames and the Processor's own. It holds names and lines only, never an
// argument, and at most maxPanicStackBytes. It must be called from the
// deferred function that recovers.
func panicStack() string {
	var pcs [64]uintptr
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs[:])])
	var b strings.Builder
	panicking := false // past runtime.gopanic: the panicking goroutine's own frames
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			panicking = true
		case !panicking || strings.HasPrefix(f.Function, "runtime."):
		case f.Function == dispatchFrame:
			return b.String()
		case f.Function == muxDispatchFrame || f.Function == funcDispatchFrame || f.Function == handlersFrame:
		default:
			line := f.Function + " (" + filepath.Base(f.File) + ":" + strconv.Itoa(f.Line) + ")"
			if b.Len()+len(line)+1 > maxPanicStackBytes {
				return b.String()
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(line)
		}
		if !more {
			return b.String()
		}
	}
}

// The library's frames between a handler and the recovery.
const (
	dispatchFrame     = "github.com/hookinbox/webhooks.(*Processor).dispatch"
	muxDispatchFrame  = "github.com/hookinbox/webhooks.(*Mux).Dispatch"
	handlersFrame     = "github.com/hookinbox/webhooks.Handlers.Dispatch"
	funcDispatchFrame = "github.com/hookinbox/webhooks.DispatcherFunc.Dispatch"
)

// cutUTF8 cuts s to at most n bytes without splitting a UTF-8 sequence.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 { // continuation byte
		n--
	}
	return s[:n]
}

// jobLog logs for one leased job: through the processor's logger, with the
// job's attributes (provider, tenant, event ID and type, attempt, and its
// handler and ordering key where they say something), which it adds only
// when a record is logged, so that a job that logs nothing (a success
// below the logger's level, the usual case) costs no Logger.With. It is
// safe for concurrent use.
type jobLog struct {
	base  *slog.Logger
	lease *Lease
	multi bool // the processor runs several handlers: name the handler
	once  sync.Once
	l     *slog.Logger
}

// jobLog returns lease's jobLog.
func (p *Processor) jobLog(lease *Lease) *jobLog {
	return &jobLog{base: p.cfg.logger, lease: lease, multi: len(p.handlers) > 1}
}

// logger returns the processor's logger with the job's attributes.
func (j *jobLog) logger() *slog.Logger {
	j.once.Do(func() {
		it := &j.lease.Item
		j.l = j.base.With("provider", it.Key.Provider, "tenant", it.Key.Tenant, "event_id", it.Key.EventID, "event_type", it.EventType,
			"attempt", j.lease.Attempt)
		if it.Handler != "" || j.multi {
			j.l = j.l.With("handler", it.Handler)
		}
		if it.Ordered && it.Ordering.Key != "" {
			j.l = j.l.With("ordering_key", it.Ordering.Key, "seq", it.Seq)
		}
	})
	return j.l
}

// log logs msg with args at level, from its caller's caller (the level's
// method), when the logger is enabled at level.
func (j *jobLog) log(ctx context.Context, level slog.Level, msg string, args ...any) {
	if !j.base.Enabled(ctx, level) {
		return
	}
	var pc [1]uintptr
	runtime.Callers(3, pc[:]) // runtime.Callers, log, the level's method
	r := slog.NewRecord(time.Now(), level, msg, pc[0])
	r.Add(args...)
	_ = j.logger().Handler().Handle(ctx, r)
}

// DebugContext, InfoContext, WarnContext and ErrorContext log at their
// level, as slog.Logger's do.
func (j *jobLog) DebugContext(ctx context.Context, msg string, args ...any) {
	j.log(ctx, slog.LevelDebug, msg, args...)
}
func (j *jobLog) InfoContext(ctx context.Context, msg string, args ...any) {
	j.log(ctx, slog.LevelInfo, msg, args...)
}
func (j *jobLog) WarnContext(ctx context.Context, msg string, args ...any) {
	j.log(ctx, slog.LevelWarn, msg, args...)
}
func (j *jobLog) ErrorContext(ctx context.Context, msg string, args ...any) {
	j.log(ctx, slog.LevelError, msg, args...)
}
