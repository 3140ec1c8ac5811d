package ops_test

import (
	"errors"
	"testing"
	"time"

	webhooks "github.com/hookinbox/webhooks"
	"github.com/hookinbox/webhooks/ops"
)

// TestSpreadOffset: item i of n is due Spread*i/n after Now, exactly, for
// spreads and counts whose product overflows an int64 of nanoseconds.
func TestSpreadOffset(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		spread time.Duration
		i, n   int
		want   time.Duration
	}{
		{0, 3, 10, 0},
		{time.Hour, 0, 10, 0},
		{time.Hour, 5, 10, 30 * time.Minute},
		{10 * time.Second, 1, 3, 3333333333}, // rounded down
		{ops.MaxReplaySpread, ops.MaxReplayLimit - 1, ops.MaxReplayLimit, ops.MaxReplaySpread - ops.MaxReplaySpread/ops.MaxReplayLimit},
		{ops.MaxReplaySpread, 1, 0, 0},
	} {
		req := ops.ReplayRequest{Spread: c.spread}
		if got := req.SpreadOffset(c.i, c.n); got != c.want {
			t.Errorf("ReplayRequest{Spread: %v}.SpreadOffset(%d, %d) = %v; want %v", c.spread, c.i, c.n, got, c.want)
		}
	}
}

// TestListStateAndCloseCheck: the checks stores call refuse what List and
// CloseDeadLetter refuse, with ErrInvalidRequest.
func TestListStateAndCloseCheck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		q    ops.Query
		want webhooks.State
	}{
		{ops.Query{Limit: 1}, webhooks.StateDead},
		{ops.Query{State: webhooks.StateDead, Limit: 1}, webhooks.StateDead},
		{ops.Query{State: webhooks.StateClosed, Limit: 1}, webhooks.StateClosed},
		{ops.Query{Limit: 0}, ""},
		{ops.Query{State: webhooks.StateSucceeded, Limit: 1}, ""},
		{ops.Query{State: "DEAD", Limit: 1}, ""},
	} {
		got, err := c.q.ListState()
		if got != c.want || (c.want == "") != errors.Is(err, ops.ErrInvalidRequest) {
			t.Errorf("Query{State: %q, Limit: %d}.ListState() = %q, %v; want %q (an error wrapping ErrInvalidRequest when empty)", c.q.State, c.q.Limit, got, err, c.want)
		}
	}
	for _, req := range []ops.CloseRequest{{Actor: "a"}, {Reason: "r"}, {Actor: " ", Reason: "\t"}} {
		if err := req.Check(); !errors.Is(err, ops.ErrInvalidRequest) {
			t.Errorf("CloseRequest{Actor: %q, Reason: %q}.Check() = %v; want an error wrapping ErrInvalidRequest", req.Actor, req.Reason, err)
		}
	}
	if err := (&ops.CloseRequest{Actor: "a", Reason: "r"}).Check(); err != nil {
		t.Errorf("CloseRequest{Actor, Reason}.Check() = %v; want nil", err)
	}
}

func TestReplayRequestCheckHandlers(t *testing.T) {
	ledger, bad := "ledger", "Bad"
	base := func() ops.ReplayRequest { return ops.ReplayRequest{Actor: "a", Reason: "r"} }
	for _, tc := range []struct {
		name string
		edit func(*ops.ReplayRequest)
		ok   bool
	}{
		{"one job of a handler", func(r *ops.ReplayRequest) { r.Handler = "audit" }, true},
		{"bad handler", func(r *ops.ReplayRequest) { r.Handler = "A" }, false},
		{"to a new handler", func(r *ops.ReplayRequest) { r.ToHandler = "audit"; r.ToOrdered = true }, true},
		{"to a bad handler", func(r *ops.ReplayRequest) { r.ToHandler = "a b" }, false},
		{"to a handler keeping attempts", func(r *ops.ReplayRequest) { r.ToHandler = "audit"; r.KeepAttempts = true }, false},
		{"ordered without a handler", func(r *ops.ReplayRequest) { r.ToOrdered = true }, false},
		{"to a handler, of a priority", func(r *ops.ReplayRequest) { r.ToHandler = "audit"; r.ToPriority = webhooks.MaxTypePriority }, true},
		{"a priority without a handler", func(r *ops.ReplayRequest) { r.ToPriority = 3 }, false},
		{"a negative priority", func(r *ops.ReplayRequest) { r.ToHandler = "audit"; r.ToPriority = -1 }, false},
		{"a priority too high", func(r *ops.ReplayRequest) { r.ToHandler = "audit"; r.ToPriority = webhooks.MaxTypePriority + 1 }, false},
		{"bulk with Handler", func(r *ops.ReplayRequest) { r.Handler = "audit"; r.Query = &ops.Query{Limit: 1} }, false},
		{"bulk to a handler", func(r *ops.ReplayRequest) { r.ToHandler = "audit"; r.Query = &ops.Query{Limit: 1, Handler: &ledger} }, true},
		{"bulk to a handler, every handler", func(r *ops.ReplayRequest) { r.ToHandler = "audit"; r.Query = &ops.Query{Limit: 1} }, false},
		{"bulk with a bad query handler", func(r *ops.ReplayRequest) { r.Query = &ops.Query{Limit: 1, Handler: &bad} }, false},
	} {
		req := base()
		tc.edit(&req)
		err := req.Check()
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ops.ErrInvalidRequest)) {
			t.Errorf("%s: Check() = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	if err := (&ops.CloseRequest{Actor: "a", Reason: "r", Handler: "x y"}).Check(); !errors.Is(err, ops.ErrInvalidRequest) {
		t.Errorf("CloseRequest with a bad handler: %v", err)
	}
	if _, err := (ops.StatsRequest{HeldKeys: -1}).HeldKeyLimit(); !errors.Is(err, ops.ErrInvalidRequest) {
		t.Errorf("HeldKeyLimit(-1): %v", err)
	}
	if n, _ := (ops.StatsRequest{}).HeldKeyLimit(); n != ops.DefaultHeldKeys {
		t.Errorf("HeldKeyLimit(0) = %d", n)
	}
}
