//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package offheap

import (
	"fmt"
	"syscall"
)

// mapMemory maps n bytes of private anonymous memory, zeroed by the
// operating system and resident only where written.
func mapMemory(n int) ([]byte, error) {
	mem, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, fmt.Errorf("offheap: mapping %d bytes: %w", n, err)
	}
	return mem, nil
}

// unmapMemory gives mem's pages back. It cannot fail for a whole mapping
// that mapMemory returned; if it did, the pages would only stay mapped.
func unmapMemory(mem []byte) {
	_ = syscall.Munmap(mem)
}
