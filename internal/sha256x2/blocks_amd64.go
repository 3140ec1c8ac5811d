//go:build amd64 && !purego

package sha256x2

//go:generate python3 gen.py

//go:noescape
func blocks(a, b *[8]uint32, pa, pb *byte, n int)

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

func xgetbv() (eax uint32)

// available reports whether the CPU has the SHA extensions, and AVX with
// its registers enabled by the OS.
func available() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	ssse3, sse41, osxsave, avx := ecx1&(1<<9) != 0, ecx1&(1<<19) != 0, ecx1&(1<<27) != 0, ecx1&(1<<28) != 0
	if !ssse3 || !sse41 || !osxsave || !avx || xgetbv()&6 != 6 {
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	return ebx7&(1<<29) != 0
}
