// Package webhooks receives inbound webhooks reliably: it verifies
// signatures on the raw bytes, blocks replays, writes every accepted webhook
// idempotently into a durable inbox, and hands events to the host's code
// through leases, with exponential-backoff retries, dead letters and replay.
//
// Its names serve three audiences, each with a section below: hosts, who
// wire a receiver and a processor and write only their business handlers;
// store authors, who keep the inbox in a database of their own; and
// verifier authors, who add a provider or a signature scheme that package
// providers lacks. A host needs the first section only.
//
// # For hosts
//
// A host wires five things.
//
// Verifiers. A [Verifier] checks that a request really comes from its
// provider and returns the event's ID and type. Package providers has one
// for each provider by name (Stripe, GitHub, Slack, …); [NewHMACVerifier]
// builds an [HMACVerifier] for an HMAC scheme of the host's own from
// [HMACOptions]. Secrets come from a [CredentialResolver]: [StaticSecrets]
// for one set, [TenantSecrets] for secrets per tenant (both
// [StaticCredentials], checked when the verifier is built), a
// [CredentialResolverFunc] for the host's own secret store; each [Secret]
// has an ID that items record, and several may be live at once for
// rotation.
//
// A registry. A [Registry] ([NewRegistry]) holds one verifier per provider
// key, the path segment the Receiver routes by, and refuses a key twice
// ([ErrDuplicateProvider]). It is the usual [Resolver]; a host with
// providers that come and go may write its own.
//
//	registry := webhooks.NewRegistry()
//	registry.MustRegister("stripe", stripeVerifier)
//
// Stores. An inbox store, and a replay store for the verifiers that need
// one: package memstore keeps both in memory (development and tests),
// package pgstore in PostgreSQL.
//
// A receiver. [NewReceiver] returns a [Receiver], an http.Handler serving
// POST {prefix}{provider}[/{tenant}] that verifies, deduplicates and stores
// each webhook, answering 2xx only once the store made it durable. Its
// [ReceiverOption]s bound what it holds and how long it waits, each
// stating its default (the ones hosts build their own configuration on
// are Default… constants, such as [DefaultMaxBodyBytes]); a
// [SharedOption] ([WithClock], [WithLogger], [WithObserver]) configures a
// Receiver and a Processor alike. A tenant segment is served only where
// the provider's secrets are per tenant ([TenantScoped], [WithTenants]):
// the sender chooses the path, and other tenant paths are refused
// ([ErrTenantNotServed]). Given the [LocalProcessor] of the same process
// ([WithProcessor]), it wakes it after each new item and stores only the
// event types it handles; [WithHandledTypes] takes any [HandledTypes] for a
// processor elsewhere.
//
//	receiver, err := webhooks.NewReceiver(registry, store, webhooks.WithReplayStore(store), webhooks.WithProcessor(processor))
//	mux.Handle("/webhooks/", receiver)
//
// [ReceiveStatus] lists the answers. [Receiver.Receive] is the same
// pipeline without HTTP, for deliveries that come another way: it takes a
// [Route] and a [Request] and returns a [ReceiveResult], with an error
// that says why a delivery was refused: [ErrUnknownProvider],
// [ErrPayloadConflict] (an event ID reused with another payload),
// [ErrTypeConflict], or a [VerificationError] whose [Reason] is the code
// the provider is answered with.
//
// A [ReplayStore] ([WithReplayStore]) is needed only by the verifiers that
// say so ([NeedsReplayStore]): those with replay keys of their own, and
// those whose signature leaves the event type out; NewReceiver names them
// when it is missing.
//
// A processor. [NewProcessor] returns a [Processor] that leases due items
// and hands each to a [Dispatcher], usually a [Mux] ([NewMux]) routing by
// event type (a pattern registered twice is [ErrDuplicatePattern]), or a
// [DispatcherFunc]. The dispatcher gets an [Event] and returns nil when
// done, an error to retry with backoff, [Permanent] to dead-letter at once
// or [RetryAfter] to ask for a wait (tests find them as [PermanentError]
// and [RetryAfterError]); an event no pattern takes is acknowledged
// ([ErrNoHandler]). A [RetryPolicy] ([ExponentialPolicy] by default, or a
// [RetryPolicyFunc]) decides from a [FailedAttempt], whose [Failure] has a
// [FailureClass], the [RetryDecision]. Its [ProcessorOption]s set workers,
// leases and timeouts; a [WakeSource] (pgstore's listener) wakes it when
// work arrives elsewhere; Run stops on a store that needs the host to act
// first ([ErrStoreNotReady]).
//
//	mux := webhooks.NewMux()
//	mux.MustHandleFunc("invoice.paid", handleInvoicePaid)
//	processor, err := webhooks.NewProcessor(store, mux)
//	go processor.Run(ctx)
//
// Several handlers, and order. [Handlers] run several named [Handler]s
// on one Processor: each event is stored once, with a job per handler
// that takes its type ([Job], named by a [JobKey]; [CheckHandlerName]
// says what a name may be), and each job has its own attempts, retries,
// dead letter and replay, so a failing handler never runs another again.
// A Receiver given the Processor asks it, as a [JobRouter], for the jobs
// of each event. An Ordered handler runs the jobs of one [Ordering] key
// (one Stripe customer, one GitHub pull request) one at a time, in the
// provider's order; the catalog derives the keys from signed content, a
// verifier of the host's own reads them where its [EventSource] has an
// [OrderSource], and [WithOrdering] takes an [OrderingFunc] of the host's
// own. A handler that
// finds an event older than what it applied returns [Skip]
// ([ErrSkipped]). Both need a store that supports them ([FanOutStore]);
// NewProcessor and NewReceiver refuse one that does not. A handler's
// [Limits] cap how many of its jobs run at once and how many start per
// second over every processor sharing the store (up to [MaxLimitCount]
// and [MaxLimitRate]), so a slow or rate-limited downstream takes only
// its share of the workers; they need a [FlowStore]. A Fair handler's
// jobs are leased by tenant in turns, so one tenant's backlog delays
// another's new event by one acquisition, not by the backlog. A handler's
// TypePriorities lease its due jobs of some event types before the others
// (up to [MaxTypePriority], at most [MaxTypePriorities] distinct ones),
// over every processor: each job keeps the priority it was stored with
// ([Job.Priority]). A handler's
// [Breaker] pauses it over every processor when its dependency seems
// down, so its jobs wait instead of spending their retries; an operator
// pauses and resumes a handler too, whole or only its jobs of a provider,
// a tenant or event types (a [PauseScope]), and every handler at once
// ([EveryHandler]). A [Pause] ([PauseCause]) is kept by a [PauseStore],
// which [PauseRequest] and [ResumeRequest] ask ([ErrPaused],
// [ErrNotPaused]).
//
//	processor, err := webhooks.NewProcessor(store, webhooks.Handlers{
//		{Name: "ledger", Dispatcher: ledgerMux, Ordered: true},
//		{Name: "audit", Dispatcher: auditMux, Limits: webhooks.Limits{MaxRunning: 4, Rate: 20}},
//	})
//
// Verification on its own. [VerifyHTTPRequest] and [VerifyMiddleware]
// verify without the inbox, for hosts that handle requests synchronously;
// the handler after the middleware finds the [Verification] with
// [VerificationFromContext].
//
// Seeing and steering the inbox. Items are named by their [InboxKey] and
// are in a [State]. Every attempt is kept in the item's history
// ([WithWorkerIdentity] names the worker and the code version that ran
// it). Package ops is the operators' API over a store (an item with its
// attempts, audit and quarantined conflicting deliveries, lists, audited
// replay and closing, stats); package admin serves it as a JSON API and a
// page, command hookinbox (cmd/hookinbox) from a shell. An [Observer]
// ([WithObserver]) is told each receive ([ReceiveStartData],
// [ReceiveEndData]) and each attempt ([AttemptStartData],
// [AttemptEndData]); one that is a [TraceLinker] links each item to its
// receive. Package otelwebhooks is one, for OpenTelemetry.
//
// Time. Every time comes from a [Clock] ([WithClock]); [SystemClock] is the
// default, and a test's settable clock (webhookstest.Clock) drives time
// without sleeping.
//
// # For store authors
//
// An [InboxStore] keeps each webhook as an item with its processing state:
// it is an [Enqueuer], which the Receiver uses, and a [LeaseStore], which
// the Processor uses. Enqueue stores an [Envelope] idempotently by its
// [InboxKey] and answers an [EnqueueResult] ([EnqueueOutcome]). Acquire
// answers an [AcquireRequest] with [Lease]s on [Item]s (an item is in a
// [State], with its last failure as an [ErrorRecord]); Settle takes a
// [Settlement] with an [AttemptOutcome], and ExtendLease an
// [ExtendRequest]; a settlement or an extension under a token that is no
// longer current changes nothing and says [ErrLeaseLost], one whose lease
// already settled the item [ErrAlreadySettled]. A store that cannot serve
// until its host acts wraps [ErrStoreNotReady]. Optional capabilities are
// found by type assertion: a [BatchSettler] settles many leases in one
// round trip, a [LeaseStarter] holds leases until their attempts start
// ([StartRequest]), an [AcquisitionRepeater] answers again an acquisition
// whose reply was lost ([RepeatRequest]). A [ReplayStore] registers the replay keys verifiers
// give ([ReplayRegistration], [ReplayOutcome]). [Lease.Event] is the event
// a Processor hands over for a lease. A [FanOutStore] keeps a job per
// handler and may run ordering keys, as its [FanOutSupport] says
// ([FanOutOf] asks); [Envelope.CheckJobs] and [CheckOrdering] validate
// what it is given, and [EnvelopeJobs] lists an envelope's jobs with the
// default handler's for nil. A [FlowStore] keeps [AcquireRequest.Limits]
// over every caller, and leases by tenant in turns for
// [AcquireRequest.Fair] (visiting up to [AcquireRequest.FairVisits]
// tenants) and by priority for [AcquireRequest.Priorities], as its
// [FlowSupport] says ([FlowOf] asks); a
// [PauseStore] leases nothing of a paused handler but a breaker's probe
// ([Lease.Probe]), and parks the jobs a scoped pause holds
// ([PauseScope.Holds]). Every
// method takes its time from its
// request, so a store never reads a clock of its own. Package storetest is
// the conformance suite every store runs; memstore and pgstore pass it.
//
// # For verifier authors
//
// A [Verifier] ([VerifierFunc]) is given the [Route] and the [Request],
// with its raw body, and returns a [Verification]: the event's ID and type,
// which of them the signature does not cover ([UnsignedFields]), and a
// [Response] to a provider's challenge or for its expected answer. It
// rejects with [Reject], a [VerificationError] whose [Reason] is the code
// the sender sees, never a secret; [HookError] passes on what a host's
// hook returned. Optional capabilities, found by type assertion: a
// [SecretHeaderVerifier] names the headers the Receiver must never store,
// a [GETVerifier] answers GET challenges, a [GETDeliverer] is handed the
// GET deliveries of a provider that signs them (Twilio), a verifier whose secrets are
// per tenant is [TenantScoped] ([PerTenant] asks), and one that needs the
// Receiver's replay store is [ReplayGuarded] ([NeedsReplayStore] asks).
//
// A signature scheme describes its requests with a [SignedRequest]: the
// signature header and its [SignatureEncoding] (at most [MaxSignatures] of
// a list are checked), the signed content, a [TimestampSource] (with its
// [TimestampFormat] and window, [DefaultTolerance] by default), an
// [EventSource] for the event ID and type (which reads what the
// [SignedParts] cover as signed), [HeaderFallbacks] for a second set of
// header names, and a [HandshakeFunc] for signed challenges. HMAC schemes
// are [HMACOptions] ([NewHMACVerifier], [HMACVerifier]); any other
// algorithm plugs into the same pipeline as a [SignatureAlgorithm] in
// [SignatureOptions] ([NewSignatureVerifier], [SignatureVerifier]).
// [CheckCredentials] reports unusable static credentials when a verifier
// is built, [SingleHeader] reads a header that must be sent once, and a
// verifier's default [Clock] is [SystemClock].
//
// # Guarantees
//
// Nothing is acknowledged with a 2xx answer unless the store has made it
// durable; every accepted event is handled at least once; no two workers
// hold a valid lease on one item at the same time, and a settlement under a
// lease that is no longer current changes nothing ([ErrLeaseLost]); a
// handler stopped by shutdown does not spend an attempt. Secrets never
// appear in logs, errors or answers, and signatures are compared in
// constant time. Every time comes from a [Clock], so tests drive time
// without sleeping.
package webhooks
