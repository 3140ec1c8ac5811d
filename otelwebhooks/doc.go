// Package otelwebhooks measures and traces a Receiver and a Processor with
// OpenTelemetry: an [Observer] for webhooks.WithObserver, on the
// OpenTelemetry API alone, so the host's SDK and exporters (Prometheus,
// OTLP) decide where the data goes. A host that does not import this
// package imports nothing of OpenTelemetry.
//
//	obs, err := otelwebhooks.New(otelwebhooks.WithStats(store)) // the global providers
//	…
//	receiver, err := webhooks.NewReceiver(registry, store, webhooks.WithReplayStore(store), webhooks.WithObserver(obs))
//	proc, err := webhooks.NewProcessor(store, mux, webhooks.WithObserver(obs))
//
// Without an SDK configured the global providers do nothing, and the
// Observer costs a few hundred nanoseconds and four allocations per receive
// and per attempt, the globals' delegation included; on OpenTelemetry's
// no-op providers (trace/noop, metric/noop) it starts no span, builds no
// attribute and allocates nothing. BenchmarkReceive, BenchmarkProcess and
// BenchmarkObserverCalls measure it.
//
// # Metrics
//
// Names are dotted; a Prometheus exporter writes them with underscores,
// with _total after counters and the unit after histograms and gauges
// (webhooks.received as webhooks_received_total, webhooks.handler.duration
// as webhooks_handler_duration_seconds).
//
//	webhooks.received               counter    provider, status     webhooks received, by answer (accepted, duplicate, rejected, …)
//	webhooks.verification.failures  counter    provider, reason     rejected deliveries, by reason (bad_signature, timestamp_expired, …)
//	webhooks.enqueue.duration       histogram  provider, status     seconds spent in the replay and inbox stores (ReceiveEndData.StoreTime)
//	webhooks.handler.duration       histogram  provider, event_type, outcome   seconds a dispatch took, by how the attempt ended
//	webhooks.retried                counter    provider, event_type, error_class   attempts that failed and will be retried
//	webhooks.dead_lettered          counter    provider, event_type, error_class   attempts that dead-lettered their item
//	webhooks.leases_lost            counter    provider, event_type  attempts whose lease another worker took over
//
// The attempt metrics of a named handler's jobs (see webhooks.Handlers)
// carry a handler label too; the default handler's have none, so a host
// with one handler has the series it always had. The label is bounded: the
// first webhooks.MaxHandlers names seen keep theirs (a Processor runs at
// most that many), later ones are [HandlerOther].
//
// With [WithStats], gauges read from the store's ops.Stats, fetched at most
// once per [WithStatsMaxAge] however often the metrics are collected:
//
//	webhooks.items            gauge  state                 items by state
//	webhooks.backlog          gauge                        items due now
//	webhooks.oldest_due.age   gauge                        seconds the longest-waiting due item has waited
//	webhooks.retrying         gauge                        pending items that failed before
//	webhooks.leases_held      gauge                        leases not yet expired
//	webhooks.dead_letters     gauge  provider, event_type  dead letters (and handler, for a named handler's)
//	webhooks.handler.jobs     gauge  handler, state        jobs not succeeded, by handler ("" the default); waiting: behind their ordering key's head
//	webhooks.handler.backlog  gauge  handler               jobs due now
//	webhooks.handler.oldest_due.age  gauge  handler        seconds the handler's longest-waiting due job has waited
//	webhooks.held_keys        gauge  handler               ordering keys whose failing head holds jobs back
//	webhooks.handler.paused   gauge  handler, cause, scoped  pauses in force (handler * for every handler; scoped: narrowed to a provider, tenant or types)
//	webhooks.parked           gauge                        pending items a scoped pause holds
//
// The dead-letter gauge has a series for each group Stats lists (the
// largest ops.DefaultDeadLetterGroups) and one, provider and event_type
// [EventTypeOther], for the dead letters of all the others, since senders choose
// event types; the series add up to every dead letter. The handler gauges
// have a series for each of the first webhooks.MaxHandlers handlers Stats
// lists and one, handler [HandlerOther], for the others; the held-keys
// gauge counts the keys Stats lists (the deepest ops.DefaultHeldKeys) by
// handler, and the rest under HandlerOther, so its series add up to every
// held key. A handler that no processor runs any more shows as a growing
// webhooks.handler.oldest_due.age: alert on it.
//
// Metrics carry no tenant, no event ID and no ordering key, which would
// give every tenant, event or object a series of its own; spans carry the
// tenant and the event ID, and no ordering key either (a sender's text). The event_type label is
// bounded too: a type no handler takes is recorded as [EventTypeOther],
// and so is every type after the first [WithMaxEventTypes] (200 by
// default), so a sender who chooses types (GitHub's is not signed) cannot
// grow the series without bound. Receive metrics carry no event type at
// all: a rejected, ignored or conflicting request's type is never a label. The provider of a
// request for an unknown provider is recorded as "", since anyone can make
// up such names.
//
// # Traces
//
// A span "webhooks.receive" (kind producer) covers each receive, and a
// span "webhooks.attempt" (kind consumer) each processing attempt. The
// receive's span context is stored with the item as a W3C traceparent
// (Item.TraceLink: the Observer is a webhooks.TraceLinker), and each
// attempt's span links to it, so a trace
// viewer leads from a handler's run back to the request that delivered its
// event, however long after and on whatever instance it ran. Attributes:
//
//	webhooks.provider, webhooks.tenant, webhooks.event.id, webhooks.event.type
//	webhooks.status, webhooks.reason            (receive)
//	webhooks.attempt, webhooks.outcome, webhooks.error.class  (attempt)
//	webhooks.handler                            (attempt of a named handler's job)
//
// No span or metric ever holds a payload, a header, a signature or a secret,
// nor a handler's error message, which may quote the payload (the item's
// attempt history keeps it, for operators).
package otelwebhooks
