// Package pgstore is the PostgreSQL store of the webhooks package, on pgx
// v5 ([pgxpool.Pool]): an inbox ([webhooks.InboxStore], with every
// optional capability the Processor looks for: [webhooks.BatchSettler],
// [webhooks.LeaseStarter], [webhooks.AcquisitionRepeater]), the operators'
// store ([ops.Store]) and a [webhooks.ReplayStore]. Any number of Receiver
// and Processor instances share one database, and every guarantee of the
// webhooks package holds across them, because each is enforced by a single
// SQL statement on a row. It needs PostgreSQL 13 or later, and is tested on
// 15.
//
// This documentation is the store's contract. How to run it (migrations in
// a deploy, the tables and their indexes, vacuum, connection poolers,
// monitoring, failover) is in docs/postgresql.md in the module's
// repository.
//
// # What a host does
//
//	pool, err := pgxpool.New(ctx, dsn) // refuse an empty dsn: pgx takes "" for PostgreSQL's defaults
//	…
//	store, err := pgstore.New(pool) // or pgstore.New(pool, pgstore.WithSchema("hooks"))
//	…
//	if err := store.Migrate(ctx); err != nil { … }
//	receiver, err := webhooks.NewReceiver(registry, store, webhooks.WithReplayStore(store))
//	…
//	proc, err := webhooks.NewProcessor(store, mux, webhooks.WithWakeSource(store.Listener()))
//
// In detail:
//
//   - [New] makes the store; it does not touch the database. Each [Option]
//     says its default.
//   - [Store.Migrate] at every start creates or upgrades the tables; a host
//     with its own migration tool applies [Migrations] instead (see
//     Migrations below).
//   - The Receiver takes the store as its inbox, and as its replay store
//     only where a verifier needs one ([webhooks.NeedsReplayStore]).
//   - The Processor takes the store, and [Store.Listener] as its wake
//     source.
//   - Retention runs periodically: nothing is deleted otherwise (see
//     Retention below).
//   - A handler that writes to the same database may complete its event in
//     its own transaction with [Store.CompleteTx].
//
// The store has no Close: the goroutines it starts for group commit and
// wake-ups end by themselves once calls stop.
//
// # Migrations
//
// The tables live in one schema of their own ([DefaultSchema] unless
// [WithSchema]), beside the host's tables. [Store.Migrate] applies the
// embedded, versioned migrations the schema lacks, each in its own
// transaction under an advisory lock, and records them in
// [MigrationsTable]: it is idempotent and safe from many instances at once.
// Every migration after the first lets instances of the previous version
// keep working beside upgraded ones during a rolling upgrade (its file's
// header, under migrations/, says how), and a database made by any earlier
// version upgrades with its items.
//
// A host with its own migration tool takes the rendered SQL from
// [Migrations] and applies it in order after creating the schema. Unless
// the tool also records each version in MigrationsTable, as Migrate does,
// [Store.CheckSchema] then only checks that the inbox's table exists, and
// Migrate, which would apply every migration again, must not be used on
// the schema.
//
// A store whose schema lacks the inbox, or is at an older migration than
// this package needs, fails Enqueue, EnqueueTx and Acquire, once their
// statement finds part of the schema missing, with an error wrapping
// [webhooks.ErrStoreNotReady] that says what to run, such as
//
//	pgstore: schema "hooks" has no inbox: run (*Store).Migrate (or hookinbox migrate -schema hooks)
//
// The Receiver answers 503 and logs it (the provider delivers again later),
// and Processor.Run returns it rather than polling in vain. A host that
// would rather refuse to start calls [Store.CheckSchema] (or Migrate)
// first.
//
// The tables are the store's: read them as you like, but change their rows
// only through the store. A row changed otherwise may be one the store
// cannot read (see [Store.Acquire]).
//
// # Statements
//
// Enqueue is an INSERT … ON CONFLICT … DO UPDATE … RETURNING: the primary
// key (provider, tenant, event_id) makes concurrent deliveries of one event
// produce one row, and the returned row tells new, duplicate and conflict
// apart; the same statement keeps a conflicting delivery in quarantine.
// Concurrent calls share one such statement over arrays, and one commit
// (group commit, see [Store.Enqueue]), each answered with its own outcome
// after that commit. [Store.Register] does the same for replay keys,
// replacing an expired registration in the same statement.
//
// [Store.Acquire] locks due rows with FOR UPDATE SKIP LOCKED and gives
// each a fresh random lease token in the same statement, which also tells
// which rows it took from expired leases (Lease.Reclaimed) and records
// their attempts as crashed. Settle (one statement per outcome),
// ExtendLease, [Store.SettleBatch] and [Store.StartLeases] are each an
// UPDATE conditional on the item being leased under the caller's token,
// each row fenced by its own; a settlement records its attempt in the
// item's history in the same statement. A statement that matches no row
// tells, in the same statement, a token that already settled the item
// (webhooks.ErrAlreadySettled) from a stale one (webhooks.ErrLeaseLost).
// Asked for held leases, Acquire starts only the leases its caller's free
// workers take and holds the rest, so that a crash costs an attempt only
// to the items whose handlers ran.
//
// Every statement works in each of pgx's query exec modes (the pool's
// ConnConfig.DefaultQueryExecMode, or default_query_exec_mode in the
// connection string), and payloads come back byte for byte in all of them.
// Behind a pooler in transaction mode, such as PgBouncer's transaction
// pooling, use [pgx.QueryExecModeExec]: it prepares nothing on the server
// and runs each statement in one round trip (simple_protocol and
// cache_describe work there too; pgx's default and describe_exec do not).
// The Listener needs a connection of its own, not through such a pooler.
//
// # Operators
//
// The Store implements ops.Store. [Store.Get] reads an item with its
// attempts, audit trail and quarantined deliveries in one round trip.
// [Store.List] pages dead letters, or closed items, through a partial
// index in its order, without reading payloads. [Store.Replay] and
// [Store.CloseDeadLetter] change an item and record the change in its
// audit trail in one statement; a bulk replay goes a call per batch of
// [ops.ReplayBatch], each batch replayed in one transaction. [Store.Stats]
// is one statement over partial indexes, which never reads succeeded rows:
// it counts them exactly up to [SucceededCountedExactly] and estimates
// beyond.
//
// # Time and clock skew
//
// By default the store uses the now the caller passes, as the
// webhooks.InboxStore contract says: lease expiry, due times and every
// recorded time come from the caller's clock, which keeps the store
// deterministic under test. With several instances their clocks differ,
// and this is what holds:
//
//   - Never two settleable leases. Whether a lease is valid for Settle,
//     ExtendLease and CompleteTx is decided only by the token stored in the
//     row, never by a clock. Acquisition replaces the token while holding
//     the row lock, and PostgreSQL re-checks the due condition on the row's
//     latest version once it has the lock, so acquisitions of one item are
//     serialised and each one invalidates the previous token. A worker
//     whose lease was taken over gets ErrLeaseLost and changes nothing. No
//     skew can make an item succeed twice or be settled by a stale worker.
//   - Exclusive execution needs the clocks to agree within the lease. When
//     a lease counts as expired is a clock comparison: an instance whose
//     clock runs Δ ahead treats leases as expired Δ early and may take an
//     item while the holder's handler still runs, so the handler runs
//     twice at once (the late one is then fenced out as above). With skew
//     well below the lease duration, and leases extended well before they
//     expire (as the Processor does), this does not happen.
//
// [WithDatabaseClock] removes the second caveat: every comparison and
// every stored state time uses the database server's now(), one clock for
// all instances. A worker should then extend its lease by elapsed time (as
// the Processor does), not by comparing Lease.ExpiresAt, a server time,
// with its own clock. The conformance suite drives the caller's times, so
// the option is off by default; turn it on in production when you cannot
// vouch for the hosts' clocks.
//
// # Wake-ups
//
// [Store.Listener] LISTENs on [Store.NotifyChannel] on a connection of its
// own and wakes the Processor; it reconnects with backoff when the
// connection drops. Notifications are hints: the Processor polls too, so a
// missed notification only delays work.
//
// Enqueue (for a new or replayed item) and Replay do not notify inside
// their statement: a transaction that sends NOTIFY holds PostgreSQL's
// cluster-wide notification-queue lock from its commit until its commit
// record is flushed, so notifying commits run one at a time, and a full
// notification queue fails the commit. Once their statement has committed
// they call [Store.Notify] instead, which sends pg_notify in a statement of
// its own, coalesced. EnqueueTx notifies inside the host's transaction by
// default, so that listeners wake on its commit and never on its rollback;
// [WithoutNotifyInTx] leaves that to the host. docs/performance.md has
// what each costs.
//
// # Completing in the host's transaction
//
// A handler that writes to the same database can mark its event's item
// succeeded inside its own transaction with [Store.CompleteTx], so that its
// business writes and the completion commit or roll back together: a
// worker that dies after the commit leaves nothing to run again, and one
// that dies before it leaves nothing half done. The completion is fenced
// by the event's lease token like every settlement; a refused completion
// makes the transaction fail, so it can only roll back. Once it has
// committed, the Processor's own settlement of the event finds the item
// settled and changes nothing.
//
// # Retention
//
// Rows are never deleted by the store's normal operation.
// [Store.DeleteSucceeded], [Store.DeleteClosed] and
// [Store.DeleteExpiredReplayKeys] delete old rows in batches, each its own
// short transaction; run them periodically. An item's attempts, audit trail
// and quarantined deliveries go with it, and so does its event ID: a later
// delivery of a deleted item is stored as new. Dead items are kept until
// they are replayed or closed.
package pgstore
