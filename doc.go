// Package webhooks receives inbound webhooks reliably: it verifies
// signatures on the raw bytes, blocks replays, writes every accepted webhook
// idempotently into a durable inbox, and hands events to the host's code
// through leases, with exponential-backoff retries, dead letters and replay.
//
// A host wires five things, and writes only its business handlers.
//
// # 1. Verifiers
//
// A [Verifier] checks that a request really comes from its provider and
// returns the event's ID and type. A [SignedRequest] describes where a
// provider's request carries its signature, timestamp, event ID and type;
// [NewHMACVerifier] verifies HMAC signatures of one ([HMACOptions]), and a
// verifier author plugs another algorithm into the same pipeline with
// [NewSignatureVerifier] ([SignatureAlgorithm]). Package providers has a
// verifier for each provider by name (Stripe, GitHub, Slack, …). Secrets come from a
// [CredentialResolver]: [StaticSecrets] for one set, [TenantSecrets] for
// secrets per tenant; several may be live at once for rotation.
//
// # 2. A registry
//
// A [Registry] holds one verifier per provider key, the path segment the
// gateway routes by. It is the usual [Resolver]:
//
//	registry := webhooks.NewRegistry()
//	registry.MustRegister("stripe", stripeVerifier)
//
// # 3. Stores
//
// An [InboxStore] keeps each webhook as an item with its processing state;
// a [ReplayStore] remembers replay keys, for the verifiers that need it
// ([WithReplayStore]). Package memstore keeps both in memory (development
// and tests), package pgstore in PostgreSQL. Package storetest is the
// conformance suite every store passes: the pipeline's cases, and those of
// each optional capability a store has (package ops, [BatchSettler],
// [LeaseStarter], [AcquisitionRepeater]).
//
// # 4. A gateway
//
// A [Receiver] is the [Gateway]: an http.Handler serving
// POST {prefix}{provider}[/{tenant}] that verifies, deduplicates and stores
// each webhook, answering 2xx only once the store made it durable. A tenant
// segment is served only where the provider's secrets are per tenant
// ([TenantScoped], [WithTenants]): the sender chooses the path.
//
//	receiver, err := webhooks.NewReceiver(registry, store, webhooks.WithReplayStore(store), webhooks.WithProcessor(processor))
//	mux.Handle("/webhooks/", receiver)
//
// The ReplayStore ([WithReplayStore]) is needed by the verifiers that say
// so ([NeedsReplayStore]): those with replay keys of their own, and those
// whose signature leaves the event type out; NewReceiver names them when
// it is missing.
//
// See [ReceiveStatus] for the answers, and [WithPathPrefix] for mounting it
// under a router.
//
// # 5. A processor
//
// A [Processor] leases due items from the store and hands each to a
// [Dispatcher], usually a [Mux] routing by event type. A dispatcher returns
// nil when done, an error to retry with backoff, [Permanent] to
// dead-letter at once, or [RetryAfter] to ask for a wait; the
// [RetryPolicy] ([ExponentialPolicy] by default) decides:
//
//	mux := webhooks.NewMux()
//	mux.MustHandleFunc("invoice.paid", handleInvoicePaid)
//	processor, err := webhooks.NewProcessor(store, mux)
//	go processor.Run(ctx)
//
// # Verification on its own
//
// [VerifyHTTPRequest] and [VerifyMiddleware] verify without the inbox, for
// hosts that handle requests synchronously.
//
// # Seeing and steering the inbox
//
// Every attempt is kept in the item's history ([WithWorkerIdentity] names
// the worker and the code version that ran it). Package ops is the
// operators' API over a store: an item with its attempts, audit and
// quarantined conflicting deliveries, lists by query, audited replay (one
// item or in bulk, with a dry run and a spread), closing a dead letter on
// purpose, and stats. Package admin serves it as a JSON API and a
// read-only page, command hookinbox (cmd/hookinbox) from a shell, and
// package otelwebhooks turns an [Observer] ([WithObserver]) into
// OpenTelemetry metrics and traces.
//
// # Guarantees
//
// Nothing is acknowledged with a 2xx answer unless the store has made it
// durable; every accepted event is handled at least once; no two workers
// hold a valid lease on one item at the same time, and a settlement under a
// lease that is no longer current changes nothing ([ErrLeaseLost]); a
// handler stopped by shutdown does not spend an attempt. Secrets never
// appear in logs, errors or answers, and signatures are compared in
// constant time. Every time comes from a [Clock] ([WithClock]), so tests
// drive time without sleeping.
package webhooks
