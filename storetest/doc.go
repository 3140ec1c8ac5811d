// Package storetest is the conformance suite for implementations of
// [webhooks.InboxStore] and of [webhooks.ReplayStore], in the manner of
// [testing/slogtest]: every store, memstore and pgstore included, runs the
// same cases, and a store that passes them behaves as the webhooks and ops
// packages expect. It uses the standard library only.
//
// The pipeline's cases pin the contract every inbox keeps: every state
// transition, fencing by lease token ([webhooks.ErrLeaseLost],
// [webhooks.ErrAlreadySettled]), exclusive acquisition under concurrency,
// atomic idempotency of Enqueue, provider redelivery of dead letters, and
// the times and order of what becomes due. The cases of an optional
// capability pin it: [ops.Store] (the attempt history, crashed and
// lease-lost attempts included; quarantine of conflicting deliveries;
// dead-letter and closed-item order, filters and paging; audited replay of
// one item or many, with dry run, limits, spread, batches by cursor and a
// fresh attempt budget; closing; stats), [webhooks.BatchSettler],
// [webhooks.LeaseStarter], [webhooks.AcquisitionRepeater] and the
// [Features] hooks. [RunReplay] pins Register and replay-key expiry.
//
// # Running it
//
// Call [RunInbox] and [RunReplay] from ordinary tests, with a function that
// returns a fresh, empty store:
//
//	func TestInbox(t *testing.T) {
//		storetest.RunInbox(t, func(t *testing.T) webhooks.InboxStore {
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
// Each case is a subtest named after what it checks, under its group:
// Pipeline, then one group per capability (BatchSettler, LeaseStarter,
// AcquisitionRepeater, Handlers, OrderingKeys, Operators, CompleteInTx), so one case
// runs alone with go test -run, as in -run 'TestInbox/Pipeline/SettleRetried'.
// A failure names the call, what it returned and what the contract wants.
//
// # Capabilities
//
// A store that implements only the pipeline ([webhooks.InboxStore]) runs
// the Pipeline group; each other group asks a store of its own whether it
// has the capability and is skipped, once, with a message saying so, when
// it has not. The pipeline's cases look at what the pipeline sees (the
// results of Enqueue, the leases Acquire returns, what is due when, the
// errors of Settle and ExtendLease); on a store that is an ops.Store they
// also compare every stored item, field by field, and its history. A
// capability the store declares through [webhooks.FanOutStore] has a group
// of its own, run when [webhooks.FanOutOf] says the store has it: Handlers
// (one job per handler of an event) and OrderingKeys (ordered jobs one at a
// time per key, in order; the stale guard; the flags of jobs that ran past
// a dead letter; two instances racing over many keys, smaller with
// -short). Their cases that look at what operators see run on an
// ops.Store only. A capability that is neither has a hook
// in [Features]
// instead (today one: completion inside a transaction of the host's,
// [Features.CompleteInTx]); more will be added as fields, so a store that
// sets none keeps compiling and passing.
//
// # What newStore must do
//
// newStore is called once per case, and once per group to ask about its
// capability, with that case's (or group's) *testing.T. It must return a
// store that is empty and shares no data with the stores of other calls:
// for a database, a schema or a database of its own per call. Set up and
// tear down with that *testing.T: call t.Fatal when the store cannot be
// made, and register clean-up with t.Cleanup, which runs when the case
// ends. It must not return nil.
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
package storetest
