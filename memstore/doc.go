// Package memstore keeps the inbox and the replay guard in memory, for
// development and tests.
//
// Nothing is durable: everything is lost when the process exits, so a Gateway
// backed by memstore acknowledges webhooks that a crash would lose, and items
// (succeeded ones included) are never removed, so memory grows with the
// number of webhooks received. Use pgstore in production.
//
// Both stores follow the same contract as every other store (the
// internal/storetest conformance suite checks it), are safe for concurrent use
// and take time only from their callers. Items are copied on the way in and on
// the way out, so callers may change what they pass or receive.
package memstore
