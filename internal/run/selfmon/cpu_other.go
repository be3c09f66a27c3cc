//go:build !unix

package selfmon

import "time"

// processCPU is 0 where getrusage does not exist: the CPU figures read 0
// and only the runtime's figures judge saturation there.
func processCPU() time.Duration { return 0 }
