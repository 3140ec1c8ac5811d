package storetest

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// checkItem reports every field of got that differs from want, prefixed with
// what.
func checkItem(t *testing.T, what string, got, want webhooks.Item) {
	t.Helper()
	for _, d := range diffItem(got, want) {
		t.Errorf("%s: %s", what, d)
	}
}

// diffItem describes each field of got that differs from want. Times are
// compared with Equal; nil and empty payloads and headers are equal. Seq
// is the store's own numbering and is not compared.
func diffItem(got, want webhooks.Item) []string {
	var diffs []string
	add := func(field string, equal bool, g, w any) {
		if !equal {
			diffs = append(diffs, fmt.Sprintf("%s = %v, want %v", field, g, w))
		}
	}
	addTime := func(field string, g, w time.Time) {
		add(field, g.Equal(w), fmtTime(g), fmtTime(w))
	}
	add("Key", got.Key == want.Key, fmtKey(got.Key), fmtKey(want.Key))
	add("Handler", got.Handler == want.Handler, fmt.Sprintf("%q", got.Handler), fmt.Sprintf("%q", want.Handler))
	add("Ordering", got.Ordering == want.Ordering, fmt.Sprintf("%+v", got.Ordering), fmt.Sprintf("%+v", want.Ordering))
	add("Ordered", got.Ordered == want.Ordered, got.Ordered, want.Ordered)
	add("Priority", got.Priority == want.Priority, got.Priority, want.Priority)
	add("Overtook", got.Overtook == want.Overtook, fmt.Sprintf("%q", got.Overtook), fmt.Sprintf("%q", want.Overtook))
	add("EventType", got.EventType == want.EventType, fmt.Sprintf("%q", got.EventType), fmt.Sprintf("%q", want.EventType))
	add("Payload", bytes.Equal(got.Payload, want.Payload), fmt.Sprintf("%q", got.Payload), fmt.Sprintf("%q", want.Payload))
	add("Headers", headersEqual(got.Headers, want.Headers), got.Headers, want.Headers)
	add("PayloadSHA256", got.PayloadSHA256 == want.PayloadSHA256, fmt.Sprintf("%x", got.PayloadSHA256), fmt.Sprintf("%x", want.PayloadSHA256))
	add("KeyID", got.KeyID == want.KeyID, fmt.Sprintf("%q", got.KeyID), fmt.Sprintf("%q", want.KeyID))
	add("State", got.State == want.State, got.State, want.State)
	add("Attempts", got.Attempts == want.Attempts, got.Attempts, want.Attempts)
	addTime("NextAttemptAt", got.NextAttemptAt, want.NextAttemptAt)
	addTime("LeaseExpiresAt", got.LeaseExpiresAt, want.LeaseExpiresAt)
	add("LastError", errorRecordEqual(got.LastError, want.LastError), fmtErrorRecord(got.LastError), fmtErrorRecord(want.LastError))
	add("APIVersion", got.APIVersion == want.APIVersion, fmt.Sprintf("%q", got.APIVersion), fmt.Sprintf("%q", want.APIVersion))
	add("TraceLink", got.TraceLink == want.TraceLink, fmt.Sprintf("%q", got.TraceLink), fmt.Sprintf("%q", want.TraceLink))
	add("DuplicateCount", got.DuplicateCount == want.DuplicateCount, got.DuplicateCount, want.DuplicateCount)
	addTime("LastSeenAt", got.LastSeenAt, want.LastSeenAt)
	addTime("OccurredAt", got.OccurredAt, want.OccurredAt)
	addTime("ReceivedAt", got.ReceivedAt, want.ReceivedAt)
	addTime("UpdatedAt", got.UpdatedAt, want.UpdatedAt)
	addTime("CompletedAt", got.CompletedAt, want.CompletedAt)
	addTime("DeadAt", got.DeadAt, want.DeadAt)
	addTime("ClosedAt", got.ClosedAt, want.ClosedAt)
	return diffs
}

// checkSummary reports every field of the listed item got that differs
// from the stored item want: got has no payload and no headers, and the
// payload's length.
func checkSummary(t *testing.T, what string, got ops.Summary, want webhooks.Item) {
	t.Helper()
	if got.Payload != nil || got.Headers != nil {
		t.Errorf("%s: item %s has a %d-byte payload and headers %v; want neither (nil): a list does not read what it does not show", what, fmtKey(got.Key), len(got.Payload), got.Headers)
	}
	if got.PayloadBytes != len(want.Payload) {
		t.Errorf("%s: item %s PayloadBytes = %d; want %d, the stored payload's length", what, fmtKey(got.Key), got.PayloadBytes, len(want.Payload))
	}
	it := got.Item
	it.Payload, it.Headers = want.Payload, want.Headers
	checkItem(t, what, it, want)
}

// headersEqual compares headers as stored: a nil and an empty header are the
// same, and so are a nil and an empty value list.
func headersEqual(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, av := range a {
		bv, ok := b[k]
		if !ok || !slices.Equal(av, bv) {
			return false
		}
	}
	return true
}

func errorRecordEqual(a, b *webhooks.ErrorRecord) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Class == b.Class && a.Message == b.Message && a.At.Equal(b.At)
}

func fmtErrorRecord(r *webhooks.ErrorRecord) string {
	if r == nil {
		return "nil"
	}
	msg := r.Message
	if len(msg) > 60 {
		msg = fmt.Sprintf("%s… (%d bytes)", msg[:60], len(r.Message))
	}
	return fmt.Sprintf("{Class: %q, Message: %q, At: %s}", r.Class, msg, fmtTime(r.At))
}

// fmtTime prints t in UTC to the nanosecond, or "zero time".
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "zero time"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// fmtKey prints k with its fields quoted, so an empty tenant shows.
func fmtKey(k webhooks.InboxKey) string {
	return fmt.Sprintf("{%q %q %q}", k.Provider, k.Tenant, k.EventID)
}

// keysOf returns the keys of items, in order.
func keysOf(items []ops.Summary) []webhooks.InboxKey {
	keys := make([]webhooks.InboxKey, len(items))
	for i, it := range items {
		keys[i] = it.Key
	}
	return keys
}

// fmtList prints one line per item, as f prints it, for failure messages.
func fmtList[T any](items []T, f func(T) string) string {
	var b strings.Builder
	for _, it := range items {
		b.WriteString("\n\t" + f(it))
	}
	if len(items) == 0 {
		b.WriteString(" (none)")
	}
	return b.String()
}

// fmtKeys prints keys one per line.
func fmtKeys(keys []webhooks.InboxKey) string { return fmtList(keys, fmtKey) }
