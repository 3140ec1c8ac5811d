package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// pauseCases pin webhooks.PauseStore: a paused handler's jobs are not
// acquired; a breaker's pause lets one probe through after its cool-down.
var pauseCases = []inboxCase{
	{"OperatorPause", testOperatorPause},
	{"BreakerProbe", testBreakerProbe},
	{"ProbeWaitsForRunningLeases", testProbeWaitsForRunningLeases},
	{"OneProbeAmongCallers", testOneProbeAmongCallers},
	{"BreakerOpensProbesCloses", testBreakerOpensProbesCloses},
}

func pauseOf(handler string, cause webhooks.PauseCause, now, until time.Time) webhooks.PauseRequest {
	return webhooks.PauseRequest{Handler: handler, Cause: cause, Actor: "ops@example.com", Reason: "downstream maintenance", Now: now, Until: until}
}

func resumeOf(handler string, cause webhooks.PauseCause, now time.Time) webhooks.ResumeRequest {
	return webhooks.ResumeRequest{Handler: handler, Cause: cause, Actor: "ops@example.com", Reason: "maintenance over", Now: now}
}

func mustPauses(t *testing.T, s webhooks.PauseStore, ended int) []webhooks.Pause {
	t.Helper()
	ps, err := s.Pauses(t.Context(), ended)
	if err != nil {
		t.Fatalf("Pauses(%d): %v", ended, err)
	}
	return ps
}

// testOperatorPause: while an operator's pause holds, Acquire leases none
// of the handler's jobs (another handler's run), which spend no attempt;
// a second pause keeps the first, a breaker cannot take its place, and a
// breaker's resume does not end it; resumed, the jobs run, on their first
// attempt; the pause and its end are in the trail, with actors and
// reasons. Mutations: the pause ignored by Acquire; a breaker's resume
// ending an operator's pause; the trail not kept.
func testOperatorPause(t *testing.T, s webhooks.InboxStore) {
	ps := s.(webhooks.PauseStore)
	enqueueJobs(t, s, "l", 3, base, ledger)
	enqueueJobs(t, s, "a", 1, base, audit)
	if err := ps.Pause(t.Context(), pauseOf(ledger, webhooks.PauseOperator, base, time.Time{})); err != nil {
		t.Fatalf("Pause(ledger): %v", err)
	}
	wantNoJobDue(t, s, ledger, at(time.Minute), "ledger is paused")
	if got := acquireFor(t, s, audit, at(time.Minute), leaseFor, 10); len(got) != 1 {
		t.Errorf("Acquire(audit) while ledger is paused leased %s; want audit's one job", leaseKeys(got))
	}
	if err := ps.Pause(t.Context(), pauseOf(ledger, webhooks.PauseOperator, at(time.Second), time.Time{})); err != nil {
		t.Errorf("Pause(ledger) again: %v; want nil, the first kept", err)
	}
	if err := ps.Pause(t.Context(), pauseOf(ledger, webhooks.PauseBreaker, at(time.Second), at(time.Hour))); !errors.Is(err, webhooks.ErrPaused) {
		t.Errorf("Pause(ledger) by a breaker while an operator paused it: %v; want webhooks.ErrPaused", err)
	}
	if err := ps.Resume(t.Context(), resumeOf(ledger, webhooks.PauseBreaker, at(time.Second))); !errors.Is(err, webhooks.ErrNotPaused) {
		t.Errorf("Resume(ledger, breaker) of an operator's pause: %v; want webhooks.ErrNotPaused", err)
	}
	if p := mustPauses(t, ps, 10); len(p) != 1 || p[0].Handler != ledger || p[0].Cause != webhooks.PauseOperator ||
		!p[0].Since.Equal(base) || p[0].Actor != "ops@example.com" || p[0].Reason != "downstream maintenance" || !p[0].EndedAt.IsZero() {
		t.Errorf("Pauses while ledger is paused: %+v; want ledger's operator pause since %s, in force", p, fmtTime(base))
	}
	if o, ok := s.(opsStore); ok {
		if st := mustStats(t, o, at(time.Minute)); len(st.Paused) != 1 || st.Paused[0].Handler != ledger || st.Paused[0].Cause != webhooks.PauseOperator {
			t.Errorf("Stats.Paused while ledger is paused: %+v; want ledger's operator pause", st.Paused)
		}
	}
	wantNoJobDue(t, s, ledger, at(time.Hour), "ledger is still paused")
	if err := ps.Resume(t.Context(), resumeOf(ledger, webhooks.PauseOperator, at(2*time.Hour))); err != nil {
		t.Fatalf("Resume(ledger): %v", err)
	}
	got := acquireFor(t, s, ledger, at(2*time.Hour), leaseFor, 10)
	if len(got) != 3 {
		t.Fatalf("Acquire(ledger) after its resume leased %s; want its 3 jobs", leaseKeys(got))
	}
	for _, l := range got {
		if l.Attempt != 1 || l.Probe {
			t.Errorf("the lease on %s after the resume: Attempt %d, Probe %t; want 1, false", l.Key(), l.Attempt, l.Probe)
		}
	}
	if err := ps.Resume(t.Context(), resumeOf(ledger, webhooks.PauseOperator, at(2*time.Hour))); !errors.Is(err, webhooks.ErrNotPaused) {
		t.Errorf("Resume(ledger) again: %v; want webhooks.ErrNotPaused", err)
	}
	p := mustPauses(t, ps, 10)
	if len(p) != 1 || p[0].Handler != ledger || !p[0].EndedAt.Equal(at(2*time.Hour)) || p[0].EndedBy != "ops@example.com" || p[0].EndReason != "maintenance over" {
		t.Errorf("Pauses after the resume: %+v; want ledger's pause, ended at %s by ops@example.com: maintenance over", p, fmtTime(at(2*time.Hour)))
	}
	if p := mustPauses(t, ps, 0); len(p) != 0 {
		t.Errorf("Pauses(0) after the resume: %+v; want none", p)
	}
	if o, ok := s.(opsStore); ok {
		if st := mustStats(t, o, at(3*time.Hour)); len(st.Paused) != 0 {
			t.Errorf("Stats.Paused after the resume: %+v; want none", st.Paused)
		}
	}
}

// testBreakerProbe: a breaker's pause holds for its cool-down; then one
// acquisition leases one job, the probe, and no other is leased while
// the probe's lease holds; once it expires, another probe; a second
// breaker's pause (the probe failed) starts a new cool-down; an
// operator's pause takes the breaker's place; a breaker's resume ends
// only a breaker's pause. No probe is claimed while no job is due.
// Mutations: no probe after the cool-down; two probes at once; the
// probe not flagged.
func testBreakerProbe(t *testing.T, s webhooks.InboxStore) {
	ps := s.(webhooks.PauseStore)
	if err := ps.Pause(t.Context(), pauseOf(ledger, webhooks.PauseBreaker, base, at(10*time.Second))); err != nil {
		t.Fatalf("Pause(ledger, breaker): %v", err)
	}
	wantNoJobDue(t, s, ledger, at(20*time.Second), "nothing is due: no probe")
	enqueueJobs(t, s, "l", 4, at(time.Second), ledger)
	wantNoJobDue(t, s, ledger, at(5*time.Second), "the cool-down holds")
	probe := acquireFor(t, s, ledger, at(20*time.Second), leaseFor, 10)
	if len(probe) != 1 || !probe[0].Probe {
		t.Fatalf("Acquire(ledger) after the cool-down leased %s (probe %v); want one lease, the probe", leaseKeys(probe), len(probe) == 1 && probe[0].Probe)
	}
	wantNoJobDue(t, s, ledger, at(30*time.Second), "the probe runs")
	if p := mustPauses(t, ps, 0); len(p) != 1 || !p[0].ProbeUntil.Equal(at(20*time.Second).Add(leaseFor)) {
		t.Errorf("Pauses while the probe runs: %+v; want ledger's breaker, ProbeUntil %s", p, fmtTime(at(20*time.Second).Add(leaseFor)))
	}
	again := acquireFor(t, s, ledger, at(20*time.Second).Add(leaseFor), leaseFor, 10)
	if len(again) != 1 || !again[0].Probe {
		t.Fatalf("Acquire(ledger) once the probe's lease expired leased %s; want one probe", leaseKeys(again))
	}
	now := at(20 * time.Second).Add(leaseFor)
	if err := ps.Pause(t.Context(), pauseOf(ledger, webhooks.PauseBreaker, now, now.Add(time.Minute))); err != nil {
		t.Fatalf("Pause(ledger, breaker) again, the probe failed: %v", err)
	}
	wantNoJobDue(t, s, ledger, now.Add(time.Minute-time.Second), "a new cool-down holds, until a minute after the probe failed")
	if got := acquireFor(t, s, ledger, now.Add(time.Minute), leaseFor, 10); len(got) != 1 || !got[0].Probe {
		t.Fatalf("Acquire(ledger) after the second cool-down leased %s; want one probe", leaseKeys(got))
	}
	if err := ps.Pause(t.Context(), pauseOf(ledger, webhooks.PauseOperator, now.Add(time.Minute), time.Time{})); err != nil {
		t.Fatalf("Pause(ledger) by an operator over the breaker: %v", err)
	}
	if err := ps.Resume(t.Context(), resumeOf(ledger, webhooks.PauseBreaker, now.Add(time.Minute))); !errors.Is(err, webhooks.ErrNotPaused) {
		t.Errorf("Resume(ledger, breaker) after an operator's pause took its place: %v; want webhooks.ErrNotPaused", err)
	}
	p := mustPauses(t, ps, 10)
	causes := make([]webhooks.PauseCause, len(p))
	for i := range p {
		causes[i] = p[i].Cause
	}
	if len(p) != 3 || p[0].Cause != webhooks.PauseOperator || !p[0].EndedAt.IsZero() || p[1].Cause != webhooks.PauseBreaker || p[1].EndedAt.IsZero() ||
		p[2].Cause != webhooks.PauseBreaker || !p[2].EndedAt.Equal(now) || !p[1].Until.Equal(now.Add(time.Minute)) {
		t.Errorf("Pauses: %+v (causes %v); want the operator's in force, then the second breaker's and the first, ended", p, causes)
	}
}

// testProbeWaitsForRunningLeases: after a breaker's cool-down, no probe
// is leased while a lease of the handler is unexpired (a job leased
// before the pause, or the probe itself, extended past its first
// expiry); a repeat of the probe's acquisition says it is the probe.
// Mutations: the probe once the cool-down is over, whatever runs; a
// second probe once the first's lease is extended past ProbeUntil; the
// repeat's lease not marked.
func testProbeWaitsForRunningLeases(t *testing.T, s webhooks.InboxStore) {
	ps := s.(webhooks.PauseStore)
	enqueueJobs(t, s, "l", 3, base, ledger)
	running := acquireFor(t, s, ledger, base, leaseFor, 1)
	if err := ps.Pause(t.Context(), pauseOf(ledger, webhooks.PauseBreaker, at(time.Second), at(10*time.Second))); err != nil {
		t.Fatalf("Pause(ledger, breaker): %v", err)
	}
	wantNoJobDue(t, s, ledger, at(20*time.Second), "a job leased before the pause still runs, its lease unexpired")
	if err := extend(t, s, running[0], at(30*time.Second), leaseFor); err != nil {
		t.Fatalf("ExtendLease of the job leased before the pause: %v", err)
	}
	wantNoJobDue(t, s, ledger, base.Add(leaseFor).Add(time.Second), "that lease was extended")
	mustSettle(t, s, webhooks.Settlement{Lease: running[0], Outcome: webhooks.AttemptAbandoned, Now: at(40 * time.Second)})
	now := at(41 * time.Second)
	probe, err := s.Acquire(t.Context(), webhooks.AcquireRequest{Now: now, LeaseDuration: leaseFor, Max: 10,
		Worker: worker, Version: version, Handler: ledger, ID: "acq-probe"})
	if err != nil || len(probe) != 1 || !probe[0].Probe {
		t.Fatalf("Acquire(ledger) once nothing runs: %s, %v; want one lease, the probe", leaseKeys(probe), err)
	}
	if r, ok := s.(webhooks.AcquisitionRepeater); ok {
		again, err := r.RepeatAcquisition(t.Context(), webhooks.RepeatRequest{ID: "acq-probe", Now: now, Handler: ledger})
		if err != nil || len(again) != 1 || !again[0].Probe {
			t.Errorf("RepeatAcquisition of the probe's acquisition: %s, %v (probe %v); want the probe's lease, marked Probe", leaseKeys(again), err, len(again) == 1 && again[0].Probe)
		}
	}
	if err := extend(t, s, probe[0], now.Add(leaseFor/2), leaseFor); err != nil {
		t.Fatalf("ExtendLease of the probe: %v", err)
	}
	wantNoJobDue(t, s, ledger, now.Add(leaseFor).Add(time.Second), "the probe runs on, its lease extended past ProbeUntil")
	if got := acquireFor(t, s, ledger, now.Add(leaseFor/2).Add(leaseFor), leaseFor, 10); len(got) != 1 || !got[0].Probe {
		t.Fatalf("Acquire(ledger) once the probe's extended lease expired leased %s; want one probe", leaseKeys(got))
	}
}

// testBreakerOpensProbesCloses runs a Processor (one worker, so that no
// attempt is in flight when the breaker opens) on a handler whose
// dependency is down, with a Breaker of 3 failures and a short cool-down
// and a retry policy that would dead-letter every event within the
// outage: the breaker opens after 3 failures; no attempt starts during
// the cool-down; after it, exactly one, the probe, which fails, opens
// the breaker again and is given back uncounted; the dependency back, the next probe succeeds and
// ends the pause, and every event succeeds, none dead-lettered.
// Mutations: the Processor without its breaker (events dead-lettered);
// no probe; the probe's success not ending the pause; the failed probe
// counted.
func testBreakerOpensProbesCloses(t *testing.T, s webhooks.InboxStore) {
	ps := s.(webhooks.PauseStore)
	const events = 10
	for i := range events {
		mustEnqueue(t, s, envelope(key(fmt.Sprintf("e%02d", i)), "p", base))
	}
	d := newDependency()
	mu := &d.mu
	const coolDown = 300 * time.Millisecond
	policy := webhooks.ExponentialPolicy{MaxAttempts: 4, InitialDelay: 5 * time.Millisecond, Multiplier: 1}
	runProcessors(t, s, webhooks.Handlers{{Dispatcher: d, Breaker: webhooks.Breaker{Failures: 3, CoolDown: coolDown}}}, 1, 1,
		10*time.Millisecond, webhooks.WithRetryPolicy(policy))
	// waitPauses polls the trail until cond holds.
	waitPauses := func(why string, cond func([]webhooks.Pause) bool) []webhooks.Pause {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			if got := mustPauses(t, ps, 10); cond(got) {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 20 s, %s: Pauses %+v", why, mustPauses(t, ps, 10))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	// startsIn counts the attempts that started in [from, to).
	startsIn := func(from, to time.Time) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, at := range d.starts {
			if !at.Before(from) && at.Before(to) {
				n++
			}
		}
		return n
	}
	first := waitPauses("the breaker never opened, then opened again", func(p []webhooks.Pause) bool {
		return len(p) == 2 && p[0].EndedAt.IsZero() && !p[1].EndedAt.IsZero()
	})[1]
	if first.Cause != webhooks.PauseBreaker || !first.Until.Equal(first.Since.Add(coolDown)) {
		t.Errorf("the first pause: %+v; want a breaker's, for the cool-down (%v)", first, coolDown)
	}
	mu.Lock()
	before := len(d.starts)
	mu.Unlock()
	if n := startsIn(time.Time{}, first.Since); n != 3 || before != 4 {
		t.Errorf("attempts before the breaker opened: %d, and %d in all by the time the probe failed; want 3 (Failures), then the probe", n, before)
	}
	if n := startsIn(first.Since, first.Until); n != 0 {
		t.Errorf("attempts during the cool-down: %d; want none", n)
	}
	if n := startsIn(first.Until, first.EndedAt.Add(time.Microsecond)); n != 1 {
		t.Errorf("attempts after the cool-down, until the probe failed: %d; want 1, the probe", n)
	}
	// The failed probe was given back: its job's budget is not spent
	// (its first attempt: the count is back to 0).
	if o, ok := s.(ops.Store); ok {
		mu.Lock()
		probed := d.started[3]
		mu.Unlock()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			j := jobOf(t, mustDetail(t, o, key(probed)), "")
			if j.State == webhooks.StatePending && j.Attempts == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the failed probe's job %s: %s with %d attempts; want pending with 0: a probe's failure is given back, not counted", probed, j.State, j.Attempts)
			}
		}
	}
	d.down.Store(false)
	trail := waitPauses("the breaker never closed", func(p []webhooks.Pause) bool {
		return len(p) == 2 && !p[0].EndedAt.IsZero() && !p[1].EndedAt.IsZero()
	})
	second := trail[0]
	if n := startsIn(second.Since, second.Until); n != 0 {
		t.Errorf("attempts during the second cool-down: %d; want none", n)
	}
	if second.EndReason != "the probe succeeded" {
		t.Errorf("the second pause ended with %q; want \"the probe succeeded\"", second.EndReason)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := len(d.handled)
		mu.Unlock()
		if n == events {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s, %d of %d events were handled", n, events)
		}
		time.Sleep(5 * time.Millisecond)
	}
	waitSucceeded(t, s, "e%02d", events, "the dependency returned: none dead-lettered")
}

// waitSucceeded waits until the default handler's jobs of the n events
// format names (with 0 to n-1) have succeeded, on a store that is an
// ops.Store: their handlers ran, and their settlements may still be on
// their way. It fails t with the state of the first that has not, after
// 10 s.
func waitSucceeded(t *testing.T, s webhooks.InboxStore, format string, n int, why string) {
	t.Helper()
	o, ok := s.(ops.Store)
	if !ok {
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; i < n; {
		id := fmt.Sprintf(format, i)
		j := jobOf(t, mustDetail(t, o, key(id)), "")
		switch {
		case j.State == webhooks.StateSucceeded:
			i++
		case j.State == webhooks.StateDead || time.Now().After(deadline):
			t.Fatalf("Get(%s).Jobs[\"\"].State = %s; want succeeded: %s", id, j.State, why)
		default:
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// testOneProbeAmongCallers: after a breaker's cool-down, eight callers
// acquire the handler's jobs at once: one lease in all, the probe.
// Mutation: the probe claimed without looking at a concurrent claim.
func testOneProbeAmongCallers(t *testing.T, s webhooks.InboxStore) {
	ps := s.(webhooks.PauseStore)
	enqueueJobs(t, s, "l", 10, base, ledger)
	if err := ps.Pause(t.Context(), pauseOf(ledger, webhooks.PauseBreaker, base, at(time.Second))); err != nil {
		t.Fatalf("Pause(ledger, breaker): %v", err)
	}
	var (
		wg             sync.WaitGroup
		leased, probes atomic.Int64
	)
	for range 8 {
		wg.Go(func() {
			leases, err := s.Acquire(t.Context(), webhooks.AcquireRequest{Now: at(2 * time.Second), LeaseDuration: leaseFor, Max: 10,
				Worker: worker, Version: version, Handler: ledger})
			if err != nil {
				t.Errorf("Acquire: %v", err)
			}
			leased.Add(int64(len(leases)))
			for _, l := range leases {
				if l.Probe {
					probes.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if leased.Load() != 1 || probes.Load() != 1 {
		t.Errorf("eight callers after the cool-down leased %d, %d of them probes; want one lease, the probe", leased.Load(), probes.Load())
	}
}

// testBreakerRidesOutAnOutage: two Processors of four workers run a
// handler with a Breaker while events keep arriving; its dependency is
// down for outage (1 s when zero), with a retry policy that gives up
// within a second, so without the breaker most events would die. None
// does: the breaker holds them while it is down, and every event
// succeeds once it is back. Mutation: no Breaker (events dead-lettered).
func testBreakerRidesOutAnOutage(t *testing.T, s webhooks.InboxStore, outage time.Duration) {
	if outage == 0 {
		outage = time.Second
	}
	d := newDependency()
	mu := &d.mu
	policy := webhooks.ExponentialPolicy{MaxAttempts: 4, InitialDelay: 50 * time.Millisecond, Multiplier: 2}
	runProcessors(t, s, webhooks.Handlers{{Dispatcher: d, Breaker: webhooks.Breaker{Failures: 3, CoolDown: 200 * time.Millisecond}}}, 2, 4,
		10*time.Millisecond, webhooks.WithRetryPolicy(policy))
	// The load: an event every 10 ms through the outage and a second
	// after it.
	var sent int
	end := time.Now().Add(outage + time.Second)
	back := time.Now().Add(outage)
	for time.Now().Before(end) {
		if d.down.Load() && !time.Now().Before(back) {
			d.down.Store(false)
		}
		mustEnqueue(t, s, envelope(key(fmt.Sprintf("e%05d", sent)), "p", time.Now()))
		sent++
		time.Sleep(10 * time.Millisecond)
	}
	o, _ := s.(ops.Store)
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(d.handled)
		mu.Unlock()
		if n == sent {
			break
		}
		if o != nil {
			if page, err := o.List(t.Context(), ops.Query{Limit: 1}); err != nil || len(page.Items) > 0 {
				t.Fatalf("after the outage, with %d of %d events handled: List(dead letters) = %+v, %v; want none", n, sent, page.Items, err)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after the outage, %d of %d events were handled", n, sent)
		}
		time.Sleep(10 * time.Millisecond)
	}
	waitSucceeded(t, s, "e%05d", sent, "the breaker held it through the outage")
}

// dependency is a breaker case's downstream: a Dispatcher that fails
// while down (from the start until the case stores false), noting when
// each attempt started and which event it ran, and the events handled
// once it is back.
type dependency struct {
	down    atomic.Bool
	mu      sync.Mutex
	starts  []time.Time
	started []string // the event IDs, in the order their attempts started
	handled map[string]bool
}

func newDependency() *dependency {
	d := &dependency{handled: map[string]bool{}}
	d.down.Store(true)
	return d
}

// Dispatch fails while d is down, and handles ev otherwise.
func (d *dependency) Dispatch(_ context.Context, ev webhooks.Event) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.starts = append(d.starts, time.Now())
	d.started = append(d.started, ev.ID)
	if d.down.Load() {
		return errors.New("dependency unavailable")
	}
	d.handled[ev.ID] = true
	return nil
}
