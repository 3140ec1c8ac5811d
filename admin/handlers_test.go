package admin_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/internal/adminjson"
	"github.com/hookinbox/webhooks/memstore"
)

// fanOut is a store whose events go to two handlers, ledger (ordered) and
// audit, and some to the default handler too:
//
//   - c1, c2, c3 (key cus_1, versions 1 to 3): ledger's c1 failed once and
//     is retried later, holding the key (c2 and c3 wait behind it); audit's
//     c1 died, its c2 and c3 are pending.
//   - d1, d2 (key cus_2): ledger's d1 died, so d2 became the head of the
//     key past it (Overtook d1).
//   - plain: the default handler's job only, dead.
type fanOut struct {
	s   *memstore.Inbox
	now time.Time // the handler's clock
}

var (
	ledgerAudit = []webhooks.Job{{Handler: "ledger", Ordered: true}, {Handler: "audit"}}
	c1          = webhooks.InboxKey{Provider: "stripe", EventID: "c1"}
	c2          = webhooks.InboxKey{Provider: "stripe", EventID: "c2"}
	d1          = webhooks.InboxKey{Provider: "stripe", EventID: "d1"}
	d2          = webhooks.InboxKey{Provider: "stripe", EventID: "d2"}
	plain       = webhooks.InboxKey{Provider: "github", EventID: "plain"}
)

func newFanOut(t *testing.T) *fanOut {
	t.Helper()
	ctx := t.Context()
	s := memstore.NewInbox()
	enqueue := func(k webhooks.InboxKey, key string, version int64, at time.Time, jobs []webhooks.Job) {
		t.Helper()
		env := envelope(k, "customer.updated", at)
		env.Jobs, env.Ordering = jobs, webhooks.Ordering{Key: key, Version: version}
		_, err := s.Enqueue(ctx, env)
		require.NoError(t, err)
	}
	// settle takes handler's one due job at at, requires it to be k's, and
	// settles it with outcome.
	settle := func(handler string, k webhooks.InboxKey, at time.Time, outcome webhooks.AttemptOutcome) {
		t.Helper()
		leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: at, LeaseDuration: time.Minute, Max: 1, Handler: handler, Worker: "w-" + handler})
		require.NoError(t, err)
		require.Len(t, leases, 1)
		require.Equal(t, k, leases[0].Key(), handler)
		st := webhooks.Settlement{Lease: leases[0], Outcome: outcome, Now: at}
		switch outcome {
		case webhooks.AttemptRetried:
			st.Failure = webhooks.Failure{Class: webhooks.FailureError, Message: "ledger down for " + k.EventID}
			st.RetryAt = at.Add(10 * time.Hour)
		case webhooks.AttemptDeadLettered:
			st.Failure = webhooks.Failure{Class: webhooks.FailurePermanent, Message: handler + " refused " + k.EventID}
		}
		require.NoError(t, s.Settle(ctx, st))
	}
	enqueue(c1, "cus_1", 1, base, ledgerAudit)
	enqueue(c2, "cus_1", 2, base.Add(time.Minute), ledgerAudit)
	enqueue(webhooks.InboxKey{Provider: "stripe", EventID: "c3"}, "cus_1", 3, base.Add(2*time.Minute), ledgerAudit)
	settle("ledger", c1, base.Add(3*time.Minute), webhooks.AttemptRetried)
	settle("audit", c1, base.Add(3*time.Minute), webhooks.AttemptDeadLettered)

	enqueue(d1, "cus_2", 1, base.Add(4*time.Minute), ledgerAudit)
	enqueue(d2, "cus_2", 2, base.Add(5*time.Minute), ledgerAudit)
	settle("ledger", d1, base.Add(6*time.Minute), webhooks.AttemptDeadLettered)

	enqueue(plain, "", 0, base.Add(7*time.Minute), []webhooks.Job{{}, {Handler: "audit"}})
	settle("", plain, base.Add(8*time.Minute), webhooks.AttemptDeadLettered)
	return &fanOut{s: s, now: base.Add(time.Hour)}
}

func TestStatsPerHandlerAndHeldKeys(t *testing.T) {
	t.Parallel()
	f := newFanOut(t)
	h := newHandler(t, f.s)
	st := decode[adminjson.Stats](t, do(h, http.MethodGet, "/api/stats", ""), http.StatusOK)
	assert.Equal(t, int64(2), st.States["waiting"], "c2 and c3 wait behind ledger's c1")
	byName := map[string]adminjson.HandlerStats{}
	for _, hs := range st.Handlers {
		byName[hs.Handler] = hs
	}
	require.Contains(t, byName, "ledger")
	assert.Equal(t, map[string]int64{"pending": 2, "waiting": 2, "dead": 1}, nonZero(byName["ledger"].States), "c1 retrying and d2 pending; c2, c3 waiting; d1 dead")
	assert.Equal(t, int64(1), byName["ledger"].Retrying)
	assert.Equal(t, int64(1), byName["ledger"].Due, "d2 is due, c1 is not yet")
	assert.Equal(t, map[string]int64{"pending": 5, "dead": 1}, nonZero(byName["audit"].States))
	assert.Equal(t, map[string]int64{"dead": 1}, nonZero(byName[""].States))
	assert.Contains(t, st.DeadLetters, adminjson.Count{Handler: "audit", Provider: "stripe", EventType: "customer.updated", Count: 1})

	require.Len(t, st.HeldKeys, 1, "only cus_1 is held: its head failed with jobs behind it")
	k := st.HeldKeys[0]
	assert.Equal(t, adminjson.HeldKey{
		Handler: "ledger", Provider: "stripe", Key: "cus_1", Depth: 3,
		HeadEventID: "c1", HeadAttempts: 1,
		HeadError:   &adminjson.ErrorRecord{Class: "error", Message: "ledger down for c1", At: base.Add(3 * time.Minute)},
		NextEventID: "c2", NextReceivedAt: base.Add(time.Minute),
		WaitingSeconds: (59 * time.Minute).Seconds(),
	}, k)
	assert.Equal(t, int64(0), st.MoreHeldKeys)

	body := page(t, h, "/", http.StatusOK)
	assert.Contains(t, body, `<dd data-state="waiting">2</dd>`)
	assert.Contains(t, body, `id="handlers"`)
	assert.Regexp(t, `<tr data-handler="ledger"><td class="handler"><a href="./\?handler=ledger">ledger</a></td><td class="num" data-state="pending">2</td><td class="num" data-state="waiting">2</td>`, body)
	assert.Contains(t, body, `<a href="./?default_handler=true">default</a>`, "the default handler's row links to its jobs")
	assert.Contains(t, body, `id="held-keys"`)
	assert.Contains(t, body, `title="cus_1">cus_1</td>`)
	assert.Contains(t, body, `<a href="item?event_id=c1&amp;provider=stripe#job-ledger">c1</a>`, "the head links to its job")
	assert.Contains(t, body, `<a href="item?event_id=c2&amp;provider=stripe#job-ledger">c2</a>`, "and the next one")
	assert.Contains(t, body, "ledger down for c1")
	assert.Contains(t, body, "<td>59m0s</td>", "how long the next job has waited")
	assert.Contains(t, body, `<td class="handler">audit</td><td>stripe</td><td>customer.updated</td>`, "dead-letter groups by handler")
	body = page(t, h, "/?provider=nobody", http.StatusOK)
	assert.Contains(t, body, `id="handlers"`, "the stats' handlers name the inbox's handlers, whatever the list shows")
	assert.NotContains(t, body, `id="paused-handlers"`, "no handler is paused")
	assert.Empty(t, st.Paused)
}

// TestPausedHandlers: the stats list the handlers paused, with cause,
// actor and reason, in the API and on the page.
func TestPausedHandlers(t *testing.T) {
	t.Parallel()
	f := newFanOut(t)
	require.NoError(t, f.s.Pause(t.Context(), webhooks.PauseRequest{Handler: "audit", Cause: webhooks.PauseBreaker,
		Actor: "host-1:42", Reason: "3 attempts failed in a row, the last (error): crm down", Now: base, Until: base.Add(time.Minute)}))
	h := newHandler(t, f.s)
	st := decode[adminjson.Stats](t, do(h, http.MethodGet, "/api/stats", ""), http.StatusOK)
	assert.Equal(t, []adminjson.Pause{{Handler: "audit", Cause: "breaker", Actor: "host-1:42", Reason: "3 attempts failed in a row, the last (error): crm down",
		Since: base, Until: base.Add(time.Minute)}}, st.Paused)
	body := page(t, h, "/", http.StatusOK)
	assert.Contains(t, body, `id="paused-handlers"`)
	assert.Regexp(t, `<tr data-handler="audit"><td class="handler">audit</td><td class="scope">every job</td><td>breaker</td><td>\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ</td><td>host-1:42</td><td class="err">3 attempts failed in a row, the last \(error\): crm down</td>`, body)
}

func TestSingleHandlerPageShowsNoHandlers(t *testing.T) {
	t.Parallel()
	s, _ := fixture(t)
	body := page(t, newHandler(t, s), "/", http.StatusOK)
	assert.NotContains(t, body, `id="handlers"`, "a host with one handler sees the page it always had")
	assert.NotContains(t, body, "<th>Handler</th>")
	assert.NotContains(t, body, `id="held-keys"`)
	body = page(t, newHandler(t, s), "/item?provider=stripe&event_id=evt_1", http.StatusOK)
	assert.NotContains(t, body, `id="jobs"`)
	assert.Contains(t, body, `id="attempts"`)
}

func TestListByHandler(t *testing.T) {
	t.Parallel()
	f := newFanOut(t)
	h := newHandler(t, f.s)
	type job struct{ ID, Handler string }
	list := func(query string) []job {
		t.Helper()
		p := decode[adminjson.Page](t, do(h, http.MethodGet, "/api/dead-letters?"+query, ""), http.StatusOK)
		var out []job
		for _, it := range p.Items {
			out = append(out, job{it.EventID, it.Handler})
		}
		return out
	}
	assert.ElementsMatch(t, []job{{"c1", "audit"}, {"d1", "ledger"}, {"plain", ""}}, list(""), "every handler's")
	assert.Equal(t, []job{{"c1", "audit"}}, list("handler=audit"))
	assert.Equal(t, []job{{"d1", "ledger"}}, list("handler=ledger"))
	assert.Equal(t, []job{{"plain", ""}}, list("default_handler=true"), "the default handler's only")
	assert.ElementsMatch(t, []job{{"c1", "audit"}, {"d1", "ledger"}, {"plain", ""}}, list("handler="), "an empty handler, as a form sends it, is no filter")
	assert.Empty(t, list("handler=nobody"))

	for query, want := range map[string]string{
		"handler=Ledger":                      `handler: webhooks: handler name "Ledger"`,
		"handler=" + strings.Repeat("a", 100): "longer than 63 bytes",
		"handler=audit&default_handler=true":  `handler "audit" and default_handler: give one or the other`,
		"default_handler=maybe":               `default_handler "maybe": give true or false`,
		"handler=audit&handler=ledger":        "parameter handler is given 2 times",
	} {
		e := decode[adminjson.ErrorResponse](t, do(h, http.MethodGet, "/api/dead-letters?"+query, ""), http.StatusBadRequest)
		assert.Contains(t, e.Message, want, query)
	}

	// The page: a handler column, the filter in its form, and the
	// overtaking job of a dead letter flagged.
	body := page(t, h, "/", http.StatusOK)
	assert.Contains(t, body, "<th>Handler</th>")
	assert.Contains(t, body, `<td class="handler">audit</td>`)
	assert.Contains(t, body, `href="item?event_id=c1&amp;provider=stripe#job-audit"`, "a job's row links to its section")
	body = page(t, h, "/?handler=ledger", http.StatusOK)
	assert.Contains(t, body, `name="handler" value="ledger"`)
	assert.Contains(t, body, ">d1<")
	assert.NotContains(t, body, ">plain<")
	body = page(t, h, "/?default_handler=true", http.StatusOK)
	assert.Contains(t, body, `name="default_handler" value="true" checked`)
	assert.Contains(t, body, ">plain<")
	assert.NotContains(t, body, ">d1<")
	// The form as a browser submits it, every field present.
	form := url.Values{"state": {"dead"}, "handler": {"audit"}, "provider": {""}, "tenant": {""}, "event_type": {""}, "error_class": {""}, "api_version": {""}, "from": {""}, "to": {""}, "limit": {"50"}}
	body = page(t, h, "/?"+form.Encode(), http.StatusOK)
	assert.Contains(t, body, ">c1<")
	assert.NotContains(t, body, ">d1<")
}

func TestItemShowsEveryJob(t *testing.T) {
	t.Parallel()
	f := newFanOut(t)
	h := newHandler(t, f.s)
	d := decode[adminjson.Detail](t, do(h, http.MethodGet, "/api/item?provider=stripe&event_id=c1", ""), http.StatusOK)
	require.Len(t, d.Jobs, 2)
	byName := map[string]adminjson.Job{}
	for _, j := range d.Jobs {
		byName[j.Handler] = j
	}
	ledger, audit := byName["ledger"], byName["audit"]
	assert.Equal(t, "pending", ledger.State)
	assert.True(t, ledger.Ordered)
	assert.Equal(t, "cus_1", ledger.OrderingKey)
	assert.Equal(t, int64(1), ledger.OrderingVersion)
	require.Len(t, ledger.History, 1)
	assert.Equal(t, "retried", ledger.History[0].Outcome)
	assert.Equal(t, "w-ledger", ledger.History[0].Worker)
	assert.Equal(t, "dead", audit.State)
	assert.False(t, audit.Ordered)
	require.Len(t, audit.History, 1)
	assert.Equal(t, "dead_lettered", audit.History[0].Outcome)
	assert.Equal(t, d.PayloadSHA256, audit.PayloadSHA256, "a job's payload digest is the event's")
	assert.Equal(t, d.Jobs[0].Handler, d.Handler, "the top-level item is the first job")

	body := page(t, h, "/item?provider=stripe&event_id=c1", http.StatusOK)
	assert.Contains(t, body, `id="jobs"`)
	assert.Contains(t, body, `<section class="job" id="job-ledger">`)
	assert.Contains(t, body, `<section class="job" id="job-audit">`)
	assert.Contains(t, body, "ledger down for c1")
	assert.Contains(t, body, "audit refused c1")
	assert.Contains(t, body, "hookinbox replay -provider stripe -event-id c1 -handler audit -actor YOU", "the dead job's page says how to replay it")
	assert.Contains(t, body, "hookinbox close -provider stripe -event-id c1 -handler audit -actor YOU")
	assert.Contains(t, body, `&#34;handler&#34;:&#34;audit&#34;`, "the API body names the handler")
	assert.NotContains(t, body, "-handler ledger -actor", "a pending job has nothing to replay")
	assert.Contains(t, body, `<dt>Ordering key</dt><dd class="id">cus_1</dd>`)

	// d2 ran past d1, the dead letter ahead of it in its key.
	d = decode[adminjson.Detail](t, do(h, http.MethodGet, "/api/item?provider=stripe&event_id=d2", ""), http.StatusOK)
	for _, j := range d.Jobs {
		if j.Handler == "ledger" {
			assert.Equal(t, "d1", j.Overtook)
		} else {
			assert.Empty(t, j.Overtook, "audit is not ordered")
		}
	}
	body = page(t, h, "/item?provider=stripe&event_id=d2", http.StatusOK)
	assert.Regexp(t, `id="overtook[^"]*">ran past the earlier dead letter <a href="item\?event_id=d1&amp;provider=stripe#job-ledger">d1</a>`, body)
	body = page(t, h, "/item?provider=stripe&event_id=d1", http.StatusOK)
	assert.Contains(t, body, "later jobs of the key run past this dead letter", "a dead ordered job says its key was released")
}

func TestReplayAndCloseOneHandler(t *testing.T) {
	t.Parallel()
	f := newFanOut(t)
	h := newHandler(t, f.s)
	state := func(k webhooks.InboxKey, handler string) string {
		t.Helper()
		d := decode[adminjson.Detail](t, do(h, http.MethodGet, "/api/item?provider="+k.Provider+"&event_id="+k.EventID, ""), http.StatusOK)
		for _, j := range d.Jobs {
			if j.Handler == handler {
				return j.State
			}
		}
		return "none"
	}
	// The default handler's job of c1 does not exist: no handler named, no
	// job to replay.
	decode[adminjson.ErrorResponse](t, post(h, "/api/replay", `{"provider":"stripe","tenant":"","event_id":"c1","reason":"r"}`), http.StatusNotFound)
	res := decode[adminjson.ReplayResult](t, post(h, "/api/replay", `{"provider":"stripe","tenant":"","event_id":"c1","handler":"audit","reason":"fixed"}`), http.StatusOK)
	require.Len(t, res.Items, 1)
	assert.Equal(t, "audit", res.Items[0].Handler)
	assert.Equal(t, "pending", state(c1, "audit"))
	assert.Equal(t, "pending", state(c1, "ledger"), "the other handler's job is left as it was")
	d := decode[adminjson.Detail](t, do(h, http.MethodGet, "/api/item?provider=stripe&event_id=c1", ""), http.StatusOK)
	for _, j := range d.Jobs {
		if j.Handler == "audit" {
			require.Len(t, j.Audit, 1)
			assert.Equal(t, "alice", j.Audit[0].Actor)
		} else {
			assert.Empty(t, j.Audit, "audited on the replayed job only")
		}
	}

	// Close ledger's dead d1 by handler.
	decode[adminjson.ErrorResponse](t, post(h, "/api/close", `{"provider":"stripe","tenant":"","event_id":"d1","handler":"audit","reason":"r"}`), http.StatusConflict)
	cr := decode[adminjson.CloseResult](t, post(h, "/api/close", `{"provider":"stripe","tenant":"","event_id":"d1","handler":"ledger","reason":"obsolete"}`), http.StatusOK)
	assert.Equal(t, "ledger", cr.Handler)
	assert.Equal(t, "closed", state(d1, "ledger"))

	// Replay one event to a handler it never had.
	res = decode[adminjson.ReplayResult](t, post(h, "/api/replay", `{"provider":"github","tenant":"","event_id":"plain","to_handler":"archive","to_ordered":true,"to_priority":7,"reason":"new handler"}`), http.StatusOK)
	assert.Equal(t, "archive", res.Items[0].Handler)
	assert.Equal(t, "pending", state(plain, "archive"))
	pd := decode[adminjson.Detail](t, do(h, http.MethodGet, "/api/item?provider=github&event_id=plain", ""), http.StatusOK)
	for _, j := range pd.Jobs {
		if j.Handler == "archive" {
			assert.Equal(t, 7, j.Priority, "to_priority: the created job's priority, shown by api/item")
		} else {
			assert.Zero(t, j.Priority)
		}
	}
	page := do(h, http.MethodGet, "/item?provider=github&event_id=plain", "")
	assert.Contains(t, page.Body.String(), `<dd class="priority">7: of the priorities`, "the item's page shows the job's priority")

	for body, want := range map[string]string{
		`{"provider":"stripe","event_id":"c1","handler":"Audit","reason":"r"}`:                     `handler: webhooks: handler name "Audit"`,
		`{"provider":"stripe","event_id":"c1","to_handler":"x y","reason":"r"}`:                    `to_handler: webhooks: handler name "x y"`,
		`{"provider":"stripe","event_id":"c1","to_ordered":true,"reason":"r"}`:                     "to_ordered without to_handler",
		`{"provider":"stripe","event_id":"c1","to_priority":3,"reason":"r"}`:                       "to_priority without to_handler",
		`{"provider":"stripe","event_id":"c1","to_handler":"x","to_priority":1001,"reason":"r"}`:   "to_priority 1001: give",
		`{"provider":"stripe","event_id":"c1","to_handler":"x","keep_attempts":true,"reason":"r"}`: "to_handler and keep_attempts",
		`{"provider":"stripe","event_id":"c1","handler":"audit","to_handler":"x","reason":"r"}`:    `handler "audit" and to_handler "x"`,
	} {
		e := decode[adminjson.ErrorResponse](t, post(h, "/api/replay", body), http.StatusBadRequest)
		assert.Contains(t, e.Message, want, body)
	}
	e := decode[adminjson.ErrorResponse](t, post(h, "/api/close", `{"provider":"stripe","event_id":"c1","handler":"-x","reason":"r"}`), http.StatusBadRequest)
	assert.Contains(t, e.Message, `handler: webhooks: handler name "-x"`)
}

func TestBulkReplayByHandler(t *testing.T) {
	t.Parallel()
	f := newFanOut(t)
	h := newHandler(t, f.s)
	res := decode[adminjson.ReplayResult](t, post(h, "/api/bulk-replay", `{"filter":{"handler":"ledger"},"reason":"r","dry_run":true}`), http.StatusOK)
	require.Equal(t, 1, res.Count)
	assert.Equal(t, adminjson.Replayed{Key: adminjson.KeyOf(d1), Handler: "ledger", DueAt: f.now}, res.Items[0], "the dead letters of ledger only")
	res = decode[adminjson.ReplayResult](t, post(h, "/api/bulk-replay", `{"filter":{"default_handler":true},"reason":"r","dry_run":true}`), http.StatusOK)
	require.Equal(t, 1, res.Count)
	assert.Equal(t, "plain", res.Items[0].EventID)

	// Replay audit's dead letters to a new handler: c1 gets an archive job.
	res = decode[adminjson.ReplayResult](t, post(h, "/api/bulk-replay", `{"filter":{"handler":"audit"},"to_handler":"archive","reason":"backfill"}`), http.StatusOK)
	require.Equal(t, 1, res.Count)
	assert.Equal(t, adminjson.Replayed{Key: adminjson.KeyOf(c1), Handler: "archive", DueAt: f.now}, res.Items[0])
	d := decode[adminjson.Detail](t, do(h, http.MethodGet, "/api/item?provider=stripe&event_id=c1", ""), http.StatusOK)
	states := map[string]string{}
	for _, j := range d.Jobs {
		states[j.Handler] = j.State
	}
	assert.Equal(t, map[string]string{"archive": "pending", "audit": "dead", "ledger": "pending"}, states, "the audit job is left dead; the new job is audited")

	for body, want := range map[string]string{
		`{"filter":{},"to_handler":"archive","reason":"r"}`:                                 `to_handler "archive" needs the filter to select one handler`,
		`{"filter":{"handler":"audit"},"to_ordered":true,"reason":"r"}`:                     "to_ordered without to_handler",
		`{"filter":{"handler":"audit","default_handler":true},"reason":"r"}`:                "give one or the other",
		`{"filter":{"handler":"audit"},"to_handler":"a","keep_attempts":true,"reason":"r"}`: "to_handler and keep_attempts",
		`{"filter":{"handler":"AUDIT"},"reason":"r"}`:                                       `handler: webhooks: handler name "AUDIT"`,
	} {
		e := decode[adminjson.ErrorResponse](t, post(h, "/api/bulk-replay", body), http.StatusBadRequest)
		assert.Contains(t, e.Message, want, body)
	}
}

// TestPageEscapesOrderingKeys: an ordering key is the sender's text, up
// to 512 bytes: the page shows it escaped, and a long one shortened in
// the held keys' table (whole in its title and in the API).
func TestPageEscapesOrderingKeys(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := memstore.NewInbox()
	hostile := `<script>alert(1)</script>` + strings.Repeat("k", 300)
	for i, k := range []webhooks.InboxKey{{Provider: "x", EventID: "h1"}, {Provider: "x", EventID: "h2"}} {
		env := envelope(k, "t", base.Add(time.Duration(i)*time.Minute))
		env.Jobs, env.Ordering = []webhooks.Job{{Handler: "ledger", Ordered: true}}, webhooks.Ordering{Key: hostile}
		_, err := s.Enqueue(ctx, env)
		require.NoError(t, err)
	}
	leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: base.Add(time.Minute), LeaseDuration: time.Minute, Max: 1, Handler: "ledger"})
	require.NoError(t, err)
	require.Len(t, leases, 1)
	require.NoError(t, s.Settle(ctx, webhooks.Settlement{Lease: leases[0], Outcome: webhooks.AttemptRetried, RetryAt: base.Add(time.Hour),
		Failure: webhooks.Failure{Class: webhooks.FailureError, Message: "<img src=x>"}, Now: base.Add(time.Minute)}))
	h := newHandler(t, s)
	st := decode[adminjson.Stats](t, do(h, http.MethodGet, "/api/stats", ""), http.StatusOK)
	require.Len(t, st.HeldKeys, 1)
	assert.Equal(t, hostile, st.HeldKeys[0].Key, "the API gives the key whole")
	for _, target := range []string{"/", "/item?provider=x&event_id=h1"} {
		body := page(t, h, target, http.StatusOK)
		assert.NotContains(t, body, "<script>alert", target)
		assert.NotContains(t, body, "<img src=x>", target)
		assert.Contains(t, body, "&lt;script&gt;alert(1)&lt;/script&gt;", target)
	}
	body := page(t, h, "/", http.StatusOK)
	assert.Contains(t, body, ">&lt;script&gt;alert(1)&lt;/script&gt;"+strings.Repeat("k", 64-len(`<script>alert(1)</script>`))+"…</td>", "shortened in the table")
	assert.NotContains(t, body, ">"+strings.Repeat("k", 100), "only the title holds it whole")
}

// asCarol posts body, JSON, to path as the actor carol.
func asCarol(h http.Handler, path, body string) *httptest.ResponseRecorder {
	return do(h, http.MethodPost, path, body, "Content-Type", "application/json", "X-Test-User", "carol")
}

// TestPauseAndResumeThroughTheAPI: api/pause pauses a handler, audited
// with the request's actor and reason; api/resume ends it; a second
// resume is 409 not_paused; without an actor both are refused.
func TestPauseAndResumeThroughTheAPI(t *testing.T) {
	t.Parallel()
	f := newFanOut(t)
	h := newHandler(t, f.s)
	e := decode[adminjson.ErrorResponse](t, do(h, http.MethodPost, "/api/pause", `{"handler":"audit","reason":"r"}`, "Content-Type", "application/json"), http.StatusForbidden)
	assert.Equal(t, "forbidden", e.Error, "no actor: refused")
	res := decode[adminjson.PauseResult](t, asCarol(h, "/api/pause", `{"handler":"audit","reason":"crm maintenance","ticket":"OPS-9"}`), http.StatusOK)
	assert.Equal(t, "audit", res.Handler)
	assert.True(t, res.Paused)
	assert.Equal(t, "carol", res.Actor)
	pauses, err := f.s.Pauses(t.Context(), 10)
	require.NoError(t, err)
	require.Len(t, pauses, 1)
	assert.Equal(t, webhooks.Pause{Handler: "audit", Cause: webhooks.PauseOperator, Actor: "carol", Reason: "crm maintenance (ticket OPS-9)", Since: pauses[0].Since}, pauses[0])
	leases, err := f.s.Acquire(t.Context(), webhooks.AcquireRequest{Now: base.Add(time.Hour), LeaseDuration: time.Minute, Max: 10, Handler: "audit"})
	require.NoError(t, err)
	assert.Empty(t, leases, "audit is paused")
	decode[adminjson.ErrorResponse](t, asCarol(h, "/api/pause", `{"handler":"audit"}`), http.StatusBadRequest)

	res = decode[adminjson.PauseResult](t, asCarol(h, "/api/resume", `{"handler":"audit","reason":"done"}`), http.StatusOK)
	assert.False(t, res.Paused)
	e = decode[adminjson.ErrorResponse](t, asCarol(h, "/api/resume", `{"handler":"audit","reason":"again"}`), http.StatusConflict)
	assert.Equal(t, "not_paused", e.Error)
	pauses, err = f.s.Pauses(t.Context(), 10)
	require.NoError(t, err)
	require.Len(t, pauses, 1)
	assert.Equal(t, "carol", pauses[0].EndedBy)
	assert.Equal(t, "done", pauses[0].EndReason)
}

// TestScopedPauses: api/pause and the page's form pause a handler, or
// every handler, in a scope (a provider, a tenant, types); the pause is
// in the stats with its scope and the jobs it holds; a scope the store
// would refuse is 400; the page's Resume button ends exactly that pause,
// and a handler paused only in a scope is still offered to pause.
func TestScopedPauses(t *testing.T) {
	t.Parallel()
	f := newFanOut(t)
	h := newHandler(t, f.s)
	form := func(path, body string) *httptest.ResponseRecorder {
		return do(h, http.MethodPost, path, body, "Content-Type", "application/x-www-form-urlencoded", "X-Test-User", "carol")
	}
	inForce := func() []webhooks.Pause {
		t.Helper()
		ps, err := f.s.Pauses(t.Context(), 0)
		require.NoError(t, err)
		return ps
	}
	for _, body := range []string{
		`{"handler":"audit","tenant":"t1","reason":"r"}`,
		`{"handler":"audit","types":"*","reason":"r"}`,
		`{"handler":"audit","types":"in*voice","reason":"r"}`,
		`{"handler":"Audit*","provider":"github","reason":"r"}`,
	} {
		decode[adminjson.ErrorResponse](t, asCarol(h, "/api/pause", body), http.StatusBadRequest)
		assert.Empty(t, inForce(), "%s: nothing paused", body)
	}
	res := decode[adminjson.PauseResult](t, asCarol(h, "/api/pause", `{"handler":"*","provider":"github","reason":"github outage"}`), http.StatusOK)
	assert.Equal(t, adminjson.PauseResult{Handler: "*", Scope: adminjson.Scope{Provider: "github"}, Paused: true, Actor: "carol", At: res.At}, res)
	ps := inForce()
	require.Len(t, ps, 1)
	assert.Equal(t, webhooks.Pause{Handler: webhooks.EveryHandler, Scope: webhooks.PauseScope{Provider: "github"}, Cause: webhooks.PauseOperator,
		Actor: "carol", Reason: "github outage", Since: ps[0].Since}, ps[0])
	leases, err := f.s.Acquire(t.Context(), webhooks.AcquireRequest{Now: base.Add(time.Hour), LeaseDuration: time.Minute, Max: 10, Handler: "audit"})
	require.NoError(t, err)
	for _, l := range leases {
		assert.NotEqual(t, "github", l.Item.Key.Provider, "github's jobs are held: leased %s", l.Key())
	}
	st := decode[adminjson.Stats](t, do(h, http.MethodGet, "/api/stats", ""), http.StatusOK)
	require.Len(t, st.Paused, 1)
	assert.Equal(t, "*", st.Paused[0].Handler)
	assert.Equal(t, adminjson.Scope{Provider: "github"}, st.Paused[0].Scope)
	assert.Equal(t, int64(1), st.Parked, "plain's audit job is held")

	body := do(h, http.MethodGet, "/", "", "X-Test-User", "carol").Body.String()
	assert.Contains(t, body, `<td class="handler">every handler</td><td class="scope">github</td>`)
	assert.Contains(t, body, `<input type="hidden" name="handler" value="*"><input type="hidden" name="provider" value="github">`)
	assert.Contains(t, body, `<option value="*">every handler</option>`, "every handler is paused in a scope only: it may be paused whole")
	assert.Contains(t, body, `<dt>held by a pause</dt><dd id="parked">1</dd>`)
	rec := form("/resume", "handler=%2A&reason=wrong+scope")
	assert.Equal(t, http.StatusConflict, rec.Code, "a resume of every handler's whole pause: %s", rec.Body)
	rec = form("/resume", "handler=%2A&provider=github&reason=github+is+back")
	require.Equal(t, http.StatusSeeOther, rec.Code, "answer: %s", rec.Body)
	assert.Empty(t, inForce())

	rec = form("/pause", "handler=audit&provider=stripe&tenant=&types=customer.%2A&reason=crm+import")
	require.Equal(t, http.StatusSeeOther, rec.Code, "answer: %s", rec.Body)
	ps = inForce()
	require.Len(t, ps, 1)
	assert.Equal(t, webhooks.PauseScope{Provider: "stripe", Types: "customer.*"}, ps[0].Scope)
	body = do(h, http.MethodGet, "/", "", "X-Test-User", "carol").Body.String()
	assert.Contains(t, body, `<option value="audit">audit</option>`, "audit is paused in a scope only: it may be paused whole")
	assert.Contains(t, body, `<td class="scope">stripe customer.*</td>`)
	rec = form("/pause", "handler=audit&types=%2A&reason=r")
	assert.Equal(t, http.StatusBadRequest, rec.Code, "a scope the store refuses: %s", rec.Body)
	rec = form("/pause", "handler=audit&region=eu&reason=r")
	assert.Equal(t, http.StatusBadRequest, rec.Code, "an unknown field: %s", rec.Body)
}

// TestPauseAndResumeFromThePage: the page offers the pause form and the
// Resume buttons only to a request with an actor; the forms pause and
// resume the handler in the store, audited with the request's actor and
// the form's reason, answering 303 to the page; a cross-origin form post,
// one without an actor or a reason, a JSON body, a repeated or unknown
// field are refused and change nothing.
func TestPauseAndResumeFromThePage(t *testing.T) {
	t.Parallel()
	f := newFanOut(t)
	h := newHandler(t, f.s)
	form := func(path, body string, header ...string) *httptest.ResponseRecorder {
		return do(h, http.MethodPost, path, body, append([]string{"Content-Type", "application/x-www-form-urlencoded"}, header...)...)
	}
	carol := []string{"X-Test-User", "carol"}
	inForce := func() []webhooks.Pause {
		t.Helper()
		ps, err := f.s.Pauses(t.Context(), 0)
		require.NoError(t, err)
		return ps
	}

	body := page(t, h, "/", http.StatusOK)
	assert.NotContains(t, body, `id="pause-form"`, "no actor: no form")
	rec := do(h, http.MethodGet, "/", "", carol...)
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), `<form class="pause" id="pause-form" method="post" action="pause">`)
	assert.Contains(t, rec.Body.String(), `<option value="audit">audit</option>`)

	for _, c := range []struct {
		name   string
		rec    *httptest.ResponseRecorder
		status int
	}{
		{"no actor", form("/pause", "handler=audit&reason=r"), http.StatusForbidden},
		{"cross-origin", form("/pause", "handler=audit&reason=r", append(carol, "Sec-Fetch-Site", "cross-site")...), http.StatusForbidden},
		{"no reason", form("/pause", "handler=audit&reason=+", carol...), http.StatusBadRequest},
		{"JSON", do(h, http.MethodPost, "/pause", `{"handler":"audit","reason":"r"}`, "Content-Type", "application/json", "X-Test-User", "carol"), http.StatusUnsupportedMediaType},
		{"handler twice", form("/pause", "handler=audit&handler=ledger&reason=r", carol...), http.StatusBadRequest},
		{"an actor field", form("/pause", "handler=audit&reason=r&actor=mallory", carol...), http.StatusBadRequest},
		{"a bad handler name", form("/pause", "handler=Audit&reason=r", carol...), http.StatusBadRequest},
		{"GET", do(h, http.MethodGet, "/pause?handler=audit&reason=r", "", carol...), http.StatusMethodNotAllowed},
	} {
		assert.Equal(t, c.status, c.rec.Code, "%s: %s", c.name, c.rec.Body)
		assert.Empty(t, inForce(), "%s: nothing paused", c.name)
	}

	rec = form("/pause", "handler=audit&reason=crm+maintenance", carol...)
	require.Equal(t, http.StatusSeeOther, rec.Code, "answer: %s", rec.Body)
	assert.Equal(t, "./#pauses", rec.Header().Get("Location"))
	ps := inForce()
	require.Len(t, ps, 1)
	assert.Equal(t, webhooks.Pause{Handler: "audit", Cause: webhooks.PauseOperator, Actor: "carol", Reason: "crm maintenance", Since: base.Add(time.Hour)}, ps[0])

	rec = do(h, http.MethodGet, "/", "", carol...)
	assert.Contains(t, rec.Body.String(), `<form class="resume" method="post" action="resume"><input type="hidden" name="handler" value="audit">`)
	assert.NotContains(t, rec.Body.String(), `<option value="audit">`, "a paused handler is not offered to pause")

	rec = form("/resume", "handler=audit&reason=done", "X-Test-User", "dave")
	require.Equal(t, http.StatusSeeOther, rec.Code, "answer: %s", rec.Body)
	assert.Empty(t, inForce())
	trail, err := f.s.Pauses(t.Context(), 10)
	require.NoError(t, err)
	require.Len(t, trail, 1)
	assert.Equal(t, []string{"carol", "dave", "done"}, []string{trail[0].Actor, trail[0].EndedBy, trail[0].EndReason})
	rec = form("/resume", "handler=audit&reason=again", carol...)
	assert.Equal(t, http.StatusConflict, rec.Code, "not paused: %s", rec.Body)
}
