// Package storetest is the conformance suite for implementations of
// [webhooks.InboxStore] and [webhooks.ReplayStore], in the manner of
// [testing/slogtest]: every store, memstore and pgstore included, runs the
// same cases, and a store that passes them behaves as the webhooks package
// expects. It uses the standard library only.
//
// The cases pin the contracts written in the webhooks package: every state
// transition with the exact value of every Item field, fencing by lease
// token ([webhooks.ErrLeaseLost], [webhooks.ErrAlreadySettled]), exclusive acquisition under
// concurrency, atomic idempotency of Enqueue and Register, dead-letter
// order, filters and paging, dead-letter replay, and replay-key expiry.
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
// AcquireRequest, Settlement, ExtendRequest and ReplayRequest, and the
// envelopes' times); it never sleeps and never reads the clock. Its times
// are whole microseconds, the precision PostgreSQL keeps, so a store may
// round to microseconds. Times are compared with time.Time.Equal, so a
// store may return them in any location. A store that can use a clock of
// its own instead (such as pgstore's WithDatabaseClock) must run the suite
// with the caller's times.
//
// # Optional features
//
// Some capabilities belong to some stores only. [Features] holds a hook for
// each; the cases of a feature whose hook is nil are skipped, with a
// message saying so. Today there is one, completion inside a transaction of
// the host's ([Features.CompleteInTx]); more will be added as fields, so a
// store that sets none keeps compiling and passing.
package storetest
