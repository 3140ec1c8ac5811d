package memstore

import (
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

// Flow implements webhooks.FlowStore: the Inbox keeps each handler's
// Limits, and the tenant its Fair acquisitions visited last, over every
// caller, one acquisition at a time, and the jobs of each priority in
// due order of their own.
func (s *Inbox) Flow() webhooks.FlowSupport {
	return webhooks.FlowSupport{Limits: true, Fair: true, Priorities: true}
}

// allowedLocked returns how many of the want leases the Limits of req
// allow for its handler at req.Now: the room under MaxRunning (the
// handler's leases that have not expired count), and the tokens of its
// bucket.
//
// The bucket is kept as the time its next token is due, when it holds
// none (the handler's entry in s.buckets, the generic cell rate
// algorithm): it holds n tokens when that time is (BucketSize - n)
// intervals after now at most, so a handler quiet for BucketSize
// intervals has a full bucket, and a time kept in nanoseconds counts
// exactly whatever the rate.
func (s *Inbox) allowedLocked(q *dueQueue, req webhooks.AcquireRequest, want int) int {
	l := req.Limits
	if l.MaxRunning > 0 {
		running := 0
		if q != nil {
			running = q.running(req.Now)
		}
		want = min(want, max(0, l.MaxRunning-running))
	}
	if every := l.TokenInterval(); every > 0 {
		next := s.buckets[req.Handler]
		if next.Before(req.Now) {
			next = req.Now
		}
		// next - now is how far the bucket is from full; each missing
		// token is one interval of it.
		free := int64(l.BucketSize()) - int64((next.Sub(req.Now)+every-1)/every)
		want = min(want, int(max(0, free)))
	}
	return want
}

// spendLocked takes n tokens of the bucket of req's handler at req.Now.
func (s *Inbox) spendLocked(req webhooks.AcquireRequest, n int) {
	every := req.Limits.TokenInterval()
	if every == 0 || n == 0 {
		return
	}
	next := s.buckets[req.Handler]
	if next.Before(req.Now) {
		next = req.Now
	}
	s.buckets[req.Handler] = next.Add(time.Duration(n) * every)
}
