//go:build amd64 && !purego

package bytescan

import "golang.org/x/sys/cpu"

// hasAVX2 is read once at start-up and never written afterwards.
var hasAVX2 = cpu.X86.HasAVX2

// The AVX2 scans look at whole 32-byte blocks only: len(b) must be a
// multiple of 32; the callers scan the tail.

//go:noescape
func eolAVX2(b []byte) int

//go:noescape
func stringEndAVX2(b []byte) (end, plain int)

//go:noescape
func alphabetAVX2(b []byte) bool
