// Command pause is the sandbox ("pause") container of the end-to-end
// cluster's pods: it holds the pod's namespaces open, reaps the orphans
// re-parented to it, and exits on SIGINT or SIGTERM. The usual pause image
// cannot be pulled there, so test/kube builds this one into an image archive.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if os.Getpid() != 1 {
		os.Stderr.WriteString("pause: not process 1 of a container; nothing to hold\n")
	}
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		reap()
	}
}

// reap collects every exited child without blocking.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
