package webhooks

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Resolver finds the verifier for a provider key. *Registry is the usual
// implementation; hosts with dynamic providers may supply their own.
// Implementations must be safe for concurrent use.
type Resolver interface {
	Lookup(provider string) (Verifier, bool)
}

// Registry is a Resolver that holds verifiers registered by provider key.
// The zero value is not usable; call NewRegistry. It is safe for concurrent
// use.
type Registry struct {
	mu        sync.RWMutex
	verifiers map[string]Verifier
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	return &Registry{verifiers: make(map[string]Verifier)}
}

// Register adds the verifier for a provider key, the path segment the
// Receiver routes by (POST /webhooks/{provider}). Keys are case-sensitive,
// non-empty, at most 512 bytes of printable text and may not
// contain '/'. Registering a key twice returns an error wrapping
// ErrDuplicateProvider and keeps the first verifier.
func (r *Registry) Register(provider string, v Verifier) error {
	if err := checkProviderKey(provider); err != nil {
		return err
	}
	if v == nil {
		return fmt.Errorf("webhooks: Register(%q): nil verifier", provider)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.verifiers[provider]; dup {
		return fmt.Errorf("%w: %q", ErrDuplicateProvider, provider)
	}
	r.verifiers[provider] = v
	return nil
}

// checkProviderKey reports why provider cannot be a provider key.
func checkProviderKey(provider string) error {
	if provider == "" || provider == "." || provider == ".." || strings.ContainsRune(provider, '/') ||
		strings.TrimSpace(provider) != provider || strings.ContainsFunc(provider, unicode.IsControl) || checkKey("provider key", provider) != nil {
		return fmt.Errorf("webhooks: invalid provider key %q: use a non-empty path segment such as \"stripe\" (no '/', no surrounding blanks, at most %d bytes)", provider, maxKeyBytes)
	}
	return nil
}

// MustRegister is like Register but panics on error. It is meant for wiring
// code at start-up, where a duplicate key is a programming mistake.
func (r *Registry) MustRegister(provider string, v Verifier) {
	if err := r.Register(provider, v); err != nil {
		panic(err)
	}
}

// Lookup implements Resolver.
func (r *Registry) Lookup(provider string) (Verifier, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.verifiers[provider]
	return v, ok
}

// Providers returns the registered provider keys in sorted order.
func (r *Registry) Providers() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	keys := make([]string, 0, len(r.verifiers))
	for k := range r.verifiers {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
