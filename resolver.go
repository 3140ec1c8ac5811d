package webhooks

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// VerifierResolver finds the verifier for a provider key. *Resolver is the
// usual implementation; hosts with dynamic providers may supply their own.
// Implementations must be safe for concurrent use.
type VerifierResolver interface {
	Lookup(provider string) (Verifier, bool)
}

// Resolver is a registry of verifiers by provider key. The zero value is not
// usable; call NewResolver. It is safe for concurrent use.
type Resolver struct {
	mu        sync.RWMutex
	verifiers map[string]Verifier
}

// NewResolver returns an empty Resolver.
func NewResolver() *Resolver {
	return &Resolver{verifiers: make(map[string]Verifier)}
}

// Register adds the verifier for a provider key. Keys are case-sensitive,
// non-empty and may not contain '/'. Registering a key twice returns an error
// wrapping ErrDuplicateProvider and keeps the first verifier.
func (r *Resolver) Register(provider string, v Verifier) error {
	if provider == "" || strings.Contains(provider, "/") {
		return fmt.Errorf("webhooks: invalid provider key %q: it must be non-empty and contain no '/'", provider)
	}
	if v == nil {
		return fmt.Errorf("webhooks: nil verifier for provider %q", provider)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.verifiers[provider]; dup {
		return fmt.Errorf("%w: %q", ErrDuplicateProvider, provider)
	}
	r.verifiers[provider] = v
	return nil
}

// MustRegister is like Register but panics on error. It is meant for wiring
// code at start-up, where a duplicate key is a programming mistake.
func (r *Resolver) MustRegister(provider string, v Verifier) {
	if err := r.Register(provider, v); err != nil {
		panic(err)
	}
}

// Lookup returns the verifier registered for provider.
func (r *Resolver) Lookup(provider string) (Verifier, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.verifiers[provider]
	return v, ok
}

// Providers returns the registered provider keys in sorted order.
func (r *Resolver) Providers() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	keys := make([]string, 0, len(r.verifiers))
	for k := range r.verifiers {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
