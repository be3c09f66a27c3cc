//go:build unix

package abtest

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup makes the command the leader of a new process group, so
// that signals reach every process the server forks (vLLM starts worker
// processes), and so that the terminal's Ctrl-C does not reach the server
// directly: abtest stops it in order, after the last record is written.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to every process of the group led by pgid. A group
// that is already gone is not an error.
func signalGroup(pgid int, sig os.Signal) {
	_ = syscall.Kill(-pgid, sig.(syscall.Signal))
}

// groupExists reports whether any process of the group still exists,
// zombies included.
func groupExists(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func termSignal() os.Signal { return syscall.SIGTERM }
func killSignal() os.Signal { return syscall.SIGKILL }
