// Package hmackey keeps the HMAC keys of the secrets a verifier has used,
// each with a pool of hash states keyed with it, so that a request costs a
// state reset instead of hmac.New (a new hash, the key padded and hashed
// twice) and the secret's decoding. It is shared by the root package's
// HMACVerifier and package providers' Twilio verifier. Keys stay in memory,
// never in output: nothing here has a String or Format method that shows
// them.
package hmackey

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha512"
	"hash"
	"sync"
)

// MaxKeys bounds the secrets a Cache keeps keys for. Past it, a new secret
// evicts another.
const MaxKeys = 1024

// Cache holds a Key for each secret value it was asked for. Entries are
// keyed by the secret's bytes: a value that changes under the same ID is a
// new entry. It is safe for concurrent use.
type Cache struct {
	newHash func() hash.Hash
	decode  func([]byte) ([]byte, error)

	mu sync.RWMutex
	m  map[string]*Key
}

// New returns a cache of keys for newHash; decode, when not nil, turns a
// secret into its key.
func New(newHash func() hash.Hash, decode func([]byte) ([]byte, error)) *Cache {
	return &Cache{newHash: newHash, decode: decode, m: make(map[string]*Key)}
}

// Len returns the number of keys held.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

// Key is one secret's key and its hash states.
type Key struct {
	key   []byte // decode's result, or a copy of the secret; may be empty
	state sync.Pool
}

// State is a keyed HMAC and scratch space for the content around the
// body, borrowed from a Key.
type State struct {
	MAC hash.Hash
	Buf []byte
	sum [sha512.Size]byte
}

// Sum returns the HMAC of what was written, in the state's own storage.
func (s *State) Sum() []byte { return s.MAC.Sum(s.sum[:0]) }

// Get returns the key of secret, decoding it and keying a hash the first
// time. An error from decode is returned as it is, and not kept.
func (c *Cache) Get(secret []byte) (*Key, error) {
	c.mu.RLock()
	k := c.m[string(secret)]
	c.mu.RUnlock()
	if k != nil {
		return k, nil
	}
	key := secret
	if c.decode != nil {
		var err error
		if key, err = c.decode(secret); err != nil {
			return nil, err
		}
	}
	k = &Key{key: bytes.Clone(key)}
	k.state.New = func() any { return &State{MAC: hmac.New(c.newHash, k.key)} }
	c.mu.Lock()
	if len(c.m) >= MaxKeys {
		for old := range c.m { // an arbitrary one
			delete(c.m, old)
			break
		}
	}
	c.m[string(secret)] = k
	c.mu.Unlock()
	return k, nil
}

// Bytes returns the key. It is the key's own: do not modify it.
func (k *Key) Bytes() []byte { return k.key }

// Borrow returns a reset state keyed with k; give it back with Return.
func (k *Key) Borrow() *State {
	st := k.state.Get().(*State)
	st.MAC.Reset()
	return st
}

// Return gives a state back for reuse.
func (k *Key) Return(st *State) { k.state.Put(st) }
