//go:build !amd64 || purego

package sha256x2

func available() bool { return false }

func blocks(a, b *[8]uint32, pa, pb *byte, n int) { panic("sha256x2: not available") }
