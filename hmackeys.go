package webhooks

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha512"
	"hash"
	"sync"

	"github.com/hookinbox/webhooks/internal/wire"
)

// maxCachedKeys bounds the secrets an HMACVerifier keeps keyed hash states
// for. Past it, a new secret evicts another.
const maxCachedKeys = 1024

// hmacKeys holds, for each secret value a verifier has used, its HMAC key
// and a pool of hash states keyed with it, so that a request costs a state
// reset instead of hmac.New (a new hash, the key padded and hashed twice)
// and DecodeSecret. Entries are keyed by the secret's bytes: a value that
// changes under the same ID is a new entry. They stay in memory, never in
// output: nothing here has a String or Format method that shows them, and
// HMACVerifier formats as its type only.
type hmacKeys struct {
	newHash func() hash.Hash
	decode  func([]byte) ([]byte, error)

	mu sync.RWMutex
	m  map[string]*hmacKey
}

// hmacKey is one secret's key and its hash states.
type hmacKey struct {
	key   []byte // DecodeSecret's result, or a copy of the secret; may be empty
	state sync.Pool
}

// hmacState is a keyed HMAC and its scratch space.
type hmacState struct {
	mac hash.Hash
	buf []byte // the signed content's parts around the body
	sum [sha512.Size]byte
}

func newHMACKeys(newHash func() hash.Hash, decode func([]byte) ([]byte, error)) *hmacKeys {
	return &hmacKeys{newHash: newHash, decode: decode, m: make(map[string]*hmacKey)}
}

// get returns the key of secret, decoding it and keying a hash the first
// time. An error from DecodeSecret is returned as it is, and not kept.
func (c *hmacKeys) get(secret []byte) (*hmacKey, error) {
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
	k = &hmacKey{key: bytes.Clone(key)}
	k.state.New = func() any { return &hmacState{mac: hmac.New(c.newHash, k.key)} }
	c.mu.Lock()
	if len(c.m) >= maxCachedKeys {
		for old := range c.m { // an arbitrary one
			delete(c.m, old)
			break
		}
	}
	c.m[string(secret)] = k
	c.mu.Unlock()
	return k, nil
}

// matches computes the HMAC of the request's content with k and compares it
// in constant time with each signature.
func (k *hmacKey) matches(t wire.Template, in *signedMessage) bool {
	st := k.state.Get().(*hmacState)
	defer k.state.Put(st)
	st.mac.Reset()
	if in.content != nil {
		st.mac.Write(in.content)
	} else {
		st.buf = t.Write(st.mac, st.buf, in.values)
	}
	sum := st.mac.Sum(st.sum[:0])
	for i := range in.sigs.Len() {
		if hmac.Equal(sum, in.sigs.At(i)) {
			return true
		}
	}
	return false
}
