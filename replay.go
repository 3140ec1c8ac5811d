package webhooks

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"
)

// ReplayOutcome says what ReplayStore.Register found.
type ReplayOutcome int

const (
	// ReplayNew means the key was not registered (or its registration had
	// expired) and is now registered.
	ReplayNew ReplayOutcome = iota + 1
	// ReplaySeen means the key is registered with the same payload digest: a
	// redelivery of the same webhook.
	ReplaySeen
	// ReplayConflict means the key is registered with a different payload
	// digest: the key was reused for other content.
	ReplayConflict
)

// String returns "new", "seen" or "conflict".
func (o ReplayOutcome) String() string {
	switch o {
	case ReplayNew:
		return "new"
	case ReplaySeen:
		return "seen"
	case ReplayConflict:
		return "conflict"
	}
	return fmt.Sprintf("ReplayOutcome(%d)", int(o))
}

// ReplayRegistration asks a ReplayStore to register a replay key. A
// registration is identified by its provider and key, compared exactly.
//
// A key is guarded per provider key, not per tenant: a key registered by
// any of the provider's credentials is refused with other content under
// every route of the provider, so that moving a captured request to
// another tenant's path, or to a credential named otherwise after a
// rotation, does not make its key new again.
type ReplayRegistration struct {
	Provider string
	Key      string
	// PayloadSHA256 is the digest a later delivery with Key is compared
	// with.
	PayloadSHA256 [sha256.Size]byte
	// Now is the caller's current time; the registration lasts until
	// ExpiresAt.
	Now       time.Time
	ExpiresAt time.Time
}

// ReplayStore remembers which replay keys were seen, with their payload
// digests, until they expire. A Receiver given one (WithReplayStore)
// registers the replay keys verifiers give of their own
// (Verification.ReplayKey), such as nonces that differ from event IDs, and
// the event type of a signed body whose type is not signed
// (UnsignedFields); the inbox deduplicates event IDs itself. Only the
// verifiers that say so need one (NeedsReplayStore).
//
// Register atomically registers reg's key with reg.PayloadSHA256 until
// reg.ExpiresAt unless it is registered and not expired at reg.Now; of
// concurrent calls with one key exactly one reports ReplayNew. An existing
// registration is not extended. Implementations must be safe for concurrent
// use.
type ReplayStore interface {
	Register(ctx context.Context, reg ReplayRegistration) (ReplayOutcome, error)
}
