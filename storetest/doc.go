// Package storetest is the conformance suite for implementations of
// [webhooks.InboxStore] with [ops.Store], and of [webhooks.ReplayStore], in
// the manner of [testing/slogtest]: every store, memstore and pgstore
// included, runs the same cases, and a store that passes them behaves as
// the webhooks and ops packages expect. It uses the standard library only.
//
// The cases pin the contracts written in those packages: every state
// transition with the exact value of every Item field, fencing by lease
// token ([webhooks.ErrLeaseLost], [webhooks.ErrAlreadySettled]), exclusive
// acquisition under concurrency, an acquisition asked for again by its ID
// ([webhooks.AcquireRequest].ID) returning its held leases and nothing
// more, atomic idempotency of Enqueue and
// Register, quarantine of conflicting deliveries and existing-only
// deliveries, provider redelivery of dead letters, the attempt history
// (crashed and lease-lost attempts included), dead-letter and closed-item
// order, filters and paging, audited replay of one item or many (dry run,
// limits, spread, batches by cursor, a fresh attempt budget; closed and
// succeeded items reopened), closing, stats, and replay-key expiry.
//
// # Running it
//
// Call [RunInbox] and [RunReplay] from ordinary tests, with a function that
// returns a fresh, empty store. An inbox is a [Store]: the pipeline's
// [webhooks.InboxStore] and the operators' [ops.Store] in one value, since
// every inbox must let operators look into it and steer it.
//
//	func TestInbox(t *testing.T) {
//		storetest.RunInbox(t, func(t *testing.T) storetest.Store {
//			return mystore.New(…)
//		}, storetest.Features{})
//	}
//
//	func TestReplay(t *testing.T) {
//		storetest.RunReplay(t, func(t *testing.T) webhooks.ReplayStore {
//			return mystore.NewReplay(…)
//		})
//	}
//
// Each case is a subtest named after what it checks, so one case runs
// alone with go test -run, as in -run 'TestInbox/InboxStore/SettleRetried'.
// A failure names the call, what it returned and what the contract wants.
//
// # What newStore must do
//
// newStore is called once per case, with that case's *testing.T. It must
// return a store that is empty and shares no data with the stores of other
// calls: for a database, a schema or a database of its own per call. Set
// up and tear down with that *testing.T: call t.Fatal when the store
// cannot be made, and register clean-up with t.Cleanup, which runs when the
// case ends. It must not return nil.
//
// # Parallelism
//
// Every case calls t.Parallel, so newStore is called from many goroutines
// at once and must be safe for that; keep the resources a store holds (such
// as connections) small. Many cases also call the store from many
// goroutines, as the contracts allow. RunInbox and RunReplay return only
// when every case has finished, so resources shared by all cases may be
// released after they return.
//
// # Time
//
// The suite drives time only through the times it passes (the Now of
// AcquireRequest, Settlement, ExtendRequest and the ops requests, and the
// envelopes' times); it never sleeps and never reads the clock. Its times
// are whole microseconds, the precision PostgreSQL keeps, so a store may
// round to microseconds; where a spread replay's due times fall between
// microseconds, the suite checks only that they are in the window and in
// order. Times are compared with time.Time.Equal, so a store may return
// them in any location. A store that can use a clock of
// its own instead (such as pgstore's WithDatabaseClock) must run the suite
// with the caller's times.
//
// # Estimates
//
// A store may estimate the succeeded count of [ops.Stats] and say so with
// SucceededEstimated (pgstore does past a threshold, to stay cheap with
// millions of rows); the suite then does not check that count. Every other
// count must be exact.
//
// # Optional features
//
// Some capabilities belong to some stores only. [Features] holds a hook for
// each; the cases of a feature whose hook is nil are skipped, with a
// message saying so. Today there is one, completion inside a transaction of
// the host's ([Features.CompleteInTx]); more will be added as fields, so a
// store that sets none keeps compiling and passing. A capability that is a
// method of the store found by type assertion needs no hook: the cases of
// webhooks.BatchSettler and webhooks.LeaseStarter (held leases, which a
// crash costs no attempt) run when the store has it, and are skipped
// otherwise.
package storetest
