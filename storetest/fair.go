package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

// fairCases pin webhooks.FlowSupport.Fair: a Fair acquisition leases by
// tenant in turns, from where the handler's last one stopped.
var fairCases = []inboxCase{
	{"NewcomerBesideBacklog", testFairNewcomerBesideBacklog},
	{"TurnsAmongTenants", testFairTurns},
	{"RotationOverAcquisitions", testFairRotation},
	{"VisitsBounded", testFairVisitsBounded},
	{"WithinLimitsAndPauses", testFairWithinLimits},
	{"OrderedHeadsOnly", testFairOrderedHeads},
}

// hasFair reports whether s leases by tenant in turns.
func hasFair(s webhooks.InboxStore) bool { return webhooks.FlowOf(s).Fair }

// tenantKey is the key of event id of tenant (provider acme).
func tenantKey(tenant, id string) webhooks.InboxKey {
	return webhooks.InboxKey{Provider: "acme", Tenant: tenant, EventID: id}
}

// acquireFair leases up to max of handler's jobs at now with Fair (and l).
func acquireFair(t *testing.T, s webhooks.InboxStore, handler string, now time.Time, max int, l webhooks.Limits) []*webhooks.Lease {
	t.Helper()
	leases, err := s.Acquire(t.Context(), webhooks.AcquireRequest{Now: now, LeaseDuration: leaseFor, Max: max,
		Worker: worker, Version: version, Handler: handler, Limits: l, Fair: true})
	if err != nil {
		t.Fatalf("Acquire(Handler %q, Now %s, Max %d, Limits %+v, Fair): %v; want no error", handler, fmtTime(now), max, l, err)
	}
	return leases
}

// leaseIDs returns the event IDs of leases, in their order.
func leaseIDs(leases []*webhooks.Lease) []string {
	ids := make([]string, len(leases))
	for i, l := range leases {
		ids[i] = l.Item.Key.EventID
	}
	return ids
}

// enqueueTenant enqueues n events of tenant for handler, tenant-0…, the
// i-th received at from+i ms.
func enqueueTenant(t *testing.T, s webhooks.InboxStore, tenant string, n int, from time.Time, handlers ...string) {
	t.Helper()
	for i := range n {
		mustEnqueue(t, s, jobsEnvelope(tenantKey(tenant, fmt.Sprintf("%s-%d", tenant, i)), "p", from.Add(time.Duration(i)*time.Millisecond), handlers...))
	}
}

// testFairNewcomerBesideBacklog: beside one tenant's backlog, stored
// first, another tenant's single event is leased by the first Fair
// acquisition after it, with the backlog's longest due; a plain
// acquisition of another handler of the same events leases the backlog
// first (the case's events are as it says). Mutation: Fair ignored.
func testFairNewcomerBesideBacklog(t *testing.T, s webhooks.InboxStore) {
	enqueueTenant(t, s, "big", 200, base, ledger, audit)
	enqueueTenant(t, s, "small", 1, at(time.Hour), ledger, audit)
	now := at(2 * time.Hour)
	if ids := leaseIDs(acquireFor(t, s, audit, now, leaseFor, 4)); slices.Contains(ids, "small-0") {
		t.Fatalf("plain Acquire(Max 4) leased %v; want the backlog's four longest due, not small-0 (received an hour after them)", ids)
	}
	got := leaseIDs(acquireFair(t, s, ledger, now, 4, webhooks.Limits{}))
	if want := []string{"big-0", "small-0", "big-1", "big-2"}; !slices.Equal(got, want) {
		t.Errorf("Fair Acquire(Max 4) beside a backlog of 200 of tenant big leased %v; want %v: big's longest due, small's event in its turn, then big's next", got, want)
	}
}

// testFairTurns: a Fair acquisition leases each tenant's longest due in
// tenant order, then each one's second, and so on; a tenant with fewer
// drops out of the turns; the next acquisition starts after the last
// tenant visited, and leases what is left. Mutations: the turns by due
// time, a tenant's jobs in another order, the cursor not kept.
func testFairTurns(t *testing.T, s webhooks.InboxStore) {
	enqueueTenant(t, s, "c", 1, base, ledger)
	enqueueTenant(t, s, "a", 3, at(time.Second), ledger)
	enqueueTenant(t, s, "b", 3, at(2*time.Second), ledger)
	now := at(time.Minute)
	got := leaseIDs(acquireFair(t, s, ledger, now, 6, webhooks.Limits{}))
	if want := []string{"a-0", "b-0", "c-0", "a-1", "b-1", "a-2"}; !slices.Equal(got, want) {
		t.Errorf("Fair Acquire(Max 6) of tenants a (3 due), b (3), c (1) leased %v; want %v: a turn of each tenant, in tenant order, until Max", got, want)
	}
	got = leaseIDs(acquireFair(t, s, ledger, now, 6, webhooks.Limits{}))
	if want := []string{"b-2"}; !slices.Equal(got, want) {
		t.Errorf("the next Fair Acquire(Max 6) leased %v; want %v, all that is left", got, want)
	}
}

// testFairRotation: with more tenants waiting than Max, each Fair
// acquisition goes on from the tenant after the one the last one visited
// last, coming round to the first: every tenant is served within
// tenants/Max acquisitions (rounded up). Mutation: every acquisition from
// the first tenant.
func testFairRotation(t *testing.T, s webhooks.InboxStore) {
	for i := range 7 {
		enqueueTenant(t, s, fmt.Sprintf("t%d", i), 2, at(time.Duration(i)*time.Second), ledger)
	}
	now := at(time.Minute)
	want := [][]string{{"t0-0", "t1-0", "t2-0"}, {"t3-0", "t4-0", "t5-0"}, {"t6-0", "t0-1", "t1-1"}, {"t2-1", "t3-1", "t4-1"}}
	for i, w := range want {
		if got := leaseIDs(acquireFair(t, s, ledger, now, 3, webhooks.Limits{})); !slices.Equal(got, w) {
			t.Fatalf("Fair Acquire(Max 3) number %d over 7 tenants of 2 due jobs each leased %v; want %v", i+1, got, w)
		}
	}
}

// testFairVisitsBounded: a Fair acquisition visits FairVisits tenants at
// most, those without a due job included, and the next goes on after the
// last it visited. Mutations: no bound; the cursor left on the last
// tenant found.
func testFairVisitsBounded(t *testing.T, s webhooks.InboxStore) {
	req := webhooks.AcquireRequest{Max: 1}
	visits := req.FairVisits()
	now := at(time.Minute)
	for i := range visits {
		enqueueTenant(t, s, fmt.Sprintf("idle%03d", i), 1, at(time.Hour), ledger) // due after now
	}
	enqueueTenant(t, s, "zdue", 1, base, ledger)
	if got := leaseIDs(acquireFair(t, s, ledger, now, 1, webhooks.Limits{})); len(got) != 0 {
		t.Fatalf("Fair Acquire(Max 1) leased %v past %d tenants with nothing due; want none, FairVisits(Max 1) being %d", got, visits, visits)
	}
	if got := leaseIDs(acquireFair(t, s, ledger, now, 1, webhooks.Limits{})); !slices.Equal(got, []string{"zdue-0"}) {
		t.Fatalf("the next Fair Acquire(Max 1) leased %v; want [zdue-0], the tenant after the last visited", got)
	}
}

// testFairWithinLimits: a Fair acquisition leases no more than Limits
// and a pause allow, in turns, and visits only as many tenants as it may
// lease, so that a cap does not skip tenants. Mutations: Fair bypassing
// Limits; the walk finding Max tenants whatever the cap.
func testFairWithinLimits(t *testing.T, s webhooks.InboxStore) {
	if !hasLimits(s) {
		t.Skip("the store does not keep Limits")
	}
	enqueueTenant(t, s, "a", 5, base, ledger)
	enqueueTenant(t, s, "b", 5, at(time.Second), ledger)
	now := at(time.Minute)
	if got := leaseIDs(acquireFair(t, s, ledger, now, 10, webhooks.Limits{MaxRunning: 2})); !slices.Equal(got, []string{"a-0", "b-0"}) {
		t.Errorf("Fair Acquire(Max 10, MaxRunning 2) leased %v; want [a-0 b-0]", got)
	}
	if got := acquireFair(t, s, ledger, now, 10, webhooks.Limits{MaxRunning: 2}); len(got) != 0 {
		t.Errorf("Fair Acquire(Max 10, MaxRunning 2) beside two running leased %v; want none", leaseKeys(got))
	}
	// Under a cap of one, the turns go round one tenant an acquisition:
	// each visits as many tenants as it may lease.
	for _, tenant := range []string{"x", "y", "z"} {
		enqueueTenant(t, s, tenant, 2, base, audit)
	}
	for i, want := range []string{"x-0", "y-0", "z-0", "x-1"} {
		got := acquireFair(t, s, audit, now, 10, webhooks.Limits{MaxRunning: 1})
		if len(got) != 1 || got[0].Item.Key.EventID != want {
			t.Fatalf("Fair Acquire(Max 10, MaxRunning 1) number %d over tenants x, y, z leased %v; want [%s]: one tenant a turn, in order", i+1, leaseIDs(got), want)
		}
		mustSettle(t, s, succeed(got[0], now))
	}
	ps, ok := s.(webhooks.PauseStore)
	if !ok {
		return
	}
	if err := ps.Pause(t.Context(), webhooks.PauseRequest{Handler: ledger, Cause: webhooks.PauseOperator, Actor: "op", Reason: "test", Now: now}); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	if got := acquireFair(t, s, ledger, now, 10, webhooks.Limits{}); len(got) != 0 {
		t.Errorf("Fair Acquire of a paused handler leased %v; want none", leaseKeys(got))
	}
}

// testFairOrderedHeads: a Fair acquisition of an ordered handler leases
// the heads of the keys only. Mutation: waiting jobs in the turns.
func testFairOrderedHeads(t *testing.T, s webhooks.InboxStore) {
	if !hasOrderingKeys(s) {
		t.Skip("the store does not run ordering keys")
	}
	for _, e := range []struct {
		tenant, id string
		version    int64
	}{{"a", "a-1", 1}, {"a", "a-2", 2}, {"b", "b-1", 1}} {
		env := ordered(e.id, "k", e.version, base.Add(time.Duration(e.version)*time.Second))
		env.Key.Tenant = e.tenant
		mustEnqueue(t, s, env)
	}
	got := leaseIDs(acquireFair(t, s, ledger, at(time.Minute), 10, webhooks.Limits{}))
	if want := []string{"a-1", "b-1"}; !slices.Equal(got, want) {
		t.Errorf("Fair Acquire of an ordered handler leased %v; want %v, the key heads of tenants a and b", got, want)
	}
}

// watchedStore notes when each acquisition made on its store starts and
// returns, when the watched event was stored, and which acquisition
// leased it, on one clock of events (a counter), so that a case can tell
// the acquisitions that certainly ran after the event was stored and
// before the one that leased it.
type watchedStore struct {
	webhooks.InboxStore
	watch string // an event ID

	mu           sync.Mutex
	clock        int   // events noted so far
	starts, ends []int // by acquisition: when it started and returned (-1 before)
	storedAt     int   // when the watched event was stored; -1 before
	leasedBy     int   // the acquisition that leased it; -1 before
}

// Flow passes the store's on.
func (w *watchedStore) Flow() webhooks.FlowSupport { return webhooks.FlowOf(w.InboxStore) }

// Acquire notes when the acquisition starts and returns, and whether its
// leases have the watched event.
func (w *watchedStore) Acquire(ctx context.Context, req webhooks.AcquireRequest) ([]*webhooks.Lease, error) {
	w.mu.Lock()
	n := len(w.starts)
	w.starts, w.ends = append(w.starts, w.clock), append(w.ends, -1)
	w.clock++
	w.mu.Unlock()
	leases, err := w.InboxStore.Acquire(ctx, req)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ends[n] = w.clock
	w.clock++
	for _, l := range leases {
		if l.Item.Key.EventID == w.watch {
			w.leasedBy = n
		}
	}
	return leases, err
}

// stored notes that the watched event is stored.
func (w *watchedStore) stored() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.storedAt = w.clock
	w.clock++
}

// passedOver returns the acquisitions that started after the watched
// event was stored and returned before the one that leased it started:
// they ran after it was stored, and did not lease it.
func (w *watchedStore) passedOver() []int {
	var over []int
	for i, start := range w.starts {
		if start > w.storedAt && w.ends[i] >= 0 && w.ends[i] < w.starts[w.leasedBy] {
			over = append(over, i)
		}
	}
	return over
}

// testFairProcessors: two Processors of a Fair handler work through one
// tenant's backlog (Features.FairBacklog events); another tenant's single
// event, stored while they do, is leased by the first acquisition that
// runs after it was stored: no acquisition that started after it was
// stored and returned before the one that leased it started passed it
// over (two acquisitions that overlap may run in either order).
// Mutation: the Processor acquires without its handler's Fair.
func testFairProcessors(t *testing.T, s webhooks.InboxStore, backlog int) {
	switch {
	case backlog > 0:
	case testing.Short():
		backlog = 2_000
	default:
		backlog = 100_000
	}
	enqueueConcurrently(t, s, backlog, func(i int) webhooks.Envelope {
		return envelope(tenantKey("big", fmt.Sprintf("big-%06d", i)), "p", base.Add(time.Duration(i)*time.Microsecond))
	})
	w := &watchedStore{InboxStore: s, watch: "newcomer", storedAt: -1, leasedBy: -1}
	var handled atomic.Int64
	done := make(chan struct{})
	d := webhooks.DispatcherFunc(func(_ context.Context, ev webhooks.Event) error {
		if ev.Key().EventID == w.watch {
			close(done)
		}
		handled.Add(1)
		time.Sleep(time.Millisecond)
		return nil
	})
	runProcessors(t, w, webhooks.Handlers{{Dispatcher: d, Fair: true}}, 2, 4, 20*time.Millisecond)
	for deadline := time.Now().Add(time.Minute); handled.Load() < 50; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the Processors handled %d events of the backlog in a minute; want 50 before the newcomer is stored", handled.Load())
		}
	}
	// Received a second ago: due for every acquisition that starts after
	// it is stored, whatever Now the Processor took before calling
	// Acquire, and still the youngest of the backlog's.
	mustEnqueue(t, s, envelope(tenantKey("small", w.watch), "p", time.Now().Add(-time.Second)))
	w.stored()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("the newcomer was not handled within a minute beside a backlog of %d (%d handled)", backlog, handled.Load())
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.leasedBy < 0 {
		t.Fatal("the newcomer was handled but no Acquire returned its lease")
	}
	if over := w.passedOver(); len(over) > 0 {
		t.Errorf("%d acquisitions ran after the newcomer was stored and before the one that leased it (number %d of %d) started, and passed it over, beside the backlog of %d",
			len(over), w.leasedBy, len(w.starts), backlog)
	}
}

// enqueueConcurrently enqueues the n envelopes env makes, from eight
// goroutines.
func enqueueConcurrently(t *testing.T, s webhooks.InboxStore, n int, env func(i int) webhooks.Envelope) {
	t.Helper()
	var (
		next   atomic.Int64
		failed atomic.Value
		wg     sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n && failed.Load() == nil; i = int(next.Add(1) - 1) {
				if res, err := s.Enqueue(t.Context(), env(i)); err != nil || res.Outcome != webhooks.EnqueueNew {
					failed.Store(fmt.Sprintf("Enqueue %d: %v, %v; want new", i, res.Outcome, err))
				}
			}
		})
	}
	wg.Wait()
	if msg := failed.Load(); msg != nil {
		t.Fatal(msg)
	}
}
