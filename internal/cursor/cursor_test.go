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
		if !c.Before(c.At.Add(-time.Nanosecond), c.Key, "") {
			t.Error("older items come after the cursor")
		}
		if !c.Before(c.At, webhooks.InboxKey{Provider: "a"}, "") {
			t.Error("same time, smaller key: after the cursor")
		}
		if c.Before(c.At, c.Key, "") {
			t.Error("the cursor's own item is not after it")
		}
		if c.Before(c.At, c.Key, "audit") {
			t.Error("same time and key, a handler after the default's: before the cursor in descending order, not after it")
		}
	}
	for _, bad := range []string{"", "!!!", "e30", "bm90IGpzb24"} { // "", junk, "{}", "not json"
		if _, err := Parse(bad, webhooks.StateDead); !errors.Is(err, ops.ErrInvalidCursor) {
			t.Errorf("Parse(%q) error %v; want ops.ErrInvalidCursor", bad, err)
		}
	}
}

// TestCursorHandler: a position's handler round-trips, orders jobs of one
// event and time (descending), and is left out of the cursor when it is
// the default handler's, so a cursor made before handlers existed (the
// literal below, of {State dead, t0, p//e}) still parses.
func TestCursorHandler(t *testing.T) {
	t.Parallel()
	k := webhooks.InboxKey{Provider: "p", EventID: "e"}
	c := Position{State: webhooks.StateDead, At: t0, Key: k, Handler: "ledger"}
	got, err := Parse(c.String(), webhooks.StateDead)
	if err != nil || got != c {
		t.Fatalf("Parse(String()) of a cursor of handler ledger = %+v, %v; want %+v", got, err, c)
	}
	if !c.Before(t0, k, "audit") || c.Before(t0, k, "ledger") || c.Before(t0, k, "metrics") {
		t.Error("jobs of one event and time: want audit after ledger's cursor, ledger and metrics not")
	}
	const old = "eyJ0IjoxNzY3MzIzMDQ1MDAwMDAwMDAwLCJwIjoicCIsIm4iOiIiLCJlIjoiZSJ9"
	got, err = Parse(old, webhooks.StateDead)
	if want := (Position{State: webhooks.StateDead, At: t0, Key: k}); err != nil || got != want {
		t.Errorf("Parse(a cursor made before handlers) = %+v, %v; want %+v", got, err, want)
	}
	if s := (Position{State: webhooks.StateDead, At: t0, Key: k}).String(); s != old {
		t.Errorf("the default handler's cursor is %s; want %s, as before handlers (no \"h\" field)", s, old)
	}
	bad := Position{State: webhooks.StateDead, At: t0, Key: k, Handler: "Not A Name"}.String()
	if _, err := Parse(bad, webhooks.StateDead); !errors.Is(err, ops.ErrInvalidCursor) {
		t.Errorf("Parse(a cursor naming an invalid handler) error %v; want ops.ErrInvalidCursor", err)
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

// TestReplayCursor: a bulk replay's cursor keeps its position, the end of
// its selection and its progress; it is refused by a listing, by a replay
// of another state, by a dry run when it is a replay's (and the other way
// round), with counts a replay cannot have or over the query's limit, and
// with an end that is not after its position.
func TestReplayCursor(t *testing.T) {
	t.Parallel()
	k := webhooks.InboxKey{Provider: "p", Tenant: "t", EventID: "e"}
	endKey := webhooks.InboxKey{Provider: "p", Tenant: "t", EventID: "a"}
	for _, state := range []webhooks.State{webhooks.StateDead, webhooks.StateClosed, webhooks.StateSucceeded} {
		q := ops.Query{State: state, Limit: 1203}
		for _, dry := range []bool{false, true} {
			r := Replay{Position: Position{State: state, At: t0, Key: k}, End: Position{State: state, At: t0.Add(-time.Hour), Key: endKey}, Done: 500, Total: 1203, DryRun: dry}
			got, err := ParseReplay(r.String(), q, dry)
			if err != nil || got.Position != r.Position || got.End != r.End || got.Done != 500 || got.Total != 1203 || got.DryRun != dry {
				t.Errorf("ParseReplay(String()) of %+v = %+v, %v; want it back", r, got, err)
			}
			if _, err := ParseReplay(r.String(), q, !dry); !errors.Is(err, ops.ErrInvalidCursor) {
				t.Errorf("ParseReplay(a cursor with DryRun %t, DryRun %t) error %v; want ops.ErrInvalidCursor", dry, !dry, err)
			}
			if _, err := Parse(r.String(), state); !errors.Is(err, ops.ErrInvalidCursor) {
				t.Errorf("Parse(a replay's cursor) error %v; want ops.ErrInvalidCursor", err)
			}
		}
		if _, err := ParseReplay(Position{State: state, At: t0, Key: k}.String(), q, false); !errors.Is(err, ops.ErrInvalidCursor) {
			t.Errorf("ParseReplay(a listing's cursor) error %v; want ops.ErrInvalidCursor", err)
		}
	}
	dead := Replay{Position: Position{State: webhooks.StateDead, At: t0, Key: k}, End: Position{State: webhooks.StateDead, At: t0, Key: endKey}, Done: 1, Total: 5}
	if _, err := ParseReplay(dead.String(), ops.Query{Limit: 5}, false); err != nil {
		t.Fatalf("ParseReplay(%+v) = %v; want it back (the end at the same time, a smaller key)", dead, err)
	}
	if _, err := ParseReplay(dead.String(), ops.Query{State: webhooks.StateClosed, Limit: 5}, false); !errors.Is(err, ops.ErrInvalidCursor) {
		t.Errorf("ParseReplay(a dead-letter replay's cursor, closed) error %v; want ops.ErrInvalidCursor", err)
	}
	for _, counts := range [][2]int{{0, 5}, {5, 5}, {6, 5}, {-1, 5}, {1, 6}, {1, ops.MaxReplayLimit + 1}} {
		r := dead
		r.Done, r.Total = counts[0], counts[1]
		if _, err := ParseReplay(r.String(), ops.Query{Limit: 5}, false); !errors.Is(err, ops.ErrInvalidCursor) {
			t.Errorf("ParseReplay(Done %d, Total %d, Query.Limit 5) error %v; want ops.ErrInvalidCursor", r.Done, r.Total, err)
		}
	}
	for _, end := range []Position{
		{},            // none
		dead.Position, // the position itself: nothing would be left
		{State: webhooks.StateDead, At: t0, Key: webhooks.InboxKey{Provider: "p", Tenant: "t", EventID: "f"}}, // a larger key
		{State: webhooks.StateDead, At: t0.Add(time.Nanosecond), Key: endKey},                                 // newer
	} {
		r := dead
		r.End = end
		if _, err := ParseReplay(r.String(), ops.Query{Limit: 5}, false); !errors.Is(err, ops.ErrInvalidCursor) {
			t.Errorf("ParseReplay(position %+v, end %+v) error %v; want ops.ErrInvalidCursor: the end must come after the position", r.Position, end, err)
		}
	}
}

// FuzzParseReplay: any string either fails with an error wrapping
// ops.ErrInvalidCursor or yields a cursor that encodes back to itself.
func FuzzParseReplay(f *testing.F) {
	end := Position{Key: webhooks.InboxKey{Provider: "p", EventID: "a"}}
	f.Add(Replay{Position: Position{State: webhooks.StateDead, At: t0, Key: webhooks.InboxKey{Provider: "p", EventID: "e"}}, End: end, Done: 1, Total: 3}.String())
	f.Add(Replay{Position: Position{State: webhooks.StateSucceeded, At: t0, Key: webhooks.InboxKey{Provider: "p", EventID: "e"}}, End: end, Done: 2, Total: 3, DryRun: true}.String())
	f.Add("e30")
	f.Fuzz(func(t *testing.T, s string) {
		for _, state := range []webhooks.State{webhooks.StateDead, webhooks.StateClosed, webhooks.StateSucceeded} {
			q := ops.Query{State: state, Limit: ops.MaxReplayLimit}
			for _, dry := range []bool{false, true} {
				c, err := ParseReplay(s, q, dry)
				if err != nil {
					if !errors.Is(err, ops.ErrInvalidCursor) {
						t.Fatalf("ParseReplay(%q) error %v does not wrap ops.ErrInvalidCursor", s, err)
					}
					continue
				}
				if !c.Position.Before(c.End.At, c.End.Key, c.End.Handler) || c.Done < 1 || c.Done >= c.Total || c.Total > q.Limit {
					t.Fatalf("ParseReplay(%q) = %+v: an end not after the position, or counts out of order", s, c)
				}
				again, err := ParseReplay(c.String(), q, dry)
				if err != nil || again.Position != c.Position || again.End != c.End || again.Done != c.Done || again.Total != c.Total {
					t.Fatalf("round trip changed the cursor: %+v → %+v, %v", c, again, err)
				}
			}
		}
	})
}
