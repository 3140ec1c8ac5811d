package storetest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"net/http"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

var itemCases = []inboxCase{
	{"ItemsAreCopies", testItemsAreCopies},
	{"PayloadAndHeadersRoundTrip", testPayloadAndHeadersRoundTrip},
	{"CanceledContext", testCanceledContext},
}

func testGetMissing(t *testing.T, s opsStore) {
	mustEnqueue(t, s, envelope(key("evt_1"), "p", base))
	for _, k := range []webhooks.InboxKey{key("evt_2"), {Provider: "acme", Tenant: "", EventID: "evt_1"}, {}} {
		if _, err := s.Get(t.Context(), k); !errors.Is(err, ops.ErrNotFound) {
			t.Errorf("Get(%s) of a missing key: error %v; want an error wrapping ops.ErrNotFound", fmtKey(k), err)
		}
	}
}

// testItemsAreCopies: what a caller passes or receives is its own: the
// envelope it enqueued, a lease's item, and what operators read.
func testItemsAreCopies(t *testing.T, s webhooks.InboxStore) {
	env := envelope(key("evt_1"), `{"id":"evt_1"}`, base)
	want := enqueuedItem(env)
	want.Payload = []byte(`{"id":"evt_1"}`)
	want.Headers = env.Headers.Clone()
	mustEnqueue(t, s, env)

	o, isOps := s.(ops.Store)
	if isOps {
		got := mustGet(t, o, env.Key)
		got.Payload[0] = 'Y'
		got.Headers.Add("X-New", "1")
		got.Headers["X-Trace"][1] = "changed"
		checkStored(t, s, want, "after the caller changed an item Get returned")
	}

	now := at(time.Second)
	l := mustAcquire(t, s, now, leaseFor)
	checkItem(t, "Lease.Item", l.Item, leasedItem(want, now, leaseFor))
	l.Item.Payload[0] = 'Z'
	l.Item.Headers.Del("Content-Type")
	checkStored(t, s, leasedItem(want, now, leaseFor), "after the caller changed Lease.Item")
	mustSettle(t, s, abandon(l, at(2*time.Second)))
	l = mustAcquireKey(t, s, env.Key, at(2*time.Second), leaseFor)
	if !bytes.Equal(l.Item.Payload, want.Payload) || !headersEqual(l.Item.Headers, want.Headers) {
		t.Errorf("Lease.Item after the caller changed an earlier lease's item: Payload %q, Headers %v; want %q, %v (items must be copies)",
			l.Item.Payload, l.Item.Headers, want.Payload, want.Headers)
	}

	mustSettle(t, s, deadLetter(l, permanent, at(3*time.Second)))
	if !isOps {
		return
	}
	page, err := o.List(t.Context(), ops.Query{Limit: 10})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("List = %d items, error %v; want the one dead item", len(page.Items), err)
	}
	page.Items[0].LastError.Message = "changed"
	after := mustGet(t, o, env.Key)
	if after.LastError.Message != permanent.Message {
		t.Errorf("after the caller changed a List item: stored LastError.Message %q; want %q (items must be copies)",
			after.LastError.Message, permanent.Message)
	}
}

func testPayloadAndHeadersRoundTrip(t *testing.T, s webhooks.InboxStore) {
	cases := []struct {
		id      string
		payload []byte
		headers http.Header
	}{
		{"binary", []byte{0x00, 0xff, 0xfe, '{', 0x80, 0xc3, 0x28, 0x00}, http.Header{
			"X-Multi":      {"one", "two", "three"},
			"X-Empty":      {""},
			"Content-Type": {"application/octet-stream"},
			"X-Unicode":    {"héllo, 世界"},
		}},
		{"empty", []byte{}, http.Header{}},
		{"nil", nil, nil},
		{"json", []byte(`{"a":"b\u0000","n":1.50}`), http.Header{"X-Order": {"b", "a"}}},
	}
	for i, c := range cases {
		now := at(time.Duration(i) * time.Second)
		env := webhooks.Envelope{
			Key:           key(c.id),
			EventType:     "raw",
			Payload:       c.payload,
			Headers:       c.headers,
			PayloadSHA256: sha256.Sum256(c.payload),
			ReceivedAt:    now,
		}
		mustEnqueue(t, s, env)
		checkStored(t, s, enqueuedItem(env), "of a "+c.id+" payload (payload byte for byte, every header value in order)")
		l := mustAcquireKey(t, s, env.Key, now, leaseFor)
		checkItem(t, "Lease.Item of a "+c.id+" payload", l.Item, leasedItem(enqueuedItem(env), now, leaseFor))
	}
}

func testCanceledContext(t *testing.T, s webhooks.InboxStore) {
	ctx := canceledContext()
	env := envelope(key("evt_1"), "p", base)

	_, err := s.Enqueue(ctx, env)
	wantCanceled(t, err, "Enqueue")
	mustEnqueue(t, s, env) // new: nothing was stored
	leases, err := s.Acquire(ctx, webhooks.AcquireRequest{Now: base, LeaseDuration: leaseFor, Max: 1})
	wantCanceled(t, err, "Acquire")
	if len(leases) != 0 {
		t.Errorf("Acquire with a canceled context leased %d items; want none", len(leases))
	}
	checkStored(t, s, enqueuedItem(env), "after Acquire with a canceled context (nothing may change)")

	l := mustAcquire(t, s, base, leaseFor)
	if l.Attempt != 1 {
		t.Errorf("Acquire after one with a canceled context: Lease.Attempt = %d; want 1 (the canceled call counted nothing)", l.Attempt)
	}
	leased := stored(t, s, env.Key)
	for _, st := range settlements {
		wantCanceled(t, s.Settle(ctx, st.of(l, at(time.Second))), "Settle("+st.name+")")
	}
	wantCanceled(t, s.ExtendLease(ctx, webhooks.ExtendRequest{Lease: l, Now: at(time.Second), Duration: time.Hour}), "ExtendLease")
	if o, ok := s.(ops.Store); ok {
		_, err = o.Get(ctx, env.Key)
		wantCanceled(t, err, "Get")
		_, err = o.List(ctx, ops.Query{Limit: 10})
		wantCanceled(t, err, "List")
		_, err = o.Replay(ctx, replayOf(env.Key, at(time.Second)))
		wantCanceled(t, err, "Replay")
		_, err = o.Replay(ctx, bulkReplay(ops.Query{Limit: 10}, at(time.Second)))
		wantCanceled(t, err, "Replay(Query)")
		wantCanceled(t, o.CloseDeadLetter(ctx, closeOf(env.Key, at(time.Second))), "CloseDeadLetter")
		_, err = o.Stats(ctx, ops.StatsRequest{Now: at(time.Second)})
		wantCanceled(t, err, "Stats")
	}
	checkStored(t, s, leased, "after settling with a canceled context (nothing may change)")
	wantNothingDue(t, s, at(time.Second), "the lease settled with a canceled context is still valid")

	if err := s.Settle(t.Context(), succeed(l, at(time.Second))); err != nil {
		t.Errorf("Settle(succeeded) after calls with a canceled context: %v; want no error (the lease is still current)", err)
	}
}
