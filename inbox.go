package webhooks

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// InboxKey identifies an inbox item: the provider key, the tenant ("" when
// the host is single-tenant) and the provider's event ID. Enqueue is
// idempotent by this key.
type InboxKey struct {
	Provider string
	Tenant   string
	EventID  string
}

// Compare orders keys by provider, then tenant, then event ID, each byte-wise
// like Go strings; it returns -1, 0 or +1. Dead-letter pages use this order.
func (k InboxKey) Compare(o InboxKey) int {
	return cmp.Or(cmp.Compare(k.Provider, o.Provider), cmp.Compare(k.Tenant, o.Tenant), cmp.Compare(k.EventID, o.EventID))
}

// String returns "provider/tenant/eventID", for logs.
func (k InboxKey) String() string {
	return k.Provider + "/" + k.Tenant + "/" + k.EventID
}

// Envelope is a verified webhook on its way into the inbox.
type Envelope struct {
	Key       InboxKey
	EventType string
	// Payload is the raw request body.
	Payload []byte
	// Headers are the request headers kept with the item (the gateway drops
	// credentials such as Authorization).
	Headers http.Header
	// PayloadSHA256 is the idempotency digest (see Verification).
	PayloadSHA256 [sha256.Size]byte
	// KeyID names the secret that verified the request.
	KeyID string
	// OccurredAt is the provider's event time, zero when unknown.
	OccurredAt time.Time
	// ReceivedAt is when the gateway received the request. The item is due
	// for processing from this time.
	ReceivedAt time.Time
}

// EnqueueOutcome says what Enqueue did.
type EnqueueOutcome int

const (
	// EnqueueNew means a new item was stored.
	EnqueueNew EnqueueOutcome = iota + 1
	// EnqueueDuplicate means an item with the same key and payload digest
	// already existed; its duplicate count and last-seen time were updated.
	EnqueueDuplicate
	// EnqueueConflict means an item with the same key but a different payload
	// digest already existed. Nothing was changed.
	EnqueueConflict
)

// String returns "new", "duplicate" or "conflict".
func (o EnqueueOutcome) String() string {
	switch o {
	case EnqueueNew:
		return "new"
	case EnqueueDuplicate:
		return "duplicate"
	case EnqueueConflict:
		return "conflict"
	}
	return fmt.Sprintf("EnqueueOutcome(%d)", int(o))
}

// EnqueueResult is the answer of InboxStore.Enqueue.
type EnqueueResult struct {
	Outcome EnqueueOutcome
	// State is the item's state after the call.
	State State
}

// State is an inbox item's processing state.
type State string

// Item states. See DESIGN.md: pending → leased → succeeded | pending | dead;
// dead → pending only by ReplayDeadLetter. A leased item whose lease expired
// is pending in effect.
const (
	StatePending   State = "pending"
	StateLeased    State = "leased"
	StateSucceeded State = "succeeded"
	StateDead      State = "dead"
)

// Item is a stored webhook and its processing state.
type Item struct {
	Key           InboxKey
	EventType     string
	Payload       []byte
	Headers       http.Header
	PayloadSHA256 [sha256.Size]byte
	KeyID         string

	State State
	// Attempts counts processing attempts started and not abandoned
	// (an attempt whose lease expired because the worker died counts).
	Attempts int
	// NextAttemptAt is when the item becomes due: for a pending item the
	// time of its next attempt, for a leased item its lease expiry (when it
	// becomes due again if the worker dies), zero once it succeeded or died.
	NextAttemptAt time.Time
	// LeaseExpiresAt is set while the item is leased.
	LeaseExpiresAt time.Time
	// LastError is the most recent failure, nil if none.
	LastError *ErrorRecord

	// DuplicateCount counts deliveries of the same event after the first.
	DuplicateCount int
	// LastSeenAt is when the event was last delivered.
	LastSeenAt time.Time

	OccurredAt  time.Time
	ReceivedAt  time.Time
	UpdatedAt   time.Time
	CompletedAt time.Time // when it succeeded; zero otherwise
	DeadAt      time.Time // when it was dead-lettered; zero unless dead
}

// ErrorRecord is the stored description of a failure.
type ErrorRecord struct {
	Class   FailureClass
	Message string
	At      time.Time
}

// MaxErrorMessageBytes is how much of a failure message stores keep.
const MaxErrorMessageBytes = 2048

// TruncateErrorMessage makes a failure message storable everywhere: invalid
// UTF-8 becomes U+FFFD, NUL bytes are dropped, and the result is cut to at
// most MaxErrorMessageBytes bytes without splitting a UTF-8 sequence. Stores
// apply it to Failure.Message so all keep the same text.
func TruncateErrorMessage(msg string) string {
	msg = strings.ReplaceAll(strings.ToValidUTF8(msg, "\uFFFD"), "\x00", "")
	if len(msg) <= MaxErrorMessageBytes {
		return msg
	}
	cut := MaxErrorMessageBytes
	for cut > 0 && msg[cut]&0xC0 == 0x80 { // continuation byte
		cut--
	}
	return msg[:cut]
}

// Lease is an exclusive, time-limited claim on one inbox item. Only the holder
// of the current Token may complete, fail, abandon or extend it.
type Lease struct {
	Token     string
	ExpiresAt time.Time
	// Attempt is the number of this attempt, starting at 1.
	Attempt int
	// Item is the item as it was when leased (State is StateLeased).
	Item Item
}

// Key returns the leased item's key.
func (l *Lease) Key() InboxKey { return l.Item.Key }

// Enqueuer stores verified webhooks. It is the part of InboxStore the Gateway
// uses.
type Enqueuer interface {
	// Enqueue stores env unless an item with env.Key exists, atomically: of
	// any number of concurrent calls with one key, exactly one reports
	// EnqueueNew. A repeat with the same PayloadSHA256 reports
	// EnqueueDuplicate and increments the item's DuplicateCount and
	// LastSeenAt; with another digest it reports EnqueueConflict and changes
	// nothing. When Enqueue returns nil the item is durable.
	Enqueue(ctx context.Context, env Envelope) (EnqueueResult, error)
}

// LeaseStore hands out and settles leases. It is the part of InboxStore the
// Processor uses. All methods take now from the caller's clock.
//
// Complete, Fail, Abandon and ExtendLease are fenced by the lease token: they
// return an error wrapping ErrLeaseLost, and change nothing, when lease.Token
// is not the item's current token (the item was leased again or finished). A
// lease that expired but was not taken by anyone else is still current:
// settling it is safe, since nobody else holds the item.
type LeaseStore interface {
	// AcquireNext leases the item that has been due the longest (pending
	// with NextAttemptAt <= now, or leased with LeaseExpiresAt <= now),
	// with a fresh token expiring at now+leaseDuration, and increments its
	// attempt count. It returns (nil, nil) when nothing is due. Concurrent
	// callers never receive the same item while its lease is valid.
	AcquireNext(ctx context.Context, now time.Time, leaseDuration time.Duration) (*Lease, error)

	// Complete marks the leased item succeeded.
	Complete(ctx context.Context, lease *Lease, now time.Time) error

	// Fail records failure and applies decision: back to pending due at
	// decision.RetryAt, or dead.
	Fail(ctx context.Context, lease *Lease, failure Failure, decision RetryDecision, now time.Time) error

	// Abandon releases the lease without spending the attempt: the item is
	// pending and due now, and its attempt count is restored.
	Abandon(ctx context.Context, lease *Lease, now time.Time) error

	// ExtendLease moves the lease's expiry to now+d and updates
	// lease.ExpiresAt.
	ExtendLease(ctx context.Context, lease *Lease, now time.Time, d time.Duration) error
}

// BatchAcquirer is an optional LeaseStore capability: lease up to max due
// items in one round trip. The Processor uses it when the store has it.
type BatchAcquirer interface {
	AcquireBatch(ctx context.Context, now time.Time, leaseDuration time.Duration, max int) ([]*Lease, error)
}

// InboxStore is the durable inbox: an atomic state machine per item.
// Implementations must be safe for concurrent use, by many processes where
// they are shared (see pgstore). memstore is the in-memory implementation and
// internal/storetest the conformance suite every implementation must pass.
type InboxStore interface {
	Enqueuer
	LeaseStore
	OperatorStore
}

// OperatorStore is the part of InboxStore for operators and tools: looking at
// items, paging dead letters and replaying them.
type OperatorStore interface {
	// Get returns the item for key, or an error wrapping ErrNotFound.
	Get(ctx context.Context, key InboxKey) (Item, error)

	// DeadLetters returns up to max dead items matching q, newest first
	// (by DeadAt, then key), and a cursor for the next page.
	DeadLetters(ctx context.Context, q DeadLetterQuery, max int) (DeadLetterPage, error)

	// ReplayDeadLetter makes a dead item pending and due at now, clearing its
	// dead time; with resetAttempts its attempt count starts again at zero.
	// It reports false (and changes nothing) when the item exists but is not
	// dead, and returns an error wrapping ErrNotFound when it does not exist.
	ReplayDeadLetter(ctx context.Context, key InboxKey, now time.Time, resetAttempts bool) (bool, error)
}

// DeadLetterQuery filters dead letters. Empty fields match everything (so
// the empty tenant cannot be selected on its own).
type DeadLetterQuery struct {
	Provider  string
	Tenant    string
	EventType string
	// After is the Next cursor of the previous page; empty for the first.
	After string
}

// DeadLetterPage is one page of dead letters.
type DeadLetterPage struct {
	Items []Item
	// Next is the cursor for the following page; empty when this page is
	// the last.
	Next string
}

// DeadLetterCursor is the position after which a dead-letter page starts.
// Stores encode it with String and decode it with ParseDeadLetterCursor so
// cursors look alike everywhere; callers treat them as opaque.
type DeadLetterCursor struct {
	DeadAt time.Time
	Key    InboxKey
}

type cursorJSON struct {
	T int64  `json:"t"`
	P string `json:"p"`
	N string `json:"n"`
	E string `json:"e"`
}

// String encodes the cursor as an opaque URL-safe string.
func (c DeadLetterCursor) String() string {
	b, _ := json.Marshal(cursorJSON{T: c.DeadAt.UnixNano(), P: c.Key.Provider, N: c.Key.Tenant, E: c.Key.EventID})
	return base64.RawURLEncoding.EncodeToString(b)
}

// ParseDeadLetterCursor decodes a cursor made by DeadLetterCursor.String.
func ParseDeadLetterCursor(s string) (DeadLetterCursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return DeadLetterCursor{}, ErrInvalidCursor
	}
	var c cursorJSON
	if err := json.Unmarshal(b, &c); err != nil || c.P == "" || c.E == "" {
		return DeadLetterCursor{}, ErrInvalidCursor
	}
	return DeadLetterCursor{DeadAt: time.Unix(0, c.T).UTC(), Key: InboxKey{Provider: c.P, Tenant: c.N, EventID: c.E}}, nil
}

// Before reports whether an item dead at deadAt with key sorts before the
// cursor in newest-first order, that is, whether it belongs on a later page.
func (c DeadLetterCursor) Before(deadAt time.Time, key InboxKey) bool {
	if !deadAt.Equal(c.DeadAt) {
		return deadAt.Before(c.DeadAt)
	}
	return key.Compare(c.Key) < 0
}
