package webhooks

import (
	"fmt"
	"math"
	"time"
)

// Limits bound how fast one handler's jobs are leased, counted over every
// processor that shares the store (a FlowStore with FlowSupport.Limits
// keeps the count), so a downstream's concurrency and quota hold however
// many instances run. Retries, replays and takeovers of expired leases go
// through the same limits: every lease counts. The zero Limits bounds
// nothing.
type Limits struct {
	// MaxRunning is the most jobs of the handler leased at once, their
	// leases unexpired, over every caller of the store; 0 for no cap. A
	// lease counts from its acquisition, started or held, until it is
	// settled or expires.
	MaxRunning int
	// Rate is the most jobs of the handler leased per second over every
	// caller, on average; 0 for no rate limit. The store keeps a token
	// bucket of Burst tokens for the handler, refilled at Rate per second
	// of AcquireRequest.Now, and each lease takes one; so after a quiet
	// spell, up to Burst are leased at once.
	Rate float64
	// Burst is the bucket's size, at least 1; 0 means the leases of one
	// second (Rate rounded up).
	Burst int
}

// Bounds on Limits, so that a store can keep them exactly.
const (
	// MaxLimitRate is the highest Limits.Rate: a million leases a second.
	MaxLimitRate = 1e6
	// MaxLimitCount is the highest Limits.MaxRunning and Limits.Burst.
	MaxLimitCount = 1_000_000
)

// Bounds on Handler.TypePriorities.
const (
	// MaxTypePriority is the highest priority of a type.
	MaxTypePriority = 1000
	// MaxTypePriorities is the most distinct priorities above 0 one
	// handler's types may have.
	MaxTypePriorities = 32
)

// IsZero reports whether l bounds nothing.
func (l Limits) IsZero() bool { return l.MaxRunning == 0 && l.Rate == 0 && l.Burst == 0 }

// BucketSize is the size of l's token bucket: Burst, or Rate rounded up
// when Burst is 0 (at least 1). It is 0 when l has no Rate.
func (l Limits) BucketSize() int {
	switch {
	case l.Rate == 0:
		return 0
	case l.Burst > 0:
		return l.Burst
	}
	return max(1, int(math.Ceil(l.Rate)))
}

// TokenInterval is how long l's bucket takes to refill one token (one
// lease), 0 when l has no Rate.
func (l Limits) TokenInterval() time.Duration {
	if l.Rate == 0 {
		return 0
	}
	return max(time.Nanosecond, time.Duration(float64(time.Second)/l.Rate))
}

// Check reports what makes l invalid: a negative or too large MaxRunning
// or Burst, a Rate that is negative, not a number or over MaxLimitRate,
// or a Burst without a Rate.
func (l Limits) Check() error {
	switch {
	case l.MaxRunning < 0 || l.MaxRunning > MaxLimitCount:
		return fmt.Errorf("webhooks: Limits.MaxRunning is %d; it must be between 0 (no cap) and %d", l.MaxRunning, MaxLimitCount)
	case math.IsNaN(l.Rate) || l.Rate < 0 || l.Rate > MaxLimitRate:
		return fmt.Errorf("webhooks: Limits.Rate is %v; it must be between 0 (no rate limit) and %g leases a second", l.Rate, float64(MaxLimitRate))
	case l.Burst < 0 || l.Burst > MaxLimitCount:
		return fmt.Errorf("webhooks: Limits.Burst is %d; it must be between 0 (a second's leases) and %d", l.Burst, MaxLimitCount)
	case l.Burst > 0 && l.Rate == 0:
		return fmt.Errorf("webhooks: Limits.Burst is %d without a Rate; set Rate, or leave Burst 0", l.Burst)
	}
	return nil
}

// FlowStore is an optional LeaseStore capability: flow control kept in the
// store, so that it holds over every processor sharing it. NewProcessor
// refuses Limits on a store without it.
type FlowStore interface {
	Flow() FlowSupport
}

// FlowSupport says what a FlowStore does.
type FlowSupport struct {
	// Limits: an acquisition leases no more than AcquireRequest.Limits
	// allow, over every caller of the store, with the concurrent callers'
	// acquisitions of one handler counted one after the other: at most
	// MaxRunning of the handler's jobs leased and unexpired once it
	// returns, and no more than its token bucket (Rate, BucketSize, of
	// the handler; one per handler, over every caller) holds, one token
	// taken per lease. A RepeatAcquisition returns leases already
	// counted and takes no token.
	Limits bool
	// Fair: an acquisition with AcquireRequest.Fair leases the handler's
	// due jobs by tenant (an InboxKey's Provider and Tenant, ordered by
	// their bytes), in turns, instead of the longest due first. It
	// visits the tenants that have pending or leased jobs of the
	// handler, in order, starting after the tenant the handler's last
	// Fair acquisition (of any caller) visited last and coming round to
	// the start, until it has found as many tenants with a due job as it
	// may lease (Max, or fewer when Limits or a pause's probe allow
	// fewer), has visited every tenant, or has visited FairVisits; then
	// it leases the longest-due job of each tenant found, in the order
	// found, then the second of each, and so on, up to that many. So
	// with T tenants waiting, each gets a lease within T/n acquisitions
	// of n leases (rounded up) however large the backlogs of the others;
	// within a tenant, the longest due goes first. Fair
	// acquisitions of one handler are counted one after the other, as
	// those under Limits.
	Fair bool
	// Priorities: the store keeps each job's Job.Priority (Item.Priority
	// reads it), and an acquisition with AcquireRequest.Priorities leases
	// the handler's due jobs of its first priority, the longest due
	// first, before those of the second, and so on, then the others (of
	// priority 0, or of one not listed), the longest due first; a backlog
	// of one priority costs the acquisition of another little (pgstore
	// reads each listed priority's due jobs apart, and the others past
	// only the listed ones' due jobs it did not take).
	// An acquisition without Priorities leases by due time alone,
	// whatever the jobs' priorities. Limits, pauses and probes count the
	// jobs of every priority alike.
	Priorities bool
}

// FlowOf returns what store supports: its Flow, or nothing when it is not
// a FlowStore.
func FlowOf(store any) FlowSupport {
	if f, ok := store.(FlowStore); ok {
		return f.Flow()
	}
	return FlowSupport{}
}
