package storetest

import (
	"crypto/sha256"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// Features describes the optional capabilities of the store under test
// that are not methods of the store. Each field is a hook that the suite
// calls to use a capability; a nil field means the store lacks it, and its
// cases are skipped. The zero value runs the cases every store must pass.
// (Capabilities that are methods, such as ops.Store or
// webhooks.LeaseStarter, are found by type assertion; see the package
// documentation.)
type Features struct {
	// CompleteInTx, when set, completes the item of ev inside a
	// transaction of the store's own kind and then, whatever the
	// completion returned, commits that transaction when commit is true or
	// rolls it back when it is false; it is how the suite reaches a method
	// such as pgstore's CompleteTx, which marks an item succeeded together
	// with a handler's own writes. s is a store returned by newStore, and
	// ev carries the lease's token in its LeaseToken field. It returns the
	// completion's error and the commit's (nil after a rollback).
	//
	// The suite requires: a committed completion makes the item succeeded
	// once, after which settling under the same token reports
	// [webhooks.ErrAlreadySettled]; a rolled-back one leaves the item
	// leased under its token; a completion under a token that is not
	// current is refused with an error wrapping [webhooks.ErrLeaseLost],
	// changes nothing, and makes the transaction fail: its commit returns
	// an error, so a handler that ignores the refusal cannot commit its
	// own writes either. The completion time is the store's own, so the
	// suite checks that CompletedAt is set, not its value.
	//
	// A completion is an attempt like a settlement: the suite requires it
	// in the item's history as succeeded, when the store is an ops.Store.
	CompleteInTx func(t *testing.T, s webhooks.InboxStore, ev webhooks.Event, commit bool) (completeErr, commitErr error)

	// OrderRace sizes OrderingKeys/TwoInstancesNoOverlap: the envelopes
	// it races two instances through, over how many keys. Zero gives
	// 10,000 over 100, or 1,000 over 20 with -short. A store whose round
	// trips make the full size slow may run a smaller one in its quick
	// runs and the full one in its long runs.
	OrderRace struct{ Events, Keys int }

	// Outage is how long Pauses/BreakerRidesOutAnOutage keeps its
	// handler's dependency down: 1 s when zero. The test is a
	// minute, for a store's long runs.
	Outage time.Duration

	// FairBacklog sizes Fairness/TwoProcessorsNewcomer: the events of the
	// backlog beside which another tenant's event must start at once.
	// Zero gives 100,000, or 2,000 with -short.
	FairBacklog int

	// Groups, when not empty, names the only groups of cases to run
	// (Pipeline, Handlers, OrderingKeys, …: the first level of subtests),
	// for a second run of a store in another configuration that changes
	// only some of its paths.
	Groups []string
}

// opsStore is an inbox that operators can look into and steer: what the
// operators' cases test.
type opsStore interface {
	webhooks.InboxStore
	ops.Store
}

// RunInbox runs the pipeline's cases ([webhooks.InboxStore]) on stores
// returned by newStore, each case on a store of its own, and the cases of
// every capability the store has: [ops.Store] (the operators' cases),
// [webhooks.BatchSettler], [webhooks.LeaseStarter],
// [webhooks.AcquisitionRepeater], [webhooks.FlowStore] (Limits, Fair,
// Priorities),
// [webhooks.PauseStore], and those f describes. See the package
// documentation for what newStore must do.
func RunInbox(t *testing.T, newStore func(t *testing.T) webhooks.InboxStore, f Features) {
	t.Helper()
	fresh := func(t *testing.T) webhooks.InboxStore {
		t.Helper()
		s := newStore(t)
		if s == nil {
			t.Fatal("newStore returned a nil InboxStore; want a fresh, empty store")
		}
		return s
	}
	// Each group of a capability asks a store of its own whether it has
	// it, and is skipped, once, when it has not. A group returns only when
	// its parallel cases are done, so callers may tear down shared
	// resources after RunInbox returns.
	group := func(name string, cases []inboxCase, has func(webhooks.InboxStore) bool, lacks string) {
		if len(f.Groups) > 0 && !slices.Contains(f.Groups, name) {
			return
		}
		t.Run(name, func(t *testing.T) {
			if has != nil && !has(fresh(t)) {
				t.Skip(lacks)
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.run(t, fresh(t))
				})
			}
		})
	}
	group("Pipeline", pipelineCases, nil, "")
	group("BatchSettler", settleBatchCases, is[webhooks.BatchSettler], "the store is not a webhooks.BatchSettler")
	group("LeaseStarter", startCases, is[webhooks.LeaseStarter], "the store is not a webhooks.LeaseStarter")
	group("AcquisitionRepeater", repeatCases, is[webhooks.AcquisitionRepeater], "the store is not a webhooks.AcquisitionRepeater")
	group("Handlers", slices.Concat(handlerCases, handlerOpsCases), hasHandlers, "the store keeps one job per event (webhooks.FanOutOf(store).Handlers is false): the fan-out cases are skipped")
	race := inboxCase{"TwoInstancesNoOverlap", func(t *testing.T, s webhooks.InboxStore) { testTwoInstancesNoOverlap(t, s, f.OrderRace) }}
	group("OrderingKeys", append(slices.Clip(orderingCases), race), hasOrderingKeys, "the store does not run ordered jobs in key order (webhooks.FanOutOf(store).OrderingKeys is false): the ordering cases are skipped")
	group("Limits", limitsCases, hasLimits, "the store does not keep Limits over its callers (webhooks.FlowOf(store).Limits is false): the limits cases are skipped")
	fairProcs := inboxCase{"TwoProcessorsNewcomer", func(t *testing.T, s webhooks.InboxStore) { testFairProcessors(t, s, f.FairBacklog) }}
	group("Fairness", append(slices.Clip(fairCases), fairProcs), hasFair, "the store does not lease by tenant in turns (webhooks.FlowOf(store).Fair is false): the fairness cases are skipped")
	group("Priorities", priorityCases, hasPriorities, "the store does not keep jobs' priorities (webhooks.FlowOf(store).Priorities is false): the priority cases are skipped")
	outage := inboxCase{"BreakerRidesOutAnOutage", func(t *testing.T, s webhooks.InboxStore) { testBreakerRidesOutAnOutage(t, s, f.Outage) }}
	group("Pauses", slices.Concat(pauseCases, scopedPauseCases, []inboxCase{outage}), is[webhooks.PauseStore], "the store is not a webhooks.PauseStore: the pause cases are skipped")
	group("Operators", operatorCases, is[ops.Store], "the store is not an ops.Store: the operators' cases (history, audit, quarantine, list, replay, close, stats) are skipped")
	if len(f.Groups) > 0 && !slices.Contains(f.Groups, "CompleteInTx") {
		return
	}
	t.Run("CompleteInTx", func(t *testing.T) {
		if f.CompleteInTx == nil {
			t.Skip("Features.CompleteInTx is nil: the store does not complete items inside a transaction of its own")
		}
		for _, c := range completeInTxCases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				c.run(t, fresh(t), f.CompleteInTx)
			})
		}
	})
}

// is reports whether s implements C.
func is[C any](s webhooks.InboxStore) bool {
	_, ok := s.(C)
	return ok
}

// RunReplay runs the [webhooks.ReplayStore] cases, each on a store returned
// by newStore. See the package documentation for what newStore must do.
func RunReplay(t *testing.T, newStore func(t *testing.T) webhooks.ReplayStore) {
	t.Helper()
	t.Run("ReplayStore", func(t *testing.T) {
		for _, c := range replayCases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				s := newStore(t)
				if s == nil {
					t.Fatal("newStore returned a nil ReplayStore; want a fresh, empty store")
				}
				c.run(t, s)
			})
		}
	})
}

type inboxCase struct {
	name string
	run  func(t *testing.T, s webhooks.InboxStore)
}

// opsCase makes an inboxCase of a case of the operators' group, which runs
// only on an ops.Store.
func opsCase(name string, run func(t *testing.T, s opsStore)) inboxCase {
	return inboxCase{name, func(t *testing.T, s webhooks.InboxStore) { run(t, s.(opsStore)) }}
}

// completeInTx is the type of Features.CompleteInTx.
type completeInTx = func(t *testing.T, s webhooks.InboxStore, ev webhooks.Event, commit bool) (completeErr, commitErr error)

type completeInTxCase struct {
	name string
	run  func(t *testing.T, s webhooks.InboxStore, complete completeInTx)
}

type replayCase struct {
	name string
	run  func(t *testing.T, s webhooks.ReplayStore)
}

// pipelineCases run on every store; operatorCases on those that are an
// ops.Store. Each is in the order it is reported.
var (
	pipelineCases = slices.Concat(enqueueCases, groupCases, redeliveryCases, acquireCases, settleCases, itemCases, defaultJobCases)
	operatorCases = slices.Concat(historyCases, quarantineCases, listCases, replayOneCases, bulkReplayCases, reopenCases, closeCases, statsCases)
)

// base is the time every case starts from: microsecond precision, as
// PostgreSQL keeps it. Cases only add whole microseconds or more.
var base = time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)

// at returns base+d.
func at(d time.Duration) time.Time { return base.Add(d) }

// leaseFor is the lease duration cases use when they do not care.
const leaseFor = time.Minute

// key returns an inbox key of provider "acme", tenant "t1".
func key(eventID string) webhooks.InboxKey {
	return webhooks.InboxKey{Provider: "acme", Tenant: "t1", EventID: eventID}
}

// envelope returns a complete envelope for k with payload, received at
// receivedAt.
func envelope(k webhooks.InboxKey, payload string, receivedAt time.Time) webhooks.Envelope {
	return webhooks.Envelope{
		Key:       k,
		EventType: "invoice.paid",
		Payload:   []byte(payload),
		Headers: http.Header{
			"Content-Type": {"application/json"},
			"X-Trace":      {"a", "b"},
		},
		PayloadSHA256: sha256.Sum256([]byte(payload)),
		KeyID:         "key-2026",
		APIVersion:    "2026-01-28",
		TraceLink:     "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		OccurredAt:    receivedAt.Add(-90 * time.Second),
		ReceivedAt:    receivedAt,
	}
}

// enqueuedItem is the item the contract requires right after env was
// enqueued as new.
func enqueuedItem(env webhooks.Envelope) webhooks.Item {
	it := webhooks.Item{
		Key:           env.Key,
		EventType:     env.EventType,
		Payload:       env.Payload,
		Headers:       env.Headers,
		PayloadSHA256: env.PayloadSHA256,
		KeyID:         env.KeyID,
		APIVersion:    env.APIVersion,
		TraceLink:     env.TraceLink,
		State:         webhooks.StatePending,
		NextAttemptAt: env.ReceivedAt,
		LastSeenAt:    env.ReceivedAt,
		OccurredAt:    env.OccurredAt,
		ReceivedAt:    env.ReceivedAt,
		UpdatedAt:     env.ReceivedAt,
	}
	for _, j := range env.Jobs {
		if j.Handler == "" {
			it.Priority = j.Priority
		}
	}
	return it
}

// leasedItem returns want as an acquisition at now for d must leave it.
func leasedItem(want webhooks.Item, now time.Time, d time.Duration) webhooks.Item {
	want.State = webhooks.StateLeased
	want.Attempts++
	want.LeaseExpiresAt = now.Add(d)
	want.NextAttemptAt = now.Add(d)
	want.UpdatedAt = now
	return want
}

// succeededItem returns the leased item want as settling it succeeded at
// now must leave it: its last error cleared.
func succeededItem(want webhooks.Item, now time.Time) webhooks.Item {
	want.State = webhooks.StateSucceeded
	want.LastError = nil
	want.CompletedAt = now
	want.UpdatedAt = now
	want.LeaseExpiresAt = time.Time{}
	want.NextAttemptAt = time.Time{}
	return want
}

// mustEnqueue enqueues env and requires the outcome EnqueueNew.
func mustEnqueue(t *testing.T, s webhooks.InboxStore, env webhooks.Envelope) {
	t.Helper()
	res, err := s.Enqueue(t.Context(), env)
	if err != nil {
		t.Fatalf("Enqueue(%s): %v; want no error", env.Key, err)
	}
	if res.Outcome != webhooks.EnqueueNew {
		t.Fatalf("Enqueue(%s) of a new key: outcome %v, want %v", env.Key, res.Outcome, webhooks.EnqueueNew)
	}
}

// acquire calls Acquire(Now: now, LeaseDuration: d, Max: max), as the
// worker named worker running version version.
func acquire(t *testing.T, s webhooks.InboxStore, now time.Time, d time.Duration, max int) ([]*webhooks.Lease, error) {
	t.Helper()
	return s.Acquire(t.Context(), webhooks.AcquireRequest{Now: now, LeaseDuration: d, Max: max, Worker: worker, Version: version})
}

// worker and version name the processor the suite's acquisitions come
// from, for the attempt history.
const (
	worker  = "storetest-host:4242"
	version = "v1.2.3"
)

// mustAcquire requires Acquire(now, d, Max 1) to lease an item.
func mustAcquire(t *testing.T, s webhooks.InboxStore, now time.Time, d time.Duration) *webhooks.Lease {
	t.Helper()
	leases, err := acquire(t, s, now, d, 1)
	if err != nil {
		t.Fatalf("Acquire(Now %s, LeaseDuration %v, Max 1): %v; want no error", fmtTime(now), d, err)
	}
	switch {
	case len(leases) == 0:
		t.Fatalf("Acquire(Now %s, LeaseDuration %v, Max 1) returned no lease; want a lease on a due item", fmtTime(now), d)
	case len(leases) > 1:
		t.Fatalf("Acquire(Max 1) returned %d leases; want at most 1", len(leases))
	case leases[0] == nil:
		t.Fatalf("Acquire(Max 1) returned a nil *Lease; want a lease")
	}
	return leases[0]
}

// mustAcquireKey requires Acquire(now, d, Max 1) to lease the item k.
func mustAcquireKey(t *testing.T, s webhooks.InboxStore, k webhooks.InboxKey, now time.Time, d time.Duration) *webhooks.Lease {
	t.Helper()
	l := mustAcquire(t, s, now, d)
	if l.Key() != k {
		t.Fatalf("Acquire(Now %s) leased %s; want %s", fmtTime(now), l.Key(), k)
	}
	return l
}

// wantNothingDue requires Acquire(now, Max 10) to lease nothing.
func wantNothingDue(t *testing.T, s webhooks.InboxStore, now time.Time, why string) {
	t.Helper()
	leases, err := acquire(t, s, now, leaseFor, 10)
	if err != nil {
		t.Fatalf("Acquire(Now %s): %v; want no leases and no error because %s", fmtTime(now), err, why)
	}
	for _, l := range leases {
		t.Fatalf("Acquire(Now %s) leased %s (attempt %d); want nothing because %s", fmtTime(now), l.Key(), l.Attempt, why)
	}
}

// mustGet returns the stored item k.
func mustGet(t *testing.T, s ops.Store, k webhooks.InboxKey) webhooks.Item {
	t.Helper()
	return mustDetail(t, s, k).Item
}

// mustDetail returns the stored item k with its history.
func mustDetail(t *testing.T, s ops.Store, k webhooks.InboxKey) ops.Detail {
	t.Helper()
	d, err := s.Get(t.Context(), k)
	if err != nil {
		t.Fatalf("Get(%s): %v; want the item", k, err)
	}
	return d
}

// The pipeline's cases look at what the pipeline sees (Enqueue's results,
// the leases Acquire returns, what is due when, the errors of Settle and
// ExtendLease) and, when the store is an ops.Store, at the stored items
// too, through the helpers below; they check nothing more of a store that
// is not.

// stored returns the stored item k of an ops.Store, and the zero Item of
// any other store, for checkStored to compare with later.
func stored(t *testing.T, s webhooks.InboxStore, k webhooks.InboxKey) webhooks.Item {
	t.Helper()
	if o, ok := s.(ops.Store); ok {
		return mustGet(t, o, k)
	}
	return webhooks.Item{}
}

// checkStored requires the stored item to equal want, when the store is
// an ops.Store.
func checkStored(t *testing.T, s webhooks.InboxStore, want webhooks.Item, when string) {
	t.Helper()
	if o, ok := s.(ops.Store); ok {
		checkItem(t, "Get("+want.Key.String()+") "+when, mustGet(t, o, want.Key), want)
	}
}

// wantAttempts requires the stored item k to count n attempts, when the
// store is an ops.Store.
func wantAttempts(t *testing.T, s webhooks.InboxStore, k webhooks.InboxKey, n int, when string) {
	t.Helper()
	if o, ok := s.(ops.Store); ok {
		if got := mustGet(t, o, k).Attempts; got != n {
			t.Errorf("Get(%s).Attempts %s = %d; want %d", fmtKey(k), when, got, n)
		}
	}
}

// wantLeaseLost requires err to wrap webhooks.ErrLeaseLost.
func wantLeaseLost(t *testing.T, err error, call string) {
	t.Helper()
	if !errors.Is(err, webhooks.ErrLeaseLost) {
		t.Errorf("%s: error %v; want an error wrapping webhooks.ErrLeaseLost", call, err)
	}
}

// wantAlreadySettled requires err to wrap webhooks.ErrAlreadySettled.
func wantAlreadySettled(t *testing.T, err error, call string) {
	t.Helper()
	if !errors.Is(err, webhooks.ErrAlreadySettled) {
		t.Errorf("%s: error %v; want an error wrapping webhooks.ErrAlreadySettled", call, err)
	}
}

// transient and permanent are the failures cases record.
var (
	transient = webhooks.Failure{Class: webhooks.FailureError, Message: "upstream returned 503", Transient: true}
	permanent = webhooks.Failure{Class: webhooks.FailurePermanent, Message: "invoice does not exist"}
)

// succeed, retry, deadLetter and abandon are the settlements of l at now;
// retry is due again at retryAt.
func succeed(l *webhooks.Lease, now time.Time) webhooks.Settlement {
	return webhooks.Settlement{Lease: l, Outcome: webhooks.AttemptSucceeded, Now: now}
}

func retry(l *webhooks.Lease, f webhooks.Failure, retryAt, now time.Time) webhooks.Settlement {
	return webhooks.Settlement{Lease: l, Outcome: webhooks.AttemptRetried, Failure: f, RetryAt: retryAt, Now: now}
}

func deadLetter(l *webhooks.Lease, f webhooks.Failure, now time.Time) webhooks.Settlement {
	return webhooks.Settlement{Lease: l, Outcome: webhooks.AttemptDeadLettered, Failure: f, Now: now}
}

func abandon(l *webhooks.Lease, now time.Time) webhooks.Settlement {
	return webhooks.Settlement{Lease: l, Outcome: webhooks.AttemptAbandoned, Now: now}
}

// mustSettle requires st to succeed.
func mustSettle(t *testing.T, s webhooks.InboxStore, st webhooks.Settlement) {
	t.Helper()
	if err := s.Settle(t.Context(), st); err != nil {
		t.Fatalf("Settle(%s of %s) with the current token: %v; want no error", st.Outcome, st.Lease.Key(), err)
	}
}

// extend calls ExtendLease(Lease: l, Now: now, Duration: d).
func extend(t *testing.T, s webhooks.InboxStore, l *webhooks.Lease, now time.Time, d time.Duration) error {
	t.Helper()
	return s.ExtendLease(t.Context(), webhooks.ExtendRequest{Lease: l, Now: now, Duration: d})
}

// makeDead enqueues env and dead-letters it at deadAt (its only attempt).
// No other item may be due at deadAt.
func makeDead(t *testing.T, s webhooks.InboxStore, env webhooks.Envelope, deadAt time.Time) {
	t.Helper()
	mustEnqueue(t, s, env)
	l := mustAcquireKey(t, s, env.Key, deadAt, leaseFor)
	mustSettle(t, s, deadLetter(l, permanent, deadAt))
}
