package webhooks

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
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
	// Payload is the request body as stored: the raw body, or the
	// verifier's copy with its credentials redacted (Verification.Payload).
	Payload []byte
	// Headers are the request headers kept with the item (the Receiver drops
	// signatures and credentials, see SecretHeaderVerifier).
	Headers http.Header
	// PayloadSHA256 is the idempotency digest (see Verification).
	PayloadSHA256 [sha256.Size]byte
	// KeyID names the secret that verified the request.
	KeyID string
	// APIVersion is the provider's payload version when the verifier
	// knows it (Stripe's api_version, Shopify's X-Shopify-API-Version).
	APIVersion string
	// OccurredAt is the provider's event time, zero when unknown.
	OccurredAt time.Time
	// ReceivedAt is when the Receiver received the request. The item is due
	// for processing from this time.
	ReceivedAt time.Time
	// TraceLink ties the item to the trace of its receive (see Observer).
	TraceLink string
	// ReplayIfDead makes a duplicate of a dead item replay it: the item
	// becomes pending, due at ReceivedAt, and the replay is recorded as a
	// provider redelivery (see the Receiver's WithRedeliveryReplay).
	ReplayIfDead bool
	// Jobs are the handlers the event is stored for, each a job with its
	// own state (see FanOutStore); nil is the default handler's one
	// unordered job. See CheckJobs.
	Jobs []Job
	// Ordering places the event among those of its object, for its
	// ordered jobs; the zero value places it in no key.
	Ordering Ordering
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

// EnqueueResult is the answer of Enqueuer.Enqueue.
type EnqueueResult struct {
	Outcome EnqueueOutcome
	// State is the item's state after the call; for an event with
	// several jobs it sums them up: dead if one is, else leased if one
	// is, else pending if one is pending or waiting, else succeeded if
	// one is, else closed.
	State State
	// Replayed reports that a duplicate replayed a dead item
	// (Envelope.ReplayIfDead).
	Replayed bool
}

// State is an inbox item's processing state.
type State string

// Item states: pending → leased → succeeded, pending again (a retry) or
// dead; dead → closed by an operator who ends it on purpose; dead, closed
// or succeeded → pending only by an audited replay (package ops). A leased
// item whose lease expired is pending in effect.
const (
	StatePending   State = "pending"
	StateLeased    State = "leased"
	StateSucceeded State = "succeeded"
	StateDead      State = "dead"
	StateClosed    State = "closed"
	// StateWaiting is an ordered job queued behind the head of its
	// ordering key (see FanOutSupport.OrderingKeys): not due, it becomes
	// pending when the jobs ahead of it have ended.
	StateWaiting State = "waiting"
)

// Item is a stored webhook and the processing state of one of its jobs
// (the default handler's, for a store without FanOutStore).
type Item struct {
	Key InboxKey
	// Handler is the job's handler, "" for the default handler.
	Handler       string
	EventType     string
	Payload       []byte
	Headers       http.Header
	PayloadSHA256 [sha256.Size]byte
	KeyID         string

	State State
	// Attempts counts processing attempts started and not abandoned
	// (an attempt whose lease expired unsettled counts, whether its worker
	// died or never received the lease). A lease held but not started
	// (LeaseStarter) is not counted, nor is one settled unstarted.
	Attempts int
	// NextAttemptAt is when the item becomes due: for a pending item the
	// time of its next attempt, for a leased item its lease expiry (when it
	// becomes due again if the worker dies), zero once it succeeded or died.
	NextAttemptAt time.Time
	// LeaseExpiresAt is set while the item is leased.
	LeaseExpiresAt time.Time
	// LastError is the most recent failure; nil if none, and once the item
	// succeeded (its attempt history keeps every failure, see package ops).
	LastError *ErrorRecord
	// APIVersion is the provider's payload version, when known.
	APIVersion string
	// TraceLink ties the item to the trace of its receive (see Observer).
	TraceLink string

	// Ordering is the event's place among its object's events (see
	// Ordering); Ordered says whether this job runs in that order.
	Ordering Ordering
	Ordered  bool
	// Priority is the job's priority among its handler's due jobs, as it
	// was stored (Job.Priority; see Handler.TypePriorities); 0 for most.
	Priority int
	// Seq is the job's arrival order in the store, increasing; stores
	// without FanOutStore may leave it 0.
	Seq int64
	// Overtook is the event ID of an earlier dead letter of the job's
	// ordering key (same handler, provider and tenant) that this job ran
	// past: it became its key's head while that dead letter, before it in
	// key order (Ordering.Version, then arrival), was neither replayed nor
	// closed. Of several, the nearest before it. Empty otherwise.
	Overtook string

	// DuplicateCount counts deliveries of the same event after the first.
	DuplicateCount int
	// LastSeenAt is when the event was last delivered.
	LastSeenAt time.Time

	OccurredAt  time.Time
	ReceivedAt  time.Time
	UpdatedAt   time.Time
	CompletedAt time.Time // when it succeeded; zero otherwise
	DeadAt      time.Time // when it was dead-lettered; zero unless dead or closed
	ClosedAt    time.Time // when an operator closed it; zero unless closed
}

// ErrorRecord is the stored description of a failure.
type ErrorRecord struct {
	Class   FailureClass
	Message string
	At      time.Time
}

// Lease is an exclusive, time-limited claim on one inbox item. Only the holder
// of the current Token may settle or extend it.
type Lease struct {
	Token string
	// ExpiresAt is when the lease expires as Acquire granted it. Stores
	// never change a Lease once they returned it: an extension or a start
	// moves the item's expiry (Item.LeaseExpiresAt), not this field.
	ExpiresAt time.Time
	// Attempt is the number of this attempt, starting at 1.
	Attempt int
	// Reclaimed reports that the item's last attempt ended without being
	// settled, its lease expired (the worker crashed, stalled or lost its
	// connection, or never received the lease: a lost acquisition reply),
	// and that no attempt ran or was settled since: only leases that
	// expired, or were given back, unstarted (see LeaseStarter). The
	// Processor asks the RetryPolicy whether such an item may run again,
	// so a crash loop ends in a dead letter.
	Reclaimed bool
	// Held reports a lease whose attempt has not started: its holder
	// starts it (LeaseStarter) before its handler runs. Attempt is then
	// the number the attempt will have.
	Held bool
	// Probe reports the probe of a breaker's pause (see Pause): the one
	// lease its handler may have while the pause holds. Its outcome
	// closes the breaker or opens it again.
	Probe bool
	// Applied is, for an ordered job, the newest Ordering.Version its
	// handler applied for the key (succeeded and not skipped), 0 when
	// none: a job whose version is not newer is stale (see Skip).
	Applied int64
	// Item is the item as it was when leased (State is StateLeased).
	Item Item
}

// Key returns the leased item's key.
func (l *Lease) Key() InboxKey { return l.Item.Key }

// Job returns the leased job's key: the item's key and its handler.
func (l *Lease) Job() JobKey { return JobKey{InboxKey: l.Item.Key, Handler: l.Item.Handler} }

// AcquireRequest asks a LeaseStore for due items.
type AcquireRequest struct {
	// Now is the caller's current time: items due at or before it may be
	// leased, and leases expire at Now+LeaseDuration.
	Now time.Time
	// LeaseDuration is how long the leases last. It must be positive.
	LeaseDuration time.Duration
	// Max is the most items to lease in one call. It must be at least 1.
	Max int
	// Worker and Version name the processor taking the leases, for the
	// items' attempt history (see WithWorkerIdentity).
	Worker  string
	Version string
	// ID optionally names this acquisition, so that a store that is an
	// AcquisitionRepeater can answer it again when its reply was lost.
	// The caller makes it, fresh and unguessable for each acquisition
	// (the Processor uses crypto/rand.Text). Other stores ignore it. An
	// empty ID names nothing.
	ID string
	// Hold asks a LeaseStarter for held leases (see LeaseStarter): of the
	// leases granted, those among the first Start in due order that are
	// not Reclaimed start with the acquisition, and the others are held.
	// The result is in that order, ties included. Stores without the
	// capability ignore Hold and Start.
	Hold bool
	// Start is, with Hold, how many leases may start at once (the
	// caller's idle workers), between 0 and Max.
	Start int
	// Handler leases only that handler's jobs ("" the default handler's);
	// a store without FanOutStore keeps only those.
	Handler string
	// Limits bounds the leases of Handler's jobs over every caller (see
	// FlowSupport.Limits): the acquisition may grant fewer than Max, or
	// none, while the handler is at its cap or out of tokens. Stores
	// without the capability ignore it.
	Limits Limits
	// Fair leases Handler's due jobs by tenant, in turns (see
	// FlowSupport.Fair), instead of the longest due first. Stores
	// without the capability ignore it.
	Fair bool
	// Priorities leases Handler's due jobs of these priorities
	// (Job.Priority) first, those of the first before those of the
	// second and so on, then the others (see FlowSupport.Priorities);
	// each above 0, highest first, at most MaxTypePriorities. A Fair
	// acquisition takes none. Stores without the capability ignore it.
	Priorities []int
}

// FairVisits is the most tenants a Fair acquisition visits, for Max: four
// for each lease asked for, and 64 (see FlowSupport.Fair).
func (req *AcquireRequest) FairVisits() int { return 4*req.Max + 64 }

// Check reports what makes req invalid, for a store to refuse it before
// changing anything: a LeaseDuration that is not positive, a Max below 1,
// or, with Hold, a Start outside [0, Max], Limits that Limits.Check
// refuses, or Priorities that are not above 0, at most MaxTypePriority,
// in decreasing order, at most MaxTypePriorities of them, or given with
// Fair. A store adds the bounds of its own (pgstore keeps
// microseconds) after it.
func (req *AcquireRequest) Check() error {
	switch {
	case req.LeaseDuration <= 0:
		return fmt.Errorf("webhooks: AcquireRequest.LeaseDuration is %v; it must be positive", req.LeaseDuration)
	case req.Max < 1:
		return fmt.Errorf("webhooks: AcquireRequest.Max is %d; it must be at least 1", req.Max)
	case req.Hold && (req.Start < 0 || req.Start > req.Max):
		return fmt.Errorf("webhooks: AcquireRequest.Start is %d; it must be between 0 and Max (%d)", req.Start, req.Max)
	case len(req.Priorities) > MaxTypePriorities:
		return fmt.Errorf("webhooks: AcquireRequest.Priorities has %d; at most %d (webhooks.MaxTypePriorities)", len(req.Priorities), MaxTypePriorities)
	case len(req.Priorities) > 0 && req.Fair:
		return errors.New("webhooks: AcquireRequest has Priorities and Fair; a Fair acquisition leases by tenant, so give one")
	}
	for i, p := range req.Priorities {
		if p < 1 || p > MaxTypePriority || i > 0 && p >= req.Priorities[i-1] {
			return fmt.Errorf("webhooks: AcquireRequest.Priorities is %v; each must be from 1 to %d (webhooks.MaxTypePriority), highest first, none twice", req.Priorities, MaxTypePriority)
		}
	}
	return req.Limits.Check()
}

// AttemptOutcome says how a processing attempt ended.
type AttemptOutcome string

// Attempt outcomes. A Settlement has one of the first four.
const (
	// AttemptSucceeded: the handler returned nil; the item succeeded.
	AttemptSucceeded AttemptOutcome = "succeeded"
	// AttemptRetried: the attempt failed; the item is pending again, due
	// at the retry time.
	AttemptRetried AttemptOutcome = "retried"
	// AttemptDeadLettered: the attempt failed for good; the item is dead.
	AttemptDeadLettered AttemptOutcome = "dead_lettered"
	// AttemptAbandoned: the attempt was given back unfinished (shutdown);
	// it is not counted and the item is due at once.
	AttemptAbandoned AttemptOutcome = "abandoned"
)

// Settlement ends a lease: the item succeeded, is retried, is
// dead-lettered, or is given back.
type Settlement struct {
	// Lease is the lease being settled. Its Token fences the settlement.
	Lease *Lease
	// Outcome is AttemptSucceeded, AttemptRetried, AttemptDeadLettered or
	// AttemptAbandoned.
	Outcome AttemptOutcome
	// Failure describes the failure of a retried or dead-lettered attempt;
	// on a succeeded one it is an optional note that the attempt's history
	// keeps (FailureNoHandler: acknowledged without a handler) and that
	// never becomes the item's LastError. Its Message is at most 2048 bytes of valid UTF-8 without NUL bytes
	// (the Processor cuts longer ones), so every store can keep it as is.
	Failure Failure
	// RetryAt is when a retried item is due again.
	RetryAt time.Time
	// Now is the caller's current time.
	Now time.Time
}

// Check reports what makes s invalid, for a store to refuse it before
// looking at its token: no lease, or an outcome that is not one of the
// four a Settlement has.
func (s *Settlement) Check() error {
	switch {
	case s.Lease == nil:
		return fmt.Errorf("webhooks: the Settlement has no Lease; settle a lease Acquire returned")
	case s.Outcome != AttemptSucceeded && s.Outcome != AttemptRetried && s.Outcome != AttemptDeadLettered && s.Outcome != AttemptAbandoned:
		return fmt.Errorf("webhooks: Settlement of %s: unknown outcome %q; use AttemptSucceeded, AttemptRetried, AttemptDeadLettered or AttemptAbandoned", s.Lease.Key(), s.Outcome)
	}
	return nil
}

// LeaseStarter is an optional LeaseStore capability: leases whose
// attempts start only when their holder starts them, so that a crash
// costs an attempt only to the items whose handlers were running, not to
// those that waited beside them. The Processor uses it when the store has
// it.
//
// A held lease (AcquireRequest.Hold, Lease.Held) is a lease like any
// other (exclusive, fenced, extended, returned by RepeatAcquisition),
// except that its attempt is neither counted in Item.Attempts nor recorded
// in the history until it starts. Expired unstarted, it is taken over as
// if it had never been granted, Reclaimed as it was. Settled unstarted as
// succeeded or retried, it is started by the settlement (it ran); as
// dead-lettered or abandoned, the item changes as the outcome says and no
// attempt is counted or recorded (a crash loop's dead letter shows the
// attempts that ran); abandoned, a Reclaimed one leaves the item's next
// lease Reclaimed.
//
// StartLeases starts req.Leases at req.Now, each fenced by its token: it
// counts and records each one's attempt and moves its expiry to
// req.Now+req.Duration, in one round trip. It returns one error per lease,
// in order: nil (also for a lease already started: starting is
// idempotent), an error wrapping ErrLeaseLost or ErrAlreadySettled as
// ExtendLease would, or, when the round trip fails, that error. It changes
// none of req.Leases.
type LeaseStarter interface {
	StartLeases(ctx context.Context, req StartRequest) []error
}

// StartRequest asks a LeaseStarter to start held leases at Now, each to
// expire at Now+Duration.
type StartRequest struct {
	Leases   []*Lease
	Now      time.Time
	Duration time.Duration
}

// Check reports a Duration that is not positive, for a LeaseStarter to
// refuse the request before starting anything.
func (req *StartRequest) Check() error {
	if req.Duration <= 0 {
		return fmt.Errorf("webhooks: StartRequest.Duration is %v; it must be positive", req.Duration)
	}
	return nil
}

// AcquisitionRepeater is an optional LeaseStore capability: it answers
// again an acquisition whose reply was lost (the store granted the leases,
// the connection died before the caller saw them), so that its leases run
// on the attempts already counted instead of waiting out their expiry to
// be taken over as crashed (Reclaimed, each then run alone and judged by
// the retry policy). The Processor uses it when the store has it.
//
// RepeatAcquisition returns the leases granted under req.ID (the
// AcquireRequest.ID of an earlier acquisition) and unexpired at req.Now,
// as they are (tokens, Attempt, Reclaimed, Held, the expiry of their
// latest extension), those of a higher Item.Priority first (a caller
// keeping only some keeps the most urgent), in no particular order
// otherwise, and changes nothing. It
// returns no leases and a nil error when none is: the acquisition granted
// none, or they were settled, expired or taken over since. An empty ID
// names nothing.
type AcquisitionRepeater interface {
	RepeatAcquisition(ctx context.Context, req RepeatRequest) ([]*Lease, error)
}

// RepeatRequest asks an AcquisitionRepeater for the leases granted under
// the acquisition ID that are unexpired at Now.
type RepeatRequest struct {
	ID  string
	Now time.Time
	// Handler is the handler of the acquisition (AcquireRequest.Handler).
	Handler string
}

// ExtendRequest asks to move a lease's expiry to Now+Duration.
type ExtendRequest struct {
	Lease    *Lease
	Now      time.Time
	Duration time.Duration
}

// Check reports what makes req invalid, for a store to refuse it before
// looking at its token: no lease, or a Duration that is not positive.
func (req *ExtendRequest) Check() error {
	switch {
	case req.Lease == nil:
		return fmt.Errorf("webhooks: the ExtendRequest has no Lease; extend a lease Acquire returned")
	case req.Duration <= 0:
		return fmt.Errorf("webhooks: ExtendRequest.Duration is %v; it must be positive", req.Duration)
	}
	return nil
}

// Enqueuer stores verified webhooks. It is the part of InboxStore a
// Receiver uses.
type Enqueuer interface {
	// Enqueue stores env unless an item with env.Key exists, atomically: of
	// any number of concurrent calls with one key, exactly one reports
	// EnqueueNew. A repeat with the same PayloadSHA256 reports
	// EnqueueDuplicate and increments the item's DuplicateCount and
	// LastSeenAt (and replays a dead item when env.ReplayIfDead is set);
	// with another digest it reports EnqueueConflict and changes nothing
	// (a store that is an ops.Store keeps the delivery for operators, see
	// ops.Detail.Quarantine). When Enqueue returns nil the item is durable.
	// Enqueue may keep env.Payload and env.Headers as they are: callers
	// do not change them afterwards (the Receiver reads each body into
	// memory of its own).
	Enqueue(ctx context.Context, env Envelope) (EnqueueResult, error)
}

// LeaseStore hands out and settles leases. It is the part of InboxStore
// the Processor uses. Every method takes the time from its request, so
// tests drive time without sleeping.
//
// Settle and ExtendLease are fenced by the lease token: when lease.Token is
// not the item's current token (the item was leased again or settled) they
// change nothing and return an error wrapping ErrLeaseLost — or, when that
// very token already settled the item, ErrAlreadySettled. A lease that
// expired but was not taken by anyone else is still current: settling it
// is safe, since nobody else holds the item.
type LeaseStore interface {
	// Acquire leases up to req.Max due items (pending with NextAttemptAt
	// at or before req.Now, or leased with an expired lease), the longest
	// due first, each with a fresh token expiring at
	// req.Now+req.LeaseDuration, and counts an attempt on each (on each it
	// starts, for a LeaseStarter asked for held leases). It returns
	// no leases and a nil error when nothing is due. Concurrent callers
	// never receive the same item while its lease is valid. Leases are
	// marked Reclaimed as Lease.Reclaimed says.
	Acquire(ctx context.Context, req AcquireRequest) ([]*Lease, error)

	// Settle ends the lease as s.Outcome says: succeeded; pending again,
	// due at s.RetryAt, with s.Failure as its last error; dead with
	// s.Failure; or, for AttemptAbandoned, pending and due at s.Now with
	// the attempt not counted.
	Settle(ctx context.Context, s Settlement) error

	// ExtendLease moves the lease's expiry to req.Now+req.Duration. It
	// changes nothing in req.Lease, which its holder may be reading
	// meanwhile.
	ExtendLease(ctx context.Context, req ExtendRequest) error
}

// InboxStore is the durable inbox: an atomic state machine per item, as
// the pipeline (a Receiver and a Processor) uses it. Implementations must
// be safe for concurrent use, by many processes where they are shared (see
// pgstore). memstore is the in-memory implementation; the storetest
// package is the conformance suite every implementation must pass.
//
// A store may offer more, found by type assertion: ops.Store, through
// which operators look at and steer an inbox (memstore and pgstore are
// both), BatchSettler, LeaseStarter and AcquisitionRepeater. storetest
// runs the cases of each capability a store has.
type InboxStore interface {
	Enqueuer
	LeaseStore
}
