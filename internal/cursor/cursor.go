// Package cursor encodes the page cursors of ops.Store.List for memstore
// and pgstore, so their cursors look alike. Callers treat cursors as
// opaque.
package cursor

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// Position is where the next page starts: after the last item of the
// previous page, in newest-first order. At is that item's DeadAt for a page
// of dead letters, its ClosedAt for a page of closed items; State says
// which (webhooks.StateDead or webhooks.StateClosed), so a cursor of one
// listing is refused by the other.
type Position struct {
	State webhooks.State
	At    time.Time
	Key   webhooks.InboxKey
}

type wire struct {
	S string `json:"s,omitempty"` // "" for dead
	T int64  `json:"t"`
	P string `json:"p"`
	N string `json:"n"`
	E string `json:"e"`
}

// String encodes the position as an opaque URL-safe string.
func (c Position) String() string {
	s := string(c.State)
	if c.State == webhooks.StateDead {
		s = ""
	}
	b, _ := json.Marshal(wire{S: s, T: c.At.UnixNano(), P: c.Key.Provider, N: c.Key.Tenant, E: c.Key.EventID})
	return base64.RawURLEncoding.EncodeToString(b)
}

// Parse decodes a cursor made by String for a listing of items in state
// (webhooks.StateDead or webhooks.StateClosed). Any other string, and a
// cursor of the other listing, gives an error wrapping ops.ErrInvalidCursor.
func Parse(s string, state webhooks.State) (Position, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Position{}, invalid()
	}
	var c wire
	if err := json.Unmarshal(b, &c); err != nil || c.P == "" || c.E == "" {
		return Position{}, invalid()
	}
	got := webhooks.State(c.S)
	if got == "" {
		got = webhooks.StateDead
	}
	if got != state {
		return Position{}, fmt.Errorf("%w: it pages %s items, not %s ones; start again without a cursor", ops.ErrInvalidCursor, got, state)
	}
	return Position{State: got, At: time.Unix(0, c.T).UTC(), Key: webhooks.InboxKey{Provider: c.P, Tenant: c.N, EventID: c.E}}, nil
}

func invalid() error {
	return fmt.Errorf("%w: it was not made by this store; start again without a cursor", ops.ErrInvalidCursor)
}

// Before reports whether an item at at (its DeadAt or ClosedAt) with key
// sorts before the position in newest-first order, that is, whether it
// belongs on a later page.
func (c Position) Before(at time.Time, key webhooks.InboxKey) bool {
	if !at.Equal(c.At) {
		return at.Before(c.At)
	}
	return key.Compare(c.Key) < 0
}
