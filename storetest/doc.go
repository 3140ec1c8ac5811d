// Package storetest is the conformance suite for webhooks.InboxStore and
// webhooks.ReplayStore implementations, in the manner of testing/slogtest.
// It asserts the behaviour pinned in the store semantics notes: every state
// transition with exact field values, token fencing, atomic idempotency under
// concurrency, dead-letter ordering and paging, and replay-key expiry.
//
// A store author calls it from an ordinary test, passing a constructor that
// returns a fresh, empty store:
//
//	func TestInbox(t *testing.T) {
//		storetest.RunInbox(t, func(t *testing.T) webhooks.InboxStore {
//			return memstore.NewInbox()
//		})
//	}
//
//	func TestReplay(t *testing.T) {
//		storetest.RunReplay(t, func(t *testing.T) webhooks.ReplayStore {
//			return memstore.NewReplay()
//		})
//	}
//
// Each case is a named subtest that calls newStore on its own *testing.T and
// runs in parallel with the other cases, so newStore must be safe for
// concurrent use and must give every call a store that shares no data with
// the others (for a database: a schema or database per call). Register
// teardown with t.Cleanup on the *testing.T that newStore receives; it runs
// when that case ends. RunInbox and RunReplay return only after every case
// has finished.
//
// If the inbox store also implements webhooks.BatchAcquirer, the BatchAcquirer
// cases run as well; otherwise they are logged as not applicable.
//
// The suite takes every time from a fixed base time at microsecond precision
// (PostgreSQL's timestamptz precision) and compares times with time.Time.Equal,
// so stores may return times in any location. It never sleeps.
package storetest
