package storetest

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"net/http"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

var quarantineCases = []inboxCase{
	opsCase("ConflictIsQuarantined", testConflictIsQuarantined),
	opsCase("QuarantineIsBounded", testQuarantineIsBounded),
	opsCase("QuarantineConcurrent", testQuarantineConcurrent),
}

// conflicting returns a delivery of k with another payload, headers and
// key ID, received at receivedAt.
func conflicting(k webhooks.InboxKey, n int, receivedAt time.Time) webhooks.Envelope {
	payload := fmt.Sprintf(`{"id":%q,"amount":%d}`, k.EventID, 1000+n)
	return webhooks.Envelope{
		Key:           k,
		EventType:     "invoice.paid",
		Payload:       []byte(payload),
		Headers:       http.Header{"Content-Type": {"application/json"}, "X-Attempt": {fmt.Sprint(n)}},
		PayloadSHA256: sha256.Sum256([]byte(payload)),
		KeyID:         fmt.Sprintf("key-%d", n),
		APIVersion:    "2099-01-01",
		ReceivedAt:    receivedAt,
	}
}

// deliveryOf is the quarantined delivery env must leave.
func deliveryOf(env webhooks.Envelope) ops.Delivery {
	return ops.Delivery{Payload: env.Payload, Headers: env.Headers, PayloadSHA256: env.PayloadSHA256, KeyID: env.KeyID, ReceivedAt: env.ReceivedAt}
}

func diffDelivery(g, w ops.Delivery) string {
	if bytes.Equal(g.Payload, w.Payload) && headersEqual(g.Headers, w.Headers) && g.PayloadSHA256 == w.PayloadSHA256 &&
		g.KeyID == w.KeyID && g.ReceivedAt.Equal(w.ReceivedAt) {
		return ""
	}
	return fmt.Sprintf("got {Payload %q Headers %v SHA256 %x… KeyID %q ReceivedAt %s}\n\twant {Payload %q Headers %v SHA256 %x… KeyID %q ReceivedAt %s}",
		g.Payload, g.Headers, g.PayloadSHA256[:4], g.KeyID, fmtTime(g.ReceivedAt),
		w.Payload, w.Headers, w.PayloadSHA256[:4], w.KeyID, fmtTime(w.ReceivedAt))
}

// wantConflict requires Enqueue(env) to report a conflict with state.
func wantConflict(t *testing.T, s webhooks.InboxStore, env webhooks.Envelope, state webhooks.State) {
	t.Helper()
	res, err := s.Enqueue(t.Context(), env)
	if want := (webhooks.EnqueueResult{Outcome: webhooks.EnqueueConflict, State: state}); err != nil || res != want {
		t.Fatalf("Enqueue(%s) with another payload digest = %+v, %v; want %+v", fmtKey(env.Key), res, err, want)
	}
}

// testConflictIsQuarantined: the "done means": a delivery that
// reuses an event ID with another payload is kept beside the item, not
// lost, and the item does not change.
func testConflictIsQuarantined(t *testing.T, s opsStore) {
	env := envelope(key("evt_1"), `{"id":"evt_1","amount":1}`, base)
	mustEnqueue(t, s, env)
	first, second := conflicting(env.Key, 1, at(time.Second)), conflicting(env.Key, 2, at(2*time.Second))
	wantConflict(t, s, first, webhooks.StatePending)
	wantConflict(t, s, second, webhooks.StatePending)
	checkStored(t, s, enqueuedItem(env), "after two conflicting deliveries (the item does not change)")

	d := mustDetail(t, s, env.Key)
	if d.Conflicts != 2 || len(d.Quarantine) != 2 {
		t.Fatalf("Get after two conflicting deliveries: Conflicts %d, %d quarantined; want 2 and 2", d.Conflicts, len(d.Quarantine))
	}
	for i, w := range []webhooks.Envelope{first, second} {
		if diff := diffDelivery(d.Quarantine[i], deliveryOf(w)); diff != "" {
			t.Errorf("Get().Quarantine[%d]: %s", i, diff)
		}
	}
}

// testQuarantineIsBounded: at least the first QuarantineLimit conflicting
// deliveries are kept, in order; every one is counted.
func testQuarantineIsBounded(t *testing.T, s opsStore) {
	const extra = 4
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	var sent []webhooks.Envelope
	for i := range ops.QuarantineLimit + extra {
		c := conflicting(env.Key, i, at(time.Duration(i+1)*time.Second))
		wantConflict(t, s, c, webhooks.StatePending)
		sent = append(sent, c)
	}
	d := mustDetail(t, s, env.Key)
	if d.Conflicts != ops.QuarantineLimit+extra {
		t.Errorf("Get().Conflicts = %d after %d conflicting deliveries; want every one counted", d.Conflicts, ops.QuarantineLimit+extra)
	}
	if len(d.Quarantine) < ops.QuarantineLimit || len(d.Quarantine) > len(sent) {
		t.Fatalf("Get() holds %d quarantined deliveries of %d; want at least QuarantineLimit = %d", len(d.Quarantine), len(sent), ops.QuarantineLimit)
	}
	for i := range ops.QuarantineLimit {
		if diff := diffDelivery(d.Quarantine[i], deliveryOf(sent[i])); diff != "" {
			t.Errorf("Get().Quarantine[%d] (the first %d are kept, oldest first): %s", i, ops.QuarantineLimit, diff)
		}
	}
	checkStored(t, s, enqueuedItem(env), "after many conflicting deliveries (the item does not change)")
}

func testQuarantineConcurrent(t *testing.T, s opsStore) {
	const n = 30
	env := envelope(key("evt_1"), "p", base)
	mustEnqueue(t, s, env)
	runConcurrently(n, func(i int) {
		res, err := s.Enqueue(t.Context(), conflicting(env.Key, i, at(time.Second)))
		if err != nil || res.Outcome != webhooks.EnqueueConflict {
			t.Errorf("concurrent conflicting Enqueue = %+v, %v; want a conflict", res, err)
		}
	})
	d := mustDetail(t, s, env.Key)
	if d.Conflicts != n || len(d.Quarantine) < ops.QuarantineLimit {
		t.Errorf("after %d concurrent conflicting deliveries: Conflicts %d, %d quarantined; want %d and at least %d", n, d.Conflicts, len(d.Quarantine), n, ops.QuarantineLimit)
	}
	seen := make(map[string]bool)
	for _, q := range d.Quarantine {
		if seen[q.KeyID] {
			t.Errorf("the delivery with key ID %q is quarantined twice; want each once", q.KeyID)
		}
		seen[q.KeyID] = true
	}
}
