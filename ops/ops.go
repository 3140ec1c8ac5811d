// Package ops is the operators' view of an inbox: an item with its attempt
// history, audit trail and quarantined deliveries; dead letters paged with
// filters; audited replay of one item or many (with a dry run and a
// spread, in bounded batches), which also undoes a closing or runs a
// succeeded item again; closing a dead letter on purpose; and counts of
// what the inbox holds.
//
// memstore and pgstore implement [Store]; the admin handler, the hookinbox
// command and a host's own tools are built on it. The storetest suite checks
// every implementation. Operations take their time from the request's Now,
// as the pipeline's store methods do.
package ops

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

// Store is what operators do with an inbox: an optional capability of a
// webhooks.InboxStore. Beside its methods it asks the inbox to keep what
// they show: every attempt, settled or not (crashed and lost leases
// included), for the history; every replay, closing and redelivery, for
// the audit trail; and, of the deliveries Enqueue answers
// EnqueueConflict, at least the first QuarantineLimit, for the
// quarantine. Implementations must be safe for concurrent use.
type Store interface {
	// Get returns the item for key with its history, audit trail and
	// quarantined deliveries, or an error wrapping ErrNotFound. The item
	// is that of the event's first job (the default handler's when it has
	// one); Detail.Jobs holds every job of the event.
	Get(ctx context.Context, key webhooks.InboxKey) (Detail, error)

	// List returns up to q.Limit items in q.State (dead letters by
	// default) matching q, newest first — by DeadAt, or ClosedAt for
	// closed items, then by key — and a cursor for the next page. The
	// items are Summaries: no payload, headers or history, which a store
	// must not read for a list (see Get). A cursor the store did not make
	// is refused with an error wrapping ErrInvalidCursor.
	List(ctx context.Context, q Query) (Page, error)

	// Replay makes items pending again, with a fresh attempt budget unless
	// req.KeepAttempts, recording the request in each item's audit trail:
	// the item req.Key, or those req.Query selects. It never changes a
	// stored payload, and an item's history keeps its earlier attempts.
	//
	// One item is replayed whether it is dead, closed (an operator's
	// closing undone) or succeeded (run again); an item that is pending or
	// leased is left as it is, with an error wrapping ErrNotFinished
	// (ErrNotFound when it does not exist).
	//
	// A bulk replay selects, when it begins, the items in Query.State
	// (dead letters by default; closed or succeeded ones only when the
	// query names that state) matching the query, newest first, up to
	// Query.Limit, and goes through at most ReplayBatch of them per call:
	// while some remain, ReplayResult.Next is the cursor to call again
	// with, as Query.After, the request otherwise unchanged (a cursor is
	// refused, with an error wrapping ErrInvalidCursor, with a
	// Query.Limit below its Total). It replays items of that selection
	// only, each once, and never more than Total: those that left the
	// state before it reached them (replayed or closed by someone else,
	// deleted) are skipped and not made up for with older ones, and one
	// it replayed that dies again dies after the selection and is not
	// taken again. (Only an item entering the state with a time among the
	// selection's, from a clock running behind, can take the place of one
	// that left.) So two bulk replays at once take no item twice, and no
	// more items than their selections hold. Started again without a
	// cursor, a bulk replay is a new one, of the items in the state then,
	// those that died again included.
	// With req.DryRun it reports what it would replay and changes nothing.
	Replay(ctx context.Context, req ReplayRequest) (ReplayResult, error)

	// CloseDeadLetter ends a dead letter on purpose: the item becomes
	// closed, is never replayed by a bulk replay of dead letters, and the
	// closing is recorded with its actor and reason. An item that is not
	// dead is left as it is, with an error wrapping ErrNotDead
	// (ErrNotFound when it does not exist). A closed item can be replayed
	// (see Replay).
	CloseDeadLetter(ctx context.Context, req CloseRequest) error

	// Stats counts what the inbox holds, in one call cheap enough to poll
	// every few seconds. It lists at most req.DeadLetterGroups dead-letter
	// groups and counts the rest in Stats.MoreDeadLetters; a negative
	// bound is refused with an error wrapping ErrInvalidRequest.
	Stats(ctx context.Context, req StatsRequest) (Stats, error)
}

// Outcomes an attempt's history records besides those a Settlement gives
// (webhooks.AttemptSucceeded, AttemptRetried, AttemptDeadLettered and
// AttemptAbandoned).
const (
	// OutcomeCrashed is an attempt whose lease expired without being
	// settled: its worker crashed, stalled, lost its lease or never
	// received it (the reply of the acquisition was lost, and the
	// acquisition was not asked for again in time; see
	// webhooks.AcquisitionRepeater). It is recorded when the item is next
	// acquired.
	OutcomeCrashed webhooks.AttemptOutcome = "crashed"
	// OutcomeLeaseLost is a crashed attempt whose worker came back and
	// tried to settle or extend its lease after another worker took the
	// item over: it was not dead, only too slow.
	OutcomeLeaseLost webhooks.AttemptOutcome = "lease_lost"
)

// Detail is an item with everything operators look at.
type Detail struct {
	webhooks.Item
	// History is every attempt, oldest first.
	History []Attempt
	// Audit is every replay, closing and provider redelivery, oldest first.
	Audit []Audit
	// Quarantine holds deliveries that reused the item's event ID with
	// another payload (answered 409), oldest first. Stores keep at least
	// the first QuarantineLimit of them.
	Quarantine []Delivery
	// Conflicts counts those deliveries, kept or not.
	Conflicts int
	// Jobs are the event's jobs, one per handler (see
	// webhooks.FanOutStore), ordered by handler, each with its own
	// history and audit trail; the first is the one Item, History and
	// Audit show. A store without fan-out gives the one job.
	Jobs []Job
}

// Job is one job of an event: its state, attempt history and audit trail.
// Its Item's Payload and Headers are nil (Detail has them).
type Job struct {
	webhooks.Item
	History []Attempt
	Audit   []Audit
}

// QuarantineLimit is how many conflicting deliveries every store keeps per
// item at least; later ones are only counted.
const QuarantineLimit = 10

// Attempt records one processing attempt.
type Attempt struct {
	// Number is the attempt's number, unique per item, from 1. An
	// abandoned attempt has a number of its own, although it is not
	// counted against the retry policy.
	Number  int
	Outcome webhooks.AttemptOutcome
	// StartedAt is when the item was leased; FinishedAt when the attempt
	// was settled (for a crashed attempt: when its lease expired).
	StartedAt  time.Time
	FinishedAt time.Time
	// ErrorClass and Error describe a failed attempt, or note how a
	// succeeded one ended (webhooks.FailureNoHandler: acknowledged without
	// a handler).
	ErrorClass webhooks.FailureClass
	Error      string
	// Worker and Version name the processor that made the attempt (see
	// webhooks.WithWorkerIdentity).
	Worker  string
	Version string
}

// Audit actions.
const (
	ActionReplay     = "replay"
	ActionClose      = "close"
	ActionRedelivery = "redelivery"
)

// Audit records an action taken on an item: an operator's replay or
// closing, or a provider's redelivery that replayed a dead letter.
type Audit struct {
	// Action is ActionReplay, ActionClose or ActionRedelivery.
	Action string
	At     time.Time
	Actor  string
	Reason string
	Ticket string
}

// Delivery is a quarantined delivery: a verified request that reused an
// item's event ID with another payload.
type Delivery struct {
	Payload       []byte
	Headers       http.Header
	PayloadSHA256 [sha256.Size]byte
	KeyID         string
	ReceivedAt    time.Time
}

// Query selects dead (or closed) items. Empty fields match everything.
type Query struct {
	// State is webhooks.StateDead (the default when empty) or
	// webhooks.StateClosed; a bulk replay also takes
	// webhooks.StateSucceeded.
	State webhooks.State
	// Handler, when not nil, selects the jobs of one handler; a pointer
	// to "" selects the default handler's. Nil selects every handler's.
	Handler  *string
	Provider string
	// Tenant, when not nil, selects one tenant; a pointer to "" selects
	// the items of no tenant.
	Tenant     *string
	EventType  string
	ErrorClass webhooks.FailureClass
	APIVersion string
	// From and To bound when the items died (DeadAt), From included, To
	// excluded; for closed items, when they were closed; for succeeded
	// ones, when they completed.
	From, To time.Time
	// After is the Next cursor of the previous page (of a bulk replay: of
	// its previous call); empty for the first.
	After string
	// Limit is the page size, or the most items a bulk replay takes, at
	// most MaxReplayLimit. It must be at least 1.
	Limit int
}

// ListState returns the state a List of q pages: dead letters when
// q.State is empty or webhooks.StateDead, or closed items. Any other
// state, or a Limit below 1, is an error wrapping ErrInvalidRequest, for
// stores to refuse the query before reading anything.
func (q *Query) ListState() (webhooks.State, error) {
	if q.Limit < 1 {
		return "", fmt.Errorf("ops.Query.Limit is %d; it must be at least 1: %w", q.Limit, ErrInvalidRequest)
	}
	switch q.State {
	case "", webhooks.StateDead:
		return webhooks.StateDead, nil
	case webhooks.StateClosed:
		return webhooks.StateClosed, nil
	}
	return "", fmt.Errorf("ops.Query.State is %q; a list takes %q (the default) or %q: %w", q.State, webhooks.StateDead, webhooks.StateClosed, ErrInvalidRequest)
}

// Page is one page of items.
type Page struct {
	Items []Summary
	// Next is the cursor for the following page; empty when this page is
	// the last.
	Next string
}

// Bounds of a bulk replay.
const (
	// DefaultReplayLimit is the most items a bulk replay takes when the
	// operator gives no limit (the admin API's and hookinbox's default
	// for Query.Limit).
	DefaultReplayLimit = 1000
	// MaxReplayLimit is the most items one bulk replay may take; a larger
	// Query.Limit is refused. Replay more by running another.
	MaxReplayLimit = 100_000
	// ReplayBatch is the most items one call of a bulk replay goes
	// through, so that no call holds a request, a lock or a transaction
	// for long; the replay goes on through ReplayResult.Next.
	ReplayBatch = 500
	// MaxReplaySpread is the longest ReplayRequest.Spread: a spread is
	// meant to ease a burst over minutes or hours, not to put items out
	// of sight for years.
	MaxReplaySpread = 24 * time.Hour
)

// Summary is an item as a list shows it: without its payload and headers
// (Item.Payload and Item.Headers are nil), which a list does not read, so a
// page of large dead letters costs what it shows. Get returns them.
type Summary struct {
	webhooks.Item
	// PayloadBytes is the length of the payload.
	PayloadBytes int
}

// ReplayRequest asks for a replay of one item (Key) or of many (Query).
// Actor and Reason are required: a replay is audited.
type ReplayRequest struct {
	// Key is the one item to replay, when Query is nil, and Handler the
	// handler of its job to replay ("" the default handler).
	Key     webhooks.InboxKey
	Handler string
	// Query selects the items of a bulk replay, newest first, up to
	// Query.Limit (see Store.Replay).
	Query *Query
	// Actor is who asks (a user, a service); Reason why; Ticket an
	// optional reference such as an incident number.
	Actor, Reason, Ticket string
	// KeepAttempts keeps each item's attempt count, so it gets only what
	// is left of the retry policy's budget (an exhausted item: one
	// attempt). By default the count starts again at zero and the item
	// gets the whole budget; its history keeps the earlier attempts.
	KeepAttempts bool
	// DryRun reports what would be replayed and changes nothing.
	DryRun bool
	// Spread distributes the replayed items' due times evenly over
	// [Now, Now+Spread), so replaying thousands does not stampede the
	// handlers' downstream: of the n items a bulk replay selected when it
	// began (ReplayResult.Total), the one a call takes after i others
	// (the previous call's Done, plus those before it in this call) is
	// due at Now+Spread*i/n, Now being that of the call that replays it,
	// so a dry run reports the due times the replay then gives (a store
	// may round them to its precision), and i < n keeps every due time in
	// the window. Zero makes every item due at Now. At most
	// MaxReplaySpread.
	Spread time.Duration
	// Rate, in items per second, spaces the replayed items' due times
	// 1/Rate apart instead: the one a call takes after i others (as for
	// Spread) is due at Now+i/Rate, so a bulk replay starts no faster
	// than Rate however many processors run, on top of the handlers'
	// own Limits, which replayed jobs go through like any other. Zero
	// leaves it to Spread; it cannot be given with Spread, and a query's
	// Limit/Rate must be at most MaxReplaySpread.
	Rate float64
	// Redelivery records the replay as a provider's redelivery
	// (ActionRedelivery) instead of an operator's (ActionReplay).
	Redelivery bool
	// ToHandler, when not empty, replays the selected events to another
	// handler: for each, the job of ToHandler is created, pending (or
	// waiting behind its ordering key's head when ToOrdered), or, if the
	// event has that job already and it is finished (succeeded, dead or
	// closed), replayed; one that is unfinished is left as it is. This is
	// how old events reach a handler added after they were received. The
	// action is audited on the ToHandler job. A bulk replay with
	// ToHandler needs Query.Handler, so that it takes each event once.
	ToHandler string
	// ToOrdered makes the jobs ToHandler creates ordered (see
	// webhooks.Job); it applies to created jobs only.
	ToOrdered bool
	// ToPriority is the priority of the jobs ToHandler creates (see
	// webhooks.Job, webhooks.Handler.TypePriorities), from 0 to
	// webhooks.MaxTypePriority: give the one ToHandler's TypePriorities
	// give the events' types (a priority it does not list is leased with
	// those of 0). It applies to created jobs only.
	ToPriority int
	Now        time.Time
}

// Check reports what makes req invalid, with an error wrapping
// ErrInvalidRequest, for stores to refuse it before changing anything:
// no actor or reason, a negative spread or one over MaxReplaySpread, both
// Key and Query, a query state a replay does not take, or a limit out of
// [1, MaxReplayLimit].
func (req *ReplayRequest) Check() error {
	invalid := func(format string, args ...any) error {
		return fmt.Errorf(format+": %w", append(args, ErrInvalidRequest)...)
	}
	switch {
	case strings.TrimSpace(req.Actor) == "" || strings.TrimSpace(req.Reason) == "":
		return invalid("Actor and Reason are required; a replay is audited")
	case req.Spread < 0:
		return invalid("Spread is %v; it must not be negative", req.Spread)
	case req.Spread > MaxReplaySpread:
		return invalid("Spread is %v; it must be at most %v (ops.MaxReplaySpread)", req.Spread, MaxReplaySpread)
	case math.IsNaN(req.Rate) || req.Rate < 0 || req.Rate > webhooks.MaxLimitRate:
		return invalid("Rate is %v; it must be from 0 (none) to %g items a second", req.Rate, float64(webhooks.MaxLimitRate))
	case req.Rate > 0 && req.Spread > 0:
		return invalid("both Spread and Rate are set; give one")
	case webhooks.CheckHandlerName(req.Handler) != nil:
		return invalid("Handler: %v", webhooks.CheckHandlerName(req.Handler))
	case webhooks.CheckHandlerName(req.ToHandler) != nil:
		return invalid("ToHandler: %v", webhooks.CheckHandlerName(req.ToHandler))
	case req.ToHandler != "" && req.KeepAttempts:
		return invalid("ToHandler and KeepAttempts are both set; a job created for another handler has no attempts to keep")
	case req.ToOrdered && req.ToHandler == "":
		return invalid("ToOrdered is set without ToHandler")
	case req.ToPriority != 0 && req.ToHandler == "":
		return invalid("ToPriority is set without ToHandler")
	case req.ToPriority < 0 || req.ToPriority > webhooks.MaxTypePriority:
		return invalid("ToPriority is %d; it must be from 0 to %d (webhooks.MaxTypePriority)", req.ToPriority, webhooks.MaxTypePriority)
	case req.Query == nil:
		return nil
	case req.Handler != "":
		return invalid("Handler is set with a Query; select the handler with Query.Handler")
	case req.Key != (webhooks.InboxKey{}):
		return invalid("both Key and Query are set; give one")
	}
	switch req.Query.State {
	case "", webhooks.StateDead, webhooks.StateClosed, webhooks.StateSucceeded:
	default:
		return invalid("Query.State is %q; a replay takes dead, closed or succeeded items", req.Query.State)
	}
	if h := req.Query.Handler; h != nil && webhooks.CheckHandlerName(*h) != nil {
		return invalid("Query.Handler: %v", webhooks.CheckHandlerName(*h))
	}
	if req.ToHandler != "" && req.Query.Handler == nil {
		return invalid("ToHandler needs Query.Handler: select the jobs of one handler, so each event is taken once")
	}
	if l := req.Query.Limit; l < 1 || l > MaxReplayLimit {
		return invalid("Query.Limit is %d; it must be from 1 to %d (ops.MaxReplayLimit)", l, MaxReplayLimit)
	}
	if req.Rate > 0 && float64(req.Query.Limit)/req.Rate > MaxReplaySpread.Seconds() {
		return invalid("Rate %v for up to %d items would take %v; the replay must fit in %v (ops.MaxReplaySpread): raise Rate or lower Query.Limit",
			req.Rate, req.Query.Limit, time.Duration(float64(req.Query.Limit)/req.Rate*float64(time.Second)), MaxReplaySpread)
	}
	return nil
}

// SpreadOffset is the due time, as an offset from Now, of the item a bulk
// replay takes after i others of the n it selected: Spread*i/n (see
// Spread), computed without overflowing, or i/Rate; zero without either.
func (req *ReplayRequest) SpreadOffset(i, n int) time.Duration {
	if req.Rate > 0 {
		return time.Duration(float64(i) / req.Rate * float64(time.Second))
	}
	if req.Spread <= 0 || n <= 0 {
		return 0
	}
	d, m := int64(req.Spread)/int64(n), int64(req.Spread)%int64(n)
	return time.Duration(d*int64(i) + m*int64(i)/int64(n))
}

// ReplayResult lists what a replay did (or, on a dry run, would do).
type ReplayResult struct {
	// Items are the items this call replayed, in order.
	Items []Replayed
	// Total is how many items a bulk replay selected when it began (at
	// most Query.Limit), and Done how many of them it has gone through,
	// this call included: those its calls took (replayed, or skipped
	// because they left the state during the call), and, once it is
	// complete, those that left the state before it reached them. Done
	// is Total exactly when Next is empty; a call takes at most Total
	// minus the previous call's Done. For one item both are 1.
	Done, Total int
	// Next is the cursor of a bulk replay's next call (Query.After);
	// empty once the replay is complete.
	Next string
}

// Replayed is one replayed item and when it is due.
type Replayed struct {
	Key webhooks.InboxKey
	// Handler is the handler of the replayed job (ReplayRequest.ToHandler
	// for a replay to another handler).
	Handler string
	DueAt   time.Time
}

// CloseRequest asks to close a dead letter. Actor and Reason are required.
type CloseRequest struct {
	Key webhooks.InboxKey
	// Handler is the handler of the job to close ("" the default).
	Handler               string
	Actor, Reason, Ticket string
	Now                   time.Time
}

// Check reports a closing without an actor or a reason, with an error
// wrapping ErrInvalidRequest, for stores to refuse it before changing
// anything: a closing is audited.
func (req *CloseRequest) Check() error {
	if strings.TrimSpace(req.Actor) == "" || strings.TrimSpace(req.Reason) == "" {
		return fmt.Errorf("ops.CloseRequest: Actor and Reason are required; a closing is audited: %w", ErrInvalidRequest)
	}
	if err := webhooks.CheckHandlerName(req.Handler); err != nil {
		return fmt.Errorf("ops.CloseRequest.Handler: %v: %w", err, ErrInvalidRequest)
	}
	return nil
}

// StatsRequest asks for the inbox's counts as of Now.
type StatsRequest struct {
	Now time.Time
	// DeadLetterGroups is the most dead-letter groups Stats lists, the
	// largest first; the rest are only counted (Stats.MoreDeadLetters).
	// Senders choose event types, so the groups are bounded. Defaults to
	// DefaultDeadLetterGroups when zero.
	DeadLetterGroups int
	// HeldKeys is the most held ordering keys Stats lists, the deepest
	// first; the rest are only counted (Stats.MoreHeldKeys). Defaults to
	// DefaultHeldKeys when zero.
	HeldKeys int
}

// DefaultHeldKeys is how many held keys Stats lists when
// StatsRequest.HeldKeys is zero.
const DefaultHeldKeys = 20

// HeldKeyLimit is the number of held keys req asks for: DefaultHeldKeys
// when zero. It is an error wrapping ErrInvalidRequest when negative.
func (req StatsRequest) HeldKeyLimit() (int, error) {
	switch {
	case req.HeldKeys < 0:
		return 0, fmt.Errorf("webhooks/ops: StatsRequest.HeldKeys is %d; give 0 for the default (%d) or a positive bound: %w",
			req.HeldKeys, DefaultHeldKeys, ErrInvalidRequest)
	case req.HeldKeys == 0:
		return DefaultHeldKeys, nil
	}
	return req.HeldKeys, nil
}

// DefaultDeadLetterGroups is how many dead-letter groups Stats lists when
// StatsRequest.DeadLetterGroups is zero.
const DefaultDeadLetterGroups = 20

// GroupLimit is the number of dead-letter groups req asks for:
// DefaultDeadLetterGroups when zero. It is an error wrapping
// ErrInvalidRequest when negative.
func (req StatsRequest) GroupLimit() (int, error) {
	switch {
	case req.DeadLetterGroups < 0:
		return 0, fmt.Errorf("webhooks/ops: StatsRequest.DeadLetterGroups is %d; give 0 for the default (%d) or a positive bound: %w",
			req.DeadLetterGroups, DefaultDeadLetterGroups, ErrInvalidRequest)
	case req.DeadLetterGroups == 0:
		return DefaultDeadLetterGroups, nil
	}
	return req.DeadLetterGroups, nil
}

// Stats counts what an inbox holds.
type Stats struct {
	// States counts items by state. A store may estimate the succeeded
	// count (PostgreSQL does, from table statistics, to stay cheap with
	// millions of rows); SucceededEstimated says so.
	States             map[webhooks.State]int64
	SucceededEstimated bool
	// Due counts pending items due at Now, and leased ones whose lease
	// expired (the backlog).
	Due int64
	// Parked counts the pending items a scoped pause holds (see
	// webhooks.PauseScope): they are not due while it holds.
	Parked int64
	// Retrying counts pending items that failed before.
	Retrying int64
	// LeasesHeld counts leases that have not expired.
	LeasesHeld int64
	// OldestDue is the due time of the longest-waiting due item; zero when
	// nothing is due. Now minus it is how far processing lags.
	OldestDue time.Time
	// DeadLetters counts dead letters by provider and event type, the
	// largest groups first (then by provider and event type), at most
	// StatsRequest.GroupLimit of them. MoreDeadLetters counts the groups
	// left out and the dead letters they hold.
	DeadLetters     []Count
	MoreDeadLetters More
	// Handlers counts each handler's jobs, by handler name ("" first). A
	// handler whose jobs are due but that no processor runs any more
	// shows here as a growing lag (Now minus OldestDue): retire it
	// (webhooks.Handler.Retired) or close its jobs.
	Handlers []HandlerStats
	// HeldKeys are the ordering keys whose head has failed and that have
	// jobs waiting behind it, the deepest first, at most
	// StatsRequest.HeldKeyLimit of them; MoreHeldKeys counts those left
	// out.
	HeldKeys     []HeldKey
	MoreHeldKeys int64
	// Paused are the handlers' pauses in force, by handler, then scope,
	// of a store that is a webhooks.PauseStore: while one holds, the jobs
	// it holds are received and stored but not run (see webhooks.Pause).
	Paused []webhooks.Pause
}

// HandlerStats counts one handler's jobs, as Stats counts all of them.
// States leaves out succeeded jobs, which only Stats.States counts (a
// store may estimate them).
type HandlerStats struct {
	Handler    string
	States     map[webhooks.State]int64
	Due        int64
	Parked     int64
	Retrying   int64
	LeasesHeld int64
	OldestDue  time.Time
}

// HeldKey is an ordering key held by a failing head: its jobs wait until
// the head succeeds or is dead-lettered.
type HeldKey struct {
	Handler, Provider, Tenant, Key string
	// Depth counts the key's unfinished jobs: the head and those waiting.
	Depth int64
	// Head is the failing job's event, with its attempts and last error.
	Head         webhooks.InboxKey
	HeadAttempts int
	HeadError    *webhooks.ErrorRecord
	// Next is the event that runs after the head, and NextReceivedAt
	// when it was received: how long the key has held work back.
	Next           webhooks.InboxKey
	NextReceivedAt time.Time
}

// Count is a number of items sharing a provider and event type, and a
// handler for a store with several.
type Count struct {
	Handler   string
	Provider  string
	EventType string
	N         int64
}

// More counts the groups a bounded list of groups left out: how many, and
// the items they hold. Both are zero when the list is complete.
type More struct {
	Groups int64
	N      int64
}
