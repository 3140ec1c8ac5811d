package webhooks

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors returned by stores, the Receiver, the registry and the
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

	// ErrStoreNotReady is wrapped by a store's errors when it cannot serve
	// until its host acts, such as pgstore on a schema that was never
	// migrated; the error says what to do. Processor.Run stops with such
	// an error from an acquisition; the Receiver answers 503, as for any
	// store failure, so providers deliver again once the host has acted.
	ErrStoreNotReady = errors.New("webhooks: the store is not ready to serve")

	// ErrUnknownProvider is returned by Receiver.Receive when no verifier
	// is registered for the route's provider. Unknown providers are
	// refused: accepting unsigned traffic needs an explicitly registered
	// verifier.
	ErrUnknownProvider = errors.New("webhooks: no verifier registered for this provider")

	// ErrPayloadConflict is returned when an event ID (or replay key) that was
	// already received arrives again with a different payload digest.
	ErrPayloadConflict = errors.New("webhooks: event ID reused with a different payload")

	// ErrTypeConflict is returned by Receiver.Receive when a body whose
	// event type the signature does not cover arrives under another type
	// than it was received with before (see UnsignedFields).
	ErrTypeConflict = errors.New("webhooks: body received before under another event type, which its signature does not cover")

	// ErrTenantNotServed is returned by Receiver.Receive for a route with
	// a tenant when the provider serves no tenant routes: its credentials
	// are the same for every tenant, so the tenant path segment would be
	// chosen by the sender (see TenantScoped and WithTenants).
	ErrTenantNotServed = errors.New("webhooks: the provider serves no tenant routes: its secrets are the same for every tenant (use TenantSecrets, or name the provider in WithTenants if its own credentials are per tenant)")

	// ErrNoHandler is what a Mux answers for an event type no pattern
	// matches; the Processor acknowledges such an event instead of failing
	// it, unless a handler classified the error itself (see Dispatcher).
	ErrNoHandler = errors.New("webhooks: no handler registered for this event type")

	// ErrDuplicateProvider is returned by Registry.Register when the
	// provider key is already registered.
	ErrDuplicateProvider = errors.New("webhooks: provider already registered")

	// ErrDuplicatePattern is returned by Mux.Handle when the pattern is
	// already registered.
	ErrDuplicatePattern = errors.New("webhooks: handler pattern already registered")
)

// Errors a handler returns to steer its retries.

// PermanentError marks a handler error as permanent: the event is
// dead-lettered at once, without retries. Handlers make one with Permanent;
// tests find it with errors.As.
type PermanentError struct {
	Err error
}

// Error returns the wrapped error's text.
func (e *PermanentError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent marks err as permanent: the event is dead-lettered at once,
// without retries. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &PermanentError{Err: err}
}

// RetryAfterError asks for a wait of at least After before the next
// attempt. Handlers make one with RetryAfter; tests find it with errors.As.
type RetryAfterError struct {
	Err   error
	After time.Duration
}

// Error returns the wrapped error's text.
func (e *RetryAfterError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *RetryAfterError) Unwrap() error { return e.Err }

// RetryAfter marks err as transient with a requested wait of at least d before
// the next attempt (for example a downstream's Retry-After). The policy uses
// d when it is longer than its own delay, up to its cap
// (ExponentialPolicy.MaxRetryAfter). RetryAfter(nil, d) is nil.
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &RetryAfterError{Err: err, After: d}
}

// The rejection a verifier returns.

// VerificationError reports why a request was rejected. Its message contains
// the reason code and, optionally, a detail that must not contain secrets.
//
// errors.Is(err, ReasonBadSignature) and the other reason codes match any
// *VerificationError with that Reason.
type VerificationError struct {
	Reason Reason
	// Detail is a short human explanation for logs. It never contains secret
	// material or signature values.
	Detail string
}

// Error returns the reason code and the detail.
func (e *VerificationError) Error() string {
	if e.Detail == "" {
		return e.Reason.Error()
	}
	return e.Reason.Error() + ": " + e.Detail
}

// Is reports whether target is e's Reason, or a *VerificationError with the
// same Reason.
func (e *VerificationError) Is(target error) bool {
	switch t := target.(type) {
	case Reason:
		return t == e.Reason
	case *VerificationError:
		return t.Reason == e.Reason
	}
	return false
}

// Reject returns a *VerificationError with the reason and a detail formatted
// as with fmt.Sprintf. The detail must not contain secrets.
func Reject(reason Reason, format string, args ...any) *VerificationError {
	detail := format
	if len(args) > 0 {
		detail = fmt.Sprintf(format, args...)
	}
	return &VerificationError{Reason: reason, Detail: detail}
}
