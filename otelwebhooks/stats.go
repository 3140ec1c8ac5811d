package otelwebhooks

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// otherGroups labels the dead letters of the groups Stats does not list
// (ops.Stats.MoreDeadLetters): one series for all of them, under the
// value every bounded label of this package uses.
const otherGroups = EventTypeOther

// statsCache fetches a store's stats for the gauges, at most once per
// maxAge: collections in between, however many, reuse the last answer (or
// the last failure).
type statsCache struct {
	store   ops.Store
	maxAge  time.Duration
	timeout time.Duration

	mu        sync.Mutex
	fetchedAt time.Time // zero before the first fetch
	stats     ops.Stats
	err       error
}

// get returns the stats, fetching them when the last fetch is older than
// maxAge. Concurrent callers wait for one fetch.
func (c *statsCache) get(ctx context.Context) (ops.Stats, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.fetchedAt.IsZero() && time.Since(c.fetchedAt) < c.maxAge {
		return c.stats, c.err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	c.stats, c.err = c.store.Stats(ctx, ops.StatsRequest{Now: time.Now()})
	c.fetchedAt = time.Now()
	return c.stats, c.err
}

// register creates the gauges and their callback.
func (c *statsCache) register(m metric.Meter) (metric.Registration, error) {
	items, err1 := m.Int64ObservableGauge("webhooks.items", metric.WithUnit("{item}"), metric.WithDescription("Items in the inbox, by state (the succeeded count may be an estimate)."))
	backlog, err2 := m.Int64ObservableGauge("webhooks.backlog", metric.WithUnit("{item}"), metric.WithDescription("Items due for processing now."))
	oldest, err3 := m.Float64ObservableGauge("webhooks.oldest_due.age", metric.WithUnit("s"), metric.WithDescription("How long the longest-waiting due item has waited; 0 when none is due."))
	retrying, err4 := m.Int64ObservableGauge("webhooks.retrying", metric.WithUnit("{item}"), metric.WithDescription("Pending items that failed before."))
	leases, err5 := m.Int64ObservableGauge("webhooks.leases_held", metric.WithUnit("{lease}"), metric.WithDescription("Leases not yet expired."))
	dead, err6 := m.Int64ObservableGauge("webhooks.dead_letters", metric.WithUnit("{item}"), metric.WithDescription("Dead letters, by provider and event type: the largest groups, and the rest as provider and event_type other."))
	jobs, err7 := m.Int64ObservableGauge("webhooks.handler.jobs", metric.WithUnit("{job}"), metric.WithDescription("Handlers' jobs that have not succeeded, by handler and state (waiting: queued behind their ordering key's head)."))
	hbacklog, err8 := m.Int64ObservableGauge("webhooks.handler.backlog", metric.WithUnit("{job}"), metric.WithDescription("Handlers' jobs due now, by handler."))
	holdest, err9 := m.Float64ObservableGauge("webhooks.handler.oldest_due.age", metric.WithUnit("s"), metric.WithDescription("How long each handler's longest-waiting due job has waited; 0 when none is due."))
	held, err10 := m.Int64ObservableGauge("webhooks.held_keys", metric.WithUnit("{key}"), metric.WithDescription("Ordering keys whose failing head holds jobs back, by handler: the keys Stats lists, and the rest as handler other."))
	paused, err11 := m.Int64ObservableGauge("webhooks.handler.paused", metric.WithUnit("{pause}"), metric.WithDescription("Pauses in force, by handler (* for every handler), cause (operator, breaker) and whether a scope narrows them: the jobs they hold are stored and wait."))
	parked, err12 := m.Int64ObservableGauge("webhooks.parked", metric.WithUnit("{item}"), metric.WithDescription("Pending items a scoped pause holds: not due while it holds."))
	if err := errors.Join(err1, err2, err3, err4, err5, err6, err7, err8, err9, err10, err11, err12); err != nil {
		return nil, err
	}
	return m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		st, err := c.get(ctx)
		if err != nil {
			otel.Handle(err)
			return nil // observe nothing rather than stale or zero values
		}
		for state, n := range st.States {
			o.ObserveInt64(items, n, metric.WithAttributes(labelState.String(string(state))))
		}
		o.ObserveInt64(backlog, st.Due)
		age := 0.0
		if !st.OldestDue.IsZero() {
			// From the due time, not the fetch: the age grows between
			// fetches as it does in the store.
			age = max(0, time.Since(st.OldestDue).Seconds())
		}
		o.ObserveFloat64(oldest, age)
		o.ObserveInt64(retrying, st.Retrying)
		o.ObserveInt64(leases, st.LeasesHeld)
		o.ObserveInt64(parked, st.Parked)
		for _, g := range st.DeadLetters {
			if g.Handler == "" {
				o.ObserveInt64(dead, g.N, metric.WithAttributes(labelProvider.String(g.Provider), labelEventType.String(g.EventType)))
			} else {
				o.ObserveInt64(dead, g.N, metric.WithAttributes(labelProvider.String(g.Provider), labelEventType.String(g.EventType), labelHandler.String(g.Handler)))
			}
		}
		c.observeHandlers(o, &st, jobs, hbacklog, holdest, held)
		observePaused(o, &st, paused)
		if st.MoreDeadLetters.Groups > 0 {
			o.ObserveInt64(dead, st.MoreDeadLetters.N, metric.WithAttributes(labelProvider.String(otherGroups), labelEventType.String(otherGroups)))
		}
		return nil
	}, items, backlog, oldest, retrying, leases, dead, jobs, hbacklog, holdest, held, paused, parked)
}

// observePaused counts the pauses in force by handler, cause and whether
// a scope narrows them (the scope itself, a provider's tenant, is not a
// label): the handlers of the first webhooks.MaxHandlers pauses Stats
// lists have series of their own, the others are counted under
// HandlerOther (an operator may pause any name).
func observePaused(o metric.Observer, st *ops.Stats, paused metric.Int64ObservableGauge) {
	type series struct {
		handler, cause string
		scoped         bool
	}
	n := map[series]int64{}
	var order []series
	for i, p := range st.Paused {
		k := series{p.Handler, string(p.Cause), !p.Scope.IsZero()}
		if i >= webhooks.MaxHandlers {
			k.handler = HandlerOther
		}
		if n[k] == 0 {
			order = append(order, k)
		}
		n[k]++
	}
	for _, k := range order {
		o.ObserveInt64(paused, n[k], metric.WithAttributes(labelHandler.String(k.handler), labelCause.String(k.cause), labelScoped.Bool(k.scoped)))
	}
}

// observeHandlers observes the handlers' gauges: the first
// webhooks.MaxHandlers handlers Stats lists (the default handler's label
// is "") have series of their own, the others are summed as HandlerOther
// (the store lists every handler with a job, names an operator may add by
// replaying to a new handler). Held keys
// are counted by handler over those Stats lists, and the rest
// (MoreHeldKeys) as HandlerOther; the ordering key itself is never a
// label.
func (c *statsCache) observeHandlers(o metric.Observer, st *ops.Stats, jobs, backlog metric.Int64ObservableGauge, oldest metric.Float64ObservableGauge, held metric.Int64ObservableGauge) {
	type counts struct {
		states map[webhooks.State]int64
		due    int64
		oldest time.Time
		held   int64
	}
	byLabel := map[string]*counts{}
	var order []string
	named := 0
	get := func(handler string) *counts {
		label := handler
		if _, ok := byLabel[label]; !ok && named >= webhooks.MaxHandlers {
			label = HandlerOther
		}
		h := byLabel[label]
		if h == nil {
			h = &counts{states: map[webhooks.State]int64{}}
			byLabel[label] = h
			order = append(order, label)
			named++
		}
		return h
	}
	for _, hs := range st.Handlers {
		h := get(hs.Handler)
		for s, n := range hs.States {
			h.states[s] += n
		}
		h.due += hs.Due
		if !hs.OldestDue.IsZero() && (h.oldest.IsZero() || hs.OldestDue.Before(h.oldest)) {
			h.oldest = hs.OldestDue
		}
	}
	for _, k := range st.HeldKeys {
		get(k.Handler).held++
	}
	if st.MoreHeldKeys > 0 {
		get(HandlerOther).held += st.MoreHeldKeys
	}
	for _, label := range order {
		h, attr := byLabel[label], metric.WithAttributes(labelHandler.String(label))
		for s, n := range h.states {
			o.ObserveInt64(jobs, n, metric.WithAttributes(labelHandler.String(label), labelState.String(string(s))))
		}
		o.ObserveInt64(backlog, h.due, attr)
		age := 0.0
		if !h.oldest.IsZero() {
			age = max(0, time.Since(h.oldest).Seconds())
		}
		o.ObserveFloat64(oldest, age, attr)
		o.ObserveInt64(held, h.held, attr)
	}
}
