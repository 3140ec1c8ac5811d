package sha256x2

import (
	"crypto/sha256"
	"math/rand/v2"
	"testing"
)

// oneLane is Blocks for one lane, through crypto/sha256.
func oneLane(t testing.TB, s State, p []byte) State {
	d := sha256.New()
	if err := new(Scratch).Import(d, s); err != nil {
		t.Fatal(err)
	}
	d.Write(p)
	out, err := new(Scratch).Export(d)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestBlocks(t *testing.T) {
	if !Available {
		t.Skip("no SHA extensions here")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 40 {
		for range 5 {
			pa, pb := make([]byte, n*BlockSize), make([]byte, n*BlockSize)
			for i := range pa {
				pa[i], pb[i] = byte(r.Uint32()), byte(r.Uint32())
			}
			a, b := Initial, Initial
			for i := range a.H {
				a.H[i], b.H[i] = r.Uint32(), r.Uint32()
			}
			wantA, wantB := oneLane(t, a, pa), oneLane(t, b, pb)
			Blocks(&a.H, &b.H, pa, pb)
			if a.H != wantA.H || b.H != wantB.H {
				t.Fatalf("%d blocks: lanes %x %x, want %x %x", n, a.H, b.H, wantA.H, wantB.H)
			}
		}
	}
}

func TestExportImport(t *testing.T) {
	d := sha256.New()
	d.Write(make([]byte, 3*BlockSize))
	s, err := new(Scratch).Export(d)
	if err != nil || s.Len != 3*BlockSize {
		t.Fatalf("Export: %+v, %v", s, err)
	}
	d.Write([]byte("x"))
	if _, err := new(Scratch).Export(d); err == nil {
		t.Error("Export takes a digest off a block boundary")
	}
	e := sha256.New()
	if err := new(Scratch).Import(e, s); err != nil {
		t.Fatal(err)
	}
	e.Write([]byte("x"))
	if string(e.Sum(nil)) != string(d.Sum(nil)) {
		t.Error("Import lost the state")
	}
}

func BenchmarkBlocks(b *testing.B) {
	if !Available {
		b.Skip("no SHA extensions here")
	}
	pa, pb := make([]byte, 2048), make([]byte, 2048)
	b.Run("impl=two-lanes", func(b *testing.B) {
		b.SetBytes(2 * 2048)
		s1, s2 := Initial, Initial
		for b.Loop() {
			Blocks(&s1.H, &s2.H, pa, pb)
		}
	})
	b.Run("impl=crypto-sha256-twice", func(b *testing.B) {
		b.SetBytes(2 * 2048)
		d1, d2 := sha256.New(), sha256.New()
		for b.Loop() {
			d1.Write(pa)
			d2.Write(pb)
		}
	})
}
