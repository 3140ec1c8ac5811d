package cursor

import (
	"errors"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestRoundTripAndOrder(t *testing.T) {
	t.Parallel()
	for _, state := range []webhooks.State{webhooks.StateDead, webhooks.StateClosed} {
		c := Position{State: state, At: t0.Add(123456 * time.Microsecond), Key: webhooks.InboxKey{Provider: "p", Tenant: "", EventID: "e/1"}}
		got, err := Parse(c.String(), state)
		if err != nil {
			t.Fatalf("Parse(String()) of a %s cursor = %v", state, err)
		}
		if got.State != state || !got.At.Equal(c.At) || got.Key != c.Key {
			t.Fatalf("round trip: got %+v, want %+v", got, c)
		}
		if !c.Before(c.At.Add(-time.Nanosecond), c.Key) {
			t.Error("older items come after the cursor")
		}
		if !c.Before(c.At, webhooks.InboxKey{Provider: "a"}) {
			t.Error("same time, smaller key: after the cursor")
		}
		if c.Before(c.At, c.Key) {
			t.Error("the cursor's own item is not after it")
		}
	}
	for _, bad := range []string{"", "!!!", "e30", "bm90IGpzb24"} { // "", junk, "{}", "not json"
		if _, err := Parse(bad, webhooks.StateDead); !errors.Is(err, ops.ErrInvalidCursor) {
			t.Errorf("Parse(%q) error %v; want ops.ErrInvalidCursor", bad, err)
		}
	}
}

// TestCursorOfTheOtherListing: a cursor made for dead letters is refused
// for closed items, and the other way round, so a page never starts at a
// position of another order.
func TestCursorOfTheOtherListing(t *testing.T) {
	t.Parallel()
	k := webhooks.InboxKey{Provider: "p", EventID: "e"}
	dead := Position{State: webhooks.StateDead, At: t0, Key: k}.String()
	closed := Position{State: webhooks.StateClosed, At: t0, Key: k}.String()
	if _, err := Parse(dead, webhooks.StateClosed); !errors.Is(err, ops.ErrInvalidCursor) {
		t.Errorf("Parse(a dead-letter cursor, closed) error %v; want ops.ErrInvalidCursor", err)
	}
	if _, err := Parse(closed, webhooks.StateDead); !errors.Is(err, ops.ErrInvalidCursor) {
		t.Errorf("Parse(a closed cursor, dead) error %v; want ops.ErrInvalidCursor", err)
	}
}

// FuzzParse: any string either fails with an error wrapping
// ops.ErrInvalidCursor, as ops.Store.List promises, or yields a position
// that encodes back to a string parsing to the same position.
func FuzzParse(f *testing.F) {
	f.Add(Position{State: webhooks.StateDead, Key: webhooks.InboxKey{Provider: "p", EventID: "e"}}.String())
	f.Add(Position{State: webhooks.StateClosed, Key: webhooks.InboxKey{Provider: "p", EventID: "e"}}.String())
	f.Add("e30")
	f.Add("!!")
	f.Fuzz(func(t *testing.T, s string) {
		for _, state := range []webhooks.State{webhooks.StateDead, webhooks.StateClosed} {
			c, err := Parse(s, state)
			if err != nil {
				if !errors.Is(err, ops.ErrInvalidCursor) {
					t.Fatalf("Parse(%q) error %v does not wrap ops.ErrInvalidCursor", s, err)
				}
				continue
			}
			again, err := Parse(c.String(), state)
			if err != nil {
				t.Fatalf("re-encoded cursor %q does not parse: %v", c.String(), err)
			}
			if again.State != c.State || !again.At.Equal(c.At) || again.Key != c.Key {
				t.Fatalf("round trip changed the cursor: %+v → %+v", c, again)
			}
		}
	})
}
