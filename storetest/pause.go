package storetest

import (
	"errors"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

// pauseCases pin webhooks.PauseStore: a paused handler's jobs are not
// acquired; a breaker's pause lets one probe through after its cool-down.
var pauseCases = []inboxCase{
	{"OperatorPause", testOperatorPause},
	{"BreakerProbe", testBreakerProbe},
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
