package webhooks

import "errors"

// Sentinel errors returned by stores, the gateway, the registry and the
// mux. Compare with errors.Is; stores wrap them with context using %w.
var (
	// ErrLeaseLost is returned by LeaseStore.Settle and ExtendLease when
	// the lease token is no longer the item's current token: the lease
	// expired and another worker acquired the item, or the item was
	// settled under another lease. Nothing was changed. The worker must
	// stop working on the item.
	ErrLeaseLost = errors.New("webhooks: lease lost: the item was leased again or finished by someone else")

	// ErrAlreadySettled is returned by LeaseStore.Settle and ExtendLease
	// when the lease already settled the item and the item was not leased
	// again since: a settlement whose reply was lost and that is tried
	// again, or an item its handler completed in its own transaction
	// (pgstore's CompleteTx). Nothing was changed.
	ErrAlreadySettled = errors.New("webhooks: the lease already settled this item")

	// ErrUnknownProvider is returned by Receiver.Receive when no verifier
	// is registered for the route's provider. Unknown providers are
	// refused: accepting unsigned traffic needs an explicitly registered
	// verifier.
	ErrUnknownProvider = errors.New("webhooks: no verifier registered for this provider")

	// ErrPayloadConflict is returned when an event ID (or replay key) that was
	// already received arrives again with a different payload digest.
	ErrPayloadConflict = errors.New("webhooks: event ID reused with a different payload")

	// ErrNoHandler is the cause of the permanent failure a Mux reports for
	// an event type no pattern matches.
	ErrNoHandler = errors.New("webhooks: no handler registered for this event type")

	// ErrDuplicateProvider is returned by Registry.Register when the
	// provider key is already registered.
	ErrDuplicateProvider = errors.New("webhooks: provider already registered")

	// ErrDuplicatePattern is returned by Mux.Handle when the pattern is
	// already registered.
	ErrDuplicatePattern = errors.New("webhooks: handler pattern already registered")
)
