package webhooks

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Handler is one named consumer of events: each event it takes is stored
// with a job of its own (see JobKey), which has its own attempts, retries,
// history, dead letter, replay and closing, so a failure of one handler
// never runs another again. A Processor runs several through Handlers.
type Handler struct {
	// Name names the handler's jobs (see CheckHandlerName); "" is the
	// default handler, which a host with one handler has without naming
	// it.
	Name string
	// Dispatcher runs the handler's events. When it is a HandledTypes (a
	// *Mux is), events of the types it does not handle get no job of
	// this handler.
	Dispatcher Dispatcher
	// Ordered runs the handler's jobs of one ordering key (see Ordering)
	// one at a time, in the provider's order: a failing job holds the
	// later ones of its key until it succeeds or is dead-lettered. It
	// needs a store with FanOutSupport.OrderingKeys.
	Ordered bool
	// Retired ends a handler that was removed: the Receiver makes no new
	// jobs for it, and the Processor dead-letters its remaining jobs
	// unrun, with FailureHandlerGone (replayable if the handler comes
	// back). A handler that is merely left out of Handlers keeps its
	// jobs pending and visible (ops.Stats.Handlers shows them, lagging),
	// since a processor that does not know a handler may be one of an
	// older release during a rolling deploy.
	Retired bool
	// Limits bound how many of the handler's jobs run at once and how
	// many start per second, over every processor sharing the store
	// (see Limits); they need a store with FlowSupport.Limits. Give
	// every processor the same Limits: each acquisition is counted
	// against the Limits of the processor making it.
	Limits Limits
	// Breaker pauses the handler, over every processor, when its
	// dependency seems down (see Breaker); it needs a PauseStore.
	Breaker Breaker
	// Fair leases the handler's due jobs by tenant, in turns, instead of
	// the longest due first, so that one tenant's backlog delays another
	// tenant's new event by one acquisition, not by the backlog (see
	// FlowSupport.Fair; a tenant is a provider and a tenant of InboxKey).
	// It needs a store with FlowSupport.Fair; give every processor the
	// same Fair.
	Fair bool
	// Priority orders the handlers' acquisitions in a Processor: when
	// workers are free, the handlers of a higher Priority are asked for
	// their due jobs first, and those of a lower one get the workers
	// left, so a payment handler's events start before an analytics
	// handler's when both wait. Handlers of one Priority (all of them,
	// at the default 0) take turns.
	Priority int
	// TypePriorities order the handler's own due jobs by event type:
	// when several are due, those of a higher priority are leased first,
	// over every processor, so a payment event starts before an
	// analytics one of the same handler however long the analytics
	// backlog; among jobs of one priority, the longest due first. Keys
	// are Mux patterns (an exact type, a prefix "invoice.*", or "*"), the
	// most specific matching one giving a type its priority; a type none
	// matches has 0. Priorities are from 0 to MaxTypePriority, with at
	// most MaxTypePriorities distinct ones above 0. A job keeps the
	// priority the Receiver gave it when it was stored (Job.Priority): a
	// change (given to the Receivers and processors built after it;
	// those built before keep a copy of their own) applies to events
	// stored after it, and a job of a priority the handler no longer has
	// is leased with those of 0. It
	// needs a store with FlowSupport.Priorities, and cannot be given with
	// Fair (whose turns go by tenant); give every Receiver and processor
	// the same TypePriorities.
	TypePriorities map[string]int
}

// Handlers are the handlers a Processor runs, each event going to every
// handler that takes its type. Pass them to NewProcessor in place of a
// single Dispatcher:
//
//	proc, err := webhooks.NewProcessor(store, webhooks.Handlers{
//		{Name: "ledger", Dispatcher: ledgerMux, Ordered: true},
//		{Name: "audit", Dispatcher: auditMux},
//	})
//
// and give the Processor (or, for a Receiver in another process, the same
// Handlers) to the Receiver, which stores each event with the jobs of the
// handlers that take it (see JobRouter). Handlers is a Dispatcher that
// routes an event by its Handler field, a HandledTypes and a JobRouter.
type Handlers []Handler

// JobRouter decides which jobs an event is stored with: the Receiver asks
// its HandledTypes (see WithProcessor, WithHandledTypes) for them when it
// is a JobRouter. None means that no handler takes the event: the
// Receiver answers it ignored and stores nothing. *Processor and Handlers
// implement it. Jobs must be safe for concurrent use.
type JobRouter interface {
	Jobs(provider, eventType string) []Job
}

// Dispatch runs ev on the handler named ev.Handler. A handler that is not
// among hs, or is retired, is an error: the Processor never hands such an
// event to Dispatch (it dead-letters a retired handler's jobs unrun).
func (hs Handlers) Dispatch(ctx context.Context, ev Event) error {
	for i := range hs {
		if hs[i].Name == ev.Handler {
			if hs[i].Retired {
				return Permanent(fmt.Errorf("webhooks: handler %q is retired", ev.Handler))
			}
			return hs[i].Dispatcher.Dispatch(ctx, ev)
		}
	}
	return fmt.Errorf("webhooks: no handler named %q among the Handlers", ev.Handler)
}

// Handles reports whether a handler that is not retired takes eventType.
func (hs Handlers) Handles(eventType string) bool {
	for i := range hs {
		if !hs[i].Retired && handles(hs[i].Dispatcher, eventType) {
			return true
		}
	}
	return false
}

// Jobs returns a job for each handler that is not retired and takes
// eventType, in the order of hs; provider is not consulted.
func (hs Handlers) Jobs(provider, eventType string) []Job {
	var jobs []Job
	for i := range hs {
		if h := &hs[i]; !h.Retired && handles(h.Dispatcher, eventType) {
			jobs = append(jobs, Job{Handler: h.Name, Ordered: h.Ordered, Priority: typePriority(h.TypePriorities, eventType)})
		}
	}
	return jobs
}

// clone returns a copy of hs whose TypePriorities are copies too, for a
// Receiver or a Processor to keep: the host may change its own afterwards
// (for the next Receiver and Processor it builds) without a race.
func (hs Handlers) clone() Handlers {
	out := slices.Clone(hs)
	for i := range out {
		out[i].TypePriorities = maps.Clone(out[i].TypePriorities)
	}
	return out
}

// typePriority returns the priority of eventType by priorities (see
// Handler.TypePriorities): that of the most specific pattern matching it,
// as patterns.match finds it, or 0.
func typePriority(priorities map[string]int, eventType string) int {
	if len(priorities) == 0 {
		return 0
	}
	if p, ok := priorities[eventType]; ok {
		return p // a type that is itself a pattern: the pattern matches it
	}
	for i := len(eventType) - 1; i > 0; i-- {
		if eventType[i] == '.' && i+1 < len(eventType) {
			if p, ok := priorities[eventType[:i+1]+"*"]; ok {
				return p
			}
		}
	}
	return priorities["*"]
}

// acquirePriorities returns the distinct priorities above 0 of
// priorities, highest first: an AcquireRequest's Priorities.
func acquirePriorities(priorities map[string]int) []int {
	var levels []int
	for _, p := range priorities {
		if p > 0 && !slices.Contains(levels, p) {
			levels = append(levels, p)
		}
	}
	slices.SortFunc(levels, func(a, b int) int { return b - a })
	return levels
}

// checkTypePriorities reports what makes priorities invalid (see
// Handler.TypePriorities).
func checkTypePriorities(priorities map[string]int) error {
	var problems []error
	for _, pattern := range slices.Sorted(maps.Keys(priorities)) {
		if err := checkPattern(pattern); err != nil {
			problems = append(problems, fmt.Errorf("TypePriorities: %w", err))
		}
		if p := priorities[pattern]; p < 0 || p > MaxTypePriority {
			problems = append(problems, fmt.Errorf("webhooks: TypePriorities[%q] is %d; it must be from 0 to %d (webhooks.MaxTypePriority)", pattern, p, MaxTypePriority))
		}
	}
	if n := len(acquirePriorities(priorities)); n > MaxTypePriorities {
		problems = append(problems, fmt.Errorf("webhooks: TypePriorities has %d distinct priorities above 0; at most %d (webhooks.MaxTypePriorities)", n, MaxTypePriorities))
	}
	return errors.Join(problems...)
}

// handles reports what d says about eventType when it is a HandledTypes,
// and true otherwise.
func handles(d Dispatcher, eventType string) bool {
	if h, ok := d.(HandledTypes); ok {
		return h.Handles(eventType)
	}
	return true
}

// Check reports what makes hs unusable: no handler, more than MaxHandlers,
// a name CheckHandlerName refuses or given twice, a nil Dispatcher,
// Limits or a Breaker their Check refuses, TypePriorities that are not
// valid or given to a Fair handler, or every handler retired.
func (hs Handlers) Check() error {
	var problems []error
	if len(hs) == 0 {
		return errors.New("webhooks: Handlers is empty; give at least one handler")
	}
	if len(hs) > MaxHandlers {
		problems = append(problems, fmt.Errorf("webhooks: %d handlers; at most %d (webhooks.MaxHandlers)", len(hs), MaxHandlers))
	}
	live := 0
	for i, h := range hs {
		if err := CheckHandlerName(h.Name); err != nil {
			problems = append(problems, err)
		}
		if nilPointer(h.Dispatcher) || h.Dispatcher == nil {
			problems = append(problems, fmt.Errorf("webhooks: handler %q has no Dispatcher", h.Name))
		}
		for _, o := range hs[:i] {
			if o.Name == h.Name {
				problems = append(problems, fmt.Errorf("webhooks: handler %q is named twice", h.Name))
			}
		}
		if !h.Retired {
			live++
		}
		if err := h.Limits.Check(); err != nil {
			problems = append(problems, fmt.Errorf("handler %q: %w", h.Name, err))
		}
		if err := h.Breaker.Check(); err != nil {
			problems = append(problems, fmt.Errorf("handler %q: %w", h.Name, err))
		}
		if err := checkTypePriorities(h.TypePriorities); err != nil {
			problems = append(problems, fmt.Errorf("handler %q: %w", h.Name, err))
		}
		if h.Fair && len(acquirePriorities(h.TypePriorities)) > 0 {
			problems = append(problems, fmt.Errorf("webhooks: handler %q is Fair and has TypePriorities above 0: a Fair handler's jobs are leased by tenant, in turns; give one", h.Name))
		}
	}
	if live == 0 {
		problems = append(problems, errors.New("webhooks: every handler is retired; keep at least one that runs"))
	}
	return errors.Join(problems...)
}

// needs is what a store must support to keep hs's jobs.
func (hs Handlers) needs() FanOutSupport {
	var n FanOutSupport
	for _, h := range hs {
		n.Handlers = n.Handlers || h.Name != "" || len(hs) > 1
		n.OrderingKeys = n.OrderingKeys || h.Ordered && !h.Retired
	}
	return n
}

// fanOutNeeder is a router whose needs can be checked when a Receiver or
// a Processor is built.
type fanOutNeeder interface{ needs() FanOutSupport }

// checkFanOut refuses a store that does not support what need asks for,
// naming what is missing and the handlers that need it.
func checkFanOut(who string, store any, need FanOutSupport, hs Handlers) error {
	have := FanOutOf(store)
	var names, ordered []string
	for _, h := range hs {
		names = append(names, fmt.Sprintf("%q", h.Name))
		if h.Ordered && !h.Retired {
			ordered = append(ordered, fmt.Sprintf("%q", h.Name))
		}
	}
	switch {
	case need.Handlers && !have.Handlers:
		return fmt.Errorf("webhooks: %s: the store (%T) keeps one job per event: it cannot run handlers %s; use memstore or pgstore, or one unnamed handler",
			who, store, strings.Join(names, ", "))
	case need.OrderingKeys && !have.OrderingKeys:
		return fmt.Errorf("webhooks: %s: the store (%T) does not run ordering keys: handlers %s are Ordered; use memstore or pgstore, or unordered handlers",
			who, store, strings.Join(ordered, ", "))
	}
	return nil
}

// checkFlow refuses Limits, Fair, TypePriorities or a Breaker on a store
// that cannot keep them across instances, naming the handlers that have
// them.
func checkFlow(who string, store any, hs Handlers) error {
	var limited, breakers, fair []string
	for _, h := range hs {
		if h.Fair && !h.Retired {
			fair = append(fair, fmt.Sprintf("%q", h.Name))
		}
		if !h.Limits.IsZero() && !h.Retired {
			limited = append(limited, fmt.Sprintf("%q", h.Name))
		}
		if h.Breaker.Failures > 0 && !h.Retired {
			breakers = append(breakers, fmt.Sprintf("%q", h.Name))
		}
	}
	if _, ok := store.(PauseStore); len(breakers) > 0 && !ok {
		return fmt.Errorf("webhooks: %s: the store (%T) cannot pause handlers: handlers %s have a Breaker; use memstore or pgstore, or no Breaker",
			who, store, strings.Join(breakers, ", "))
	}
	if len(limited) > 0 && !FlowOf(store).Limits {
		return fmt.Errorf("webhooks: %s: the store (%T) does not keep Limits across processors: handlers %s have them; use memstore or pgstore, or no Limits",
			who, store, strings.Join(limited, ", "))
	}
	if len(fair) > 0 && !FlowOf(store).Fair {
		return fmt.Errorf("webhooks: %s: the store (%T) does not lease by tenant in turns: handlers %s are Fair; use memstore or pgstore, or no Fair",
			who, store, strings.Join(fair, ", "))
	}
	return checkPriorities(who, store, hs)
}

// checkPriorities refuses TypePriorities above 0 on a store that does not
// keep jobs' priorities, naming the handlers that have them: the Receiver
// would store their jobs without them, and the Processor could not lease
// by them.
func checkPriorities(who string, store any, hs Handlers) error {
	var prioritized []string
	for _, h := range hs {
		if len(acquirePriorities(h.TypePriorities)) > 0 && !h.Retired {
			prioritized = append(prioritized, fmt.Sprintf("%q", h.Name))
		}
	}
	if len(prioritized) > 0 && !FlowOf(store).Priorities {
		return fmt.Errorf("webhooks: %s: the store (%T) does not keep jobs' priorities: handlers %s have TypePriorities; use memstore or pgstore, or no TypePriorities",
			who, store, strings.Join(prioritized, ", "))
	}
	return nil
}
