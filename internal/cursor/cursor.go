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
// says which, so a cursor of one listing is refused by another. Key and
// Handler are that item's job: listings order jobs by time, then key, then
// handler, all descending.
type Position struct {
	State   webhooks.State
	At      time.Time
	Key     webhooks.InboxKey
	Handler string
}

type wire struct {
	S string `json:"s,omitempty"` // "" for dead
	T int64  `json:"t"`
	P string `json:"p"`
	N string `json:"n"`
	E string `json:"e"`
	H string `json:"h,omitempty"` // the handler; "" (the default) is left out, so cursors made before handlers parse
	// A bulk replay's cursor: its kind ("replay", or "dry" for a dry
	// run), items done and total, and the end of its selection (the
	// position of its last item).
	K  string `json:"k,omitempty"`
	D  int    `json:"d,omitempty"`
	C  int    `json:"c,omitempty"`
	ET int64  `json:"et,omitempty"`
	EP string `json:"ep,omitempty"`
	EN string `json:"en,omitempty"`
	EE string `json:"ee,omitempty"`
	EH string `json:"eh,omitempty"`
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
	return wire{S: s, T: c.At.UnixNano(), P: c.Key.Provider, N: c.Key.Tenant, E: c.Key.EventID, H: c.Handler}
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
	if err := json.Unmarshal(b, &c); err != nil || c.P == "" || c.E == "" ||
		webhooks.CheckHandlerName(c.H) != nil || webhooks.CheckHandlerName(c.EH) != nil {
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
	return Position{State: got, At: time.Unix(0, c.T).UTC(), Key: webhooks.InboxKey{Provider: c.P, Tenant: c.N, EventID: c.E}, Handler: c.H}, nil
}

// Replay is where the next call of a bulk replay starts and ends: after
// Position, the last item the previous call went through, down to End, the
// last item the replay selected when it began (included), in newest-first
// order; and how far it got: Done of its Total items, Done < Total. End
// keeps the replay to its selection: the items that leave the state while
// it runs are not replaced by older ones. DryRun tells a dry run's cursor
// from a replay's, so one never continues the other.
type Replay struct {
	Position
	End         Position
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
	w.ET, w.EP, w.EN, w.EE, w.EH = r.End.At.UnixNano(), r.End.Key.Provider, r.End.Key.Tenant, r.End.Key.EventID, r.End.Handler
	return w.String()
}

// ParseReplay decodes a cursor made by Replay.String for a call of the
// bulk replay of q (of the items in q.State, dead letters when it is
// empty), a dry run or not. Any other string, a listing's cursor, a dry
// run's for a replay (and the other way round), one of another state,
// counts out of order or over q.Limit, and an end that is not after the
// position give an error wrapping ops.ErrInvalidCursor. The cursor is not
// authenticated: these checks catch a mistake, such as a cursor continued
// with another limit, not an operator who forges one (who may as well run
// another replay).
func ParseReplay(s string, q ops.Query, dryRun bool) (Replay, error) {
	state := q.State
	if state == "" {
		state = webhooks.StateDead
	}
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
	case c.D < 1 || c.D >= c.C || c.EP == "" || c.EE == "":
		return Replay{}, invalid()
	case c.C > q.Limit:
		return Replay{}, fmt.Errorf("%w: it continues a replay of %d items, more than Query.Limit (%d); continue it with the request it began with, or start again without a cursor",
			ops.ErrInvalidCursor, c.C, q.Limit)
	}
	p, err := c.position(state)
	if err != nil {
		return Replay{}, err
	}
	end := Position{State: state, At: time.Unix(0, c.ET).UTC(), Key: webhooks.InboxKey{Provider: c.EP, Tenant: c.EN, EventID: c.EE}, Handler: c.EH}
	if !p.Before(end.At, end.Key, end.Handler) {
		return Replay{}, invalid()
	}
	return Replay{Position: p, End: end, Done: c.D, Total: c.C, DryRun: dryRun}, nil
}

func invalid() error {
	return fmt.Errorf("%w: it was not made by this store; start again without a cursor", ops.ErrInvalidCursor)
}

// Before reports whether a job at at (its DeadAt or ClosedAt) with key
// and handler sorts before the position in newest-first order, that is,
// whether it belongs on a later page.
func (c Position) Before(at time.Time, key webhooks.InboxKey, handler string) bool {
	if !at.Equal(c.At) {
		return at.Before(c.At)
	}
	return webhooks.JobKey{InboxKey: key, Handler: handler}.Compare(webhooks.JobKey{InboxKey: c.Key, Handler: c.Handler}) < 0
}
