package storetest

import (
	"fmt"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// testHeldKeysInStats: Stats lists the held keys (an ordered key whose
// head has failed and has jobs waiting behind it), the deepest first, with
// the head, its attempts and error and the job that runs next, bounded by
// StatsRequest.HeldKeys, counting the rest; a failing head with nothing
// behind it, and a healthy head with jobs behind it, hold nothing; States
// counts the waiting jobs. Mutation: list a key whatever its head's error.
func testHeldKeysInStats(t *testing.T, s opsStore) {
	enqueue := func(id, okey string, receivedAt time.Time) {
		mustEnqueue(t, s, ordered(id, okey, 0, receivedAt))
	}
	enqueue("a1", "cus_a", base)
	enqueue("b1", "cus_b", base)
	enqueue("c1", "cus_c", base)
	enqueue("d1", "cus_d", base)
	leases := wantLeases(t, s, ledger, base, "the heads", "a1", "b1", "c1", "d1")
	for _, id := range []string{"a1", "b1", "c1"} {
		mustSettle(t, s, retry(leases[id], transient, at(time.Hour), at(time.Second)))
	}
	enqueue("a2", "cus_a", at(2*time.Second))
	enqueue("a3", "cus_a", at(3*time.Second))
	enqueue("b2", "cus_b", at(4*time.Second))
	enqueue("d2", "cus_d", at(5*time.Second))

	heldA := ops.HeldKey{Handler: ledger, Provider: "acme", Tenant: "t1", Key: "cus_a", Depth: 3, Head: key("a1"), HeadAttempts: 1,
		HeadError: &webhooks.ErrorRecord{Class: transient.Class, Message: transient.Message, At: at(time.Second)}, Next: key("a2"), NextReceivedAt: at(2 * time.Second)}
	heldB := ops.HeldKey{Handler: ledger, Provider: "acme", Tenant: "t1", Key: "cus_b", Depth: 2, Head: key("b1"), HeadAttempts: 1,
		HeadError: &webhooks.ErrorRecord{Class: transient.Class, Message: transient.Message, At: at(time.Second)}, Next: key("b2"), NextReceivedAt: at(4 * time.Second)}
	now := at(time.Minute)
	st := mustStats(t, s, now)
	checkHeldKeys(t, st, []ops.HeldKey{heldA, heldB}, 0, "with the default bound")
	if st.States[webhooks.StateWaiting] != 4 {
		t.Errorf("Stats.States[waiting] = %d; want 4 (a2, a3, b2, d2)", st.States[webhooks.StateWaiting])
	}
	got, err := s.Stats(t.Context(), ops.StatsRequest{Now: now, HeldKeys: 1})
	if err != nil {
		t.Fatalf("Stats(HeldKeys 1): %v", err)
	}
	checkHeldKeys(t, got, []ops.HeldKey{heldA}, 1, "with HeldKeys 1")
	if _, err := s.Stats(t.Context(), ops.StatsRequest{Now: now, HeldKeys: -1}); err == nil {
		t.Errorf("Stats(HeldKeys -1) = nil error; want a refusal")
	}
}

// checkHeldKeys requires st to list want and count more left out.
func checkHeldKeys(t *testing.T, st ops.Stats, want []ops.HeldKey, more int64, when string) {
	t.Helper()
	f := func(h ops.HeldKey) string {
		return fmt.Sprintf("{%s %s/%s/%s depth %d head %s×%d %s next %s at %s}", h.Handler, h.Provider, h.Tenant, h.Key, h.Depth,
			h.Head.EventID, h.HeadAttempts, fmtErrorRecord(h.HeadError), h.Next.EventID, fmtTime(h.NextReceivedAt))
	}
	ok := len(st.HeldKeys) == len(want) && st.MoreHeldKeys == more
	for i := 0; ok && i < len(want); i++ {
		g, w := st.HeldKeys[i], want[i]
		ok = f(g) == f(w) && errorRecordEqual(g.HeadError, w.HeadError) && g.NextReceivedAt.Equal(w.NextReceivedAt)
	}
	if !ok {
		t.Errorf("Stats %s: HeldKeys%s\nMoreHeldKeys %d; want%s\nMoreHeldKeys %d", when, fmtList(st.HeldKeys, f), st.MoreHeldKeys, fmtList(want, f), more)
	}
}
