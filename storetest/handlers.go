package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// handlerCases pin fan-out (webhooks.FanOutSupport.Handlers): an event is
// stored once, with one job per handler, and each job has its own state,
// attempts, lease, history and dead letter. The cases that look at what
// operators see run only on an ops.Store (see handlerOpsCases).
var handlerCases = []inboxCase{
	{"TwoJobsOneEvent", testTwoJobsOneEvent},
	{"IndependentOutcomes", testIndependentOutcomes},
	{"DuplicateAddsNoJob", testDuplicateAddsNoJob},
	{"FencedPerJob", testFencedPerJob},
	{"RedeliveryReplaysDeadJobs", testRedeliveryReplaysDeadJobs},
	{"CheckRefusesBadJobs", testCheckRefusesBadJobs},
}

// hasHandlers reports whether s keeps one job per handler.
func hasHandlers(s webhooks.InboxStore) bool { return webhooks.FanOutOf(s).Handlers }

// The handlers the fan-out cases name.
const (
	ledger = "ledger"
	audit  = "audit"
)

// jobsEnvelope returns envelope(k, payload, receivedAt) stored for the
// unordered jobs of handlers.
func jobsEnvelope(k webhooks.InboxKey, payload string, receivedAt time.Time, handlers ...string) webhooks.Envelope {
	env := envelope(k, payload, receivedAt)
	for _, h := range handlers {
		env.Jobs = append(env.Jobs, webhooks.Job{Handler: h})
	}
	return env
}

// jobItem returns the item the contract requires of handler's job right
// after env was enqueued as new.
func jobItem(env webhooks.Envelope, handler string) webhooks.Item {
	it := enqueuedItem(env)
	it.Handler = handler
	it.Ordering = env.Ordering
	for _, j := range env.Jobs {
		if j.Handler == handler {
			it.Ordered, it.Priority = j.Ordered, j.Priority
		}
	}
	return it
}

// acquireFor calls Acquire(Now: now, LeaseDuration: d, Max: max,
// Handler: handler), as the suite's worker.
func acquireFor(t *testing.T, s webhooks.InboxStore, handler string, now time.Time, d time.Duration, max int) []*webhooks.Lease {
	t.Helper()
	leases, err := s.Acquire(t.Context(), webhooks.AcquireRequest{Now: now, LeaseDuration: d, Max: max, Worker: worker, Version: version, Handler: handler})
	if err != nil {
		t.Fatalf("Acquire(Handler %q, Now %s, Max %d): %v; want no error", handler, fmtTime(now), max, err)
	}
	for _, l := range leases {
		if l == nil {
			t.Fatalf("Acquire(Handler %q) returned a nil *Lease", handler)
		}
		if l.Item.Handler != handler {
			t.Fatalf("Acquire(Handler %q) leased %s, a job of handler %q; want only %q's jobs", handler, l.Job(), l.Item.Handler, handler)
		}
	}
	return leases
}

// mustAcquireJob requires Acquire(Handler: handler, Max 1) at now to lease
// the job of k.
func mustAcquireJob(t *testing.T, s webhooks.InboxStore, handler string, k webhooks.InboxKey, now time.Time, d time.Duration) *webhooks.Lease {
	t.Helper()
	leases := acquireFor(t, s, handler, now, d, 1)
	if len(leases) != 1 || leases[0].Key() != k {
		t.Fatalf("Acquire(Handler %q, Now %s, Max 1) leased %s; want the job of %s", handler, fmtTime(now), leaseKeys(leases), fmtKey(k))
	}
	return leases[0]
}

// wantNoJobDue requires Acquire(Handler: handler, Max 10) at now to lease
// nothing.
func wantNoJobDue(t *testing.T, s webhooks.InboxStore, handler string, now time.Time, why string) {
	t.Helper()
	if leases := acquireFor(t, s, handler, now, leaseFor, 10); len(leases) > 0 {
		t.Fatalf("Acquire(Handler %q, Now %s) leased %s; want nothing because %s", handler, fmtTime(now), leaseKeys(leases), why)
	}
}

// jobOf returns the job of handler in d, failing when d has none.
func jobOf(t *testing.T, d ops.Detail, handler string) ops.Job {
	t.Helper()
	for _, j := range d.Jobs {
		if j.Handler == handler {
			return j
		}
	}
	t.Fatalf("Get(%s).Jobs has handlers %v; want a job of %q", fmtKey(d.Key), jobHandlers(d), handler)
	return ops.Job{}
}

// jobHandlers lists the handlers of d's jobs, in order.
func jobHandlers(d ops.Detail) []string {
	var hs []string
	for _, j := range d.Jobs {
		hs = append(hs, j.Handler)
	}
	return hs
}

// checkJob requires the stored job of handler of the event want.Key to be
// want with the history wantHistory, when the store is an ops.Store.
func checkJob(t *testing.T, s webhooks.InboxStore, want webhooks.Item, wantHistory []ops.Attempt, when string) {
	t.Helper()
	o, ok := s.(ops.Store)
	if !ok {
		return
	}
	j := jobOf(t, mustDetail(t, o, want.Key), want.Handler)
	what := fmt.Sprintf("Get(%s).Jobs[%q] %s", fmtKey(want.Key), want.Handler, when)
	if j.Payload != nil || j.Headers != nil {
		t.Errorf("%s: Payload %q, Headers %v; want both nil (Detail has them, once)", what, j.Payload, j.Headers)
	}
	want.Payload, want.Headers = nil, nil
	checkItem(t, what, j.Item, want)
	if wantHistory == nil {
		return
	}
	if len(j.History) != len(wantHistory) {
		t.Errorf("%s: History has %d attempts:%s\nwant %d:%s", what, len(j.History), fmtAttempts(j.History), len(wantHistory), fmtAttempts(wantHistory))
		return
	}
	for i := range wantHistory {
		if d := diffAttempt(j.History[i], wantHistory[i]); d != "" {
			t.Errorf("%s: History[%d]: %s", what, i, d)
		}
	}
}

// testTwoJobsOneEvent: an event stored for two handlers has a job of
// each; an acquisition for one handler leases only its job (and none of a
// handler the event is not stored for), with the event's payload; the
// operators see the event once, its payload in the Detail and each job,
// ordered by handler, without it. Mutation: acquisition ignores Handler.
func testTwoJobsOneEvent(t *testing.T, s webhooks.InboxStore) {
	env := jobsEnvelope(key("evt_1"), `{"id":"evt_1"}`, base, ledger, audit)
	mustEnqueue(t, s, env)
	now := at(time.Second)
	wantNoJobDue(t, s, "", now, "the event has no job of the default handler")
	wantNoJobDue(t, s, "metrics", now, "the event has no job of handler metrics")
	l := mustAcquireJob(t, s, ledger, env.Key, now, leaseFor)
	checkItem(t, "the lease on ledger's job", l.Item, leasedItem(jobItem(env, ledger), now, leaseFor))
	if l.Job() != (webhooks.JobKey{InboxKey: env.Key, Handler: ledger}) || l.Attempt != 1 {
		t.Errorf("the lease on ledger's job: Job() %s, Attempt %d; want %s@ledger, 1", l.Job(), l.Attempt, fmtKey(env.Key))
	}
	wantNoJobDue(t, s, ledger, now, "ledger's one job is leased")
	a := mustAcquireJob(t, s, audit, env.Key, now, leaseFor)
	checkItem(t, "the lease on audit's job, beside ledger's", a.Item, leasedItem(jobItem(env, audit), now, leaseFor))
	if a.Token == l.Token {
		t.Errorf("the two jobs' leases have one token %q; want a token per lease", a.Token)
	}
	if o, ok := s.(ops.Store); ok {
		d := mustDetail(t, o, env.Key)
		if hs := jobHandlers(d); len(hs) != 2 || hs[0] != audit || hs[1] != ledger {
			t.Fatalf("Get(%s).Jobs are of handlers %q; want [audit ledger], ordered by handler", fmtKey(env.Key), hs)
		}
		checkItem(t, "Get().Item of an event with jobs of audit and ledger (the first job's)", d.Item, leasedItem(jobItem(env, audit), now, leaseFor))
		checkJob(t, s, leasedItem(jobItem(env, ledger), now, leaseFor), nil, "while leased")
	}
}

// testIndependentOutcomes: ledger's job succeeds while audit's is retried
// and then dead-lettered: ledger's is never leased again, each job has its
// own history, the event's summary state is dead, and the dead letters
// are audit's job alone. Mutation: settle by InboxKey.
func testIndependentOutcomes(t *testing.T, s webhooks.InboxStore) {
	env := jobsEnvelope(key("evt_1"), "p", base, ledger, audit)
	mustEnqueue(t, s, env)
	l := mustAcquireJob(t, s, ledger, env.Key, base, leaseFor)
	a := mustAcquireJob(t, s, audit, env.Key, base, leaseFor)
	mustSettle(t, s, retry(a, transient, at(10*time.Second), at(time.Second)))
	mustSettle(t, s, succeed(l, at(2*time.Second)))
	wantNoJobDue(t, s, ledger, at(24*time.Hour), "ledger's job succeeded, whatever audit's does")
	wantNoJobDue(t, s, audit, at(10*time.Second-time.Microsecond), "audit's job is retried at base+10s")
	a = mustAcquireJob(t, s, audit, env.Key, at(10*time.Second), leaseFor)
	if a.Attempt != 2 {
		t.Errorf("audit's second lease: Attempt %d; want 2 (ledger's attempt is not audit's)", a.Attempt)
	}
	mustSettle(t, s, deadLetter(a, permanent, at(11*time.Second)))
	wantNoJobDue(t, s, ledger, at(24*time.Hour), "ledger's job succeeded")
	wantNoJobDue(t, s, audit, at(24*time.Hour), "audit's job is dead")

	wantLedger := succeededItem(leasedItem(jobItem(env, ledger), base, leaseFor), at(2*time.Second))
	checkJob(t, s, wantLedger, []ops.Attempt{attemptOf(1, webhooks.AttemptSucceeded, base, at(2*time.Second), webhooks.Failure{})}, "after it succeeded and audit's died")
	wantAudit := retriedItem(jobItem(env, audit), base, at(time.Second), at(10*time.Second))
	wantAudit = leasedItem(wantAudit, at(10*time.Second), leaseFor)
	wantAudit.State, wantAudit.DeadAt, wantAudit.NextAttemptAt, wantAudit.LeaseExpiresAt, wantAudit.UpdatedAt = webhooks.StateDead, at(11*time.Second), time.Time{}, time.Time{}, at(11*time.Second)
	wantAudit.LastError = &webhooks.ErrorRecord{Class: permanent.Class, Message: permanent.Message, At: at(11 * time.Second)}
	checkJob(t, s, wantAudit, []ops.Attempt{
		attemptOf(1, webhooks.AttemptRetried, base, at(time.Second), transient),
		attemptOf(2, webhooks.AttemptDeadLettered, at(10*time.Second), at(11*time.Second), permanent),
	}, "after it died beside ledger's success")

	again := env
	again.ReceivedAt = at(time.Minute)
	wantEnqueue(t, s, again, webhooks.EnqueueResult{Outcome: webhooks.EnqueueDuplicate, State: webhooks.StateDead}, "of an event one of whose jobs is dead")
	if o, ok := s.(opsStore); ok {
		page, err := o.List(t.Context(), ops.Query{Limit: 10})
		if err != nil {
			t.Fatalf("List(dead letters): %v", err)
		}
		if len(page.Items) != 1 || page.Items[0].Key != env.Key || page.Items[0].Handler != audit {
			t.Errorf("List(dead letters) = %s; want audit's job of %s alone", fmtJobs(page.Items), fmtKey(env.Key))
		}
	}
}

// fmtJobs prints the listed jobs, one per line.
func fmtJobs(items []ops.Summary) string {
	return fmtList(items, func(s ops.Summary) string { return fmt.Sprintf("%s@%q %s", fmtKey(s.Key), s.Handler, s.State) })
}

// testDuplicateAddsNoJob: a duplicate delivery of an event, whatever jobs
// it carries, adds none: the receiver's dedup is per event, and a handler
// added later reaches old events only by a replay (ops.ReplayRequest's
// ToHandler). Each job shows the duplicate.
func testDuplicateAddsNoJob(t *testing.T, s webhooks.InboxStore) {
	env := jobsEnvelope(key("evt_1"), "p", base, ledger)
	mustEnqueue(t, s, env)
	dup := jobsEnvelope(env.Key, "p", at(time.Second), ledger, audit)
	wantEnqueue(t, s, dup, webhooks.EnqueueResult{Outcome: webhooks.EnqueueDuplicate, State: webhooks.StatePending}, "with one more job than the stored event")
	wantNoJobDue(t, s, audit, at(time.Hour), "a duplicate adds no job")
	l := mustAcquireJob(t, s, ledger, env.Key, at(2*time.Second), leaseFor)
	want := jobItem(env, ledger)
	want.DuplicateCount, want.LastSeenAt = 1, dup.ReceivedAt
	checkItem(t, "the lease on ledger's job after a duplicate", l.Item, leasedItem(want, at(2*time.Second), leaseFor))
	if o, ok := s.(ops.Store); ok {
		if d := mustDetail(t, o, env.Key); len(d.Jobs) != 1 {
			t.Errorf("Get(%s).Jobs after a duplicate naming audit too: handlers %q; want [ledger]", fmtKey(env.Key), jobHandlers(d))
		}
	}
}

// testFencedPerJob: a lease fences its own job only: ledger's token
// presented for audit's job (or audit's for ledger's) is refused with
// ErrLeaseLost by Settle and ExtendLease and changes neither job; each
// job's own token settles it.
func testFencedPerJob(t *testing.T, s webhooks.InboxStore) {
	env := jobsEnvelope(key("evt_1"), "p", base, ledger, audit)
	mustEnqueue(t, s, env)
	l := mustAcquireJob(t, s, ledger, env.Key, base, leaseFor)
	a := mustAcquireJob(t, s, audit, env.Key, base, leaseFor)
	crossed := func(from *webhooks.Lease, handler string) *webhooks.Lease {
		c := *from
		c.Item.Handler = handler
		return &c
	}
	now := at(time.Second)
	wantLeaseLost(t, s.Settle(t.Context(), succeed(crossed(l, audit), now)), "Settle(audit's job under ledger's token)")
	wantLeaseLost(t, s.Settle(t.Context(), deadLetter(crossed(a, ledger), permanent, now)), "Settle(ledger's job under audit's token)")
	wantLeaseLost(t, extend(t, s, crossed(l, audit), now, time.Hour), "ExtendLease(audit's job under ledger's token)")
	checkJob(t, s, leasedItem(jobItem(env, audit), base, leaseFor), nil, "after refused calls under ledger's token")
	checkJob(t, s, leasedItem(jobItem(env, ledger), base, leaseFor), nil, "after refused calls under audit's token")
	wantNoJobDue(t, s, audit, base.Add(leaseFor-time.Microsecond), "audit's lease was neither settled nor extended by ledger's token")
	mustSettle(t, s, succeed(l, now))
	mustSettle(t, s, retry(a, transient, at(time.Hour), now))
	wantNoJobDue(t, s, ledger, at(24*time.Hour), "ledger's job succeeded under its own token")
	mustAcquireJob(t, s, audit, env.Key, at(time.Hour), leaseFor)
}

// testRedeliveryReplaysDeadJobs: a provider's redelivery of an event
// (ReplayIfDead) replays every dead job of it, each due at the
// redelivery's ReceivedAt and audited as a redelivery, and leaves a
// succeeded job as it is.
func testRedeliveryReplaysDeadJobs(t *testing.T, s webhooks.InboxStore) {
	env := jobsEnvelope(key("evt_1"), "p", base, ledger, audit, "metrics")
	mustEnqueue(t, s, env)
	for _, h := range []string{ledger, audit} {
		mustSettle(t, s, deadLetter(mustAcquireJob(t, s, h, env.Key, base, leaseFor), permanent, at(time.Second)))
	}
	mustSettle(t, s, succeed(mustAcquireJob(t, s, "metrics", env.Key, base, leaseFor), at(time.Second)))

	redelivery := env
	redelivery.ReceivedAt, redelivery.ReplayIfDead = at(time.Hour), true
	wantEnqueue(t, s, redelivery, webhooks.EnqueueResult{Outcome: webhooks.EnqueueDuplicate, State: webhooks.StatePending, Replayed: true}, "(ReplayIfDead) of an event with two dead jobs")
	for _, h := range []string{ledger, audit} {
		wantNoJobDue(t, s, h, at(time.Hour-time.Microsecond), "the replayed job is due at the redelivery's ReceivedAt")
		l := mustAcquireJob(t, s, h, env.Key, at(time.Hour), leaseFor)
		if l.Attempt != 2 {
			t.Errorf("the lease on %s's replayed job: Attempt %d; want 2 (a redelivery keeps the attempts)", h, l.Attempt)
		}
		if o, ok := s.(ops.Store); ok {
			au := jobOf(t, mustDetail(t, o, env.Key), h).Audit
			if len(au) != 1 || au[0].Action != ops.ActionRedelivery || !au[0].At.Equal(redelivery.ReceivedAt) {
				t.Errorf("Get().Jobs[%q].Audit after the redelivery:%s\nwant one %s at %s", h, fmtAudits(au), ops.ActionRedelivery, fmtTime(redelivery.ReceivedAt))
			}
		}
	}
	wantNoJobDue(t, s, "metrics", at(24*time.Hour), "the succeeded job is not replayed by a redelivery")
	if o, ok := s.(ops.Store); ok {
		if au := jobOf(t, mustDetail(t, o, env.Key), "metrics").Audit; len(au) != 0 {
			t.Errorf("Get().Jobs[metrics].Audit after the redelivery:%s\nwant none: it was not replayed", fmtAudits(au))
		}
	}
}

// testCheckRefusesBadJobs: an envelope Envelope.CheckJobs refuses is
// refused by Enqueue before anything is stored: the same event with valid
// jobs is new afterwards.
func testCheckRefusesBadJobs(t *testing.T, s webhooks.InboxStore) {
	many := make([]webhooks.Job, webhooks.MaxHandlers+1)
	for i := range many {
		many[i].Handler = fmt.Sprintf("h%d", i)
	}
	for _, c := range []struct {
		name     string
		jobs     []webhooks.Job
		ordering webhooks.Ordering
	}{
		{"an invalid handler name", []webhooks.Job{{Handler: ledger}, {Handler: "Audit Log"}}, webhooks.Ordering{}},
		{"a handler twice", []webhooks.Job{{Handler: ledger}, {Handler: ledger, Ordered: true}}, webhooks.Ordering{}},
		{"empty non-nil jobs", []webhooks.Job{}, webhooks.Ordering{}},
		{"too many jobs", many, webhooks.Ordering{}},
		{"a NUL in the ordering key", []webhooks.Job{{Handler: ledger, Ordered: true}}, webhooks.Ordering{Key: "cus\x00_1"}},
		{"an ordering key too long", []webhooks.Job{{Handler: ledger, Ordered: true}}, webhooks.Ordering{Key: strings.Repeat("k", webhooks.MaxOrderingKeyBytes+1)}},
		{"a negative version", []webhooks.Job{{Handler: ledger, Ordered: true}}, webhooks.Ordering{Key: "cus_1", Version: -1}},
	} {
		env := envelope(key("evt_"+strings.ReplaceAll(c.name, " ", "_")), "p", base)
		env.Jobs, env.Ordering = c.jobs, c.ordering
		if env.CheckJobs() == nil {
			t.Fatalf("suite bug: CheckJobs accepts %s", c.name)
		}
		res, err := s.Enqueue(t.Context(), env)
		if err == nil {
			t.Errorf("Enqueue(an envelope with %s) = %+v, nil; want an error (Envelope.CheckJobs refuses it)", c.name, res)
			continue
		}
		if errors.Is(err, webhooks.ErrLeaseLost) || errors.Is(err, webhooks.ErrAlreadySettled) {
			t.Errorf("Enqueue(an envelope with %s): error %v; want a refusal, not a lease error", c.name, err)
		}
		good := jobsEnvelope(env.Key, "p", base, ledger)
		wantEnqueue(t, s, good, webhooks.EnqueueResult{Outcome: webhooks.EnqueueNew, State: webhooks.StatePending}, "after the same event was refused with "+c.name)
	}
	wantNoJobDue(t, s, "h0", base, "no refused envelope was stored")
	wantNoJobDue(t, s, "", base, "no refused envelope was stored")
}

// defaultJobCases run on every store: an envelope without Jobs is the
// default handler's one job, as before handlers.
var defaultJobCases = []inboxCase{
	{"DefaultJobOnly", testDefaultJobOnly},
}

// testDefaultJobOnly: an envelope with nil Jobs is stored as the one
// unordered job of the default handler "": Acquire with Handler "" leases
// it (an item of Handler "", not ordered, Applied 0), a store with
// handlers leases no job of it for another handler, and the operators see
// one job. Mutation: a store that makes nil Jobs a job of another name.
func testDefaultJobOnly(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	want := enqueuedItem(env)
	if hasHandlers(s) {
		wantNoJobDue(t, s, ledger, base, "an envelope with nil Jobs has only the default handler's job")
	}
	l := mustAcquireJob(t, s, "", env.Key, base, leaseFor)
	checkItem(t, "the lease on an envelope with nil Jobs", l.Item, leasedItem(want, base, leaseFor))
	if l.Job() != (webhooks.JobKey{InboxKey: env.Key}) || l.Applied != 0 {
		t.Errorf("the lease on an envelope with nil Jobs: Job() %s, Applied %d; want %s (the default handler's), 0", l.Job(), l.Applied, fmtKey(env.Key))
	}
	if o, ok := s.(ops.Store); ok {
		if d := mustDetail(t, o, env.Key); len(d.Jobs) != 1 {
			t.Errorf("Get(%s).Jobs of an envelope with nil Jobs: handlers %q; want one job, of \"\"", fmtKey(env.Key), jobHandlers(d))
		}
		checkJob(t, s, leasedItem(want, base, leaseFor), nil, "of an envelope with nil Jobs")
	}
	mustSettle(t, s, succeed(l, at(time.Second)))
	wantNothingDue(t, s, at(24*time.Hour), "the one job succeeded")
}
