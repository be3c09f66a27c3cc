//go:build !amd64 || purego

package bytescan

// hasAVX2 is false where no AVX2 version exists; the AVX2 functions below
// are never called.
const hasAVX2 = false

func eolAVX2([]byte) int                    { panic("bytescan: no AVX2") }
func stringEndAVX2([]byte) (end, plain int) { panic("bytescan: no AVX2") }
func alphabetAVX2([]byte) bool              { panic("bytescan: no AVX2") }
