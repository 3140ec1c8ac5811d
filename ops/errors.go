package ops

import "errors"

// Errors returned by a Store. Compare with errors.Is; stores wrap them with
// context using %w.
var (
	// ErrNotFound is returned when no item exists for a key.
	ErrNotFound = errors.New("webhooks/ops: inbox item not found")

	// ErrNotDead is returned by CloseDeadLetter for an item that is not a
	// dead letter; it was left as it is.
	ErrNotDead = errors.New("webhooks/ops: the item is not a dead letter")

	// ErrNotFinished is returned by Replay for an item that is pending or
	// leased: it runs, or is about to, already; it was left as it is.
	ErrNotFinished = errors.New("webhooks/ops: the item is pending or running, so it runs without a replay; " +
		"to run it once more, wait until it settles (succeeded or dead), then replay it")

	// ErrInvalidCursor is returned by List, and by a bulk Replay, for a
	// cursor the store did not make for it.
	ErrInvalidCursor = errors.New("webhooks/ops: invalid cursor")

	// ErrInvalidRequest is returned for a request missing what it needs,
	// such as a replay without an actor or a reason.
	ErrInvalidRequest = errors.New("webhooks/ops: invalid request")
)
