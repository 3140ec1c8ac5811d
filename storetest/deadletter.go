package storetest

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

var deadLetterCases = []inboxCase{
	{"ReplayDeadLetter", func(t *testing.T, s webhooks.InboxStore) { testReplayDeadLetter(t, s, false) }},
	{"ReplayDeadLetterResetAttempts", func(t *testing.T, s webhooks.InboxStore) { testReplayDeadLetter(t, s, true) }},
	{"ReplayDeadLetterNotDead", testReplayDeadLetterNotDead},
	{"ReplayDeadLetterMissing", testReplayDeadLetterMissing},
	{"ReplayDeadLetterConcurrent", testReplayDeadLetterConcurrent},
	{"DeadLettersOrder", testDeadLettersOrder},
	{"DeadLettersFilters", testDeadLettersFilters},
	{"DeadLettersPaging", testDeadLettersPaging},
	{"DeadLettersCursorIsAPosition", testDeadLettersCursorIsAPosition},
	{"DeadLettersInvalidCursor", testDeadLettersInvalidCursor},
	{"DeadLettersLimitMustBePositive", testDeadLettersLimitMustBePositive},
	{"DeadLettersEmpty", testDeadLettersEmpty},
}

// deadAfterTwoAttempts enqueues env, fails it once with a retry and then
// dead-letters it at base+11s, and returns the stored item.
func deadAfterTwoAttempts(t *testing.T, s webhooks.InboxStore, env webhooks.Envelope) webhooks.Item {
	t.Helper()
	mustEnqueue(t, s, env)
	l := mustAcquireKey(t, s, env.Key, base, leaseFor)
	mustSettle(t, s, retry(l, transient, at(10*time.Second), at(time.Second)))
	l = mustAcquireKey(t, s, env.Key, at(10*time.Second), leaseFor)
	mustSettle(t, s, deadLetter(l, permanent, at(11*time.Second)))
	it := mustGet(t, s, env.Key)
	if it.State != webhooks.StateDead || it.Attempts != 2 {
		t.Fatalf("setup: item is %s after %d attempts; want %s after 2", it.State, it.Attempts, webhooks.StateDead)
	}
	return it
}

func testReplayDeadLetter(t *testing.T, s webhooks.InboxStore, resetAttempts bool) {
	env := envelope(key("evt_1"), "p", base)
	dead := deadAfterTwoAttempts(t, s, env)
	now := at(time.Hour)
	req := webhooks.ReplayRequest{Key: env.Key, Now: now, ResetAttempts: resetAttempts}
	if err := s.ReplayDeadLetter(t.Context(), req); err != nil {
		t.Fatalf("ReplayDeadLetter(%+v) of a dead item: %v; want no error", req, err)
	}
	want := dead
	want.State = webhooks.StatePending
	want.NextAttemptAt = now
	want.DeadAt = time.Time{}
	want.UpdatedAt = now
	if resetAttempts {
		want.Attempts = 0
	}
	checkStored(t, s, want, fmt.Sprintf("after ReplayDeadLetter(ResetAttempts %t) (LastError kept)", resetAttempts))
	wantDeadLetters(t, s, webhooks.DeadLetterQuery{}, nil)

	wantNothingDue(t, s, now.Add(-time.Microsecond), "a replayed item is due at the replay's Now")
	l := mustAcquireKey(t, s, env.Key, now, leaseFor)
	if l.Attempt != want.Attempts+1 || l.Reclaimed {
		t.Errorf("Acquire after ReplayDeadLetter(ResetAttempts %t): Lease.Attempt %d, Reclaimed %t; want %d, false", resetAttempts, l.Attempt, l.Reclaimed, want.Attempts+1)
	}
}

func testReplayDeadLetterNotDead(t *testing.T, s webhooks.InboxStore) {
	ctx := t.Context()
	pending := envelope(key("pending"), "p", at(time.Hour)) // never due in this case
	leased := envelope(key("leased"), "l", base)
	succeeded := envelope(key("succeeded"), "s", at(time.Second))
	mustEnqueue(t, s, pending)
	mustEnqueue(t, s, leased)
	mustAcquireKey(t, s, leased.Key, base, leaseFor)
	mustEnqueue(t, s, succeeded)
	l := mustAcquireKey(t, s, succeeded.Key, at(time.Second), leaseFor)
	mustSettle(t, s, succeed(l, at(2*time.Second)))

	for _, k := range []webhooks.InboxKey{pending.Key, leased.Key, succeeded.Key} {
		before := mustGet(t, s, k)
		for _, reset := range []bool{false, true} {
			err := s.ReplayDeadLetter(ctx, webhooks.ReplayRequest{Key: k, Now: at(3 * time.Second), ResetAttempts: reset})
			if !errors.Is(err, webhooks.ErrNotDead) {
				t.Errorf("ReplayDeadLetter(ResetAttempts %t) of a %s item: error %v; want an error wrapping webhooks.ErrNotDead", reset, before.State, err)
			}
		}
		checkStored(t, s, before, "after ReplayDeadLetter of an item that is not dead (nothing may change)")
	}
}

func testReplayDeadLetterMissing(t *testing.T, s webhooks.InboxStore) {
	mustEnqueue(t, s, envelope(key("evt_1"), "p", base))
	for _, k := range []webhooks.InboxKey{key("evt_2"), {Provider: "acme", Tenant: "", EventID: "evt_1"}, {}} {
		err := s.ReplayDeadLetter(t.Context(), webhooks.ReplayRequest{Key: k, Now: base})
		if !errors.Is(err, webhooks.ErrNotFound) {
			t.Errorf("ReplayDeadLetter of the missing key %s: error %v; want an error wrapping webhooks.ErrNotFound", fmtKey(k), err)
		}
	}
}

func testReplayDeadLetterConcurrent(t *testing.T, s webhooks.InboxStore) {
	const n = 10
	env := envelope(key("evt_1"), "p", base)
	deadAfterTwoAttempts(t, s, env)
	replayed := make([]bool, n)
	runConcurrently(n, func(i int) {
		err := s.ReplayDeadLetter(t.Context(), webhooks.ReplayRequest{Key: env.Key, Now: at(time.Hour), ResetAttempts: i%2 == 0})
		if err != nil && !errors.Is(err, webhooks.ErrNotDead) {
			t.Errorf("concurrent ReplayDeadLetter: %v; want no error, or one wrapping webhooks.ErrNotDead once another call replayed the item", err)
		}
		replayed[i] = err == nil
	})
	if c := countOutcomes(replayed)[true]; c != 1 {
		t.Errorf("%d concurrent ReplayDeadLetter of one item: %d succeeded; want exactly 1 (the others find it no longer dead)", n, c)
	}
	if got := mustGet(t, s, env.Key); got.State != webhooks.StatePending {
		t.Errorf("after concurrent ReplayDeadLetter: State %s; want %s", got.State, webhooks.StatePending)
	}
}

// deadSpec is a dead letter a case creates.
type deadSpec struct {
	key       webhooks.InboxKey
	eventType string
	deadAt    time.Time
}

// makeDeadLetters dead-letters each spec, in the order given, which must be
// by non-decreasing deadAt.
func makeDeadLetters(t *testing.T, s webhooks.InboxStore, specs []deadSpec) {
	t.Helper()
	for _, d := range specs {
		env := envelope(d.key, d.key.String(), d.deadAt)
		env.EventType = d.eventType
		makeDead(t, s, env, d.deadAt)
	}
}

// newestFirst returns the keys of the specs matching q, in DeadLetters order:
// DeadAt descending, then Provider, Tenant and EventID descending, byte-wise.
func newestFirst(specs []deadSpec, q webhooks.DeadLetterQuery) []webhooks.InboxKey {
	var m []deadSpec
	for _, d := range specs {
		if (q.Provider == "" || q.Provider == d.key.Provider) &&
			(q.Tenant == "" || q.Tenant == d.key.Tenant) &&
			(q.EventType == "" || q.EventType == d.eventType) {
			m = append(m, d)
		}
	}
	slices.SortFunc(m, func(a, b deadSpec) int {
		return cmp.Or(
			b.deadAt.Compare(a.deadAt),
			cmp.Compare(b.key.Provider, a.key.Provider),
			cmp.Compare(b.key.Tenant, a.key.Tenant),
			cmp.Compare(b.key.EventID, a.key.EventID),
		)
	})
	keys := make([]webhooks.InboxKey, len(m))
	for i, d := range m {
		keys[i] = d.key
	}
	return keys
}

// wantDeadLetters requires one DeadLetters page of q with Limit 1000 to
// hold exactly want, in order, with an empty Next.
func wantDeadLetters(t *testing.T, s webhooks.InboxStore, q webhooks.DeadLetterQuery, want []webhooks.InboxKey) []webhooks.Item {
	t.Helper()
	q.Limit = 1000
	page, err := s.DeadLetters(t.Context(), q)
	if err != nil {
		t.Fatalf("DeadLetters(%+v): %v; want no error", q, err)
	}
	if got := keysOf(page.Items); !slices.Equal(got, want) {
		t.Errorf("DeadLetters(%+v) items:%s\nwant (dead only, DeadAt then key descending):%s", q, fmtKeys(got), fmtKeys(want))
	}
	if page.Next != "" {
		t.Errorf("DeadLetters(%+v).Next = %q; want \"\" on the last page", q, page.Next)
	}
	return page.Items
}

func testDeadLettersOrder(t *testing.T, s webhooks.InboxStore) {
	m1 := at(time.Minute)
	specs := []deadSpec{
		{webhooks.InboxKey{Provider: "acme", Tenant: "", EventID: "z"}, "a.b", at(30 * time.Second)},
		{webhooks.InboxKey{Provider: "acme", Tenant: "t1", EventID: "a"}, "a.b", m1},
		{webhooks.InboxKey{Provider: "beta", Tenant: "", EventID: "a"}, "a.b", m1},
		{webhooks.InboxKey{Provider: "acme", Tenant: "t1", EventID: "b"}, "a.b", m1},
		{webhooks.InboxKey{Provider: "acme", Tenant: "t2", EventID: "a"}, "a.b", m1},
		{webhooks.InboxKey{Provider: "Acme", Tenant: "t9", EventID: "a"}, "a.b", m1},
		{webhooks.InboxKey{Provider: "acme", Tenant: "t1", EventID: "c"}, "a.b", at(2 * time.Minute)},
	}
	makeDeadLetters(t, s, specs)
	// Items that are not dead must not be listed.
	mustEnqueue(t, s, envelope(key("pending"), "p", at(time.Hour)))
	mustEnqueue(t, s, envelope(key("leased"), "l", at(3*time.Minute)))
	mustAcquireKey(t, s, key("leased"), at(3*time.Minute), leaseFor)

	want := []webhooks.InboxKey{
		{Provider: "acme", Tenant: "t1", EventID: "c"},
		{Provider: "beta", Tenant: "", EventID: "a"},
		{Provider: "acme", Tenant: "t2", EventID: "a"},
		{Provider: "acme", Tenant: "t1", EventID: "b"},
		{Provider: "acme", Tenant: "t1", EventID: "a"},
		{Provider: "Acme", Tenant: "t9", EventID: "a"},
		{Provider: "acme", Tenant: "", EventID: "z"},
	}
	if computed := newestFirst(specs, webhooks.DeadLetterQuery{}); !slices.Equal(computed, want) {
		t.Fatalf("suite bug: newestFirst disagrees with the written order:%s", fmtKeys(computed))
	}
	items := wantDeadLetters(t, s, webhooks.DeadLetterQuery{}, want)
	for _, it := range items {
		checkItem(t, "DeadLetters item compared with Get", it, mustGet(t, s, it.Key))
	}
}

func testDeadLettersFilters(t *testing.T, s webhooks.InboxStore) {
	var specs []deadSpec
	i := 0
	for _, p := range []string{"acme", "beta"} {
		for _, tenant := range []string{"", "t1"} {
			for _, et := range []string{"invoice.paid", "charge.failed"} {
				i++
				specs = append(specs, deadSpec{webhooks.InboxKey{Provider: p, Tenant: tenant, EventID: fmt.Sprintf("e%d", i)}, et, at(time.Duration(i) * time.Minute)})
			}
		}
	}
	makeDeadLetters(t, s, specs)
	for _, q := range []webhooks.DeadLetterQuery{
		{},
		{Provider: "acme"},
		{Provider: "beta"},
		{Tenant: "t1"},
		{Tenant: ""},
		{EventType: "charge.failed"},
		{Provider: "acme", Tenant: "t1"},
		{Provider: "beta", Tenant: "t1", EventType: "invoice.paid"},
		{Provider: "acme", Tenant: "t1", EventType: "charge.failed"},
		{Provider: "ACME"},
		{Provider: "gamma"},
		{EventType: "invoice"},
	} {
		wantDeadLetters(t, s, q, newestFirst(specs, q))
	}
}

// pagingSpecs are 13 dead letters in four groups with equal DeadAt, so pages
// break inside ties.
func pagingSpecs() []deadSpec {
	var specs []deadSpec
	for i := range 13 {
		var group time.Duration
		switch {
		case i < 4:
			group = 1
		case i < 8:
			group = 2
		case i < 11:
			group = 3
		default:
			group = 4
		}
		specs = append(specs, deadSpec{
			key:       webhooks.InboxKey{Provider: []string{"acme", "beta"}[i%2], Tenant: []string{"", "t1", "t2"}[i%3], EventID: fmt.Sprintf("e%02d", i*7%13)},
			eventType: "invoice.paid",
			deadAt:    at(group * time.Minute),
		})
	}
	return specs
}

// walkPages reads every page of q (with its Limit) and requires each page
// to be full but the last, a non-empty Next on all but the last, and the
// concatenation to be want.
func walkPages(t *testing.T, s webhooks.InboxStore, q webhooks.DeadLetterQuery, want []webhooks.InboxKey) {
	t.Helper()
	var got []webhooks.InboxKey
	for page := 1; ; page++ {
		if page > len(want)+1 {
			t.Fatalf("DeadLetters(%+v): more than %d pages for %d items; want the last page to have an empty Next", q, len(want)+1, len(want))
		}
		p, err := s.DeadLetters(t.Context(), q)
		if err != nil {
			t.Fatalf("DeadLetters(%+v) page %d: %v; want no error", q, page, err)
		}
		remaining := len(want) - len(got)
		if wantLen := min(q.Limit, remaining); len(p.Items) != wantLen {
			t.Errorf("DeadLetters(Limit %d) page %d has %d items; want %d (%d matching items remain)", q.Limit, page, len(p.Items), wantLen, remaining)
		}
		got = append(got, keysOf(p.Items)...)
		if more := remaining > q.Limit; more != (p.Next != "") {
			t.Fatalf("DeadLetters(Limit %d) page %d: Next = %q with %d matching items remaining; want Next non-empty exactly when more items follow", q.Limit, page, p.Next, remaining)
		}
		if p.Next == "" {
			break
		}
		q.After = p.Next
	}
	if !slices.Equal(got, want) {
		t.Errorf("DeadLetters pages of %d, concatenated:%s\nwant:%s", q.Limit, fmtKeys(got), fmtKeys(want))
	}
}

func testDeadLettersPaging(t *testing.T, s webhooks.InboxStore) {
	specs := pagingSpecs()
	makeDeadLetters(t, s, specs)
	all := newestFirst(specs, webhooks.DeadLetterQuery{})
	for _, limit := range []int{1, 4, 5, 12, 13, 14, 100} {
		walkPages(t, s, webhooks.DeadLetterQuery{Limit: limit}, all)
	}
	for _, q := range []webhooks.DeadLetterQuery{{Provider: "beta", Limit: 2}, {Tenant: "t2", Limit: 2}} {
		walkPages(t, s, q, newestFirst(specs, q))
	}
}

func testDeadLettersCursorIsAPosition(t *testing.T, s webhooks.InboxStore) {
	specs := pagingSpecs()
	makeDeadLetters(t, s, specs)
	all := newestFirst(specs, webhooks.DeadLetterQuery{})
	first, err := s.DeadLetters(t.Context(), webhooks.DeadLetterQuery{Limit: 4})
	if err != nil || len(first.Items) != 4 || first.Next == "" {
		t.Fatalf("DeadLetters(Limit 4) = %d items, Next %q, error %v; want 4 items and a Next cursor", len(first.Items), first.Next, err)
	}
	// Replay the page's last item and dead-letter a newer one: the next
	// page still starts right after the cursor's position.
	if err := s.ReplayDeadLetter(t.Context(), webhooks.ReplayRequest{Key: all[3], Now: at(time.Hour)}); err != nil {
		t.Fatalf("ReplayDeadLetter(%s): %v; want no error", all[3], err)
	}
	mustAcquireKey(t, s, all[3], at(time.Hour), 24*time.Hour) // not due at 2h
	makeDead(t, s, envelope(key("newest"), "n", at(2*time.Hour)), at(2*time.Hour))

	next, err := s.DeadLetters(t.Context(), webhooks.DeadLetterQuery{After: first.Next, Limit: 4})
	if err != nil {
		t.Fatalf("DeadLetters(After: page 1's Next): %v; want no error", err)
	}
	if got := keysOf(next.Items); !slices.Equal(got, all[4:8]) {
		t.Errorf("second page after the cursor's item was replayed and a newer one added:%s\nwant the items after the cursor position:%s", fmtKeys(got), fmtKeys(all[4:8]))
	}
}

func testDeadLettersInvalidCursor(t *testing.T, s webhooks.InboxStore) {
	makeDead(t, s, envelope(key("evt_1"), "p", base), base)
	for _, after := range []string{"not a cursor", "%%%", "bm9wZQ", "e30x", "e30"} {
		for _, q := range []webhooks.DeadLetterQuery{{After: after, Limit: 10}, {Provider: "acme", After: after, Limit: 1}} {
			page, err := s.DeadLetters(t.Context(), q)
			if !errors.Is(err, webhooks.ErrInvalidCursor) || len(page.Items) != 0 || page.Next != "" {
				t.Errorf("DeadLetters(%+v) = (%d items, Next %q, error %v); want no items and an error wrapping webhooks.ErrInvalidCursor",
					q, len(page.Items), page.Next, err)
			}
		}
	}
}

func testDeadLettersLimitMustBePositive(t *testing.T, s webhooks.InboxStore) {
	makeDead(t, s, envelope(key("evt_1"), "p", base), base)
	for _, limit := range []int{0, -1} {
		if page, err := s.DeadLetters(t.Context(), webhooks.DeadLetterQuery{Limit: limit}); err == nil || len(page.Items) != 0 {
			t.Errorf("DeadLetters(Limit %d) = (%d items, %v); want no items and an error: Limit must be at least 1", limit, len(page.Items), err)
		}
	}
}

func testDeadLettersEmpty(t *testing.T, s webhooks.InboxStore) {
	wantDeadLetters(t, s, webhooks.DeadLetterQuery{}, nil)
	mustEnqueue(t, s, envelope(key("pending"), "p", base))
	wantDeadLetters(t, s, webhooks.DeadLetterQuery{}, nil)
}
