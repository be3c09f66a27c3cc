//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package offheap

import "errors"

// mapMemory has no anonymous mappings to offer here: Arena.Bytes falls
// back to the Go heap.
func mapMemory(int) ([]byte, error) {
	return nil, errors.New("offheap: no anonymous mappings on this system")
}

func unmapMemory([]byte) {}
