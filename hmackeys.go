package webhooks

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"hash"
	"sync"

	"github.com/hookinbox/webhooks/internal/sha256x2"
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
	// twoLanes: HMAC-SHA-256 on a machine that runs two hashes at once.
	twoLanes bool

	mu sync.RWMutex
	m  map[string]*hmacKey
}

// hmacKey is one secret's key and its hash states.
type hmacKey struct {
	key   []byte // DecodeSecret's result, or a copy of the secret; may be empty
	state sync.Pool
	// For HMAC-SHA-256 where two hashes run at once (twoLanes): the
	// SHA-256 states after the key's inner and outer pad blocks.
	twoLanes     bool
	inner, outer sha256x2.State
}

// hmacState is a keyed HMAC and its scratch space.
type hmacState struct {
	mac hash.Hash
	buf []byte // the signed content's parts around the body
	sum [sha512.Size]byte
	// SHA-256 digests the two-lane path loads states into.
	lane, body hash.Hash
	scratch    sha256x2.Scratch
}

func newHMACKeys(newHash func() hash.Hash, decode func([]byte) ([]byte, error)) *hmacKeys {
	c := &hmacKeys{newHash: newHash, decode: decode, m: make(map[string]*hmacKey)}
	c.twoLanes = sha256x2.Available && isSHA256(newHash)
	return c
}

// minTwoLaneBody is the smallest body hashed in two lanes: below a few
// blocks, loading and storing the states costs more than it saves.
const minTwoLaneBody = 4 * sha256x2.BlockSize

// padStates returns the SHA-256 states after HMAC's inner and outer pad
// blocks of key (RFC 2104: a key longer than a block is hashed first).
func padStates(key []byte) (inner, outer sha256x2.State, err error) {
	var block [sha256x2.BlockSize]byte
	if len(key) > len(block) {
		sum := sha256.Sum256(key)
		copy(block[:], sum[:])
	} else {
		copy(block[:], key)
	}
	pad := func(b byte) (sha256x2.State, error) {
		var p [sha256x2.BlockSize]byte
		for i := range p {
			p[i] = block[i] ^ b
		}
		d := sha256.New()
		d.Write(p[:])
		return new(sha256x2.Scratch).Export(d)
	}
	if inner, err = pad(0x36); err != nil {
		return inner, outer, err
	}
	outer, err = pad(0x5c)
	return inner, outer, err
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
	if c.twoLanes && len(k.key) > 0 {
		var err error
		k.inner, k.outer, err = padStates(k.key)
		k.twoLanes = err == nil
	}
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
// in constant time with each signature. The first time for a request, it
// computes the SHA-256 of the body in the same pass where it can (see
// twoLanes) and keeps it in in.digest.
func (k *hmacKey) matches(t wire.Template, in *hmacRequest) bool {
	st := k.state.Get().(*hmacState)
	defer k.state.Put(st)
	var sum []byte
	if k.twoLanes && !in.hasDigest && in.content == nil && len(in.values.Body) >= minTwoLaneBody {
		sum = k.twoLaneSum(t, in, st)
	}
	if sum == nil {
		st.mac.Reset()
		if in.content != nil {
			st.mac.Write(in.content)
		} else {
			st.buf = t.Write(st.mac, st.buf, in.values)
		}
		sum = st.mac.Sum(st.sum[:0])
	}
	for i := range in.sigs.Len() {
		if hmac.Equal(sum, in.sigs.At(i)) {
			return true
		}
	}
	return false
}

// twoLaneSum computes HMAC-SHA-256 of the content and, beside it, the
// SHA-256 of the body, hashing the body's blocks of both in one pass
// (sha256x2). It returns the HMAC, or nil when a digest refused a state,
// for the caller to compute it the usual way.
func (k *hmacKey) twoLaneSum(t wire.Template, in *hmacRequest, st *hmacState) []byte {
	if st.lane == nil {
		st.lane, st.body = sha256.New(), sha256.New()
	}
	var before, after []byte
	before, after, st.buf = t.Split(st.buf, in.values)
	body := in.values.Body
	// The inner hash: the pad block, the text before the body, then as
	// much of the body as ends its block, so that the rest of the body
	// lies on block boundaries in both lanes.
	if st.scratch.Import(st.lane, k.inner) != nil {
		return nil
	}
	st.lane.Write(before)
	head := (sha256x2.BlockSize - (sha256x2.BlockSize+len(before))%sha256x2.BlockSize) % sha256x2.BlockSize
	st.lane.Write(body[:head])
	inner, err := st.scratch.Export(st.lane)
	if err != nil {
		return nil
	}
	n := (len(body) - head) / sha256x2.BlockSize * sha256x2.BlockSize
	digest := sha256x2.Initial
	sha256x2.Blocks(&inner.H, &digest.H, body[head:head+n], body[:n])
	inner.Len += uint64(n)
	digest.Len += uint64(n)
	if st.scratch.Import(st.lane, inner) != nil || st.scratch.Import(st.body, digest) != nil {
		return nil
	}
	st.lane.Write(body[head+n:])
	st.lane.Write(after)
	innerSum := st.lane.Sum(st.sum[:0])
	st.body.Write(body[n:])
	// Through st: in stays on its caller's stack.
	copy(in.digest[:], st.body.Sum(st.sum[sha256.Size:sha256.Size]))
	in.hasDigest = true
	// The outer hash: the pad block, then the inner sum.
	if st.scratch.Import(st.lane, k.outer) != nil {
		in.hasDigest = false
		return nil
	}
	st.lane.Write(innerSum)
	return st.lane.Sum(st.sum[:0])
}

// isSHA256 reports whether newHash makes SHA-256 digests.
func isSHA256(newHash func() hash.Hash) bool {
	h := newHash()
	return h.Size() == sha256.Size && h.BlockSize() == sha256.BlockSize
}
