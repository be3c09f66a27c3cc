//go:build unix && !linux

package abtest

import "os/exec"

// groupAlive reports whether any process of the group still exists.
func groupAlive(pgid int) bool { return groupExists(pgid) }

// setParentDeathSignal: this system has no parent-death signal; a server
// outlives an omnibench killed by SIGKILL (the port check before the next
// start catches it).
func setParentDeathSignal(*exec.Cmd) {}
