package otelwebhooks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// ScopeName is the instrumentation scope of the Observer's tracer and meter.
const ScopeName = "github.com/hookinbox/webhooks/otelwebhooks"

// Span names.
const (
	SpanReceive = "webhooks.receive"
	SpanAttempt = "webhooks.attempt"
)

// Span attribute keys.
const (
	AttrProvider   = attribute.Key("webhooks.provider")
	AttrTenant     = attribute.Key("webhooks.tenant")
	AttrEventID    = attribute.Key("webhooks.event.id")
	AttrEventType  = attribute.Key("webhooks.event.type")
	AttrStatus     = attribute.Key("webhooks.status")
	AttrReason     = attribute.Key("webhooks.reason")
	AttrAttempt    = attribute.Key("webhooks.attempt")
	AttrOutcome    = attribute.Key("webhooks.outcome")
	AttrErrorClass = attribute.Key("webhooks.error.class")
	// AttrHandler is the attempt's handler, set for a named handler's
	// jobs only (see webhooks.Handlers).
	AttrHandler = attribute.Key("webhooks.handler")
)

// Metric attribute keys: short, as Prometheus labels read.
const (
	labelProvider   = attribute.Key("provider")
	labelStatus     = attribute.Key("status")
	labelReason     = attribute.Key("reason")
	labelEventType  = attribute.Key("event_type")
	labelOutcome    = attribute.Key("outcome")
	labelErrorClass = attribute.Key("error_class")
	labelState      = attribute.Key("state")
	labelHandler    = attribute.Key("handler")
	labelCause      = attribute.Key("cause")
	labelScoped     = attribute.Key("scoped")
)

// HandlerOther is the handler label value of the attempts, and gauges, of
// every named handler after the first webhooks.MaxHandlers seen (a
// Processor runs at most that many), and of the held keys Stats does not
// list. (A handler actually named "other" shares it.)
const HandlerOther = "other"

// Observer is a webhooks.Observer that records metrics and spans through
// the OpenTelemetry API. It is safe for concurrent use; one Observer
// serves any number of Receivers and Processors.
type Observer struct {
	tracer trace.Tracer

	received        metric.Int64Counter
	verifyFailures  metric.Int64Counter
	enqueueDuration metric.Float64Histogram
	handlerDuration metric.Float64Histogram
	retried         metric.Int64Counter
	deadLettered    metric.Int64Counter
	leasesLost      metric.Int64Counter

	stats        *statsCache
	registration metric.Registration
	types        *typeLabels
	handlers     *typeLabels

	// Span start options, made once: a variadic call with a fresh slice
	// would allocate on every receive.
	receiveOpts, attemptOpts, orphanAttemptOpts []trace.SpanStartOption
	// tracing is false for OpenTelemetry's no-op tracer provider: no span
	// is started at all. (The global provider may be replaced later, so it
	// always traces.)
	tracing bool
}

var (
	_ webhooks.Observer    = (*Observer)(nil)
	_ webhooks.TraceLinker = (*Observer)(nil)
)

type config struct {
	meterProvider  metric.MeterProvider
	tracerProvider trace.TracerProvider
	stats          ops.Store
	statsMaxAge    time.Duration
	statsTimeout   time.Duration
	maxEventTypes  int
}

// Option configures New.
type Option func(*config)

// DefaultStatsMaxAge is how long the store's stats are reused before the
// gauges of WithStats fetch them again.
const DefaultStatsMaxAge = 15 * time.Second

// DefaultStatsTimeout bounds one fetch of the store's stats.
const DefaultStatsTimeout = 5 * time.Second

// DefaultMaxEventTypes is how many event types get a metric label value
// of their own by default (see WithMaxEventTypes).
const DefaultMaxEventTypes = 200

// EventTypeOther is the event_type label value of the attempts of every
// type without one of its own: a type no handler takes, and any type seen
// after the first WithMaxEventTypes. (A type actually named "other" shares
// it.)
const EventTypeOther = "other"

// WithMaxEventTypes bounds the event types, across providers, whose
// attempts get an event_type label value of their own: the first n seen
// keep theirs, and later ones are recorded as EventTypeOther, as are the
// types no handler takes (whatever n is), so that a sender who chooses
// event types — some providers sign no type, and wildcard patterns
// ("invoice.*", "*") take any — cannot create series without bound. Raise
// it where handlers take more types than that; zero records every type as
// EventTypeOther. Defaults to DefaultMaxEventTypes.
func WithMaxEventTypes(n int) Option {
	return func(c *config) { c.maxEventTypes = n }
}

// WithMeterProvider sets where metrics go. Defaults to the global meter
// provider (otel.GetMeterProvider), a no-op until the host sets one.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.meterProvider = mp }
}

// WithTracerProvider sets where spans go. Defaults to the global tracer
// provider (otel.GetTracerProvider), a no-op until the host sets one.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tracerProvider = tp }
}

// WithStats adds gauges read from store's ops.Stats: the backlog, the age
// of the oldest due item, items by state, dead letters by provider and
// event type. The stats are fetched when metrics are collected, at most
// once per WithStatsMaxAge and within DefaultStatsTimeout; a failed fetch is reported to the OpenTelemetry
// error handler (otel.Handle) and leaves the gauges out of that collection.
// Defaults to none.
func WithStats(store ops.Store) Option {
	return func(c *config) { c.stats = store }
}

// WithStatsMaxAge sets how long fetched stats are reused, so that frequent
// or concurrent collections (several scrapers, say) cost the store one
// Stats call per period. Defaults to DefaultStatsMaxAge.
func WithStatsMaxAge(d time.Duration) Option {
	return func(c *config) { c.statsMaxAge = d }
}

// New returns an Observer.
func New(opts ...Option) (*Observer, error) {
	cfg := config{statsMaxAge: DefaultStatsMaxAge, statsTimeout: DefaultStatsTimeout, maxEventTypes: DefaultMaxEventTypes}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.meterProvider == nil {
		cfg.meterProvider = otel.GetMeterProvider()
	}
	if cfg.tracerProvider == nil {
		cfg.tracerProvider = otel.GetTracerProvider()
	}
	if cfg.statsMaxAge < 0 {
		return nil, fmt.Errorf("webhooks/otelwebhooks: WithStatsMaxAge(%v): the age must not be negative", cfg.statsMaxAge)
	}
	if cfg.maxEventTypes < 0 {
		return nil, fmt.Errorf("webhooks/otelwebhooks: WithMaxEventTypes(%d): the bound must not be negative", cfg.maxEventTypes)
	}
	_, noopTracer := cfg.tracerProvider.(tracenoop.TracerProvider)
	o := &Observer{
		tracer:      cfg.tracerProvider.Tracer(ScopeName),
		types:       newTypeLabels(cfg.maxEventTypes),
		handlers:    newTypeLabels(webhooks.MaxHandlers),
		tracing:     !noopTracer,
		receiveOpts: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindProducer)},
		attemptOpts: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer)},
		// An attempt ended without a dispatch has no context of its own:
		// it must not become a child of whatever span the Processor's
		// context holds.
		orphanAttemptOpts: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer), trace.WithNewRoot()},
	}
	m := cfg.meterProvider.Meter(ScopeName)
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	histogram := func(name, desc string, bounds ...float64) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(bounds...))
		errs = append(errs, err)
		return h
	}
	o.received = counter("webhooks.received", "{webhook}", "Webhooks received, by provider and the status they were answered with.")
	o.verifyFailures = counter("webhooks.verification.failures", "{webhook}", "Deliveries whose verification failed, by provider and reason.")
	o.enqueueDuration = histogram("webhooks.enqueue.duration", "Time a receive spent in the replay and inbox stores.",
		0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)
	o.handlerDuration = histogram("webhooks.handler.duration", "Time a processing attempt's dispatch took, by provider, event type and outcome.",
		0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
	o.retried = counter("webhooks.retried", "{attempt}", "Attempts that failed and are retried, by provider, event type and error class.")
	o.deadLettered = counter("webhooks.dead_lettered", "{attempt}", "Attempts that dead-lettered their item, by provider, event type and error class.")
	o.leasesLost = counter("webhooks.leases_lost", "{attempt}", "Attempts whose lease another worker took over while the handler ran.")
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("webhooks/otelwebhooks: creating instruments: %w", err)
	}
	if cfg.stats != nil {
		o.stats = &statsCache{store: cfg.stats, maxAge: cfg.statsMaxAge, timeout: cfg.statsTimeout}
		reg, err := o.stats.register(m)
		if err != nil {
			return nil, fmt.Errorf("webhooks/otelwebhooks: creating the stats gauges: %w", err)
		}
		o.registration = reg
	}
	return o, nil
}

// Close stops the stats gauges of WithStats being collected. The Observer
// still records everything else.
func (o *Observer) Close() error {
	if o.registration == nil {
		return nil
	}
	return o.registration.Unregister()
}

// receiveContext carries the route's provider and the receive's span from
// StartReceive to EndReceive, which needs the provider even for a request
// that never verified. It is a context of its own rather than
// context.WithValue's, to allocate once.
type receiveContext struct {
	context.Context
	provider string
	span     trace.Span // nil when not tracing
}

type receiveKey struct{}

func (c *receiveContext) Value(key any) any {
	if key == (receiveKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// StartReceive starts the receive's span.
func (o *Observer) StartReceive(ctx context.Context, data webhooks.ReceiveStartData) context.Context {
	if !o.tracing && !o.received.Enabled(ctx) && !o.enqueueDuration.Enabled(ctx) && !o.verifyFailures.Enabled(ctx) {
		return ctx // nothing records: nothing to carry
	}
	rc := &receiveContext{provider: data.Route.Provider}
	if o.tracing {
		ctx, rc.span = o.tracer.Start(ctx, SpanReceive, o.receiveOpts...)
		if rc.span.IsRecording() {
			rc.span.SetAttributes(AttrProvider.String(data.Route.Provider), AttrTenant.String(data.Route.Tenant))
		}
	}
	rc.Context = ctx
	return rc
}

// TraceLink returns the receive's span context as a W3C traceparent, to
// be stored with the item, or "" when no span was started.
func (o *Observer) TraceLink(ctx context.Context) string {
	rc, ok := ctx.Value(receiveKey{}).(*receiveContext)
	if !ok || rc.span == nil {
		return ""
	}
	return traceparent(rc.span.SpanContext())
}

// EndReceive counts the receive and ends its span.
func (o *Observer) EndReceive(ctx context.Context, data webhooks.ReceiveEndData) {
	res, err := &data.Result, data.Err
	rc, ok := ctx.Value(receiveKey{}).(*receiveContext)
	if !ok {
		return // StartReceive found nothing recording
	}
	provider := rc.provider
	if res.Status == webhooks.StatusUnknownProvider {
		provider = "" // anyone can make up unknown providers' names: not a label
	}
	status := res.Status.String()
	// Attributes are built only for instruments that record: with no
	// meter provider (or a view dropping them) they cost nothing here.
	received, enqueue := o.received.Enabled(ctx), data.StoreTime > 0 && o.enqueueDuration.Enabled(ctx)
	if received || enqueue {
		attrs := metric.WithAttributes(labelProvider.String(provider), labelStatus.String(status))
		if received {
			o.received.Add(ctx, 1, attrs)
		}
		if enqueue {
			o.enqueueDuration.Record(ctx, data.StoreTime.Seconds(), attrs)
		}
	}
	if res.Status == webhooks.StatusRejected && o.verifyFailures.Enabled(ctx) {
		o.verifyFailures.Add(ctx, 1, metric.WithAttributes(labelProvider.String(provider), labelReason.String(string(res.Reason))))
	}

	span := rc.span
	if span == nil {
		return
	}
	if span.IsRecording() {
		span.SetAttributes(AttrStatus.String(status))
		if res.Reason != "" {
			span.SetAttributes(AttrReason.String(string(res.Reason)))
		}
		if res.Key.EventID != "" {
			span.SetAttributes(AttrEventID.String(res.Key.EventID), AttrEventType.String(res.EventType))
		}
		switch res.Status {
		case webhooks.StatusUnavailable, webhooks.StatusInternalError:
			// Receive's errors hold no secret and no payload.
			msg := status
			if err != nil {
				msg = err.Error()
			}
			span.SetStatus(codes.Error, msg)
		}
	}
	span.End()
}

// attemptContext carries an attempt's span and start from StartAttempt to
// EndAttempt, as receiveContext does for a receive.
type attemptContext struct {
	context.Context
	span  trace.Span // nil when not tracing
	start time.Time
}

type attemptKey struct{}

func (c *attemptContext) Value(key any) any {
	if key == (attemptKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// StartAttempt starts the attempt's span, linked to its receive's.
func (o *Observer) StartAttempt(ctx context.Context, data webhooks.AttemptStartData) context.Context {
	if !o.tracing && !o.handlerDuration.Enabled(ctx) {
		return ctx
	}
	ac := &attemptContext{start: time.Now()}
	if o.tracing {
		ctx, ac.span = o.startAttemptSpan(ctx, &data.Event, o.attemptOpts)
	}
	ac.Context = ctx
	return ac
}

func (o *Observer) startAttemptSpan(ctx context.Context, ev *webhooks.Event, opts []trace.SpanStartOption) (context.Context, trace.Span) {
	ctx, span := o.tracer.Start(ctx, SpanAttempt, opts...)
	if span.IsRecording() {
		// The link is added once the span records, so a no-op tracer costs
		// no parsing and no allocation for it (samplers do not see it).
		if sc, ok := parseTraceparent(ev.TraceLink); ok {
			span.AddLink(trace.Link{SpanContext: sc})
		}
		span.SetAttributes(
			AttrProvider.String(ev.Provider),
			AttrTenant.String(ev.Tenant),
			AttrEventID.String(ev.ID),
			AttrEventType.String(ev.Type),
			AttrAttempt.Int(ev.Attempt),
		)
		if ev.Handler != "" {
			span.SetAttributes(AttrHandler.String(ev.Handler))
		}
	}
	return ctx, span
}

// EndAttempt records the attempt's outcome and ends its span. An attempt
// the Processor settles without dispatching it (an item whose earlier
// attempts crashed and whose retries are spent) gets a span of its own
// here, without a handler duration. A lost lease is recorded with the
// outcome the attempt history gives it, ops.OutcomeLeaseLost.
func (o *Observer) EndAttempt(ctx context.Context, data webhooks.AttemptEndData) {
	ev, s := &data.Event, &data.Settlement
	outcome := string(s.Outcome)
	if data.LeaseLost {
		outcome = string(ops.OutcomeLeaseLost)
	}
	var span trace.Span
	if ac, ok := ctx.Value(attemptKey{}).(*attemptContext); ok {
		span = ac.span
		if o.handlerDuration.Enabled(ctx) {
			if ev.Handler == "" {
				o.handlerDuration.Record(ctx, time.Since(ac.start).Seconds(), metric.WithAttributes(
					labelProvider.String(ev.Provider), labelEventType.String(o.types.label(ev, s)), labelOutcome.String(outcome)))
			} else {
				o.handlerDuration.Record(ctx, time.Since(ac.start).Seconds(), metric.WithAttributes(
					labelProvider.String(ev.Provider), labelEventType.String(o.types.label(ev, s)), labelOutcome.String(outcome), o.handlerLabel(ev)))
			}
		}
	} else if o.tracing {
		_, span = o.startAttemptSpan(ctx, ev, o.orphanAttemptOpts)
	}
	var counter metric.Int64Counter
	switch {
	case data.LeaseLost:
		if o.leasesLost.Enabled(ctx) {
			if ev.Handler == "" {
				o.leasesLost.Add(ctx, 1, metric.WithAttributes(labelProvider.String(ev.Provider), labelEventType.String(o.types.label(ev, s))))
			} else {
				o.leasesLost.Add(ctx, 1, metric.WithAttributes(labelProvider.String(ev.Provider), labelEventType.String(o.types.label(ev, s)), o.handlerLabel(ev)))
			}
		}
	case s.Outcome == webhooks.AttemptRetried:
		counter = o.retried
	case s.Outcome == webhooks.AttemptDeadLettered:
		counter = o.deadLettered
	}
	if counter != nil && counter.Enabled(ctx) {
		if ev.Handler == "" {
			counter.Add(ctx, 1, metric.WithAttributes(labelProvider.String(ev.Provider), labelEventType.String(o.types.label(ev, s)), labelErrorClass.String(string(s.Failure.Class))))
		} else {
			counter.Add(ctx, 1, metric.WithAttributes(labelProvider.String(ev.Provider), labelEventType.String(o.types.label(ev, s)), labelErrorClass.String(string(s.Failure.Class)), o.handlerLabel(ev)))
		}
	}
	if span == nil {
		return
	}
	if span.IsRecording() {
		span.SetAttributes(AttrOutcome.String(outcome))
		if s.Failure.Class != "" {
			span.SetAttributes(AttrErrorClass.String(string(s.Failure.Class)))
		}
		switch {
		case data.LeaseLost:
			span.SetStatus(codes.Error, outcome)
		case s.Outcome == webhooks.AttemptRetried, s.Outcome == webhooks.AttemptDeadLettered:
			// The class, not the handler's message: it may quote the
			// payload.
			span.SetStatus(codes.Error, outcome+": "+string(s.Failure.Class))
		}
	}
	span.End()
}

// handlerLabel is the handler label of a named handler's attempt: its
// name, for the first webhooks.MaxHandlers names seen, HandlerOther
// after. (The default handler's attempts have no handler label, so a host
// with one handler has the series it always had.)
func (o *Observer) handlerLabel(ev *webhooks.Event) attribute.KeyValue {
	return labelHandler.String(o.handlers.value("", ev.Handler, HandlerOther))
}

// typeLabels gives event types their metric label values: a type of its
// own for the first max (provider, type) pairs seen, EventTypeOther for
// the rest and for types no handler takes.
type typeLabels struct {
	max  int
	mu   sync.RWMutex
	seen map[typeKey]struct{}
}

type typeKey struct{ provider, eventType string }

func newTypeLabels(max int) *typeLabels {
	return &typeLabels{max: max, seen: make(map[typeKey]struct{}, min(max, 64))}
}

// label returns the event_type label value of the attempt of ev that
// ended with s.
func (l *typeLabels) label(ev *webhooks.Event, s *webhooks.Settlement) string {
	if s.Failure.Class == webhooks.FailureNoHandler {
		return EventTypeOther
	}
	return l.value(ev.Provider, ev.Type, EventTypeOther)
}

// value returns v as a label value if (scope, v) is among the first max
// pairs seen, other if not.
func (l *typeLabels) value(scope, v, other string) string {
	k := typeKey{scope, v}
	l.mu.RLock()
	_, ok := l.seen[k]
	full := len(l.seen) >= l.max
	l.mu.RUnlock()
	switch {
	case ok:
		return v
	case full:
		return other
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.seen[k]; !ok {
		if len(l.seen) >= l.max {
			return other
		}
		l.seen[k] = struct{}{}
	}
	return v
}
