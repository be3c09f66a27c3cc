//go:build !unix

package abtest

import (
	"os"
	"os/exec"
)

// On systems without process groups only the leader is signalled; its
// children may outlive it.

func setProcessGroup(cmd *exec.Cmd) {}

func signalGroup(pid int, sig os.Signal) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Signal(sig)
	}
}

func groupAlive(pid int) bool { return false }

func termSignal() os.Signal { return os.Kill } // no SIGTERM: stop at once
func killSignal() os.Signal { return os.Kill }

// setParentDeathSignal: this system has no parent-death signal; a server
// outlives an omnibench killed by SIGKILL (the port check before the next
// start catches it).
func setParentDeathSignal(*exec.Cmd) {}
