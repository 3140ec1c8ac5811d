// Package memstore keeps the inbox and the replay guard in memory, for
// development and tests.
//
// Nothing is durable: everything is lost when the process exits, so a
// Receiver backed by memstore acknowledges webhooks that a crash would
// lose. Use pgstore in production.
//
// Items stay in memory, with their attempt history, audit trail and
// quarantined deliveries, until they are removed: Inbox.DeleteSucceeded
// removes succeeded items completed before a cutoff and Inbox.DeleteClosed
// items closed before one (call them periodically in a long-running
// development server); pending, leased and dead items are kept. Replay
// evicts expired registrations itself, a few on each Register. Without
// DeleteSucceeded, memory grows with the number of webhooks received.
//
// Both stores keep the contracts of the webhooks package, and the Inbox
// has every optional capability (ops.Store, webhooks.BatchSettler,
// LeaseStarter, AcquisitionRepeater and FanOutStore: an event is kept once
// with one job per handler); they pass every case of the
// conformance suite in package storetest. They are safe for concurrent use and take
// time only from their callers. Items are copied on the way in and on the
// way out, so callers may change what they pass or receive.
package memstore
