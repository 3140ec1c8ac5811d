// Package cursor encodes the page cursors of ops.Store.List, and those of
// a bulk ops.Store.Replay, for memstore and pgstore, so their cursors look
// alike. Callers treat cursors as opaque.
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
// of dead letters, its ClosedAt for a page of closed items, its
// CompletedAt for succeeded ones (which only a bulk replay pages); State
// says which, so a cursor of one listing is refused by another.
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
	// A bulk replay's cursor: its kind ("replay", or "dry" for a dry
	// run), items done and total.
	K string `json:"k,omitempty"`
	D int    `json:"d,omitempty"`
	C int    `json:"c,omitempty"`
}

// String encodes the position as an opaque URL-safe string.
func (c Position) String() string {
	return c.wire().String()
}

func (c Position) wire() wire {
	s := string(c.State)
	if c.State == webhooks.StateDead {
		s = ""
	}
	return wire{S: s, T: c.At.UnixNano(), P: c.Key.Provider, N: c.Key.Tenant, E: c.Key.EventID}
}

func (w wire) String() string {
	b, _ := json.Marshal(w)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Parse decodes a cursor made by String for a listing of items in state
// (webhooks.StateDead or webhooks.StateClosed). Any other string, a cursor
// of another listing and a bulk replay's cursor give an error wrapping
// ops.ErrInvalidCursor.
func Parse(s string, state webhooks.State) (Position, error) {
	c, err := decode(s)
	if err != nil {
		return Position{}, err
	}
	if c.K != "" {
		return Position{}, fmt.Errorf("%w: it continues a bulk replay, not a listing; start again without a cursor", ops.ErrInvalidCursor)
	}
	return c.position(state)
}

func decode(s string) (wire, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return wire{}, invalid()
	}
	var c wire
	if err := json.Unmarshal(b, &c); err != nil || c.P == "" || c.E == "" {
		return wire{}, invalid()
	}
	return c, nil
}

func (c wire) position(state webhooks.State) (Position, error) {
	got := webhooks.State(c.S)
	if got == "" {
		got = webhooks.StateDead
	}
	if got != state {
		return Position{}, fmt.Errorf("%w: it pages %s items, not %s ones; start again without a cursor", ops.ErrInvalidCursor, got, state)
	}
	return Position{State: got, At: time.Unix(0, c.T).UTC(), Key: webhooks.InboxKey{Provider: c.P, Tenant: c.N, EventID: c.E}}, nil
}

// Replay is where the next call of a bulk replay starts (after Position,
// the last item the previous call selected) and how far the replay got:
// Done of its Total items, Done < Total. DryRun tells a dry run's cursor
// from a replay's, so one never continues the other.
type Replay struct {
	Position
	Done, Total int
	DryRun      bool
}

// String encodes the replay's cursor as an opaque URL-safe string.
func (r Replay) String() string {
	w := r.Position.wire()
	w.K, w.D, w.C = "replay", r.Done, r.Total
	if r.DryRun {
		w.K = "dry"
	}
	return w.String()
}

// ParseReplay decodes a cursor made by Replay.String for a bulk replay of
// items in state, a dry run or not. Any other string, a listing's cursor,
// a dry run's for a replay (and the other way round), one of another state
// and counts out of order give an error wrapping ops.ErrInvalidCursor.
func ParseReplay(s string, state webhooks.State, dryRun bool) (Replay, error) {
	c, err := decode(s)
	if err != nil {
		return Replay{}, err
	}
	switch {
	case c.K == "":
		return Replay{}, fmt.Errorf("%w: it pages a listing, not a bulk replay; start the replay without a cursor", ops.ErrInvalidCursor)
	case c.K != "replay" && c.K != "dry":
		return Replay{}, invalid()
	case (c.K == "dry") != dryRun:
		return Replay{}, fmt.Errorf("%w: a dry run's cursor continues only a dry run, and a replay's only a replay; start again without a cursor", ops.ErrInvalidCursor)
	case c.D < 1 || c.D >= c.C || c.C > ops.MaxReplayLimit:
		return Replay{}, invalid()
	}
	p, err := c.position(state)
	if err != nil {
		return Replay{}, err
	}
	return Replay{Position: p, Done: c.D, Total: c.C, DryRun: dryRun}, nil
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
