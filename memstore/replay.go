package memstore

import (
	"container/heap"
	"context"
	"crypto/sha256"
	"sync"
	"time"

	webhooks "github.com/hookinbox/webhooks"
)

// evictPerRegister bounds how many expired registrations one Register call
// removes, so a mass expiry never stalls a single request. Each call adds at
// most one registration, so eviction keeps up.
const evictPerRegister = 64

// Replay is an in-memory webhooks.ReplayStore. It is safe for concurrent use;
// it is not durable (see the package documentation).
//
// Expired registrations are evicted by Register itself, a bounded number per
// call, oldest expiry first: there is no background goroutine, and an idle
// Replay keeps its expired registrations until the next Register.
type Replay struct {
	mu       sync.Mutex
	regs     map[replayKey]registration
	expiries expiryQueue
}

// replayKey identifies a registration.
type replayKey struct{ provider, key string }

type registration struct {
	digest    [sha256.Size]byte
	expiresAt time.Time
}

var _ webhooks.ReplayStore = (*Replay)(nil)

// NewReplay returns an empty in-memory replay store.
func NewReplay() *Replay {
	return &Replay{regs: make(map[replayKey]registration)}
}

// Register implements webhooks.ReplayStore.
func (r *Replay) Register(ctx context.Context, reg webhooks.ReplayRegistration) (webhooks.ReplayOutcome, error) {
	if err := ctxErr(ctx); err != nil {
		return 0, err
	}
	key, payloadSHA256, now, expiresAt := replayKey{reg.Provider, reg.Key}, reg.PayloadSHA256, reg.Now, reg.ExpiresAt
	r.mu.Lock()
	defer r.mu.Unlock()

	r.evictLocked(now)
	if reg, ok := r.regs[key]; ok && reg.expiresAt.After(now) {
		if reg.digest == payloadSHA256 {
			return webhooks.ReplaySeen, nil
		}
		return webhooks.ReplayConflict, nil
	}
	r.regs[key] = registration{digest: payloadSHA256, expiresAt: expiresAt}
	heap.Push(&r.expiries, expiry{key: key, at: expiresAt})
	return webhooks.ReplayNew, nil
}

// evictLocked removes up to evictPerRegister registrations expired at now.
func (r *Replay) evictLocked(now time.Time) {
	for range evictPerRegister {
		if len(r.expiries) == 0 || r.expiries[0].at.After(now) {
			return
		}
		x := heap.Pop(&r.expiries).(expiry)
		// The key may have been registered again after x expired; only an
		// expired registration goes.
		if reg, ok := r.regs[x.key]; ok && !reg.expiresAt.After(now) {
			delete(r.regs, x.key)
		}
	}
}

// Len returns the number of registrations held, counting expired ones that
// were not evicted yet.
func (r *Replay) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.regs)
}
