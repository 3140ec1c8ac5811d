package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// groupCases pin Enqueue under concurrency as a store that groups
// concurrent calls into one commit (pgstore's group commit) must keep it:
// every call gets its own outcome, whatever else is in its batch, and a
// call whose context ends is answered alone.
var groupCases = []inboxCase{
	{"EnqueueConcurrentMixedOutcomes", testEnqueueConcurrentMixedOutcomes},
	{"EnqueueCanceledCallerAlone", testEnqueueCanceledCallerAlone},
}

// testEnqueueConcurrentMixedOutcomes: calls released at once, of new keys,
// of duplicates and conflicts of stored items, and of one new key sent
// with two payloads, each get their own outcome, and the side effects of
// each (duplicate counts, conflict counts, quarantined deliveries) are all
// there, as if the calls had run one after another.
func testEnqueueConcurrentMixedOutcomes(t *testing.T, s webhooks.InboxStore) {
	const (
		news      = 12
		dups      = 6
		conflicts = 5
		racers    = 8 // half with each payload
	)
	dup := envelope(key("dup"), "stored", base)
	conf := envelope(key("conf"), "stored", base)
	mustEnqueue(t, s, dup)
	mustEnqueue(t, s, conf)

	seen := at(time.Second) // every call's time, so LastSeenAt is known
	type call struct {
		env  webhooks.Envelope
		kind string
	}
	var calls []call
	for i := range news {
		calls = append(calls, call{envelope(key(fmt.Sprintf("new_%02d", i)), fmt.Sprintf("new %d", i), seen), "new"})
	}
	for range dups {
		again := dup
		again.ReceivedAt = seen
		calls = append(calls, call{again, "duplicate"})
	}
	for i := range conflicts {
		calls = append(calls, call{conflicting(conf.Key, i, seen), "conflict"})
	}
	race := [2]webhooks.Envelope{envelope(key("race"), "race A", seen), envelope(key("race"), "race B", seen)}
	for i := range racers {
		calls = append(calls, call{race[i%2], fmt.Sprintf("race %c", 'A'+i%2)})
	}

	results := make([]webhooks.EnqueueResult, len(calls))
	errs := make([]error, len(calls))
	runConcurrently(len(calls), func(i int) {
		results[i], errs[i] = s.Enqueue(t.Context(), calls[i].env)
	})

	raceNews := map[string]int{}
	for i, c := range calls {
		if errs[i] != nil {
			t.Fatalf("concurrent Enqueue #%d (%s of %s): %v; want no error", i, c.kind, fmtKey(c.env.Key), errs[i])
		}
		if results[i].State != webhooks.StatePending {
			t.Errorf("concurrent Enqueue #%d (%s of %s): State %s; want %s", i, c.kind, fmtKey(c.env.Key), results[i].State, webhooks.StatePending)
		}
		got := results[i].Outcome
		switch c.kind {
		case "new", "duplicate", "conflict":
			if got.String() != c.kind {
				t.Errorf("concurrent Enqueue #%d of %s: outcome %v; want %s", i, fmtKey(c.env.Key), got, c.kind)
			}
		default:
			if got == webhooks.EnqueueNew {
				raceNews[c.kind]++
			}
		}
	}
	if len(raceNews) != 1 || raceNews["race A"]+raceNews["race B"] != 1 {
		t.Fatalf("%d concurrent Enqueue of one new key with two payloads: new outcomes by payload %v; want exactly one new", racers, raceNews)
	}
	winner := 0
	if raceNews["race B"] == 1 {
		winner = 1
	}
	for i, c := range calls {
		switch c.kind {
		case "race A", "race B":
			want := webhooks.EnqueueConflict
			if c.env.PayloadSHA256 == race[winner].PayloadSHA256 {
				want = webhooks.EnqueueDuplicate
			}
			if got := results[i].Outcome; got != want && got != webhooks.EnqueueNew {
				t.Errorf("concurrent Enqueue #%d (%s, %s stored): outcome %v; want %v", i, c.kind, string(race[winner].Payload), got, want)
			}
		}
	}

	for i := range news {
		checkStored(t, s, enqueuedItem(calls[i].env), "after concurrent Enqueue of a new key among duplicates and conflicts")
	}
	wantDup := enqueuedItem(dup)
	wantDup.DuplicateCount, wantDup.LastSeenAt = dups, seen
	checkStored(t, s, wantDup, fmt.Sprintf("after %d concurrent duplicates", dups))
	checkStored(t, s, enqueuedItem(conf), "after concurrent conflicts (the item does not change)")
	wantRace := enqueuedItem(race[winner])
	wantRace.DuplicateCount = racers/2 - 1
	checkStored(t, s, wantRace, "after the race")
	if o, ok := s.(ops.Store); ok {
		d := mustDetail(t, o, conf.Key)
		if d.Conflicts != conflicts || len(d.Quarantine) != conflicts {
			t.Errorf("Get(%s) after %d concurrent conflicts: Conflicts %d, %d quarantined; want %d and %d",
				fmtKey(conf.Key), conflicts, d.Conflicts, len(d.Quarantine), conflicts, conflicts)
		}
		kept := map[string]bool{}
		for _, q := range d.Quarantine {
			kept[string(q.Payload)] = true
		}
		for i := range conflicts {
			if p := string(conflicting(conf.Key, i, seen).Payload); !kept[p] {
				t.Errorf("Get(%s).Quarantine lacks the conflicting delivery %q", fmtKey(conf.Key), p)
			}
		}
		if d = mustDetail(t, o, wantRace.Key); d.Conflicts != racers/2 || len(d.Quarantine) != racers/2 {
			t.Errorf("Get(%s) after %d concurrent deliveries of the other payload: Conflicts %d, %d quarantined; want %d and %d",
				fmtKey(wantRace.Key), racers/2, d.Conflicts, len(d.Quarantine), racers/2, racers/2)
		}
	}

	leases, err := acquire(t, s, seen, leaseFor, 100)
	if err != nil {
		t.Fatalf("Acquire after the concurrent calls: %v", err)
	}
	if want := news + 3; len(leases) != want {
		t.Errorf("Acquire after the concurrent calls leased %d items; want %d: %d new keys, the race's and the two stored before", len(leases), want, news)
	}
	for _, l := range leases {
		for _, want := range []webhooks.Item{wantDup, enqueuedItem(conf), wantRace} {
			if l.Key() == want.Key {
				checkItem(t, "Lease.Item after the concurrent calls", l.Item, leasedItem(want, seen, leaseFor))
			}
		}
	}
}

// testEnqueueCanceledCallerAlone: a call whose context is cancelled while
// other calls are under way fails alone, with the context's error (or
// succeeds, if it was done first); the other calls succeed. Its envelope
// may have been stored all the same (durable but unacknowledged); storing
// it again then finds it, and nothing is stored twice.
func testEnqueueCanceledCallerAlone(t *testing.T, s webhooks.InboxStore) {
	const n, victim = 24, 11
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	envs := make([]webhooks.Envelope, n)
	for i := range envs {
		envs[i] = envelope(key(fmt.Sprintf("evt_%02d", i)), fmt.Sprintf("p%d", i), base)
	}
	results := make([]webhooks.EnqueueResult, n)
	errs := make([]error, n)
	var cancelled sync.WaitGroup
	cancelled.Add(1)
	runConcurrently(n+1, func(i int) {
		switch {
		case i == n:
			cancel()
			cancelled.Done()
		case i == victim:
			results[i], errs[i] = s.Enqueue(ctx, envs[i])
		default:
			results[i], errs[i] = s.Enqueue(t.Context(), envs[i])
		}
	})
	cancelled.Wait()
	for i := range envs {
		switch {
		case i == victim && errs[i] != nil:
			if !errors.Is(errs[i], context.Canceled) {
				t.Errorf("Enqueue(%s) whose context was cancelled: error %v; want nil or an error wrapping context.Canceled", fmtKey(envs[i].Key), errs[i])
			}
		case errs[i] != nil:
			t.Errorf("Enqueue(%s) beside a cancelled call: %v; want no error (a cancelled caller fails alone)", fmtKey(envs[i].Key), errs[i])
		case results[i].Outcome != webhooks.EnqueueNew:
			t.Errorf("Enqueue(%s) of a new key: outcome %v; want new", fmtKey(envs[i].Key), results[i].Outcome)
		}
	}
	res, err := s.Enqueue(t.Context(), envs[victim])
	switch {
	case err != nil:
		t.Fatalf("Enqueue(%s) again after its cancelled call: %v; want no error", fmtKey(envs[victim].Key), err)
	case errs[victim] == nil && res.Outcome != webhooks.EnqueueDuplicate:
		t.Errorf("Enqueue(%s) again after its call succeeded: outcome %v; want duplicate", fmtKey(envs[victim].Key), res.Outcome)
	case res.Outcome == webhooks.EnqueueConflict:
		t.Errorf("Enqueue(%s) again after its cancelled call: outcome conflict; want new (it was not stored) or duplicate (it was)", fmtKey(envs[victim].Key))
	}
	leases, err := acquire(t, s, base, leaseFor, 2*n)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if len(leases) != n {
		t.Errorf("Acquire after %d keys were enqueued, one of them twice: %d leases; want %d", n, len(leases), n)
	}
}

// settleBatchCases pin webhooks.BatchSettler for the stores that have it.
var settleBatchCases = []inboxCase{
	{"SettleBatchLikeSettle", testSettleBatchLikeSettle},
	{"SettleBatchStaleTokenFailsAlone", testSettleBatchStaleTokenFailsAlone},
}

// batchSettler returns s as a webhooks.BatchSettler: the cases of the
// group run only on one.
func batchSettler(s webhooks.InboxStore) webhooks.BatchSettler { return s.(webhooks.BatchSettler) }

// errKind names the error classes Settle's contract tells apart.
func errKind(err error) string {
	switch {
	case err == nil:
		return "nil"
	case errors.Is(err, webhooks.ErrLeaseLost):
		return "ErrLeaseLost"
	case errors.Is(err, webhooks.ErrAlreadySettled):
		return "ErrAlreadySettled"
	}
	return "an error refusing the request"
}

// batchScenario makes the items of one twin set under prefix and returns
// the settlements to apply to them, in order. Both sets are made by the
// same calls at the same times, so after their settlements (one by one
// for one set, in one batch for the other) every item must equal its twin
// but for its key.
type batchScenario struct {
	name string
	kind string // the error its settlement must get (errKind)
}

var batchScenarios = []batchScenario{
	{"succeeded", "nil"},
	{"stale", "ErrLeaseLost"}, // the token of a lease taken over; its item settles later in the batch
	{"retried", "nil"},
	{"dead", "nil"},
	{"current", "nil"}, // the stale one's item, under its current token
	{"abandoned", "nil"},
	{"again", "ErrAlreadySettled"}, // settled before the batch, under the same token
	{"forged", "ErrLeaseLost"},
	{"missing", "ErrLeaseLost"},
	{"nil-lease", "an error refusing the request"},
	{"bogus", "an error refusing the request"}, // an unknown outcome; its item stays leased
}

// testSettleBatchLikeSettle: SettleBatch returns, for every settlement,
// what Settle would have, and leaves every item and its history as Settle
// would: each settlement of one set of items goes through Settle, one by
// one, and of a twin set, made by the same calls at the same times,
// through one SettleBatch.
func testSettleBatchLikeSettle(t *testing.T, s webhooks.InboxStore) {
	b := batchSettler(s)
	sets := []string{"single", "batch"}
	k := func(set, name string) webhooks.InboxKey { return key(set + "_" + name) }

	// The stale items' first lease, then every item's lease.
	for _, set := range sets {
		mustEnqueue(t, s, envelope(k(set, "stale"), "p", base))
	}
	stale := map[string]*webhooks.Lease{}
	leases, err := acquire(t, s, base, time.Second, 10)
	if err != nil || len(leases) != len(sets) {
		t.Fatalf("Acquire of the stale items: %d leases, %v; want %d, no error", len(leases), err, len(sets))
	}
	for _, l := range leases {
		stale[l.Key().EventID] = l
	}
	received := at(2 * time.Second)
	for _, set := range sets {
		for _, sc := range batchScenarios {
			switch sc.name {
			case "stale", "current", "forged", "missing", "nil-lease":
			default:
				mustEnqueue(t, s, envelope(k(set, sc.name), "p", received))
			}
		}
	}
	current := map[webhooks.InboxKey]*webhooks.Lease{}
	leases, err = acquire(t, s, received, leaseFor, 100)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	for _, l := range leases {
		current[l.Key()] = l
	}
	for _, set := range sets {
		l := current[k(set, "again")]
		if l == nil {
			t.Fatalf("Acquire did not lease %s", fmtKey(k(set, "again")))
		}
		mustSettle(t, s, succeed(l, at(3*time.Second)))
	}

	now := at(4 * time.Second)
	settlementsOf := func(set string) []webhooks.Settlement {
		var out []webhooks.Settlement
		for _, sc := range batchScenarios {
			var st webhooks.Settlement
			switch sc.name {
			case "succeeded", "again":
				st = succeed(current[k(set, sc.name)], now)
			case "stale":
				st = retry(stale[set+"_stale"], transient, at(time.Hour), now)
			case "retried":
				st = retry(current[k(set, sc.name)], transient, at(time.Hour), now)
			case "dead":
				st = deadLetter(current[k(set, sc.name)], permanent, now)
			case "current":
				st = succeed(current[k(set, "stale")], now)
			case "abandoned":
				st = abandon(current[k(set, sc.name)], now)
			case "forged":
				forged := *current[k(set, "succeeded")]
				forged.Token = "00000000-0000-4000-8000-000000000000"
				st = succeed(&forged, now)
			case "missing":
				missing := *current[k(set, "succeeded")]
				missing.Item.Key = k(set, "missing")
				st = succeed(&missing, now)
			case "nil-lease":
				st = webhooks.Settlement{Outcome: webhooks.AttemptSucceeded, Now: now}
			case "bogus":
				st = retry(current[k(set, "bogus")], transient, at(time.Hour), now)
				st.Outcome = "bogus"
			}
			if st.Lease == nil && sc.name != "nil-lease" {
				t.Fatalf("suite bug: no lease for %s_%s", set, sc.name)
			}
			out = append(out, st)
		}
		return out
	}
	single := settlementsOf("single")
	singleErrs := make([]error, len(single))
	for i, st := range single {
		singleErrs[i] = s.Settle(t.Context(), st)
	}
	batch := settlementsOf("batch")
	batchErrs := b.SettleBatch(t.Context(), batch)
	if len(batchErrs) != len(batch) {
		t.Fatalf("SettleBatch of %d settlements returned %d errors; want one per settlement", len(batch), len(batchErrs))
	}
	for i, sc := range batchScenarios {
		if got, want := errKind(singleErrs[i]), sc.kind; got != want {
			t.Errorf("suite check: Settle of %s: %s (%v); want %s", sc.name, got, singleErrs[i], want)
		}
		if got, want := errKind(batchErrs[i]), sc.kind; got != want {
			t.Errorf("SettleBatch entry %d (%s): %s (%v); want %s, as Settle alone returns", i, sc.name, got, batchErrs[i], want)
		}
	}

	if o, ok := s.(ops.Store); ok {
		for _, sc := range batchScenarios {
			switch sc.name {
			case "current", "forged", "missing", "nil-lease":
				continue
			}
			want, got := mustDetail(t, o, k("single", sc.name)), mustDetail(t, o, k("batch", sc.name))
			want.Item.Key = got.Item.Key
			checkItem(t, "Get("+fmtKey(got.Item.Key)+") after SettleBatch, against its twin settled by Settle", got.Item, want.Item)
			checkHistory(t, s, got.Item.Key, want.History, "after SettleBatch, against its twin settled by Settle")
		}
	}
	// What is due later, as the pipeline sees it: the retried, abandoned
	// and bogus items of both sets, twins alike, and nothing else (the
	// missing item was not created).
	later := at(2 * time.Hour)
	leases, err = acquire(t, s, later, leaseFor, 100)
	if err != nil {
		t.Fatalf("Acquire(Now %s): %v", fmtTime(later), err)
	}
	due := map[webhooks.InboxKey]*webhooks.Lease{}
	for _, l := range leases {
		due[l.Key()] = l
	}
	for _, sc := range batchScenarios {
		single, batch := due[k("single", sc.name)], due[k("batch", sc.name)]
		switch sc.name {
		case "retried", "abandoned", "bogus":
			if single == nil || batch == nil {
				t.Errorf("Acquire(Now %s) leased %s of the %s twins; want both due", fmtTime(later), leaseKeys(leases), sc.name)
				continue
			}
			want := single.Item
			want.Key = batch.Key()
			checkItem(t, "Lease.Item of "+fmtKey(batch.Key())+" after SettleBatch, against its twin settled by Settle", batch.Item, want)
			if batch.Attempt != single.Attempt || batch.Reclaimed != single.Reclaimed {
				t.Errorf("the lease on %s after SettleBatch: Attempt %d, Reclaimed %t; want its twin's %d, %t", fmtKey(batch.Key()), batch.Attempt, batch.Reclaimed, single.Attempt, single.Reclaimed)
			}
		default:
			if single != nil || batch != nil {
				t.Errorf("Acquire(Now %s) leased %s; want no %s item due", fmtTime(later), leaseKeys(leases), sc.name)
			}
		}
	}
}

// testSettleBatchStaleTokenFailsAlone: a batch of settlements, one of them
// under a token another acquisition made stale, settles every other lease;
// the stale one fails alone with ErrLeaseLost and changes nothing, and its
// attempt, recorded as crashed when the item was taken over, is recorded
// as lease_lost with the failure it carried.
func testSettleBatchStaleTokenFailsAlone(t *testing.T, s webhooks.InboxStore) {
	b := batchSettler(s)
	stale := envelope(key("stale"), "p", base)
	mustEnqueue(t, s, stale)
	old := mustAcquireKey(t, s, stale.Key, base, time.Second)
	var envs []webhooks.Envelope
	for i := range 6 {
		env := envelope(key(fmt.Sprintf("evt_%d", i)), "p", at(time.Second))
		mustEnqueue(t, s, env)
		envs = append(envs, env)
	}
	taken := at(time.Second)
	leases, err := acquire(t, s, taken, leaseFor, 10)
	if err != nil || len(leases) != len(envs)+1 {
		t.Fatalf("Acquire: %d leases, %v; want %d", len(leases), err, len(envs)+1)
	}
	var settlements []webhooks.Settlement
	var takenOver *webhooks.Lease
	now := at(2 * time.Second)
	for i, l := range leases {
		if l.Key() == stale.Key {
			takenOver = l
			continue
		}
		settlements = append(settlements, succeed(l, now))
		if i == 2 {
			settlements = append(settlements, retry(old, transient, at(time.Hour), now))
		}
	}
	errs := b.SettleBatch(t.Context(), settlements)
	if len(errs) != len(settlements) {
		t.Fatalf("SettleBatch of %d settlements returned %d errors", len(settlements), len(errs))
	}
	for i, st := range settlements {
		if st.Lease == old {
			wantLeaseLost(t, errs[i], "SettleBatch entry for a stale token")
			continue
		}
		if errs[i] != nil {
			t.Errorf("SettleBatch entry %d (%s, current token) beside a stale one: %v; want nil", i, fmtKey(st.Lease.Key()), errs[i])
		}
		if o, ok := s.(ops.Store); ok {
			if it := mustGet(t, o, st.Lease.Key()); it.State != webhooks.StateSucceeded || !it.CompletedAt.Equal(now) {
				t.Errorf("Get(%s) after SettleBatch: State %s, CompletedAt %s; want %s at %s", fmtKey(st.Lease.Key()), it.State, fmtTime(it.CompletedAt), webhooks.StateSucceeded, fmtTime(now))
			}
		}
	}
	if o, ok := s.(ops.Store); ok {
		if it := mustGet(t, o, stale.Key); it.State != webhooks.StateLeased || it.LastError != nil {
			t.Errorf("Get(%s) after its stale settlement: State %s, LastError %s; want still %s under the new lease, no error",
				fmtKey(stale.Key), it.State, fmtErrorRecord(it.LastError), webhooks.StateLeased)
		}
	}
	checkHistory(t, s, stale.Key, []ops.Attempt{
		attemptOf(1, ops.OutcomeLeaseLost, base, now, transient),
	}, "after a stale settlement in a batch")
	wantNothingDue(t, s, taken.Add(leaseFor-time.Microsecond), "the batch settled its items, and the stale settlement left the item leased to its new holder")
	if errs := b.SettleBatch(t.Context(), []webhooks.Settlement{succeed(takenOver, at(3*time.Second))}); len(errs) != 1 || errs[0] != nil {
		t.Errorf("SettleBatch of the current lease after the stale one: %v; want [nil]", errs)
	}
	wantNothingDue(t, s, at(24*time.Hour), "every item succeeded")
}
