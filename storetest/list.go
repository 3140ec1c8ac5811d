package storetest

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

var listCases = []inboxCase{
	opsCase("ListOrder", testListOrder),
	opsCase("ListFilters", testListFilters),
	opsCase("ListFiltersErrorClassAndAPIVersion", testListFiltersErrorClassAndAPIVersion),
	opsCase("ListDeadBetween", testListDeadBetween),
	opsCase("ListPaging", testListPaging),
	opsCase("ListCursorIsAPosition", testListCursorIsAPosition),
	opsCase("ListInvalidCursor", testListInvalidCursor),
	opsCase("ListInvalidQuery", testListInvalidQuery),
	opsCase("ListEmpty", testListEmpty),
	opsCase("ListReadsNoPayload", testListReadsNoPayload),
}

// deadSpec is a dead letter a case creates.
type deadSpec struct {
	key       webhooks.InboxKey
	eventType string
	deadAt    time.Time
}

// makeDeadLetters dead-letters each spec, in the order given, which must be
// by non-decreasing deadAt.
func makeDeadLetters(t *testing.T, s opsStore, specs []deadSpec) {
	t.Helper()
	for _, d := range specs {
		env := envelope(d.key, d.key.String(), d.deadAt)
		env.EventType = d.eventType
		makeDead(t, s, env, d.deadAt)
	}
}

// newestFirst returns the keys of the specs matching q's provider, tenant,
// event type and dead-between filters, in List order: DeadAt descending,
// then Provider, Tenant and EventID descending, byte-wise.
func newestFirst(specs []deadSpec, q ops.Query) []webhooks.InboxKey {
	var m []deadSpec
	for _, d := range specs {
		if (q.Provider == "" || q.Provider == d.key.Provider) &&
			(q.Tenant == nil || *q.Tenant == d.key.Tenant) &&
			(q.EventType == "" || q.EventType == d.eventType) &&
			(q.From.IsZero() || !d.deadAt.Before(q.From)) &&
			(q.To.IsZero() || d.deadAt.Before(q.To)) {
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

// tenant returns a pointer to name, for ops.Query.Tenant.
func tenant(name string) *string { return &name }

// fmtQuery prints q with its tenant filter spelled out.
func fmtQuery(q ops.Query) string {
	tn := "any"
	if q.Tenant != nil {
		tn = fmt.Sprintf("%q", *q.Tenant)
	}
	return fmt.Sprintf("{State %q Provider %q Tenant %s EventType %q ErrorClass %q APIVersion %q From %s To %s Limit %d After %q}",
		q.State, q.Provider, tn, q.EventType, q.ErrorClass, q.APIVersion, fmtTime(q.From), fmtTime(q.To), q.Limit, q.After)
}

// wantList requires one List page of q with Limit 1000 to hold exactly
// want, in order, with an empty Next.
func wantList(t *testing.T, s opsStore, q ops.Query, want []webhooks.InboxKey) []ops.Summary {
	t.Helper()
	q.Limit = 1000
	page, err := s.List(t.Context(), q)
	if err != nil {
		t.Fatalf("List(%s): %v; want no error", fmtQuery(q), err)
	}
	if got := keysOf(page.Items); !slices.Equal(got, want) {
		t.Errorf("List(%s) items:%s\nwant (in the listed state only, newest first, then by key descending):%s", fmtQuery(q), fmtKeys(got), fmtKeys(want))
	}
	if page.Next != "" {
		t.Errorf("List(%s).Next = %q; want \"\" on the last page", fmtQuery(q), page.Next)
	}
	return page.Items
}

func testListOrder(t *testing.T, s opsStore) {
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
	if computed := newestFirst(specs, ops.Query{}); !slices.Equal(computed, want) {
		t.Fatalf("suite bug: newestFirst disagrees with the written order:%s", fmtKeys(computed))
	}
	items := wantList(t, s, ops.Query{}, want)
	wantList(t, s, ops.Query{State: webhooks.StateDead}, want)
	for _, it := range items {
		checkSummary(t, "List item compared with Get", it, mustGet(t, s, it.Key))
	}
}

func testListFilters(t *testing.T, s opsStore) {
	var specs []deadSpec
	i := 0
	for _, p := range []string{"acme", "beta"} {
		for _, tn := range []string{"", "t1"} {
			for _, et := range []string{"invoice.paid", "charge.failed"} {
				i++
				specs = append(specs, deadSpec{webhooks.InboxKey{Provider: p, Tenant: tn, EventID: fmt.Sprintf("e%d", i)}, et, at(time.Duration(i) * time.Minute)})
			}
		}
	}
	makeDeadLetters(t, s, specs)
	for _, q := range []ops.Query{
		{},
		{Provider: "acme"},
		{Provider: "beta"},
		{Tenant: tenant("t1")},
		{Tenant: tenant("")}, // the items of no tenant only
		{EventType: "charge.failed"},
		{Provider: "acme", Tenant: tenant("t1")},
		{Provider: "beta", Tenant: tenant(""), EventType: "invoice.paid"},
		{Provider: "acme", Tenant: tenant("t1"), EventType: "charge.failed"},
		{Provider: "ACME"},
		{Provider: "gamma"},
		{Tenant: tenant("T1")},
		{EventType: "invoice"},
	} {
		wantList(t, s, q, newestFirst(specs, q))
	}
}

// testListFiltersErrorClassAndAPIVersion: the error-class filter matches
// the class of the item's last error, the API-version filter the version
// its envelope carried.
func testListFiltersErrorClassAndAPIVersion(t *testing.T, s opsStore) {
	type spec struct {
		id         string
		class      webhooks.FailureClass
		apiVersion string
	}
	specs := []spec{
		{"a", webhooks.FailurePermanent, "2024-01-01"},
		{"b", webhooks.FailureTimeout, "2024-01-01"},
		{"c", webhooks.FailurePermanent, "2025-06-30"},
		{"d", webhooks.FailurePanic, ""},
	}
	for i, sp := range specs {
		now := at(time.Duration(i) * time.Minute)
		env := envelope(key(sp.id), sp.id, now)
		env.APIVersion = sp.apiVersion
		mustEnqueue(t, s, env)
		l := mustAcquireKey(t, s, env.Key, now, leaseFor)
		mustSettle(t, s, deadLetter(l, webhooks.Failure{Class: sp.class, Message: "failed"}, now))
	}
	for _, c := range []struct {
		q    ops.Query
		want []string
	}{
		{ops.Query{ErrorClass: webhooks.FailurePermanent}, []string{"c", "a"}},
		{ops.Query{ErrorClass: webhooks.FailureTimeout}, []string{"b"}},
		{ops.Query{ErrorClass: webhooks.FailureError}, nil},
		{ops.Query{APIVersion: "2024-01-01"}, []string{"b", "a"}},
		{ops.Query{APIVersion: "2025-06-30", ErrorClass: webhooks.FailurePermanent}, []string{"c"}},
		{ops.Query{APIVersion: "2025-06-30", ErrorClass: webhooks.FailureTimeout}, nil},
		{ops.Query{APIVersion: "2024"}, nil},
	} {
		var want []webhooks.InboxKey
		for _, id := range c.want {
			want = append(want, key(id))
		}
		wantList(t, s, c.q, want)
	}
}

// testListDeadBetween: From includes, To excludes, each alone or together.
func testListDeadBetween(t *testing.T, s opsStore) {
	var specs []deadSpec
	for i := range 6 {
		specs = append(specs, deadSpec{key(fmt.Sprintf("e%d", i)), "invoice.paid", at(time.Duration(i) * time.Minute)})
	}
	makeDeadLetters(t, s, specs)
	for _, q := range []ops.Query{
		{From: at(2 * time.Minute)},
		{To: at(2 * time.Minute)},
		{From: at(time.Minute), To: at(4 * time.Minute)},
		{From: at(time.Minute + time.Microsecond), To: at(4*time.Minute + time.Microsecond)},
		{From: at(3 * time.Minute), To: at(3 * time.Minute)},
		{From: at(time.Hour)},
		{Provider: "acme", From: at(5 * time.Minute), To: at(6 * time.Minute)},
	} {
		wantList(t, s, q, newestFirst(specs, q))
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
func walkPages(t *testing.T, s opsStore, q ops.Query, want []webhooks.InboxKey) {
	t.Helper()
	var got []webhooks.InboxKey
	for page := 1; ; page++ {
		if page > len(want)+1 {
			t.Fatalf("List(%s): more than %d pages for %d items; want the last page to have an empty Next", fmtQuery(q), len(want)+1, len(want))
		}
		p, err := s.List(t.Context(), q)
		if err != nil {
			t.Fatalf("List(%s) page %d: %v; want no error", fmtQuery(q), page, err)
		}
		remaining := len(want) - len(got)
		if wantLen := min(q.Limit, remaining); len(p.Items) != wantLen {
			t.Errorf("List(Limit %d) page %d has %d items; want %d (%d matching items remain)", q.Limit, page, len(p.Items), wantLen, remaining)
		}
		got = append(got, keysOf(p.Items)...)
		if more := remaining > q.Limit; more != (p.Next != "") {
			t.Fatalf("List(Limit %d) page %d: Next = %q with %d matching items remaining; want Next non-empty exactly when more items follow", q.Limit, page, p.Next, remaining)
		}
		if p.Next == "" {
			break
		}
		q.After = p.Next
	}
	if !slices.Equal(got, want) {
		t.Errorf("List pages of %d, concatenated:%s\nwant:%s", q.Limit, fmtKeys(got), fmtKeys(want))
	}
}

func testListPaging(t *testing.T, s opsStore) {
	specs := pagingSpecs()
	makeDeadLetters(t, s, specs)
	all := newestFirst(specs, ops.Query{})
	for _, limit := range []int{1, 4, 5, 12, 13, 14, 100} {
		walkPages(t, s, ops.Query{Limit: limit}, all)
	}
	for _, q := range []ops.Query{{Provider: "beta", Limit: 2}, {Tenant: tenant("t2"), Limit: 2}, {Tenant: tenant(""), Limit: 3}} {
		walkPages(t, s, q, newestFirst(specs, q))
	}
}

func testListCursorIsAPosition(t *testing.T, s opsStore) {
	specs := pagingSpecs()
	makeDeadLetters(t, s, specs)
	all := newestFirst(specs, ops.Query{})
	first, err := s.List(t.Context(), ops.Query{Limit: 4})
	if err != nil || len(first.Items) != 4 || first.Next == "" {
		t.Fatalf("List(Limit 4) = %d items, Next %q, error %v; want 4 items and a Next cursor", len(first.Items), first.Next, err)
	}
	// Replay the page's last item and dead-letter a newer one: the next
	// page still starts right after the cursor's position.
	mustReplay(t, s, replayOf(all[3], at(time.Hour)))
	mustAcquireKey(t, s, all[3], at(time.Hour), 24*time.Hour) // not due at 2h
	makeDead(t, s, envelope(key("newest"), "n", at(2*time.Hour)), at(2*time.Hour))

	next, err := s.List(t.Context(), ops.Query{After: first.Next, Limit: 4})
	if err != nil {
		t.Fatalf("List(After: page 1's Next): %v; want no error", err)
	}
	if got := keysOf(next.Items); !slices.Equal(got, all[4:8]) {
		t.Errorf("second page after the cursor's item was replayed and a newer one added:%s\nwant the items after the cursor position:%s", fmtKeys(got), fmtKeys(all[4:8]))
	}
}

func testListInvalidCursor(t *testing.T, s opsStore) {
	makeDead(t, s, envelope(key("evt_1"), "p", base), base)
	makeDead(t, s, envelope(key("evt_2"), "p", at(time.Second)), at(time.Second))
	for _, after := range []string{"not a cursor", "%%%", "bm9wZQ", "e30x", "e30"} {
		for _, q := range []ops.Query{{After: after, Limit: 10}, {Provider: "acme", After: after, Limit: 1}, {State: webhooks.StateClosed, After: after, Limit: 1}} {
			page, err := s.List(t.Context(), q)
			if !errors.Is(err, ops.ErrInvalidCursor) || len(page.Items) != 0 || page.Next != "" {
				t.Errorf("List(%s) = (%d items, Next %q, error %v); want no items and an error wrapping ops.ErrInvalidCursor",
					fmtQuery(q), len(page.Items), page.Next, err)
			}
		}
	}
}

// testListInvalidQuery: a Limit below 1, or a state List does not page,
// is refused with ErrInvalidRequest.
func testListInvalidQuery(t *testing.T, s opsStore) {
	makeDead(t, s, envelope(key("evt_1"), "p", base), base)
	for _, q := range []ops.Query{
		{Limit: 0},
		{Limit: -1},
		{State: webhooks.StatePending, Limit: 10},
		{State: webhooks.StateSucceeded, Limit: 10},
		{State: "DEAD", Limit: 10},
	} {
		if page, err := s.List(t.Context(), q); !errors.Is(err, ops.ErrInvalidRequest) || len(page.Items) != 0 {
			t.Errorf("List(%s) = (%d items, %v); want no items and an error wrapping ops.ErrInvalidRequest", fmtQuery(q), len(page.Items), err)
		}
	}
}

func testListEmpty(t *testing.T, s opsStore) {
	wantList(t, s, ops.Query{}, nil)
	wantList(t, s, ops.Query{State: webhooks.StateClosed}, nil)
	mustEnqueue(t, s, envelope(key("pending"), "p", base))
	wantList(t, s, ops.Query{}, nil)
}

// testListReadsNoPayload: a listed item carries neither its payload nor
// its headers, which lists do not show (Get does), whatever their size;
// only the payload's length.
func testListReadsNoPayload(t *testing.T, s opsStore) {
	payload := strings.Repeat(`{"line":"a large dead letter"},`, 8<<10) // 256 KiB
	env := envelope(key("large"), payload, base)
	makeDead(t, s, env, base)
	closed := envelope(key("closed"), payload+" ", at(time.Second))
	makeDead(t, s, closed, at(time.Second))
	mustClose(t, s, closeOf(closed.Key, at(2*time.Second)))

	for _, q := range []ops.Query{{Limit: 10}, {State: webhooks.StateClosed, Limit: 10}} {
		page, err := s.List(t.Context(), q)
		if err != nil || len(page.Items) != 1 {
			t.Fatalf("List(%s) = %d items, %v; want 1 item", fmtQuery(q), len(page.Items), err)
		}
		it := page.Items[0]
		want := env
		if q.State == webhooks.StateClosed {
			want = closed
		}
		checkSummary(t, "List("+fmtQuery(q)+")", it, mustGet(t, s, want.Key))
	}
	if d := mustDetail(t, s, env.Key); string(d.Payload) != payload || !headersEqual(d.Headers, env.Headers) {
		t.Errorf("Get(%s) after List: %d payload bytes, headers %v; want the stored %d bytes and %v", fmtKey(env.Key), len(d.Payload), d.Headers, len(payload), env.Headers)
	}
}
