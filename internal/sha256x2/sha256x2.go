// Package sha256x2 runs two SHA-256 computations at once, for the HMAC
// verifier that hashes a request's body twice: once inside the HMAC, once
// for the payload digest. The SHA extensions of x86 CPUs compute one hash
// at the latency of their round instruction; two independent hashes fill
// the gaps, so the second costs little. Elsewhere, and in FIPS 140 mode,
// Available is false and callers hash one after the other.
package sha256x2

import (
	"crypto/fips140"
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"errors"
	"hash"
)

// BlockSize is the size of a block of SHA-256.
const BlockSize = 64

// Available reports whether Blocks computes two lanes at once.
var Available = available() && !fips140.Enabled()

// Blocks runs the SHA-256 compression function over the blocks of pa from
// state a and over the blocks of pb from state b. pa and pb have the same
// length, a multiple of BlockSize. It panics when Available is false.
func Blocks(a, b *[8]uint32, pa, pb []byte) {
	if len(pa) != len(pb) || len(pa)%BlockSize != 0 {
		panic("sha256x2: lanes of unequal or partial blocks")
	}
	if !Available {
		panic("sha256x2: not available")
	}
	if len(pa) > 0 {
		blocks(a, b, &pa[0], &pb[0], len(pa)/BlockSize)
	}
}

// marshaledSize is the size of a crypto/sha256 digest's binary state:
// a magic, the 8 state words, the 64-byte buffer and the length.
const marshaledSize = 4 + 32 + BlockSize + 8

const magic = "sha\x03"

// State is a SHA-256 state on a block boundary: the words and the number
// of bytes hashed so far.
type State struct {
	H   [8]uint32
	Len uint64
}

// errState is returned for a digest that is not crypto/sha256's.
var errState = errors.New("sha256x2: not a crypto/sha256 digest on a block boundary")

// Scratch is the space Export and Import marshal a state in. Kept beside
// the digests, on the heap, it makes them allocate nothing; on the stack
// it would escape through the digests' methods.
type Scratch [marshaledSize]byte

// Export reads the state of d, a crypto/sha256 digest that has hashed a
// multiple of BlockSize bytes.
func (buf *Scratch) Export(d hash.Hash) (State, error) {
	m, ok := d.(encoding.BinaryAppender)
	if !ok {
		return State{}, errState
	}
	b, err := m.AppendBinary(buf[:0])
	if err != nil || len(b) != marshaledSize || string(b[:4]) != magic {
		return State{}, errState
	}
	var s State
	for i := range s.H {
		s.H[i] = binary.BigEndian.Uint32(b[4+4*i:])
	}
	s.Len = binary.BigEndian.Uint64(b[4+32+BlockSize:])
	if s.Len%BlockSize != 0 {
		return State{}, errState
	}
	return s, nil
}

// Import sets d, a crypto/sha256 digest, to state s.
func (b *Scratch) Import(d hash.Hash, s State) error {
	clear(b[:])
	copy(b[:], magic)
	for i, h := range s.H {
		binary.BigEndian.PutUint32(b[4+4*i:], h)
	}
	binary.BigEndian.PutUint64(b[4+32+BlockSize:], s.Len)
	u, ok := d.(encoding.BinaryUnmarshaler)
	if !ok {
		return errState
	}
	return u.UnmarshalBinary(b[:])
}

// Initial is the state of a new SHA-256 digest.
var Initial = func() State {
	s, err := new(Scratch).Export(sha256.New())
	if err != nil {
		panic(err)
	}
	return s
}()
