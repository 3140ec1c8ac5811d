// Package webhooks receives inbound webhooks reliably: it verifies
// signatures on the raw bytes, blocks replays, writes every accepted webhook
// idempotently into a durable inbox, and hands events to the host's handlers
// through leases, with exponential-backoff retries, dead letters and replay.
//
// A host mounts a Gateway as an http.Handler, registers a Verifier per
// provider key in a Resolver, registers handlers per event type in a Mux, and
// runs a Processor. The stores are interfaces: memstore keeps everything in
// memory (development and tests); pgstore keeps it in PostgreSQL.
//
// Guarantees: nothing is acknowledged with a 2xx answer unless the store has
// made it durable; every accepted event is handled at least once; no two
// workers hold a valid lease on one event at the same time; a handler stopped
// by shutdown does not spend an attempt.
package webhooks
