package abtest

import (
	"bytes"
	"os"
	"strconv"
)

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
