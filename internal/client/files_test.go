//go:build unix

package client

import (
	"strings"
	"syscall"
	"testing"
)

// TestEnsureFiles: the soft limit ends at the hard limit, a need under it
// passes, and a need above it fails with an error naming the limit and
// the way to raise it.
func TestEnsureFiles(t *testing.T) {
	limit, err := EnsureFiles(0)
	if err != nil {
		t.Fatal(err)
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur != lim.Max || limit != lim.Cur {
		t.Errorf("soft limit %d, hard %d, reported %d: want soft raised to hard", lim.Cur, lim.Max, limit)
	}
	if _, err := EnsureFiles(int(min(limit, 1<<20))); err != nil {
		t.Errorf("a need at the limit failed: %v", err)
	}
	if limit >= 1<<40 {
		t.Skip("no finite open-file limit to exceed")
	}
	_, err = EnsureFiles(int(limit) + 1)
	if err == nil || !strings.Contains(err.Error(), "RLIMIT_NOFILE") || !strings.Contains(err.Error(), "ulimit -n") {
		t.Errorf("need above the limit: %v", err)
	}
}
