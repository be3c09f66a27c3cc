package client

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a request leaves goroutines behind (a body
// not closed, a watchdog not stopped, a stalled handler not released).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
