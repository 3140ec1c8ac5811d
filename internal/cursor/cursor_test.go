package cursor

import (
	"errors"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestRoundTripAndOrder(t *testing.T) {
	t.Parallel()
	c := DeadLetter{DeadAt: t0.Add(123456 * time.Microsecond), Key: webhooks.InboxKey{Provider: "p", Tenant: "", EventID: "e/1"}}
	got, err := Parse(c.String())
	if err != nil {
		t.Fatalf("Parse(String()) = %v", err)
	}
	if !got.DeadAt.Equal(c.DeadAt) || got.Key != c.Key {
		t.Fatalf("round trip: got %+v, want %+v", got, c)
	}
	for _, bad := range []string{"", "!!!", "e30", "bm90IGpzb24"} { // "", junk, "{}", "not json"
		if _, err := Parse(bad); !errors.Is(err, webhooks.ErrInvalidCursor) {
			t.Errorf("Parse(%q) error %v; want ErrInvalidCursor", bad, err)
		}
	}
	if !c.Before(c.DeadAt.Add(-time.Nanosecond), c.Key) {
		t.Error("older items come after the cursor")
	}
	if !c.Before(c.DeadAt, webhooks.InboxKey{Provider: "a"}) {
		t.Error("same time, smaller key: after the cursor")
	}
	if c.Before(c.DeadAt, c.Key) {
		t.Error("the cursor's own item is not after it")
	}
}

// FuzzParse: any string either fails with an error wrapping
// webhooks.ErrInvalidCursor, as OperatorStore.DeadLetters promises, or
// yields a cursor that encodes back to a string parsing to the same cursor.
func FuzzParse(f *testing.F) {
	f.Add(DeadLetter{Key: webhooks.InboxKey{Provider: "p", EventID: "e"}}.String())
	f.Add("e30")
	f.Add("!!")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(s)
		if err != nil {
			if !errors.Is(err, webhooks.ErrInvalidCursor) {
				t.Fatalf("Parse(%q) error %v does not wrap ErrInvalidCursor", s, err)
			}
			return
		}
		again, err := Parse(c.String())
		if err != nil {
			t.Fatalf("re-encoded cursor %q does not parse: %v", c.String(), err)
		}
		if !again.DeadAt.Equal(c.DeadAt) || again.Key != c.Key {
			t.Fatalf("round trip changed the cursor: %+v → %+v", c, again)
		}
	})
}
