package pgstore

import webhooks "github.com/hookinbox/webhooks"

var _ webhooks.FanOutStore = (*Store)(nil)

// FanOut implements webhooks.FanOutStore: the store keeps one job per
// handler of an event (a row of inbox_jobs each, the event's payload
// stored once in inbox_events), acquires by AcquireRequest.Handler
// through inbox_jobs_due_idx, which leads with the handler, and fences
// every settlement, extension and start by the job (key and handler) and
// its token.
func (s *Store) FanOut() webhooks.FanOutSupport {
	return webhooks.FanOutSupport{Handlers: true}
}
