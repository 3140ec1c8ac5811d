package pgstore

import webhooks "github.com/hookinbox/webhooks"

var _ webhooks.FanOutStore = (*Store)(nil)

// FanOut implements webhooks.FanOutStore: the store keeps one job per
// handler of an event (a row of inbox_jobs each, the event's payload
// stored once in inbox_events), acquires by AcquireRequest.Handler
// through inbox_jobs_due_idx, which leads with the handler, and fences
// every settlement, extension and start by the job (key and handler) and
// its token.
//
// Ordering keys work by promotion: of the ordered jobs of one key (a row
// of inbox_keys) only the head is pending or leased (inbox_jobs_head_idx
// makes that a unique constraint), the others wait (state waiting, not in
// the due index), so acquisition is unchanged. An enqueue adds its job to
// the key's depth under the key row's lock, and takes the place of a head
// of a newer version that has not started (see demotable); a settlement that ends a head
// (succeeded or dead-lettered) locks the key rows first (lockKeysSQL),
// then, in the same transaction, settles and promotes each key's next
// waiting job in (version, seq) order (settleBatchSQL); replay and close
// keep the key's depth and dead letters.
func (s *Store) FanOut() webhooks.FanOutSupport {
	return webhooks.FanOutSupport{Handlers: true, OrderingKeys: true}
}
