// Package pgstore is the PostgreSQL inbox and replay store, on pgx v5
// (pgxpool). Several gateway and processor instances share one database; every
// guarantee of the webhooks package holds across processes, because each is
// enforced by a single SQL statement on a row.
//
//	pool, err := pgxpool.New(ctx, dsn)
//	…
//	store, err := pgstore.New(pool) // or pgstore.New(pool, pgstore.WithSchema("hooks"))
//	…
//	if err := store.Migrate(ctx); err != nil { … }
//	receiver, err := webhooks.NewReceiver(registry, store, webhooks.WithReplayStore(store), …)
//	…
//	proc, err := webhooks.NewProcessor(store, mux, webhooks.WithWakeSource(store.Listener()), …)
//
// # Tables and migrations
//
// The tables live in their own schema (DefaultSchema unless WithSchema), so
// they sit beside a host's tables. Migrate applies the embedded, versioned
// migrations (see Migrations) under an advisory lock and records them in
// MigrationsTable. The README in this directory lists the schema.
//
// # Statements
//
// Enqueue is an INSERT … ON CONFLICT … DO UPDATE … RETURNING: the primary key
// (provider, tenant, event_id) makes concurrent deliveries of one event
// produce one row, and the returned row tells new, duplicate and conflict
// apart; a CTE of the same statement keeps a conflicting delivery in
// inbox_quarantine. Concurrent calls share one such statement over arrays,
// and one commit (group commit, see Enqueue), each answered with its own
// outcome after that commit. Register does the same for replay keys, replacing an
// expired registration in the same statement. Acquire locks due rows with
// FOR UPDATE SKIP LOCKED and gives each a fresh random lease token in the
// same statement, which also tells which rows it took from expired leases
// (Lease.Reclaimed, kept on the row) and records their attempts as
// crashed; an Acquire
// with an ID (webhooks.AcquireRequest.ID) records it with the leases, and
// RepeatAcquisition (webhooks.AcquisitionRepeater) returns the leases
// still held under it, in a statement that changes nothing. Settle (one
// statement per outcome) and ExtendLease are each an UPDATE conditional on
// the item being leased under the caller's token, and a settlement records
// its attempt in inbox_attempts in the same statement; when it matches no
// row, the same statement reads the row to tell a token that already
// settled the item (webhooks.ErrAlreadySettled) from a stale one
// (webhooks.ErrLeaseLost). SettleBatch (webhooks.BatchSettler, which the
// Processor uses) settles many leases in one such statement over arrays,
// each row fenced by its own token and answered on its own. The Store is
// a webhooks.LeaseStarter: asked for held leases, Acquire starts only the
// leases its caller's free workers take and holds the rest (their
// lease_started_at NULL), and StartLeases starts held leases in one
// statement over arrays, so that a crash costs an attempt only to the
// items whose handlers ran.
//
// # Operators
//
// The Store implements ops.Store. Get reads an item with its attempts,
// audit trail and quarantined deliveries in one round trip. List pages
// dead letters, or closed items, through a partial index in its order.
// Replay and CloseDeadLetter change an item and record the change in
// inbox_audit in one statement; a bulk replay goes a call per batch of
// ops.ReplayBatch, selecting through the state's partial index after its
// cursor, down to the end of the selection its first call counted, and
// replaying the batch in one transaction. Stats is one statement
// over partial indexes, which never reads succeeded rows: it counts them
// exactly up to SucceededCountedExactly and estimates beyond, from the
// planner's statistics.
//
// # Time and clock skew
//
// By default the store uses the now the caller passes, as the
// webhooks.InboxStore contract says: lease expiry, due times and every
// recorded time come from the caller's clock, which keeps the store
// deterministic under test. With several instances their clocks differ, and
// this is what holds:
//
//   - Never two settleable leases. Whether a lease is valid for Settle,
//     ExtendLease and CompleteTx is decided only by the token stored in the
//     row, never by a clock. Acquisition replaces the token while holding
//     the row lock, and PostgreSQL re-checks the due condition on the row's
//     latest version once it has the lock, so acquisitions of one item are
//     serialised and each one invalidates the previous token. Whatever the
//     clocks say, exactly one token is current, and only its holder changes
//     the item: a worker whose lease was taken over gets ErrLeaseLost and
//     changes nothing. No skew can make an item succeed twice or be settled
//     by a stale worker.
//   - Exclusive execution needs the clocks to agree within the lease. Skew
//     does decide when an item counts as expired: an instance whose clock
//     runs Δ ahead treats leases as expired Δ early and may take an item
//     while the holder's handler is still running, so the handler can run
//     twice at once (the late one is then fenced out as above). With skew
//     well below the lease duration, and leases extended well before they
//     expire, this does not happen.
//
// WithDatabaseClock removes the second caveat: every comparison and every
// expiry uses the database server's now(), one clock for all instances, so
// an item's lease expires at the same moment for everyone whatever the
// instances' clocks say. Times the caller gives as instants (a retry's
// RetryAt, a replay key's expiry) keep their distance from the caller's
// now; the cutoffs of DeleteSucceeded and DeleteClosed, which come without
// a now, keep their distance from the host's time.Now. A worker should still extend its lease
// by elapsed time (as the Processor does), not by comparing
// Lease.ExpiresAt, now a server time, with its own clock. The caller's times
// are still what the conformance suite exercises, so the option is off by
// default; turn it on in production when you cannot vouch for the hosts'
// clocks.
//
// # Wake-ups
//
// Listener LISTENs on NotifyChannel on a dedicated connection and wakes the
// Processor; it reconnects with backoff when the connection drops.
// Notifications are hints: work is found by polling too, so a missed
// notification only delays it.
//
// Enqueue (for a new item) and Replay do not notify inside their
// statement. A transaction that sends NOTIFY takes PostgreSQL's cluster-wide
// notification-queue lock when it commits and holds it until its commit
// record is flushed, so notifying commits run one after another at the pace
// of the WAL flush, and a full notification queue fails the commit. Instead,
// once their statement has committed they call Notify, and the store sends
// pg_notify in a statement of its own: at once when none is in flight,
// otherwise coalesced, at most one every few milliseconds; a failure is
// logged. Such a NOTIFY-only transaction writes no WAL before its commit, so
// it holds the lock only briefly. (With 16 concurrent enqueuers and 5ms
// commit flushes, notifying inside the statement allowed about 180 enqueues
// a second; the notifier allows as many as no notification at all, about
// 2,500: BenchmarkEnqueueSlowCommit.)
//
// EnqueueTx joins the host's transaction and, by default, sends NOTIFY
// inside it, so listeners are woken when the host commits and never when it
// rolls back, at the price above for the host's commits. WithoutNotifyInTx
// leaves it out; the host then calls Notify after committing.
//
// # Completing in the host's transaction
//
// A handler that writes to the same database can mark its event's item
// succeeded inside its own transaction with CompleteTx, so that its
// business writes and the completion commit or roll back together: a
// worker that dies after the commit leaves nothing to run again, and one
// that dies before it leaves nothing half done (see the example). The completion is fenced by the event's lease token
// like every settlement: a worker whose lease was taken over gets an error
// wrapping webhooks.ErrLeaseLost and must return it, so its transaction
// rolls back. Once the transaction has committed, the Processor's own
// settlement of the event finds the item settled and changes nothing.
//
// # Retention
//
// Rows are never deleted by the store's normal operation. DeleteSucceeded,
// DeleteClosed and DeleteExpiredReplayKeys delete old rows in bounded
// batches; run them periodically. An item's history, audit trail and
// quarantine go with it.
package pgstore
