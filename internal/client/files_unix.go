//go:build unix

package client

import (
	"fmt"
	"syscall"
)

// EnsureFiles raises the process's soft open-file limit (RLIMIT_NOFILE) to
// its hard limit and checks that need descriptors fit under it. It returns
// the limit in force, and an error that names the limit and how to raise it
// when need does not fit, so that a run of thousands of streams fails before
// it starts instead of with dial errors in the middle. need <= 0 only
// raises the limit.
func EnsureFiles(need int) (limit uint64, err error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("reading the open-file limit (RLIMIT_NOFILE): %w", err)
	}
	if lim.Cur < lim.Max {
		raised := lim
		raised.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err == nil {
			lim = raised
		}
	}
	if need > 0 && uint64(need) > lim.Cur {
		return lim.Cur, fmt.Errorf("this run needs about %d open files (one per connection, plus the server's end with the embedded simulator, plus slack), but the open-file limit (RLIMIT_NOFILE) is %d (hard limit %d): raise it with `ulimit -n %d` in the shell that starts omnibench (raising the hard limit needs root, `ulimit -Hn`, or LimitNOFILE= for a systemd unit), or lower the concurrency",
			need, lim.Cur, lim.Max, need)
	}
	return lim.Cur, nil
}
