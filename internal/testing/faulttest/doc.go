// Package faulttest holds the fault tests, which try the library's
// guarantees from outside as a sceptical user would: a Receiver and a
// Processor on pgstore run in a child process (this package's test binary
// started again in child mode, see node_test.go) that is killed with
// SIGKILL under load, paused with SIGSTOP past its leases, and cut off from
// PostgreSQL by a proxy that stalls and drops its connections; several
// instances with pools of their own share one database.
//
// The tests need PostgreSQL: WEBHOOKS_TEST_DATABASE_URL names it (they are
// skipped without it, and fail under WEBHOOKS_TEST_REQUIRE_DB=1). Every
// loop is bounded in count and time and everything listens on loopback
// only. WEBHOOKS_TEST_LONG=1 runs the long variants: more load, longer
// outages, more rounds. docs/faults.md lists what the tests show.
package faulttest
