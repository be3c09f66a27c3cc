package abtest

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// setParentDeathSignal asks the kernel to SIGKILL the server when omnibench
// dies, however it dies: without it a SIGKILLed ab leaves its server holding
// the port, and the next ab measures that stale server as healthy. SIGKILL,
// not SIGTERM: the parent is gone, nobody waits for a graceful stop, and a
// server that ignores SIGTERM would leak all the same. It is tied to the
// forking thread; startLocked keeps that thread alive. Call after
// setProcessGroup.
func setParentDeathSignal(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// groupAlive reports whether a process of the group is still running.
// Zombies do not count: a member orphaned by its leader is reparented to
// init, and an init that does not reap (as in some containers) would
// otherwise keep the group "alive" for ever.
func groupAlive(pgid int) bool {
	if !groupExists(pgid) {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true // cannot tell: assume alive, the caller then kills the group
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		state, pgrp, ok := procStat(e.Name())
		if ok && pgrp == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// procStat reads the state and process group of /proc/<pid>/stat. The
// command name in parentheses may hold spaces and parentheses, so the
// fields are read after its last ')'.
func procStat(pid string) (state byte, pgrp int, ok bool) {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(data[i+1:]) // state ppid pgrp ...
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err = strconv.Atoi(string(f[2]))
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], pgrp, true
}
