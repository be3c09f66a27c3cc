//go:build !unix

package client

// EnsureFiles does nothing where there is no RLIMIT_NOFILE; the limit is
// reported as 0 (unknown).
func EnsureFiles(need int) (limit uint64, err error) { return 0, nil }
